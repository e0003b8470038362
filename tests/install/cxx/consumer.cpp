// consumer.cpp - a C++ program that finds installed subcirc with
// find_package(subcirc) (tests/install/check.sh builds it against
// subcirc::subcirc and subcirc::subcirc_static). It includes the headers
// one by one as <subcirc/...>, so each must compile as C++, and runs the
// same circuit as ../consumer.c: bids counted per auction on two shards by
// two workers; auction a gets a bids, so the integral must be exactly the
// rows (a, a) x 1. Exit status 0 only when it is.
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <subcirc/operators/aggregate.h>
#include <subcirc/operators/batch.h>
#include <subcirc/operators/error.h>
#include <subcirc/operators/graph.h>
#include <subcirc/operators/version.h>
#include <subcirc/units/placement.h>
#include <subcirc/units/runtime.h>

namespace
{

const int auctions = 9;

int
fail(const char *what, int rc)
{
	std::fprintf(stderr, "consumer++: %s: %s: %s\n", what, sc_errname(rc),
		     sc_errmsg());
	return EXIT_FAILURE;
}

int
check(const sc_batch *result)
{
	if (sc_batch_count(result) != auctions) {
		std::fprintf(stderr, "consumer++: %zu rows, expected %d\n",
			     sc_batch_count(result), auctions);
		return EXIT_FAILURE;
	}
	for (size_t i = 0; i < sc_batch_count(result); i++) {
		const uint64_t *row = sc_batch_row(result, i);
		int64_t a = sc_dec_i64(row[0]), n = sc_dec_i64(row[1]);

		if (a != int64_t(i) + 1 || n != a ||
		    sc_batch_weight(result, i) != 1) {
			std::fprintf(stderr,
				     "consumer++: row %zu is (%" PRId64
				     ", %" PRId64
				     "), expected (%zu, %zu) x 1\n",
				     i, a, n, i + 1, i + 1);
			return EXIT_FAILURE;
		}
	}
	return EXIT_SUCCESS;
}

} // namespace

int
main()
{
	if (std::strcmp(sc_version_string(), SC_VERSION_STRING) != 0) {
		std::fprintf(stderr, "consumer++: library %s, headers %s\n",
			     sc_version_string(), SC_VERSION_STRING);
		return EXIT_FAILURE;
	}
	const sc_type types[2] = {SC_TYPE_I64, SC_TYPE_I64};
	sc_aggregate_spec count = {};
	count.ncols = 2;
	count.k = 1;
	count.kind = SC_AGG_COUNT;
	sc_runtime_opts opts = {};
	opts.workers = 2;

	sc_schema bid;
	sc_graph *g = nullptr;
	int rc = sc_graph_create(&g);
	if (rc == 0)
		rc = sc_schema_init(&bid, 2, types, nullptr);
	if (rc != 0)
		return fail("graph", rc);
	int in = sc_graph_input(g, "bids", &bid);
	int out = sc_graph_output(g, "bids_per_auction",
				  sc_graph_aggregate(g, in, &count));
	if (out < 0)
		return fail("graph", out);

	std::vector<uint64_t> rows;
	for (int a = 1; a <= auctions; a++)
		for (int j = 0; j < a; j++) {
			rows.push_back(sc_enc_i64(a));
			rows.push_back(sc_enc_i64(10 * j));
		}
	sc_batch *bids = nullptr, *result = nullptr;
	rc = sc_batch_from_records(2, rows.data(), nullptr, rows.size() / 2,
				   &bids);
	if (rc != 0)
		return fail("batch", rc);

	sc_placement *p = nullptr;
	sc_runtime *rt = nullptr;
	rc = sc_placement_sharded(g, 2, &p);
	if (rc == 0)
		rc = sc_runtime_create(g, p, &opts, &rt);
	if (rc == 0)
		rc = sc_runtime_submit_wait(rt, in, bids, 0);
	if (rc == 0)
		rc = sc_runtime_wait_idle(rt, 0, nullptr);
	if (rc == 0)
		rc = sc_runtime_integral(rt, out, &result);
	if (rc == 0)
		rc = sc_runtime_shutdown(rt, nullptr);
	int status = rc != 0 ? fail("runtime", rc) : check(result);

	sc_batch_release(result);
	sc_batch_release(bids);
	sc_runtime_destroy(rt);
	sc_placement_destroy(p);
	sc_graph_destroy(g);
	if (status == EXIT_SUCCESS)
		std::printf("consumer++: %d auctions counted on 2 workers, "
			    "subcirc %s\n",
			    auctions, sc_version_string());
	return status;
}

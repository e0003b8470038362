/*
 * consumer.c - a program outside the tree that uses installed subcirc as a
 * user would (tests/install/check.sh builds it through pkg-config, static
 * and shared, and through add_subdirectory of the source tree).
 *
 * It counts bids per auction on two shards run by two worker threads:
 * auction a (1..SC_AUCTIONS) gets a bids, sent in three submissions, so
 * the integral must hold exactly the rows (a, a) with weight 1. It also
 * checks that the library it runs with is the version of the headers it
 * was compiled with. Exit status 0 only when all of that holds.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <subcirc/subcirc.h>

#define SC_AUCTIONS 12
#define SC_SUBMITS  3

struct consumer {
	struct sc_graph *g;
	struct sc_placement *p;
	struct sc_runtime *rt;
	struct sc_batch *result;
	int in, out;
};

/* Submission k holds the bids j of auction a with j % SC_SUBMITS == k. */
static int
submit_bids(struct consumer *c, int k)
{
	uint64_t rows[2 * SC_AUCTIONS * SC_AUCTIONS];
	struct sc_batch *b = NULL;
	size_t n = 0;
	int rc;

	for (int a = 1; a <= SC_AUCTIONS; a++) {
		for (int j = 0; j < a; j++) {
			if (j % SC_SUBMITS != k)
				continue;
			rows[2 * n] = sc_enc_i64(a);
			rows[2 * n + 1] = sc_enc_i64(100 + j);
			n++;
		}
	}
	rc = sc_batch_from_records(2, rows, NULL, n, &b);
	if (rc == 0)
		rc = sc_runtime_submit_wait(c->rt, c->in, b, 0);
	sc_batch_release(b);
	return rc;
}

static int
run(struct consumer *c)
{
	enum sc_type types[2] = {SC_TYPE_I64, SC_TYPE_I64}; /* auction, price */
	struct sc_aggregate_spec count = {
	    .ncols = 2, .k = 1, .kind = SC_AGG_COUNT};
	struct sc_runtime_opts opts = {.workers = 2};
	struct sc_schema bid;
	int rc;

	rc = sc_graph_create(&c->g);
	if (rc == 0)
		rc = sc_schema_init(&bid, 2, types, NULL);
	if (rc != 0)
		return rc;
	c->in = sc_graph_input(c->g, "bids", &bid);
	c->out = sc_graph_output(c->g, "bids_per_auction",
				 sc_graph_aggregate(c->g, c->in, &count));
	if (c->out < 0)
		return c->out;
	rc = sc_placement_sharded(c->g, 2, &c->p);
	if (rc == 0)
		rc = sc_runtime_create(c->g, c->p, &opts, &c->rt);
	for (int k = 0; rc == 0 && k < SC_SUBMITS; k++)
		rc = submit_bids(c, k);
	if (rc == 0)
		rc = sc_runtime_wait_idle(c->rt, 0, NULL);
	if (rc == 0)
		rc = sc_runtime_integral(c->rt, c->out, &c->result);
	return rc;
}

/* Rows are (auction, count), sorted by auction. */
static int
check(const struct sc_batch *result)
{
	int bad = 0;

	if (sc_batch_count(result) != SC_AUCTIONS) {
		(void)fprintf(stderr, "consumer: %zu rows, expected %d\n",
			      sc_batch_count(result), SC_AUCTIONS);
		return 1;
	}
	for (size_t i = 0; i < SC_AUCTIONS; i++) {
		const uint64_t *row = sc_batch_row(result, i);
		int64_t a = sc_dec_i64(row[0]), n = sc_dec_i64(row[1]);
		int64_t w = sc_batch_weight(result, i);

		if (a != (int64_t)i + 1 || n != a || w != 1) {
			(void)fprintf(stderr,
				      "consumer: row %zu is (%" PRId64
				      ", %" PRId64 ") x %" PRId64
				      ", expected (%zu, %zu) x 1\n",
				      i, a, n, w, i + 1, i + 1);
			bad = 1;
		}
	}
	return bad;
}

int
main(void)
{
	struct consumer c = {0};
	int rc, bad;

	if (strcmp(sc_version_string(), SC_VERSION_STRING) != 0) {
		(void)fprintf(stderr, "consumer: library %s, headers %s\n",
			      sc_version_string(), SC_VERSION_STRING);
		return 1;
	}
	rc = run(&c);
	if (rc == 0)
		rc = sc_runtime_shutdown(c.rt, NULL);
	if (rc != 0) {
		(void)fprintf(stderr, "consumer: %s: %s\n", sc_errname(rc),
			      sc_errmsg());
		bad = 1;
	} else {
		bad = check(c.result);
	}
	sc_batch_release(c.result);
	sc_runtime_destroy(c.rt);
	sc_placement_destroy(c.p);
	sc_graph_destroy(c.g);
	if (!bad)
		(void)printf("consumer: %d auctions counted on 2 workers, "
			     "subcirc %s\n",
			     SC_AUCTIONS, sc_version_string());
	return bad ? EXIT_FAILURE : EXIT_SUCCESS;
}

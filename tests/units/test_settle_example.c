/*
 * test_settle_example.c - README's example of the settle check: a user's
 * own circuit (bids per auction, and the auctions with a bid over 50),
 * checked under every placement strategy, many seeded schedules and a real
 * pool, with units/settle.h. The body between the EXAMPLE markers is what
 * README quotes; it must stay short and compile as shown. SC_THREADED.
 *
 * SC_BOTH_EXECUTORS: every test here runs on each executor kind (ctest
 * registers NAME and NAME.queue, cmake/sc_helpers.cmake).
 */
#include <criterion/criterion.h>
#include <stdio.h>

#include "operators/aggregate.h"
#include "operators/schema.h"
#include "units/settle.h"

/* (auction, amount): keep the bids over 50. */
static int
over_50(void *ctx, const uint64_t *row, bool *keep)
{
	*keep = sc_dec_i64(row[1]) > 50;
	return 0;
}

/* Submission i: one bid on auction i % 5 of 10 * i % 97, and every third
 * one retracted again later (a delta with weight -1). */
static int
next_bid(void *ctx, size_t i, struct sc_settle_step *out)
{
	const int *in = ctx;
	size_t j = i % 3 == 2 ? i - 2 : i; /* retract bid i - 2 */
	uint64_t row[2] = {sc_enc_i64((int64_t)(j % 5)),
			   sc_enc_i64((int64_t)(10 * j % 97))};
	int64_t w = i % 3 == 2 ? -1 : 1;

	out->input = *in;
	return sc_batch_from_records(2, row, &w, 1, &out->batch);
}

Test(settle_example, a_users_circuit_settles_under_every_placement)
{
	static const char *const strategies[] = {"single", "per-node", "chains",
						 "random:3", "sharded:2"};
	enum sc_type types[2] = {SC_TYPE_I64, SC_TYPE_I64};
	struct sc_aggregate_spec count = {
	    .ncols = 2, .k = 1, .kind = SC_AGG_COUNT};
	struct sc_graph *g = NULL;
	struct sc_schema bid;
	int in, runs = 0;

	/* EXAMPLE: begin */
	struct sc_settle_work *work = NULL;
	struct sc_placement *p = NULL;
	struct sc_settle_result res;

	/* 1. The circuit to check, as for sc_runtime_create. */
	sc_graph_create(&g);
	sc_schema_init(&bid, 2, types, NULL);
	in = sc_graph_input(g, "bids", &bid);
	sc_graph_output(g, "bids_per_auction",
			sc_graph_aggregate(g, in, &count));
	sc_graph_output(g, "big_bids", sc_graph_filter(g, in, over_50, NULL));
	/* 2. The submissions (an array, or a generator as here) and the
	 *    single circuit's integrals after them: the reference. */
	sc_settle_work_generate(g, next_bid, &in, 60, 0, &work);
	/* 3. Each placement x schedule: the seeded scheduler holding up to
	 *    3 units at once (seed s picks the order), then a real pool of 4
	 *    workers fed by 2 host threads, with tiny edges for backpressure.
	 */
	for (size_t i = 0; i < 5; i++) {
		sc_placement_parse(g, strategies[i], 1, &p);
		for (uint64_t s = 0; s <= 20; s++) {
			struct sc_settle_opts o = {
			    .mode = s < 20 ? SC_SETTLE_SIM : SC_SETTLE_POOL,
			    .seed = s,
			    .units = s < 20 ? 3 : 4,
			    .hosts = 2,
			    .edge_capacity = 2};

			sc_settle_run(work, p, &o, &res);
			if (!res.ok) /* names the output and its rows */
				printf("%s\nreplay: %s\n", res.why, res.replay);
			cr_assert(res.ok); /* (not in README) */
			runs++;		   /* (not in README) */
			sc_settle_result_fini(&res);
		}
		sc_placement_destroy(p);
	}
	sc_settle_work_destroy(work);
	/* EXAMPLE: end */
	cr_assert_eq(runs, 5 * 21);
	cr_assert_eq(sc_graph_destroy(g), 0);
}

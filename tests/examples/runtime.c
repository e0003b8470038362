/*
 * runtime.c - the graph of circuit.c placed on units and run by a pool of
 * worker threads (units/placement.h, units/runtime.h).
 *
 * A placement cuts the graph into units, each a sub-circuit; the runtime
 * joins them by bounded edges and runs a unit's turn on a worker whenever
 * frames reach it. The host submits batches of changes, waits until the
 * runtime is idle, and reads an output's integral: whatever the placement,
 * it is the single circuit's after the same changes (settle.c checks it).
 * The program runs the same changes under each placement named on the
 * command line (by default four of them) and prints each integral.
 *
 * Build against an installed subcirc, and run:
 *   cc runtime.c $(pkg-config --cflags --libs subcirc) -o runtime
 *   ./runtime [PLACEMENT...]    (e.g. ./runtime chains random:3)
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include <subcirc/subcirc.h>

/* A row (two i64 columns) and its weight; a weight of 0 ends a list. */
struct change {
	int64_t a, b, w;
};

static const struct change auction_rows[] = {{1, 100, 1}, {2, 200, 1}, {0}};
static const struct change bid_rows[3][4] = {
    {{1, 5, 1}, {1, 20, 1}, {2, 30, 1}},
    {{1, 40, 1}, {2, 7, 1}},
    {{1, 20, -1}, {2, 30, -1}}, /* two bids retracted */
};

struct ids {
	int bids, auctions, totals;
};

static int
keep_ten_or_more(void *ctx, const uint64_t *row, bool *keep)
{
	(void)ctx;
	*keep = sc_dec_i64(row[1]) >= 10;
	return 0;
}

/* circuit.c's graph: totals = auctions join SUM(price >= 10) per auction. */
static int
build(struct sc_graph *g, struct ids *id)
{
	enum sc_type types[2] = {SC_TYPE_I64, SC_TYPE_I64};
	struct sc_aggregate_spec sum = {.ncols = 2,
					.k = 1,
					.kind = SC_AGG_SUM,
					.col = 1,
					.col_type = SC_TYPE_I64};
	struct sc_schema s;
	int rc = sc_schema_init(&s, 2, types, NULL);

	if (rc != 0)
		return rc;
	id->bids = sc_graph_input(g, "bids", &s);
	id->auctions = sc_graph_input(g, "auctions", &s);
	rc = sc_graph_aggregate(
	    g, sc_graph_filter(g, id->bids, keep_ten_or_more, NULL), &sum);
	id->totals =
	    sc_graph_output(g, "totals", sc_graph_join(g, id->auctions, rc, 1));
	return id->totals < 0 ? id->totals : 0;
}

/* Submits changes to input `in`. submit_wait waits while the input's edge
 * is full (backpressure); sc_runtime_submit would say SC_EFULL instead. */
static int
submit(struct sc_runtime *rt, int in, const struct change *ch)
{
	struct sc_batch_builder bb = {0};
	struct sc_batch *b = NULL;
	int rc = sc_batch_builder_init(&bb, 2);

	for (; rc == 0 && ch->w != 0; ch++) {
		uint64_t row[2] = {sc_enc_i64(ch->a), sc_enc_i64(ch->b)};

		rc = sc_batch_builder_push(&bb, row, 2, ch->w);
	}
	if (rc == 0)
		rc = sc_batch_builder_finish(&bb, &b);
	if (rc == 0)
		rc = sc_runtime_submit_wait(rt, in, b, 0); /* 0: no timeout */
	sc_batch_release(b);
	sc_batch_builder_fini(&bb);
	return rc;
}

/* One run: place, start the workers, submit, wait for idle, read. */
static int
run_placed(struct sc_graph *g, const struct ids *id, const char *spec)
{
	struct sc_runtime_opts opts = {.workers = 2};
	struct sc_placement *p = NULL;
	struct sc_runtime *rt = NULL;
	struct sc_batch *all = NULL;
	int rc = sc_placement_parse(g, spec, 1, &p); /* seed 1 for random */

	if (rc == 0)
		rc = sc_runtime_create(g, p, &opts, &rt);
	if (rc == 0)
		rc = submit(rt, id->auctions, auction_rows);
	for (int t = 0; rc == 0 && t < 3; t++)
		rc = submit(rt, id->bids, bid_rows[t]);
	if (rc == 0)
		rc = sc_runtime_wait_idle(rt, 0, NULL); /* 0: no timeout */
	if (rc == 0)
		rc = sc_runtime_integral(rt, id->totals, &all);
	if (rc == 0)
		rc = sc_runtime_shutdown(rt, NULL); /* joins the workers */
	if (rc == 0)
		(void)printf("%s: units %" PRIu32 ", workers %" PRIu32 "\n",
			     spec, sc_runtime_units(rt), opts.workers);
	/* The join's rows: (auction, seller, total), sorted. */
	for (size_t i = 0; rc == 0 && i < sc_batch_count(all); i++) {
		const uint64_t *r = sc_batch_row(all, i);

		(void)printf("  auction %" PRId64 " seller %" PRId64
			     " total %" PRId64 "  weight %+" PRId64 "\n",
			     sc_dec_i64(r[0]), sc_dec_i64(r[1]),
			     sc_dec_i64(r[2]), sc_batch_weight(all, i));
	}
	sc_batch_release(all);
	sc_runtime_destroy(rt); /* before the placement and the graph */
	sc_placement_destroy(p);
	return rc;
}

int
main(int argc, char **argv)
{
	static const char *const deflt[] = {"single", "per-node", "chains",
					    "sharded:2"};
	const char *const *specs =
	    argc > 1 ? (const char *const *)argv + 1 : deflt;
	int n = argc > 1 ? argc - 1 : 4;
	struct sc_graph *g = NULL;
	struct ids id = {-1, -1, -1};
	int rc = sc_graph_create(&g);

	if (rc == 0)
		rc = build(g, &id);
	for (int i = 0; rc == 0 && i < n; i++)
		rc = run_placed(g, &id, specs[i]);
	if (rc != 0)
		(void)fprintf(stderr, "runtime: %s: %s\n", sc_strerror(rc),
			      sc_errmsg());
	if (sc_graph_destroy(g) != 0 && rc == 0)
		rc = SC_EBUSY;
	return rc == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

/*
 * bench_shard.c - how a stage scales across cores, and what a placement
 * costs, in one run.
 *
 *  shard agg xK     a sum-per-key aggregate (rows (key, value), keys from
 *                   a large domain, so state grows) placed as ONE unit
 *                   (input, aggregate, output) replicated K = 2 ways: the
 *                   host routes every batch by the key's hash, and each
 *                   replica runs its share on its own. The same placement
 *                   on 1 worker vs 2 workers, alternating repetitions;
 *                   ratio = 2 workers / 1 worker (the goal is >= 1.8 on
 *                   two idle cores).
 *  grid <strategy>  the staged grid example (bench/workloads/grid.h: cell
 *                   edits -> sums per row and column -> projection with a
 *                   total per row) on 2 workers, by placement
 *                   strategy, in cell edits per second; the baseline is
 *                   the single unit in the same run.
 *
 * Batches are built before the clock starts; a run is from the first
 * submit to idle (sc_runtime_wait_idle), the host submitting with
 * sc_runtime_submit_wait (it waits when an input is full). Each figure is
 * the median of REPS repetitions. --quick shrinks everything.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/harness.h"
#include "bench/workloads/grid.h"
#include "operators/aggregate.h"
#include "units/placement.h"
#include "units/runtime.h"

#define REPS 5

/* --- the sharded aggregate --------------------------------------------- */

struct agg_work {
	struct sc_graph *g;
	int in, out;
	struct sc_batch **batches;
	size_t n;
	size_t rows; /* rows over all batches */
};

static void
agg_work_init(struct agg_work *w, size_t nbatches, size_t rows_per)
{
	enum sc_type t[2] = {SC_TYPE_I64, SC_TYPE_I64};
	struct sc_aggregate_spec sp = {.ncols = 2,
				       .k = 1,
				       .kind = SC_AGG_SUM,
				       .col = 1,
				       .col_type = SC_TYPE_I64};
	uint64_t *rows = malloc(rows_per * 2 * sizeof(uint64_t));
	uint64_t x = 12345;
	struct sc_schema s;

	memset(w, 0, sizeof(*w));
	if (!rows || sc_schema_init(&s, 2, t, NULL) || sc_graph_create(&w->g))
		sc_bench_fail("agg graph");
	w->in = sc_graph_input(w->g, "kv", &s);
	w->out =
	    sc_graph_output(w->g, "sums", sc_graph_aggregate(w->g, w->in, &sp));
	if (w->out < 0)
		sc_bench_fail("agg graph");
	w->batches = calloc(nbatches, sizeof(struct sc_batch *));
	for (size_t i = 0; i < nbatches; i++) {
		for (size_t r = 0; r < rows_per; r++) {
			uint64_t v = sc_splitmix_next(&x);

			rows[2 * r] = sc_enc_i64((int64_t)(v % 1000000));
			rows[2 * r + 1] = sc_enc_i64((int64_t)(v >> 54));
		}
		if (sc_batch_from_records(2, rows, NULL, rows_per,
					  &w->batches[i]))
			sc_bench_fail("agg batch");
		w->rows += sc_batch_count(w->batches[i]);
	}
	w->n = nbatches;
	free(rows);
}

static void
agg_work_fini(struct agg_work *w)
{
	for (size_t i = 0; i < w->n; i++)
		sc_batch_release(w->batches[i]);
	free(w->batches);
	sc_graph_destroy(w->g);
}

/* Seconds to push every batch through and settle. */
static double
run_once(struct sc_graph *g, const struct sc_placement *p, uint32_t workers,
	 int in, struct sc_batch **batches, size_t n)
{
	struct sc_runtime_opts o = {.workers = workers, .budget = 16};
	struct sc_runtime *rt = NULL;
	uint64_t t0;
	double s;

	if (sc_runtime_create(g, p, &o, &rt))
		sc_bench_fail("runtime");
	t0 = sc_bench_now_ns();
	for (size_t i = 0; i < n; i++)
		if (sc_runtime_submit_wait(rt, in, batches[i], 0))
			sc_bench_fail("submit");
	if (sc_runtime_wait_idle(rt, 0, NULL))
		sc_bench_fail("wait_idle");
	s = (double)(sc_bench_now_ns() - t0) / 1e9;
	if (sc_runtime_check_idle(rt))
		sc_bench_fail("idle invariant");
	sc_runtime_destroy(rt);
	return s;
}

static void
bench_agg(bool quick)
{
	struct agg_work w;
	struct sc_placement *p = NULL;
	int32_t map[3] = {0, 0, 0};
	double one[REPS], two[REPS];
	char kase[64];

	agg_work_init(&w, quick ? 40 : 400, 4096);
	/* The whole pipeline is one unit, replicated: the host routes. */
	if (sc_placement_manual(w.g, map, 3, 1, &p) ||
	    sc_placement_set_shards(p, 0, 2))
		sc_bench_fail("placement");
	for (int r = 0; r < REPS; r++) {
		one[r] = (double)w.rows /
			 run_once(w.g, p, 1, w.in, w.batches, w.n) / 1e6;
		two[r] = (double)w.rows /
			 run_once(w.g, p, 2, w.in, w.batches, w.n) / 1e6;
	}
	(void)snprintf(kase, sizeof(kase), "agg sum x2 shards, %zu rows",
		       w.rows);
	sc_bench_emit("shard", kase, "Mrows/s", sc_bench_median(two, REPS),
		      "1 worker", sc_bench_median(one, REPS));
	sc_placement_destroy(p);
	agg_work_fini(&w);
}

/* --- the grid by strategy ------------------------------------------------ */

/* The seeds' staged placement: unit 0 = the cells and both aggregates,
 * unit 1 = the projection and the totals. */
static int
staged(struct sc_grid *gr, struct sc_placement **p)
{
	struct sc_grid_nodes nd;
	size_t n = sc_graph_node_count(sc_grid_graph(gr));
	int32_t *map = malloc(n * sizeof(*map));
	int rc;

	if (!map)
		return SC_ENOMEM;
	sc_grid_nodes(gr, &nd);
	for (size_t i = 0; i < n; i++)
		map[i] = (int)i == nd.cells || (int)i == nd.agg_row ||
				 (int)i == nd.by_col || (int)i == nd.agg_col
			     ? 0
			     : 1;
	rc = sc_placement_manual(sc_grid_graph(gr), map, n, 2, p);
	free(map);
	return rc;
}

static void
bench_grid(bool quick)
{
	static const char *const strategies[] = {
	    "single", "staged", "chains", "per-node", "sharded:2", "random:3",
	};
	enum { NS = sizeof(strategies) / sizeof(strategies[0]) };
	struct sc_grid_opts go = {.rows = 256, .cols = 256, .seed = 7};
	size_t nb = quick ? 40 : 400, edits = 1024, events = 0;
	double eps[NS][REPS];
	struct sc_grid *gr = NULL;
	struct sc_grid_nodes nd;
	struct sc_batch **batches;

	if (sc_grid_create(&go, &gr))
		sc_bench_fail("grid");
	sc_grid_nodes(gr, &nd);
	batches = calloc(nb, sizeof(struct sc_batch *));
	for (size_t i = 0; i < nb; i++) {
		if (sc_grid_next(gr, edits, &batches[i]))
			sc_bench_fail("grid edits");
		events += edits;
	}
	for (int r = 0; r < REPS; r++)
		for (int s = 0; s < NS; s++) {
			struct sc_placement *p = NULL;
			int rc = strcmp(strategies[s], "staged")
				     ? sc_placement_parse(sc_grid_graph(gr),
							  strategies[s], 7, &p)
				     : staged(gr, &p);

			if (rc)
				sc_bench_fail(strategies[s]);
			eps[s][r] = (double)events /
				    run_once(sc_grid_graph(gr), p, 2, nd.cells,
					     batches, nb) /
				    1e6;
			sc_placement_destroy(p);
		}
	{
		double base = sc_bench_median(eps[0], REPS);

		for (int s = 0; s < NS; s++) {
			char kase[64];

			(void)snprintf(kase, sizeof(kase), "grid %s, 2 workers",
				       strategies[s]);
			sc_bench_emit("shard", kase, "Mevents/s",
				      sc_bench_median(eps[s], REPS), "single",
				      base);
		}
	}
	for (size_t i = 0; i < nb; i++)
		sc_batch_release(batches[i]);
	free(batches);
	sc_grid_destroy(gr);
}

int
main(int argc, char **argv)
{
	bool quick = sc_bench_init(argc, argv);

	bench_agg(quick);
	bench_grid(quick);
	return 0;
}

/*
 * bench_tick.c - tick mode against the coalescing mode (units/runtime.h,
 * Modes) on the grid workload (bench/workloads/grid.h), staged into its
 * units (sc_grid_staged), on a pool of 2 workers.
 *
 * The host submits BATCHES batches of EDITS cell edits each, waiting for
 * room (sc_runtime_submit_wait), then waits for idle. In tick mode it
 * also closes a host tick (sc_runtime_tick) after every T batches, T = 1,
 * 16 and 256; the coalescing mode is the baseline of every case, run in
 * the same process, alternating with it, REPS times each. The figure is
 * events (cell edits) per second by the wall clock from the first submit
 * to idle, the median of the repetitions (higher is better); ratio =
 * tick / coalescing. --quick shrinks the sizes for a smoke run.
 * Latency percentiles are not measured here.
 */
#include <stdio.h>
#include <stdlib.h>

#include "bench/harness.h"
#include "bench/workloads/grid.h"
#include "units/placement.h"
#include "units/runtime.h"

#define REPS  5
#define EDITS 16

/* One run: events per second; ticks_per 0 is the coalescing mode. */
static double
run_once(size_t batches, size_t ticks_per)
{
	struct sc_grid_opts go = {.rows = 64, .cols = 64, .seed = 7};
	struct sc_runtime_opts o = {.workers = 2, .ticks = ticks_per > 0};
	struct sc_grid *gr = NULL;
	struct sc_placement *p = NULL;
	struct sc_runtime *rt = NULL;
	struct sc_grid_nodes nodes;
	struct sc_batch **bs = calloc(batches, sizeof(struct sc_batch *));
	int32_t map[64];
	size_t n;
	uint64_t t0, t1;

	if (!bs || sc_grid_create(&go, &gr) != 0)
		sc_bench_fail("grid");
	sc_grid_nodes(gr, &nodes);
	n = sc_graph_node_count(sc_grid_graph(gr));
	if (n > 64 || sc_grid_staged(gr, map, n) != 0 ||
	    sc_placement_manual(sc_grid_graph(gr), map, n, 2, &p) != 0)
		sc_bench_fail("placement");
	for (size_t i = 0; i < batches; i++)
		if (sc_grid_next(gr, EDITS, &bs[i]) != 0)
			sc_bench_fail("batches");
	if (sc_runtime_create(sc_grid_graph(gr), p, &o, &rt) != 0)
		sc_bench_fail("runtime");
	t0 = sc_bench_now_ns();
	for (size_t i = 0; i < batches; i++) {
		if (sc_runtime_submit_wait(rt, nodes.cells, bs[i], 0) != 0)
			sc_bench_fail("submit");
		if (ticks_per && (i + 1) % ticks_per == 0 &&
		    sc_runtime_tick(rt, 0, NULL) != 0)
			sc_bench_fail("tick");
	}
	if (sc_runtime_wait_idle(rt, 0, NULL) != 0)
		sc_bench_fail("wait_idle");
	t1 = sc_bench_now_ns();
	if (sc_runtime_shutdown(rt, NULL) != 0)
		sc_bench_fail("shutdown");
	sc_runtime_destroy(rt);
	for (size_t i = 0; i < batches; i++)
		sc_batch_release(bs[i]);
	free(bs);
	sc_placement_destroy(p);
	(void)sc_grid_destroy(gr);
	return (double)(batches * EDITS) * 1e9 /
	       (double)(t1 - t0 ? t1 - t0 : 1);
}

int
main(int argc, char **argv)
{
	static const size_t per[] = {1, 16, 256};
	size_t batches;

	sc_bench_init(argc, argv);
	batches = sc_bench_quick() ? 512 : 8192;
	for (size_t k = 0; k < sizeof(per) / sizeof(per[0]); k++) {
		double tick[REPS], coal[REPS];
		char kase[64];

		for (int r = 0; r < REPS; r++) {
			coal[r] = run_once(batches, 0);
			tick[r] = run_once(batches, per[k]);
		}
		(void)snprintf(kase, sizeof(kase),
			       "grid 2 workers, %zu batches per tick", per[k]);
		sc_bench_emit("tick", kase, "events/s",
			      sc_bench_median(tick, REPS), "coalescing",
			      sc_bench_median(coal, REPS));
	}
	return 0;
}

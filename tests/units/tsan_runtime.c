/*
 * tsan_runtime.c - the real-pool settle scenario as a plain program, for
 * the ThreadSanitizer pass (Criterion cannot run under TSan, issue #274).
 *
 * For a few random circuits and the grid example (bench/workloads/), every
 * strategy on a real pool of 1..4 threads (behind the watchdog guard), 1..3
 * host threads submitting with backpressure while the workers run, through
 * the settle check (units/settle.h): the outputs must equal the single
 * circuit's and the idle invariant must hold. Exit 0 is a pass; a failure
 * prints the seed, the strategy and what differed. SC_SEED /
 * SC_SEEDS_SCALE as for the property tests.
 */
#include <stdio.h>

#include "bench/workloads/grid.h"
#include "bench/workloads/random.h"
#include "tests/support/prop.h"
#include "tests/support/rt_watchdog.h"
#include "units/settle.h"

static const char *const strategies[] = {
    "single",	"per-node",  "chains",	  "random:2",
    "random:5", "sharded:2", "sharded:3",
};
#define NSTRATEGIES (sizeof(strategies) / sizeof(strategies[0]))

static int failures;

static void *
guard_begin(void *ctx, struct sc_exec *ex)
{
	return sc_test_guard_begin(ex, "tsan_runtime", 20000);
}

static void
guard_end(void *ctx, void *guard)
{
	sc_test_guard_end(guard);
}

static void
sizes(struct sc_settle_opts *o, uint64_t s)
{
	static const uint32_t caps[] = {1, 2, 4, 64};
	static const size_t bounds[] = {1, 4, 64, 4096};

	o->edge_capacity = caps[s % 4];
	o->outbox_bound = bounds[(s / 4) % 4];
}

static void
run_all(const struct sc_settle_work *w, uint64_t seed, const int32_t *manual)
{
	struct sc_graph *g = sc_settle_work_graph(w);

	for (uint32_t workers = 1; workers <= 4; workers++) {
		for (size_t si = 0; si <= NSTRATEGIES; si++) {
			struct sc_settle_opts o = {
			    .mode = SC_SETTLE_POOL,
			    .seed = seed,
			    .units = workers,
			    .hosts = 1 + (workers + (uint32_t)si) % 3,
			    .budget = 1 + (uint32_t)(seed % 4),
			    .timeout_ns = 5000000000ull,
			    .guard_begin = guard_begin,
			    .guard_end = guard_end};
			const char *name =
			    si < NSTRATEGIES ? strategies[si] : "manual";
			struct sc_placement *p = NULL;
			struct sc_settle_result res = {0};
			int rc;

			if (si == NSTRATEGIES && !manual)
				continue;
			sizes(&o, seed + workers + si);
			rc = si < NSTRATEGIES
				 ? sc_placement_parse(g, name, seed, &p)
				 : sc_placement_manual(g, manual,
						       sc_graph_node_count(g),
						       2, &p);
			if (!rc)
				rc = sc_settle_run(w, p, &o, &res);
			if (rc || !res.ok) {
				(void)fprintf(stderr,
					      "tsan_runtime: seed %llu, %s, %u "
					      "workers, edges of %u: %s\n",
					      (unsigned long long)seed, name,
					      workers, o.edge_capacity,
					      res.why[0] ? res.why
							 : sc_errmsg());
				failures++;
			}
			sc_settle_result_fini(&res);
			sc_placement_destroy(p);
		}
	}
}

static int
random_case(uint64_t seed)
{
	struct sc_randc *rc = NULL;
	struct sc_settle_work *w = NULL;

	if (sc_randc_create(seed, &rc) != 0 ||
	    sc_settle_work_generate(sc_randc_graph(rc), sc_randc_settle_step,
				    rc, 12, 0, &w) != 0) {
		(void)fprintf(stderr, "tsan_runtime: workload: %s\n",
			      sc_errmsg());
		(void)sc_randc_destroy(rc);
		return 1;
	}
	run_all(w, seed, NULL);
	sc_settle_work_destroy(w);
	return sc_randc_destroy(rc) ? 1 : 0;
}

static int
grid_case(uint64_t seed)
{
	struct sc_grid_opts go = {.rows = 6, .cols = 6, .seed = seed};
	struct sc_grid *gr = NULL;
	struct sc_grid_feed f = {.edits = 8};
	struct sc_settle_work *w = NULL;
	int32_t map[32];

	if (sc_grid_create(&go, &gr) != 0 ||
	    sc_grid_staged(gr, map, sc_graph_node_count(sc_grid_graph(gr))) !=
		0) {
		(void)fprintf(stderr, "tsan_runtime: grid: %s\n", sc_errmsg());
		(void)sc_grid_destroy(gr);
		return 1;
	}
	f.gr = gr;
	if (sc_settle_work_generate(sc_grid_graph(gr), sc_grid_settle_step, &f,
				    30, 0, &w) != 0) {
		(void)fprintf(stderr, "tsan_runtime: grid: %s\n", sc_errmsg());
		(void)sc_grid_destroy(gr);
		return 1;
	}
	run_all(w, seed, map);
	sc_settle_work_destroy(w);
	return sc_grid_destroy(gr) ? 1 : 0;
}

int
main(void)
{
	uint64_t base = sc_prop_seed(4000), n = sc_prop_count(2);

	for (uint64_t i = 0; i < n; i++)
		if (random_case(base + i) != 0)
			return 1;
	if (grid_case(base) != 0)
		return 1;
	if (failures) {
		(void)fprintf(stderr, "tsan_runtime: %d failures\n", failures);
		return 1;
	}
	(void)printf("tsan_runtime: ok\n");
	return 0;
}

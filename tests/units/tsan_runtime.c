/*
 * tsan_runtime.c - the real-pool settle scenario as a plain program, for
 * the ThreadSanitizer pass (Criterion cannot run under TSan, issue #274).
 *
 * For a few random circuits and the grid example, every strategy on a
 * real pool of 1..4 threads (behind the watchdog guard), 1..3 host
 * threads submitting with backpressure while the workers run: the outputs
 * must equal the single circuit's and the idle invariant must hold. Exit 0
 * is a pass; a failure prints the seed, the strategy and what differed.
 * SC_SEED / SC_SEEDS_SCALE as for the property tests.
 */
#include <stdio.h>

#include "tests/support/units_settle.h"

static int failures;

static void
run_all(struct us_work *w, uint64_t seed, const int32_t *manual)
{
	for (uint32_t workers = 1; workers <= 4; workers++) {
		for (size_t si = 0; si <= US_NSTRATEGIES; si++) {
			struct us_case k = {.seed = seed,
					    .held = workers,
					    .pool = true,
					    .hosts = 1 + (workers + si) % 3,
					    .budget = 1 + (uint32_t)(seed % 4)};
			const char *name =
			    si < US_NSTRATEGIES ? us_strategies[si] : "manual";
			struct sc_placement *p = NULL;
			int rc;

			if (si == US_NSTRATEGIES && !manual)
				continue;
			us_sizes(&k, seed + workers + si);
			rc = si < US_NSTRATEGIES
				 ? sc_placement_parse(w->g, name, seed, &p)
				 : sc_placement_manual(
				       w->g, manual, sc_graph_node_count(w->g),
				       2, &p);
			if (rc || !us_run(w, p, &k)) {
				fprintf(stderr,
					"tsan_runtime: seed %llu, %s, %u "
					"workers, edges of %u: %s\n",
					(unsigned long long)seed, name, workers,
					k.capacity, rc ? sc_errmsg() : k.why);
				failures++;
			}
			sc_placement_destroy(p);
		}
	}
}

int
main(void)
{
	uint64_t base = sc_prop_seed(4000), n = sc_prop_count(2);

	for (uint64_t i = 0; i < n; i++) {
		struct cg_spec *s = us_generate(base + i);
		struct us_work w;

		if (us_work_random(&w, s, base + i, 12) != 0) {
			fprintf(stderr, "tsan_runtime: workload: %s\n",
				sc_errmsg());
			return 1;
		}
		run_all(&w, base + i, NULL);
		us_work_fini(&w);
		cg_free(s);
	}
	{
		struct ug_grid gr;
		struct us_work w;
		int32_t map[32];

		if (ug_grid_init(&gr, 6, 6, base) != 0 ||
		    us_work_grid(&w, &gr, 30, 8) != 0) {
			fprintf(stderr, "tsan_runtime: grid: %s\n",
				sc_errmsg());
			return 1;
		}
		ug_grid_staged(&gr, map, sc_graph_node_count(gr.g));
		run_all(&w, base, map);
		us_work_fini(&w);
		ug_grid_fini(&gr);
	}
	if (failures) {
		fprintf(stderr, "tsan_runtime: %d failures\n", failures);
		return 1;
	}
	printf("tsan_runtime: ok\n");
	return 0;
}

/*
 * test_settle.c - the settle property: whatever the placement, the number
 * of workers and the order of turns, the placed circuit settles exactly
 * where the single circuit does.
 *
 * For random circuits (tests/support/circuit_gen.h, integral-functional
 * operators) and for the staged grid example, every strategy (single,
 * per-node, chains, random, sharded; the grid's staged manual map too) x
 * 1..4 workers x seeds of the seeded scheduler, with host input arriving
 * between any two events and kicks landing on held (running) units; then
 * the same with a real pool of 1..4 threads behind a watchdog, fed by 1..3
 * host threads at once. At idle, every edge into a live unit is empty and
 * every outbox flushed. SC_SEED replays one seed; SC_SEEDS_SCALE runs
 * more. SC_THREADED.
 */
#include <criterion/criterion.h>

#include "tests/support/rt_watchdog.h"
#include "tests/support/units_settle.h"

/* Kicks that landed on held (running) units, and host submits refused
 * as full, over a test's sim runs: the schedules the property is about
 * must actually happen. */
static uint64_t kicks_on_running, host_efull;

/* Run every strategy for one graph + workload under case template k. */
static void
all_strategies(struct us_work *w, struct us_case *k, uint64_t gseed,
	       const char *test, const int32_t *manual, uint32_t nmanual)
{
	for (size_t si = 0; si <= US_NSTRATEGIES; si++) {
		struct sc_placement *p = NULL;
		const char *name =
		    si < US_NSTRATEGIES ? us_strategies[si] : "manual";
		bool ok;
		int rc;

		if (si == US_NSTRATEGIES && !manual)
			continue;
		rc = si < US_NSTRATEGIES
			 ? sc_placement_parse(w->g, name, gseed, &p)
			 : sc_placement_manual(w->g, manual,
					       sc_graph_node_count(w->g),
					       nmanual, &p);
		cr_assert_eq(rc, 0, "placement %s: %s", name, sc_errmsg());
		ok = us_run(w, p, k);
		kicks_on_running += k->res.kicks_on_running;
		host_efull += k->efull;
		sc_placement_destroy(p);
		SC_PROP_ASSERT(k->seed, "settle", test, ok,
			       "graph seed %llu, placement %s, %s %u, "
			       "edges of %u, outbox bound %zu: %s",
			       (unsigned long long)gseed, name,
			       k->pool ? "workers" : "held", k->held,
			       k->capacity, k->outbox_bound, k->why);
	}
}

Test(settle, random_circuits_settle_to_the_single_circuit_for_any_order,
     .timeout = 60)
{
	uint64_t base = sc_prop_seed(7000), n = sc_prop_count(100);

	for (uint64_t i = 0; i < n; i++) {
		uint64_t seed = base + i;
		struct cg_spec *s = us_generate(seed);
		struct us_work w;

		cr_assert_eq(us_work_random(&w, s, seed, 16), 0, "%s",
			     sc_errmsg());
		for (uint32_t held = 1; held <= 4; held++) {
			struct us_case k = {.seed = seed, .held = held};

			us_sizes(&k, seed + held);
			all_strategies(&w, &k, seed,
				       "random_circuits_settle_to_the_single_"
				       "circuit_for_any_order",
				       NULL, 0);
		}
		us_work_fini(&w);
		cg_free(s);
	}
	cr_assert_gt(kicks_on_running, 0, "no kick landed on a running unit");
	cr_assert_gt(host_efull, 0, "the host never met a full input");
}

Test(settle, grid_example_settles_to_the_single_circuit_for_any_order,
     .timeout = 60)
{
	uint64_t base = sc_prop_seed(8000), n = sc_prop_count(40);

	for (uint64_t i = 0; i < n; i++) {
		uint64_t seed = base + i;
		struct ug_grid gr;
		struct us_work w;
		int32_t map[32];

		cr_assert_eq(ug_grid_init(&gr, 5, 4, seed), 0);
		cr_assert_eq(us_work_grid(&w, &gr, 12, 6), 0, "%s",
			     sc_errmsg());
		ug_grid_staged(&gr, map, sc_graph_node_count(gr.g));
		for (uint32_t held = 1; held <= 4; held++) {
			struct us_case k = {.seed = seed, .held = held};

			us_sizes(&k, seed + held);
			all_strategies(&w, &k, seed,
				       "grid_example_settles_to_the_single_"
				       "circuit_for_any_order",
				       map, 2);
		}
		us_work_fini(&w);
		ug_grid_fini(&gr);
	}
	cr_assert_gt(kicks_on_running, 0, "no kick landed on a running unit");
	cr_assert_gt(host_efull, 0, "the host never met a full input");
}

/* The pool cases: each runtime behind the watchdog guard. */
static void
pool_cases(struct us_work *w, uint64_t seed, const char *test,
	   const int32_t *manual)
{
	for (uint32_t workers = 1; workers <= 4; workers++) {
		struct us_case k = {.seed = seed,
				    .held = workers,
				    .pool = true,
				    .hosts = 1 + (workers + (uint32_t)seed) % 3,
				    .budget = 1 + (uint32_t)(seed % 8)};

		us_sizes(&k, seed + workers);
		all_strategies(w, &k, seed, test, manual, manual ? 2 : 0);
	}
}

Test(settle, random_circuits_settle_to_the_single_circuit_on_a_real_pool,
     .timeout = 60)
{
	uint64_t base = sc_prop_seed(9000), n = sc_prop_count(6);

	for (uint64_t i = 0; i < n; i++) {
		uint64_t seed = base + i;
		struct cg_spec *s = us_generate(seed);
		struct us_work w;

		cr_assert_eq(us_work_random(&w, s, seed, 10), 0);
		pool_cases(&w, seed,
			   "random_circuits_settle_to_the_single_circuit_on_"
			   "a_real_pool",
			   NULL);
		us_work_fini(&w);
		cg_free(s);
	}
}

Test(settle, grid_example_settles_to_the_single_circuit_on_a_real_pool,
     .timeout = 60)
{
	uint64_t base = sc_prop_seed(9500), n = sc_prop_count(4);

	for (uint64_t i = 0; i < n; i++) {
		uint64_t seed = base + i;
		struct ug_grid gr;
		struct us_work w;
		int32_t map[32];

		cr_assert_eq(ug_grid_init(&gr, 8, 8, seed), 0);
		cr_assert_eq(us_work_grid(&w, &gr, 40, 16), 0);
		ug_grid_staged(&gr, map, sc_graph_node_count(gr.g));
		pool_cases(&w, seed,
			   "grid_example_settles_to_the_single_circuit_on_a_"
			   "real_pool",
			   map);
		us_work_fini(&w);
		ug_grid_fini(&gr);
	}
}

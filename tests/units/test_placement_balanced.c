/*
 * test_placement_balanced.c - the balanced strategy (units/placement.h):
 * contiguous runs of the id order with the least costliest unit, loops
 * kept whole, measured and estimated costs, and the settle property.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/workloads/grid.h"
#include "bench/workloads/random.h"
#include "operators/base.h"
#include "tests/support/prop.h"
#include "units/analysis.h"
#include "units/placement.h"
#include "units/runtime.h"
#include "units/settle.h"

static int
copy_row(void *ctx, const uint64_t *row, uint64_t *out)
{
	(void)ctx;
	out[0] = row[0];
	out[1] = row[1];
	return 0;
}

/* in -> m1 -> ... -> m(n-2) -> out: a chain of n nodes, ids in order. */
static struct sc_graph *
chain_new(size_t n)
{
	enum sc_type t[2] = {SC_TYPE_I64, SC_TYPE_I64};
	struct sc_graph *g = NULL;
	struct sc_schema s;
	int last;

	cr_assert_eq(sc_schema_init(&s, 2, t, NULL), 0);
	cr_assert_eq(sc_graph_create(&g), 0);
	last = sc_graph_input(g, "in", &s);
	for (size_t i = 1; i + 1 < n; i++)
		last = sc_graph_map(g, last, &s, copy_row, NULL);
	cr_assert_geq(sc_graph_output(g, "out", last), 0, "%s", sc_errmsg());
	cr_assert_eq(sc_graph_node_count(g), n);
	return g;
}

/* The costliest unit of p under cost[]. */
static double
max_unit_cost(const struct sc_placement *p, const double *cost, size_t n)
{
	double load[64] = {0}, worst = 0;

	cr_assert_leq(sc_placement_units(p), 64);
	for (size_t i = 0; i < n; i++)
		load[sc_placement_unit_of(p, (int)i)] += cost[i];
	for (uint32_t u = 0; u < sc_placement_units(p); u++)
		worst = load[u] > worst ? load[u] : worst;
	return worst;
}

/* The least costliest unit over every cut of 0..n-1 into at most k runs
 * (brute force: every subset of the n-1 cut points). */
static double
brute_best(const double *cost, size_t n, uint32_t k)
{
	double best = INFINITY;

	for (uint32_t mask = 0; mask < (1u << (n - 1)); mask++) {
		double load = 0, worst = 0;

		if ((uint32_t)__builtin_popcount(mask) + 1 > k)
			continue;
		for (size_t i = 0; i < n; i++) {
			load += cost[i];
			if (i + 1 == n || (mask >> i & 1u)) {
				worst = load > worst ? load : worst;
				load = 0;
			}
		}
		best = worst < best ? worst : best;
	}
	return best;
}

Test(placement_balanced, cuts_a_chain_where_the_costs_are_even)
{
	struct sc_graph *g = chain_new(6);
	const double cost[6] = {3, 1, 1, 1, 2, 2};
	struct sc_placement *p = NULL;

	cr_assert_eq(sc_placement_balanced(g, 2, cost, 6, &p), 0, "%s",
		     sc_errmsg());
	cr_assert_str_eq(sc_placement_strategy(p), "balanced");
	cr_assert_eq(sc_placement_units(p), 2);
	for (int i = 0; i < 6; i++)
		cr_assert_eq(sc_placement_unit_of(p, i), i < 3 ? 0 : 1,
			     "node %d", i);
	sc_placement_destroy(p);
	sc_graph_destroy(g);
}

/* Against brute force over every cut of random costs: the costliest unit
 * is the least any cut into at most k contiguous runs achieves, units
 * are runs in id order, and there are at most k of them. */
Test(placement_balanced, costliest_unit_is_the_least_any_contiguous_cut_gives)
{
	uint64_t base = sc_prop_seed(41), count = sc_prop_count(200);

	for (uint64_t seed = base; seed < base + count; seed++) {
		uint64_t r = seed;
		size_t n = 2 + sc_splitmix_next(&r) % 9;
		uint32_t k = 1 + (uint32_t)(sc_splitmix_next(&r) % 5);
		struct sc_graph *g = chain_new(n);
		struct sc_placement *p = NULL;
		double cost[10], got, want;

		for (size_t i = 0; i < n; i++)
			cost[i] = (double)(sc_splitmix_next(&r) % 100);
		cr_assert_eq(sc_placement_balanced(g, k, cost, n, &p), 0, "%s",
			     sc_errmsg());
		got = max_unit_cost(p, cost, n);
		want = brute_best(cost, n, k);
		SC_PROP_ASSERT(seed, "placement_balanced",
			       "costliest_unit_is_the_least_any_contiguous_"
			       "cut_gives",
			       fabs(got - want) <= 1e-6 * (want + 1) &&
				   sc_placement_units(p) <= k,
			       "n %zu k %u: costliest %g, best cut %g, %u "
			       "units",
			       n, k, got, want, sc_placement_units(p));
		for (size_t i = 1; i < n; i++)
			cr_assert_geq(sc_placement_unit_of(p, (int)i),
				      sc_placement_unit_of(p, (int)i - 1));
		sc_placement_destroy(p);
		sc_graph_destroy(g);
	}
}

/* in, fb (feedback), plus(in, fb), distinct, delay -> bound to fb,
 * out: a loop fb -> plus -> distinct -> delay -> fb. */
Test(placement_balanced, keeps_a_loop_in_one_unit_so_the_loop_check_passes)
{
	enum sc_type t[2] = {SC_TYPE_I64, SC_TYPE_I64};
	const double cost[6] = {10, 10, 10, 10, 10, 10};
	struct sc_graph *g = NULL;
	struct sc_placement *p = NULL;
	struct sc_runtime *rt = NULL;
	struct sc_analysis a;
	struct sc_schema s;
	int in, fb, plus, dist, delay;

	cr_assert_eq(sc_schema_init(&s, 2, t, NULL), 0);
	cr_assert_eq(sc_graph_create(&g), 0);
	in = sc_graph_input(g, "in", &s);
	fb = sc_graph_feedback(g, &s);
	plus = sc_graph_plus(g, in, fb);
	dist = sc_graph_distinct(g, plus);
	delay = sc_graph_delay(g, dist);
	cr_assert_eq(sc_graph_bind(g, fb, delay), 0, "%s", sc_errmsg());
	cr_assert_geq(sc_graph_output(g, "out", dist), 0, "%s", sc_errmsg());
	/* per-node splits the loop, and the runtime refuses it: the case
	 * this test is about exists. */
	cr_assert_eq(sc_placement_per_node(g, &p), 0);
	cr_assert_eq(sc_runtime_create(g, p, NULL, &rt), SC_EINVAL);
	cr_assert(strstr(sc_errmsg(), "crosses units"), "%s", sc_errmsg());
	sc_placement_destroy(p);
	cr_assert_eq(sc_placement_balanced(g, 6, cost, 6, &p), 0, "%s",
		     sc_errmsg());
	for (int i = fb; i <= delay; i++)
		cr_assert_eq(sc_placement_unit_of(p, i),
			     sc_placement_unit_of(p, fb), "node %d", i);
	cr_assert_eq(sc_placement_units(p), 3, "in | loop | out");
	cr_assert_eq(sc_analysis_init(&a, g, p), 0, "%s", sc_errmsg());
	sc_analysis_fini(&a);
	/* The runtime's coalescing mode still refuses the graph, for its
	 * delay (runtime.h, Modes), not for a loop that crosses units. */
	cr_assert_eq(sc_runtime_create(g, p, NULL, &rt), SC_EINVAL);
	cr_assert(strstr(sc_errmsg(), "(delay) is per tick"), "%s",
		  sc_errmsg());
	cr_assert_null(rt);
	sc_placement_destroy(p);
	sc_graph_destroy(g);
}

Test(placement_balanced, refuses_bad_arguments_by_name)
{
	struct sc_graph *g = chain_new(3);
	struct sc_placement *p = NULL;
	double cost[3] = {1, 1, 1};

	cr_assert_eq(sc_placement_balanced(g, 0, cost, 3, &p), SC_EINVAL);
	cr_assert_eq(sc_placement_balanced(g, SC_PLACEMENT_MAX_BALANCED + 1,
					   cost, 3, &p),
		     SC_EINVAL);
	cr_assert_eq(sc_placement_balanced(g, 2, cost, 2, &p), SC_EINVAL);
	cr_assert(strstr(sc_errmsg(), "2 costs for 3 nodes"), "%s",
		  sc_errmsg());
	cost[1] = -1;
	cr_assert_eq(sc_placement_balanced(g, 2, cost, 3, &p), SC_EINVAL);
	cr_assert(strstr(sc_errmsg(), "node 1"), "%s", sc_errmsg());
	cost[1] = NAN;
	cr_assert_eq(sc_placement_balanced(g, 2, cost, 3, &p), SC_EINVAL);
	cost[1] = INFINITY;
	cr_assert_eq(sc_placement_balanced(g, 2, cost, 3, &p), SC_EINVAL);
	cr_assert_eq(sc_placement_balanced(NULL, 2, cost, 3, &p), SC_EINVAL);
	cr_assert_eq(sc_placement_balanced(g, 2, cost, 3, NULL), SC_EINVAL);
	cr_assert_null(p, "nothing written on failure");
	sc_graph_destroy(g);
}

Test(placement_balanced, parse_takes_balanced_and_balanced_k)
{
	static const char *const bad[] = {
	    "balanced:",   "balanced:0",    "balanced:x", "balanced: 2",
	    "balanced:+2", "balanced:4097", "balanced2"};
	struct sc_graph *g = chain_new(8);
	struct sc_placement *p = NULL;

	cr_assert_eq(sc_placement_parse(g, "balanced:3", 1, &p), 0, "%s",
		     sc_errmsg());
	cr_assert_str_eq(sc_placement_strategy(p), "balanced");
	cr_assert_eq(sc_placement_units(p), 3, "8 equal nodes in 3 runs");
	sc_placement_destroy(p);
	cr_assert_eq(sc_placement_parse(g, "balanced", 1, &p), 0, "%s",
		     sc_errmsg());
	cr_assert_geq(sc_placement_units(p), 1);
	sc_placement_destroy(p);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		p = NULL;
		cr_assert_eq(sc_placement_parse(g, bad[i], 1, &p), SC_EINVAL,
			     "%s", bad[i]);
		cr_assert_null(p);
		cr_assert(strstr(sc_errmsg(), "balanced"), "%s: %s", bad[i],
			  sc_errmsg());
	}
	sc_graph_destroy(g);
}

/* A generator that fails at submission 2, for calibrate's errors. */
static int
gen_fails(void *ctx, size_t i, struct sc_settle_step *out)
{
	if (i == 2)
		return SC_ENOMEM;
	return sc_grid_settle_step(ctx, i, out);
}

Test(placement_balanced, calibrate_measures_every_node_and_is_deterministic)
{
	struct sc_grid_opts go = {.rows = 16, .cols = 16, .seed = 5};
	struct sc_grid *a = NULL, *b = NULL;
	struct sc_grid_feed fa, fb;
	double ca[10], cb[10], est[10];
	size_t n;

	cr_assert_eq(sc_grid_create(&go, &a), 0);
	cr_assert_eq(sc_grid_create(&go, &b), 0);
	n = sc_graph_node_count(sc_grid_graph(a));
	cr_assert_eq(n, 10);
	fa = (struct sc_grid_feed){.gr = a, .edits = 32};
	fb = (struct sc_grid_feed){.gr = b, .edits = 32};
	cr_assert_eq(sc_placement_calibrate(sc_grid_graph(a),
					    sc_grid_settle_step, &fa, 8, ca, n),
		     0, "%s", sc_errmsg());
	cr_assert_eq(sc_placement_calibrate(sc_grid_graph(b),
					    sc_grid_settle_step, &fb, 8, cb, n),
		     0, "%s", sc_errmsg());
	cr_assert_eq(sc_placement_cost_estimate(sc_grid_graph(a), est, n), 0);
	for (size_t i = 0; i < n; i++) {
		cr_assert_gt(ca[i], 0, "node %zu saw rows", i);
		cr_assert_eq(ca[i], cb[i], "node %zu: same seed, same cost", i);
		cr_assert_geq(ca[i], est[i], "at least a row per weight");
	}
	/* The aggregates weigh 3 per row, the input 1. */
	cr_assert_eq(est[0], 1.0);
	cr_assert_eq(est[1], 3.0);
	/* A failing generator: its error, and cost untouched. */
	for (size_t i = 0; i < n; i++)
		cb[i] = -7;
	cr_assert_eq(
	    sc_placement_calibrate(sc_grid_graph(b), gen_fails, &fb, 8, cb, n),
	    SC_ENOMEM);
	for (size_t i = 0; i < n; i++)
		cr_assert_eq(cb[i], -7, "node %zu written on failure", i);
	cr_assert_eq(sc_placement_calibrate(sc_grid_graph(b),
					    sc_grid_settle_step, &fb, 0, cb, n),
		     SC_EINVAL);
	cr_assert_eq(sc_placement_calibrate(sc_grid_graph(b),
					    sc_grid_settle_step, &fb, 4, cb,
					    n - 1),
		     SC_EINVAL);
	sc_grid_destroy(a);
	sc_grid_destroy(b);
}

/* Run w under p with seeded schedules holding 1..3 units; every one must
 * settle where the single circuit does. */
static void
settles_like_single(const struct sc_settle_work *w,
		    const struct sc_placement *p, uint64_t seed,
		    const char *what)
{
	for (uint32_t held = 1; held <= 3; held++) {
		struct sc_settle_opts o = {
		    .mode = SC_SETTLE_SIM, .seed = seed + held, .units = held};
		struct sc_settle_result res;

		cr_assert_eq(sc_settle_run(w, p, &o, &res), 0, "%s", res.why);
		SC_PROP_ASSERT(seed, "placement_balanced",
			       "is_a_valid_placement_that_settles_like_single",
			       res.ok, "%s, %u units held: %s\nreplay: %s",
			       what, held, res.why, res.replay);
		sc_settle_result_fini(&res);
	}
}

Test(placement_balanced, is_a_valid_placement_that_settles_like_single)
{
	uint64_t base = sc_prop_seed(7), count = sc_prop_count(12);
	struct sc_grid_opts go = {.rows = 8, .cols = 8, .seed = 3};
	struct sc_grid *gr = NULL, *cal = NULL;
	struct sc_settle_work *w = NULL;
	struct sc_grid_feed f;
	double cost[10];

	/* The grid, with measured costs, k = 1..4. */
	cr_assert_eq(sc_grid_create(&go, &gr), 0);
	cr_assert_eq(sc_grid_create(&go, &cal), 0);
	f = (struct sc_grid_feed){.gr = cal, .edits = 16};
	cr_assert_eq(sc_placement_calibrate(sc_grid_graph(cal),
					    sc_grid_settle_step, &f, 8, cost,
					    10),
		     0, "%s", sc_errmsg());
	f = (struct sc_grid_feed){.gr = gr, .edits = 16};
	cr_assert_eq(sc_settle_work_generate(
			 sc_grid_graph(gr), sc_grid_settle_step, &f, 12, 0, &w),
		     0, "%s", sc_errmsg());
	for (uint32_t k = 1; k <= 4; k++) {
		struct sc_placement *p = NULL;

		cr_assert_eq(
		    sc_placement_balanced(sc_grid_graph(gr), k, cost, 10, &p),
		    0, "%s", sc_errmsg());
		cr_assert_leq(sc_placement_units(p), k);
		settles_like_single(w, p, base + k, "grid");
		sc_placement_destroy(p);
	}
	sc_settle_work_destroy(w);
	sc_grid_destroy(cal);
	sc_grid_destroy(gr);
	/* Random circuits, estimated costs, k drawn in 2..5. */
	for (uint64_t seed = base; seed < base + count; seed++) {
		struct sc_randc *rc = NULL;
		struct sc_placement *p = NULL;
		struct sc_graph *g;

		cr_assert_eq(sc_randc_create(seed, &rc), 0, "%s", sc_errmsg());
		g = sc_randc_graph(rc);
		cr_assert_eq(sc_settle_work_generate(g, sc_randc_settle_step,
						     rc, 20, 0, &w),
			     0, "%s", sc_errmsg());
		cr_assert_eq(sc_placement_balanced(g, 2 + (uint32_t)(seed % 4),
						   NULL, sc_graph_node_count(g),
						   &p),
			     0, "%s", sc_errmsg());
		settles_like_single(w, p, seed, "random circuit");
		sc_placement_destroy(p);
		sc_settle_work_destroy(w);
		cr_assert_eq(sc_randc_destroy(rc), 0);
	}
}

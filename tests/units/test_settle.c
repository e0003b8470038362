/*
 * test_settle.c - the settle property: whatever the placement, the number
 * of workers and the order of turns, the placed circuit settles exactly
 * where the single circuit does; and the check itself (units/settle.h).
 *
 * For random circuits (bench/workloads/random.h, integral-functional
 * operators) and for the staged grid example (bench/workloads/grid.h),
 * every strategy (single, per-node, chains, random, sharded; the grid's
 * staged manual map too) x 1..4 workers x seeds of the seeded scheduler,
 * with host input arriving between any two events and kicks landing on
 * held (running) units; then the same with a real pool of 1..4 threads
 * behind a watchdog, fed by 1..3 host threads at once. At idle, every edge
 * into a live unit is empty and every outbox flushed (sc_settle_run checks
 * both). Then the check: a planted difference is reported by output name
 * and rows, and a seed replays. SC_SEED replays one seed; SC_SEEDS_SCALE
 * runs more. SC_THREADED.
 *
 * SC_BOTH_EXECUTORS: every test here runs on each executor kind (ctest
 * registers NAME and NAME.queue, cmake/sc_helpers.cmake).
 */
#include <criterion/criterion.h>
#include <string.h>

#include "bench/workloads/grid.h"
#include "bench/workloads/random.h"
#include "operators/schema.h"
#include "tests/support/prop.h"
#include "tests/support/rt_watchdog.h"
#include "units/settle.h"

/* The strategies every case runs (manual is the grid's staged map). */
static const char *const strategies[] = {
    "single",	"per-node",  "chains",	  "random:2",
    "random:5", "sharded:2", "sharded:3",
};
#define NSTRATEGIES (sizeof(strategies) / sizeof(strategies[0]))

/* Kicks that landed on held (running) units, and host submits refused
 * as full, over a test's sim runs: the schedules the property is about
 * must actually happen. */
static uint64_t kicks_on_running, host_efull;

/* Edge capacity and outbox bound for schedule seed s: small ones often,
 * so that edges fill and backpressure is exercised. */
static void
sizes(struct sc_settle_opts *o, uint64_t s)
{
	static const uint32_t caps[] = {1, 2, 4, 64};
	static const size_t bounds[] = {1, 4, 64, 4096};

	o->edge_capacity = caps[s % 4];
	o->outbox_bound = bounds[(s / 4) % 4];
}

/* The pool runs behind the test guard: a lost wake-up fails by name. */
static void *
guard_begin(void *ctx, struct sc_exec *ex)
{
	return sc_test_guard_begin(ex, "settle", 20000);
}

static void
guard_end(void *ctx, void *guard)
{
	sc_test_guard_end(guard);
}

/* Run every strategy for one work under the options template o. */
static void
all_strategies(const struct sc_settle_work *w, const struct sc_settle_opts *o,
	       uint64_t gseed, const char *test, const int32_t *manual)
{
	struct sc_graph *g = sc_settle_work_graph(w);

	for (size_t si = 0; si <= NSTRATEGIES; si++) {
		struct sc_placement *p = NULL;
		struct sc_settle_result res;
		const char *name = si < NSTRATEGIES ? strategies[si] : "manual";
		int rc;

		if (si == NSTRATEGIES && !manual)
			continue;
		rc = si < NSTRATEGIES
			 ? sc_placement_parse(g, name, gseed, &p)
			 : sc_placement_manual(g, manual,
					       sc_graph_node_count(g), 2, &p);
		cr_assert_eq(rc, 0, "placement %s: %s", name, sc_errmsg());
		rc = sc_settle_run(w, p, o, &res);
		cr_assert_eq(rc, 0, "settle_run: %s", res.why);
		kicks_on_running += res.sim.kicks_on_running;
		host_efull += res.submits_full;
		sc_placement_destroy(p);
		SC_PROP_ASSERT(o->seed, "settle", test, res.ok,
			       "graph seed %llu, placement %s, %s %u, "
			       "edges of %u, outbox bound %zu: %s\n"
			       "replay: %s",
			       (unsigned long long)gseed, name,
			       o->mode == SC_SETTLE_POOL ? "workers" : "held",
			       o->units, o->edge_capacity, o->outbox_bound,
			       res.why, res.replay);
		sc_settle_result_fini(&res);
	}
}

/* The work of random circuit rc: n of its deltas. */
static struct sc_settle_work *
random_work(struct sc_randc *rc, size_t n)
{
	struct sc_settle_work *w = NULL;

	cr_assert_eq(sc_settle_work_generate(sc_randc_graph(rc),
					     sc_randc_settle_step, rc, n, 0,
					     &w),
		     0, "%s", sc_errmsg());
	return w;
}

/* The work of a grid: n batches of `edits` cell edits. */
static struct sc_settle_work *
grid_work(struct sc_grid *gr, size_t n, size_t edits)
{
	struct sc_grid_feed f = {.gr = gr, .edits = edits};
	struct sc_settle_work *w = NULL;

	cr_assert_eq(sc_settle_work_generate(sc_grid_graph(gr),
					     sc_grid_settle_step, &f, n, 0, &w),
		     0, "%s", sc_errmsg());
	return w;
}

static struct sc_grid *
grid_new(int64_t rows, int64_t cols, uint64_t seed, int32_t *map, size_t max)
{
	struct sc_grid_opts go = {.rows = rows, .cols = cols, .seed = seed};
	struct sc_grid *gr = NULL;
	size_t n;

	cr_assert_eq(sc_grid_create(&go, &gr), 0, "%s", sc_errmsg());
	n = sc_graph_node_count(sc_grid_graph(gr));
	cr_assert_leq(n, max);
	cr_assert_eq(sc_grid_staged(gr, map, n), 0);
	return gr;
}

Test(settle, random_circuits_settle_to_the_single_circuit_for_any_order,
     .timeout = 60)
{
	uint64_t base = sc_prop_seed(7000), n = sc_prop_count(100);

	for (uint64_t i = 0; i < n; i++) {
		uint64_t seed = base + i;
		struct sc_randc *rc = NULL;
		struct sc_settle_work *w;

		cr_assert_eq(sc_randc_create(seed, &rc), 0);
		w = random_work(rc, 16);
		for (uint32_t held = 1; held <= 4; held++) {
			struct sc_settle_opts o = {
			    .mode = SC_SETTLE_SIM, .seed = seed, .units = held};

			sizes(&o, seed + held);
			all_strategies(w, &o, seed,
				       "random_circuits_settle_to_the_single_"
				       "circuit_for_any_order",
				       NULL);
		}
		sc_settle_work_destroy(w);
		cr_assert_eq(sc_randc_destroy(rc), 0);
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
		int32_t map[32];
		struct sc_grid *gr = grid_new(5, 4, seed, map, 32);
		struct sc_settle_work *w = grid_work(gr, 12, 6);

		for (uint32_t held = 1; held <= 4; held++) {
			struct sc_settle_opts o = {
			    .mode = SC_SETTLE_SIM, .seed = seed, .units = held};

			sizes(&o, seed + held);
			all_strategies(w, &o, seed,
				       "grid_example_settles_to_the_single_"
				       "circuit_for_any_order",
				       map);
		}
		sc_settle_work_destroy(w);
		cr_assert_eq(sc_grid_destroy(gr), 0);
	}
	cr_assert_gt(kicks_on_running, 0, "no kick landed on a running unit");
	cr_assert_gt(host_efull, 0, "the host never met a full input");
}

/* The pool cases: each runtime behind the watchdog guard. */
static void
pool_cases(const struct sc_settle_work *w, uint64_t seed, const char *test,
	   const int32_t *manual)
{
	for (uint32_t workers = 1; workers <= 4; workers++) {
		struct sc_settle_opts o = {
		    .mode = SC_SETTLE_POOL,
		    .seed = seed,
		    .units = workers,
		    .hosts = 1 + (workers + (uint32_t)seed) % 3,
		    .budget = 1 + (uint32_t)(seed % 8),
		    .timeout_ns = 5000000000ull,
		    .guard_begin = guard_begin,
		    .guard_end = guard_end};

		sizes(&o, seed + workers);
		all_strategies(w, &o, seed, test, manual);
	}
}

Test(settle, random_circuits_settle_to_the_single_circuit_on_a_real_pool,
     .timeout = 60)
{
	uint64_t base = sc_prop_seed(9000), n = sc_prop_count(6);

	for (uint64_t i = 0; i < n; i++) {
		uint64_t seed = base + i;
		struct sc_randc *rc = NULL;
		struct sc_settle_work *w;

		cr_assert_eq(sc_randc_create(seed, &rc), 0);
		w = random_work(rc, 10);
		pool_cases(w, seed,
			   "random_circuits_settle_to_the_single_circuit_on_"
			   "a_real_pool",
			   NULL);
		sc_settle_work_destroy(w);
		cr_assert_eq(sc_randc_destroy(rc), 0);
	}
}

Test(settle, grid_example_settles_to_the_single_circuit_on_a_real_pool,
     .timeout = 60)
{
	uint64_t base = sc_prop_seed(9500), n = sc_prop_count(4);

	for (uint64_t i = 0; i < n; i++) {
		uint64_t seed = base + i;
		int32_t map[32];
		struct sc_grid *gr = grid_new(8, 8, seed, map, 32);
		struct sc_settle_work *w = grid_work(gr, 40, 16);

		pool_cases(w, seed,
			   "grid_example_settles_to_the_single_circuit_on_a_"
			   "real_pool",
			   map);
		sc_settle_work_destroy(w);
		cr_assert_eq(sc_grid_destroy(gr), 0);
	}
}

/* --- the check itself ----------------------------------------------------- */

/* in(k, v) -> filter (all rows) -> output "out": the planted test's graph,
 * small enough that the differing rows can be named. */
static int
keep_all(void *ctx, const uint64_t *row, bool *keep)
{
	*keep = true;
	return 0;
}

static struct sc_batch *
one_row(int64_t k, int64_t v, int64_t weight)
{
	uint64_t row[2] = {sc_enc_i64(k), sc_enc_i64(v)};
	struct sc_batch *b = NULL;

	cr_assert_eq(sc_batch_from_records(2, row, &weight, 1, &b), 0);
	return b;
}

Test(settle, a_planted_difference_is_reported_with_the_output_and_its_rows)
{
	enum sc_type t[2] = {SC_TYPE_I64, SC_TYPE_I64};
	struct sc_settle_step steps[4], planted[5];
	struct sc_settle_opts o = {
	    .mode = SC_SETTLE_SIM, .seed = 3, .units = 2};
	struct sc_settle_result res;
	struct sc_settle_work *w = NULL;
	struct sc_placement *p = NULL;
	struct sc_schema s;
	struct sc_graph *g = NULL;
	int in, out;

	cr_assert_eq(sc_schema_init(&s, 2, t, NULL), 0);
	cr_assert_eq(sc_graph_create(&g), 0);
	in = sc_graph_input(g, "in", &s);
	out = sc_graph_output(g, "out", sc_graph_filter(g, in, keep_all, NULL));
	cr_assert_geq(out, 0, "%s", sc_errmsg());
	for (int i = 0; i < 4; i++)
		steps[i] = planted[i] = (struct sc_settle_step){
		    .input = in, .batch = one_row(i, 10 * (int64_t)i, 1)};
	/* The reference is fed one row more: (7, 70) once. */
	planted[4] =
	    (struct sc_settle_step){.input = in, .batch = one_row(7, 70, 1)};
	cr_assert_eq(sc_settle_work_create(g, steps, 4, 0, &w), 0);
	cr_assert_eq(sc_settle_work_reference(w, planted, 5), 0);
	cr_assert_eq(sc_placement_parse(g, "per-node", 1, &p), 0);

	cr_assert_eq(sc_settle_run(w, p, &o, &res), 0, "%s", res.why);
	cr_assert_not(res.ok, "the planted row went unnoticed");
	cr_assert_eq(res.error, SC_ESTATE);
	cr_assert_eq(res.output, out);
	cr_assert_str_eq(res.output_name, "out");
	cr_assert(strstr(res.why, "'out'"), "%s", res.why);
	cr_assert(strstr(res.why, "(7, 70)"), "%s", res.why);
	cr_assert_eq(res.ndiff_total, 1);
	cr_assert_eq(res.ndiff, 1);
	cr_assert_eq(sc_dec_i64(res.diff[0].row[0]), 7);
	cr_assert_eq(sc_dec_i64(res.diff[0].row[1]), 70);
	cr_assert_eq(res.diff[0].placed, 0);
	cr_assert_eq(res.diff[0].single, 1);
	cr_assert_eq(sc_batch_count(res.placed), 4);
	cr_assert_eq(sc_batch_count(res.single), 5);
	cr_assert(strstr(res.replay, "sc_settle_run(") &&
		      strstr(res.replay, ".seed = 3"),
		  "%s", res.replay);
	sc_settle_result_fini(&res);

	/* The same reference as the run's: the check passes. */
	cr_assert_eq(sc_settle_work_reference(w, steps, 4), 0);
	cr_assert_eq(sc_settle_run(w, p, &o, &res), 0);
	cr_assert(res.ok, "%s", res.why);
	cr_assert_eq(res.output, -1);
	cr_assert_eq(res.ndiff_total, 0);
	cr_assert_eq(res.submits, 4);
	sc_settle_result_fini(&res);

	for (int i = 0; i < 5; i++)
		sc_batch_release(planted[i].batch);
	sc_settle_work_destroy(w);
	sc_placement_destroy(p);
	cr_assert_eq(sc_graph_destroy(g), 0);
}

Test(settle, a_work_lists_its_materialized_outputs_in_id_order)
{
	enum sc_type t[2] = {SC_TYPE_I64, SC_TYPE_I64};
	struct sc_settle_step step;
	struct sc_settle_work *w = NULL;
	struct sc_schema s;
	struct sc_graph *g = NULL;
	int in, f, a, b, ids[4] = {-1, -1, -1, -1};

	cr_assert_eq(sc_schema_init(&s, 2, t, NULL), 0);
	cr_assert_eq(sc_graph_create(&g), 0);
	in = sc_graph_input(g, "in", &s);
	f = sc_graph_filter(g, in, keep_all, NULL);
	a = sc_graph_output(g, "a", f);
	cr_assert_geq(sc_graph_output_stream(g, "s", f), 0, "%s", sc_errmsg());
	b = sc_graph_output(g, "b", in);
	cr_assert_geq(b, 0, "%s", sc_errmsg());
	step = (struct sc_settle_step){.input = in, .batch = one_row(1, 2, 1)};
	cr_assert_eq(sc_settle_work_create(g, &step, 1, 0, &w), 0);

	/* A stream output keeps no integral: it is not compared. */
	cr_assert_eq(sc_settle_work_outputs(w, ids, 4), 2);
	cr_assert_eq(ids[0], a);
	cr_assert_eq(ids[1], b);
	cr_assert_eq(ids[2], -1);
	/* Room for fewer: that many written, the whole count returned. */
	ids[0] = ids[1] = -1;
	cr_assert_eq(sc_settle_work_outputs(w, ids, 1), 2);
	cr_assert_eq(ids[0], a);
	cr_assert_eq(ids[1], -1);
	cr_assert_eq(sc_settle_work_outputs(w, NULL, 0), 2);

	sc_batch_release(step.batch);
	sc_settle_work_destroy(w);
	cr_assert_eq(sc_graph_destroy(g), 0);
}

Test(settle, a_planted_difference_in_the_grid_names_its_first_output)
{
	struct sc_grid_opts go = {.rows = 3, .cols = 3, .seed = 5};
	struct sc_settle_step steps[6], planted[7];
	struct sc_settle_opts o = {
	    .mode = SC_SETTLE_SIM, .seed = 9, .units = 3};
	struct sc_settle_result res;
	struct sc_settle_work *w = NULL;
	struct sc_placement *p = NULL;
	struct sc_grid *gr = NULL;
	struct sc_grid_nodes nd;

	cr_assert_eq(sc_grid_create(&go, &gr), 0);
	sc_grid_nodes(gr, &nd);
	for (int i = 0; i < 7; i++) {
		struct sc_batch *b = NULL;

		cr_assert_eq(sc_grid_next(gr, 2, &b), 0);
		planted[i] =
		    (struct sc_settle_step){.input = nd.cells, .batch = b};
		if (i < 6)
			steps[i] = planted[i];
	}
	cr_assert_eq(sc_settle_work_create(sc_grid_graph(gr), steps, 6, 0, &w),
		     0);
	cr_assert_eq(sc_settle_work_reference(w, planted, 7), 0);
	cr_assert_eq(sc_placement_parse(sc_grid_graph(gr), "chains", 1, &p), 0);
	cr_assert_eq(sc_settle_run(w, p, &o, &res), 0, "%s", res.why);
	cr_assert_not(res.ok);
	/* "grid" is the first output by id, and the stamp moved in it. */
	cr_assert_eq(res.output, nd.out_grid);
	cr_assert_str_eq(res.output_name, "grid");
	cr_assert_gt(res.ndiff_total, 0);
	for (size_t i = 0; i < res.ndiff; i++)
		cr_assert_neq(res.diff[i].placed, res.diff[i].single,
			      "row %zu is listed but agrees", i);
	sc_settle_result_fini(&res);
	for (int i = 0; i < 7; i++)
		sc_batch_release(planted[i].batch);
	sc_settle_work_destroy(w);
	sc_placement_destroy(p);
	cr_assert_eq(sc_grid_destroy(gr), 0);
}

/* Run random circuit `seed`'s work under sim seed `sim`. */
static void
replay_run(const struct sc_settle_work *w, const struct sc_placement *p,
	   uint64_t sim, struct sc_settle_result *res)
{
	struct sc_settle_opts o = {.mode = SC_SETTLE_SIM,
				   .seed = sim,
				   .units = 3,
				   .edge_capacity = 1,
				   .outbox_bound = 4};

	cr_assert_eq(sc_settle_run(w, p, &o, res), 0, "%s", res->why);
	cr_assert(res->ok, "%s", res->why);
}

Test(settle, a_seed_replays_the_same_schedule_and_statistics)
{
	uint64_t base = sc_prop_seed(6100), n = sc_prop_count(8);
	uint64_t differs = 0;

	for (uint64_t seed = base; seed < base + n; seed++) {
		struct sc_randc *rc = NULL;
		struct sc_settle_work *w;
		struct sc_placement *p = NULL;
		struct sc_settle_result a, b, c;

		cr_assert_eq(sc_randc_create(seed, &rc), 0);
		w = random_work(rc, 20);
		cr_assert_eq(
		    sc_placement_parse(sc_randc_graph(rc), "per-node", 1, &p),
		    0);
		replay_run(w, p, seed, &a);
		replay_run(w, p, seed, &b);
		replay_run(w, p, seed + 1000, &c);
		cr_assert_eq(a.sim.trace, b.sim.trace, "seed %llu",
			     (unsigned long long)seed);
		cr_assert_eq(a.sim.steps, b.sim.steps);
		cr_assert_eq(a.sim.turns, b.sim.turns);
		cr_assert_eq(a.sim.kicks_on_running, b.sim.kicks_on_running);
		cr_assert_eq(a.sim.max_held, b.sim.max_held);
		cr_assert_eq(a.submits_full, b.submits_full);
		cr_assert_eq(a.submits, b.submits);
		cr_assert_eq(a.stats.frames, b.stats.frames);
		cr_assert_eq(a.stats.turns, b.stats.turns);
		cr_assert_str_eq(a.replay, b.replay);
		differs += a.sim.trace != c.sim.trace;
		sc_settle_result_fini(&a);
		sc_settle_result_fini(&b);
		sc_settle_result_fini(&c);
		sc_placement_destroy(p);
		sc_settle_work_destroy(w);
		cr_assert_eq(sc_randc_destroy(rc), 0);
	}
	/* The trace is a function of the seed, not a constant. */
	cr_assert_gt(differs, 0, "another seed never changed the schedule");
}

Test(settle, bad_options_are_einval_with_the_result_zeroed)
{
	struct sc_grid_opts go = {.rows = 2, .cols = 2, .seed = 1};
	struct sc_settle_opts o = {.mode = SC_SETTLE_SIM, .units = 65};
	struct sc_settle_result res;
	struct sc_settle_work *w = NULL;
	struct sc_placement *p = NULL;
	struct sc_grid *gr = NULL;

	cr_assert_eq(sc_grid_create(&go, &gr), 0);
	w = grid_work(gr, 2, 1);
	cr_assert_eq(sc_placement_parse(sc_grid_graph(gr), "single", 1, &p), 0);
	cr_assert_eq(sc_settle_run(w, p, &o, &res), SC_EINVAL);
	cr_assert_not(res.ok);
	cr_assert(strstr(res.why, "units"), "%s", res.why);
	o.units = 1;
	o.hosts = SC_SETTLE_MAX_HOSTS + 1;
	cr_assert_eq(sc_settle_run(w, p, &o, &res), SC_EINVAL);
	o.hosts = 0;
	o.mode = (enum sc_settle_mode)7;
	cr_assert_eq(sc_settle_run(w, p, &o, &res), SC_EINVAL);
	cr_assert_eq(sc_settle_run(NULL, p, &o, &res), SC_EINVAL);
	cr_assert_eq(sc_settle_run(w, p, &o, NULL), SC_EINVAL);
	cr_assert_eq(sc_settle_work_create(NULL, NULL, 0, 0, &w), SC_EINVAL);
	sc_settle_result_fini(&res);
	sc_settle_work_destroy(w);
	sc_placement_destroy(p);
	cr_assert_eq(sc_grid_destroy(gr), 0);
}

/*
 * test_settle_ticks.c - the settle API in tick mode (units/settle.h, "Tick
 * mode"): a work whose steps hold tick boundaries runs with opts.ticks,
 * and every output's delta at every tick must equal the single circuit's,
 * stepped once per tick. Graphs with integrate, differentiate and delay,
 * a running total through a delay, and random circuits (delay, integrate,
 * differentiate, loops through a delay), under every strategy, the
 * seeded scheduler and a real pool, with host ticks of random sizes
 * (empty ticks included); a reference shifted by one tick must be caught
 * at that tick.
 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>

#include "bench/workloads/random.h"
#include "operators/schema.h"
#include "tests/support/circuit_gen.h"
#include "tests/support/prop.h"
#include "tests/support/rt_watchdog.h"
#include "units/settle.h"

static const char *const strategies[] = {
    "single",	"per-node",  "chains",	  "random:2",
    "random:5", "sharded:2", "sharded:3",
};
#define NSTRATEGIES (sizeof(strategies) / sizeof(strategies[0]))

#define MAX_STEPS 128

static void *
guard_begin(void *ctx, struct sc_exec *ex)
{
	(void)ctx;
	return sc_test_guard_begin(ex, "settle_ticks", 20000);
}

static void
guard_end(void *ctx, void *guard)
{
	(void)ctx;
	sc_test_guard_end(guard);
}

/* in -> integrate "I", delay "D", differentiate(I + D) "Y",
 * distinct(in + D) "Z" (test_runtime_ticks.c's first graph). */
static struct sc_graph *
graph_ops(int *in)
{
	enum sc_type ty[2] = {SC_TYPE_I64, SC_TYPE_I64};
	struct sc_schema s;
	struct sc_graph *g = NULL;
	int i, d;

	cr_assert_eq(sc_schema_init(&s, 2, ty, NULL), 0);
	cr_assert_eq(sc_graph_create(&g), 0);
	*in = sc_graph_input(g, "in", &s);
	i = sc_graph_integrate(g, *in);
	d = sc_graph_delay(g, *in);
	cr_assert_geq(sc_graph_output(g, "I", i), 0, "%s", sc_errmsg());
	cr_assert_geq(sc_graph_output(g, "D", d), 0, "%s", sc_errmsg());
	cr_assert_geq(
	    sc_graph_output(g, "Y",
			    sc_graph_differentiate(g, sc_graph_plus(g, i, d))),
	    0, "%s", sc_errmsg());
	cr_assert_geq(
	    sc_graph_output(g, "Z",
			    sc_graph_distinct(g, sc_graph_plus(g, *in, d))),
	    0, "%s", sc_errmsg());
	return g;
}

/* sum = in + delay(sum), a running total through a delay, with "sum",
 * "d" and integrate(d) "I" as outputs. */
static struct sc_graph *
graph_loop(int *in)
{
	enum sc_type ty[2] = {SC_TYPE_I64, SC_TYPE_I64};
	struct sc_schema s;
	struct sc_graph *g = NULL;
	int fb, d, plus;

	cr_assert_eq(sc_schema_init(&s, 2, ty, NULL), 0);
	cr_assert_eq(sc_graph_create(&g), 0);
	*in = sc_graph_input(g, "in", &s);
	fb = sc_graph_feedback(g, &s);
	d = sc_graph_delay(g, fb);
	plus = sc_graph_plus(g, *in, d);
	cr_assert_eq(sc_graph_bind(g, fb, plus), 0, "%s", sc_errmsg());
	cr_assert_geq(sc_graph_output(g, "sum", plus), 0, "%s", sc_errmsg());
	cr_assert_geq(sc_graph_output(g, "d", d), 0, "%s", sc_errmsg());
	cr_assert_geq(sc_graph_output(g, "I", sc_graph_integrate(g, d)), 0,
		      "%s", sc_errmsg());
	return g;
}

static struct sc_batch *
rows1(int64_t key, int64_t w)
{
	uint64_t row[2] = {sc_enc_i64(key), sc_enc_i64(1)};
	struct sc_batch *b = NULL;

	cr_assert_eq(sc_batch_from_records(2, row, &w, 1, &b), 0, "%s",
		     sc_errmsg());
	return b;
}

/* A seeded plan into st[]: 4..15 ticks of 0..3 submissions each (an
 * empty tick now and then), a boundary after each tick. Returns the
 * steps written; *nticks the ticks. */
static size_t
plan(uint64_t seed, int in, struct sc_settle_step *st, size_t *nticks)
{
	struct sc_rng r;
	size_t n = 0;

	sc_rng_seed(&r, seed);
	*nticks = 4 + sc_rng_below(&r, 12);
	for (size_t t = 0; t < *nticks; t++) {
		size_t k = sc_rng_below(&r, 4);

		for (size_t j = 0; j < k; j++)
			st[n++] = (struct sc_settle_step){
			    in, rows1((int64_t)sc_rng_below(&r, 6),
				      sc_rng_below(&r, 3) ? 1 : -1)};
		st[n++] = (struct sc_settle_step){SC_SETTLE_TICK, NULL};
	}
	return n;
}

static void
steps_free(struct sc_settle_step *st, size_t n)
{
	for (size_t i = 0; i < n; i++)
		sc_batch_release(st[i].batch);
}

/* Run w under strategy `name` and o; returns false when the placement
 * was refused (a cycle of units crossing at no delay), else asserts the
 * run settled tick by tick. */
static bool
run_one(const struct sc_settle_work *w, const char *name, uint64_t gseed,
	const struct sc_settle_opts *o, const char *test)
{
	struct sc_placement *p = NULL;
	struct sc_settle_result res;
	int rc;

	cr_assert_eq(
	    sc_placement_parse(sc_settle_work_graph(w), name, gseed, &p), 0,
	    "placement %s: %s", name, sc_errmsg());
	rc = sc_settle_run(w, p, o, &res);
	sc_placement_destroy(p);
	if (rc == SC_EINVAL && strstr(res.why, "cycle of units")) {
		sc_settle_result_fini(&res);
		return false;
	}
	cr_assert_eq(rc, 0, "%s: settle_run: %s", name, res.why);
	SC_PROP_ASSERT(o->seed, "settle_ticks", test, res.ok,
		       "graph seed %llu, placement %s, %s %u: %s\nreplay: %s",
		       (unsigned long long)gseed, name,
		       o->mode == SC_SETTLE_POOL ? "workers" : "held", o->units,
		       res.why, res.replay);
	cr_assert_eq(res.tick, UINT64_MAX);
	cr_assert_gt(res.ticks_compared, 0);
	cr_assert_eq(res.ticks_closed, res.ticks_compared, "%s: %llu %llu",
		     name, (unsigned long long)res.ticks_closed,
		     (unsigned long long)res.ticks_compared);
	sc_settle_result_fini(&res);
	return true;
}

/* Every strategy, sim (1..4 held, several orders) and pool (1..4
 * workers, 1..3 hosts), for works of graph gr. */
static void
every_strategy(struct sc_graph *(*gr)(int *), uint64_t seeds, const char *test)
{
	for (uint64_t s = 1; s <= seeds; s++) {
		struct sc_settle_step st[MAX_STEPS];
		struct sc_settle_work *w = NULL;
		size_t nticks, n;
		int in;
		struct sc_graph *g = gr(&in);

		n = plan(s, in, st, &nticks);
		cr_assert_eq(
		    sc_settle_work_create(g, st, n, SC_SETTLE_TICKS, &w), 0,
		    "%s", sc_errmsg());
		steps_free(st, n);
		for (size_t si = 0; si < NSTRATEGIES; si++) {
			struct sc_settle_opts o = {
			    .mode = SC_SETTLE_SIM,
			    .seed = s * 131 + si,
			    .units = 1 + (uint32_t)((s + si) % 4),
			    .edge_capacity = 1u << (s % 3)};

			if (!run_one(w, strategies[si], s, &o, test)) {
				/* only a random placement makes a cycle of
				 * units out of a graph's chain */
				cr_assert(!strncmp(strategies[si], "random", 6),
					  "%s refused", strategies[si]);
				continue;
			}
			o = (struct sc_settle_opts){
			    .mode = SC_SETTLE_POOL,
			    .seed = s,
			    .units = 1 + (uint32_t)((s + si) % 4),
			    .hosts = 1 + (uint32_t)(si % 3),
			    .edge_capacity = 1u << (si % 3),
			    .guard_begin = guard_begin,
			    .guard_end = guard_end};
			cr_assert(run_one(w, strategies[si], s, &o, test),
				  "%s refused on the pool", strategies[si]);
		}
		sc_settle_work_destroy(w);
		sc_graph_destroy(g);
	}
}

Test(settle_ticks,
     per_tick_ops_give_the_single_circuits_delta_at_every_tick_everywhere)
{
	every_strategy(graph_ops, 6,
		       "per_tick_ops_give_the_single_circuits_delta_at_"
		       "every_tick_everywhere");
}

Test(settle_ticks,
     a_running_total_through_a_delay_settles_at_every_tick_everywhere)
{
	every_strategy(graph_loop, 6,
		       "a_running_total_through_a_delay_settles_at_every_"
		       "tick_everywhere");
}

/* Random circuits with delay, integrate, differentiate and loops. */
Test(settle_ticks, random_circuits_settle_at_every_tick_on_sim_and_pool)
{
	size_t ran = 0;

	for (uint64_t seed = 1; seed <= 12; seed++) {
		struct cg_opts co;
		struct cg_spec *spec;
		struct sc_settle_step st[MAX_STEPS];
		struct sc_settle_work *w = NULL;
		struct sc_rng r;
		size_t n = 0, nticks;

		cg_opts_default(&co);
		spec = cg_generate(seed, &co);
		sc_rng_seed(&r, seed ^ 0x7e57ull);
		nticks = 3 + sc_rng_below(&r, 8);
		for (size_t t = 0; t < nticks; t++) {
			for (size_t i = 0; i < spec->ninputs; i++) {
				struct sc_batch *b =
				    sc_rng_below(&r, 3)
					? cg_gen_delta(spec, spec->inputs[i],
						       &r)
					: NULL;

				if (b) /* NULL: nothing this tick */
					st[n++] = (struct sc_settle_step){
					    spec->inputs[i], b};
			}
			st[n++] = (struct sc_settle_step){SC_SETTLE_TICK, NULL};
		}
		cr_assert_eq(sc_settle_work_create(spec->graph, st, n,
						   SC_SETTLE_TICKS, &w),
			     0, "%s", sc_errmsg());
		steps_free(st, n);
		for (size_t si = 0; si < NSTRATEGIES; si++) {
			struct sc_settle_opts o = {
			    .mode = (seed + si) % 2 ? SC_SETTLE_POOL
						    : SC_SETTLE_SIM,
			    .seed = seed * 7 + si,
			    .units = 1 + (uint32_t)(si % 4),
			    .hosts = 1 + (uint32_t)(seed % 2),
			    .edge_capacity = 1u << (seed % 3),
			    .guard_begin = guard_begin,
			    .guard_end = guard_end};

			ran += run_one(w, strategies[si], seed, &o,
				       "random_circuits_settle_at_every_tick_"
				       "on_sim_and_pool");
		}
		sc_settle_work_destroy(w);
		cg_free(spec);
	}
	cr_assert_gt(ran, 40, "only %zu runs were not refused", ran);
}

/* The planted difference: the reference is fed the same submissions
 * with one boundary more before tick 2's, so from tick 2 on it runs one
 * tick late; the run must fail at tick 2, naming output "I" (the first
 * output, whose delta at tick 2 is the submission) and its row. */
Test(settle_ticks, a_reference_one_tick_late_is_caught_at_that_tick)
{
	int in;
	struct sc_graph *g = graph_ops(&in);
	struct sc_settle_step st[] = {
	    {in, rows1(1, 1)},	    {SC_SETTLE_TICK, NULL},
	    {in, rows1(2, 1)},	    {SC_SETTLE_TICK, NULL},
	    {in, rows1(3, 1)},	    {SC_SETTLE_TICK, NULL},
	    {SC_SETTLE_TICK, NULL}, {in, rows1(4, 1)},
	    {SC_SETTLE_TICK, NULL},
	};
	size_t n = sizeof(st) / sizeof(st[0]);
	struct sc_settle_step late[sizeof(st) / sizeof(st[0]) + 1];
	struct sc_settle_work *w = NULL;
	struct sc_placement *p = NULL;
	struct sc_settle_opts o = {
	    .mode = SC_SETTLE_SIM, .seed = 3, .units = 2};
	struct sc_settle_result res;

	cr_assert_eq(sc_settle_work_create(g, st, n, SC_SETTLE_TICKS, &w), 0,
		     "%s", sc_errmsg());
	cr_assert_eq(sc_placement_parse(g, "per-node", 1, &p), 0);
	/* Unplanted, it settles, with all 5 ticks compared. */
	cr_assert_eq(sc_settle_run(w, p, &o, &res), 0, "%s", res.why);
	cr_assert(res.ok, "%s", res.why);
	cr_assert_eq(res.ticks_compared, 5);
	sc_settle_result_fini(&res);
	memcpy(late, st, 4 * sizeof(st[0]));
	late[4] = (struct sc_settle_step){SC_SETTLE_TICK, NULL};
	memcpy(late + 5, st + 4, (n - 4) * sizeof(st[0]));
	cr_assert_eq(sc_settle_work_reference(w, late, n + 1), 0, "%s",
		     sc_errmsg());
	for (int mode = 0; mode < 2; mode++) {
		o.mode = mode ? SC_SETTLE_POOL : SC_SETTLE_SIM;
		cr_assert_eq(sc_settle_run(w, p, &o, &res), 0, "%s", res.why);
		cr_assert_not(res.ok, "the planted tick was not caught");
		cr_assert_eq(res.tick, 2, "tick %llu: %s",
			     (unsigned long long)res.tick, res.why);
		cr_assert_eq(res.ticks_compared, 2);
		cr_assert_str_eq(res.output_name, "I");
		cr_assert(strstr(res.why, "at tick 2"), "%s", res.why);
		cr_assert(strstr(res.why, "'I'"), "%s", res.why);
		cr_assert_eq(res.ndiff, 1);
		cr_assert_eq(res.diff[0].placed, 1);
		cr_assert_eq(res.diff[0].single, 0);
		cr_assert_eq(sc_dec_i64(res.diff[0].row[0]), 3);
		cr_assert_gt(strlen(res.replay), 0);
		cr_assert(strstr(res.replay, "SC_SETTLE_TICKS"), "%s",
			  res.replay);
		sc_settle_result_fini(&res);
	}
	sc_placement_destroy(p);
	sc_settle_work_destroy(w);
	steps_free(st, n);
	sc_graph_destroy(g);
}

/* Boundaries only in tick works; a trailing tick gets its boundary; no
 * callback fault and no SC_SETTLE_FAULTS in a tick work. */
Test(settle_ticks, tick_works_refuse_what_they_cannot_check)
{
	int in;
	struct sc_graph *g = graph_ops(&in);
	struct sc_settle_step st[] = {
	    {in, rows1(1, 1)}, {SC_SETTLE_TICK, NULL}, {in, rows1(2, 1)}};
	struct sc_settle_step got;
	struct sc_settle_work *w = NULL;
	struct sc_placement *p = NULL;
	struct sc_settle_opts o = {
	    .mode = SC_SETTLE_SIM,
	    .fault = {.kind = SC_SETTLE_FAULT_PANIC, .unit = 0}};
	struct sc_settle_result res;

	cr_assert_eq(sc_settle_work_create(g, st, 3, 0, &w), SC_EINVAL);
	cr_assert(strstr(sc_errmsg(), "tick boundary"), "%s", sc_errmsg());
	cr_assert_null(w);
	cr_assert_eq(sc_settle_work_create(
			 g, st, 3, SC_SETTLE_TICKS | SC_SETTLE_FAULTS, &w),
		     SC_EINVAL);
	cr_assert_eq(sc_settle_work_create(g, st, 3, SC_SETTLE_TICKS, &w), 0,
		     "%s", sc_errmsg());
	/* The trailing tick {2} got its boundary. */
	cr_assert_eq(sc_settle_work_steps(w), 4);
	cr_assert_eq(sc_settle_work_step(w, 3, &got), 0);
	cr_assert_eq(got.input, SC_SETTLE_TICK);
	cr_assert_null(got.batch);
	cr_assert_eq(sc_placement_parse(g, "chains", 1, &p), 0);
	cr_assert_eq(sc_settle_run(w, p, &o, &res), SC_EINVAL);
	cr_assert(strstr(res.why, "tick work"), "%s", res.why);
	sc_settle_result_fini(&res);
	o.fault.kind = SC_SETTLE_FAULT_SLOW;
	cr_assert_eq(sc_settle_run(w, p, &o, &res), 0, "%s", res.why);
	cr_assert(res.ok, "%s", res.why);
	cr_assert_eq(res.ticks_compared, 2);
	sc_settle_result_fini(&res);
	sc_placement_destroy(p);
	sc_settle_work_destroy(w);
	steps_free(st, 3);
	sc_graph_destroy(g);
}

/* The random workload's tick draw: the coalescing mode refuses its
 * per-tick circuits (some seeds draw them), the plain draw of the same
 * seeds never; in tick mode every one settles tick by tick on per-node. */
Test(settle_ticks, the_random_workloads_tick_draw_needs_and_passes_tick_mode)
{
	size_t refused = 0;

	for (uint64_t seed = 1; seed <= 30; seed++) {
		struct sc_randc *plain = NULL, *rc = NULL;
		struct sc_placement *p = NULL;
		struct sc_runtime *rt = NULL;
		struct sc_settle_step st[MAX_STEPS];
		struct sc_settle_work *w = NULL;
		struct sc_settle_opts o = {
		    .mode = SC_SETTLE_SIM, .seed = seed, .units = 2};
		struct sc_rng r;
		size_t n = 0;
		int prc;

		cr_assert_eq(sc_randc_create(seed, &plain), 0, "%s",
			     sc_errmsg());
		cr_assert_eq(sc_randc_create_ticks(seed, &rc), 0, "%s",
			     sc_errmsg());
		cr_assert_eq(
		    sc_placement_parse(sc_randc_graph(plain), "single", 0, &p),
		    0);
		cr_assert_eq(
		    sc_runtime_create(sc_randc_graph(plain), p, NULL, &rt), 0,
		    "seed %llu: %s", (unsigned long long)seed, sc_errmsg());
		cr_assert_eq(sc_runtime_shutdown(rt, NULL), 0);
		sc_runtime_destroy(rt);
		sc_placement_destroy(p);
		rt = NULL;
		cr_assert_eq(
		    sc_placement_parse(sc_randc_graph(rc), "single", 0, &p), 0);
		prc = sc_runtime_create(sc_randc_graph(rc), p, NULL, &rt);
		if (prc) {
			cr_assert(strstr(sc_errmsg(), "tick mode"), "%s",
				  sc_errmsg());
			refused++;
		} else {
			cr_assert_eq(sc_runtime_shutdown(rt, NULL), 0);
			sc_runtime_destroy(rt);
		}
		sc_placement_destroy(p);
		sc_rng_seed(&r, seed);
		for (size_t i = 0; i < 24; i++) {
			if (sc_rng_below(&r, 3) == 0) {
				st[n++] = (struct sc_settle_step){
				    SC_SETTLE_TICK, NULL};
				continue;
			}
			cr_assert_eq(sc_randc_settle_step(rc, i, &st[n]), 0);
			n++;
		}
		cr_assert_eq(sc_settle_work_create(sc_randc_graph(rc), st, n,
						   SC_SETTLE_TICKS, &w),
			     0, "%s", sc_errmsg());
		steps_free(st, n);
		(void)run_one(w, "per-node", seed, &o,
			      "the_random_workloads_tick_draw_needs_and_"
			      "passes_tick_mode");
		sc_settle_work_destroy(w);
		cr_assert_eq(sc_randc_destroy(rc), 0);
		cr_assert_eq(sc_randc_destroy(plain), 0);
	}
	cr_assert_gt(refused, 5, "only %zu tick draws hold a per-tick node",
		     refused);
}

/*
 * test_settle_faults.c - faults injected by the settle check
 * (units/settle.h, sc_settle_opts.fault): each kind happens and is counted;
 * with a dead unit, every output not downstream of it still equals the
 * single circuit's; no frame is lost; an injected stall is reported by the
 * watchdog. Random circuits (bench/workloads/random.h) under every
 * strategy, on the seeded scheduler and on a real pool behind the test
 * watchdog. SC_THREADED.
 *
 * SC_BOTH_EXECUTORS: every test here runs on each executor kind (ctest
 * registers NAME and NAME.queue, cmake/sc_helpers.cmake).
 */
#include <criterion/criterion.h>
#include <string.h>

#include "bench/workloads/random.h"
#include "tests/support/rt_watchdog.h"
#include "units/settle.h"

static const char *const strategies[] = {
    "single", "per-node", "chains", "random:2", "random:5",
};
#define NSTRATEGIES (sizeof(strategies) / sizeof(strategies[0]))

/* Totals over one test's runs: what the test's name claims must have
 * happened, not only have been asked for. */
struct totals {
	uint64_t runs, injected, panicked, stalls_reported, compared, dead;
	uint64_t sent, undeliverable;
};

/* The frame identity of a run that reached idle (units/runtime.h): every
 * frame sent was delivered, counted undeliverable, or waits in a dead
 * unit's ring; no live ring holds one. frames_lost must be that figure. */
static void
assert_frames_accounted(const struct sc_settle_result *res)
{
	const struct sc_runtime_stats *st = &res->stats;

	cr_assert_eq(st->frames_sent,
		     st->frames_delivered + st->frames_undeliverable +
			 st->pending_closed,
		     "%llu sent, %llu delivered, %llu undeliverable, %llu in "
		     "dead rings",
		     (unsigned long long)st->frames_sent,
		     (unsigned long long)st->frames_delivered,
		     (unsigned long long)st->frames_undeliverable,
		     (unsigned long long)st->pending_closed);
	cr_assert_eq(st->pending, st->pending_closed, "a live ring holds %llu",
		     (unsigned long long)(st->pending - st->pending_closed));
	cr_assert_eq(res->frames_lost, 0);
}

static void *
guard_begin(void *ctx, struct sc_exec *ex)
{
	(void)ctx;
	return sc_test_guard_begin(ex, "settle_faults", 20000);
}

static void
guard_end(void *ctx, void *guard)
{
	(void)ctx;
	sc_test_guard_end(guard);
}

/* Run fault `kind` at step `at` of each unit in turn, for every strategy
 * and seed in 1..nseeds, in mode m; every run must pass its checks. */
static void
campaign(enum sc_settle_fault_kind kind, enum sc_settle_mode m, uint64_t nseeds,
	 uint64_t at, struct totals *t)
{
	memset(t, 0, sizeof(*t));
	for (uint64_t seed = 1; seed <= nseeds; seed++) {
		struct sc_randc *rc = NULL;
		struct sc_settle_work *w = NULL;

		cr_assert_eq(sc_randc_create(seed, &rc), 0, "%s", sc_errmsg());
		cr_assert_eq(sc_settle_work_generate(sc_randc_graph(rc),
						     sc_randc_settle_step, rc,
						     12, 0, &w),
			     0, "%s", sc_errmsg());
		for (size_t si = 0; si < NSTRATEGIES; si++) {
			struct sc_placement *p = NULL;
			struct sc_settle_result res;
			struct sc_settle_opts o = {
			    .mode = m,
			    .seed = seed * 31 + si,
			    .units = 1 + (uint32_t)(seed % 3),
			    .hosts = m == SC_SETTLE_POOL ? 2 : 0,
			    .edge_capacity = 2,
			    .outbox_bound = 4,
			    .fault = {.kind = kind, .unit = -1, .at = at}};

			cr_assert_eq(sc_placement_parse(sc_randc_graph(rc),
							strategies[si], seed,
							&p),
				     0, "%s", sc_errmsg());
			if (m == SC_SETTLE_POOL) {
				o.guard_begin = guard_begin;
				o.guard_end = guard_end;
			}
			cr_assert_eq(sc_settle_run(w, p, &o, &res), 0,
				     "seed %llu %s: %s",
				     (unsigned long long)seed, strategies[si],
				     res.why);
			cr_assert(
			    res.ok, "seed %llu %s, fault %s: %s\nreplay: %s",
			    (unsigned long long)seed, strategies[si],
			    sc_settle_fault_name(kind), res.why, res.replay);
			assert_frames_accounted(&res);
			cr_assert(!res.hung);
			t->runs++;
			t->sent += res.stats.frames_sent;
			t->undeliverable += res.stats.frames_undeliverable;
			t->injected += res.injected[kind];
			t->panicked += res.panicked;
			t->stalls_reported += res.stalls_reported;
			t->compared += res.outputs_compared;
			t->dead += res.outputs_dead;
			if ((kind == SC_SETTLE_FAULT_PANIC ||
			     kind == SC_SETTLE_FAULT_SEGV) &&
			    res.injected[kind]) {
				cr_assert(res.panicked);
				cr_assert_geq(res.stats.dead, 1);
				cr_assert_geq(res.stats.panics, 1);
			}
			sc_settle_result_fini(&res);
			sc_placement_destroy(p);
		}
		sc_settle_work_destroy(w);
		cr_assert_eq(sc_randc_destroy(rc), 0);
	}
}

Test(settle_faults, a_panic_at_a_step_kills_its_unit_and_the_rest_settles)
{
	struct totals t;

	campaign(SC_SETTLE_FAULT_PANIC, SC_SETTLE_SIM, 12, 1, &t);
	cr_assert_gt(t.injected, t.runs / 2, "%llu of %llu runs injected",
		     (unsigned long long)t.injected,
		     (unsigned long long)t.runs);
	cr_assert_eq(t.panicked, t.injected);
	/* Outputs were skipped as downstream of the dead unit, and others
	 * were compared in the same runs' company: the property with a
	 * dead unit was checked, not skipped wholesale. */
	cr_assert_gt(t.dead, 0);
	cr_assert_gt(t.compared, 0);
}

Test(settle_faults, frames_lost_is_exactly_zero_with_panics)
{
	struct totals t;

	/* Every run asserts the identity (assert_frames_accounted); with
	 * dead units it holds only because frames to them are counted
	 * undeliverable: without that term the sums would fall short. */
	campaign(SC_SETTLE_FAULT_PANIC, SC_SETTLE_SIM, 8, 2, &t);
	cr_assert_gt(t.panicked, 0);
	cr_assert_gt(t.undeliverable, 0,
		     "no frame was addressed to a dead "
		     "unit: the identity was not tested "
		     "with one");
	cr_assert_gt(t.sent, t.undeliverable);
	campaign(SC_SETTLE_FAULT_PANIC, SC_SETTLE_POOL, 3, 1, &t);
	cr_assert_gt(t.panicked, 0);
	cr_assert_gt(t.undeliverable, 0);
}

Test(settle_faults, a_panic_on_a_real_pool_kills_its_unit_and_the_rest_settles)
{
	struct totals t;

	campaign(SC_SETTLE_FAULT_PANIC, SC_SETTLE_POOL, 6, 2, &t);
	cr_assert_gt(t.injected, 0);
	cr_assert_eq(t.panicked, t.injected);
	cr_assert_gt(t.compared, 0);
}

Test(settle_faults, a_sigsegv_in_a_callback_kills_only_its_unit_on_a_pool)
{
	struct totals t;

	campaign(SC_SETTLE_FAULT_SEGV, SC_SETTLE_POOL, 6, 1, &t);
	cr_assert_gt(t.injected, 0);
	cr_assert_eq(t.panicked, t.injected);
	cr_assert_gt(t.compared, 0);
}

Test(settle_faults, a_sigsegv_in_a_callback_kills_only_its_unit_on_the_sim)
{
	struct totals t;

	campaign(SC_SETTLE_FAULT_SEGV, SC_SETTLE_SIM, 6, 1, &t);
	cr_assert_gt(t.injected, 0);
	cr_assert_eq(t.panicked, t.injected);
}

Test(settle_faults, a_stalled_turn_is_reported_by_the_watchdog)
{
	struct totals t;

	campaign(SC_SETTLE_FAULT_STALL, SC_SETTLE_POOL, 3, 1, &t);
	cr_assert_gt(t.injected, 0);
	cr_assert_geq(t.stalls_reported, t.injected);
	cr_assert_eq(t.panicked, 0); /* a stall is reported, not killed */
}

Test(settle_faults, a_slow_edge_of_one_frame_per_turn_settles)
{
	struct totals t;

	campaign(SC_SETTLE_FAULT_SLOW, SC_SETTLE_SIM, 8, 0, &t);
	cr_assert_eq(t.injected, t.runs);
	campaign(SC_SETTLE_FAULT_SLOW, SC_SETTLE_POOL, 3, 0, &t);
	cr_assert_eq(t.injected, t.runs);
}

Test(settle_faults, a_burst_of_host_submits_settles)
{
	struct totals t;

	campaign(SC_SETTLE_FAULT_BURST, SC_SETTLE_POOL, 6, 0, &t);
	cr_assert_eq(t.injected, t.runs);
	campaign(SC_SETTLE_FAULT_BURST, SC_SETTLE_SIM, 6, 0, &t);
	cr_assert_eq(t.injected, t.runs);
}

/* A fault whose step never comes is not counted as injected. */
Test(settle_faults, a_fault_whose_step_never_comes_is_not_counted)
{
	struct totals t;

	campaign(SC_SETTLE_FAULT_PANIC, SC_SETTLE_SIM, 3, 1000000, &t);
	cr_assert_eq(t.injected, 0);
	cr_assert_eq(t.panicked, 0);
}

/* With a dead unit, an output not downstream of it that differs is still
 * found: the check with a dead unit can fail. */
Test(settle_faults, a_difference_outside_the_dead_units_reach_is_found)
{
	uint64_t found = 0, tried = 0;

	for (uint64_t seed = 1; seed <= 20; seed++) {
		struct sc_randc *rc = NULL;
		struct sc_settle_work *w = NULL;
		struct sc_settle_step st[12];
		struct sc_placement *p = NULL;
		struct sc_settle_result res;
		struct sc_settle_opts o = {
		    .mode = SC_SETTLE_SIM,
		    .seed = seed,
		    .units = 2,
		    .fault = {
			.kind = SC_SETTLE_FAULT_PANIC, .unit = -1, .at = 1}};

		cr_assert_eq(sc_randc_create(seed, &rc), 0);
		cr_assert_eq(sc_settle_work_generate(sc_randc_graph(rc),
						     sc_randc_settle_step, rc,
						     12, 0, &w),
			     0);
		for (size_t i = 0; i < 12; i++)
			cr_assert_eq(sc_settle_work_step(w, i, &st[i]), 0);
		/* The reference misses the last submission. */
		cr_assert_eq(sc_settle_work_reference(w, st, 11), 0);
		cr_assert_eq(sc_placement_parse(sc_randc_graph(rc), "per-node",
						seed, &p),
			     0);
		cr_assert_eq(sc_settle_run(w, p, &o, &res), 0, "%s", res.why);
		if (res.injected[SC_SETTLE_FAULT_PANIC] &&
		    res.outputs_compared > 0) {
			tried++;
			found += !res.ok && res.output >= 0;
		}
		sc_settle_result_fini(&res);
		sc_placement_destroy(p);
		sc_settle_work_destroy(w);
		cr_assert_eq(sc_randc_destroy(rc), 0);
	}
	cr_assert_gt(tried, 0);
	cr_assert_gt(found, 0, "no planted difference found in %llu runs",
		     (unsigned long long)tried);
}

Test(settle_faults, a_bad_fault_is_einval)
{
	struct sc_randc *rc = NULL;
	struct sc_settle_work *w = NULL;
	struct sc_placement *p = NULL;
	struct sc_settle_result res;
	struct sc_settle_opts o = {.fault = {.kind = SC_SETTLE_FAULT_KINDS}};
	enum sc_settle_fault_kind k;

	cr_assert_eq(sc_randc_create(1, &rc), 0);
	cr_assert_eq(sc_settle_work_generate(sc_randc_graph(rc),
					     sc_randc_settle_step, rc, 2, 0,
					     &w),
		     0);
	cr_assert_eq(sc_placement_parse(sc_randc_graph(rc), "single", 1, &p),
		     0);
	cr_assert_eq(sc_settle_run(w, p, &o, &res), SC_EINVAL);
	cr_assert(strstr(res.why, "fault kind"), "%s", res.why);
	o.fault =
	    (struct sc_settle_fault){.kind = SC_SETTLE_FAULT_PANIC, .unit = 1};
	cr_assert_eq(sc_settle_run(w, p, &o, &res), SC_EINVAL);
	cr_assert(strstr(res.why, "fault unit"), "%s", res.why);
	cr_assert_eq(sc_settle_fault_parse("stall", &k), 0);
	cr_assert_eq(k, SC_SETTLE_FAULT_STALL);
	cr_assert_eq(sc_settle_fault_parse("alloc", &k), SC_EINVAL);
	cr_assert_str_eq(sc_settle_fault_name(SC_SETTLE_FAULT_SEGV), "segv");
	sc_settle_result_fini(&res);
	sc_placement_destroy(p);
	sc_settle_work_destroy(w);
	cr_assert_eq(sc_randc_destroy(rc), 0);
}

/* A C caller that installed no allocation hook: "alloc" does not parse,
 * and a run with the ALLOC kind is refused, both naming the missing hook
 * (the CLI's hook is tools/cli_alloc.c; this test links none). */
Test(settle_faults, alloc_without_a_hook_is_einval_naming_the_hook)
{
	struct sc_randc *rc = NULL;
	struct sc_settle_work *w = NULL;
	struct sc_placement *p = NULL;
	struct sc_settle_result res;
	struct sc_settle_opts o = {.fault = {.kind = SC_SETTLE_FAULT_ALLOC}};
	enum sc_settle_fault_kind k = SC_SETTLE_FAULT_NONE;

	sc_settle_alloc_hook_set(NULL);
	cr_assert_eq(sc_settle_fault_parse("alloc", &k), SC_EINVAL);
	cr_assert_eq(k, SC_SETTLE_FAULT_NONE);
	cr_assert(strstr(sc_errmsg(), "allocation hook"), "%s", sc_errmsg());
	cr_assert_str_eq(sc_settle_fault_name(SC_SETTLE_FAULT_ALLOC), "alloc");
	cr_assert_eq(sc_randc_create(1, &rc), 0);
	cr_assert_eq(sc_settle_work_generate(sc_randc_graph(rc),
					     sc_randc_settle_step, rc, 2, 0,
					     &w),
		     0);
	cr_assert_eq(sc_placement_parse(sc_randc_graph(rc), "single", 1, &p),
		     0);
	cr_assert_eq(sc_settle_run(w, p, &o, &res), SC_EINVAL);
	cr_assert_eq(res.error, SC_EINVAL);
	cr_assert(strstr(res.why, "allocation hook"), "%s", res.why);
	sc_settle_result_fini(&res);
	sc_placement_destroy(p);
	sc_settle_work_destroy(w);
	cr_assert_eq(sc_randc_destroy(rc), 0);
}

/*
 * test_settle_restart.c - dead units that come back (units/runtime.h,
 * "Restarts"), under the settle check (units/settle.h): with a restart
 * policy, a unit killed by an injected panic or SIGSEGV is rebuilt from
 * its inputs' integrals and corrects what it had sent, so every output,
 * downstream of it too, equals the single circuit's; frames stay exactly
 * accounted for. Random circuits (bench/workloads/random.h) under every
 * strategy, on the seeded scheduler and on a real pool behind the test
 * watchdog. SC_THREADED.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "bench/workloads/random.h"
#include "tests/support/rt_watchdog.h"
#include "units/settle.h"

static const char *const strategies[] = {
    "single", "per-node", "chains", "random:2", "random:5", "sharded:2",
};
#define NSTRATEGIES (sizeof(strategies) / sizeof(strategies[0]))

/* Totals over one test's runs: what the test's name claims must have
 * happened, not only have been asked for. */
struct totals {
	uint64_t runs, injected, panicked, restarts, compared, dead;
	uint64_t undeliverable;
};

/* The frame identity of a run that reached idle (units/runtime.h). A
 * rebuild discards what waited for the dead unit, counted drained or
 * refused: without that the identity would fall short. */
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
	return sc_test_guard_begin(ex, "settle_restart", 20000);
}

static void
guard_end(void *ctx, void *guard)
{
	(void)ctx;
	sc_test_guard_end(guard);
}

static const struct sc_restart_policy restart_3 = {
    .kind = SC_RESTART_BOUNDED, .max_restarts = 3, .period_ns = 0};

/* One run of fault `kind` at step `at` on a unit drawn from the seed,
 * with restarts; every check must pass and no output may be skipped. */
static void
one_run(struct sc_settle_work *w, struct sc_randc *rc, uint64_t seed, size_t si,
	enum sc_settle_fault_kind kind, enum sc_settle_mode m, uint64_t at,
	struct totals *t)
{
	struct sc_placement *p = NULL;
	struct sc_settle_result res;
	struct sc_settle_opts o = {
	    .mode = m,
	    .seed = seed * 31 + si,
	    .units = 1 + (uint32_t)(seed % 3),
	    .hosts = m == SC_SETTLE_POOL ? 2 : 0,
	    .edge_capacity = 2,
	    .outbox_bound = 4,
	    .fault = {.kind = kind, .unit = -1, .at = at},
	    .restart = restart_3};

	cr_assert_eq(
	    sc_placement_parse(sc_randc_graph(rc), strategies[si], seed, &p), 0,
	    "%s", sc_errmsg());
	if (m == SC_SETTLE_POOL) {
		o.guard_begin = guard_begin;
		o.guard_end = guard_end;
	}
	cr_assert_eq(sc_settle_run(w, p, &o, &res), 0, "seed %llu %s: %s",
		     (unsigned long long)seed, strategies[si], res.why);
	cr_assert(res.ok, "seed %llu %s, fault %s: %s\nreplay: %s",
		  (unsigned long long)seed, strategies[si],
		  sc_settle_fault_name(kind), res.why, res.replay);
	assert_frames_accounted(&res);
	cr_assert(!res.hung);
	/* Restarts leave no exception: every output was compared. */
	cr_assert_eq(res.outputs_dead, 0, "seed %llu %s",
		     (unsigned long long)seed, strategies[si]);
	cr_assert_eq(res.stats.dead, 0, "seed %llu %s: %u units still dead",
		     (unsigned long long)seed, strategies[si], res.stats.dead);
	if (res.panicked) {
		/* The panic stays recorded, and the unit came back. */
		cr_assert_geq(res.stats.panics, 1);
		cr_assert_geq(res.stats.restarts, 1);
	}
	t->runs++;
	t->injected += res.injected[kind];
	t->panicked += res.panicked;
	t->restarts += res.stats.restarts;
	t->compared += res.outputs_compared;
	t->dead += res.outputs_dead;
	t->undeliverable += res.stats.frames_undeliverable;
	sc_settle_result_fini(&res);
	sc_placement_destroy(p);
}

/* Fault `kind` at step `at` for every strategy and seed in 1..nseeds. */
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
		for (size_t si = 0; si < NSTRATEGIES; si++)
			one_run(w, rc, seed, si, kind, m,
				at + seed % 3 /* a few steps */, t);
		sc_settle_work_destroy(w);
		cr_assert_eq(sc_randc_destroy(rc), 0);
	}
}

/* What every campaign below must have seen: units killed, each brought
 * back, and every output compared. */
static void
assert_came_back(const struct totals *t)
{
	cr_assert_gt(t->injected, t->runs / 3, "%llu of %llu runs injected",
		     (unsigned long long)t->injected,
		     (unsigned long long)t->runs);
	cr_assert_eq(t->panicked, t->injected);
	cr_assert_geq(t->restarts, t->panicked);
	cr_assert_eq(t->dead, 0);
	cr_assert_gt(t->compared, 0);
}

Test(settle_restart, a_panicked_unit_comes_back_and_every_output_settles)
{
	struct totals t;

	campaign(SC_SETTLE_FAULT_PANIC, SC_SETTLE_SIM, 12, 1, &t);
	assert_came_back(&t);
	/* Frames did wait for the dead units and were discarded, counted:
	 * the rebuild's accounting was exercised. */
	cr_assert_gt(t.undeliverable, 0);
}

Test(settle_restart, a_panicked_unit_comes_back_on_a_real_pool)
{
	struct totals t;

	campaign(SC_SETTLE_FAULT_PANIC, SC_SETTLE_POOL, 5, 1, &t);
	assert_came_back(&t);
}

Test(settle_restart, a_unit_killed_by_sigsegv_comes_back_on_the_sim)
{
	struct totals t;

	campaign(SC_SETTLE_FAULT_SEGV, SC_SETTLE_SIM, 6, 1, &t);
	assert_came_back(&t);
}

Test(settle_restart, a_unit_killed_by_sigsegv_comes_back_on_a_pool)
{
	struct totals t;

	campaign(SC_SETTLE_FAULT_SEGV, SC_SETTLE_POOL, 4, 2, &t);
	assert_came_back(&t);
}

/* The other kinds kill nothing: restarts on change nothing there. */
Test(settle_restart, restarts_on_change_nothing_without_a_death)
{
	struct totals t;

	campaign(SC_SETTLE_FAULT_SLOW, SC_SETTLE_SIM, 4, 0, &t);
	cr_assert_eq(t.panicked, 0);
	cr_assert_eq(t.restarts, 0);
	campaign(SC_SETTLE_FAULT_BURST, SC_SETTLE_POOL, 2, 0, &t);
	cr_assert_eq(t.restarts, 0);
}

/* The check with restarts can fail: a reference that misses the last
 * submission is found different, downstream of the rebuilt unit too. */
Test(settle_restart, a_difference_after_a_restart_is_found)
{
	uint64_t found = 0, tried = 0;

	for (uint64_t seed = 1; seed <= 12; seed++) {
		struct sc_randc *rc = NULL;
		struct sc_settle_work *w = NULL;
		struct sc_settle_step st[12];
		struct sc_placement *p = NULL;
		struct sc_settle_result res;
		struct sc_settle_opts o = {
		    .mode = SC_SETTLE_SIM,
		    .seed = seed,
		    .units = 2,
		    .fault = {.kind = SC_SETTLE_FAULT_PANIC,
			      .unit = -1,
			      .at = 1},
		    .restart = restart_3};

		cr_assert_eq(sc_randc_create(seed, &rc), 0);
		cr_assert_eq(sc_settle_work_generate(sc_randc_graph(rc),
						     sc_randc_settle_step, rc,
						     12, 0, &w),
			     0);
		for (size_t i = 0; i < 12; i++)
			cr_assert_eq(sc_settle_work_step(w, i, &st[i]), 0);
		cr_assert_eq(sc_settle_work_reference(w, st, 11), 0);
		cr_assert_eq(sc_placement_parse(sc_randc_graph(rc), "per-node",
						seed, &p),
			     0);
		cr_assert_eq(sc_settle_run(w, p, &o, &res), 0, "%s", res.why);
		if (res.injected[SC_SETTLE_FAULT_PANIC] &&
		    res.stats.restarts > 0) {
			tried++;
			found += !res.ok && res.output >= 0;
		}
		sc_settle_result_fini(&res);
		sc_placement_destroy(p);
		sc_settle_work_destroy(w);
		cr_assert_eq(sc_randc_destroy(rc), 0);
	}
	/* Not every seed's last submission reaches an output. */
	cr_assert_gt(tried, 0);
	cr_assert_gt(found, 0, "no planted difference found in %llu runs",
		     (unsigned long long)tried);
}

/* A sharded unit's replicas restart on their own: the fault strikes one
 * replica (its step), that one alone dies and is rebuilt from its shard,
 * and the outputs still equal the single circuit's. */
Test(settle_restart, a_dead_replica_of_a_sharded_unit_comes_back_alone)
{
	uint64_t struck = 0;

	for (uint64_t seed = 1; seed <= 40; seed++) {
		struct sc_randc *rc = NULL;
		struct sc_settle_work *w = NULL;
		struct sc_placement *p = NULL;

		cr_assert_eq(sc_randc_create(seed, &rc), 0);
		cr_assert_eq(sc_settle_work_generate(sc_randc_graph(rc),
						     sc_randc_settle_step, rc,
						     12, 0, &w),
			     0);
		if (sc_placement_parse(sc_randc_graph(rc), "sharded:2", seed,
				       &p) == 0) {
			for (uint32_t u = 0; u < sc_placement_units(p); u++) {
				struct sc_settle_result res;
				struct sc_settle_opts o = {
				    .mode = SC_SETTLE_SIM,
				    .seed = seed + u,
				    .units = 2,
				    .fault = {.kind = SC_SETTLE_FAULT_PANIC,
					      .unit = (int32_t)u,
					      .at = 1},
				    .restart = restart_3};

				if (sc_placement_shards(p, u) < 2)
					continue;
				cr_assert_eq(sc_settle_run(w, p, &o, &res), 0);
				cr_assert(res.ok, "seed %llu unit %u: %s",
					  (unsigned long long)seed, u, res.why);
				if (res.injected[SC_SETTLE_FAULT_PANIC]) {
					/* One replica died, one came back. */
					struck++;
					cr_assert_eq(res.stats.panics, 1);
					cr_assert_eq(res.stats.restarts, 1);
					cr_assert_eq(res.stats.dead, 0);
					cr_assert_eq(res.outputs_dead, 0);
					assert_frames_accounted(&res);
				}
				sc_settle_result_fini(&res);
			}
			sc_placement_destroy(p);
		}
		sc_settle_work_destroy(w);
		cr_assert_eq(sc_randc_destroy(rc), 0);
	}
	cr_assert_gt(struck, 0, "no sharded unit was struck");
}

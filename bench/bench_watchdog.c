/*
 * bench_watchdog.c - what being watched costs a busy pool.
 *
 * The watchdog takes the executor's lock once per period for its snapshot
 * and calls every unit's has_pending under it, so the cost grows with the
 * number of units and falls with the period. Measured here:
 *
 * 1. Throughput of a busy pool of 2 workers: 32 pairs of units (64 units)
 *    that kick each other, every turn a kick, a claim, a turn and a finish.
 *    Mturns/s with a watchdog at a 10 ms period (the default) and at 1 ms
 *    (aggressive); baseline, same run: the same pool with no watchdog.
 * 2. One check's snapshot of 1024 units (sc_exec_snapshot, has_pending on
 *    each), us per snapshot on this thread; baseline: sc_exec_info (the
 *    lock round trip alone).
 *
 * Each figure is the median of >= 5 repetitions (3 with --quick). The
 * machine may be shared: figure 1 is wall time, so compare the ratio, which
 * is measured in the same run, interleaved.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "bench/harness.h"
#include "runtime/executor.h"
#include "runtime/pool.h"
#include "runtime/watchdog.h"

#define MS	 ((uint64_t)1000000)
#define REPS_MAX 8 /* most repetitions of a figure */

static int reps;

/* A unit of a ping-pong pair: each turn names its partner until the pair
 * has used up its turns. */
struct pp_unit {
	struct sc_unit unit;
	uint32_t partner;      /* id of the other unit */
	_Atomic uint64_t left; /* turns still to do */
};

static struct sc_turn
pp_turn(struct sc_unit *self, uint32_t budget)
{
	struct pp_unit *u = (struct pp_unit *)self;
	uint64_t left = atomic_load_explicit(&u->left, memory_order_relaxed);

	(void)budget;
	if (!left)
		return (struct sc_turn){0, false};
	atomic_store_explicit(&u->left, left - 1, memory_order_relaxed);
	return (struct sc_turn){1, false};
}

static size_t
pp_neighbours(struct sc_unit *self, uint32_t *out, size_t max)
{
	if (max)
		out[0] = ((struct pp_unit *)self)->partner;
	return 1;
}

static bool
pp_has_pending(const struct sc_unit *self)
{
	/* An atomic read, as a real edge's count is; never true while idle
	 * here, so the watchdog never reports. */
	(void)self;
	return false;
}

static const char *
pp_name(const struct sc_unit *self)
{
	(void)self;
	return "pp";
}

static void
pp_destroy(struct sc_unit *self)
{
	free(self);
}

static const struct sc_unit_ops pp_ops = {
    .turn = pp_turn,
    .neighbours = pp_neighbours,
    .has_pending = pp_has_pending,
    .name = pp_name,
    .destroy = pp_destroy,
};

/* Add `pairs` ping-pong pairs of `turns` turns each unit. */
static int
add_pairs(struct sc_exec *ex, uint32_t pairs, uint64_t turns)
{
	for (uint32_t i = 0; i < pairs; i++) {
		struct pp_unit *a = calloc(1, sizeof(*a));
		struct pp_unit *b = calloc(1, sizeof(*b));
		uint32_t ia, ib;

		if (!a || !b) {
			free(a);
			free(b);
			return -1;
		}
		a->unit.ops = b->unit.ops = &pp_ops;
		atomic_store(&a->left, turns);
		atomic_store(&b->left, turns);
		if (sc_exec_add(ex, &a->unit, &ia) ||
		    sc_exec_add(ex, &b->unit, &ib))
			return -1;
		a->partner = ib;
		b->partner = ia;
	}
	return 0;
}

/* One run: Mturns/s of 32 pairs on 2 workers, watched at `period_ns` (0:
 * not watched). */
static double
run_pool(uint64_t period_ns, uint64_t turns)
{
	const uint32_t pairs = 32;
	struct sc_pool_opts po = {.workers = 2, .budget = 1};
	struct sc_watchdog_opts wo = {.period_ns = period_ns};
	struct sc_watchdog *wd = NULL;
	struct sc_exec_opts eo = {.capacity = 2 * pairs};
	struct sc_exec *ex = NULL;
	struct sc_pool *pool = NULL;
	struct sc_exec_info info;
	uint64_t t0, t1;

	if (sc_exec_create(&eo, &ex) || add_pairs(ex, pairs, turns))
		abort();
	if (period_ns && sc_watchdog_create(ex, &wo, &wd))
		abort();
	if (sc_pool_create(ex, &po, &pool))
		abort();
	t0 = sc_bench_now_ns();
	for (uint32_t i = 0; i < 2 * pairs; i += 2)
		(void)sc_exec_kick(ex, i);
	if (sc_exec_wait_idle(ex, 0, NULL))
		abort();
	t1 = sc_bench_now_ns();
	sc_exec_info(ex, &info);
	(void)sc_pool_finish(pool, NULL);
	(void)sc_watchdog_destroy(wd);
	(void)sc_exec_destroy(ex);
	return (double)info.turns_finished / ((double)(t1 - t0) / 1e3);
}

static void
bench_pool(uint64_t turns)
{
	double base[REPS_MAX], fast[REPS_MAX], dflt[REPS_MAX];

	/* Interleaved, so that a change in the machine's load hits all three
	 * alike. */
	for (int r = 0; r < reps; r++) {
		base[r] = run_pool(0, turns);
		dflt[r] = run_pool(10 * MS, turns);
		fast[r] = run_pool(1 * MS, turns);
	}
	sc_bench_emit("watchdog", "pool 2 workers x 64 units, period 10 ms",
		      "Mturns/s", sc_bench_median(dflt, (size_t)reps),
		      "no watchdog", sc_bench_median(base, (size_t)reps));
	sc_bench_emit("watchdog", "pool 2 workers x 64 units, period 1 ms",
		      "Mturns/s", sc_bench_median(fast, (size_t)reps),
		      "no watchdog", sc_bench_median(base, (size_t)reps));
}

static void
bench_snapshot(void)
{
	enum { UNITS = 1024, ROUNDS = 2000 };
	static struct sc_exec_unit_info snap[UNITS];
	double s[REPS_MAX], b[REPS_MAX];
	struct sc_exec_opts eo = {.capacity = UNITS};
	struct sc_exec *ex = NULL;
	struct sc_exec_info info;
	uint64_t t0;

	if (sc_exec_create(&eo, &ex) || add_pairs(ex, UNITS / 2, 1))
		abort();
	for (int r = 0; r < reps; r++) {
		t0 = sc_bench_now_ns();
		for (int i = 0; i < ROUNDS; i++) {
			(void)sc_exec_snapshot(ex, snap, UNITS);
			sc_bench_keep(snap);
		}
		s[r] = (double)(sc_bench_now_ns() - t0) / ROUNDS / 1e3;
		t0 = sc_bench_now_ns();
		for (int i = 0; i < ROUNDS; i++) {
			sc_exec_info(ex, &info);
			sc_bench_keep(&info);
		}
		b[r] = (double)(sc_bench_now_ns() - t0) / ROUNDS / 1e3;
	}
	sc_bench_emit("watchdog", "snapshot of 1024 units", "us",
		      sc_bench_median(s, (size_t)reps), "sc_exec_info",
		      sc_bench_median(b, (size_t)reps));
	(void)sc_exec_destroy(ex);
}

int
main(int argc, char **argv)
{
	bool quick = sc_bench_init(argc, argv);

	reps = quick ? 3 : 5;
	bench_pool(quick ? 2000 : 20000);
	bench_snapshot();
	return 0;
}

/*
 * test_watchdog_frontier.c - the watchdog's FRONTIER check
 * (runtime/watchdog.h, "Frontiers") against a stand-in waits hook, with
 * toy units and no Z-sets: a wait for one tick that lasts is reported,
 * naming the tick and the edge; a wait that moves on to later ticks is
 * not; a running unit is never asked; frontier_ns off asks no one. The
 * runtime's own hook is tests/units/test_runtime_tick_threads.c's.
 * SC_THREADED.
 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "runtime/pool.h"
#include "runtime/watchdog.h"
#include "tests/support/rt_toys.h"

#define MS ((uint64_t)1000000)

static void
sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	nanosleep(&ts, NULL);
}

/* The stand-in hook: unit `unit` waits for tick `tick` (or, when moving,
 * for a later tick at every call) on "u0.0 -> u1.0". */
struct fake {
	uint32_t unit;
	bool moving;
	_Atomic uint64_t tick;
	_Atomic uint64_t calls;	      /* for `unit` */
	_Atomic uint64_t other_calls; /* for any other unit */
};

static bool
fake_waits(void *arg, uint32_t unit, struct sc_watchdog_wait *out)
{
	struct fake *f = arg;

	if (unit != f->unit) {
		atomic_fetch_add(&f->other_calls, 1);
		return false;
	}
	atomic_fetch_add(&f->calls, 1);
	out->tick =
	    f->moving ? atomic_fetch_add(&f->tick, 1) : atomic_load(&f->tick);
	out->frontier = out->tick;
	(void)snprintf(out->edge, sizeof(out->edge), "u0.0 -> u1.0");
	return true;
}

static pthread_mutex_t seen_mu = PTHREAD_MUTEX_INITIALIZER;
static struct sc_watchdog_report seen;
static struct sc_watchdog_wait seen_wait;
static char seen_msg[512];

static void
catch_report(const struct sc_watchdog_report *r, void *arg)
{
	(void)arg;
	pthread_mutex_lock(&seen_mu);
	seen = *r;
	if (r->wait)
		seen_wait = *r->wait;
	(void)snprintf(seen_msg, sizeof(seen_msg), "%s", r->message);
	seen.message = seen_msg;
	seen.dump = NULL;
	seen.wait = r->wait ? &seen_wait : NULL;
	pthread_mutex_unlock(&seen_mu);
}

/* Every other check off. */
static struct sc_watchdog_opts
frontier_opts(struct fake *f, uint64_t frontier_ns)
{
	return (struct sc_watchdog_opts){
	    .period_ns = 5 * MS,
	    .stall_ns = SC_WATCHDOG_OFF,
	    .starve_ns = SC_WATCHDOG_OFF,
	    .lost_kick_ns = SC_WATCHDOG_OFF,
	    .no_progress_ns = SC_WATCHDOG_OFF,
	    .frontier_ns = frontier_ns,
	    .report = catch_report,
	    .waits = fake_waits,
	    .waits_arg = f,
	};
}

Test(watchdog_frontier, reports_a_wait_for_one_tick_naming_the_edge,
     .timeout = 20)
{
	struct fake f = {.unit = 1};
	struct sc_watchdog_opts o = frontier_opts(&f, 50 * MS);
	struct sc_watchdog *wd = NULL;
	struct sc_exec *ex = NULL;
	uint32_t id0, id1;

	atomic_store(&f.tick, 7);
	cr_assert_eq(sc_exec_create(NULL, &ex), 0);
	cr_assert_not_null(rt_probe_add(ex, &id0));
	cr_assert_not_null(rt_probe_add(ex, &id1));
	cr_assert_eq(id1, 1);
	cr_assert_eq(sc_watchdog_create(ex, &o, &wd), 0);
	cr_assert_eq(sc_watchdog_wait(wd, SC_WATCHDOG_FRONTIER, 1, 5000 * MS),
		     0);
	pthread_mutex_lock(&seen_mu);
	cr_expect_eq(seen.kind, SC_WATCHDOG_FRONTIER);
	cr_expect_eq(seen.unit, id1);
	cr_expect_str_eq(seen.name, "probe1");
	cr_expect_geq(seen.duration_ns, 50 * MS);
	cr_assert_not_null(seen.wait);
	cr_expect_eq(seen_wait.tick, 7);
	cr_expect_eq(seen_wait.frontier, 7);
	cr_expect_str_eq(seen_wait.edge, "u0.0 -> u1.0");
	cr_expect(strstr(seen_msg, "'probe1' waits for tick 7 on edge "
				   "u0.0 -> u1.0"),
		  "message: %s", seen_msg);
	pthread_mutex_unlock(&seen_mu);
	cr_expect_gt(atomic_load(&f.other_calls), 0, "unit 0 was asked too");
	cr_expect_eq(sc_watchdog_destroy(wd), 0);
	cr_expect_eq(sc_exec_destroy(ex), 0);
}

Test(watchdog_frontier, a_wait_that_moves_on_is_not_reported, .timeout = 20)
{
	struct fake f = {.unit = 0, .moving = true};
	struct sc_watchdog_opts o = frontier_opts(&f, 30 * MS);
	struct sc_watchdog *wd = NULL;
	struct sc_exec *ex = NULL;
	uint32_t id;

	cr_assert_eq(sc_exec_create(NULL, &ex), 0);
	cr_assert_not_null(rt_probe_add(ex, &id));
	cr_assert_eq(sc_watchdog_create(ex, &o, &wd), 0);
	sleep_ms(300);
	cr_expect_eq(sc_watchdog_count(wd, SC_WATCHDOG_FRONTIER), 0);
	cr_expect_eq(sc_watchdog_destroy(wd), 0);
	cr_expect_geq(atomic_load(&f.calls), 10, "asked %llu times",
		      (unsigned long long)atomic_load(&f.calls));
	pthread_mutex_lock(&seen_mu);
	cr_expect_eq(seen.kind, 0, "a report: %s", seen_msg);
	cr_expect_null(seen.message, "a report: %s", seen_msg);
	pthread_mutex_unlock(&seen_mu);
	cr_expect_eq(sc_exec_destroy(ex), 0);
}

static atomic_bool released;

static void
block_until_released(struct rt_probe *p, void *ctx)
{
	(void)p;
	(void)ctx;
	while (!atomic_load(&released))
		sleep_ms(1);
}

/* A running turn is the STALL check's: the hook is not asked for it. */
Test(watchdog_frontier, a_running_unit_is_not_asked, .timeout = 20)
{
	struct fake f = {.unit = 0};
	struct sc_watchdog_opts o = frontier_opts(&f, 20 * MS);
	struct sc_pool_opts po = {.workers = 1};
	struct sc_watchdog *wd = NULL;
	struct sc_exec *ex = NULL;
	struct sc_pool *pool = NULL;
	struct rt_probe *p;
	uint32_t id;

	cr_assert_eq(sc_exec_create(NULL, &ex), 0);
	p = rt_probe_add(ex, &id);
	cr_assert_not_null(p);
	p->on_turn = block_until_released;
	cr_assert_eq(sc_pool_create(ex, &po, &pool), 0);
	cr_assert_eq(sc_exec_kick(ex, id), 0);
	while (atomic_load(&p->turns) == 0 && !atomic_load(&released)) {
		struct sc_exec_unit_info u;

		if (sc_exec_snapshot(ex, &u, 1) == 1 &&
		    u.state == SC_UNIT_RUNNING)
			break;
		sleep_ms(1);
	}
	cr_assert_eq(sc_watchdog_create(ex, &o, &wd), 0);
	sleep_ms(200);
	cr_expect_eq(sc_watchdog_count(wd, SC_WATCHDOG_FRONTIER), 0, "%s",
		     seen_msg);
	cr_expect_eq(atomic_load(&f.calls), 0, "asked while running");
	cr_expect_geq(sc_watchdog_checks(wd), 10);
	atomic_store(&released, true);
	cr_expect_eq(sc_pool_finish(pool, NULL), 0);
	/* Idle now: it is asked, and its lasting wait reported. */
	cr_expect_eq(sc_watchdog_wait(wd, SC_WATCHDOG_FRONTIER, 1, 5000 * MS),
		     0);
	cr_expect_gt(atomic_load(&f.calls), 0);
	cr_expect_eq(sc_watchdog_destroy(wd), 0);
	cr_expect_eq(sc_exec_destroy(ex), 0);
}

Test(watchdog_frontier, off_asks_no_one, .timeout = 20)
{
	struct fake f = {.unit = 0};
	struct sc_watchdog_opts o = frontier_opts(&f, SC_WATCHDOG_OFF);
	struct sc_watchdog *wd = NULL;
	struct sc_exec *ex = NULL;
	uint32_t id;

	cr_assert_eq(sc_exec_create(NULL, &ex), 0);
	cr_assert_not_null(rt_probe_add(ex, &id));
	cr_assert_eq(sc_watchdog_create(ex, &o, &wd), 0);
	sleep_ms(100);
	cr_expect_geq(sc_watchdog_checks(wd), 5);
	cr_expect_eq(sc_watchdog_count(wd, SC_WATCHDOG_FRONTIER), 0);
	cr_expect_eq(sc_watchdog_destroy(wd), 0);
	cr_expect_eq(atomic_load(&f.calls) + atomic_load(&f.other_calls), 0);
	cr_expect_eq(sc_exec_destroy(ex), 0);
}

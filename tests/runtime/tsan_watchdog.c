/*
 * tsan_watchdog.c - the watchdog's threaded scenarios as a plain program,
 * for the ThreadSanitizer pass (Criterion cannot run under TSan). Exit
 * status 0 is a pass.
 *
 *  1. A monitor snapshotting every millisecond (so its has_pending calls
 *     race with the turns) beside a pool of 2 workers on a toy chain, the
 *     whole body behind the test guard: every token arrives, nothing is
 *     reported.
 *  2. A stalled turn: the report is delivered on the monitor thread, read
 *     on this one, rate-limited; then the turn is released and all stops.
 *  3. The kill policy with the executor's own hook (sc_exec_condemn): the
 *     monitor condemns the stalled turn, the released turn returns and is
 *     abandoned with the watchdog's words, the unit is DEAD.
 *  4. sc_exec_condemn racing the turns it names: this thread condemns the
 *     turn a snapshot shows running while two workers run the unit's short
 *     turns back to back, so the condemn's compare-exchange and its words
 *     meet the turn's exchange and the abandon's read of them; exactly the
 *     accepted turn dies, with those words.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "operators/error.h"
#include "runtime/panic.h"
#include "runtime/pool.h"
#include "runtime/watchdog.h"
#include "tests/support/rt_toys.h"
#include "tests/support/rt_watchdog.h"

#define MS ((uint64_t)1000000)

static int failures;

#define CHECK(cond, ...)                                                       \
	do {                                                                   \
		if (!(cond)) {                                                 \
			(void)fprintf(stderr,                                  \
				      "tsan_watchdog: %s:%d: %s: ", __FILE__,  \
				      __LINE__, #cond);                        \
			(void)fprintf(stderr, __VA_ARGS__);                    \
			(void)fprintf(stderr, "\n");                           \
			failures++;                                            \
		}                                                              \
	} while (0)

static void
sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	nanosleep(&ts, NULL);
}

static _Atomic uint64_t reports_seen;
static char last_name[SC_UNIT_NAME_MAX]; /* written by the monitor only */

static void
count_report(const struct sc_watchdog_report *r, void *arg)
{
	(void)arg;
	memcpy(last_name, r->name, sizeof(last_name));
	atomic_fetch_add(&reports_seen, 1);
}

static void
healthy_chain_is_quiet(void)
{
	/* Thresholds out of reach of a slow (TSan) run on a loaded machine:
	 * only a real stall or lost kick would reach them. */
	struct sc_watchdog_opts o = {
	    .period_ns = 1 * MS,
	    .stall_ns = 5000 * MS,
	    .starve_ns = 5000 * MS,
	    .lost_kick_ns = 2000 * MS,
	    .no_progress_ns = 5000 * MS,
	    .report = count_report,
	};
	struct sc_pool_opts po = {.workers = 2, .budget = 2};
	struct sc_watchdog *wd = NULL;
	struct sc_test_guard *g;
	struct sc_exec *ex = NULL;
	struct sc_pool *pool = NULL;
	struct rt_net *net = NULL;
	char why[128];

	atomic_store(&reports_seen, 0); /* a round before counted some */
	CHECK(sc_exec_create(NULL, &ex) == 0, "create");
	CHECK(rt_chain_create(ex, 4, 4, 3000, &net) == 0, "chain");
	if (failures)
		return;
	g = sc_test_guard_begin(ex, "tsan_watchdog/healthy_chain", 60000);
	CHECK(sc_watchdog_create(ex, &o, &wd) == 0, "watchdog");
	CHECK(sc_pool_create(ex, &po, &pool) == 0, "pool");
	CHECK(rt_net_start(net, ex) == 0, "start");
	CHECK(rt_net_feed_all(net, ex) == 0, "feed");
	/* The chain may settle within the monitor's first period: let it
	 * look at least once (5 s at most) before the pool stops. */
	for (int i = 0; i < 5000 && sc_watchdog_checks(wd) == 0; i++)
		(void)nanosleep(&(struct timespec){.tv_nsec = 1000000}, NULL);
	CHECK(sc_pool_finish(pool, NULL) == 0, "finish");
	CHECK(sc_watchdog_checks(wd) > 0, "the monitor never looked");
	CHECK(sc_watchdog_destroy(wd) == 0, "destroy");
	sc_test_guard_end(g);
	CHECK(atomic_load(&reports_seen) == 0, "%llu reports, last on %s",
	      (unsigned long long)atomic_load(&reports_seen), last_name);
	CHECK(rt_net_check(net, why, sizeof(why)), "%s", why);
	CHECK(sc_exec_destroy(ex) == 0, "exec destroy");
	rt_net_destroy(net);
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

static void
stall_is_reported_once_per_window(void)
{
	struct sc_watchdog_opts o = {
	    .period_ns = 2 * MS,
	    .stall_ns = 20 * MS,
	    .starve_ns = SC_WATCHDOG_OFF,
	    .lost_kick_ns = SC_WATCHDOG_OFF,
	    .no_progress_ns = SC_WATCHDOG_OFF,
	    .rate_limit_ns = 10000 * MS,
	    .report = count_report,
	};
	struct sc_pool_opts po = {.workers = 1};
	struct sc_watchdog *wd = NULL;
	struct sc_exec *ex = NULL;
	struct sc_pool *pool = NULL;
	struct rt_probe *p;
	uint32_t id;

	atomic_store(&reports_seen, 0);
	atomic_store(&released, false); /* a round before released it */
	CHECK(sc_exec_create(NULL, &ex) == 0, "create");
	if (failures)
		return;
	p = rt_probe_add(ex, &id);
	CHECK(p != NULL, "probe");
	if (!p)
		return;
	p->on_turn = block_until_released;
	CHECK(sc_pool_create(ex, &po, &pool) == 0, "pool");
	CHECK(sc_exec_kick(ex, id) == 0, "kick");
	CHECK(sc_watchdog_create(ex, &o, &wd) == 0, "watchdog");
	CHECK(sc_watchdog_wait(wd, SC_WATCHDOG_STALL, 1, 20000 * MS) == 0,
	      "no stall report");
	while (sc_watchdog_suppressed(wd, SC_WATCHDOG_STALL) < 5)
		sleep_ms(2);
	CHECK(sc_watchdog_count(wd, SC_WATCHDOG_STALL) == 1, "%llu reports",
	      (unsigned long long)sc_watchdog_count(wd, SC_WATCHDOG_STALL));
	CHECK(atomic_load(&reports_seen) == 1, "callback calls");
	atomic_store(&released, true);
	CHECK(sc_watchdog_destroy(wd) == 0, "destroy");
	CHECK(sc_pool_finish(pool, NULL) == 0, "finish");
	CHECK(sc_exec_destroy(ex) == 0, "exec destroy");
}

static void
kill_policy_kills_the_stalled_unit(void)
{
	struct sc_watchdog_opts o = {
	    .period_ns = 2 * MS,
	    .stall_ns = 20 * MS,
	    .starve_ns = SC_WATCHDOG_OFF,
	    .lost_kick_ns = SC_WATCHDOG_OFF,
	    .no_progress_ns = SC_WATCHDOG_OFF,
	    .policy = SC_WATCHDOG_KILL_STALLED,
	    .report = count_report,
	};
	struct sc_pool_opts po = {.workers = 2};
	struct sc_watchdog *wd = NULL;
	struct sc_exec *ex = NULL;
	struct sc_pool *pool = NULL;
	struct sc_panic_record rec;
	struct rt_probe *p;
	uint32_t id;

	atomic_store(&released, false);
	CHECK(sc_exec_create(NULL, &ex) == 0, "create");
	if (failures)
		return;
	p = rt_probe_add(ex, &id);
	CHECK(p != NULL, "probe");
	if (!p)
		return;
	p->on_turn = block_until_released;
	CHECK(sc_pool_create(ex, &po, &pool) == 0, "pool");
	CHECK(sc_exec_kick(ex, id) == 0, "kick");
	CHECK(sc_watchdog_create(ex, &o, &wd) == 0, "watchdog");
	CHECK(sc_watchdog_wait(wd, SC_WATCHDOG_STALL, 1, 20000 * MS) == 0,
	      "no stall report");
	CHECK(sc_watchdog_condemned(wd) == 1, "condemned %llu",
	      (unsigned long long)sc_watchdog_condemned(wd));
	atomic_store(&released, true);
	CHECK(sc_watchdog_destroy(wd) == 0, "destroy");
	CHECK(sc_pool_finish(pool, &rec) == SC_EPANIC, "no panic");
	CHECK(strstr(rec.message, "deadline") != NULL, "message: %s",
	      rec.message);
	CHECK(sc_exec_unit_state(ex, id) == SC_UNIT_DEAD, "not dead");
	CHECK(sc_exec_destroy(ex) == 0, "exec destroy");
}

/* Condemn whatever turn a snapshot shows running; true once one is
 * accepted (then *turn is the turn named). */
static bool
condemn_a_running_turn(struct sc_exec *ex, uint64_t *turn, uint64_t *refused)
{
	struct sc_exec_unit_info u;
	int rc;

	for (int i = 0; i < 1000000; i++) {
		(void)sc_exec_snapshot(ex, &u, 1);
		if (u.state != SC_UNIT_RUNNING &&
		    u.state != SC_UNIT_RUNNING_KICKED)
			continue;
		rc = sc_exec_condemn(ex, u.id, u.turns, "raced and condemned");
		if (rc == 0) {
			*turn = u.turns;
			return true;
		}
		CHECK(rc == SC_ESTATE, "condemn answered %d", rc);
		(*refused)++;
	}
	return false;
}

static void
spin_a_little(struct rt_probe *p, void *ctx)
{
	for (volatile int i = 0; i < 1000; i++)
		;
}

static void
condemn_races_the_turns_it_names(void)
{
	struct sc_pool_opts po = {.workers = 2};
	struct sc_exec_unit_info u;
	struct sc_panic_record rec;
	struct sc_pool *pool = NULL;
	struct sc_exec *ex = NULL;
	uint64_t turn = 0, refused = 0;
	struct rt_probe *p;
	uint32_t id;

	CHECK(sc_exec_create(NULL, &ex) == 0, "create");
	if (failures)
		return;
	p = rt_probe_add(ex, &id);
	CHECK(p != NULL, "probe");
	if (!p)
		return;
	p->result = (struct sc_turn){0, true}; /* runs again and again */
	/* Turns of a microsecond or so: an empty turn returns within a few
	 * nanoseconds of its claim, and on the STEAL executor (no lock
	 * between a finish and the next claim) a condemn then almost never
	 * finds the turn it saw still running. */
	p->on_turn = spin_a_little;
	CHECK(sc_pool_create(ex, &po, &pool) == 0, "pool");
	CHECK(sc_exec_kick(ex, id) == 0, "kick");
	if (!condemn_a_running_turn(ex, &turn, &refused)) {
		CHECK(false, "no condemn accepted (%llu refused)",
		      (unsigned long long)refused);
		sc_exec_shutdown(ex);
	}
	(void)sc_pool_finish(pool, NULL);
	(void)sc_exec_snapshot(ex, &u, 1);
	CHECK(u.state == SC_UNIT_DEAD, "state %s", sc_unit_state_name(u.state));
	CHECK(u.turns == turn + 1, "died in turn %llu, condemned %llu",
	      (unsigned long long)u.turns, (unsigned long long)turn + 1);
	CHECK(sc_exec_panic(ex, 0, &rec) == 0, "no panic recorded");
	CHECK(strcmp(rec.message, "raced and condemned") == 0, "message: %s",
	      rec.message);
	CHECK(sc_exec_panic(ex, 1, &rec) == SC_ENOENT, "a second panic");
	CHECK(sc_exec_destroy(ex) == 0, "exec destroy");
}

int
main(void)
{
	static const char *const kinds[] = {"steal", "queue"};

	for (int k = 0; k < 2; k++) {
		/* Before any thread of this round starts. */
		setenv("SC_EXECUTOR", kinds[k], 1); /* NOLINT */
		(void)printf("tsan_watchdog: executor %s\n", kinds[k]);
		healthy_chain_is_quiet();
		stall_is_reported_once_per_window();
		kill_policy_kills_the_stalled_unit();
		condemn_races_the_turns_it_names();
	}
	if (failures) {
		(void)fprintf(stderr, "tsan_watchdog: %d failure(s)\n",
			      failures);
		return 1;
	}
	(void)printf("tsan_watchdog: pass\n");
	return 0;
}

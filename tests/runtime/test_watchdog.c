/*
 * test_watchdog.c - the watchdog reports each kind of trouble by unit, with
 * the executor's dump, rate-limited, and stays quiet on a healthy pool; the
 * test guard turns a hang into an abort by name (SC_THREADED).
 *
 * Each scenario is built to show exactly one kind: the other checks are
 * switched off (SC_WATCHDOG_OFF) unless the test is about their silence.
 *
 * SC_BOTH_EXECUTORS: every test here runs on each executor kind (ctest
 * registers NAME and NAME.queue, cmake/sc_helpers.cmake).
 */
#include <criterion/criterion.h>
#include <criterion/redirect.h>
#include <dirent.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "operators/error.h"
#include "runtime/panic.h"
#include "runtime/pool.h"
#include "runtime/watchdog.h"
#include "tests/support/rt_toys.h"
#include "tests/support/rt_watchdog.h"

#define MS ((uint64_t)1000000)

static void
sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	nanosleep(&ts, NULL);
}

/* --- what the callback saw (each Criterion test is its own process) ----- */

static pthread_mutex_t seen_mu = PTHREAD_MUTEX_INITIALIZER;
static struct sc_watchdog_report seen; /* the last report */
static char seen_msg[512];	       /* its message */
static char seen_dump[8192];	       /* its dump */
static uint64_t seen_suppressed_max;   /* largest suppressed count seen */
static int seen_n;		       /* reports seen */

static void
catch_report(const struct sc_watchdog_report *r, void *arg)
{
	(void)arg;
	pthread_mutex_lock(&seen_mu);
	seen = *r;
	(void)snprintf(seen_msg, sizeof(seen_msg), "%s", r->message);
	(void)snprintf(seen_dump, sizeof(seen_dump), "%s", r->dump);
	seen.message = seen_msg;
	seen.dump = seen_dump;
	if (r->suppressed > seen_suppressed_max)
		seen_suppressed_max = r->suppressed;
	seen_n++;
	pthread_mutex_unlock(&seen_mu);
}

/* Every check off; the test turns on the one it is about. */
static struct sc_watchdog_opts
quiet_opts(void)
{
	return (struct sc_watchdog_opts){
	    .period_ns = 5 * MS,
	    .stall_ns = SC_WATCHDOG_OFF,
	    .starve_ns = SC_WATCHDOG_OFF,
	    .lost_kick_ns = SC_WATCHDOG_OFF,
	    .no_progress_ns = SC_WATCHDOG_OFF,
	    .report = catch_report,
	};
}

static uint64_t
total_reports(const struct sc_watchdog *wd)
{
	uint64_t n = 0;

	for (int k = 0; k < SC_WATCHDOG_KINDS; k++)
		n += sc_watchdog_count(wd, (enum sc_watchdog_kind)k);
	return n;
}

/* --- a turn that blocks until the test releases it ----------------------- */

static atomic_bool released;

static void
block_until_released(struct rt_probe *p, void *ctx)
{
	(void)p;
	(void)ctx;
	while (!atomic_load(&released))
		sleep_ms(1);
}

/* A pool of one worker running one probe whose turn blocks. */
struct stalled {
	struct sc_exec *ex;
	struct sc_pool *pool;
	struct rt_probe *probe;
	uint32_t id;
};

static void
stalled_start_with(struct stalled *s,
		   void (*on_turn)(struct rt_probe *p, void *ctx), void *ctx)
{
	struct sc_pool_opts po = {.workers = 1};

	atomic_store(&released, false);
	cr_assert_eq(sc_exec_create(NULL, &s->ex), 0);
	s->probe = rt_probe_add(s->ex, &s->id);
	cr_assert_not_null(s->probe);
	s->probe->on_turn = on_turn; /* before any worker can run it */
	s->probe->ctx = ctx;
	cr_assert_eq(sc_pool_create(s->ex, &po, &s->pool), 0);
	cr_assert_eq(sc_exec_kick(s->ex, s->id), 0);
}

static void
stalled_start(struct stalled *s)
{
	stalled_start_with(s, block_until_released, NULL);
}

static void
stalled_stop(struct stalled *s)
{
	atomic_store(&released, true);
	cr_expect_eq(sc_pool_finish(s->pool, NULL), 0);
	cr_expect_eq(sc_exec_destroy(s->ex), 0);
}

Test(watchdog, reports_a_stalled_turn, .timeout = 20)
{
	struct sc_watchdog_opts o = quiet_opts();
	struct sc_watchdog *wd = NULL;
	struct stalled s;

	stalled_start(&s);
	o.stall_ns = 50 * MS;
	cr_assert_eq(sc_watchdog_create(s.ex, &o, &wd), 0);
	cr_assert_eq(sc_watchdog_wait(wd, SC_WATCHDOG_STALL, 1, 5000 * MS), 0);
	pthread_mutex_lock(&seen_mu);
	cr_expect_eq(seen.kind, SC_WATCHDOG_STALL);
	cr_expect_eq(seen.unit, s.id);
	cr_expect_str_eq(seen.name, "probe0");
	cr_expect_eq(seen.worker, 0, "the pool's only worker holds it");
	cr_expect_geq(seen.duration_ns, 50 * MS);
	cr_expect_eq(seen.turns, 0, "its first turn has not returned");
	cr_expect(strstr(seen_msg, "probe0") && strstr(seen_msg, "worker 0"),
		  "message: %s", seen_msg);
	cr_expect(strstr(seen_dump, "probe0") &&
		      strstr(seen_dump, "RUNNING on worker 0"),
		  "dump: %s", seen_dump);
	pthread_mutex_unlock(&seen_mu);
	cr_expect_eq(sc_watchdog_destroy(wd), 0);
	stalled_stop(&s);
}

Test(watchdog, reports_a_starved_unit, .timeout = 20)
{
	struct sc_watchdog_opts o = quiet_opts();
	struct sc_watchdog *wd = NULL;
	struct sc_exec *ex = NULL;
	uint32_t id;

	/* No worker at all: the kicked unit waits in the queue for ever. */
	cr_assert_eq(sc_exec_create(NULL, &ex), 0);
	cr_assert_not_null(rt_probe_add(ex, &id));
	cr_assert_eq(sc_exec_kick(ex, id), 0);
	o.starve_ns = 50 * MS;
	cr_assert_eq(sc_watchdog_create(ex, &o, &wd), 0);
	cr_assert_eq(sc_watchdog_wait(wd, SC_WATCHDOG_STARVATION, 1, 5000 * MS),
		     0);
	pthread_mutex_lock(&seen_mu);
	cr_expect_eq(seen.kind, SC_WATCHDOG_STARVATION);
	cr_expect_eq(seen.unit, id);
	cr_expect_str_eq(seen.name, "probe0");
	cr_expect_eq(seen.worker, -1);
	cr_expect_geq(seen.duration_ns, 50 * MS);
	cr_expect_eq(seen.kicks, 1);
	cr_expect(strstr(seen_dump, "QUEUED for"), "dump: %s", seen_dump);
	pthread_mutex_unlock(&seen_mu);
	cr_expect_eq(sc_watchdog_count(wd, SC_WATCHDOG_STALL), 0);
	cr_expect_eq(sc_watchdog_destroy(wd), 0);
	cr_expect_eq(sc_exec_destroy(ex), 0);
}

Test(watchdog, reports_a_lost_kick, .timeout = 20)
{
	struct sc_watchdog_opts o = quiet_opts();
	struct sc_watchdog *wd = NULL;
	struct sc_exec *ex = NULL;
	struct rt_probe *quiet, *lost;
	uint32_t quiet_id, lost_id;

	/* The planted bug: input arrives and nobody kicks. */
	cr_assert_eq(sc_exec_create(NULL, &ex), 0);
	quiet = rt_probe_add(ex, &quiet_id);
	lost = rt_probe_add(ex, &lost_id);
	cr_assert(quiet && lost);
	atomic_store(&lost->pending, true);
	o.lost_kick_ns = 30 * MS;
	cr_assert_eq(sc_watchdog_create(ex, &o, &wd), 0);
	cr_assert_eq(sc_watchdog_wait(wd, SC_WATCHDOG_LOST_KICK, 1, 5000 * MS),
		     0);
	pthread_mutex_lock(&seen_mu);
	cr_expect_eq(seen.unit, lost_id);
	cr_expect_str_eq(seen.name, "probe1");
	cr_expect_geq(seen.duration_ns, 30 * MS);
	cr_expect(strstr(seen_msg, "lost kick"), "message: %s", seen_msg);
	cr_expect(strstr(seen_dump, "probe0") && strstr(seen_dump, "probe1"),
		  "the dump names every unit: %s", seen_dump);
	cr_expect(strstr(seen_dump, "PENDING-INPUT"), "dump: %s", seen_dump);
	pthread_mutex_unlock(&seen_mu);
	cr_expect_eq(sc_watchdog_count(wd, SC_WATCHDOG_LOST_KICK), 1);
	cr_expect_eq(sc_watchdog_destroy(wd), 0);
	cr_expect_eq(sc_exec_destroy(ex), 0);
}

Test(watchdog, reports_a_frame_pushed_without_a_kick, .timeout = 20)
{
	struct sc_watchdog_opts o = quiet_opts();
	struct sc_pool_opts po = {.workers = 2};
	struct sc_watchdog *wd = NULL;
	struct sc_exec *ex = NULL;
	struct sc_pool *pool = NULL;
	struct rt_net *net;

	/* The real thing on a live pool: the host's push into the chain's
	 * first edge is not followed by its kick, so chain0 sits IDLE with a
	 * token on its input while two workers wait for work. */
	cr_assert_eq(sc_exec_create(NULL, &ex), 0);
	cr_assert_eq(rt_chain_create(ex, 3, 4, 1, &net), 0);
	cr_assert_eq(sc_pool_create(ex, &po, &pool), 0);
	cr_assert(rt_edge_push(rt_net_edge_in(net, 0), (0u << 16) | 1u));
	o.lost_kick_ns = 30 * MS;
	o.no_progress_ns = 30 * MS; /* and it is idle: no progress is due */
	cr_assert_eq(sc_watchdog_create(ex, &o, &wd), 0);
	cr_assert_eq(sc_watchdog_wait(wd, SC_WATCHDOG_LOST_KICK, 1, 5000 * MS),
		     0);
	pthread_mutex_lock(&seen_mu);
	cr_expect_eq(seen.unit, rt_net_id(net, 0));
	cr_expect_str_eq(seen.name, "chain0");
	cr_expect_eq(seen.kicks, 0);
	pthread_mutex_unlock(&seen_mu);
	cr_expect_eq(sc_watchdog_count(wd, SC_WATCHDOG_NO_PROGRESS), 0);
	cr_expect_eq(sc_watchdog_destroy(wd), 0);
	cr_expect_eq(sc_pool_destroy(pool, NULL), 0);
	cr_expect_eq(sc_exec_destroy(ex), 0);
	rt_net_destroy(net);
}

Test(watchdog, reports_no_progress, .timeout = 20)
{
	struct sc_watchdog_opts o = quiet_opts();
	struct sc_watchdog *wd = NULL;
	struct sc_exec *ex = NULL;
	uint32_t id;

	/* Busy (a unit queued) with no worker: no turn can finish. */
	cr_assert_eq(sc_exec_create(NULL, &ex), 0);
	cr_assert_not_null(rt_probe_add(ex, &id));
	cr_assert_eq(sc_exec_kick(ex, id), 0);
	o.no_progress_ns = 50 * MS;
	cr_assert_eq(sc_watchdog_create(ex, &o, &wd), 0);
	cr_assert_eq(
	    sc_watchdog_wait(wd, SC_WATCHDOG_NO_PROGRESS, 1, 5000 * MS), 0);
	pthread_mutex_lock(&seen_mu);
	cr_expect_eq(seen.unit, SC_WATCHDOG_POOL);
	cr_expect_str_eq(seen.name, "pool");
	cr_expect_eq(seen.turns, 0);
	cr_expect_geq(seen.duration_ns, 50 * MS);
	cr_expect(strstr(seen_msg, "1 queued") &&
		      strstr(seen_msg, "0 workers live"),
		  "message: %s", seen_msg);
	cr_expect(strstr(seen_dump, "probe0"), "dump: %s", seen_dump);
	pthread_mutex_unlock(&seen_mu);
	cr_expect_eq(sc_watchdog_destroy(wd), 0);
	cr_expect_eq(sc_exec_destroy(ex), 0);
}

Test(watchdog, reports_are_rate_limited, .timeout = 20)
{
	struct sc_watchdog_opts o = quiet_opts();
	struct sc_watchdog *wd = NULL;
	struct stalled s;

	/* A stall that lasts: seen every 2 ms, reported every 150 ms. */
	stalled_start(&s);
	o.period_ns = 2 * MS;
	o.stall_ns = 20 * MS;
	o.rate_limit_ns = 150 * MS;
	cr_assert_eq(sc_watchdog_create(s.ex, &o, &wd), 0);
	cr_assert_eq(sc_watchdog_wait(wd, SC_WATCHDOG_STALL, 2, 5000 * MS), 0);
	cr_expect_geq(sc_watchdog_suppressed(wd, SC_WATCHDOG_STALL), 5);
	pthread_mutex_lock(&seen_mu);
	cr_expect_geq(seen_suppressed_max, 5,
		      "the second report counts the ones dropped before it");
	cr_expect_geq(seen.duration_ns, 150 * MS,
		      "a repeated report carries the duration so far");
	pthread_mutex_unlock(&seen_mu);
	/* Checks went on at the period while the reports were held back. */
	cr_expect_leq(sc_watchdog_count(wd, SC_WATCHDOG_STALL), 3);
	cr_expect_geq(sc_watchdog_checks(wd), 20);
	cr_expect_eq(sc_watchdog_destroy(wd), 0);
	stalled_stop(&s);
}

Test(watchdog, quiet_pool_reports_nothing, .timeout = 30)
{
	/* Every check on, with thresholds a loaded CI machine cannot reach
	 * by descheduling alone: only a real stall or lost kick would. */
	struct sc_watchdog_opts o = {
	    .period_ns = 5 * MS,
	    .stall_ns = 3000 * MS,
	    .starve_ns = 3000 * MS,
	    .lost_kick_ns = 1000 * MS,
	    .no_progress_ns = 3000 * MS,
	    .report = catch_report,
	};
	struct sc_pool_opts po = {.workers = 2, .budget = 3};
	struct sc_watchdog *wd = NULL;
	struct sc_exec *ex = NULL;
	struct sc_pool *pool = NULL;
	struct rt_net *net;
	uint64_t checks;
	char why[128];

	cr_assert_eq(sc_exec_create(NULL, &ex), 0);
	cr_assert_eq(rt_chain_create(ex, 4, 4, 5000, &net), 0);
	cr_assert_eq(sc_watchdog_create(ex, &o, &wd), 0);
	cr_assert_eq(sc_pool_create(ex, &po, &pool), 0);
	cr_assert_eq(rt_net_start(net, ex), 0);
	cr_assert_eq(rt_net_feed_all(net, ex), 0);
	cr_assert_eq(sc_exec_wait_idle(ex, 10000 * MS, NULL), 0);
	/* Let it look at the idle pool for a while too. */
	checks = sc_watchdog_checks(wd);
	while (sc_watchdog_checks(wd) < checks + 10)
		sleep_ms(5);
	cr_expect_eq(total_reports(wd), 0, "a report on a healthy pool: %s",
		     seen_n ? seen_msg : "");
	cr_expect_eq(sc_watchdog_suppressed(wd, SC_WATCHDOG_LOST_KICK), 0);
	cr_expect_eq(sc_watchdog_destroy(wd), 0);
	cr_expect_eq(sc_pool_finish(pool, NULL), 0);
	cr_expect(rt_net_check(net, why, sizeof(why)), "%s", why);
	cr_expect_eq(sc_exec_destroy(ex), 0);
	rt_net_destroy(net);
}

/*
 * Without a hook of its own, the kill policy condemns through the
 * executor's sc_exec_condemn. Shown on one thread: the host claims a unit
 * and holds it without running it, so it looks RUNNING past its deadline;
 * once the watchdog has condemned that turn, the host runs it, and it is
 * abandoned when it returns.
 */
Test(watchdog, kill_policy_defaults_to_the_executors_condemn_hook,
     .timeout = 20)
{
	struct sc_watchdog_opts o = quiet_opts();
	struct sc_watchdog *wd = NULL;
	struct sc_panic_record rec;
	struct sc_exec *ex = NULL;
	struct sc_claim c;
	uint32_t id;

	cr_assert_eq(sc_exec_create(NULL, &ex), 0);
	cr_assert(rt_probe_add(ex, &id));
	cr_assert_eq(sc_exec_kick(ex, id), 0);
	sc_claim_init(&c);
	cr_assert_eq(sc_exec_claim(ex, -1, &c), 0);
	o.stall_ns = 30 * MS;
	o.policy = SC_WATCHDOG_KILL_STALLED; /* and no o.condemn */
	cr_assert_eq(sc_watchdog_create(ex, &o, &wd), 0,
		     "not refused for want of a hook");
	cr_assert_eq(sc_watchdog_wait(wd, SC_WATCHDOG_STALL, 1, 5000 * MS), 0);
	cr_expect_eq(sc_watchdog_condemned(wd), 1,
		     "the executor's hook accepted it");
	cr_expect_eq(sc_watchdog_destroy(wd), 0);
	cr_expect_eq(sc_exec_run(ex, &c, 1), SC_EPANIC);
	cr_expect_eq(sc_exec_unit_state(ex, id), SC_UNIT_DEAD);
	cr_assert_eq(sc_exec_panic(ex, 0, &rec), 0);
	cr_expect(strstr(rec.message, "probe0") &&
		      strstr(rec.message, "30 ms deadline"),
		  "the panic carries the watchdog's words: %s", rec.message);
	sc_claim_fini(&c);
	cr_expect_eq(sc_exec_destroy(ex), 0);
}

/* Wait (at most 5 s) until probe p has run at least n turns. */
static bool
wait_turns(const struct rt_probe *p, uint64_t n)
{
	for (int i = 0; i < 5000 && atomic_load(&p->turns) < n; i++)
		sleep_ms(1);
	return atomic_load(&p->turns) >= n;
}

/*
 * The kill policy on a real pool, with the executor's own hook: a turn
 * that sleeps past its deadline is condemned once, runs on (it cannot be
 * stopped from outside), and when it returns its unit is DEAD with the
 * watchdog's words as its panic message; the other unit runs turns all
 * along, and after.
 */
Test(watchdog, kill_policy_marks_a_stalled_unit_dead, .timeout = 20)
{
	struct sc_watchdog_opts o = quiet_opts();
	struct sc_pool_opts po = {.workers = 2};
	struct sc_watchdog *wd = NULL;
	struct rt_probe *stuck, *other;
	struct sc_panic_record rec;
	struct sc_pool *pool = NULL;
	struct sc_exec *ex = NULL;
	_Atomic int destroyed = 0;
	uint32_t is, io;
	uint64_t checks;

	atomic_store(&released, false);
	cr_assert_eq(sc_exec_create(NULL, &ex), 0);
	stuck = rt_probe_add(ex, &is);
	other = rt_probe_add(ex, &io);
	cr_assert(stuck && other);
	stuck->on_turn = block_until_released;
	stuck->destroyed = &destroyed;
	cr_assert_eq(sc_pool_create(ex, &po, &pool), 0);
	cr_assert_eq(sc_exec_kick(ex, is), 0);
	o.stall_ns = 30 * MS;
	o.policy = SC_WATCHDOG_KILL_STALLED;
	cr_assert_eq(sc_watchdog_create(ex, &o, &wd), 0);
	cr_assert_eq(sc_watchdog_wait(wd, SC_WATCHDOG_STALL, 1, 5000 * MS), 0);
	checks = sc_watchdog_checks(wd);
	while (sc_watchdog_checks(wd) < checks + 5)
		sleep_ms(5); /* more checks of the same stalled turn */
	cr_expect_eq(sc_watchdog_condemned(wd), 1, "once per turn");
	pthread_mutex_lock(&seen_mu);
	cr_expect_eq(seen.unit, is);
	cr_expect(strstr(seen_msg, "condemned"), "message: %s", seen_msg);
	pthread_mutex_unlock(&seen_mu);
	cr_expect_eq(sc_exec_unit_state(ex, is), SC_UNIT_RUNNING,
		     "a turn cannot be stopped from outside: it runs on");
	/* The other worker runs the other unit meanwhile. */
	for (uint64_t i = 1; i <= 3; i++) {
		cr_assert_eq(sc_exec_kick(ex, io), 0);
		cr_expect(wait_turns(other, i), "turn %" PRIu64 " of probe1",
			  i);
	}
	atomic_store(&released, true);
	cr_expect_eq(sc_exec_wait_idle(ex, 5000 * MS, &rec), SC_EPANIC);
	cr_expect_eq(rec.unit, is);
	cr_expect_str_eq(rec.name, "probe0");
	cr_expect(strstr(rec.message, "probe0") &&
		      strstr(rec.message, "30 ms deadline"),
		  "the panic carries the watchdog's words: %s", rec.message);
	cr_expect_eq(sc_exec_unit_state(ex, is), SC_UNIT_DEAD);
	cr_expect_eq(atomic_load(&destroyed), 1, "its destroy ran");
	cr_expect_eq(sc_exec_kick(ex, is), 0, "a kick of the dead is ignored");
	/* And the other unit goes on after the kill. */
	cr_assert_eq(sc_exec_kick(ex, io), 0);
	cr_expect(wait_turns(other, 4), "probe1 runs after the kill");
	cr_expect_eq(sc_watchdog_destroy(wd), 0);
	cr_expect_eq(sc_pool_finish(pool, NULL), SC_EPANIC);
	cr_expect_eq(sc_exec_unit_state(ex, io), SC_UNIT_IDLE);
	cr_expect_eq(sc_exec_destroy(ex), 0);
}

Test(watchdog, create_refuses_bad_arguments, .timeout = 5)
{
	struct sc_watchdog_opts o = {.policy = (enum sc_watchdog_policy)7};
	struct sc_watchdog *wd = NULL;
	struct sc_exec *ex = NULL;

	cr_assert_eq(sc_exec_create(NULL, &ex), 0);
	cr_expect_eq(sc_watchdog_create(NULL, NULL, &wd), SC_EINVAL);
	cr_expect_eq(sc_watchdog_create(ex, NULL, NULL), SC_EINVAL);
	cr_expect_eq(sc_watchdog_create(ex, &o, &wd), SC_EINVAL);
	o = (struct sc_watchdog_opts){.period_ns = SC_WATCHDOG_OFF};
	cr_expect_eq(sc_watchdog_create(ex, &o, &wd), SC_EINVAL);
	cr_expect_null(wd);
	cr_expect_eq(sc_watchdog_destroy(NULL), 0);
	cr_expect_eq(sc_exec_destroy(ex), 0);
}

Test(watchdog, dump_names_every_unit_and_says_how_much_room_it_needs,
     .timeout = 5)
{
	struct sc_exec *ex = NULL;
	char big[4096], small[16];
	uint32_t a, b;
	size_t need;

	cr_assert_eq(sc_exec_create(NULL, &ex), 0);
	cr_assert_not_null(rt_probe_add(ex, &a));
	cr_assert_not_null(rt_probe_add(ex, &b));
	cr_assert_eq(sc_exec_kick(ex, b), 0);
	need = sc_watchdog_dump(ex, big, sizeof(big));
	cr_expect_eq(need, strlen(big));
	cr_expect(strstr(big, "2 units") && strstr(big, "1 queued"), "%s", big);
	cr_expect(strstr(big, "probe0") && strstr(big, "IDLE"), "%s", big);
	cr_expect(strstr(big, "probe1") && strstr(big, "QUEUED"), "%s", big);
	cr_expect_eq(sc_watchdog_dump(ex, small, sizeof(small)), need);
	cr_expect_eq(strlen(small), sizeof(small) - 1, "cut, NUL-terminated");
	cr_expect_eq(sc_exec_destroy(ex), 0);
}

Test(watchdog, watches_units_added_after_it_started, .timeout = 20)
{
	struct sc_watchdog_opts o = quiet_opts();
	struct sc_watchdog *wd = NULL;
	struct sc_exec *ex = NULL;
	struct rt_probe *last = NULL;
	uint32_t id = 0;

	cr_assert_eq(sc_exec_create(NULL, &ex), 0);
	o.lost_kick_ns = 20 * MS;
	cr_assert_eq(sc_watchdog_create(ex, &o, &wd), 0);
	for (int i = 0; i < 40; i++) {
		last = rt_probe_add(ex, &id);
		cr_assert_not_null(last);
		if (i % 8 == 0)
			sleep_ms(6); /* let it snapshot between additions */
	}
	atomic_store(&last->pending, true);
	cr_assert_eq(sc_watchdog_wait(wd, SC_WATCHDOG_LOST_KICK, 1, 5000 * MS),
		     0);
	pthread_mutex_lock(&seen_mu);
	cr_expect_eq(seen.unit, id);
	cr_expect_str_eq(seen.name, "probe39");
	pthread_mutex_unlock(&seen_mu);
	cr_expect_eq(sc_watchdog_destroy(wd), 0);
	cr_expect_eq(sc_exec_destroy(ex), 0);
}

Test(watchdog, default_report_goes_to_stderr_with_the_dump, .timeout = 20)
{
	struct sc_watchdog_opts o = quiet_opts();
	struct sc_watchdog *wd = NULL;
	struct sc_exec *ex = NULL;
	char text[4096];
	size_t len;
	FILE *err;
	uint32_t id;

	cr_redirect_stderr();
	cr_assert_eq(sc_exec_create(NULL, &ex), 0);
	cr_assert_not_null(rt_probe_add(ex, &id));
	cr_assert_eq(sc_exec_kick(ex, id), 0);
	o.starve_ns = 20 * MS;
	o.report = NULL;
	cr_assert_eq(sc_watchdog_create(ex, &o, &wd), 0);
	cr_assert_eq(sc_watchdog_wait(wd, SC_WATCHDOG_STARVATION, 1, 5000 * MS),
		     0);
	cr_expect_eq(sc_watchdog_destroy(wd), 0);
	(void)fflush(stderr);
	err = cr_get_redirected_stderr();
	len = fread(text, 1, sizeof(text) - 1, err);
	text[len] = '\0';
	cr_expect(strstr(text, "STARVATION: unit #0 'probe0'"), "%s", text);
	cr_expect(strstr(text, "probe0") && strstr(text, "QUEUED for"),
		  "the dump follows: %s", text);
	cr_expect_eq(sc_exec_destroy(ex), 0);
}

/* --- the test guard ------------------------------------------------------ */

Test(watchdog, guard_aborts_a_hung_body_by_name, .signal = SIGABRT,
     .timeout = 20)
{
	struct sc_test_guard *g;
	struct sc_exec *ex = NULL;
	uint32_t id;

	/* A lost wake-up, as a test would meet it: work queued, nobody to
	 * run it, and a body that waits for idle with no deadline. */
	cr_assert_eq(sc_exec_create(NULL, &ex), 0);
	cr_assert_not_null(rt_probe_add(ex, &id));
	cr_assert_eq(sc_exec_kick(ex, id), 0);
	g = sc_test_guard_begin(ex, "watchdog/guard_aborts_a_hung_body", 300);
	(void)sc_exec_wait_idle(ex, 0, NULL);
	sc_test_guard_end(g); /* not reached: the guard aborts first */
}

Test(watchdog, guard_aborts_a_body_past_its_timeout, .signal = SIGABRT,
     .timeout = 20)
{
	struct sc_test_guard *g;
	struct sc_exec *ex = NULL;

	/* The executor is idle and healthy; the body itself hangs. */
	cr_assert_eq(sc_exec_create(NULL, &ex), 0);
	g = sc_test_guard_begin(ex, "watchdog/guard_aborts_past_timeout", 200);
	sleep_ms(10000);
	sc_test_guard_end(g); /* not reached */
}

Test(watchdog, guard_lets_a_healthy_body_finish, .timeout = 30)
{
	struct sc_pool_opts po = {.workers = 2, .budget = 2};
	struct sc_test_guard *g;
	struct sc_exec *ex = NULL;
	struct sc_pool *pool = NULL;
	struct rt_net *net;
	char why[128];

	cr_assert_eq(sc_exec_create(NULL, &ex), 0);
	cr_assert_eq(rt_chain_create(ex, 3, 4, 2000, &net), 0);
	g = sc_test_guard_begin(ex, "watchdog/guard_lets_a_healthy_body",
				20000);
	cr_assert_eq(sc_pool_create(ex, &po, &pool), 0);
	cr_assert_eq(rt_net_feed_all(net, ex), 0);
	cr_expect_eq(sc_pool_finish(pool, NULL), 0);
	cr_expect_eq(sc_test_guard_count(g, SC_WATCHDOG_STALL), 0);
	sc_test_guard_end(g);
	cr_expect(rt_net_check(net, why, sizeof(why)), "%s", why);
	cr_expect_eq(sc_exec_destroy(ex), 0);
	rt_net_destroy(net);
}

/* A period near 2^64 ns means "hardly ever": its deadline saturates
 * (sc__clock_deadline) instead of wrapping into the past, which made the
 * monitor look 10,000 times a second. */
Test(watchdog, a_period_near_two_to_the_64_does_not_spin, .timeout = 20)
{
	struct sc_exec *ex = NULL;
	struct sc_watchdog *wd = NULL;
	struct sc_watchdog_opts o = {.period_ns = UINT64_MAX - 1};
	struct timespec ts = {0, 100000000};

	cr_assert_eq(sc_exec_create(NULL, &ex), 0);
	cr_assert_eq(sc_watchdog_create(ex, &o, &wd), 0, "%s", sc_errmsg());
	nanosleep(&ts, NULL);
	cr_assert_leq(sc_watchdog_checks(wd), 2, "%llu checks in 100 ms",
		      (unsigned long long)sc_watchdog_checks(wd));
	cr_assert_eq(sc_watchdog_destroy(wd), 0);
	cr_assert_eq(sc_exec_destroy(ex), 0);
}

/* Whether a thread of this process is named `name` (/proc/self/task). */
static bool
a_thread_is_named(const char *name)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	bool found = false;

	cr_assert_not_null(d);
	while (!found && (e = readdir(d)) != NULL) {
		char path[300], comm[32] = "";
		FILE *f;

		if (e->d_name[0] == '.')
			continue;
		(void)snprintf(path, sizeof(path), "/proc/self/task/%s/comm",
			       e->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fgets(comm, sizeof(comm), f))
			comm[strcspn(comm, "\n")] = 0;
		(void)fclose(f);
		found = !strcmp(comm, name);
	}
	(void)closedir(d);
	return found;
}

Test(watchdog, its_thread_is_named_sc_watchdog, .timeout = 30)
{
	struct sc_exec *ex = NULL;
	struct sc_watchdog *wd = NULL;
	struct sc_watchdog_opts o = {.period_ns = 1000000};
	bool named = false;

	cr_assert_eq(sc_exec_create(NULL, &ex), 0);
	cr_assert_eq(sc_watchdog_create(ex, &o, &wd), 0);
	/* The thread names itself when it starts: ask until it has. */
	for (int i = 0; i < 100 && !named; i++) {
		named = a_thread_is_named("sc-watchdog");
		if (!named)
			(void)nanosleep(&(struct timespec){0, 10000000}, NULL);
	}
	cr_expect(named, "no thread named sc-watchdog");
	cr_assert_eq(sc_watchdog_destroy(wd), 0);
	sc_exec_destroy(ex);
}

/*
 * test_panic.c - a panic kills the unit whose turn raised it and nothing
 * else (SC_THREADED: some scenarios run on a real pool).
 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#include "operators/error.h"
#include "runtime/panic.h"
#include "runtime/pool.h"
#include "tests/support/rt_toys.h"

static void
sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	nanosleep(&ts, NULL);
}

static struct sc_exec *
new_exec(void)
{
	struct sc_exec *ex = NULL;

	cr_assert_eq(sc_exec_create(NULL, &ex), 0);
	return ex;
}

static void
panic_now(struct rt_probe *p, void *ctx)
{
	sc_panic("%s gives up (%d)", p->name, 42);
}

/* --- the guard itself ---------------------------------------------------- */

static void
assert_fn(void *arg)
{
	int three = *(int *)arg;

	SC_UNIT_ASSERT(three == 2, "three is %d", three);
}

Test(panic, unit_assert_reports_the_condition_and_the_place, .timeout = 20)
{
	struct sc_panic_record rec;
	int three = 3;

	cr_assert_eq(sc_panic_guard(assert_fn, &three, &rec), SC_EPANIC);
	cr_expect(strstr(rec.message, "three == 2"), "%s", rec.message);
	cr_expect(strstr(rec.message, "test_panic.c"), "%s", rec.message);
	cr_expect(strstr(rec.message, "three is 3"), "%s", rec.message);
	cr_expect_eq(rec.signo, 0);
	cr_expect(!sc_panic_guarded(), "the guard is popped");
}

static void
outer_fn(void *arg)
{
	struct sc_panic_record inner;

	/* A panic goes to the innermost guard; the outer one goes on. */
	cr_assert_eq(sc_panic_guard(assert_fn, arg, &inner), SC_EPANIC);
	sc_panic("outer after inner: %.20s", inner.message);
}

Test(panic, guards_nest, .timeout = 20)
{
	struct sc_panic_record rec;
	int three = 3;

	cr_assert_eq(sc_panic_guard(outer_fn, &three, &rec), SC_EPANIC);
	cr_expect(strstr(rec.message, "outer after inner"), "%s", rec.message);
}

Test(panic, panic_outside_any_unit_aborts, .signal = SIGABRT, .timeout = 20)
{
	sc_panic("nobody to catch this");
}

static void
xmalloc_fails(struct rt_probe *p, void *ctx)
{
	sc__xmalloc_fail_after(0);
	free(sc_xmalloc(64));
}

Test(panic, allocation_failure_in_a_turn_kills_the_unit, .timeout = 20)
{
	struct sc_exec *ex = new_exec();
	struct sc_panic_record rec;
	struct rt_probe *p;
	struct sc_claim c;
	uint32_t id;

	p = rt_probe_add(ex, &id);
	p->on_turn = xmalloc_fails;
	cr_assert_eq(sc_exec_kick(ex, id), 0);
	sc_claim_init(&c);
	cr_assert_eq(sc_exec_claim(ex, 0, &c), 0);
	cr_expect_eq(sc_exec_run(ex, &c, 1), SC_EPANIC);
	cr_expect_null(c.unit);
	cr_expect_eq(sc_exec_unit_state(ex, id), SC_UNIT_DEAD);
	cr_expect_eq(sc_exec_panic(ex, 0, &rec), 0);
	cr_expect(strstr(rec.message, "out of memory"), "%s", rec.message);
	sc_claim_fini(&c);
	sc_exec_destroy(ex);
}

/* --- the executor's side ------------------------------------------------- */

Test(panic, dead_unit_is_never_run_or_kicked_again, .timeout = 20)
{
	struct sc_exec *ex = new_exec();
	struct sc_exec_info info;
	struct rt_probe *p, *n;
	atomic_int destroyed = 0;
	struct sc_claim c;
	uint32_t id, in;

	p = rt_probe_add(ex, &id);
	p->on_turn = panic_now;
	p->destroyed = &destroyed;
	n = rt_probe_add(ex, &in);
	n->nbrs[0] = id;
	n->n_nbrs = 1;
	n->result = (struct sc_turn){1, false};
	sc_claim_init(&c);
	cr_assert_eq(sc_exec_kick(ex, id), 0);
	cr_assert_eq(sc_exec_claim(ex, 0, &c), 0);
	cr_assert_eq(sc_exec_run(ex, &c, 1), SC_EPANIC);
	cr_expect_eq(sc_exec_unit_state(ex, id), SC_UNIT_DEAD);
	cr_expect_eq(atomic_load(&destroyed), 1, "destroyed once, at once");
	/* Kicked by the host and by a neighbour's progress: ignored. */
	cr_expect_eq(sc_exec_kick(ex, id), 0);
	cr_expect_eq(sc_exec_kick(ex, in), 0);
	cr_assert_eq(sc_exec_claim(ex, 0, &c), 0);
	cr_expect_eq(c.id, in);
	cr_assert_eq(sc_exec_run(ex, &c, 1), 0);
	cr_assert_eq(sc_exec_finish(ex, &c), 0);
	cr_expect_eq(sc_exec_claim(ex, 0, &c), SC_EEMPTY);
	cr_expect_eq(sc_exec_unit_state(ex, id), SC_UNIT_DEAD);
	sc_exec_info(ex, &info);
	cr_expect_eq(info.queue_len, 0);
	cr_expect_eq(info.panics, 1);
	sc_claim_fini(&c);
	cr_expect_eq(sc_exec_destroy(ex), 0);
	cr_expect_eq(atomic_load(&destroyed), 1, "not destroyed twice");
}

Test(panic, neighbours_naming_a_missing_unit_kills_the_unit, .timeout = 20)
{
	struct sc_exec *ex = new_exec();
	struct sc_panic_record rec;
	struct rt_probe *p;
	uint32_t id;

	p = rt_probe_add(ex, &id);
	p->nbrs[0] = 99;
	p->n_nbrs = 1;
	p->result = (struct sc_turn){1, false};
	cr_assert_eq(sc_exec_kick(ex, id), 0);
	cr_expect_eq(sc_exec_wait_idle(ex, 1, NULL), SC_ETIMEDOUT);
	{
		struct sc_claim c;

		sc_claim_init(&c);
		cr_assert_eq(sc_exec_claim(ex, 0, &c), 0);
		cr_expect_eq(sc_exec_run(ex, &c, 1), SC_EPANIC);
		sc_claim_fini(&c);
	}
	cr_expect_eq(sc_exec_wait_idle(ex, 0, &rec), SC_EPANIC);
	cr_expect(strstr(rec.message, "unit 99"), "%s", rec.message);
	cr_expect_eq(sc_exec_unit_state(ex, id), SC_UNIT_DEAD);
	sc_exec_destroy(ex);
}

Test(panic, panic_kills_that_unit_only, .timeout = 20)
{
	struct sc_pool_opts o = {.workers = 2, .budget = 3};
	struct sc_exec *ex = new_exec();
	struct sc_panic_record rec;
	struct rt_net *bad, *good;
	struct sc_pool *pool;
	char why[128];

	cr_assert_eq(rt_chain_create(ex, 3, 4, 500, &bad), 0);
	cr_assert_eq(rt_chain_create(ex, 3, 4, 2000, &good), 0);
	rt_net_faults(bad, 1)->panic_at_turn = 3;
	cr_assert_eq(sc_pool_create(ex, &o, &pool), 0);
	/* The bad chain's host edge fills once its middle is dead: feed the
	 * good chain, and the bad one only what it can take. */
	for (int i = 0; i < 200; i++)
		(void)rt_net_host_step(bad, ex, 3);
	cr_assert_eq(rt_net_feed_all(good, ex), 0);
	cr_expect_eq(sc_exec_wait_idle(ex, 0, &rec), SC_EPANIC);
	cr_expect_eq(rec.unit, rt_net_id(bad, 1));
	cr_expect_str_eq(rec.name, "chain1");
	cr_expect(strstr(rec.message, "injected panic in turn 3"), "%s",
		  rec.message);
	cr_expect_geq(rec.worker, 0);
	cr_expect_eq(sc_exec_unit_state(ex, rt_net_id(bad, 1)), SC_UNIT_DEAD);
	for (uint32_t i = 0; i < 3; i++) {
		if (i != 1)
			cr_expect_neq(sc_exec_unit_state(ex, rt_net_id(bad, i)),
				      SC_UNIT_DEAD);
		cr_expect_neq(sc_exec_unit_state(ex, rt_net_id(good, i)),
			      SC_UNIT_DEAD);
	}
	cr_expect(rt_net_check(good, why, sizeof(why)), "%s", why);
	cr_expect_eq(sc_pool_finish(pool, NULL), SC_EPANIC);
	cr_expect_eq(sc_exec_destroy(ex), 0);
	rt_net_destroy(bad);
	rt_net_destroy(good);
}

Test(panic, destroy_that_panics_does_not_kill_the_worker, .timeout = 20)
{
	struct sc_pool_opts o = {.workers = 1};
	struct sc_exec *ex = new_exec();
	struct sc_panic_record rec;
	struct sc_exec_info info;
	struct rt_net *net, *other;
	struct sc_pool *pool;
	char why[128];

	cr_assert_eq(rt_chain_create(ex, 1, 4, 4, &net), 0);
	cr_assert_eq(rt_chain_create(ex, 2, 4, 100, &other), 0);
	rt_net_faults(net, 0)->panic_at_turn = 1;
	rt_net_faults(net, 0)->panic_in_destroy = true;
	cr_assert_eq(sc_pool_create(ex, &o, &pool), 0);
	cr_assert_eq(rt_net_feed_all(net, ex), 0);
	cr_expect_eq(sc_exec_wait_idle(ex, 0, NULL), SC_EPANIC);
	sc_exec_info(ex, &info);
	cr_expect_eq(info.workers_live, 1, "the only worker is still there");
	cr_expect_eq(info.panics, 2);
	cr_assert_eq(sc_exec_panic(ex, 1, &rec), 0);
	cr_expect(rec.in_destroy);
	cr_expect(strstr(rec.message, "injected panic in destroy"), "%s",
		  rec.message);
	/* The same worker runs the rest. */
	cr_assert_eq(rt_net_feed_all(other, ex), 0);
	cr_expect_eq(sc_exec_wait_idle(ex, 0, NULL), SC_EPANIC);
	cr_expect(rt_net_check(other, why, sizeof(why)), "%s", why);
	cr_expect_eq(sc_pool_finish(pool, &rec), SC_EPANIC);
	cr_expect(!rec.in_destroy, "the first panic is the turn's");
	sc_exec_destroy(ex);
	rt_net_destroy(net);
	rt_net_destroy(other);
}

struct waiter {
	struct sc_exec *ex;
	struct sc_panic_record rec;
	atomic_int rc;
	atomic_bool done;
};

static void *
wait_thread(void *arg)
{
	struct waiter *w = arg;

	atomic_store(&w->rc, sc_exec_wait_idle(w->ex, 0, &w->rec));
	atomic_store(&w->done, true);
	return NULL;
}

static void
hold_until_open(struct rt_probe *p, void *ctx)
{
	while (!atomic_load((atomic_bool *)ctx))
		sleep_ms(1);
}

Test(panic, wait_idle_reports_the_first_panic_once_quiet, .timeout = 20)
{
	struct sc_pool_opts o = {.workers = 2};
	struct sc_exec *ex = new_exec();
	struct waiter w = {.ex = ex};
	struct rt_probe *busy, *bad, *worse;
	atomic_bool open = false;
	struct sc_pool *pool;
	uint32_t ib, ip, iw;
	pthread_t t;

	busy = rt_probe_add(ex, &ib);
	busy->on_turn = hold_until_open;
	busy->ctx = &open;
	bad = rt_probe_add(ex, &ip);
	bad->on_turn = panic_now;
	worse = rt_probe_add(ex, &iw);
	worse->on_turn = panic_now;
	cr_assert_eq(sc_pool_create(ex, &o, &pool), 0);
	cr_assert_eq(sc_exec_kick(ex, ib), 0);
	cr_assert_eq(sc_exec_kick(ex, ip), 0);
	while (sc_exec_unit_state(ex, ip) != SC_UNIT_DEAD)
		sleep_ms(1);
	cr_assert_eq(sc_exec_kick(ex, iw), 0);
	while (sc_exec_unit_state(ex, iw) != SC_UNIT_DEAD)
		sleep_ms(1);
	/* Nothing queued now, one unit still running: not quiet yet. */
	cr_assert_eq(pthread_create(&t, NULL, wait_thread, &w), 0);
	sleep_ms(30);
	cr_expect(!atomic_load(&w.done), "returned while a unit still ran");
	atomic_store(&open, true);
	pthread_join(t, NULL);
	cr_expect_eq(atomic_load(&w.rc), SC_EPANIC);
	cr_expect_eq(w.rec.unit, ip, "the first panic, not the second");
	cr_expect_str_eq(w.rec.name, "probe1");
	cr_expect(strstr(w.rec.message, "probe1 gives up (42)"), "%s",
		  w.rec.message);
	cr_expect_eq(atomic_load(&busy->turns), 1);
	cr_expect_eq(sc_pool_finish(pool, NULL), SC_EPANIC);
	sc_exec_destroy(ex);
}

Test(panic, segfault_in_a_turn_becomes_a_panic_when_catch_faults, .timeout = 20)
{
	struct sc_pool_opts o = {.workers = 2, .catch_faults = true};
	struct sc_exec *ex = new_exec();
	struct sc_panic_record rec;
	struct rt_net *bad, *good;
	struct sc_exec_info info;
	struct sc_pool *pool;
	char why[128];

	cr_assert_eq(rt_chain_create(ex, 2, 4, 4, &bad), 0);
	cr_assert_eq(rt_chain_create(ex, 3, 4, 1000, &good), 0);
	rt_net_faults(bad, 0)->segv_at_turn = 1;
	cr_assert_eq(sc_pool_create(ex, &o, &pool), 0);
	cr_assert_eq(rt_net_feed_all(bad, ex), 0);
	cr_assert_eq(rt_net_feed_all(good, ex), 0);
	cr_expect_eq(sc_exec_wait_idle(ex, 0, &rec), SC_EPANIC);
	cr_expect_eq(rec.signo, SIGSEGV);
	cr_expect(strstr(rec.message, "SIGSEGV"), "%s", rec.message);
	cr_expect(strstr(rec.message, "0x8"), "%s", rec.message);
	cr_expect_eq(rec.unit, rt_net_id(bad, 0));
	sc_exec_info(ex, &info);
	cr_expect_eq(info.workers_live, 2);
	cr_expect(rt_net_check(good, why, sizeof(why)), "%s", why);
	cr_expect_eq(sc_pool_finish(pool, NULL), SC_EPANIC);
	sc_exec_destroy(ex);
	rt_net_destroy(bad);
	rt_net_destroy(good);
}

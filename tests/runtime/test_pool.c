/*
 * test_pool.c - the worker pool on real threads (SC_THREADED): workers are
 * counted, stay through spurious wake-ups, shut down cleanly; toy chains
 * and rings deliver every token on 1 to 4 workers.
 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

#include "operators/error.h"
#include "runtime/executor_int.h"
#include "runtime/pool.h"
#include "tests/support/rt_toys.h"

static void
sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	nanosleep(&ts, NULL);
}

static struct sc_exec_info
info_of(struct sc_exec *ex)
{
	struct sc_exec_info i;

	sc_exec_info(ex, &i);
	return i;
}

Test(pool, workers_are_counted_in_and_out, .timeout = 20)
{
	struct sc_exec *ex = NULL;
	struct sc_pool *pool = NULL;
	struct sc_pool_opts o = {.workers = 3};

	cr_assert_eq(sc_exec_create(NULL, &ex), 0);
	cr_assert_eq(sc_pool_create(ex, &o, &pool), 0);
	cr_expect_eq(info_of(ex).workers_live, 3);
	cr_expect_eq(sc_pool_workers(pool), 3);
	cr_expect_eq(sc_pool_finish(pool, NULL), 0);
	cr_expect_eq(info_of(ex).workers_live, 0);
	cr_expect_eq(sc_exec_destroy(ex), 0);
}

Test(pool, every_worker_stays_through_wakes_with_nothing_queued, .timeout = 20)
{
	struct sc_exec *ex = NULL;
	struct sc_pool *pool = NULL;
	struct sc_pool_opts o = {.workers = 4};
	struct rt_probe *p;
	uint32_t id;

	cr_assert_eq(sc_exec_create(NULL, &ex), 0);
	p = rt_probe_add(ex, &id);
	cr_assert_eq(sc_pool_create(ex, &o, &pool), 0);
	for (int i = 0; i < 50; i++) {
		sleep_ms(1); /* let them park */
		sc__exec_wake_all(ex);
	}
	sleep_ms(5);
	cr_expect_eq(info_of(ex).workers_live, 4,
		     "%u workers left after wakes with nothing queued",
		     4 - info_of(ex).workers_live);
	/* And they still work. */
	cr_assert_eq(sc_exec_kick(ex, id), 0);
	cr_expect_eq(sc_exec_wait_idle(ex, 5000000000ULL, NULL), 0);
	cr_expect_eq(atomic_load(&p->turns), 1);
	cr_expect_eq(sc_pool_finish(pool, NULL), 0);
	sc_exec_destroy(ex);
}

/* A probe whose turn blocks until released, to hold a worker. */
struct gate {
	atomic_bool entered;
	atomic_bool open;
};

static void
gate_turn(struct rt_probe *p, void *ctx)
{
	struct gate *g = ctx;

	atomic_store(&g->entered, true);
	while (!atomic_load(&g->open))
		sleep_ms(1);
}

struct destroyer {
	struct sc_pool *pool;
	int rc;
};

static void *
destroy_thread(void *arg)
{
	struct destroyer *d = arg;

	d->rc = sc_pool_destroy(d->pool, NULL);
	return NULL;
}

Test(pool, shutdown_joins_every_worker_and_discards_the_queue, .timeout = 20)
{
	struct sc_exec *ex = NULL;
	struct sc_pool_opts o = {.workers = 1};
	struct destroyer d = {0};
	struct gate g = {0};
	struct rt_probe *blocker, *q[5];
	uint32_t ib, iq[5];
	pthread_t t;

	cr_assert_eq(sc_exec_create(NULL, &ex), 0);
	blocker = rt_probe_add(ex, &ib);
	blocker->on_turn = gate_turn;
	blocker->ctx = &g;
	for (int i = 0; i < 5; i++)
		q[i] = rt_probe_add(ex, &iq[i]);
	cr_assert_eq(sc_pool_create(ex, &o, &d.pool), 0);
	cr_assert_eq(sc_exec_kick(ex, ib), 0);
	while (!atomic_load(&g.entered))
		sleep_ms(1);
	for (int i = 0; i < 5; i++)
		cr_assert_eq(sc_exec_kick(ex, iq[i]), 0);
	cr_assert_eq(info_of(ex).queue_len, 5);
	cr_assert_eq(pthread_create(&t, NULL, destroy_thread, &d), 0);
	while (!sc_exec_is_shutdown(ex))
		sleep_ms(1);
	atomic_store(&g.open, true); /* the running turn completes */
	pthread_join(t, NULL);
	cr_expect_eq(d.rc, 0);
	cr_expect_eq(info_of(ex).workers_live, 0, "every worker joined");
	cr_expect_eq(info_of(ex).queue_len, 0, "the queue was discarded");
	for (int i = 0; i < 5; i++) {
		cr_expect_eq(atomic_load(&q[i]->turns), 0);
		cr_expect_eq(sc_exec_unit_state(ex, iq[i]), SC_UNIT_IDLE);
	}
	cr_expect_eq(atomic_load(&blocker->turns), 1);
	cr_expect_eq(sc_exec_kick(ex, iq[0]), SC_ESHUTDOWN);
	cr_expect_eq(sc_exec_destroy(ex), 0);
}

struct claimer {
	struct sc_exec *ex;
	struct sc_claim c;
	atomic_int rc;
};

static void *
claim_thread(void *arg)
{
	struct claimer *cl = arg;

	atomic_store(&cl->rc, sc_exec_claim_blocking(cl->ex, 0, &cl->c));
	return NULL;
}

Test(pool, claim_blocking_returns_nothing_after_shutdown, .timeout = 20)
{
	struct claimer cl = {.rc = 1};
	struct sc_claim c;
	uint32_t id;
	pthread_t t;

	cr_assert_eq(sc_exec_create(NULL, &cl.ex), 0);
	cr_assert(rt_probe_add(cl.ex, &id));
	sc_claim_init(&cl.c);
	cr_assert_eq(pthread_create(&t, NULL, claim_thread, &cl), 0);
	sleep_ms(20); /* parked by now, with nothing queued */
	cr_expect_eq(atomic_load(&cl.rc), 1, "returned with nothing queued");
	sc_exec_shutdown(cl.ex);
	pthread_join(t, NULL);
	cr_expect_eq(atomic_load(&cl.rc), SC_ESHUTDOWN);
	cr_expect_null(cl.c.unit);
	/* After shutdown, at once, even with a unit kicked before. */
	sc_claim_init(&c);
	cr_expect_eq(sc_exec_claim_blocking(cl.ex, 0, &c), SC_ESHUTDOWN);
	cr_expect_null(c.unit);
	cr_expect_eq(sc_exec_claim(cl.ex, 0, &c), SC_ESHUTDOWN);
	sc_exec_destroy(cl.ex);
}

/* Run a toy network on a pool of `workers`; asserts every token arrived. */
static void
run_net_on_pool(bool ring, uint32_t workers, uint32_t budget)
{
	struct sc_pool_opts o = {.workers = workers, .budget = budget};
	struct sc_panic_record rec;
	struct sc_exec *ex = NULL;
	struct sc_pool *pool = NULL;
	struct rt_net *net;
	char why[128];
	int rc;

	cr_assert_eq(sc_exec_create(NULL, &ex), 0);
	if (ring)
		rc = rt_ring_create(ex, 6, 4, 20, 200, workers, &net);
	else
		rc = rt_chain_create(ex, 5, 4, 3000, &net);
	cr_assert_eq(rc, 0);
	cr_assert_eq(sc_pool_create(ex, &o, &pool), 0);
	cr_assert_eq(rt_net_start(net, ex), 0);
	cr_assert_eq(rt_net_feed_all(net, ex), 0);
	rc = sc_pool_finish(pool, &rec);
	cr_expect_eq(rc, 0, "%s on %u workers: %s", ring ? "ring" : "chain",
		     workers, rc ? rec.message : "");
	cr_expect(rt_net_check(net, why, sizeof(why)), "%s on %u workers: %s",
		  ring ? "ring" : "chain", workers, why);
	cr_expect_eq(sc_exec_destroy(ex), 0);
	rt_net_destroy(net);
}

Test(pool, chain_delivers_every_token_on_1_to_4_workers, .timeout = 30)
{
	for (uint32_t w = 1; w <= 4; w++)
		run_net_on_pool(false, w, 1 + w);
}

Test(pool, ring_delivers_every_token_on_1_to_4_workers, .timeout = 30)
{
	for (uint32_t w = 1; w <= 4; w++)
		run_net_on_pool(true, w, w);
}

/* --- finish and destroy from a worker's turn ----------------------------- */

struct pool_caller {
	struct sc_unit unit;
	struct sc_pool *pool;
	atomic_int finish_rc, destroy_rc;
	atomic_bool done;
};

static struct sc_turn
pool_caller_turn(struct sc_unit *u, uint32_t b)
{
	struct pool_caller *pc = (struct pool_caller *)u;

	atomic_store(&pc->finish_rc, sc_pool_finish(pc->pool, NULL));
	atomic_store(&pc->destroy_rc, sc_pool_destroy(pc->pool, NULL));
	atomic_store(&pc->done, true);
	return (struct sc_turn){0, false};
}

static size_t
pool_caller_nbrs(struct sc_unit *u, uint32_t *o, size_t m)
{
	return 0;
}

static const char *
pool_caller_name(const struct sc_unit *u)
{
	return "pool_caller";
}

static void
pool_caller_destroy(struct sc_unit *u)
{
}

static const struct sc_unit_ops pool_caller_ops = {
    pool_caller_turn, pool_caller_nbrs,	   NULL,
    pool_caller_name, pool_caller_destroy, NULL,
};

/* Either would wait for (or join) the very worker that calls it. */
Test(pool, finish_and_destroy_from_a_worker_are_estate_not_a_hang,
     .timeout = 20)
{
	struct sc_exec *ex = NULL;
	struct sc_pool_opts o = {.workers = 1};
	struct pool_caller pc = {.unit = {.ops = &pool_caller_ops}};
	uint32_t id;

	atomic_init(&pc.finish_rc, 1);
	atomic_init(&pc.destroy_rc, 1);
	atomic_init(&pc.done, false);
	cr_assert_eq(sc_exec_create(NULL, &ex), 0);
	cr_assert_eq(sc_exec_add(ex, &pc.unit, &id), 0);
	cr_assert_eq(sc_pool_create(ex, &o, &pc.pool), 0);
	cr_assert_eq(sc_exec_kick(ex, id), 0);
	cr_assert_eq(sc_exec_wait_idle(ex, 10000000000ull, NULL), 0, "%s",
		     sc_errmsg());
	cr_assert(atomic_load(&pc.done));
	cr_assert_eq(atomic_load(&pc.finish_rc), SC_ESTATE);
	cr_assert_eq(atomic_load(&pc.destroy_rc), SC_ESTATE);
	cr_assert_eq(sc_pool_finish(pc.pool, NULL), 0, "%s", sc_errmsg());
	cr_assert_eq(sc_exec_destroy(ex), 0);
}

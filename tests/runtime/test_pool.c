/*
 * test_pool.c - the worker pool on real threads (SC_THREADED): workers are
 * counted, stay through spurious wake-ups, shut down cleanly; toy chains
 * and rings deliver every token on 1 to 4 workers.
 *
 * SC_BOTH_EXECUTORS: every test here runs on each executor kind (ctest
 * registers NAME and NAME.queue, cmake/sc_helpers.cmake).
 */
#define _GNU_SOURCE /* pthread_getname_np */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
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

/* --- the rules of per-worker queues, on real threads ------------------- */

/* Workers parked now (STEAL counts them lock-free, QUEUE under its
 * lock). */
static uint32_t
parked_of(struct sc_exec *ex)
{
	uint32_t n;

	if (sc_exec_kind_of(ex) == SC_EXEC_STEAL)
		return atomic_load(&ex->parked);
	pthread_mutex_lock(&ex->mu);
	n = ex->sleepers;
	pthread_mutex_unlock(&ex->mu);
	return n;
}

Test(pool, parked_workers_wake_for_injected_work, .timeout = 30)
{
	struct sc_exec *ex = NULL;
	struct sc_pool *pool = NULL;
	struct sc_pool_opts o = {.workers = 2};
	struct rt_probe *p;
	uint32_t id;

	cr_assert_eq(sc_exec_create(NULL, &ex), 0);
	p = rt_probe_add(ex, &id);
	cr_assert_eq(sc_pool_create(ex, &o, &pool), 0);
	for (uint64_t i = 0; i < 30; i++) {
		/* Both workers park (they spin a few microseconds first). */
		for (int t = 0; t < 2000 && parked_of(ex) < 2; t++)
			sleep_ms(1);
		cr_assert_eq(parked_of(ex), 2, "round %llu: %u parked",
			     (unsigned long long)i, parked_of(ex));
		/* From the host: the injection queue, and a parked worker
		 * must be woken for it. */
		cr_assert_eq(sc_exec_kick(ex, id), 0);
		cr_assert_eq(sc_exec_wait_idle(ex, 5000000000ull, NULL), 0,
			     "round %llu: the kick was not taken",
			     (unsigned long long)i);
		cr_assert_eq(atomic_load(&p->turns), i + 1);
	}
	cr_expect_eq(sc_pool_finish(pool, NULL), 0);
	cr_expect_eq(sc_exec_destroy(ex), 0);
}

#define RACERS 24

/* A unit that detects two turns of itself at once (a unit queued twice
 * and taken by two workers) and whether the last host kick was followed
 * by a turn (a kick lost in a steal). */
struct racer {
	struct sc_unit unit;
	uint32_t self;
	atomic_int inside;	    /* a turn of this unit is running */
	_Atomic uint64_t requested; /* host kicks made */
	_Atomic uint64_t served;    /* `requested` as the last turn saw it */
	_Atomic uint64_t turns;	    /* turns run */
	_Atomic uint64_t left;	    /* turns that still kick others */
	atomic_bool *overlap;	    /* set on two turns at once */
};

static struct sc_turn
racer_turn(struct sc_unit *self, uint32_t budget)
{
	struct racer *r = (struct racer *)self;
	uint64_t left = atomic_load(&r->left);
	uint64_t t;

	if (atomic_exchange(&r->inside, 1) != 0)
		atomic_store(r->overlap, true);
	/* Read what the host asked for before anything else: a kick after
	 * this read must cause another turn. */
	atomic_store(&r->served, atomic_load(&r->requested));
	t = atomic_fetch_add(&r->turns, 1);
	for (volatile int i = 0; i < 2000 + (int)(t % 64); i++)
		;
	atomic_store(&r->inside, 0);
	if (left == 0)
		return (struct sc_turn){0, false};
	atomic_store(&r->left, left - 1);
	return (struct sc_turn){1, (t % 5) == 0};
}

static size_t
racer_nbrs(struct sc_unit *self, uint32_t *out, size_t max)
{
	struct racer *r = (struct racer *)self;
	uint64_t h = atomic_load(&r->turns) * 0x9e3779b97f4a7c15ull + r->self;

	if (max >= 2) {
		out[0] = (uint32_t)((h >> 20) % RACERS);
		out[1] = (uint32_t)((h >> 40) % RACERS);
	}
	return 2;
}

static const char *
racer_name(const struct sc_unit *self)
{
	return "racer";
}

static void
racer_destroy(struct sc_unit *self)
{
	free(self);
}

static const struct sc_unit_ops racer_ops = {
    .turn = racer_turn,
    .neighbours = racer_nbrs,
    .name = racer_name,
    .destroy = racer_destroy,
};

struct kicker {
	struct sc_exec *ex;
	struct racer **rs;
	uint64_t seed;
	int rc;
};

static void *
kicker_main(void *arg)
{
	struct kicker *k = arg;

	for (int i = 0; i < 20000 && k->rc == 0; i++) {
		struct racer *r = k->rs[sc_splitmix_next(&k->seed) % RACERS];

		atomic_fetch_add(&r->requested, 1);
		k->rc = sc_exec_kick(k->ex, r->self);
	}
	return NULL;
}

Test(pool, no_unit_is_queued_twice_under_concurrent_kicks_and_steals,
     .timeout = 60)
{
	struct sc_pool_opts o = {.workers = 3, .budget = 1};
	struct sc_exec *ex = NULL;
	struct sc_pool *pool = NULL;
	struct racer *rs[RACERS];
	struct kicker k[2];
	pthread_t th[2];
	atomic_bool overlap = false;
	struct sc_exec_info info;

	cr_assert_eq(sc_exec_create(NULL, &ex), 0);
	for (uint32_t i = 0; i < RACERS; i++) {
		rs[i] = calloc(1, sizeof(*rs[i]));
		cr_assert(rs[i]);
		rs[i]->unit.ops = &racer_ops;
		rs[i]->overlap = &overlap;
		atomic_store(&rs[i]->left, 20);
		cr_assert_eq(sc_exec_add(ex, &rs[i]->unit, &rs[i]->self), 0);
	}
	cr_assert_eq(sc_pool_create(ex, &o, &pool), 0);
	for (int i = 0; i < 2; i++) {
		k[i] = (struct kicker){.ex = ex, .rs = rs, .seed = 77 + i};
		cr_assert_eq(pthread_create(&th[i], NULL, kicker_main, &k[i]),
			     0);
	}
	for (int i = 0; i < 2; i++) {
		pthread_join(th[i], NULL);
		cr_expect_eq(k[i].rc, 0);
	}
	cr_assert_eq(sc_exec_wait_idle(ex, 30000000000ull, NULL), 0);
	cr_expect(!atomic_load(&overlap), "two turns of one unit at once");
	sc_exec_info(ex, &info);
	cr_expect_eq(info.queue_len, 0);
	cr_expect_eq(info.running, 0);
	for (int32_t w = -1; w < 3; w++)
		cr_expect_eq(sc_exec_queued(ex, w), 0, "queue %d", w);
	for (uint32_t i = 0; i < RACERS; i++) {
		cr_expect_eq(sc_exec_unit_state(ex, i), SC_UNIT_IDLE);
		cr_expect_eq(atomic_load(&rs[i]->served),
			     atomic_load(&rs[i]->requested),
			     "unit %u: a kick after its last turn was lost", i);
	}
	cr_expect_eq(sc_pool_finish(pool, NULL), 0);
	cr_expect_eq(sc_exec_destroy(ex), 0);
}

/* A worker's name as its own thread reads it (pthread_getname_np). */
static char seen_name[16];

static void
read_my_name(struct rt_probe *p, void *ctx)
{
	(void)p;
	(void)ctx;
	(void)pthread_getname_np(pthread_self(), seen_name, sizeof(seen_name));
}

Test(pool, workers_are_named_sc_worker_n, .timeout = 20)
{
	struct sc_exec *ex = NULL;
	struct sc_pool *pool = NULL;
	struct sc_pool_opts o = {.workers = 1};
	struct rt_probe *p;
	uint32_t id;

	cr_assert_eq(sc_exec_create(NULL, &ex), 0);
	p = rt_probe_add(ex, &id);
	p->on_turn = read_my_name;
	cr_assert_eq(sc_pool_create(ex, &o, &pool), 0);
	cr_assert_eq(sc_exec_kick(ex, id), 0);
	cr_assert_eq(sc_exec_wait_idle(ex, 5000000000ULL, NULL), 0);
	cr_expect_str_eq(seen_name, "sc-worker-0");
	cr_expect_eq(sc_pool_finish(pool, NULL), 0);
	sc_exec_destroy(ex);
}

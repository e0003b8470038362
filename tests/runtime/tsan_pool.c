/*
 * tsan_pool.c - the pool's real-thread scenarios as a plain program, for
 * the ThreadSanitizer pass (Criterion cannot run under TSan). Exit status 0
 * is a pass; a failure prints what and where, and exits 1.
 *
 * Scenarios: toy chains and rings on 1 to 4 workers, with a monitor thread
 * taking snapshots all along (the watchdog's view); panics in turns and in
 * destroy; a hard fault caught with catch_faults; spurious wake-ups; a
 * shutdown that discards a queue; host threads kicking units that kick
 * each other while workers take and steal them. Every scenario runs on
 * each executor kind ($SC_EXECUTOR set before each round).
 */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "operators/error.h"
#include "runtime/executor_int.h"
#include "runtime/pool.h"
#include "tests/support/rt_toys.h"

/*
 * A failed check ends the program with _exit, not exit: other threads are
 * still running, and exit tears down stdio and runs atexit handlers under
 * them (not thread-safe). stdout is flushed first; stderr is unbuffered.
 */
#define CHECK(cond, ...)                                                       \
	do {                                                                   \
		if (!(cond)) {                                                 \
			(void)fprintf(stderr,                                  \
				      "tsan_pool: %s:%d: %s: ", __FILE__,      \
				      __LINE__, #cond);                        \
			(void)fprintf(stderr, __VA_ARGS__);                    \
			(void)fprintf(stderr, "\n");                           \
			(void)fflush(stdout);                                  \
			_exit(1);                                              \
		}                                                              \
	} while (0)

static void
sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	nanosleep(&ts, NULL);
}

/* A monitor that snapshots the executor until told to stop. */
struct monitor {
	struct sc_exec *ex;
	atomic_bool stop;
	uint64_t snapshots;
	pthread_t thread;
};

static void *
monitor_main(void *arg)
{
	struct sc_exec_unit_info info[32];
	struct monitor *m = arg;
	struct sc_exec_info ei;

	while (!atomic_load(&m->stop)) {
		size_t n = sc_exec_snapshot(m->ex, info, 32);

		sc_exec_info(m->ex, &ei);
		for (size_t i = 0; i < n && i < 32; i++)
			CHECK(info[i].state <= SC_UNIT_DEAD, "state %d",
			      info[i].state);
		m->snapshots++;
		sleep_ms(1);
	}
	return NULL;
}

static void
monitor_start(struct monitor *m, struct sc_exec *ex)
{
	m->ex = ex;
	atomic_store(&m->stop, false);
	m->snapshots = 0;
	CHECK(pthread_create(&m->thread, NULL, monitor_main, m) == 0, "start");
}

static void
monitor_stop(struct monitor *m)
{
	atomic_store(&m->stop, true);
	pthread_join(m->thread, NULL);
}

static void
net_on_pool(bool ring, uint32_t workers)
{
	struct sc_pool_opts o = {.workers = workers, .budget = workers + 1};
	struct sc_panic_record rec;
	struct sc_exec *ex = NULL;
	struct sc_pool *pool = NULL;
	struct monitor mon;
	struct rt_net *net;
	char why[128];
	int rc;

	CHECK(sc_exec_create(NULL, &ex) == 0, "create");
	if (ring)
		rc = rt_ring_create(ex, 5, 3, 12, 100, workers, &net);
	else
		rc = rt_chain_create(ex, 4, 3, 1500, &net);
	CHECK(rc == 0, "net %d", rc);
	monitor_start(&mon, ex);
	CHECK(sc_pool_create(ex, &o, &pool) == 0, "pool");
	CHECK(rt_net_start(net, ex) == 0, "start");
	CHECK(rt_net_feed_all(net, ex) == 0, "feed");
	rc = sc_pool_finish(pool, &rec);
	monitor_stop(&mon);
	CHECK(rc == 0, "%s on %u workers: %s", ring ? "ring" : "chain", workers,
	      rec.message);
	CHECK(rt_net_check(net, why, sizeof(why)), "%s on %u workers: %s",
	      ring ? "ring" : "chain", workers, why);
	CHECK(sc_exec_destroy(ex) == 0, "destroy");
	rt_net_destroy(net);
}

static void
panics_on_pool(uint32_t workers, bool faults)
{
	struct sc_pool_opts o = {.workers = workers, .catch_faults = faults};
	struct sc_panic_record rec;
	struct rt_net *bad, *worse, *good;
	struct sc_exec *ex = NULL;
	struct sc_pool *pool;
	struct sc_exec_info info;
	struct monitor mon;
	char why[128];

	CHECK(sc_exec_create(NULL, &ex) == 0, "create");
	CHECK(rt_chain_create(ex, 3, 4, 300, &bad) == 0, "bad");
	CHECK(rt_chain_create(ex, 2, 4, 4, &worse) == 0, "worse");
	CHECK(rt_chain_create(ex, 3, 4, 1000, &good) == 0, "good");
	rt_net_faults(bad, 1)->panic_at_turn = 2;
	rt_net_faults(worse, 0)->panic_at_turn = 1;
	rt_net_faults(worse, 0)->panic_in_destroy = true;
	if (faults)
		rt_net_faults(worse, 1)->segv_at_turn = 1;
	monitor_start(&mon, ex);
	CHECK(sc_pool_create(ex, &o, &pool) == 0, "pool");
	for (int i = 0; i < 100; i++)
		(void)rt_net_host_step(bad, ex, 3);
	CHECK(rt_net_feed_all(worse, ex) == 0, "feed");
	CHECK(rt_net_feed_all(good, ex) == 0, "feed");
	CHECK(sc_exec_wait_idle(ex, 0, &rec) == SC_EPANIC, "no panic seen");
	sc_exec_info(ex, &info);
	CHECK(info.workers_live == workers, "%u workers left",
	      workers - info.workers_live);
	CHECK(info.panics >= 3, "%u panics", info.panics);
	CHECK(rt_net_check(good, why, sizeof(why)), "good chain: %s", why);
	CHECK(sc_pool_finish(pool, NULL) == SC_EPANIC, "finish");
	monitor_stop(&mon);
	CHECK(sc_exec_destroy(ex) == 0, "destroy");
	rt_net_destroy(bad);
	rt_net_destroy(worse);
	rt_net_destroy(good);
}

static void
wakes_and_shutdown(uint32_t workers)
{
	struct sc_pool_opts o = {.workers = workers};
	struct sc_exec *ex = NULL;
	struct sc_pool *pool;
	struct sc_exec_info info;
	struct rt_net *net;

	CHECK(sc_exec_create(NULL, &ex) == 0, "create");
	CHECK(rt_chain_create(ex, 3, 2, 1000000, &net) == 0, "net");
	CHECK(sc_pool_create(ex, &o, &pool) == 0, "pool");
	for (int i = 0; i < 20; i++) {
		sleep_ms(1);
		sc__exec_wake_all(ex);
	}
	sc_exec_info(ex, &info);
	CHECK(info.workers_live == workers, "%u left on wakes",
	      workers - info.workers_live);
	/* Work in flight, then a shutdown that discards the queue. */
	for (int i = 0; i < 200; i++)
		(void)rt_net_host_step(net, ex, 3);
	CHECK(sc_pool_destroy(pool, NULL) == 0, "destroy pool");
	sc_exec_info(ex, &info);
	CHECK(info.workers_live == 0 && info.queue_len == 0 && info.idle,
	      "after shutdown: %u workers, %u queued", info.workers_live,
	      info.queue_len);
	CHECK(sc_exec_destroy(ex) == 0, "destroy");
	rt_net_destroy(net);
}

/* Two host threads kick probes that kick each other, on 3 workers: the
 * races of kicks with claims, steals and finishes. */
struct kick_ctx {
	struct sc_exec *ex;
	uint32_t n;
	uint64_t seed;
};

static void *
kick_main(void *arg)
{
	struct kick_ctx *k = arg;

	for (int i = 0; i < 20000; i++)
		CHECK(sc_exec_kick(
			  k->ex,
			  (uint32_t)(sc_splitmix_next(&k->seed) % k->n)) == 0,
		      "kick");
	return NULL;
}

static void
kicks_and_steals(void)
{
	struct sc_pool_opts o = {.workers = 3, .budget = 1};
	struct kick_ctx k[2];
	struct sc_exec *ex = NULL;
	struct sc_pool *pool;
	struct rt_probe *p[16];
	struct sc_exec_info info;
	pthread_t th[2];
	uint32_t id;

	CHECK(sc_exec_create(NULL, &ex) == 0, "create");
	for (uint32_t i = 0; i < 16; i++) {
		p[i] = rt_probe_add(ex, &id);
		CHECK(p[i] && id == i, "probe");
		p[i]->result = (struct sc_turn){1, i % 3 == 0};
		p[i]->nbrs[0] = (i + 1) % 16;
		p[i]->nbrs[1] = (i + 7) % 16;
		p[i]->n_nbrs = 2;
	}
	CHECK(sc_pool_create(ex, &o, &pool) == 0, "pool");
	for (int i = 0; i < 2; i++) {
		k[i] = (struct kick_ctx){.ex = ex, .n = 16, .seed = 5 + i};
		CHECK(pthread_create(&th[i], NULL, kick_main, &k[i]) == 0,
		      "thread");
	}
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	/* The probes kick each other for ever: a shutdown with turns
	 * running and units queued in every queue ends it. */
	CHECK(sc_pool_destroy(pool, NULL) == 0, "destroy pool");
	sc_exec_info(ex, &info);
	CHECK(info.queue_len == 0 && info.running == 0, "%u queued",
	      info.queue_len);
	CHECK(sc_exec_destroy(ex) == 0, "destroy");
}

int
main(void)
{
	static const char *const kinds[] = {"steal", "queue"};

	for (int k = 0; k < 2; k++) {
		/* Before any thread of this round starts. */
		setenv("SC_EXECUTOR", kinds[k], 1); /* NOLINT */
		printf("tsan_pool: executor %s\n", kinds[k]);
		for (uint32_t w = 1; w <= 4; w++) {
			net_on_pool(false, w);
			net_on_pool(true, w);
			panics_on_pool(w, false);
			wakes_and_shutdown(w);
		}
		kicks_and_steals();
		/* getenv: fault catching under a sanitizer's own SIGSEGV
		 * handler is opt-out, in case a sanitizer version refuses
		 * the jump. */
		if (!getenv("SC_TSAN_NO_FAULTS"))
			panics_on_pool(2, true);
	}
	printf("tsan_pool: all scenarios passed\n");
	return 0;
}

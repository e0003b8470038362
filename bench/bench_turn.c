/*
 * bench_turn.c - what a turn costs the executor, and how fast a parked
 * pool wakes.
 *
 * 1. Turn overhead, one thread inline: kick, claim, an empty turn (under
 *    the panic guard), finish; ns of this thread's CPU time per turn (the
 *    machine is shared: wall time would count other processes). Baseline,
 *    same run: a plain mutex+condvar FIFO of the same jobs (push, pop,
 *    call).
 * 2. Turn overhead on a pool of 1 and 2 workers: pairs of units that kick
 *    each other (every turn moves one "frame" and names its partner), so
 *    every turn is a kick, a claim, a turn and a finish; 2 pairs per
 *    worker. Baseline: the same ping-pong as jobs on a mutex+condvar queue
 *    served by as many threads. ns per turn = time / turns, by the CPU
 *    time of every thread (what the turns cost the machine, immune to
 *    other processes) and by wall time. A busy worker finishes a turn
 *    and claims the next in one critical section (sc_exec_finish_claim).
 * 3. Wake-up latency: the pool is left idle long enough to park, then the
 *    host kicks a unit whose turn stamps the time; median and p99 of
 *    (stamp - kick). Baseline: a thread parked on a condvar, signalled.
 *
 * Each figure is the median of >= 5 repetitions (3 with --quick).
 *
 * Every subject case runs on both executors (STEAL, then QUEUE; the
 * kind is named in the case), each beside the same baseline.
 *
 * For instruction counts, `--only WHAT [--workers W] [--turns N]` runs one
 * subject once and prints nothing: WHAT is inline-exec, inline-base,
 * pool-exec or pool-base, on the executor $SC_EXECUTOR names (default
 * STEAL). Under callgrind, instructions per turn are the
 * difference of two runs' totals (N and 2N turns) over N, which cancels
 * start-up and thread creation:
 *
 *   valgrind --tool=callgrind --callgrind-out-file=/dev/null \
 *       build/bench/bench_turn --only pool-exec --workers 1 --turns 100000
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench/harness.h"
#include "runtime/executor.h"
#include "runtime/pool.h"

#define REPS_FULL  7
#define REPS_QUICK 3

static int reps;

/* The executor the subject runs on (both are measured, one after the
 * other, beside the same baseline). */
static enum sc_exec_kind bench_kind = SC_EXEC_DEFAULT;

/* Which clock the pool figures use (wall, or every thread's CPU). */
static bool pool_cpu;

static uint64_t
pool_now_ns(void)
{
	return pool_cpu ? sc_bench_process_cpu_ns() : sc_bench_now_ns();
}

/* --- units ---------------------------------------------------------------- */

/* An empty unit: a turn does nothing and names its partner when it still
 * has turns to give. */
struct pp_unit {
	struct sc_unit unit;
	uint32_t partner;	 /* id of the other unit of the pair */
	uint64_t left;		 /* turns still to do */
	_Atomic uint64_t *stamp; /* wake bench: where the turn stamps */
};

static struct sc_turn
pp_turn(struct sc_unit *self, uint32_t budget)
{
	struct pp_unit *u = (struct pp_unit *)self;

	if (u->stamp) {
		atomic_store(u->stamp, sc_bench_now_ns());
		return (struct sc_turn){0, false};
	}
	if (u->left == 0)
		return (struct sc_turn){0, false};
	u->left--;
	return (struct sc_turn){1, false};
}

static size_t
pp_neighbours(struct sc_unit *self, uint32_t *out, size_t max)
{
	if (max)
		out[0] = ((struct pp_unit *)self)->partner;
	return 1;
}

static const char *
pp_name(const struct sc_unit *self)
{
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
    .name = pp_name,
    .destroy = pp_destroy,
};

static struct pp_unit *
pp_add(struct sc_exec *ex, uint64_t left, uint32_t *id)
{
	struct pp_unit *u = calloc(1, sizeof(*u));

	if (!u)
		abort();
	u->unit.ops = &pp_ops;
	u->left = left;
	if (sc_exec_add(ex, &u->unit, id) != 0)
		abort();
	return u;
}

/* --- the baseline: a plain mutex+condvar job queue ------------------------ */

struct job {
	struct job *next;
	struct job *partner;
	uint64_t left;
};

struct jq {
	pthread_mutex_t mu;
	pthread_cond_t cv;	/* workers park here */
	pthread_cond_t idle_cv; /* the host waits here */
	uint32_t host_waiting;	/* the host is in jq_wait_idle */
	struct job *head, *tail;
	uint32_t waiting; /* threads parked */
	uint32_t busy;	  /* jobs popped and not yet done */
	bool stop;
};

static void
jq_init(struct jq *q)
{
	memset(q, 0, sizeof(*q));
	pthread_mutex_init(&q->mu, NULL);
	pthread_cond_init(&q->cv, NULL);
	pthread_cond_init(&q->idle_cv, NULL);
}

static void
jq_fini(struct jq *q)
{
	pthread_cond_destroy(&q->cv);
	pthread_cond_destroy(&q->idle_cv);
	pthread_mutex_destroy(&q->mu);
}

static void
jq_push(struct jq *q, struct job *j)
{
	pthread_mutex_lock(&q->mu);
	j->next = NULL;
	if (q->tail)
		q->tail->next = j;
	else
		q->head = j;
	q->tail = j;
	if (q->waiting)
		pthread_cond_signal(&q->cv);
	pthread_mutex_unlock(&q->mu);
}

/* Pop without blocking; NULL when empty. */
static struct job *
jq_try_pop(struct jq *q)
{
	struct job *j;

	pthread_mutex_lock(&q->mu);
	j = q->head;
	if (j) {
		q->head = j->next;
		if (!q->head)
			q->tail = NULL;
	}
	pthread_mutex_unlock(&q->mu);
	return j;
}

/* A job: one unit of ping-pong; pushes its partner while turns are left. */
static void
job_run(struct jq *q, struct job *j)
{
	if (j->left == 0)
		return;
	j->left--;
	jq_push(q, j->partner);
}

/* Blocking pop for the baseline's workers; NULL once stopped. Counts the
 * job as busy so that the host can tell when everything is done. */
static struct job *
jq_pop_wait(struct jq *q)
{
	struct job *j = NULL;

	pthread_mutex_lock(&q->mu);
	while (!q->stop && !q->head) {
		q->waiting++;
		pthread_cond_wait(&q->cv, &q->mu);
		q->waiting--;
	}
	if (!q->stop) {
		j = q->head;
		q->head = j->next;
		if (!q->head)
			q->tail = NULL;
		q->busy++;
	}
	pthread_mutex_unlock(&q->mu);
	return j;
}

static void
jq_done(struct jq *q)
{
	pthread_mutex_lock(&q->mu);
	q->busy--;
	if (q->busy == 0 && !q->head && q->host_waiting)
		pthread_cond_signal(&q->idle_cv);
	pthread_mutex_unlock(&q->mu);
}

static void *
jq_worker(void *arg)
{
	struct jq *q = arg;
	struct job *j;

	while ((j = jq_pop_wait(q)) != NULL) {
		job_run(q, j);
		jq_done(q);
	}
	return NULL;
}

/* The host waits until the queue is empty and no job runs. */
static void
jq_wait_idle(struct jq *q)
{
	pthread_mutex_lock(&q->mu);
	while (q->head || q->busy) {
		q->host_waiting++;
		pthread_cond_wait(&q->idle_cv, &q->mu);
		q->host_waiting--;
	}
	pthread_mutex_unlock(&q->mu);
}

/* --- 1. inline, one thread -------------------------------------------- */

static double
inline_exec(uint64_t turns)
{
	struct sc_exec *ex;
	struct sc_claim c;
	uint32_t id, other;
	uint64_t t0, t1;

	if (sc_exec_create(&(struct sc_exec_opts){.kind = bench_kind}, &ex) !=
	    0)
		abort();
	pp_add(ex, 0, &id);
	pp_add(ex, 0, &other);
	sc_claim_init(&c);
	t0 = sc_bench_cpu_ns();
	for (uint64_t i = 0; i < turns; i++) {
		(void)sc_exec_kick(ex, id);
		(void)sc_exec_claim(ex, 0, &c);
		(void)sc_exec_run(ex, &c, 1);
		(void)sc_exec_finish(ex, &c);
	}
	t1 = sc_bench_cpu_ns();
	sc_claim_fini(&c);
	sc_exec_destroy(ex);
	return (double)(t1 - t0) / (double)turns;
}

static double
inline_baseline(uint64_t turns)
{
	struct job j = {0}, *p;
	struct jq q;
	uint64_t t0, t1;

	jq_init(&q);
	t0 = sc_bench_cpu_ns();
	for (uint64_t i = 0; i < turns; i++) {
		jq_push(&q, &j);
		p = jq_try_pop(&q);
		job_run(&q, p); /* left == 0: an empty job */
	}
	t1 = sc_bench_cpu_ns();
	jq_fini(&q);
	return (double)(t1 - t0) / (double)turns;
}

/* --- 2. pools ------------------------------------------------------------ */

static double
pool_exec(uint32_t workers, uint64_t turns)
{
	struct sc_pool_opts o = {.workers = workers, .budget = 1};
	uint32_t pairs = 2 * workers;
	uint64_t per_unit = turns / (2 * (uint64_t)pairs);
	struct sc_exec *ex;
	struct sc_pool *pool;
	struct pp_unit *a, *b;
	uint32_t ia, ib;
	uint64_t t0, t1;

	if (sc_exec_create(&(struct sc_exec_opts){.kind = bench_kind}, &ex) !=
	    0)
		abort();
	for (uint32_t i = 0; i < pairs; i++) {
		a = pp_add(ex, per_unit, &ia);
		b = pp_add(ex, per_unit, &ib);
		a->partner = ib;
		b->partner = ia;
	}
	if (sc_pool_create(ex, &o, &pool) != 0)
		abort();
	t0 = pool_now_ns();
	for (uint32_t i = 0; i < pairs; i++)
		(void)sc_exec_kick(ex, 2 * i);
	(void)sc_exec_wait_idle(ex, 0, NULL);
	t1 = pool_now_ns();
	sc_pool_finish(pool, NULL);
	sc_exec_destroy(ex);
	return (double)(t1 - t0) / (double)(per_unit * 2 * pairs);
}

static double
pool_baseline(uint32_t workers, uint64_t turns)
{
	uint32_t pairs = 2 * workers;
	uint64_t per_unit = turns / (2 * (uint64_t)pairs);
	struct job *jobs = calloc(2 * (size_t)pairs, sizeof(*jobs));
	pthread_t th[8];
	struct jq q;
	uint64_t t0, t1;

	jq_init(&q);
	for (size_t i = 0; i < pairs; i++) {
		jobs[2 * i].partner = &jobs[2 * i + 1];
		jobs[2 * i + 1].partner = &jobs[2 * i];
		jobs[2 * i].left = jobs[2 * i + 1].left = per_unit;
	}
	for (uint32_t w = 0; w < workers; w++)
		pthread_create(&th[w], NULL, jq_worker, &q);
	t0 = pool_now_ns();
	for (size_t i = 0; i < pairs; i++)
		jq_push(&q, &jobs[2 * i]);
	jq_wait_idle(&q);
	t1 = pool_now_ns();
	pthread_mutex_lock(&q.mu);
	q.stop = true;
	pthread_cond_broadcast(&q.cv);
	pthread_mutex_unlock(&q.mu);
	for (uint32_t w = 0; w < workers; w++)
		pthread_join(th[w], NULL);
	jq_fini(&q);
	free(jobs);
	/* Each job run that pushes its partner is one turn; the last job of
	 * each unit finds left == 0 and does nothing (as pp_turn). */
	return (double)(t1 - t0) / (double)(per_unit * 2 * pairs);
}

/* --- 3. wake-up latency -----------------------------------------------------
 */

static void
sleep_us(long us)
{
	struct timespec ts = {us / 1000000, (us % 1000000) * 1000L};

	nanosleep(&ts, NULL);
}

static void
wake_exec(uint32_t workers, uint32_t n, uint64_t *lat)
{
	struct sc_pool_opts o = {.workers = workers};
	_Atomic uint64_t stamp = 0;
	struct sc_exec *ex;
	struct sc_pool *pool;
	struct pp_unit *u;
	uint32_t id;

	if (sc_exec_create(&(struct sc_exec_opts){.kind = bench_kind}, &ex) !=
	    0)
		abort();
	u = pp_add(ex, 0, &id);
	u->stamp = &stamp;
	if (sc_pool_create(ex, &o, &pool) != 0)
		abort();
	for (uint32_t i = 0; i < n; i++) {
		uint64_t t0;

		sleep_us(2000); /* long enough to park */
		atomic_store(&stamp, 0);
		t0 = sc_bench_now_ns();
		(void)sc_exec_kick(ex, id);
		while (atomic_load(&stamp) == 0)
			;
		lat[i] = atomic_load(&stamp) - t0;
		(void)sc_exec_wait_idle(ex, 0, NULL);
	}
	sc_pool_finish(pool, NULL);
	sc_exec_destroy(ex);
}

struct cv_waiter {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool go, stop;
	_Atomic uint64_t stamp;
};

static void *
cv_waiter_main(void *arg)
{
	struct cv_waiter *w = arg;

	pthread_mutex_lock(&w->mu);
	for (;;) {
		while (!w->go && !w->stop)
			pthread_cond_wait(&w->cv, &w->mu);
		if (w->stop)
			break;
		w->go = false;
		atomic_store(&w->stamp, sc_bench_now_ns());
	}
	pthread_mutex_unlock(&w->mu);
	return NULL;
}

static void
wake_baseline(uint32_t n, uint64_t *lat)
{
	struct cv_waiter w = {0};
	pthread_t th;

	pthread_mutex_init(&w.mu, NULL);
	pthread_cond_init(&w.cv, NULL);
	pthread_create(&th, NULL, cv_waiter_main, &w);
	for (uint32_t i = 0; i < n; i++) {
		uint64_t t0;

		sleep_us(2000);
		atomic_store(&w.stamp, 0);
		t0 = sc_bench_now_ns();
		pthread_mutex_lock(&w.mu);
		w.go = true;
		pthread_cond_signal(&w.cv);
		pthread_mutex_unlock(&w.mu);
		while (atomic_load(&w.stamp) == 0)
			;
		lat[i] = atomic_load(&w.stamp) - t0;
	}
	pthread_mutex_lock(&w.mu);
	w.stop = true;
	pthread_cond_signal(&w.cv);
	pthread_mutex_unlock(&w.mu);
	pthread_join(th, NULL);
	pthread_cond_destroy(&w.cv);
	pthread_mutex_destroy(&w.mu);
}

static void
bench_wake(uint32_t workers, uint32_t n)
{
	uint64_t *a = calloc(n, sizeof(*a)), *b = calloc(n, sizeof(*b));
	size_t mid = n / 2, p99 = (size_t)n * 99 / 100;
	char kase[96];

	wake_exec(workers, n, a);
	wake_baseline(n, b);
	sc_bench_sort_u64(a, n);
	sc_bench_sort_u64(b, n);
	(void)snprintf(kase, sizeof(kase), "parked pool of %u, median [%s]",
		       workers, sc_exec_kind_name(bench_kind));
	sc_bench_emit("turn", kase, "us", (double)a[mid] / 1e3,
		      "condvar signal", (double)b[mid] / 1e3);
	(void)snprintf(kase, sizeof(kase), "parked pool of %u, p99 [%s]",
		       workers, sc_exec_kind_name(bench_kind));
	sc_bench_emit("turn", kase, "us", (double)a[p99] / 1e3,
		      "condvar signal", (double)b[p99] / 1e3);
	free(a);
	free(b);
}

/* --- main ----------------------------------------------------------------- */

static void
emit_median(const char *kase, double (*subject)(uint64_t),
	    double (*base)(uint64_t), uint64_t turns)
{
	double s[REPS_FULL], b[REPS_FULL];

	for (int r = 0; r < reps; r++) {
		s[r] = subject(turns);
		b[r] = base(turns);
	}
	sc_bench_emit("turn", kase, "ns/turn", sc_bench_median(s, reps),
		      "mutex+condvar queue", sc_bench_median(b, reps));
}

static double
pool1_exec(uint64_t t)
{
	return pool_exec(1, t);
}
static double
pool1_base(uint64_t t)
{
	return pool_baseline(1, t);
}
static double
pool2_exec(uint64_t t)
{
	return pool_exec(2, t);
}
static double
pool2_base(uint64_t t)
{
	return pool_baseline(2, t);
}

/* --only: one subject, once, silent (for callgrind; see the top). */
static int
run_only(int argc, char **argv)
{
	const char *what = NULL;
	uint32_t workers = 1;
	uint64_t turns = 100000;

	for (int i = 1; i + 1 < argc; i++) {
		if (strcmp(argv[i], "--only") == 0)
			what = argv[i + 1];
		else if (strcmp(argv[i], "--workers") == 0)
			workers = (uint32_t)strtoul(argv[i + 1], NULL, 10);
		else if (strcmp(argv[i], "--turns") == 0)
			turns = strtoull(argv[i + 1], NULL, 10);
	}
	if (!what)
		return -1;
	if (workers < 1 || workers > 8)
		workers = 1;
	if (strcmp(what, "inline-exec") == 0)
		(void)inline_exec(turns);
	else if (strcmp(what, "inline-base") == 0)
		(void)inline_baseline(turns);
	else if (strcmp(what, "pool-exec") == 0)
		(void)pool_exec(workers, turns);
	else if (strcmp(what, "pool-base") == 0)
		(void)pool_baseline(workers, turns);
	else
		return 2;
	return 0;
}

int
main(int argc, char **argv)
{
	int only = run_only(argc, argv);
	bool quick;

	if (only >= 0)
		return only;
	quick = sc_bench_init(argc, argv);
	uint64_t turns = quick ? 100000 : 1000000;
	uint32_t wakes = quick ? 50 : 300;

	reps = quick ? REPS_QUICK : REPS_FULL;
	for (int k = 0; k < 2; k++) {
		char kase[128];

		bench_kind = k == 0 ? SC_EXEC_STEAL : SC_EXEC_QUEUE;
#define KASE(what)                                                             \
	((void)snprintf(kase, sizeof(kase), "%s [%s executor]", what,          \
			sc_exec_kind_name(bench_kind)),                        \
	 kase)
		pool_cpu = false;
		emit_median(
		    KASE("inline, 1 thread, CPU time (kick+claim+run+finish)"),
		    inline_exec, inline_baseline, turns);
		pool_cpu = true;
		emit_median(KASE("pool of 1 worker, ping-pong pairs, CPU time"),
			    pool1_exec, pool1_base, turns);
		emit_median(
		    KASE("pool of 2 workers, ping-pong pairs, CPU time"),
		    pool2_exec, pool2_base, turns);
		pool_cpu = false;
		emit_median(
		    KASE("pool of 1 worker, ping-pong pairs, wall time"),
		    pool1_exec, pool1_base, turns);
		emit_median(
		    KASE("pool of 2 workers, ping-pong pairs, wall time"),
		    pool2_exec, pool2_base, turns);
#undef KASE
		bench_wake(1, wakes);
		bench_wake(2, wakes);
	}
	return 0;
}

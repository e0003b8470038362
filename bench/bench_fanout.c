/*
 * bench_fanout.c - a fan-out of independent units on both executors.
 *
 * 256 units, none connected to another; the host kicks each once, and each
 * then runs TURNS turns of a small fixed amount of work (WORK rounds of a
 * xorshift on its own state, about a quarter of a microsecond), saying
 * `more` until its turns are done. No turn kicks anyone: what is measured
 * is what the executor costs, and how well the workers share the units.
 *
 * Figures per case (executor kind x 1 or 2 workers), medians of REPS runs:
 *   - turns per second of wall time (higher is better; on this shared
 *     2-core machine it moves with the load);
 *   - CPU per turn, every thread of the process (lower is better: the
 *     executor's overhead, stealing and parking included);
 *   - turns per CPU-second of the busiest worker (higher is better): the
 *     rate the pool would sustain with a core per worker, read from each
 *     thread's own CPU clock, so time the scheduler gave to other
 *     processes does not count. Its ratio between 2 workers and 1 is the
 *     scaling figure (the target: >= 1.8).
 * Thread CPU times are read from /proc/self/task/<tid>/schedstat (Linux,
 * nanoseconds): the pool's threads are not ours to ask.
 *
 * Usage: bench_fanout [--quick]
 *        bench_fanout --only KIND WORKERS TURNS   (one run, silent: for
 *        callgrind; instructions per turn are the difference of two runs'
 *        totals over the difference of their turns, 256 per TURNS)
 */
#include <dirent.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench/harness.h"
#include "runtime/executor.h"
#include "runtime/pool.h"

#define UNITS	 256
#define WORK	 64
#define REPS	 5
#define MAX_TIDS 64

struct fan_unit {
	struct sc_unit unit;
	uint64_t x;    /* the work's state */
	uint32_t left; /* turns still to run */
};

static struct sc_turn
fan_turn(struct sc_unit *self, uint32_t budget)
{
	struct fan_unit *u = (struct fan_unit *)self;
	uint64_t x = u->x;

	for (int i = 0; i < WORK; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
	}
	u->x = x;
	u->left--;
	return (struct sc_turn){0, u->left > 0};
}

static size_t
fan_nbrs(struct sc_unit *self, uint32_t *out, size_t max)
{
	return 0;
}

static const char *
fan_name(const struct sc_unit *self)
{
	return "fan";
}

static void
fan_destroy(struct sc_unit *self)
{
	free(self);
}

static const struct sc_unit_ops fan_ops = {
    .turn = fan_turn,
    .neighbours = fan_nbrs,
    .name = fan_name,
    .destroy = fan_destroy,
};

/* Every thread's CPU ns but the calling (main) thread's; the busiest in
 * *max. */
struct tid_cpu {
	long tid;
	uint64_t ns;
};

static size_t
threads_cpu(struct tid_cpu *out, size_t max)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	size_t n = 0;
	long self = (long)getpid();

	if (!d)
		sc_bench_fail("opendir /proc/self/task");
	while ((e = readdir(d)) != NULL && n < max) {
		char path[96];
		unsigned long long ns = 0;
		long tid = strtol(e->d_name, NULL, 10);
		FILE *f;

		if (tid <= 0 || tid == self)
			continue;
		(void)snprintf(path, sizeof(path),
			       "/proc/self/task/%ld/schedstat", tid);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fscanf(f, "%llu", &ns) == 1) {
			out[n].tid = tid;
			out[n].ns = ns;
			n++;
		}
		(void)fclose(f);
	}
	(void)closedir(d);
	return n;
}

/* The busiest worker's CPU between two readings. */
static uint64_t
busiest(const struct tid_cpu *a, size_t na, const struct tid_cpu *b, size_t nb)
{
	uint64_t best = 0;

	for (size_t i = 0; i < nb; i++) {
		uint64_t before = 0;

		for (size_t j = 0; j < na; j++)
			if (a[j].tid == b[i].tid)
				before = a[j].ns;
		if (b[i].ns - before > best)
			best = b[i].ns - before;
	}
	return best;
}

struct fan_result {
	double turns_per_s;	/* wall */
	double cpu_ns_per_turn; /* every thread */
	double turns_per_cpu_s; /* busiest worker's CPU */
};

static struct fan_result
fan_run(enum sc_exec_kind kind, uint32_t workers, uint32_t turns)
{
	struct sc_exec_opts eo = {.kind = kind};
	struct sc_pool_opts po = {.workers = workers, .budget = 1};
	struct tid_cpu before[MAX_TIDS], after[MAX_TIDS];
	uint64_t t0, t1, c0, c1, busy;
	size_t nb, na;
	struct sc_exec *ex;
	struct sc_pool *pool;
	struct fan_result r;
	double total = (double)UNITS * turns;

	if (sc_exec_create(&eo, &ex) != 0)
		sc_bench_fail("exec create");
	for (uint32_t i = 0; i < UNITS; i++) {
		struct fan_unit *u = calloc(1, sizeof(*u));
		uint32_t id;

		if (!u)
			sc_bench_fail("calloc");
		u->unit.ops = &fan_ops;
		u->x = 0x9e3779b97f4a7c15ull + i;
		u->left = turns;
		if (sc_exec_add(ex, &u->unit, &id) != 0)
			sc_bench_fail("add");
	}
	if (sc_pool_create(ex, &po, &pool) != 0)
		sc_bench_fail("pool create");
	nb = threads_cpu(before, MAX_TIDS);
	c0 = sc_bench_process_cpu_ns();
	t0 = sc_bench_now_ns();
	for (uint32_t i = 0; i < UNITS; i++)
		(void)sc_exec_kick(ex, i);
	if (sc_exec_wait_idle(ex, 0, NULL) != 0)
		sc_bench_fail("wait idle");
	t1 = sc_bench_now_ns();
	c1 = sc_bench_process_cpu_ns();
	na = threads_cpu(after, MAX_TIDS);
	busy = busiest(before, nb, after, na);
	(void)sc_pool_finish(pool, NULL);
	(void)sc_exec_destroy(ex);
	r.turns_per_s = total / ((double)(t1 - t0) / 1e9);
	r.cpu_ns_per_turn = (double)(c1 - c0) / total;
	r.turns_per_cpu_s = total / ((double)(busy ? busy : 1) / 1e9);
	return r;
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double
median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return v[n / 2];
}

int
main(int argc, char **argv)
{
	bool quick;

	if (argc == 5 && strcmp(argv[1], "--only") == 0) {
		enum sc_exec_kind k = SC_EXEC_DEFAULT;

		if (sc_exec_kind_parse(argv[2], &k) != 0)
			sc_bench_fail("--only KIND");
		(void)fan_run(k, (uint32_t)strtoul(argv[3], NULL, 10),
			      (uint32_t)strtoul(argv[4], NULL, 10));
		return 0;
	}
	quick = sc_bench_init(argc, argv);
	uint32_t turns;
	int reps = quick ? 3 : REPS;
	static const enum sc_exec_kind kinds[] = {SC_EXEC_STEAL, SC_EXEC_QUEUE};
	double rate[2][3][REPS], cpu[2][3][REPS], per[2][3][REPS];
	double m_rate[2][3], m_cpu[2][3], m_per[2][3];
	char kase[96];

	turns = quick ? 200 : 2000;

	/* Alternate the cases inside each repetition: the machine's load
	 * then falls on all of them alike. */
	for (int r = 0; r < reps; r++)
		for (int k = 0; k < 2; k++)
			for (uint32_t w = 1; w <= 2; w++) {
				struct fan_result f =
				    fan_run(kinds[k], w, turns);

				rate[k][w][r] = f.turns_per_s;
				cpu[k][w][r] = f.cpu_ns_per_turn;
				per[k][w][r] = f.turns_per_cpu_s;
			}
	for (int k = 0; k < 2; k++)
		for (uint32_t w = 1; w <= 2; w++) {
			m_rate[k][w] = median(rate[k][w], reps);
			m_cpu[k][w] = median(cpu[k][w], reps);
			m_per[k][w] = median(per[k][w], reps);
		}
	for (uint32_t w = 1; w <= 2; w++) {
		(void)snprintf(kase, sizeof(kase),
			       "256 units, %u worker%s, wall", w,
			       w > 1 ? "s" : "");
		sc_bench_emit("fanout", kase, "Mturns/s", m_rate[0][w] / 1e6,
			      "queue executor", m_rate[1][w] / 1e6);
		(void)snprintf(kase, sizeof(kase),
			       "256 units, %u worker%s, CPU per turn", w,
			       w > 1 ? "s" : "");
		sc_bench_emit("fanout", kase, "ns", m_cpu[0][w],
			      "queue executor", m_cpu[1][w]);
		(void)snprintf(kase, sizeof(kase),
			       "256 units, %u worker%s, per busiest "
			       "worker's CPU-second",
			       w, w > 1 ? "s" : "");
		sc_bench_emit("fanout", kase, "Mturns/s", m_per[0][w] / 1e6,
			      "queue executor", m_per[1][w] / 1e6);
	}
	for (int k = 0; k < 2; k++) {
		(void)snprintf(kase, sizeof(kase),
			       "%s executor, 2 workers over 1, per "
			       "busiest worker's CPU-second",
			       sc_exec_kind_name(kinds[k]));
		sc_bench_emit("fanout", kase, "x", m_per[k][2] / m_per[k][1],
			      NULL, 0);
	}
	return 0;
}

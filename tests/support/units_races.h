/*
 * units_races.h - host threads racing the runtime's host calls, for the
 * Criterion tests (tests/units/test_runtime.c) and the ThreadSanitizer
 * driver (tests/units/tsan_runtime_races.c).
 *
 * The graph: in(k, v) -> filter (keeps all) -> out, one unit per node, so
 * every row crosses two edges. Every submitted row is distinct (the key
 * names the thread and the submit), weight 1: the output's integral holds
 * exactly one row per row the runtime accepted.
 *
 *   ur_submit_during_shutdown  S host threads submit (plain and waiting
 *       submits, alternately) while the main thread calls
 *       sc_runtime_shutdown. Every submit must be applied (0: its row is
 *       in the integral) or refused (SC_ESHUTDOWN: it is not); a 0 for a
 *       row that never arrives is the bug.
 *   ur_reads_during_submits  host threads submit while another reads the
 *       integral and the idle check over and over: each read either
 *       answers from an idle runtime or refuses with SC_EBUSY; under TSan
 *       no read may race with a turn.
 *   ur_submit_wait_shares_the_turns  with no worker, host threads whose
 *       waiting submits find the turns taken by another host must wait
 *       for its progress, not give up.
 *
 * Each runs behind the watchdog guard and reports a failure as a message
 * (never asserts), so a plain driver can use it. Header-only.
 */
#ifndef SC_TEST_UNITS_RACES_H
#define SC_TEST_UNITS_RACES_H

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "tests/support/rt_watchdog.h"
#include "units/placement.h"
#include "units/runtime.h"

#define UR_MAX_HOSTS 8

/* Keeps every row; with a ctx, sleeps *(long *)ctx ns per row first. */
static int
ur_keep_all(void *ctx, const uint64_t *row, bool *keep)
{
	(void)row;
	if (ctx && *(const long *)ctx) {
		struct timespec ts = {0, *(const long *)ctx};

		nanosleep(&ts, NULL);
	}
	*keep = true;
	return 0;
}

struct ur_graph {
	struct sc_graph *g;
	struct sc_schema s;
	struct sc_placement *p;
	int in, out;
};

static inline int
ur_graph_init_slow(struct ur_graph *w, const long *slow_ns)
{
	enum sc_type t[2] = {SC_TYPE_I64, SC_TYPE_I64};
	int rc;

	memset(w, 0, sizeof(*w));
	if ((rc = sc_schema_init(&w->s, 2, t, NULL)) != 0 ||
	    (rc = sc_graph_create(&w->g)) != 0)
		return rc;
	w->in = sc_graph_input(w->g, "in", &w->s);
	w->out = sc_graph_output(
	    w->g, "out",
	    sc_graph_filter(w->g, w->in, ur_keep_all, (void *)slow_ns));
	if (w->out < 0)
		return w->out;
	return sc_placement_per_node(w->g, &w->p);
}

static inline int
ur_graph_init(struct ur_graph *w)
{
	return ur_graph_init_slow(w, NULL);
}

static inline void
ur_graph_fini(struct ur_graph *w)
{
	sc_placement_destroy(w->p);
	sc_graph_destroy(w->g);
}

/* One row (key, key), weight 1. */
static inline int
ur_row(int64_t key, struct sc_batch **out)
{
	uint64_t row[2] = {sc_enc_i64(key), sc_enc_i64(key)};

	return sc_batch_from_records(2, row, NULL, 1, out);
}

struct ur_host {
	struct sc_runtime *rt;
	int in;
	uint32_t index;		 /* names its keys */
	uint64_t max;		 /* submits to try (0: until refused) */
	long pause_ns;		 /* sleep between submits (0: none) */
	uint64_t wait_ns;	 /* nonzero: every submit waits this long,
				    and a timeout is a failure */
	_Atomic uint64_t *total; /* rows accepted by every host */
	_Atomic bool *stop;	 /* set by the main thread */
	uint64_t accepted;	 /* rows this host's submits applied */
	int bad;		 /* an unexpected code, or 0 */
	char why[160];
};

/*
 * Submit rows until refused (SC_ESHUTDOWN), told to stop, or max rows
 * went in; a full input is retried. Even submits are plain, odd ones wait
 * (1 ms at most), so both paths meet the shutdown.
 */
static void *
ur_host_main(void *arg)
{
	struct ur_host *h = arg;

	for (uint64_t i = 0; !h->max || h->accepted < h->max; i++) {
		struct sc_batch *b = NULL;
		int rc = ur_row((int64_t)(h->index * 100000000ull + i), &b);

		if (rc == 0 && h->wait_ns)
			rc =
			    sc_runtime_submit_wait(h->rt, h->in, b, h->wait_ns);
		else if (rc == 0)
			rc = i % 2 ? sc_runtime_submit_wait(h->rt, h->in, b,
							    1000000)
				   : sc_runtime_submit(h->rt, h->in, b);
		sc_batch_release(b);
		if (rc == 0) {
			h->accepted++;
			atomic_fetch_add(h->total, 1);
		} else if (rc == SC_ESHUTDOWN) {
			break;
		} else if ((rc == SC_EFULL || rc == SC_ETIMEDOUT) &&
			   !h->wait_ns) {
			sched_yield();
		} else {
			h->bad = rc;
			(void)snprintf(
			    h->why, sizeof(h->why), "submit %llu: %s: %s",
			    (unsigned long long)i, sc_errname(rc), sc_errmsg());
			break;
		}
		if (atomic_load(h->stop))
			break;
		if (h->pause_ns) {
			struct timespec ts = {0, h->pause_ns};

			nanosleep(&ts, NULL);
		}
	}
	return NULL;
}

static inline bool
ur_start_hosts(struct ur_host *h, pthread_t *t, uint32_t n,
	       struct sc_runtime *rt, int in, uint64_t max, long pause_ns,
	       _Atomic uint64_t *total, _Atomic bool *stop)
{
	for (uint32_t i = 0; i < n; i++) {
		memset(&h[i], 0, sizeof(h[i]));
		h[i].rt = rt;
		h[i].in = in;
		h[i].index = i;
		h[i].max = max;
		h[i].pause_ns = pause_ns;
		h[i].total = total;
		h[i].stop = stop;
		if (pthread_create(&t[i], NULL, ur_host_main, &h[i]) != 0) {
			atomic_store(stop, true);
			for (uint32_t j = 0; j < i; j++)
				pthread_join(t[j], NULL);
			return false;
		}
	}
	return true;
}

/* Join the hosts; the rows they saw applied, or false with why. */
static inline bool
ur_join_hosts(struct ur_host *h, pthread_t *t, uint32_t n, uint64_t *accepted,
	      char *why, size_t len)
{
	bool ok = true;

	*accepted = 0;
	for (uint32_t i = 0; i < n; i++) {
		pthread_join(t[i], NULL);
		*accepted += h[i].accepted;
		if (h[i].bad && ok) {
			(void)snprintf(why, len, "host %u: %.150s", i,
				       h[i].why);
			ok = false;
		}
	}
	return ok;
}

/* The output's row count now, or -1 with why. */
static inline int64_t
ur_integral_rows(struct sc_runtime *rt, int out, char *why, size_t len)
{
	struct sc_batch *got = NULL;
	int rc = sc_runtime_integral(rt, out, &got);
	int64_t n;

	if (rc) {
		(void)snprintf(why, len, "integral: %s: %s", sc_errname(rc),
			       sc_errmsg());
		return -1;
	}
	n = (int64_t)sc_batch_count(got);
	sc_batch_release(got);
	return n;
}

/*
 * ur_submit_during_shutdown - `rounds` runtimes of `workers` threads (0:
 * none, the hosts' waiting submits run the turns), each fed by `hosts`
 * threads until a shutdown that comes once about `after` rows went in.
 * True when in every round the integral holds exactly the rows whose
 * submits returned 0; else false with the first round that lost rows.
 */
static inline bool
ur_submit_during_shutdown(uint32_t workers, uint32_t hosts, int rounds,
			  uint64_t after, char *why, size_t len)
{
	struct ur_graph w;
	bool ok = true;

	if (hosts > UR_MAX_HOSTS || ur_graph_init(&w) != 0) {
		(void)snprintf(why, len, "set-up: %s", sc_errmsg());
		return false;
	}
	for (int r = 0; r < rounds && ok; r++) {
		struct sc_runtime_opts o = {.workers = workers,
					    .budget = 1 + (uint32_t)r % 4,
					    .edge_capacity = 1u << (r % 3)};
		struct ur_host h[UR_MAX_HOSTS];
		pthread_t t[UR_MAX_HOSTS];
		_Atomic uint64_t total = 0;
		_Atomic bool stop = false;
		struct sc_runtime *rt = NULL;
		struct sc_test_guard *guard;
		uint64_t accepted = 0;
		int64_t got;
		int rc;

		if (sc_runtime_create(w.g, w.p, &o, &rt) != 0) {
			(void)snprintf(why, len, "create: %s", sc_errmsg());
			ok = false;
			break;
		}
		guard = sc_test_guard_begin(sc_runtime_exec(rt),
					    "runtime/submit_during_shutdown",
					    20000);
		if (!ur_start_hosts(h, t, hosts, rt, w.in, 0, 0, &total,
				    &stop)) {
			(void)snprintf(why, len, "no host thread");
			ok = false;
		}
		while (ok && atomic_load(&total) < after)
			sched_yield();
		rc = ok ? sc_runtime_shutdown(rt, NULL) : 0;
		atomic_store(&stop, true);
		if (ok)
			ok = ur_join_hosts(h, t, hosts, &accepted, why, len);
		sc_test_guard_end(guard);
		if (ok && rc != 0) {
			(void)snprintf(why, len, "round %d: shutdown: %s", r,
				       sc_errname(rc));
			ok = false;
		}
		if (ok && (got = ur_integral_rows(rt, w.out, why, len)) < 0)
			ok = false;
		else if (ok && (uint64_t)got != accepted) {
			(void)snprintf(
			    why, len,
			    "round %d (%u workers, %u hosts): %llu "
			    "submits returned 0, the output holds %lld "
			    "rows",
			    r, workers, hosts, (unsigned long long)accepted,
			    (long long)got);
			ok = false;
		}
		sc_runtime_destroy(rt);
	}
	ur_graph_fini(&w);
	return ok;
}

/*
 * ur_reads_during_submits - `hosts` threads submit `rows` rows each while
 * this thread reads the integral and runs the idle check over and over.
 * Every read must answer (0) or refuse (SC_EBUSY: not idle); an idle check
 * that answers must find the invariant (no SC_ESTATE); and once the hosts
 * are done and the runtime idle, the integral holds every row. *answered
 * counts the reads that answered. Under TSan, no read may race a turn.
 */
static inline bool
ur_reads_during_submits(uint32_t workers, uint32_t hosts, uint64_t rows,
			uint64_t *answered, char *why, size_t len)
{
	struct sc_runtime_opts o = {.workers = workers, .budget = 2};
	struct ur_host h[UR_MAX_HOSTS];
	pthread_t t[UR_MAX_HOSTS];
	_Atomic uint64_t total = 0;
	_Atomic bool stop = false;
	struct sc_runtime *rt = NULL;
	struct sc_test_guard *guard;
	struct ur_graph w;
	uint64_t accepted = 0;
	bool ok = true;
	int64_t got;

	*answered = 0;
	if (hosts > UR_MAX_HOSTS || ur_graph_init(&w) != 0 ||
	    sc_runtime_create(w.g, w.p, &o, &rt) != 0) {
		(void)snprintf(why, len, "set-up: %s", sc_errmsg());
		return false;
	}
	guard = sc_test_guard_begin(sc_runtime_exec(rt),
				    "runtime/reads_during_submits", 20000);
	/* The hosts pause between submits, so the runtime is often idle
	 * and a read often meets a turn that a submit just started. */
	if (!ur_start_hosts(h, t, hosts, rt, w.in, rows, 20000, &total,
			    &stop)) {
		(void)snprintf(why, len, "no host thread");
		ok = false;
	}
	while (ok && atomic_load(&total) < hosts * rows) {
		struct sc_batch *b = NULL;
		int rc = sc_runtime_integral(rt, w.out, &b);

		sc_batch_release(b);
		if (rc == 0)
			++*answered;
		if (rc == 0 || rc == SC_EBUSY)
			rc = sc_runtime_check_idle(rt);
		if (rc != 0 && rc != SC_EBUSY) {
			(void)snprintf(why, len,
				       "a read during submits: %s: %s",
				       sc_errname(rc), sc_errmsg());
			ok = false;
			atomic_store(&stop, true);
		}
	}
	if (!ur_join_hosts(h, t, hosts, &accepted, why, len))
		ok = false;
	if (ok && sc_runtime_wait_idle(rt, 0, NULL) != 0) {
		(void)snprintf(why, len, "wait_idle: %s", sc_errmsg());
		ok = false;
	}
	sc_test_guard_end(guard);
	if (ok && (got = ur_integral_rows(rt, w.out, why, len)) < 0)
		ok = false;
	else if (ok && (uint64_t)got != accepted) {
		(void)snprintf(why, len,
			       "%llu rows accepted, the output holds %lld",
			       (unsigned long long)accepted, (long long)got);
		ok = false;
	}
	sc_runtime_destroy(rt);
	ur_graph_fini(&w);
	return ok;
}

/*
 * ur_submit_wait_shares_the_turns - no worker, one unit; `hosts` threads
 * each submit `rows` rows with sc_runtime_submit_wait (10 s each) into an
 * edge of one frame, through a filter that sleeps `slow_ns` per row: while one
 * host runs the turns, the others find the input full and nothing queued
 * to run, and must wait for its progress. True when every submit returned
 * 0 and the output holds every row; else false with why.
 */
static inline bool
ur_submit_wait_shares_the_turns(uint32_t hosts, uint64_t rows, long slow_ns,
				char *why, size_t len)
{
	struct sc_runtime_opts o = {
	    .workers = 0, .budget = 1, .edge_capacity = 1};
	struct ur_host h[UR_MAX_HOSTS];
	pthread_t t[UR_MAX_HOSTS];
	_Atomic uint64_t total = 0;
	_Atomic bool stop = false;
	struct sc_runtime *rt = NULL;
	struct ur_graph w;
	uint64_t accepted = 0;
	bool ok = true;
	int64_t got;

	struct sc_placement *single = NULL;

	/* One unit: while a host runs its turn, nothing else is queued. */
	if (hosts > UR_MAX_HOSTS || ur_graph_init_slow(&w, &slow_ns) != 0 ||
	    sc_placement_single(w.g, &single) != 0 ||
	    sc_runtime_create(w.g, single, &o, &rt) != 0) {
		(void)snprintf(why, len, "set-up: %s", sc_errmsg());
		return false;
	}
	for (uint32_t i = 0; i < hosts; i++) {
		memset(&h[i], 0, sizeof(h[i]));
		h[i] = (struct ur_host){.rt = rt,
					.in = w.in,
					.index = i,
					.max = rows,
					.total = &total,
					.stop = &stop,
					.wait_ns = 10000000000ull};
		if (pthread_create(&t[i], NULL, ur_host_main, &h[i]) != 0) {
			(void)snprintf(why, len, "no host thread");
			atomic_store(&stop, true);
			hosts = i;
			ok = false;
			break;
		}
	}
	if (!ur_join_hosts(h, t, hosts, &accepted, why, len))
		ok = false;
	if (ok && sc_runtime_wait_idle(rt, 0, NULL) != 0) {
		(void)snprintf(why, len, "wait_idle: %s", sc_errmsg());
		ok = false;
	}
	if (ok && (got = ur_integral_rows(rt, w.out, why, len)) < 0)
		ok = false;
	else if (ok && (uint64_t)got != hosts * rows) {
		(void)snprintf(why, len, "%lld of %llu rows arrived",
			       (long long)got,
			       (unsigned long long)hosts * rows);
		ok = false;
	}
	sc_runtime_destroy(rt);
	sc_placement_destroy(single);
	ur_graph_fini(&w);
	return ok;
}

#endif /* SC_TEST_UNITS_RACES_H */

/*
 * units_ticks.h - threaded tick-mode scenarios (units/runtime.h, Host
 * ticks), for the Criterion tests (tests/units/test_runtime_tick_threads.c)
 * and the ThreadSanitizer driver (tests/units/tsan_runtime_tick_threads.c).
 *
 *   ut_frontier_run  in -> A = map (copies) -> B = filter (keeps all) ->
 *       out, placed {in, A} {B, out}, on a pool of 2 workers, behind the
 *       watchdog guard and a second watchdog with the runtime's waits
 *       hook (sc_runtime_waits, FRONTIER after frontier_ms). The host
 *       submits a row and closes a tick, UT_FRONTIER_TICKS times. With
 *       `stall`, the turn of A's unit that steps tick UT_STALL_TICK blocks
 *       (in A's callback) until the scenario has seen a FRONTIER report
 *       or 1.5 s have passed, so B's unit waits for that tick on the edge
 *       u0.0 -> u1.0: the first FRONTIER report is kept for the caller.
 *   ut_hosts_run  in(k, v) -> {filter: out "id", integrate: out "I",
 *       delay: out "D"}, placed by a strategy, on a pool of `workers`:
 *       `hosts` threads submit distinct rows (the key names the thread
 *       and the submit) while another closes ticks. The "id" output's
 *       delta callback says in which tick each row was stepped
 *       (sc_runtime_delta_tick). Checked: every accepted row comes out in
 *       exactly one tick, none that was not submitted; each row's tick
 *       lies in the bracket its submit saw (the ticks closed before the
 *       submit began .. the closes begun when it returned: the contract,
 *       runtime.h "Host ticks"), exactly when no close overlapped it;
 *       the per-tick deltas of I and D equal the single circuit's fed
 *       each tick's rows; and the integrals at the end equal the single
 *       circuit's.
 *
 * Each reports a failure as a message (never asserts), so a plain driver
 * can use it. Header-only.
 */
#ifndef SC_TEST_UNITS_TICKS_H
#define SC_TEST_UNITS_TICKS_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "operators/circuit.h"
#include "operators/schema.h"
#include "runtime/watchdog.h"
#include "tests/support/rt_watchdog.h"
#include "units/placement.h"
#include "units/runtime.h"

#define UT_MS		  1000000ull
#define UT_FRONTIER_TICKS 6
#define UT_STALL_TICK	  3

static inline void
ut_sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	nanosleep(&ts, NULL);
}

static inline int
ut_row(int64_t key, struct sc_batch **out)
{
	uint64_t row[2] = {sc_enc_i64(key), sc_enc_i64(1)};

	return sc_batch_from_records(2, row, NULL, 1, out);
}

static int
ut_keep_all(void *ctx, const uint64_t *row, bool *keep)
{
	(void)ctx;
	(void)row;
	*keep = true;
	return 0;
}

/* --- a unit waiting for a frontier --------------------------------------- */

/* The first FRONTIER report (copied from the callback). */
struct ut_frontier_seen {
	uint64_t reports; /* FRONTIER reports delivered */
	uint64_t checks;  /* the watchdog's checks over the run */
	uint32_t unit;	  /* the first report's */
	char name[SC_UNIT_NAME_MAX];
	uint64_t tick, frontier, duration_ns;
	char edge[SC_WATCHDOG_EDGE_MAX];
	char message[400];
};

struct ut_frontier {
	_Atomic bool armed;    /* the next call of A's callback stalls */
	_Atomic bool released; /* the stall may end */
	_Atomic bool stalled;  /* a stall began */
	pthread_mutex_t mu;    /* guards seen */
	struct ut_frontier_seen seen;
};

/* A's callback: a copy; with `armed`, the first call blocks until
 * released (1.5 s at most, below the guard's no-progress threshold). */
static int
ut_stall_map(void *ctx, const uint64_t *row, uint64_t *out)
{
	struct ut_frontier *f = ctx;

	out[0] = row[0];
	out[1] = row[1];
	if (atomic_exchange(&f->armed, false)) {
		atomic_store(&f->stalled, true);
		for (int i = 0; i < 1500 && !atomic_load(&f->released); i++)
			ut_sleep_ms(1);
	}
	return 0;
}

static void
ut_frontier_report(const struct sc_watchdog_report *r, void *arg)
{
	struct ut_frontier *f = arg;
	struct ut_frontier_seen *s = &f->seen;

	if (r->kind != SC_WATCHDOG_FRONTIER || !r->wait)
		return;
	pthread_mutex_lock(&f->mu);
	if (s->reports++ == 0) {
		s->unit = r->unit;
		memcpy(s->name, r->name, sizeof(s->name));
		s->tick = r->wait->tick;
		s->frontier = r->wait->frontier;
		s->duration_ns = r->duration_ns;
		memcpy(s->edge, r->wait->edge, sizeof(s->edge));
		(void)snprintf(s->message, sizeof(s->message), "%s",
			       r->message);
	}
	pthread_mutex_unlock(&f->mu);
}

/* The graph and the runtime of the frontier scenario. */
static inline int
ut_frontier_build(struct ut_frontier *f, uint32_t workers, struct sc_graph **g,
		  struct sc_placement **p, int *in, struct sc_runtime **rt)
{
	enum sc_type t[2] = {SC_TYPE_I64, SC_TYPE_I64};
	struct sc_runtime_opts o = {.workers = workers, .ticks = true};
	struct sc_schema s;
	int32_t unit_of[4];
	int a, b, out, rc;

	if ((rc = sc_schema_init(&s, 2, t, NULL)) != 0 ||
	    (rc = sc_graph_create(g)) != 0)
		return rc;
	*in = sc_graph_input(*g, "in", &s);
	a = sc_graph_map(*g, *in, &s, ut_stall_map, f);
	b = sc_graph_filter(*g, a, ut_keep_all, NULL);
	out = sc_graph_output(*g, "out", b);
	if (out < 0 || sc_graph_node_count(*g) != 4)
		return out < 0 ? out : SC_ESTATE;
	unit_of[*in] = 0;
	unit_of[a] = 0;
	unit_of[b] = 1;
	unit_of[out] = 1;
	if ((rc = sc_placement_manual(*g, unit_of, 4, 2, p)) != 0)
		return rc;
	return sc_runtime_create(*g, *p, &o, rt);
}

/* The host's part: a row and a close per tick; with `stall`, tick
 * UT_STALL_TICK's step of A blocks until a FRONTIER report came (or 3 s).
 * Without, a pause between ticks lets the watchdog look many times. */
static inline bool
ut_frontier_host(struct ut_frontier *f, struct sc_runtime *rt, int in,
		 struct sc_watchdog *wd, bool stall, char *why, size_t len)
{
	for (int t = 0; t < UT_FRONTIER_TICKS; t++) {
		struct sc_batch *b = NULL;
		int rc = ut_row(t, &b);

		if (stall && t == UT_STALL_TICK) {
			/* Every earlier tick stepped: the stall is tick t's. */
			if (!rc)
				rc = sc_runtime_wait_idle(rt, 0, NULL);
			atomic_store(&f->armed, true);
		}
		if (!rc)
			rc = sc_runtime_submit_wait(rt, in, b, 0);
		sc_batch_release(b);
		if (!rc)
			rc = sc_runtime_tick(rt, 0, NULL);
		if (rc) {
			(void)snprintf(why, len, "tick %d: %s: %s", t,
				       sc_errname(rc), sc_errmsg());
			return false;
		}
		if (stall && t == UT_STALL_TICK) {
			(void)sc_watchdog_wait(wd, SC_WATCHDOG_FRONTIER, 1,
					       3000 * UT_MS);
			atomic_store(&f->released, true);
		} else if (!stall) {
			ut_sleep_ms(20);
		}
	}
	return true;
}

/*
 * Run the scenario (see the top); *seen gets the reports' count, the
 * watchdog's checks and the first report. False with why when the run
 * itself failed (not for what the reports say: the caller checks that).
 */
static inline bool
ut_frontier_run(bool stall, uint32_t frontier_ms, struct ut_frontier_seen *seen,
		char *why, size_t len)
{
	static struct ut_frontier f; /* A's callback outlives no run */
	struct sc_graph *g = NULL;
	struct sc_placement *p = NULL;
	struct sc_runtime *rt = NULL;
	struct sc_watchdog *wd = NULL;
	struct sc_test_guard *guard = NULL;
	struct sc_watchdog_opts wo = {
	    .period_ns = 5 * UT_MS,
	    .stall_ns = SC_WATCHDOG_OFF,
	    .starve_ns = SC_WATCHDOG_OFF,
	    .lost_kick_ns = SC_WATCHDOG_OFF,
	    .no_progress_ns = SC_WATCHDOG_OFF,
	    .frontier_ns = frontier_ms * UT_MS,
	    .report = ut_frontier_report,
	    .report_arg = &f,
	    .waits = sc_runtime_waits,
	};
	bool ok = false;
	int in = -1, rc;

	memset(&f, 0, sizeof(f));
	pthread_mutex_init(&f.mu, NULL);
	rc = ut_frontier_build(&f, 2, &g, &p, &in, &rt);
	if (rc) {
		(void)snprintf(why, len, "build: %s: %s", sc_errname(rc),
			       sc_errmsg());
		goto out;
	}
	guard = sc_test_guard_begin(sc_runtime_exec(rt), "ut_frontier", 10000);
	wo.waits_arg = rt;
	if ((rc = sc_watchdog_create(sc_runtime_exec(rt), &wo, &wd)) != 0) {
		(void)snprintf(why, len, "watchdog: %s", sc_errname(rc));
		goto out;
	}
	ok = ut_frontier_host(&f, rt, in, wd, stall, why, len);
	if (ok && stall && !atomic_load(&f.stalled)) {
		(void)snprintf(why, len, "A's callback never stalled");
		ok = false;
	}
	if (ok && (rc = sc_runtime_wait_idle(rt, 0, NULL)) != 0) {
		(void)snprintf(why, len, "wait_idle: %s", sc_errname(rc));
		ok = false;
	}
	/* Idle: every closed tick stepped, so nothing waits any more. */
	ut_sleep_ms(4 * (long)frontier_ms);
out:
	atomic_store(&f.released, true);
	if (rt)
		(void)sc_runtime_shutdown(rt, NULL);
	if (wd) {
		pthread_mutex_lock(&f.mu);
		*seen = f.seen;
		pthread_mutex_unlock(&f.mu);
		seen->checks = sc_watchdog_checks(wd);
		(void)sc_watchdog_destroy(wd);
	}
	sc_test_guard_end(guard);
	sc_runtime_destroy(rt);
	sc_placement_destroy(p);
	sc_graph_destroy(g);
	pthread_mutex_destroy(&f.mu);
	return ok;
}

/* --- host threads submitting while another closes ticks ------------------ */

#define UT_HOSTS_MAX 4
#define UT_TICKS_MAX 256
#define UT_SUBMITS   400 /* per host thread */
#define UT_NOTICK    UINT64_MAX

/* The ticks closed and begun, as the closer publishes them. */
struct ut_clock {
	_Atomic uint64_t done;	  /* closes that returned */
	_Atomic uint64_t started; /* closes begun */
	_Atomic bool stop;	  /* the hosts are through */
};

struct ut_hosts {
	struct sc_runtime *rt;
	int in;
	int id, integ, delay; /* the output nodes */
	struct ut_clock clock;
	uint32_t hosts;
	/* per host and submit: the bracket its submit saw, and the tick the
	 * "id" output stepped its row in */
	uint64_t lo[UT_HOSTS_MAX][UT_SUBMITS], hi[UT_HOSTS_MAX][UT_SUBMITS];
	_Atomic uint64_t tick_of[UT_HOSTS_MAX][UT_SUBMITS];
	/* per output (I, D) and tick, the sum of the deltas */
	pthread_mutex_t mu;
	struct sc_batch *d[2][UT_TICKS_MAX];
	_Atomic bool bad; /* a row twice, unknown, or a tick out of range */
	char bad_why[160];
	uint64_t closes; /* ticks the closer closed */
};

struct ut_host_arg {
	struct ut_hosts *h;
	uint32_t index;
	int rc;
	char why[160];
};

static void
ut_hosts_fail(struct ut_hosts *h, const char *what, int64_t key, uint64_t t)
{
	if (atomic_exchange(&h->bad, true))
		return;
	(void)snprintf(h->bad_why, sizeof(h->bad_why),
		       "%s: row %lld at tick %llu", what, (long long)key,
		       (unsigned long long)t);
}

/* Add delta to the sum kept for (output k, tick t); under h->mu. */
static void
ut_hosts_add(struct ut_hosts *h, int k, uint64_t t, const struct sc_batch *d)
{
	struct sc_batch *sum = NULL;

	if (!h->d[k][t]) {
		h->d[k][t] = sc_batch_retain((struct sc_batch *)d);
	} else if (sc_batch_add(h->d[k][t], d, &sum) == 0) {
		sc_batch_release(h->d[k][t]);
		h->d[k][t] = sum;
	} else {
		ut_hosts_fail(h, "no memory for a sum", -1, t);
	}
}

static int
ut_hosts_delta(void *ctx, int node, const struct sc_batch *delta)
{
	struct ut_hosts *h = ctx;
	uint64_t t = sc_runtime_delta_tick();

	if (t >= UT_TICKS_MAX) {
		ut_hosts_fail(h, "a delta past the ticks kept", -1, t);
		return 0;
	}
	if (node != h->id) {
		pthread_mutex_lock(&h->mu);
		ut_hosts_add(h, node == h->integ ? 0 : 1, t, delta);
		pthread_mutex_unlock(&h->mu);
		return 0;
	}
	for (size_t i = 0; i < sc_batch_count(delta); i++) {
		int64_t key = sc_dec_i64(sc_batch_row(delta, i)[0]);
		uint64_t host = (uint64_t)key / UT_SUBMITS;
		uint64_t k = (uint64_t)key % UT_SUBMITS;
		uint64_t was = UT_NOTICK;

		if (key < 0 || host >= h->hosts ||
		    sc_batch_weight(delta, i) != 1)
			ut_hosts_fail(h, "a row no host submitted", key, t);
		else if (!atomic_compare_exchange_strong(&h->tick_of[host][k],
							 &was, t))
			ut_hosts_fail(h, "a row stepped twice", key, t);
	}
	return 0;
}

/* A host thread: UT_SUBMITS submits, each bracketed by the clock. */
static void *
ut_host_main(void *arg)
{
	struct ut_host_arg *a = arg;
	struct ut_hosts *h = a->h;

	for (uint32_t k = 0; k < UT_SUBMITS && !a->rc; k++) {
		struct sc_batch *b = NULL;

		a->rc = ut_row((int64_t)a->index * UT_SUBMITS + k, &b);
		h->lo[a->index][k] = atomic_load(&h->clock.done);
		if (!a->rc)
			a->rc = sc_runtime_submit_wait(h->rt, h->in, b, 0);
		h->hi[a->index][k] = atomic_load(&h->clock.started);
		sc_batch_release(b);
		if (a->rc)
			(void)snprintf(a->why, sizeof(a->why),
				       "host %u submit %u: %s: %s", a->index, k,
				       sc_errname(a->rc), sc_errmsg());
		/* A pause now and then, so that closes fall between (and
		 * during) the submits of every host. */
		if (k % 4 == 0) {
			struct timespec ts = {0, 100000};

			nanosleep(&ts, NULL);
		}
	}
	return NULL;
}

/* The closer: closes ticks until the hosts are through (and at most
 * UT_TICKS_MAX - 1, the wait_idle at the end may close one more). */
static void *
ut_closer_main(void *arg)
{
	struct ut_hosts *h = arg;

	while (!atomic_load(&h->clock.stop) && h->closes < UT_TICKS_MAX - 2) {
		uint64_t closed = UT_NOTICK;

		atomic_fetch_add(&h->clock.started, 1);
		if (sc_runtime_tick(h->rt, 0, &closed) != 0 ||
		    closed != h->closes) {
			ut_hosts_fail(h, "a close failed or skipped a number",
				      -1, closed);
			break;
		}
		h->closes++;
		atomic_store(&h->clock.done, h->closes);
		{
			struct timespec ts = {0, 200000};

			nanosleep(&ts, NULL);
		}
	}
	return NULL;
}

static inline int
ut_hosts_graph(struct sc_graph **g, int *in, int out[3])
{
	enum sc_type t[2] = {SC_TYPE_I64, SC_TYPE_I64};
	struct sc_schema s;
	int rc;

	if ((rc = sc_schema_init(&s, 2, t, NULL)) != 0 ||
	    (rc = sc_graph_create(g)) != 0)
		return rc;
	*in = sc_graph_input(*g, "in", &s);
	out[0] = sc_graph_output(*g, "id",
				 sc_graph_filter(*g, *in, ut_keep_all, NULL));
	out[1] = sc_graph_output(*g, "I", sc_graph_integrate(*g, *in));
	out[2] = sc_graph_output(*g, "D", sc_graph_delay(*g, *in));
	for (int k = 0; k < 3; k++)
		if (out[k] < 0)
			return out[k];
	return 0;
}

/* Every accepted row stepped once, in its bracket; false with why. */
static inline bool
ut_hosts_check_rows(struct ut_hosts *h, uint64_t *exact, char *why, size_t len)
{
	for (uint32_t i = 0; i < h->hosts; i++)
		for (uint32_t k = 0; k < UT_SUBMITS; k++) {
			uint64_t t = atomic_load(&h->tick_of[i][k]);

			if (t == UT_NOTICK) {
				(void)snprintf(why, len,
					       "host %u submit %u: its row "
					       "never came out (lost)",
					       i, k);
				return false;
			}
			if (t < h->lo[i][k] || t > h->hi[i][k]) {
				(void)snprintf(
				    why, len,
				    "host %u submit %u: stepped in tick %llu, "
				    "outside its bracket %llu..%llu",
				    i, k, (unsigned long long)t,
				    (unsigned long long)h->lo[i][k],
				    (unsigned long long)h->hi[i][k]);
				return false;
			}
			*exact += h->lo[i][k] == h->hi[i][k];
		}
	return true;
}

static bool
ut_same(const struct sc_batch *a, const struct sc_batch *b)
{
	size_t na = a ? sc_batch_count(a) : 0, nb = b ? sc_batch_count(b) : 0;

	if (na == 0 || nb == 0)
		return na == nb;
	return sc_batch_equal(a, b);
}

/* The single circuit fed each tick's rows (as the "id" output grouped
 * them): I's and D's deltas at every tick, and every integral at the
 * end. */
static inline bool
ut_hosts_check_ref(struct ut_hosts *h, struct sc_graph *g, uint64_t ticks,
		   struct sc_batch *integral[3], char *why, size_t len)
{
	const int outs[3] = {h->id, h->integ, h->delay};
	struct sc_circuit *c = NULL;
	bool ok = sc_circuit_create(g, &c) == 0;

	for (uint64_t t = 0; ok && t < ticks; t++) {
		for (uint32_t i = 0; ok && i < h->hosts; i++)
			for (uint32_t k = 0; ok && k < UT_SUBMITS; k++) {
				struct sc_batch *b = NULL;

				if (atomic_load(&h->tick_of[i][k]) != t)
					continue;
				ok = ut_row((int64_t)i * UT_SUBMITS + k, &b) ==
					 0 &&
				     sc_circuit_feed(c, h->in, b) == 0;
				sc_batch_release(b);
			}
		ok = ok && sc_circuit_step(c) == 0;
		for (int o = 0; ok && o < 2; o++) {
			struct sc_batch *ref = NULL;

			ok = sc_circuit_delta(c, outs[o + 1], &ref) == 0;
			if (ok && !ut_same(ref, h->d[o][t])) {
				(void)snprintf(why, len,
					       "output %s at tick %llu differs "
					       "from the single circuit's",
					       o ? "D" : "I",
					       (unsigned long long)t);
				ok = false;
			}
			sc_batch_release(ref);
		}
	}
	for (int o = 0; ok && o < 3; o++) {
		struct sc_batch *ref = NULL;

		ok = sc_circuit_integral(c, outs[o], &ref) == 0;
		if (ok && !ut_same(ref, integral[o])) {
			(void)snprintf(why, len,
				       "the integral of output %d differs "
				       "from the single circuit's",
				       o);
			ok = false;
		}
		sc_batch_release(ref);
	}
	if (!ok && !why[0])
		(void)snprintf(why, len, "the reference failed: %s",
			       sc_errmsg());
	sc_circuit_destroy(c);
	return ok;
}

static inline bool
ut_hosts_threads(struct ut_hosts *h, char *why, size_t len)
{
	struct ut_host_arg a[UT_HOSTS_MAX];
	pthread_t th[UT_HOSTS_MAX], closer;
	bool ok = true;
	uint32_t n = 0;

	if (pthread_create(&closer, NULL, ut_closer_main, h) != 0) {
		(void)snprintf(why, len, "no closer thread");
		return false;
	}
	for (; n < h->hosts; n++) {
		memset(&a[n], 0, sizeof(a[n]));
		a[n].h = h;
		a[n].index = n;
		if (pthread_create(&th[n], NULL, ut_host_main, &a[n]) != 0)
			break;
	}
	for (uint32_t i = 0; i < n; i++) {
		pthread_join(th[i], NULL);
		if (a[i].rc && ok) {
			(void)snprintf(why, len, "%s", a[i].why);
			ok = false;
		}
	}
	atomic_store(&h->clock.stop, true);
	pthread_join(closer, NULL);
	if (ok && n < h->hosts) {
		(void)snprintf(why, len, "no host thread %u", n);
		ok = false;
	}
	return ok;
}

/* Run it (see the top) with `hosts` submitters (1..UT_HOSTS_MAX) under
 * `strategy` on `workers` workers; *ticks and *exact (rows whose bracket
 * was one tick) for the caller to print. */
static inline bool
ut_hosts_run(const char *strategy, uint32_t hosts, uint32_t workers,
	     uint64_t *ticks, uint64_t *exact, char *why, size_t len)
{
	static struct ut_hosts h; /* big; one run at a time */
	struct sc_runtime_opts o = {
	    .workers = workers, .ticks = true, .edge_capacity = 8};
	struct sc_batch *integral[3] = {NULL, NULL, NULL};
	struct sc_graph *g = NULL;
	struct sc_placement *p = NULL;
	struct sc_test_guard *guard = NULL;
	uint64_t last = UT_NOTICK;
	int outs[3], rc;
	bool ok = false;

	memset(&h, 0, sizeof(h));
	h.hosts = hosts;
	pthread_mutex_init(&h.mu, NULL);
	for (uint32_t i = 0; i < UT_HOSTS_MAX; i++)
		for (uint32_t k = 0; k < UT_SUBMITS; k++)
			atomic_init(&h.tick_of[i][k], UT_NOTICK);
	why[0] = '\0';
	if ((rc = ut_hosts_graph(&g, &h.in, outs)) != 0 ||
	    (rc = sc_placement_parse(g, strategy, 1, &p)) != 0 ||
	    (rc = sc_runtime_create(g, p, &o, &h.rt)) != 0) {
		(void)snprintf(why, len, "build: %s: %s", sc_errname(rc),
			       sc_errmsg());
		goto out;
	}
	h.id = outs[0];
	h.integ = outs[1];
	h.delay = outs[2];
	for (int k = 0; k < 3 && !rc; k++)
		rc = sc_runtime_on_delta(h.rt, outs[k], ut_hosts_delta, &h);
	guard = sc_test_guard_begin(sc_runtime_exec(h.rt), "ut_hosts", 20000);
	if (rc || !ut_hosts_threads(&h, why, len))
		goto out;
	/* The last tick, closed here, so that the ticks stepped are known
	 * (wait_idle closes one only if something went to it). */
	rc = sc_runtime_tick(h.rt, 0, &last);
	if (!rc)
		rc = sc_runtime_wait_idle(h.rt, 0, NULL);
	if (rc || last != h.closes) {
		(void)snprintf(why, len, "the last close (%llu): %s",
			       (unsigned long long)last, sc_errname(rc));
		goto out;
	}
	for (int k = 0; k < 3 && !rc; k++)
		rc = sc_runtime_integral(h.rt, outs[k], &integral[k]);
	if (rc || atomic_load(&h.bad)) {
		(void)snprintf(why, len, "%s", rc ? sc_errmsg() : h.bad_why);
		goto out;
	}
	*ticks = h.closes + 1;
	ok = ut_hosts_check_rows(&h, exact, why, len) &&
	     ut_hosts_check_ref(&h, g, *ticks, integral, why, len);
out:
	if (h.rt)
		(void)sc_runtime_shutdown(h.rt, NULL);
	sc_test_guard_end(guard);
	sc_runtime_destroy(h.rt);
	for (int k = 0; k < 3; k++)
		sc_batch_release(integral[k]);
	for (int k = 0; k < 2; k++)
		for (int t = 0; t < UT_TICKS_MAX; t++)
			sc_batch_release(h.d[k][t]);
	sc_placement_destroy(p);
	sc_graph_destroy(g);
	pthread_mutex_destroy(&h.mu);
	return ok;
}

#endif /* SC_TEST_UNITS_TICKS_H */

/*
 * watchdog.c - the monitor thread (see watchdog.h for what it reports).
 *
 * The monitor remembers, per unit, when it last reported each kind (for the
 * rate limit) and since when the unit has looked like a lost kick; and, for
 * the executor, the last count of finished turns and since when it has not
 * moved. Everything it remembers is touched by the monitor thread only; the
 * counters that other threads read are atomics, and the mutex guards only
 * the stop flag and the two condition variables.
 *
 * FRONTIER: per unit, the tick it was first seen waiting for and when; the
 * hook (opts.waits) is asked only for a unit neither DEAD nor running, so
 * a STALL and a FRONTIER never name the same turn.
 *
 * The kill policy condemns through opts->condemn, which defaults to the
 * executor's own hook, sc_exec_condemn (executor.h): the turn that follows
 * the snapshot's count of finished turns is marked, and sc_exec_run
 * abandons the unit when that turn returns. The turn count makes the
 * request name one turn, so a stall seen late can never kill the unit's
 * next turn. A caller may still pass its own hook (a test's stand-in).
 */
#define _GNU_SOURCE /* pthread_setname_np */
#include "runtime/watchdog.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "operators/error.h"
#include "operators/base_int.h"

#define MS ((uint64_t)1000000)

/* What the monitor remembers about one unit (or the pool). */
struct wd_memo {
	uint64_t last_report[SC_WATCHDOG_KINDS]; /* when; 0 for never */
	uint64_t suppressed[SC_WATCHDOG_KINDS];	 /* dropped since then */
	uint64_t pend_since; /* first seen IDLE with pending input; 0: no */
	uint64_t pend_turns; /* its turns then: a turn in between resets */
	uint64_t pend_kicks; /* its kicks then: a kick in between resets */
	uint64_t condemned;  /* turns + 1 of the turn condemned; 0: none */
	uint64_t wait_since; /* first seen waiting for wait_tick; 0: no */
	uint64_t wait_tick;  /* the tick it waits for then */
};

struct sc_watchdog {
	struct sc_exec *ex;	   /* watched; outlives us */
	struct sc_watchdog_opts o; /* with the defaults filled in */
	pthread_t thread;	   /* the monitor */
	pthread_mutex_t mu;	   /* guards stop; the cvs' mutex */
	pthread_cond_t tick_cv;	   /* the monitor sleeps here */
	pthread_cond_t report_cv;  /* sc_watchdog_wait sleeps here */
	bool stop;		   /* destroy asked the monitor to leave */
	_Atomic uint64_t count[SC_WATCHDOG_KINDS];	/* delivered */
	_Atomic uint64_t suppressed[SC_WATCHDOG_KINDS]; /* rate-limited */
	_Atomic uint64_t checks;			/* snapshots taken */
	_Atomic uint64_t condemned;			/* turns condemned */

	/* Monitor thread only, from here on. */
	pthread_t monitor;		/* the monitor, as it sees itself */
	struct sc_exec_info info;	/* this check's figures */
	struct sc_exec_unit_info *snap; /* this check's snapshot */
	size_t n;			/* units in snap */
	size_t cap;			/* room in snap and memo */
	struct wd_memo *memo;		/* per unit, by id */
	struct wd_memo pool;		/* NO_PROGRESS, TIMEOUT */
	uint64_t start_ns;		/* when watching began */
	uint64_t last_turns;		/* turns_finished at the last change */
	uint64_t progress_since;	/* when it last changed, or was idle */
	bool timed_out;			/* TIMEOUT already reported */
	char *dump;			/* this check's dump, built lazily */
	size_t dump_cap;		/* room in dump */
	bool dump_fresh;		/* dump describes this check */
};

const char *
sc_watchdog_kind_name(enum sc_watchdog_kind k)
{
	switch (k) {
	case SC_WATCHDOG_STALL:
		return "STALL";
	case SC_WATCHDOG_STARVATION:
		return "STARVATION";
	case SC_WATCHDOG_LOST_KICK:
		return "LOST_KICK";
	case SC_WATCHDOG_NO_PROGRESS:
		return "NO_PROGRESS";
	case SC_WATCHDOG_TIMEOUT:
		return "TIMEOUT";
	case SC_WATCHDOG_FRONTIER:
		return "FRONTIER";
	case SC_WATCHDOG_KINDS:
		break;
	}
	return "?";
}

static uint64_t
since(uint64_t then, uint64_t now)
{
	return now > then ? now - then : 0;
}

/* --- the dump ------------------------------------------------------------ */

/* Append to buf like snprintf, tracking the length the whole text needs. */
__attribute__((format(printf, 4, 5))) static void
put(char *buf, size_t size, size_t *len, const char *fmt, ...)
{
	va_list ap;
	int k;

	va_start(ap, fmt);
	k = vsnprintf(*len < size ? buf + *len : NULL,
		      *len < size ? size - *len : 0, fmt, ap);
	va_end(ap);
	if (k > 0)
		*len += (size_t)k;
}

static void
put_unit(char *buf, size_t size, size_t *len, const struct sc_exec_unit_info *u,
	 uint64_t now)
{
	put(buf, size, len, "  #%-3" PRIu32 " %-20s %s", u->id, u->name,
	    sc_unit_state_name(u->state));
	if (u->state == SC_UNIT_QUEUED)
		put(buf, size, len, " for %" PRIu64 " ms",
		    since(u->queued_since_ns, now) / MS);
	if (u->state == SC_UNIT_RUNNING || u->state == SC_UNIT_RUNNING_KICKED)
		put(buf, size, len, " on worker %" PRId32 " for %" PRIu64 " ms",
		    u->worker, since(u->running_since_ns, now) / MS);
	put(buf, size, len,
	    ", turns %" PRIu64 ", kicks %" PRIu64 ", progress %" PRIu64 "%s\n",
	    u->turns, u->kicks, u->progress,
	    u->has_pending ? " PENDING-INPUT" : "");
}

static size_t
format_dump(char *buf, size_t size, const struct sc_exec_info *info,
	    const struct sc_exec_unit_info *snap, size_t n, uint64_t now)
{
	size_t len = 0;

	if (size)
		buf[0] = '\0';
	put(buf, size, &len,
	    "executor: %" PRIu32 " units, %" PRIu32 " workers live, %" PRIu32
	    " running, %" PRIu32 " queued, %" PRIu64 " turns finished, %" PRIu32
	    " panics, %s%s\n",
	    info->units, info->workers_live, info->running, info->queue_len,
	    info->turns_finished, info->panics, info->idle ? "idle" : "busy",
	    info->shutdown ? ", shut down" : "");
	for (size_t i = 0; i < n; i++)
		put_unit(buf, size, &len, &snap[i], now);
	return len;
}

size_t
sc_watchdog_dump(struct sc_exec *ex, char *buf, size_t size)
{
	struct sc_exec_unit_info *snap = NULL;
	struct sc_exec_info info;
	size_t n = 0, want, len;

	if (!buf)
		size = 0;
	if (size)
		buf[0] = '\0';
	if (!ex)
		return 0;
	/* Units may be added between the two calls: take what fits. */
	want = sc_exec_snapshot(ex, NULL, 0) + 8;
	snap = calloc(want, sizeof(*snap));
	if (snap)
		n = sc_exec_snapshot(ex, snap, want);
	if (n > want)
		n = want;
	sc_exec_info(ex, &info);
	len = format_dump(buf, size, &info, snap, n, sc_exec_now_ns());
	free(snap);
	return len;
}

/* --- reporting ----------------------------------------------------------- */

static void
print_report(const struct sc_watchdog_report *r, void *arg)
{
	(void)arg;
	(void)fprintf(stderr, "sc watchdog: %s: %s",
		      sc_watchdog_kind_name(r->kind), r->message);
	if (r->suppressed)
		(void)fprintf(stderr,
			      " (%" PRIu64 " more since the last report)",
			      r->suppressed);
	(void)fprintf(stderr, "\n%s", r->dump);
}

/* The dump of this check, formatted once, however many reports it has. */
static const char *
check_dump(struct sc_watchdog *wd, uint64_t now)
{
	size_t need;
	char *grown;

	if (wd->dump_fresh)
		return wd->dump;
	need = format_dump(wd->dump, wd->dump_cap, &wd->info, wd->snap, wd->n,
			   now) +
	       1;
	if (need > wd->dump_cap) {
		grown = realloc(wd->dump, need);
		if (!grown)
			return wd->dump ? wd->dump
					: "(no memory for the dump)\n";
		wd->dump = grown;
		wd->dump_cap = need;
		(void)format_dump(wd->dump, wd->dump_cap, &wd->info, wd->snap,
				  wd->n, now);
	}
	wd->dump_fresh = true;
	return wd->dump;
}

/* Deliver r (kind, unit, name, worker, duration, turns, kicks and message
 * set) unless the rate limit for (kind, memo) drops it. */
static void
emit(struct sc_watchdog *wd, struct wd_memo *m, struct sc_watchdog_report *r,
     uint64_t now)
{
	unsigned k = r->kind;

	SC_ASSERT(k < SC_WATCHDOG_KINDS);
	if (m->last_report[k] &&
	    since(m->last_report[k], now) < wd->o.rate_limit_ns) {
		m->suppressed[k]++;
		atomic_fetch_add(&wd->suppressed[k], 1);
		return;
	}
	m->last_report[k] = now;
	r->suppressed = m->suppressed[k];
	m->suppressed[k] = 0;
	r->dump = check_dump(wd, now);
	wd->o.report(r, wd->o.report_arg);
	/* Counted after the callback, so a test that waits on the count sees
	 * what its callback recorded. */
	atomic_fetch_add(&wd->count[k], 1);
	pthread_mutex_lock(&wd->mu);
	pthread_cond_broadcast(&wd->report_cv);
	pthread_mutex_unlock(&wd->mu);
}

/* Under the kill policy, condemn u's running turn once. The call is made
 * even when the report is then rate-limited: the limit is on words, not on
 * the policy. True when the hook accepted it just now. */
static bool
condemn(struct sc_watchdog *wd, const struct sc_exec_unit_info *u,
	const char *why)
{
	struct wd_memo *m = &wd->memo[u->id];

	if (wd->o.policy != SC_WATCHDOG_KILL_STALLED ||
	    m->condemned == u->turns + 1)
		return false;
	m->condemned = u->turns + 1; /* once per turn, whatever the answer */
	if (wd->o.condemn(wd->ex, u->id, u->turns, why, wd->o.condemn_arg))
		return false;
	atomic_fetch_add(&wd->condemned, 1);
	return true;
}

/* What u's running turn does, through the doing hook (watchdog.h, "What
 * a stalled turn does"); false without a hook or an answer. */
static bool
stall_doing(struct sc_watchdog *wd, const struct sc_exec_unit_info *u,
	    char *buf, size_t size)
{
	if (!wd->o.doing)
		return false;
	buf[0] = '\0';
	if (!wd->o.doing(wd->o.doing_arg, u->id, buf, size))
		return false;
	buf[size - 1] = '\0';
	return buf[0] != '\0';
}

static void
report_unit(struct sc_watchdog *wd, enum sc_watchdog_kind kind,
	    const struct sc_exec_unit_info *u, uint64_t dur, uint64_t limit,
	    uint64_t now, const struct sc_watchdog_wait *w)
{
	struct sc_watchdog_report r = {
	    .kind = kind,
	    .unit = u->id,
	    .worker = u->worker,
	    .duration_ns = dur,
	    .turns = u->turns,
	    .kicks = u->kicks,
	    .wait = w,
	};
	char msg[400 + SC_WATCHDOG_DOING_MAX];
	char doing[SC_WATCHDOG_DOING_MAX];

	memcpy(r.name, u->name, sizeof(r.name));
	r.name[sizeof(r.name) - 1] = '\0';
	switch (kind) {
	case SC_WATCHDOG_STALL:
		(void)snprintf(msg, sizeof(msg),
			       "unit #%" PRIu32 " '%s' on worker %" PRId32
			       ": turn running for %" PRIu64
			       " ms, past its %" PRIu64 " ms deadline",
			       u->id, r.name, u->worker, dur / MS, limit / MS);
		if (stall_doing(wd, u, doing, sizeof(doing))) {
			r.doing = doing;
			(void)snprintf(msg + strlen(msg),
				       sizeof(msg) - strlen(msg), ", %s",
				       doing);
		}
		break;
	case SC_WATCHDOG_STARVATION:
		(void)snprintf(msg, sizeof(msg),
			       "unit #%" PRIu32 " '%s': queued for %" PRIu64
			       " ms, longer than %" PRIu64 " ms",
			       u->id, r.name, dur / MS, limit / MS);
		break;
	case SC_WATCHDOG_FRONTIER:
		(void)snprintf(msg, sizeof(msg),
			       "unit #%" PRIu32 " '%s' waits for tick %" PRIu64
			       " on edge %s (frontier %" PRIu64
			       ": ticks below it complete) for %" PRIu64
			       " ms, past its %" PRIu64 " ms deadline",
			       u->id, r.name, w->tick, w->edge, w->frontier,
			       dur / MS, limit / MS);
		break;
	default:
		(void)snprintf(msg, sizeof(msg),
			       "unit #%" PRIu32 " '%s': IDLE with pending input"
			       " for %" PRIu64 " ms and nothing kicked it: a "
			       "lost kick",
			       u->id, r.name, dur / MS);
		break;
	}
	(void)snprintf(msg + strlen(msg), sizeof(msg) - strlen(msg),
		       " (turns %" PRIu64 ", kicks %" PRIu64 ")", u->turns,
		       u->kicks);
	if (kind == SC_WATCHDOG_STALL && condemn(wd, u, msg))
		(void)snprintf(msg + strlen(msg), sizeof(msg) - strlen(msg),
			       "; condemned: it dies when this turn returns");
	r.message = msg;
	emit(wd, &wd->memo[u->id], &r, now);
}

static void
report_pool(struct sc_watchdog *wd, enum sc_watchdog_kind kind, uint64_t dur,
	    uint64_t now)
{
	struct sc_watchdog_report r = {
	    .kind = kind,
	    .unit = SC_WATCHDOG_POOL,
	    .name = "pool",
	    .worker = -1,
	    .duration_ns = dur,
	    .turns = wd->info.turns_finished,
	};
	char msg[256];

	if (kind == SC_WATCHDOG_NO_PROGRESS)
		(void)snprintf(
		    msg, sizeof(msg),
		    "pool: not idle (%" PRIu32 " queued, %" PRIu32
		    " running, %" PRIu32 " workers live) and no "
		    "turn finished for %" PRIu64 " ms (turns %" PRIu64 ")",
		    wd->info.queue_len, wd->info.running, wd->info.workers_live,
		    dur / MS, wd->info.turns_finished);
	else
		(void)snprintf(
		    msg, sizeof(msg),
		    "pool: its %" PRIu64 " ms deadline passed (%" PRIu64
		    " ms watched; executor %s, turns %" PRIu64 ")",
		    wd->o.timeout_ns / MS, dur / MS,
		    wd->info.idle ? "idle" : "busy", wd->info.turns_finished);
	r.message = msg;
	emit(wd, &wd->pool, &r, now);
}

/* --- the checks ---------------------------------------------------------- */

static bool
over(uint64_t dur, uint64_t limit)
{
	return limit != SC_WATCHDOG_OFF && dur >= limit;
}

static void
check_lost_kick(struct sc_watchdog *wd, const struct sc_exec_unit_info *u,
		uint64_t now)
{
	struct wd_memo *m = &wd->memo[u->id];

	if (u->state != SC_UNIT_IDLE || !u->has_pending) {
		m->pend_since = 0;
		return;
	}
	/* Pending input is transiently normal: only the same idle spell,
	 * with no turn and no kick since it was first seen, counts. */
	if (!m->pend_since || m->pend_turns != u->turns ||
	    m->pend_kicks != u->kicks) {
		m->pend_since = now;
		m->pend_turns = u->turns;
		m->pend_kicks = u->kicks;
		return;
	}
	if (over(since(m->pend_since, now), wd->o.lost_kick_ns))
		report_unit(wd, SC_WATCHDOG_LOST_KICK, u,
			    since(m->pend_since, now), wd->o.lost_kick_ns, now,
			    NULL);
}

/* A unit waiting for the same tick at every check since wait_since (see
 * watchdog.h, Frontiers). A running unit is skipped, neither reported nor
 * reset: its turn may be a short one that leaves it waiting as before. */
static void
check_frontier(struct sc_watchdog *wd, const struct sc_exec_unit_info *u,
	       uint64_t now)
{
	struct wd_memo *m = &wd->memo[u->id];
	struct sc_watchdog_wait w;

	if (!wd->o.waits || wd->o.frontier_ns == SC_WATCHDOG_OFF ||
	    u->state == SC_UNIT_RUNNING || u->state == SC_UNIT_RUNNING_KICKED)
		return;
	memset(&w, 0, sizeof(w));
	if (u->state == SC_UNIT_DEAD ||
	    !wd->o.waits(wd->o.waits_arg, u->id, &w)) {
		m->wait_since = 0;
		return;
	}
	w.edge[sizeof(w.edge) - 1] = '\0';
	if (!m->wait_since || m->wait_tick != w.tick) {
		m->wait_since = now;
		m->wait_tick = w.tick;
		return;
	}
	if (over(since(m->wait_since, now), wd->o.frontier_ns))
		report_unit(wd, SC_WATCHDOG_FRONTIER, u,
			    since(m->wait_since, now), wd->o.frontier_ns, now,
			    &w);
}

static void
check_unit(struct sc_watchdog *wd, const struct sc_exec_unit_info *u,
	   uint64_t now)
{
	uint64_t d;

	SC_ASSERT(u->id < wd->cap); /* its memo exists */
	check_lost_kick(wd, u, now);
	check_frontier(wd, u, now);
	if (u->state == SC_UNIT_RUNNING || u->state == SC_UNIT_RUNNING_KICKED) {
		d = since(u->running_since_ns, now);
		if (over(d, wd->o.stall_ns))
			report_unit(wd, SC_WATCHDOG_STALL, u, d, wd->o.stall_ns,
				    now, NULL);
	} else if (u->state == SC_UNIT_QUEUED) {
		d = since(u->queued_since_ns, now);
		if (over(d, wd->o.starve_ns))
			report_unit(wd, SC_WATCHDOG_STARVATION, u, d,
				    wd->o.starve_ns, now, NULL);
	}
}

static void
check_pool(struct sc_watchdog *wd, uint64_t now)
{
	const struct sc_exec_info *in = &wd->info;

	if (in->idle || in->turns_finished != wd->last_turns) {
		wd->last_turns = in->turns_finished;
		wd->progress_since = now;
	} else if (over(since(wd->progress_since, now), wd->o.no_progress_ns)) {
		report_pool(wd, SC_WATCHDOG_NO_PROGRESS,
			    since(wd->progress_since, now), now);
	}
	if (!wd->timed_out && wd->o.timeout_ns &&
	    over(since(wd->start_ns, now), wd->o.timeout_ns)) {
		wd->timed_out = true;
		report_pool(wd, SC_WATCHDOG_TIMEOUT, since(wd->start_ns, now),
			    now);
	}
}

/* Take the snapshot into wd->snap, growing it (and the memo, zeroed for
 * the new units) as units are added. Returns false without memory. */
static bool
take_snapshot(struct sc_watchdog *wd)
{
	size_t n = sc_exec_snapshot(wd->ex, wd->snap, wd->cap);
	size_t cap = wd->cap;
	void *p;

	while (n > cap) {
		cap = n + n / 2 + 8;
		p = realloc(wd->snap, cap * sizeof(*wd->snap));
		if (!p)
			return false;
		wd->snap = p;
		p = realloc(wd->memo, cap * sizeof(*wd->memo));
		if (!p)
			return false;
		wd->memo = p;
		memset(wd->memo + wd->cap, 0,
		       (cap - wd->cap) * sizeof(*wd->memo));
		wd->cap = cap;
		n = sc_exec_snapshot(wd->ex, wd->snap, wd->cap);
	}
	wd->n = n;
	SC_ASSERT(wd->n <= wd->cap);
	return true;
}

static void
check(struct sc_watchdog *wd)
{
	uint64_t now;

	SC_ASSERT(pthread_equal(pthread_self(), wd->monitor));
	sc_exec_info(wd->ex, &wd->info);
	if (!take_snapshot(wd))
		return; /* no memory this time; look again next period */
	now = sc_exec_now_ns();
	wd->dump_fresh = false;
	for (size_t i = 0; i < wd->n; i++)
		check_unit(wd, &wd->snap[i], now);
	check_pool(wd, now);
	atomic_fetch_add(&wd->checks, 1);
}

static void *
monitor_main(void *arg)
{
	struct sc_watchdog *wd = arg;
	struct timespec ts;

	/* Not wd->thread: pthread_create may store that after we start. */
	wd->monitor = pthread_self();
	(void)pthread_setname_np(wd->monitor, "sc-watchdog");
	pthread_mutex_lock(&wd->mu);
	while (!wd->stop) {
		sc__clock_deadline(&ts, wd->o.period_ns);
		while (!wd->stop &&
		       pthread_cond_timedwait(&wd->tick_cv, &wd->mu, &ts) !=
			   ETIMEDOUT)
			;
		if (wd->stop)
			break;
		pthread_mutex_unlock(&wd->mu);
		check(wd);
		pthread_mutex_lock(&wd->mu);
	}
	pthread_mutex_unlock(&wd->mu);
	return NULL;
}

/* --- create / destroy ---------------------------------------------------- */

static uint64_t
or_default(uint64_t v, uint64_t dflt)
{
	return v ? v : dflt;
}

/* The kill policy's default hook: the executor's own (its arg unused). */
static int
exec_condemn(struct sc_exec *ex, uint32_t id, uint64_t turns, const char *why,
	     void *arg)
{
	(void)arg;
	return sc_exec_condemn(ex, id, turns, why);
}

static int
fill_opts(struct sc_watchdog_opts *o, const struct sc_watchdog_opts *in)
{
	if (in)
		*o = *in;
	else
		memset(o, 0, sizeof(*o));
	if (o->policy == SC_WATCHDOG_KILL_STALLED && !o->condemn)
		o->condemn = exec_condemn;
	if (o->policy != SC_WATCHDOG_REPORT &&
	    o->policy != SC_WATCHDOG_KILL_STALLED)
		return sc__fail(SC_EINVAL, "sc_watchdog_create: policy %d",
				(int)o->policy);
	o->period_ns = or_default(o->period_ns, 10 * MS);
	if (o->period_ns == SC_WATCHDOG_OFF)
		return sc__fail(SC_EINVAL,
				"sc_watchdog_create: the period cannot be off");
	o->stall_ns = or_default(o->stall_ns, 1000 * MS);
	o->starve_ns = or_default(o->starve_ns, 1000 * MS);
	o->lost_kick_ns = or_default(o->lost_kick_ns, 250 * MS);
	o->no_progress_ns = or_default(o->no_progress_ns, 1000 * MS);
	o->rate_limit_ns = or_default(o->rate_limit_ns, 1000 * MS);
	/* A unit's wait has the deadline of a turn unless told otherwise. */
	o->frontier_ns = or_default(o->frontier_ns, o->stall_ns);
	if (!o->report)
		o->report = print_report;
	return 0;
}

static int
init_sync(struct sc_watchdog *wd)
{
	if (pthread_mutex_init(&wd->mu, NULL))
		return SC_ESTATE;
	if (sc__cond_init(&wd->tick_cv))
		goto out_mutex;
	if (sc__cond_init(&wd->report_cv))
		goto out_tick;
	return 0;
out_tick:
	pthread_cond_destroy(&wd->tick_cv);
out_mutex:
	pthread_mutex_destroy(&wd->mu);
	return SC_ESTATE;
}

static void
fini_sync(struct sc_watchdog *wd)
{
	pthread_cond_destroy(&wd->report_cv);
	pthread_cond_destroy(&wd->tick_cv);
	pthread_mutex_destroy(&wd->mu);
}

int
sc_watchdog_create(struct sc_exec *ex, const struct sc_watchdog_opts *opts,
		   struct sc_watchdog **out)
{
	struct sc_watchdog_opts o;
	struct sc_watchdog *wd;
	int rc;

	if (!ex || !out)
		return sc__fail(SC_EINVAL, "sc_watchdog_create: NULL %s",
				ex ? "out" : "executor");
	rc = fill_opts(&o, opts);
	if (rc)
		return rc;
	wd = calloc(1, sizeof(*wd));
	if (!wd)
		return sc__fail(SC_ENOMEM, "sc_watchdog_create: no memory");
	wd->ex = ex;
	wd->o = o;
	wd->start_ns = sc_exec_now_ns();
	wd->progress_since = wd->start_ns;
	if (init_sync(wd)) {
		rc = sc__fail(SC_ESTATE, "sc_watchdog_create: mutex/condvar");
		goto fail_alloc;
	}
	if (pthread_create(&wd->thread, NULL, monitor_main, wd)) {
		rc = sc__fail(SC_ESTATE, "sc_watchdog_create: no thread");
		goto fail_sync;
	}
	*out = wd;
	return 0;
fail_sync:
	fini_sync(wd);
fail_alloc:
	free(wd);
	return rc;
}

int
sc_watchdog_destroy(struct sc_watchdog *wd)
{
	if (!wd)
		return 0;
	pthread_mutex_lock(&wd->mu);
	wd->stop = true;
	pthread_cond_signal(&wd->tick_cv);
	pthread_mutex_unlock(&wd->mu);
	(void)pthread_join(wd->thread, NULL);
	fini_sync(wd);
	free(wd->snap);
	free(wd->memo);
	free(wd->dump);
	free(wd);
	return 0;
}

/* --- counters ------------------------------------------------------------ */

uint64_t
sc_watchdog_count(const struct sc_watchdog *wd, enum sc_watchdog_kind k)
{
	if (!wd || (unsigned)k >= SC_WATCHDOG_KINDS)
		return 0;
	return atomic_load(&wd->count[k]);
}

uint64_t
sc_watchdog_suppressed(const struct sc_watchdog *wd, enum sc_watchdog_kind k)
{
	if (!wd || (unsigned)k >= SC_WATCHDOG_KINDS)
		return 0;
	return atomic_load(&wd->suppressed[k]);
}

uint64_t
sc_watchdog_condemned(const struct sc_watchdog *wd)
{
	return wd ? atomic_load(&wd->condemned) : 0;
}

uint64_t
sc_watchdog_checks(const struct sc_watchdog *wd)
{
	return wd ? atomic_load(&wd->checks) : 0;
}

int
sc_watchdog_wait(struct sc_watchdog *wd, enum sc_watchdog_kind k, uint64_t n,
		 uint64_t timeout_ns)
{
	struct timespec ts;
	int rc = 0;

	if (!wd || (unsigned)k >= SC_WATCHDOG_KINDS)
		return sc__fail(SC_EINVAL, "sc_watchdog_wait: kind %d", (int)k);
	sc__clock_deadline(&ts, timeout_ns);
	pthread_mutex_lock(&wd->mu);
	while (atomic_load(&wd->count[k]) < n && rc != ETIMEDOUT)
		rc = pthread_cond_timedwait(&wd->report_cv, &wd->mu, &ts);
	pthread_mutex_unlock(&wd->mu);
	if (atomic_load(&wd->count[k]) >= n)
		return 0;
	return sc__fail(SC_ETIMEDOUT,
			"sc_watchdog_wait: %" PRIu64 " of %" PRIu64
			" %s reports after %" PRIu64 " ms",
			atomic_load(&wd->count[k]), n, sc_watchdog_kind_name(k),
			timeout_ns / MS);
}

/*
 * settle.c - the settle check as a library call (see settle.h).
 */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS */
#include "units/settle.h"

#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "operators/base.h"
#include "operators/circuit.h"
#include "operators/schema.h"
#include "runtime/panic.h"
#include "runtime/watchdog.h"

#define SETTLE_MAX_UNITS   64
#define SETTLE_MAX_STEPS   2000000ull
#define SETTLE_TIMEOUT_NS  10000000000ull
#define SETTLE_ROW_TEXT	   160	       /* a row as text in a message */
#define SETTLE_STALL_NS	   20000000ull /* the default stall threshold */
#define SETTLE_BURST_HOSTS 4u	       /* host threads of a pool burst */

struct sc_settle_work {
	struct sc_graph *g;	      /* borrowed */
	struct sc_settle_step *steps; /* batches retained */
	size_t n;
	unsigned flags;
	int outputs[SC_SETTLE_MAX_OUTPUTS]; /* output nodes, id order */
	size_t nout;
	struct sc_batch *expect[SC_SETTLE_MAX_OUTPUTS]; /* the reference */
	bool single_failed; /* the reference hit an injected fault */
	/* tick works: the host ticks of steps[], and the reference's ticks
	 * and deltas, want[k * want_ticks + t] (NULL: empty) */
	size_t nticks;
	size_t want_ticks;
	struct sc_batch **want;
};

static bool
is_tick(const struct sc_settle_step *s)
{
	return s->input == SC_SETTLE_TICK && !s->batch;
}

/* The ticks of steps[0..n): its boundaries, and a trailing tick. */
static size_t
count_ticks(const struct sc_settle_step *steps, size_t n)
{
	size_t t = 0;

	for (size_t i = 0; i < n; i++)
		t += is_tick(&steps[i]);
	return t + (n > 0 && !is_tick(&steps[n - 1]));
}

/* --- the work ------------------------------------------------------------- */

static int
work_find_outputs(struct sc_settle_work *w)
{
	size_t n = sc_graph_node_count(w->g);

	for (size_t i = 0; i < n; i++) {
		struct sc_node_info ni;

		if (sc_graph_node_info(w->g, (int)i, &ni) != 0 ||
		    ni.kind != SC_NODE_OUTPUT || ni.stream)
			continue; /* a stream output has no integral */
		if (w->nout == SC_SETTLE_MAX_OUTPUTS)
			return sc__fail(SC_EINVAL,
					"settle: more than %d outputs",
					SC_SETTLE_MAX_OUTPUTS);
		w->outputs[w->nout++] = (int)i;
	}
	return 0;
}

static int
check_steps(const struct sc_settle_step *steps, size_t n, bool ticks,
	    const char *who)
{
	if (n > 0 && !steps)
		return sc__fail(SC_EINVAL, "%s: NULL steps", who);
	for (size_t i = 0; i < n; i++)
		if (is_tick(&steps[i]) && !ticks)
			return sc__fail(SC_EINVAL,
					"%s: step %zu is a tick boundary in "
					"a work without SC_SETTLE_TICKS",
					who, i);
		else if (!steps[i].batch && !is_tick(&steps[i]))
			return sc__fail(SC_EINVAL, "%s: step %zu has no batch",
					who, i);
	return 0;
}

/* The single circuit of the whole graph fed steps[0..n), one step each:
 * every output's integral into expect[] (all or none). *faulted when an
 * injected fault stopped it (flags has SC_SETTLE_FAULTS). */
static int
single_run(struct sc_settle_work *w, const struct sc_settle_step *steps,
	   size_t n, struct sc_batch **expect, bool *faulted)
{
	struct sc_circuit *c = NULL;
	size_t got = 0;
	int rc = sc_circuit_create(w->g, &c);

	/* The reference keeps every state (no lateness cleanup), so that a
	 * placed run with cleanup on or off is held to the integral kept
	 * whole (operators/waterline.h, "Why exact"). */
	if (!rc)
		(void)sc_circuit_set_cleanup(c, false);
	*faulted = false;
	for (size_t i = 0; i < n && !rc; i++) {
		rc = sc_circuit_feed(c, steps[i].input, steps[i].batch);
		if (!rc)
			rc = sc_circuit_step(c);
		/* What a node carried past int64 (circuit.h). */
		while (!rc && sc_circuit_carried(c))
			rc = sc_circuit_step(c);
	}
	if (rc == SC_ECALLBACK && (w->flags & SC_SETTLE_FAULTS)) {
		*faulted = true;
		rc = 0;
	}
	for (; got < w->nout && !rc && !*faulted; got++)
		rc = sc_circuit_integral(c, w->outputs[got], &expect[got]);
	if (rc)
		while (got-- > 0)
			sc_batch_release(expect[got]);
	sc_circuit_destroy(c);
	return rc;
}

/* The single circuit stepped once per tick of steps[0..n) (tick works):
 * every output's delta at every tick into *want (nout * *ticks, NULL for
 * an empty one) and its integral after the last into expect[]. */
static int
single_ticks(struct sc_settle_work *w, const struct sc_settle_step *steps,
	     size_t n, struct sc_batch **expect, struct sc_batch ***want,
	     size_t *ticks)
{
	size_t nt = count_ticks(steps, n), t = 0, got = 0;
	struct sc_batch **d =
	    calloc(w->nout * nt + 1, sizeof(struct sc_batch *));
	struct sc_circuit *c = NULL;
	int rc = d ? sc_circuit_create(w->g, &c) : SC_ENOMEM;

	if (!rc) /* as single_run: every state kept */
		(void)sc_circuit_set_cleanup(c, false);
	for (size_t i = 0; i <= n && t < nt && !rc; i++) {
		if (i < n && !is_tick(&steps[i])) {
			rc = sc_circuit_feed(c, steps[i].input, steps[i].batch);
			continue;
		}
		if (i == n && n > 0 && is_tick(&steps[n - 1]))
			break; /* no trailing tick */
		rc = sc_circuit_step(c);
		for (size_t k = 0; k < w->nout && !rc; k++) {
			struct sc_batch **slot = &d[k * nt + t];

			rc = sc_circuit_delta(c, w->outputs[k], slot);
			if (!rc && sc_batch_count(*slot) == 0) {
				sc_batch_release(*slot);
				*slot = NULL;
			}
		}
		t++;
	}
	for (; got < w->nout && !rc; got++)
		rc = sc_circuit_integral(c, w->outputs[got], &expect[got]);
	if (rc) {
		while (got-- > 0)
			sc_batch_release(expect[got]);
		for (size_t k = 0; d && k < w->nout * nt; k++)
			sc_batch_release(d[k]);
		free(d);
		d = NULL;
	}
	sc_circuit_destroy(c);
	*want = d;
	*ticks = nt;
	return rc;
}

static void
work_release_expect(struct sc_settle_work *w)
{
	for (size_t i = 0; i < w->nout; i++) {
		sc_batch_release(w->expect[i]);
		w->expect[i] = NULL;
	}
	for (size_t k = 0; w->want && k < w->nout * w->want_ticks; k++)
		sc_batch_release(w->want[k]);
	free(w->want);
	w->want = NULL;
	w->want_ticks = 0;
}

int
sc_settle_work_reference(struct sc_settle_work *w,
			 const struct sc_settle_step *steps, size_t n)
{
	struct sc_batch *expect[SC_SETTLE_MAX_OUTPUTS] = {0};
	struct sc_batch **want = NULL;
	size_t want_ticks = 0;
	bool faulted = false, ticks;
	int rc;

	if (!w)
		return sc__fail(SC_EINVAL, "sc_settle_work_reference: NULL");
	ticks = (w->flags & SC_SETTLE_TICKS) != 0;
	if ((rc = check_steps(steps, n, ticks, "sc_settle_work_reference")) !=
	    0)
		return rc;
	rc = ticks ? single_ticks(w, steps, n, expect, &want, &want_ticks)
		   : single_run(w, steps, n, expect, &faulted);
	if (rc)
		return rc;
	work_release_expect(w);
	memcpy(w->expect, expect, sizeof(expect));
	w->want = want;
	w->want_ticks = want_ticks;
	w->single_failed = faulted;
	return 0;
}

/* A work with room for n steps and its outputs found, no reference yet;
 * NULL with *rc on failure. */
static struct sc_settle_work *
work_alloc(struct sc_graph *g, size_t n, unsigned flags, int *rc)
{
	struct sc_settle_work *w;

	if (!g) {
		*rc = sc__fail(SC_EINVAL, "settle: NULL graph");
		return NULL;
	}
	if (flags & ~(SC_SETTLE_FAULTS | SC_SETTLE_TICKS)) {
		*rc = sc__fail(SC_EINVAL, "settle: unknown flags %#x", flags);
		return NULL;
	}
	if ((flags & SC_SETTLE_FAULTS) && (flags & SC_SETTLE_TICKS)) {
		*rc = sc__fail(SC_EINVAL, "settle: SC_SETTLE_FAULTS with "
					  "SC_SETTLE_TICKS (a dead unit "
					  "leaves its ticks partial)");
		return NULL;
	}
	*rc = SC_ENOMEM;
	w = calloc(1, sizeof(*w));
	if (!w)
		return NULL;
	w->g = g;
	w->flags = flags;
	/* room for a trailing tick's boundary */
	w->steps = calloc(n + 1, sizeof(*w->steps));
	if (!w->steps) {
		free(w);
		return NULL;
	}
	if ((*rc = work_find_outputs(w)) != 0) {
		sc_settle_work_destroy(w);
		return NULL;
	}
	return w;
}

/* Compute the reference of a filled work; destroy it on failure. */
static int
work_finish(struct sc_settle_work *w, struct sc_settle_work **out)
{
	int rc;

	if ((w->flags & SC_SETTLE_TICKS) && w->n > 0 &&
	    !is_tick(&w->steps[w->n - 1]))
		w->steps[w->n++] =
		    (struct sc_settle_step){SC_SETTLE_TICK, NULL};
	w->nticks = count_ticks(w->steps, w->n);
	rc = sc_settle_work_reference(w, w->steps, w->n);

	if (rc) {
		sc_settle_work_destroy(w);
		return rc;
	}
	*out = w;
	return 0;
}

int
sc_settle_work_create(struct sc_graph *g, const struct sc_settle_step *steps,
		      size_t n, unsigned flags, struct sc_settle_work **out)
{
	struct sc_settle_work *w;
	int rc;

	if (!out)
		return sc__fail(SC_EINVAL, "sc_settle_work_create: NULL out");
	if ((rc = check_steps(steps, n, (flags & SC_SETTLE_TICKS) != 0,
			      "sc_settle_work_create")) != 0)
		return rc;
	if (!(w = work_alloc(g, n, flags, &rc)))
		return rc;
	for (; w->n < n; w->n++) {
		w->steps[w->n].input = steps[w->n].input;
		w->steps[w->n].batch = sc_batch_retain(steps[w->n].batch);
	}
	return work_finish(w, out);
}

int
sc_settle_work_generate(struct sc_graph *g, sc_settle_gen_fn gen, void *ctx,
			size_t n, unsigned flags, struct sc_settle_work **out)
{
	struct sc_settle_work *w;
	int rc;

	if (!gen || !out)
		return sc__fail(SC_EINVAL,
				"sc_settle_work_generate: NULL gen or out");
	if (!(w = work_alloc(g, n, flags, &rc)))
		return rc;
	for (; w->n < n; w->n++) {
		struct sc_settle_step s = {.input = -2, .batch = NULL};

		rc = gen(ctx, w->n, &s);
		if (!rc && is_tick(&s) && !(flags & SC_SETTLE_TICKS))
			rc = sc__fail(SC_EINVAL,
				      "sc_settle_work_generate: step %zu is a "
				      "tick boundary in a work without "
				      "SC_SETTLE_TICKS",
				      w->n);
		else if (!rc && !s.batch && !is_tick(&s))
			rc = sc__fail(SC_EINVAL,
				      "sc_settle_work_generate: step %zu "
				      "has no batch",
				      w->n);
		if (rc) {
			sc_batch_release(s.batch);
			sc_settle_work_destroy(w);
			return rc;
		}
		w->steps[w->n] = s;
	}
	return work_finish(w, out);
}

void
sc_settle_work_destroy(struct sc_settle_work *w)
{
	if (!w)
		return;
	for (size_t i = 0; i < w->n; i++)
		sc_batch_release(w->steps[i].batch);
	work_release_expect(w);
	free(w->steps);
	free(w);
}

struct sc_graph *
sc_settle_work_graph(const struct sc_settle_work *w)
{
	return w->g;
}

size_t
sc_settle_work_steps(const struct sc_settle_work *w)
{
	return w->n;
}

int
sc_settle_work_step(const struct sc_settle_work *w, size_t i,
		    struct sc_settle_step *out)
{
	if (!w || !out || i >= w->n)
		return sc__fail(SC_EINVAL, "sc_settle_work_step: NULL or "
					   "step out of range");
	*out = w->steps[i];
	return 0;
}

size_t
sc_settle_work_outputs(const struct sc_settle_work *w, int *ids, size_t max)
{
	for (size_t i = 0; i < w->nout && i < max; i++)
		ids[i] = w->outputs[i];
	return w->nout;
}

/* --- one run ---------------------------------------------------------------
 */

/* What a run shares between its drivers and its checks. */
struct run {
	const struct sc_settle_work *w;
	const struct sc_settle_opts *o;
	struct sc_settle_result *res;
	struct sc_runtime *rt;
	bool faults; /* SC_SETTLE_FAULTS, or an injected panic */
	/* the injected fault */
	enum sc_settle_fault_kind kind;
	uint64_t at;		/* the step that faults */
	uint64_t stall_ns;	/* STALL: the watchdog's threshold */
	_Atomic uint64_t steps; /* of the fault's unit, so far */
	atomic_uint fired;	/* the fault happened */
	void *page;		/* SEGV: a PROT_NONE page to write to */
	bool alloc_failed;	/* ALLOC: the hook failed an allocation */
	struct sc_watchdog *wd; /* STALL: the watchdog that must report */
	/* tick works: the deltas the outputs reported, got[k * nticks + t]
	 * (under mu: pool workers report at once) */
	bool ticks;
	pthread_mutex_t mu;
	struct sc_batch **got;
	int bad_rc;	   /* a sum failed, or a delta outside the ticks */
	uint64_t bad_tick; /* that delta's tick */
	int bad_node;
};

static void __attribute__((format(printf, 3, 4)))
run_fail(struct run *r, int code, const char *fmt, ...)
{
	va_list ap;

	if (!r->res->ok && r->res->why[0])
		return; /* the first failure is the one to report */
	r->res->ok = false;
	r->res->error = code;
	va_start(ap, fmt);
	(void)vsnprintf(r->res->why, sizeof(r->res->why), fmt, ap);
	va_end(ap);
}

/* A submit's code: true to go on. A dead unit is expected (counted) only
 * with injected faults. */
static bool
run_submitted(struct run *r, int rc, size_t i, uint64_t *dead)
{
	if (rc == SC_EDEAD && r->faults) {
		(*dead)++;
		return true;
	}
	if (rc) {
		run_fail(r, rc, "submit %zu (input node %d): %s", i,
			 r->w->steps[i].input, sc_errmsg());
		return false;
	}
	return true;
}

/* --- injected faults ------------------------------------------------------ */

static const char *const fault_names[SC_SETTLE_FAULT_KINDS] = {
    "none", "panic", "segv", "stall", "slow", "burst", "alloc"};

/* The ALLOC hook: process-wide, as the allocator it fails is; set by the
 * host thread before any run (settle.h). */
static struct sc_settle_alloc_hook alloc_hook;

void
sc_settle_alloc_hook_set(const struct sc_settle_alloc_hook *h)
{
	if (h && h->arm && h->disarm)
		alloc_hook = *h;
	else
		alloc_hook = (struct sc_settle_alloc_hook){0};
}

static bool
alloc_hooked(void)
{
	return alloc_hook.arm != NULL;
}

const char *
sc_settle_fault_name(enum sc_settle_fault_kind k)
{
	return (unsigned)k < SC_SETTLE_FAULT_KINDS ? fault_names[k] : "?";
}

int
sc_settle_fault_parse(const char *name, enum sc_settle_fault_kind *out)
{
	for (unsigned k = 0; name && out && k < SC_SETTLE_FAULT_KINDS; k++) {
		if (strcmp(name, fault_names[k]) != 0)
			continue;
		if (k == SC_SETTLE_FAULT_ALLOC && !alloc_hooked())
			return sc__fail(SC_EINVAL,
					"sc_settle_fault_parse: alloc needs an "
					"allocation hook "
					"(sc_settle_alloc_hook_set), and this "
					"program installed none");
		*out = (enum sc_settle_fault_kind)k;
		return 0;
	}
	return sc__fail(SC_EINVAL,
			"sc_settle_fault_parse: '%s' is not none, panic, segv, "
			"stall, slow, burst or alloc",
			name ? name : "(null)");
}

/* Whether the kind strikes at one step of one unit (a delta callback). */
static bool
fault_in_callback(enum sc_settle_fault_kind k)
{
	return k == SC_SETTLE_FAULT_PANIC || k == SC_SETTLE_FAULT_SEGV ||
	       k == SC_SETTLE_FAULT_STALL;
}

static void
sleep_ns(uint64_t ns)
{
	struct timespec ts = {.tv_sec = (time_t)(ns / 1000000000ull),
			      .tv_nsec = (long)(ns % 1000000000ull)};

	while (nanosleep(&ts, &ts) != 0)
		;
}

/* The delta callback on the fault's node: counts its unit's steps and
 * strikes at step r->at, once. Runs on the worker of the turn. */
static int
fault_on_delta(void *ctx, int node, const struct sc_batch *delta)
{
	struct run *r = ctx;
	uint64_t n = atomic_fetch_add(&r->steps, 1) + 1;

	(void)delta;
	if (n != r->at)
		return 0;
	atomic_store(&r->fired, 1);
	switch (r->kind) {
	case SC_SETTLE_FAULT_PANIC:
		return sc_errorf(SC_ECALLBACK,
				 "settle: injected panic at step %" PRIu64
				 " of node %d",
				 n, node);
	case SC_SETTLE_FAULT_SEGV:
		/* A real fault made by the kernel (si_code > 0), as a bad
		 * pointer in a user callback would make. */
		*(volatile int *)r->page = 1;
		return 0;
	case SC_SETTLE_FAULT_STALL:
		sleep_ns(5 * r->stall_ns);
		/* And on until the watchdog has seen it (at most 100
		 * thresholds more): on a loaded machine its thread may not
		 * run within the 5, and a stall it never saw is not one it
		 * missed. */
		if (r->wd)
			(void)sc_watchdog_wait(r->wd, SC_WATCHDOG_STALL, 1,
					       100 * r->stall_ns);
		return 0;
	default:
		return 0;
	}
}

/* The node the callback watches in unit u: its first that is not an
 * input, else its first; -1 when u holds none. */
static int
fault_node_of(const struct sc_settle_work *w, const struct sc_placement *p,
	      uint32_t u)
{
	size_t n = sc_graph_node_count(w->g);
	int first = -1;

	for (size_t i = 0; i < n; i++) {
		struct sc_node_info ni;

		if (sc_placement_unit_of(p, (int)i) != (int)u)
			continue;
		if (first < 0)
			first = (int)i;
		if (sc_graph_node_info(w->g, (int)i, &ni) == 0 &&
		    ni.kind != SC_NODE_INPUT)
			return (int)i;
	}
	return first;
}

/* Counts the watchdog's reports (sc_watchdog_count); prints nothing. */
static void
fault_report_quiet(const struct sc_watchdog_report *rep, void *arg)
{
	(void)rep;
	(void)arg;
}

/* Arm the fault of opts on the built runtime; 0 or a code with res->why. */
static int
fault_arm(struct run *r, const struct sc_placement *p)
{
	const struct sc_settle_fault *f = &r->o->fault;
	struct sc_settle_result *res = r->res;
	uint32_t nunits = sc_placement_units(p);
	int rc;

	if (!fault_in_callback(r->kind))
		return 0;
	if (f->unit >= 0) {
		res->fault_unit = f->unit;
	} else {
		uint64_t x = r->o->seed ^ 0xfa1170ddULL;

		res->fault_unit = (int32_t)(sc_splitmix_next(&x) % nunits);
	}
	res->fault_node = fault_node_of(r->w, p, (uint32_t)res->fault_unit);
	if (res->fault_node < 0)
		return SC_EINVAL;
	if (r->kind == SC_SETTLE_FAULT_SEGV) {
		void *pg = mmap(NULL, 4096, PROT_NONE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (pg == MAP_FAILED)
			return SC_ENOMEM;
		r->page = pg;
	}
	if (r->kind == SC_SETTLE_FAULT_STALL) {
		struct sc_watchdog_opts wo = {.period_ns = r->stall_ns / 4,
					      .stall_ns = r->stall_ns,
					      .starve_ns = SC_WATCHDOG_OFF,
					      .lost_kick_ns = SC_WATCHDOG_OFF,
					      .no_progress_ns = SC_WATCHDOG_OFF,
					      .report = fault_report_quiet,
					      .waits = sc_runtime_waits};

		wo.waits_arg = r->rt; /* FRONTIER, in tick mode */
		if ((rc = sc_watchdog_create(sc_runtime_exec(r->rt), &wo,
					     &r->wd)) != 0)
			return rc;
	}
	return sc_runtime_on_delta(r->rt, res->fault_node, fault_on_delta, r);
}

/* After the run: count what happened, and check that an injected panic
 * killed its unit and an injected stall was reported. */
static void
fault_check(struct run *r)
{
	struct sc_settle_result *res = r->res;

	/* SLOW and BURST shape the whole run; the others strike once. */
	if (r->kind == SC_SETTLE_FAULT_SLOW ||
	    r->kind == SC_SETTLE_FAULT_BURST ||
	    (fault_in_callback(r->kind) && atomic_load(&r->fired)))
		res->injected[r->kind] = 1;
	if (r->kind == SC_SETTLE_FAULT_ALLOC && r->alloc_failed)
		res->injected[r->kind] = 1;
	if (!res->injected[r->kind] || r->kind == SC_SETTLE_FAULT_NONE)
		return;
	if ((r->kind == SC_SETTLE_FAULT_PANIC ||
	     r->kind == SC_SETTLE_FAULT_SEGV) &&
	    !res->panicked)
		run_fail(r, SC_ESTATE,
			 "an injected %s at step %" PRIu64
			 " of unit %d (node %d) killed no unit",
			 sc_settle_fault_name(r->kind), r->at, res->fault_unit,
			 res->fault_node);
	if (r->kind == SC_SETTLE_FAULT_STALL && r->wd) {
		/* The stall is over; its report may be one period late. */
		(void)sc_watchdog_wait(r->wd, SC_WATCHDOG_STALL, 1,
				       20 * r->stall_ns);
		res->stalls_reported =
		    sc_watchdog_count(r->wd, SC_WATCHDOG_STALL);
		if (res->stalls_reported < res->injected[r->kind])
			run_fail(r, SC_ESTATE,
				 "the watchdog reported %" PRIu64
				 " stalls; %u injected (unit %d, node %d, "
				 "step %" PRIu64 ", threshold %" PRIu64 " ns)",
				 res->stalls_reported, res->injected[r->kind],
				 res->fault_unit, res->fault_node, r->at,
				 r->stall_ns);
	}
}

static void
fault_disarm(struct run *r)
{
	if (r->wd)
		(void)sc_watchdog_destroy(r->wd);
	r->wd = NULL;
	if (r->page)
		(void)munmap(r->page, 4096);
	r->page = NULL;
}

static bool
restarting(const struct run *r)
{
	return r->o->restart.kind != SC_RESTART_NONE &&
	       r->o->restart.max_restarts > 0;
}

/* The sim's host: the next submission or two (SC_EFULL: later). */
struct sim_host {
	struct run *r;
	size_t next;
	int error; /* the first submit that failed */
};

static bool
sim_host_step(void *ctx, struct sc_exec *ex, uint64_t rnd)
{
	struct sim_host *h = ctx;
	struct sc_settle_result *res = h->r->res;
	const struct sc_settle_work *w = h->r->w;
	uint64_t k =
	    h->r->kind == SC_SETTLE_FAULT_BURST ? UINT64_MAX : 1 + rnd % 2;

	(void)ex;
	/* Restarts interleave with the submissions: the host rebuilds the
	 * dead whenever it finds the runtime idle (EBUSY otherwise). */
	if (restarting(h->r))
		(void)sc_runtime_restart(h->r->rt, NULL);
	while (k-- && h->next < w->n && !h->error) {
		const struct sc_settle_step *st = &w->steps[h->next];
		int rc = is_tick(st) ? sc_runtime_tick_try(h->r->rt, NULL)
				     : sc_runtime_submit(h->r->rt, st->input,
							 st->batch);

		if (rc == SC_EFULL) {
			res->submits_full++;
			break;
		}
		if (is_tick(st) && rc) {
			run_fail(h->r, rc, "closing the tick at step %zu: %s",
				 h->next, sc_errmsg());
			h->error = rc;
		} else if (is_tick(st)) {
			res->ticks_closed++;
		} else if (!run_submitted(h->r, rc, h->next,
					  &res->submits_dead))
			h->error = rc;
		else if (!rc)
			res->submits++;
		h->next++;
	}
	return h->next < w->n && !h->error;
}

/* Fold a later round's figures into the first's. */
static void
sim_fold(struct sc_sim_result *into, const struct sc_sim_result *r)
{
	into->steps += r->steps;
	into->turns += r->turns;
	into->host_calls += r->host_calls;
	into->trace = into->trace * 0x100000001b3ull ^ r->trace;
	into->max_held =
	    r->max_held > into->max_held ? r->max_held : into->max_held;
	into->panics += r->panics;
	into->kicks_on_running += r->kicks_on_running;
	if (r->why[0])
		(void)snprintf(into->why, sizeof(into->why), "%s", r->why);
}

/*
 * The sim until settled; with restarts, then rebuild what the policy
 * allows and run the rebuilt units (another round, its seed drawn from
 * the seed), until nothing more comes back. A panic is expected (and
 * recorded) with faults. Returns 0 or the sim's failure.
 */
static int
sim_rounds(struct run *r, struct sc_sim_opts *so)
{
	uint64_t seed = so->seed;
	int rc = sc_sim_run(sc_runtime_exec(r->rt), so, &r->res->sim);

	for (;;) {
		struct sc_sim_result more;
		uint32_t n = 0;

		if (rc == SC_EPANIC && r->faults) {
			r->res->panicked = true;
			rc = 0;
		}
		if (rc || !restarting(r) ||
		    sc_runtime_restart(r->rt, &n) != 0 || n == 0)
			return rc;
		so->seed = sc_splitmix_next(&seed);
		rc = sc_sim_run(sc_runtime_exec(r->rt), so, &more);
		sim_fold(&r->res->sim, &more);
	}
}

static void
drive_sim(struct run *r)
{
	struct sim_host h = {.r = r};
	struct sc_sim_opts so = {
	    .seed = r->o->seed,
	    .held_max = r->o->units ? r->o->units : 1,
	    .budget = r->kind == SC_SETTLE_FAULT_SLOW ? 1 : r->o->budget,
	    .max_steps = r->o->max_steps ? r->o->max_steps : SETTLE_MAX_STEPS,
	    .host = sim_host_step,
	    .host_ctx = &h};
	bool segv = r->kind == SC_SETTLE_FAULT_SEGV;
	int rc = segv ? sc_panic_catch_faults(true) : 0;

	if (rc) {
		run_fail(r, rc, "sim: cannot catch faults: %s", sc_errmsg());
		return;
	}
	rc = sim_rounds(r, &so);
	if (segv)
		(void)sc_panic_catch_faults(false);
	if (rc == SC_ETIMEDOUT)
		r->res->hung = true;
	if (rc)
		run_fail(r, rc, "sim: %s", r->res->sim.why);
}

/* A pool's host thread: submissions first, first + step, ... (the
 * integral does not depend on their order: deltas sum). */
struct pool_host {
	pthread_t th;
	struct run *r;
	size_t first, step;
	atomic_int *start;	/* BURST: every host starts when it turns 1 */
	pthread_barrier_t *bar; /* tick works: met around each close */
	atomic_int *stop;	/* tick works: a host failed, all stop */
	uint64_t submits, dead, ticks;
	int rc;
	size_t failed_at;
};

static uint64_t
pool_timeout(const struct run *r)
{
	return r->o->timeout_ns ? r->o->timeout_ns : SETTLE_TIMEOUT_NS;
}

/* A tick work's host: its share of each tick's submissions (the j-th of
 * the tick when j % step == first), then the barrier, host 0 closes the
 * tick, the barrier again, so that a tick holds exactly its submissions
 * whichever host made them. Every host meets every barrier, a failed one
 * too (it stops submitting), and all stop at the same close. */
static void
pool_host_ticks(struct pool_host *u)
{
	const struct sc_settle_work *w = u->r->w;
	size_t j = 0;

	for (size_t i = 0; i < w->n; i++) {
		int rc = 0;

		if (!is_tick(&w->steps[i])) {
			if (j++ % u->step != u->first || u->rc)
				continue;
			rc = sc_runtime_submit_wait(u->r->rt, w->steps[i].input,
						    w->steps[i].batch,
						    pool_timeout(u->r));
			if (!rc)
				u->submits++;
		} else {
			j = 0;
			(void)pthread_barrier_wait(u->bar);
			if (u->first == 0 && !atomic_load(u->stop)) {
				rc = sc_runtime_tick(u->r->rt,
						     pool_timeout(u->r), NULL);
				u->ticks += rc == 0;
			}
			(void)pthread_barrier_wait(u->bar);
		}
		if (rc && !u->rc) {
			u->rc = rc;
			u->failed_at = i;
			atomic_store(u->stop, 1);
		}
		if (is_tick(&w->steps[i]) && atomic_load(u->stop))
			return;
	}
}

static void *
pool_host_main(void *arg)
{
	struct pool_host *u = arg;
	const struct sc_settle_work *w = u->r->w;

	while (u->start && !atomic_load(u->start))
		sched_yield();
	if (u->bar) {
		if (!atomic_load(u->stop))
			pool_host_ticks(u);
		return NULL;
	}
	for (size_t i = u->first; i < w->n; i += u->step) {
		int rc = sc_runtime_submit_wait(u->r->rt, w->steps[i].input,
						w->steps[i].batch,
						pool_timeout(u->r));

		if (rc == SC_EDEAD && u->r->faults) {
			u->dead++;
			continue;
		}
		if (rc) {
			u->rc = rc;
			u->failed_at = i;
			break;
		}
		u->submits++;
	}
	return NULL;
}

/* Start the host threads (the calling thread is host 0), join them and
 * fold their counts in. */
static int
pool_hosts(struct run *r)
{
	struct pool_host u[SC_SETTLE_MAX_HOSTS];
	uint32_t n = r->o->hosts ? r->o->hosts : 1, started;
	atomic_int start = 0, stop = 0;
	bool burst = r->kind == SC_SETTLE_FAULT_BURST;
	pthread_barrier_t bar;
	int rc = 0;

	if (burst && n < SETTLE_BURST_HOSTS)
		n = SETTLE_BURST_HOSTS;
	if (r->ticks && pthread_barrier_init(&bar, NULL, n) != 0) {
		run_fail(r, SC_ENOMEM, "cannot make the hosts' barrier");
		return SC_ENOMEM;
	}
	for (uint32_t t = 0; t < n; t++)
		u[t] = (struct pool_host){.r = r,
					  .first = t,
					  .step = n,
					  .start =
					      burst || r->ticks ? &start : NULL,
					  .bar = r->ticks ? &bar : NULL,
					  .stop = &stop,
					  .rc = 0};
	for (started = 1; started < n && !rc; started++)
		if (pthread_create(&u[started].th, NULL, pool_host_main,
				   &u[started]) != 0)
			rc = SC_ENOMEM;
	if (rc)
		started--;
	/* A tick work's hosts wait for start too: one that cannot start
	 * would leave the others at a barrier for ever, so they stop. */
	if (rc)
		atomic_store(&stop, 1);
	atomic_store(&start, 1); /* the burst: all of them at once */
	if (!rc)
		pool_host_main(&u[0]);
	for (uint32_t t = 1; t < started; t++)
		(void)pthread_join(u[t].th, NULL);
	if (r->ticks)
		(void)pthread_barrier_destroy(&bar);
	if (rc) {
		run_fail(r, rc, "cannot start host thread %u", started);
		return rc;
	}
	for (uint32_t t = 0; t < n; t++) {
		r->res->submits += u[t].submits;
		r->res->submits_dead += u[t].dead;
		r->res->ticks_closed += u[t].ticks;
		if (u[t].rc == SC_ETIMEDOUT)
			r->res->hung = true;
		if (u[t].rc)
			run_fail(r, u[t].rc, "host %u, step %zu: %s", t,
				 u[t].failed_at, sc_errname(u[t].rc));
	}
	return 0;
}

static int
drive_pool(struct run *r)
{
	const struct sc_settle_opts *o = r->o;
	void *guard = o->guard_begin
			  ? o->guard_begin(o->guard_ctx, sc_runtime_exec(r->rt))
			  : NULL;
	int rc = pool_hosts(r);

	if (!rc) {
		int idle = sc_runtime_wait_idle(r->rt, pool_timeout(r), NULL);

		if (idle == SC_EPANIC && r->faults)
			r->res->panicked = true;
		else if (idle == SC_ETIMEDOUT)
			r->res->hung = true;
		if (idle && !(idle == SC_EPANIC && r->faults))
			run_fail(r, idle, "wait_idle: %s", sc_errmsg());
	}
	if (o->guard_end)
		o->guard_end(o->guard_ctx, guard);
	return rc;
}

/* --- the comparison ------------------------------------------------------- */

/* The weight of `row` (all columns) in b, 0 when absent. */
static int64_t
weight_of(const struct sc_batch *b, const uint64_t *row)
{
	size_t lo, hi;

	if (!b ||
	    sc_batch_key_range(b, row, sc_batch_ncols(b), &lo, &hi) != 0 ||
	    lo == hi)
		return 0;
	return sc_batch_weight(b, lo);
}

/* A row as text, "(1, -2, 3)", decoded by schema s when it fits. */
static void
row_text(const uint64_t *row, const struct sc_schema *s, uint32_t ncols,
	 char *buf, size_t len)
{
	size_t at = 0;

	buf[0] = 0;
	for (uint32_t c = 0; c < ncols && at + 24 < len; c++) {
		enum sc_type t =
		    s && s->ncols == ncols ? s->types[c] : SC_TYPE_U64;
		int k =
		    t == SC_TYPE_I64
			? snprintf(buf + at, len - at, "%s%lld", c ? ", " : "(",
				   (long long)sc_dec_i64(row[c]))
			: snprintf(buf + at, len - at, "%s%#" PRIx64,
				   c ? ", " : "(", row[c]);

		if (k > 0)
			at += (size_t)k;
	}
	if (at + 2 < len)
		(void)snprintf(buf + at, len - at, ")");
}

/* The first rows of d = placed - single, each with its weight on both
 * sides; a row points into the integral that holds it (the result keeps
 * both), since d is released. */
static void
diff_rows(struct sc_settle_result *res, const struct sc_batch *got,
	  const struct sc_batch *want, const struct sc_batch *d)
{
	res->ndiff_total = d ? sc_batch_count(d) : 0;
	for (size_t k = 0; k < res->ndiff_total && k < SC_SETTLE_MAX_DIFF;
	     k++) {
		const uint64_t *row = sc_batch_row(d, k);
		struct sc_settle_diff *f = &res->diff[res->ndiff++];
		int64_t pw = weight_of(got, row);
		/* d is consolidated: a row of it has a nonzero weight on at
		 * least one side, and that side holds it. */
		const struct sc_batch *home = pw ? got : want;
		size_t lo = 0, hi = 0;

		if (home)
			(void)sc_batch_key_range(
			    home, row, sc_batch_ncols(home), &lo, &hi);
		f->row = lo < hi ? sc_batch_row(home, lo) : NULL;
		f->placed = pw;
		f->single = weight_of(want, row);
	}
}

static size_t
count_of(const struct sc_batch *b)
{
	return b ? sc_batch_count(b) : 0;
}

/* Record output i's difference between got and want (either NULL for
 * empty): both batches and the rows of got - want, with the weight on
 * each side. tick: the tick of two deltas, UINT64_MAX for integrals. */
static int
record_difference(struct run *r, size_t i, struct sc_batch *got,
		  struct sc_batch *want, uint64_t tick)
{
	struct sc_settle_result *res = r->res;
	struct sc_batch *neg = NULL, *d = NULL;
	struct sc_node_info ni;
	char text[SETTLE_ROW_TEXT] = "", at[48] = "";
	int rc = 0;

	if (want && (rc = sc_batch_negate(want, &neg)) == 0)
		rc = got ? sc_batch_add(got, neg, &d)
			 : (d = sc_batch_retain(neg), 0);
	else if (!want)
		d = sc_batch_retain(got);
	sc_batch_release(neg);
	if (rc)
		return rc;
	res->output = r->w->outputs[i];
	res->tick = tick;
	if (sc_graph_node_info(r->w->g, res->output, &ni) == 0)
		(void)snprintf(res->output_name, sizeof(res->output_name), "%s",
			       ni.name);
	res->placed = sc_batch_retain(got);
	res->single = sc_batch_retain(want);
	diff_rows(res, got, want, d);
	if (res->ndiff && res->diff[0].row)
		row_text(res->diff[0].row,
			 sc_graph_schema(r->w->g, res->output),
			 sc_batch_ncols(d), text, sizeof(text));
	if (tick != UINT64_MAX)
		(void)snprintf(at, sizeof(at), "at tick %" PRIu64 " its delta ",
			       tick);
	run_fail(r, SC_ESTATE,
		 "output '%s' (node %d) %sdiffers from the single circuit's: "
		 "%zu rows, expected %zu; %zu rows differ, the first %s with "
		 "weight %lld placed, %lld single",
		 res->output_name, res->output, at, count_of(got),
		 count_of(want), res->ndiff_total, text,
		 res->ndiff ? (long long)res->diff[0].placed : 0LL,
		 res->ndiff ? (long long)res->diff[0].single : 0LL);
	sc_batch_release(d);
	return 0;
}

/* A tick work's delta callback on every compared output: what a step
 * reports, summed at its tick (a sharded output's replicas add up). */
static int
ticks_on_delta(void *ctx, int node, const struct sc_batch *delta)
{
	struct run *r = ctx;
	uint64_t tick = sc_runtime_delta_tick();
	size_t k = 0;

	while (k < r->w->nout && r->w->outputs[k] != node)
		k++;
	pthread_mutex_lock(&r->mu);
	if (k == r->w->nout || tick >= r->w->nticks) {
		if (!r->bad_rc) {
			r->bad_rc = SC_ESTATE;
			r->bad_tick = tick;
			r->bad_node = node;
		}
	} else {
		struct sc_batch **slot = &r->got[k * r->w->nticks + tick];
		struct sc_batch *sum = NULL;
		int rc = 0;

		if (!*slot)
			*slot = sc_batch_retain((struct sc_batch *)delta);
		else if ((rc = sc_batch_add(*slot, delta, &sum)) == 0) {
			sc_batch_release(*slot);
			*slot = sum;
		} else if (!r->bad_rc) {
			r->bad_rc = rc;
			r->bad_tick = tick;
			r->bad_node = node;
		}
	}
	pthread_mutex_unlock(&r->mu);
	return 0;
}

/* Install ticks_on_delta on every compared output. */
static int
ticks_arm(struct run *r)
{
	int rc = 0;

	r->got =
	    calloc(r->w->nout * r->w->nticks + 1, sizeof(struct sc_batch *));
	if (!r->got)
		return SC_ENOMEM;
	for (size_t k = 0; k < r->w->nout && !rc; k++)
		rc = sc_runtime_on_delta(r->rt, r->w->outputs[k],
					 ticks_on_delta, r);
	return rc;
}

static void
ticks_disarm(struct run *r)
{
	for (size_t k = 0; r->got && k < r->w->nout * r->w->nticks; k++)
		sc_batch_release(r->got[k]);
	free(r->got);
	r->got = NULL;
}

static bool
same_delta(const struct sc_batch *a, const struct sc_batch *b)
{
	if (count_of(a) == 0 || count_of(b) == 0)
		return count_of(a) == count_of(b);
	return sc_batch_equal(a, b);
}

/* At idle, every output's delta at every tick (of the run's and of the
 * reference's) equals the reference's; the first tick that differs, and
 * its first output, is reported. */
static void
check_ticks(struct run *r)
{
	const struct sc_settle_work *w = r->w;
	size_t nt = w->nticks > w->want_ticks ? w->nticks : w->want_ticks;

	if (r->bad_rc) {
		run_fail(r, r->bad_rc,
			 "output node %d reported a delta at tick %" PRIu64
			 " (the work has %zu ticks) or its sum failed (%s)",
			 r->bad_node, r->bad_tick, w->nticks,
			 sc_errname(r->bad_rc));
		return;
	}
	for (size_t t = 0; t < nt; t++) {
		for (size_t k = 0; k < w->nout; k++) {
			struct sc_batch *got =
			    t < w->nticks ? r->got[k * w->nticks + t] : NULL;
			struct sc_batch *want =
			    t < w->want_ticks ? w->want[k * w->want_ticks + t]
					      : NULL;
			int rc;

			if (same_delta(got, want))
				continue;
			if ((rc = record_difference(r, k, got, want, t)) != 0)
				run_fail(r, rc,
					 "output node %d differs at tick %zu "
					 "(%s)",
					 w->outputs[k], t, sc_errname(rc));
			return;
		}
		r->res->ticks_compared++;
	}
}

/* Output i at idle: equal to the reference, and to the caller's check. */
static void
check_output(struct run *r, size_t i)
{
	struct sc_batch *got = NULL;
	int out = r->w->outputs[i];
	int rc = sc_runtime_integral(r->rt, out, &got);

	if (rc) {
		run_fail(r, rc, "integral of output node %d: %s", out,
			 sc_errmsg());
		return;
	}
	if (!r->w->single_failed && !sc_batch_equal(got, r->w->expect[i])) {
		if ((rc = record_difference(r, i, got, r->w->expect[i],
					    UINT64_MAX)) != 0)
			run_fail(r, rc, "output node %d differs (%s)", out,
				 sc_errname(rc));
	} else if (r->o->verify &&
		   (rc = r->o->verify(r->o->verify_ctx, out, got)) != 0) {
		run_fail(r, rc, "output node %d: %s", out, sc_errmsg());
	}
	sc_batch_release(got);
}

/* With restarts, output i downstream of a dead unit is a failure unless
 * the rate bound gave some unit up (settle.h, Restarts). */
static void
check_restarted(struct run *r, size_t i)
{
	struct sc_runtime_stats st;

	if (!restarting(r))
		return;
	sc_runtime_stats(r->rt, &st);
	if (st.given_up == 0)
		run_fail(r, SC_ESTATE,
			 "output node %d is downstream of a dead unit that "
			 "the restart policy should have rebuilt (%u dead, "
			 "%u restarts, %u failed): %s",
			 r->w->outputs[i], st.dead, st.restarts,
			 st.restarts_failed, sc_errmsg());
}

static void
check_idle(struct run *r)
{
	int rc = sc_runtime_check_idle(r->rt);

	if (rc) {
		run_fail(r, rc, "check_idle: %s", sc_errmsg());
		return;
	}
	if (r->ticks)
		check_ticks(r);
	for (size_t i = 0; i < r->w->nout && r->res->ok; i++) {
		/* A dead unit's part never arrived: the outputs it feeds
		 * cannot be compared, every other one must be whole. */
		if (r->res->panicked &&
		    sc_runtime_upstream_dead(r->rt, r->w->outputs[i], NULL) ==
			SC_EDEAD) {
			r->res->outputs_dead++;
			check_restarted(r, i);
			continue;
		}
		r->res->outputs_compared++;
		check_output(r, i);
	}
}

/* After shutdown: frames sent that were neither delivered, nor counted
 * undeliverable, nor wait in a dead unit's ring (see settle.h). */
static void
check_frames(struct run *r)
{
	const struct sc_runtime_stats *st = &r->res->stats;
	uint64_t accounted = st->frames_delivered + st->frames_undeliverable +
			     st->pending_closed;

	r->res->frames_lost =
	    st->frames_sent > accounted ? st->frames_sent - accounted : 0;
	if (accounted > st->frames_sent)
		run_fail(r, SC_ESTATE,
			 "%" PRIu64 " frames accounted for but %" PRIu64
			 " sent: %" PRIu64 " delivered, %" PRIu64
			 " undeliverable, %" PRIu64 " in dead units' rings",
			 accounted, st->frames_sent, st->frames_delivered,
			 st->frames_undeliverable, st->pending_closed);
	else if (r->res->frames_lost)
		run_fail(r, SC_ESTATE,
			 "%" PRIu64 " frames lost: %" PRIu64 " sent, %" PRIu64
			 " delivered, %" PRIu64 " undeliverable to %u dead "
			 "units, %" PRIu64 " in their rings, %" PRIu64
			 " in live rings",
			 r->res->frames_lost, st->frames_sent,
			 st->frames_delivered, st->frames_undeliverable,
			 st->dead, st->pending_closed,
			 st->pending - st->pending_closed);
}

/* Whether no turn runs or waits: the frame accounting is exact then. */
static bool
runtime_quiet(struct sc_runtime *rt)
{
	struct sc_exec_info info;

	sc_exec_info(sc_runtime_exec(rt), &info);
	return info.idle;
}

/* A panic must be reported at shutdown exactly when one happened. */
static void
check_shutdown(struct run *r)
{
	struct sc_panic_record pr;
	int rc = sc_runtime_shutdown(r->rt, &pr);

	if (r->res->panicked && rc != SC_EPANIC)
		run_fail(r, SC_ESTATE,
			 "a unit panicked but shutdown returned %s",
			 sc_errname(rc));
	else if (!r->res->panicked && rc)
		run_fail(r, rc, "shutdown: %s", sc_errmsg());
}

/* --- the call ------------------------------------------------------------- */

const char *
sc_settle_replay_call(const struct sc_placement *p,
		      const struct sc_settle_opts *o, char *buf, size_t len)
{
	(void)snprintf(
	    buf, len,
	    "sc_settle_run(work, /* placement '%s' */ p, "
	    "&(struct sc_settle_opts){.mode = %s, .seed = %" PRIu64
	    ", .units = %u, .hosts = %u, .budget = %u, .edge_capacity = %u, "
	    ".outbox_bound = %zu, .max_steps = %" PRIu64
	    ", .fault = {.kind = %d /* %s */, .unit = %d, .at = %" PRIu64
	    ", .stall_ns = %" PRIu64 "}, .restart = {.kind = %d, "
	    ".max_restarts = %u, .period_ns = %" PRIu64
	    "}, .no_cleanup = %d}, &res)",
	    p ? sc_placement_strategy(p) : "?",
	    o->mode == SC_SETTLE_POOL ? "SC_SETTLE_POOL" : "SC_SETTLE_SIM",
	    o->seed, o->units, o->hosts, o->budget, o->edge_capacity,
	    o->outbox_bound, o->max_steps, (int)o->fault.kind,
	    sc_settle_fault_name(o->fault.kind), o->fault.unit, o->fault.at,
	    o->fault.stall_ns, (int)o->restart.kind, o->restart.max_restarts,
	    o->restart.period_ns, (int)o->no_cleanup);
	return buf;
}

static int
check_opts(const struct sc_settle_opts *o, const struct sc_placement *p,
	   bool ticks, struct sc_settle_result *res)
{
	const char *bad = NULL;

	if (o->mode != SC_SETTLE_SIM && o->mode != SC_SETTLE_POOL)
		bad = "unknown mode";
	else if (o->units > SETTLE_MAX_UNITS)
		bad = "units out of 0..64";
	else if (o->hosts > SC_SETTLE_MAX_HOSTS)
		bad = "hosts out of 0..16";
	else if ((unsigned)o->fault.kind >= SC_SETTLE_FAULT_KINDS)
		bad = "unknown fault kind";
	else if (o->fault.unit >= 0 &&
		 (uint32_t)o->fault.unit >= sc_placement_units(p))
		bad = "fault unit out of the placement's units";
	else if (o->fault.kind == SC_SETTLE_FAULT_ALLOC && !alloc_hooked())
		bad = "an alloc fault needs an allocation hook "
		      "(sc_settle_alloc_hook_set); none is installed";
	else if (ticks && (fault_in_callback(o->fault.kind) ||
			   o->fault.kind == SC_SETTLE_FAULT_ALLOC))
		bad = "a tick work takes no panic, segv, stall or alloc fault "
		      "(its delta callbacks watch the outputs)";
	if (!bad)
		return 0;
	(void)snprintf(res->why, sizeof(res->why), "sc_settle_run: %s", bad);
	res->error = SC_EINVAL;
	return sc__fail(SC_EINVAL, "sc_settle_run: %s", bad);
}

int
sc_settle_run(const struct sc_settle_work *w, const struct sc_placement *p,
	      const struct sc_settle_opts *opts, struct sc_settle_result *res)
{
	struct run r = {.w = w, .o = opts, .res = res};
	struct sc_runtime_opts ro;
	int rc;

	if (!res)
		return sc__fail(SC_EINVAL, "sc_settle_run: NULL result");
	memset(res, 0, sizeof(*res));
	res->output = -1;
	if (!w || !p || !opts)
		return sc__fail(SC_EINVAL, "sc_settle_run: NULL argument");
	res->fault_unit = -1;
	res->fault_node = -1;
	res->tick = UINT64_MAX;
	r.ticks = (w->flags & SC_SETTLE_TICKS) != 0;
	if ((rc = check_opts(opts, p, r.ticks, res)) != 0)
		return rc;
	if (opts->replay)
		(void)snprintf(res->replay, sizeof(res->replay), "%s",
			       opts->replay);
	else
		(void)sc_settle_replay_call(p, opts, res->replay,
					    sizeof(res->replay));
	if (r.ticks && !opts->replay)
		(void)snprintf(res->replay + strlen(res->replay),
			       sizeof(res->replay) - strlen(res->replay),
			       " /* work flags SC_SETTLE_TICKS */");
	r.kind = opts->fault.kind;
	r.at = opts->fault.at ? opts->fault.at : 1;
	r.stall_ns =
	    opts->fault.stall_ns ? opts->fault.stall_ns : SETTLE_STALL_NS;
	r.faults = (w->flags & SC_SETTLE_FAULTS) != 0 ||
		   r.kind == SC_SETTLE_FAULT_PANIC ||
		   r.kind == SC_SETTLE_FAULT_SEGV ||
		   r.kind == SC_SETTLE_FAULT_ALLOC;
	res->single_failed = w->single_failed;
	ro = (struct sc_runtime_opts){
	    .workers = opts->mode == SC_SETTLE_POOL
			   ? (opts->units ? opts->units : 1)
			   : 0,
	    .budget = opts->mode != SC_SETTLE_POOL     ? 0
		      : r.kind == SC_SETTLE_FAULT_SLOW ? 1
						       : opts->budget,
	    .edge_capacity =
		r.kind == SC_SETTLE_FAULT_SLOW ? 1 : opts->edge_capacity,
	    .outbox_bound = opts->outbox_bound,
	    .catch_faults = r.kind == SC_SETTLE_FAULT_SEGV,
	    .restart = opts->restart,
	    .executor = opts->executor,
	    .ticks = r.ticks,
	    .no_cleanup = opts->no_cleanup};
	if ((rc = sc_runtime_create(w->g, p, &ro, &r.rt)) != 0) {
		(void)snprintf(res->why, sizeof(res->why), "create: %s",
			       sc_errmsg());
		res->error = rc;
		return rc;
	}
	(void)pthread_mutex_init(&r.mu, NULL);
	if (r.ticks && (rc = ticks_arm(&r)) != 0) {
		(void)snprintf(res->why, sizeof(res->why),
			       "watching the outputs' ticks: %s",
			       sc_errname(rc));
		res->error = rc;
		ticks_disarm(&r);
		pthread_mutex_destroy(&r.mu);
		(void)sc_runtime_shutdown(r.rt, NULL);
		sc_runtime_destroy(r.rt);
		return rc;
	}
	if ((rc = fault_arm(&r, p)) != 0) {
		(void)snprintf(res->why, sizeof(res->why),
			       "arming the %s fault: %s",
			       sc_settle_fault_name(r.kind), sc_errname(rc));
		res->error = rc;
		fault_disarm(&r);
		ticks_disarm(&r);
		pthread_mutex_destroy(&r.mu);
		(void)sc_runtime_shutdown(r.rt, NULL);
		sc_runtime_destroy(r.rt);
		return rc;
	}
	res->ok = true;
	/* ALLOC: armed from the first submit to idle, so that neither the
	 * reference nor the comparison meets the failure. */
	if (r.kind == SC_SETTLE_FAULT_ALLOC)
		alloc_hook.arm(alloc_hook.ctx, r.at);
	if (opts->mode == SC_SETTLE_POOL)
		rc = drive_pool(&r);
	else
		drive_sim(&r);
	if (r.kind == SC_SETTLE_FAULT_ALLOC)
		r.alloc_failed = alloc_hook.disarm(alloc_hook.ctx);
	fault_check(&r);
	if (res->ok)
		check_idle(&r);
	check_shutdown(&r);
	fault_disarm(&r);
	sc_runtime_stats(r.rt, &res->stats);
	res->restarts = res->stats.restarts;
	/* Counted after any earlier failure too (a frame stranded before a
	 * live consumer fails the idle check first, and is still a frame
	 * lost), but only when nothing runs: else frames in flight are not
	 * lost. */
	if (!res->hung && runtime_quiet(r.rt))
		check_frames(&r);
	sc_runtime_destroy(r.rt);
	ticks_disarm(&r);
	pthread_mutex_destroy(&r.mu);
	return rc;
}

void
sc_settle_result_fini(struct sc_settle_result *res)
{
	if (!res)
		return;
	sc_batch_release(res->placed);
	sc_batch_release(res->single);
	res->placed = res->single = NULL;
	res->ndiff = 0;
}

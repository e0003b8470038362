/*
 * settle_fault.c - the faults a settle run injects (settle.h, "Faults
 * injected by the run"; settle_int.h).
 *
 * Design. A callback fault (PANIC, SEGV, STALL) rides a delta callback on
 * one node of the fault's unit, which counts the unit's steps with a
 * non-empty delta and strikes at step `at`; SLOW and BURST shape the run
 * instead (settle.c); ALLOC goes through the process's allocation hook,
 * which only a program that owns its allocator can install. After the
 * run, sc__settle_fault_check holds the run to what the fault must cause.
 */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS */
#include "units/settle_int.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "operators/base.h"
#include "runtime/panic.h"

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

bool
sc__settle_alloc_hooked(void)
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
		if (k == SC_SETTLE_FAULT_ALLOC && !sc__settle_alloc_hooked())
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
bool
sc__settle_fault_in_callback(enum sc_settle_fault_kind k)
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
	struct sc__settle_run *r = ctx;
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
int
sc__settle_fault_arm(struct sc__settle_run *r, const struct sc_placement *p)
{
	const struct sc_settle_fault *f = &r->o->fault;
	struct sc_settle_result *res = r->res;
	uint32_t nunits = sc_placement_units(p);
	int rc;

	if (!sc__settle_fault_in_callback(r->kind))
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
					      .waits = sc_runtime_waits,
					      .doing = sc_runtime_doing};

		wo.waits_arg = r->rt; /* FRONTIER, in tick mode */
		wo.doing_arg = r->rt; /* a STALL names its operator */
		if ((rc = sc_watchdog_create(sc_runtime_exec(r->rt), &wo,
					     &r->wd)) != 0)
			return rc;
	}
	return sc_runtime_on_delta(r->rt, res->fault_node, fault_on_delta, r);
}

/* After the run: count what happened, and check that an injected panic
 * killed its unit and an injected stall was reported. */
void
sc__settle_fault_check(struct sc__settle_run *r)
{
	struct sc_settle_result *res = r->res;

	/* SLOW and BURST shape the whole run; the others strike once. */
	if (r->kind == SC_SETTLE_FAULT_SLOW ||
	    r->kind == SC_SETTLE_FAULT_BURST ||
	    (sc__settle_fault_in_callback(r->kind) && atomic_load(&r->fired)))
		res->injected[r->kind] = 1;
	if (r->kind == SC_SETTLE_FAULT_ALLOC && r->alloc_failed)
		res->injected[r->kind] = 1;
	if (!res->injected[r->kind] || r->kind == SC_SETTLE_FAULT_NONE)
		return;
	if ((r->kind == SC_SETTLE_FAULT_PANIC ||
	     r->kind == SC_SETTLE_FAULT_SEGV) &&
	    !res->panicked)
		sc__settle_fail(r, SC_ESTATE,
				"an injected %s at step %" PRIu64
				" of unit %d (node %d) killed no unit",
				sc_settle_fault_name(r->kind), r->at,
				res->fault_unit, res->fault_node);
	if (r->kind == SC_SETTLE_FAULT_STALL && r->wd) {
		/* The stall is over; its report may be one period late. */
		(void)sc_watchdog_wait(r->wd, SC_WATCHDOG_STALL, 1,
				       20 * r->stall_ns);
		res->stalls_reported =
		    sc_watchdog_count(r->wd, SC_WATCHDOG_STALL);
		if (res->stalls_reported < res->injected[r->kind])
			sc__settle_fail(
			    r, SC_ESTATE,
			    "the watchdog reported %" PRIu64
			    " stalls; %u injected (unit %d, node %d, "
			    "step %" PRIu64 ", threshold %" PRIu64 " ns)",
			    res->stalls_reported, res->injected[r->kind],
			    res->fault_unit, res->fault_node, r->at,
			    r->stall_ns);
	}
}

void
sc__settle_fault_disarm(struct sc__settle_run *r)
{
	if (r->wd)
		(void)sc_watchdog_destroy(r->wd);
	r->wd = NULL;
	if (r->page)
		(void)munmap(r->page, 4096);
	r->page = NULL;
}

void
sc__settle_alloc_arm(uint64_t nth)
{
	alloc_hook.arm(alloc_hook.ctx, nth);
}

bool
sc__settle_alloc_disarm(void)
{
	return alloc_hook.disarm(alloc_hook.ctx);
}

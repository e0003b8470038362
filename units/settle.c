/*
 * settle.c - one settle run (settle.h, settle_int.h): build the runtime
 * of a placement, drive it under a schedule, and judge it.
 *
 * Design. sc_settle_run reads as its steps: check the options and start
 * the result (run_begin), build the runtime and arm the tick sums and the
 * fault (run_build), drive the schedule (run_drive: the seeded sim on
 * this thread, or a pool fed by host threads), judge the run at idle and
 * at shutdown (run_judge), and release it (run_end). The work
 * (settle_work.c), the faults (settle_fault.c) and the checks
 * (settle_check.c) live beside it.
 */
#include "units/settle_int.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "operators/base.h"

#define SETTLE_MAX_UNITS   64
#define SETTLE_MAX_STEPS   2000000ull
#define SETTLE_TIMEOUT_NS  10000000000ull
#define SETTLE_STALL_NS	   20000000ull /* the default stall threshold */
#define SETTLE_BURST_HOSTS 4u	       /* host threads of a pool burst */

/* --- one run -------------------------------------------------------------- */

void
sc__settle_fail(struct sc__settle_run *r, int code, const char *fmt, ...)
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
bool
sc__settle_submitted(struct sc__settle_run *r, int rc, size_t i, uint64_t *dead)
{
	if (rc == SC_EDEAD && r->faults) {
		(*dead)++;
		return true;
	}
	if (rc) {
		sc__settle_fail(r, rc, "submit %zu (input node %d): %s", i,
				r->w->steps[i].input, sc_errmsg());
		return false;
	}
	return true;
}

/* --- the schedules ------------------------------------------------------- */

/* The sim's host: the next submission or two (SC_EFULL: later). */
struct sim_host {
	struct sc__settle_run *r;
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
	if (sc__settle_restarting(h->r))
		(void)sc_runtime_restart(h->r->rt, NULL);
	while (k-- && h->next < w->n && !h->error) {
		const struct sc_settle_step *st = &w->steps[h->next];
		int rc =
		    sc__settle_is_tick(st)
			? sc_runtime_tick_try(h->r->rt, NULL)
			: sc_runtime_submit(h->r->rt, st->input, st->batch);

		if (rc == SC_EFULL) {
			res->submits_full++;
			break;
		}
		if (sc__settle_is_tick(st) && rc) {
			sc__settle_fail(h->r, rc,
					"closing the tick at step %zu: %s",
					h->next, sc_errmsg());
			h->error = rc;
		} else if (sc__settle_is_tick(st)) {
			res->ticks_closed++;
		} else if (!sc__settle_submitted(h->r, rc, h->next,
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
sim_rounds(struct sc__settle_run *r, struct sc_sim_opts *so)
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
		if (rc || !sc__settle_restarting(r) ||
		    sc_runtime_restart(r->rt, &n) != 0 || n == 0)
			return rc;
		so->seed = sc_splitmix_next(&seed);
		rc = sc_sim_run(sc_runtime_exec(r->rt), so, &more);
		sim_fold(&r->res->sim, &more);
	}
}

static void
drive_sim(struct sc__settle_run *r)
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
		sc__settle_fail(r, rc, "sim: cannot catch faults: %s",
				sc_errmsg());
		return;
	}
	rc = sim_rounds(r, &so);
	if (segv)
		(void)sc_panic_catch_faults(false);
	if (rc == SC_ETIMEDOUT)
		r->res->hung = true;
	if (rc)
		sc__settle_fail(r, rc, "sim: %s", r->res->sim.why);
}

/* A pool's host thread: submissions first, first + step, ... (the
 * integral does not depend on their order: deltas sum). */
struct pool_host {
	pthread_t th;
	struct sc__settle_run *r;
	size_t first, step;
	atomic_int *start;	/* BURST: every host starts when it turns 1 */
	pthread_barrier_t *bar; /* tick works: met around each close */
	atomic_int *stop;	/* tick works: a host failed, all stop */
	uint64_t submits, dead, ticks;
	int rc;
	size_t failed_at;
};

static uint64_t
pool_timeout(const struct sc__settle_run *r)
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

		if (!sc__settle_is_tick(&w->steps[i])) {
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
		if (sc__settle_is_tick(&w->steps[i]) && atomic_load(u->stop))
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
pool_hosts(struct sc__settle_run *r)
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
		sc__settle_fail(r, SC_ENOMEM, "cannot make the hosts' barrier");
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
		sc__settle_fail(r, rc, "cannot start host thread %u", started);
		return rc;
	}
	for (uint32_t t = 0; t < n; t++) {
		r->res->submits += u[t].submits;
		r->res->submits_dead += u[t].dead;
		r->res->ticks_closed += u[t].ticks;
		if (u[t].rc == SC_ETIMEDOUT)
			r->res->hung = true;
		if (u[t].rc)
			sc__settle_fail(r, u[t].rc, "host %u, step %zu: %s", t,
					u[t].failed_at, sc_errname(u[t].rc));
	}
	return 0;
}

static int
drive_pool(struct sc__settle_run *r)
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
			sc__settle_fail(r, idle, "wait_idle: %s", sc_errmsg());
	}
	if (o->guard_end)
		o->guard_end(o->guard_ctx, guard);
	return rc;
}

/* --- the call ------------------------------------------------------------- */

const char *
sc_settle_replay_call(const struct sc_placement *p,
		      const struct sc_settle_opts *o, char *buf, size_t len)
{
	if (!o || !buf || !len)
		return buf;
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
	else if (o->fault.kind == SC_SETTLE_FAULT_ALLOC &&
		 !sc__settle_alloc_hooked())
		bad = "an alloc fault needs an allocation hook "
		      "(sc_settle_alloc_hook_set); none is installed";
	else if (ticks && (sc__settle_fault_in_callback(o->fault.kind) ||
			   o->fault.kind == SC_SETTLE_FAULT_ALLOC))
		bad = "a tick work takes no panic, segv, stall or alloc fault "
		      "(its delta callbacks watch the outputs)";
	if (!bad)
		return 0;
	(void)snprintf(res->why, sizeof(res->why), "sc_settle_run: %s", bad);
	res->error = SC_EINVAL;
	return sc__fail(SC_EINVAL, "sc_settle_run: %s", bad);
}

/* The replay of the run: the caller's command, else the C call. */
static void
run_replay(struct sc__settle_run *r, const struct sc_placement *p)
{
	struct sc_settle_result *res = r->res;

	if (r->o->replay)
		(void)snprintf(res->replay, sizeof(res->replay), "%s",
			       r->o->replay);
	else
		(void)sc_settle_replay_call(p, r->o, res->replay,
					    sizeof(res->replay));
	if (r->ticks && !r->o->replay)
		(void)snprintf(res->replay + strlen(res->replay),
			       sizeof(res->replay) - strlen(res->replay),
			       " /* work flags SC_SETTLE_TICKS */");
}

/* Step 1: the arguments and options checked, the result started, the
 * fault's parameters read. Returns 0, or SC_EINVAL (res->why says why
 * when res is not NULL). */
static int
run_begin(struct sc__settle_run *r, const struct sc_placement *p)
{
	const struct sc_settle_work *w = r->w;
	const struct sc_settle_opts *opts = r->o;
	struct sc_settle_result *res = r->res;
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
	r->ticks = (w->flags & SC_SETTLE_TICKS) != 0;
	if ((rc = check_opts(opts, p, r->ticks, res)) != 0)
		return rc;
	run_replay(r, p);
	r->kind = opts->fault.kind;
	r->at = opts->fault.at ? opts->fault.at : 1;
	r->stall_ns =
	    opts->fault.stall_ns ? opts->fault.stall_ns : SETTLE_STALL_NS;
	r->faults = (w->flags & SC_SETTLE_FAULTS) != 0 ||
		    r->kind == SC_SETTLE_FAULT_PANIC ||
		    r->kind == SC_SETTLE_FAULT_SEGV ||
		    r->kind == SC_SETTLE_FAULT_ALLOC;
	res->single_failed = w->single_failed;
	return 0;
}

/* The runtime's options for the run: the pool's workers and budget, and
 * what the fault kind changes (SLOW: budget 1 over edges of 1; SEGV:
 * faults caught). */
static struct sc_runtime_opts
run_runtime_opts(const struct sc__settle_run *r)
{
	const struct sc_settle_opts *opts = r->o;
	bool pool = opts->mode == SC_SETTLE_POOL;

	return (struct sc_runtime_opts){
	    .workers = pool ? (opts->units ? opts->units : 1) : 0,
	    .budget = !pool				? 0
		      : r->kind == SC_SETTLE_FAULT_SLOW ? 1
							: opts->budget,
	    .edge_capacity =
		r->kind == SC_SETTLE_FAULT_SLOW ? 1 : opts->edge_capacity,
	    .outbox_bound = opts->outbox_bound,
	    .catch_faults = r->kind == SC_SETTLE_FAULT_SEGV,
	    .restart = opts->restart,
	    .executor = opts->executor,
	    .ticks = r->ticks,
	    .no_cleanup = opts->no_cleanup};
}

/* A build step failed: say so in the result and undo the build. */
static int
run_unbuild(struct sc__settle_run *r, int rc, const char *what,
	    const char *detail, bool fault)
{
	(void)snprintf(r->res->why, sizeof(r->res->why), "%s: %s", what,
		       detail);
	r->res->error = rc;
	if (fault)
		sc__settle_fault_disarm(r);
	sc__settle_ticks_disarm(r);
	pthread_mutex_destroy(&r->mu);
	(void)sc_runtime_shutdown(r->rt, NULL);
	sc_runtime_destroy(r->rt);
	return rc;
}

/* Step 2: the runtime of placement p, the tick sums (a tick work) and the
 * fault armed. Returns 0, or the error with res->why saying which, and
 * nothing left. */
static int
run_build(struct sc__settle_run *r, const struct sc_placement *p)
{
	struct sc_runtime_opts ro = run_runtime_opts(r);
	char what[64];
	int rc;

	if ((rc = sc_runtime_create(r->w->g, p, &ro, &r->rt)) != 0) {
		(void)snprintf(r->res->why, sizeof(r->res->why), "create: %s",
			       sc_errmsg());
		r->res->error = rc;
		return rc;
	}
	(void)pthread_mutex_init(&r->mu, NULL);
	if (r->ticks && (rc = sc__settle_ticks_arm(r)) != 0)
		return run_unbuild(r, rc, "watching the outputs' ticks",
				   sc_errname(rc), false);
	if ((rc = sc__settle_fault_arm(r, p)) != 0) {
		(void)snprintf(what, sizeof(what), "arming the %s fault",
			       sc_settle_fault_name(r->kind));
		return run_unbuild(r, rc, what, sc_errname(rc), true);
	}
	return 0;
}

/* Step 3: the schedule, with an ALLOC fault armed from the first submit
 * to idle, so that neither the reference nor the comparison meets the
 * failure. Returns the pool's error (the sim's go to the result). */
static int
run_drive(struct sc__settle_run *r)
{
	int rc = 0;

	r->res->ok = true;
	if (r->kind == SC_SETTLE_FAULT_ALLOC)
		sc__settle_alloc_arm(r->at);
	if (r->o->mode == SC_SETTLE_POOL)
		rc = drive_pool(r);
	else
		drive_sim(r);
	if (r->kind == SC_SETTLE_FAULT_ALLOC)
		r->alloc_failed = sc__settle_alloc_disarm();
	return rc;
}

/* Step 4: the verdict: the fault did what it must, the idle invariant and
 * every output (if nothing failed yet), the shutdown, the figures and the
 * frames. */
static void
run_judge(struct sc__settle_run *r)
{
	struct sc_settle_result *res = r->res;

	sc__settle_fault_check(r);
	if (res->ok)
		sc__settle_check_idle(r);
	sc__settle_check_shutdown(r);
	sc__settle_fault_disarm(r);
	sc_runtime_stats(r->rt, &res->stats);
	res->restarts = res->stats.restarts;
	/* Counted after any earlier failure too (a frame stranded before a
	 * live consumer fails the idle check first, and is still a frame
	 * lost), but only when nothing runs: else frames in flight are not
	 * lost. */
	if (!res->hung && sc__settle_runtime_quiet(r->rt))
		sc__settle_check_frames(r);
}

/* Step 5: release the runtime and the run's own state. */
static void
run_end(struct sc__settle_run *r)
{
	sc_runtime_destroy(r->rt);
	sc__settle_ticks_disarm(r);
	pthread_mutex_destroy(&r->mu);
}

int
sc_settle_run(const struct sc_settle_work *w, const struct sc_placement *p,
	      const struct sc_settle_opts *opts, struct sc_settle_result *res)
{
	struct sc__settle_run r = {.w = w, .o = opts, .res = res};
	int rc;

	if ((rc = run_begin(&r, p)) != 0)
		return rc;
	if ((rc = run_build(&r, p)) != 0)
		return rc;
	rc = run_drive(&r);
	run_judge(&r);
	run_end(&r);
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

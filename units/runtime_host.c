/*
 * runtime_host.c - the host's calls that feed the units and wait for them
 * (runtime.h: sc_runtime_submit, _submit_wait, _wait_idle, _late).
 *
 * Design. A host thread is the producer end of every host edge: a submit
 * holds its input's lock (one submitter per input, as the SPSC edges
 * need), checks, and sends through the input's exchange, all or nothing
 * (SC_EFULL unless every share fits). A full input is waited out in one
 * of two ways. With workers, the host sleeps on wait_cv until a unit pops
 * a host edge (sc__rt_host_popped), capped at 10 ms as a safety net
 * (sc__rt_wait_room, which tick closes share). With workers = 0 nobody
 * else runs the turns, so the waiting host thread runs them itself
 * (run_one, sc__rt_host_progress), under the same fault guard a pool
 * worker has, and gives up when nothing is queued or running twice in a
 * row. The wait for idle is the executor's (workers) or this thread's
 * drive; at idle with a dead unit it brings back what the restart policy
 * allows (units/runtime_restart.c) and waits again.
 */
#include "units/runtime.h"
#include "units/runtime_int.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "operators/base.h"
#include "runtime/panic.h"
#include "units/runtime_remote.h"
#include "units/tick_int.h"

/* A unit took frames from a host edge: wake the host if it waits. */
void
sc__rt_host_popped(void *ctx)
{
	struct sc_runtime *rt = ctx;

	/* Pairs with the waiter's increment before its last look at the
	 * edge: either it sees the room, or we see it waiting. */
	sc__fence_seq_cst();
	if (atomic_load(&rt->waiters) == 0)
		return;
	pthread_mutex_lock(&rt->wait_mu);
	pthread_cond_broadcast(&rt->wait_cv);
	pthread_mutex_unlock(&rt->wait_mu);
}

static struct rt_input *
find_input(struct sc_runtime *rt, int node)
{
	for (size_t i = 0; i < rt->ninputs; i++)
		if (rt->inputs[i].node == node)
			return &rt->inputs[i];
	return NULL;
}

/*
 * One submit, all or nothing: refused (SC_EFULL) unless every share would
 * enter its ring (sc_exchange_room); then partitioned and sent through the
 * input's exchange, and every replica that got a frame is kicked. The
 * caller holds in->mu.
 */
static int
submit_locked(struct sc_runtime *rt, struct rt_input *in, struct sc_batch *b)
{
	uint64_t pushed = 0;
	int rc, result = 0;

	SC_ASSERT(sc__mutex_locked(&in->mu)); /* one submitter: SPSC edges */
	/* Checked under the input's lock, which shutdown takes once after
	 * setting the flag: a submit either sends and kicks before shutdown
	 * waits for idle (applied), or sees the flag (refused). */
	if (atomic_load(&rt->shut) || sc_exec_is_shutdown(rt->ex))
		return sc__fail(SC_ESHUTDOWN,
				"sc_runtime_submit: the runtime is shut down");
	if ((rc = sc__rt_late_check(&in->late, b, in->node)) != 0)
		return rc; /* SC_ELATE: nothing applied */
	if (!sc_exchange_room(&in->x))
		return SC_EFULL;
	rc = sc_exchange_send(&in->x, sc_batch_retain(b), &pushed);
	if (rc == SC_EDEAD && sc__rt_restart_pending(rt, in))
		rc = 0; /* in the trace: the rebuild applies it */
	if (!rc)
		sc__rt_late_advance(&in->late, b);
	if (rc == SC_EDEAD)
		result = sc__fail(SC_EDEAD,
				  "sc_runtime_submit: the unit of input %d "
				  "is dead",
				  in->node);
	else if (rc)
		return rc;
	/* Under in->mu, which tick_try holds too: the open tick is the one
	 * this frame went to. */
	if (rt->o.ticks)
		atomic_store(&rt->tick_open, true);
	for (uint32_t j = 0; j < in->x.nedges; j++)
		if ((pushed >> j & 1) &&
		    sc_exec_kick(rt->ex, in->insts[j]) == SC_ESHUTDOWN)
			/* Only if the executor was shut down behind the
			 * runtime's back (sc_runtime_exec): the share will
			 * never be processed, so it is refused, not 0. */
			result = sc__fail(SC_ESHUTDOWN,
					  "sc_runtime_submit: the executor "
					  "is shut down");
	return result;
}

static int
submit_check(struct sc_runtime *rt, int input, struct sc_batch *b,
	     struct rt_input **out)
{
	struct rt_input *in;

	if (!rt || !b)
		return sc__fail(SC_EINVAL, "sc_runtime_submit: NULL %s",
				rt ? "batch" : "runtime");
	if (atomic_load(&rt->shut))
		return sc__fail(SC_ESHUTDOWN,
				"sc_runtime_submit: the runtime is shut down");
	if (!sc_runtime_remote_local(rt, RT_HOST))
		return sc__fail(SC_ESTATE, "sc_runtime_submit: the host runs "
					   "on rank 0");
	in = find_input(rt, input);
	if (!in)
		return sc__fail(
		    input >= 0 && (size_t)input < sc_graph_node_count(rt->g)
			? SC_EINVAL
			: SC_ENOENT,
		    "sc_runtime_submit: node %d is not an input", input);
	if (sc_batch_ncols(b) != in->ncols)
		return sc__fail(SC_ESCHEMA,
				"sc_runtime_submit: batch of %u columns for "
				"input %d of %u",
				sc_batch_ncols(b), input, in->ncols);
	/* The edges hold the ids from acceptance on (edge_int.h); a dead
	 * one is refused here, as sc_circuit_feed refuses it. */
	*out = in;
	if (sc__symcols_any(&in->syms))
		return sc__symtab_check(&in->syms, b, "sc_runtime_submit");
	return 0;
}

int
sc_runtime_submit(struct sc_runtime *rt, int input, struct sc_batch *b)
{
	struct rt_input *in = NULL;
	int rc = submit_check(rt, input, b, &in);

	if (rc)
		return rc;
	atomic_store(&rt->submitted, true);
	if (sc_batch_count(b) == 0)
		return 0; /* the zero delta changes nothing */
	pthread_mutex_lock(&in->mu);
	rc = submit_locked(rt, in, b);
	pthread_mutex_unlock(&in->mu);
	if (rc == SC_EFULL)
		return sc__fail(SC_EFULL,
				"sc_runtime_submit: input %d is full "
				"(backpressure)",
				input);
	return rc;
}

/*
 * Fault catching on host threads (workers = 0 with catch_faults): a
 * thread that runs turns must have the handler and its alternate stack,
 * as a pool worker does (runtime/pool.c), or a hard fault in a turn kills
 * the process. It is turned on the first time a host thread runs a turn
 * and left on (a syscall pair per turn would cost more than the turn);
 * a thread-specific key's destructor turns it off when the thread exits,
 * which frees the stack. The main thread's stays until the process ends.
 */
static pthread_once_t host_catch_once = PTHREAD_ONCE_INIT;
static pthread_key_t host_catch_key;
static bool host_catch_key_ok;
static _Thread_local bool host_catching;

static void
host_catch_off(void *unused)
{
	(void)unused;
	(void)sc_panic_catch_faults(false);
}

static void
host_catch_key_make(void)
{
	host_catch_key_ok =
	    pthread_key_create(&host_catch_key, host_catch_off) == 0;
}

static void
host_catch_faults(void)
{
	if (host_catching)
		return;
	host_catching = true;
	(void)pthread_once(&host_catch_once, host_catch_key_make);
	if (sc_panic_catch_faults(true) != 0) {
		/* The turn still runs, without the net: say so once. */
		(void)fprintf(stderr,
			      "subcirc: host-driven turns run without "
			      "fault catching: %s\n",
			      sc_errmsg());
		return;
	}
	if (host_catch_key_ok)
		(void)pthread_setspecific(host_catch_key, &host_catching);
}

/* Run one queued turn on this thread (workers = 0), under the same fault
 * guard as the pool's when catch_faults is set. Whether one ran. */
static bool
run_one(struct sc_runtime *rt)
{
	struct sc_claim c;
	bool ran = false;

	SC_ASSERT(!rt->threaded); /* the workers run the turns otherwise */
	if (rt->o.catch_faults)
		host_catch_faults();
	sc_claim_init(&c);
	if (sc_exec_claim(rt->ex, -1, &c) == 0) {
		ran = true;
		if (sc_exec_run(rt->ex, &c, rt->o.budget) == 0)
			(void)sc_exec_finish(rt->ex, &c);
	}
	sc_claim_fini(&c);
	return ran;
}

/*
 * With workers = 0, make progress for a full input: run a queued turn on
 * this thread; if none is queued while another host thread runs one (its
 * own wait), wait for that turn (a nap of at most 1 ms on the executor's
 * idle condition), since its progress is what makes room. Returns true
 * when nothing is queued or running at all: then only this thread could
 * make room, and it has nothing to run.
 */
bool
sc__rt_host_progress(struct sc_runtime *rt)
{
	struct sc_exec_info info;

	if (run_one(rt))
		return false;
	sc_exec_info(rt->ex, &info);
	if (info.running == 0 && info.queue_len == 0)
		return true;
	(void)sc_exec_wait_idle(rt->ex, 1000000, NULL);
	return false;
}

int
sc__rt_wait_room(struct sc_runtime *rt,
		 int (*try_once)(struct sc_runtime *rt, void *arg), void *arg,
		 uint64_t deadline)
{
	struct timespec ts;
	uint64_t t;
	int rc;

	SC_ASSERT(rt->threaded); /* sc__rt_host_popped wakes it: a turn's */
	atomic_fetch_add(&rt->waiters, 1);
	pthread_mutex_lock(&rt->wait_mu);
	rc = try_once(rt, arg);
	if (rc == SC_EFULL) {
		/* A 10 ms cap: a safety net, never the mechanism. On the
		 * monotonic clock, as sc_clock_ns (runtime.c, init_wait_cv). */
		t = sc__deadline_add(sc_clock_ns(), 10000000ull);
		t = t < deadline ? t : deadline;
		ts.tv_sec = (time_t)(t / 1000000000ull);
		ts.tv_nsec = (long)(t % 1000000000ull);
		pthread_cond_timedwait(&rt->wait_cv, &rt->wait_mu, &ts);
	}
	pthread_mutex_unlock(&rt->wait_mu);
	atomic_fetch_sub(&rt->waiters, 1);
	return rc;
}

/* One submit, for sc__rt_wait_room. */
struct submit_args {
	int input;
	struct sc_batch *b;
};

static int
submit_once(struct sc_runtime *rt, void *arg)
{
	const struct submit_args *a = arg;

	return sc_runtime_submit(rt, a->input, a->b);
}

static int
runtime_submit_wait_body(struct sc_runtime *rt, int input, struct sc_batch *b,
			 uint64_t timeout_ns)
{
	uint64_t deadline = timeout_ns
				? sc__deadline_add(sc_clock_ns(), timeout_ns)
				: UINT64_MAX;
	bool stuck = false;

	if (!rt || !b)
		return sc__fail(SC_EINVAL, "sc_runtime_submit_wait: NULL %s",
				!rt ? "runtime" : "batch");
	/* A callback waiting for room that only the turns behind it make
	 * (its own among them) would wait for itself. */
	if (sc_exec_in_turn(rt->ex))
		return sc__fail(SC_ESTATE, "sc_runtime_submit_wait: called "
					   "from inside a unit's turn (use "
					   "sc_runtime_submit)");
	for (;;) {
		int rc = sc_runtime_submit(rt, input, b);

		if (rc != SC_EFULL)
			return rc;
		if (sc_clock_ns() >= deadline)
			return sc__fail(SC_ETIMEDOUT,
					"sc_runtime_submit_wait: input %d "
					"still full",
					input);
		if (rt->threaded) {
			struct submit_args a = {.input = input, .b = b};

			rc = sc__rt_wait_room(rt, submit_once, &a, deadline);
			if (rc != SC_EFULL)
				return rc;
			continue;
		}
		/* Nothing queued or running twice in a row, with a submit
		 * between (another host's turn may have just made room): no
		 * one can make room any more. */
		if (sc__rt_host_progress(rt)) {
			if (stuck)
				return sc__fail(SC_ETIMEDOUT,
						"sc_runtime_submit_wait: input "
						"%d full and nothing to run",
						input);
			stuck = true;
		} else {
			stuck = false;
		}
	}
}

int
sc__rt_first_panic(struct sc_runtime *rt, struct sc_panic_record *first)
{
	struct sc_exec_info info;
	struct sc_panic_record rec;

	memset(&rec, 0, sizeof(rec));
	sc_exec_info(rt->ex, &info);
	if (info.panics == 0)
		return 0;
	if (sc_exec_panic(rt->ex, 0, &rec) == 0 && first)
		*first = rec;
	return sc__fail(SC_EPANIC, "unit %u (%s) panicked: %s", rec.unit,
			rec.name, rec.message);
}

/*
 * With workers = 0: run queued turns on this thread until nothing is
 * queued or running. An empty queue is not idle while another host thread
 * runs a turn (its own wait or submit_wait): that turn's finish may queue
 * more, so wait for it (naps of at most 1 ms on the executor's idle
 * condition) and go on. Returns 0 or SC_ETIMEDOUT at `deadline`.
 */
static int
drive(struct sc_runtime *rt, uint64_t deadline)
{
	struct sc_exec_info info;

	for (;;) {
		while (run_one(rt))
			if (sc_clock_ns() >= deadline)
				return SC_ETIMEDOUT;
		sc_exec_info(rt->ex, &info);
		if (info.idle)
			return 0;
		if (sc_clock_ns() >= deadline)
			return SC_ETIMEDOUT;
		(void)sc_exec_wait_idle(rt->ex, 1000000, NULL);
	}
}

/* One wait for idle: the executor's (workers), or this thread's drive. */
static int
wait_idle_once(struct sc_runtime *rt, uint64_t timeout_ns, uint64_t deadline,
	       struct sc_panic_record *first)
{
	if (rt->threaded) {
		uint64_t now = sc_clock_ns();

		if (!timeout_ns)
			return sc_exec_wait_idle(rt->ex, 0, first);
		return sc_exec_wait_idle(
		    rt->ex, deadline > now ? deadline - now : 1, first);
	}
	if (drive(rt, deadline) != 0)
		return sc__fail(SC_ETIMEDOUT,
				"sc_runtime_wait_idle: still busy");
	return sc__rt_first_panic(rt, first);
}

int
sc_runtime_wait_idle(struct sc_runtime *rt, uint64_t timeout_ns,
		     struct sc_panic_record *first)
{
	uint64_t deadline = timeout_ns
				? sc__deadline_add(sc_clock_ns(), timeout_ns)
				: UINT64_MAX;

	if (!rt)
		return sc__fail(SC_EINVAL, "sc_runtime_wait_idle: NULL");
	if (sc_exec_in_turn(rt->ex))
		return sc__fail(SC_ESTATE,
				"sc_runtime_wait_idle: called from inside a "
				"unit's turn (a callback), which would wait "
				"for itself");
	if (rt->o.remote)
		return sc__rt_remote_wait_idle(rt, timeout_ns, first);
	/* A host that never closes a tick gets one per wait_idle
	 * (runtime.h, Host ticks). */
	if (rt->o.ticks && atomic_load(&rt->tick_open)) {
		int rc = sc__rt_tick_close(rt, deadline, NULL);

		if (rc && rc != SC_ESHUTDOWN)
			return rc;
	}
	for (;;) {
		uint32_t n = 0, failed = 0;
		int rc = wait_idle_once(rt, timeout_ns, deadline, first);

		/* Idle with a unit dead: bring back what the policy allows
		 * and wait again (runtime.h, Restarts). A rebuild that could
		 * not be made is tried again at once: every try counts
		 * against the rate bound, so this ends. */
		if (rc != SC_EPANIC || !rt->restarts)
			return rc;
		rc = sc__rt_restart_at_idle(rt, &n, &failed);
		if (rc == SC_EBUSY)
			continue; /* a submit came first: wait for it */
		if (n == 0 && failed == 0)
			return sc__rt_first_panic(rt, first);
	}
}

bool
sc__rt_is_idle(struct sc_runtime *rt)
{
	struct sc_exec_info info;

	sc_exec_info(rt->ex, &info);
	return info.idle;
}

/*
 * Host reads (the integral, the idle check) look into the units' circuits
 * and the producer ends of edges, which only a running turn may touch. At
 * idle no turn runs, but another host thread's submit can kick one at any
 * moment. So a read holds every input's lock (in index order; a submitter
 * takes one only, so no cycle): no submit can kick a unit meanwhile, and
 * an idle executor then stays idle, since every other kick comes from a
 * turn (finish, death) and none runs. The executor's lock, taken by the
 * idle check, orders every finished turn's writes before the read.
 */
void
sc__rt_hold_inputs(struct sc_runtime *rt)
{
	for (size_t i = 0; i < rt->ninputs; i++)
		pthread_mutex_lock(&rt->inputs[i].mu);
}

/* Whether every input's lock is held (by some thread: see
 * sc__mutex_locked), for SC_ASSERT in the host reads. */
bool
sc__rt_inputs_held(struct sc_runtime *rt)
{
	for (size_t i = 0; i < rt->ninputs; i++)
		if (!sc__mutex_locked(&rt->inputs[i].mu))
			return false;
	return true;
}

void
sc__rt_release_inputs(struct sc_runtime *rt)
{
	for (size_t i = rt->ninputs; i-- > 0;)
		pthread_mutex_unlock(&rt->inputs[i].mu);
}

int
sc_runtime_late(struct sc_runtime *rt, int input, uint64_t *admitted,
		uint64_t *refused)
{
	struct rt_input *in;

	if (!rt)
		return sc__fail(SC_EINVAL, "sc_runtime_late: NULL runtime");
	if (!(in = find_input(rt, input)))
		return sc__fail(SC_ENOENT,
				"sc_runtime_late: node %d is not "
				"an input",
				input);
	pthread_mutex_lock(&in->mu);
	sc__rt_late_counts(&in->late, admitted, refused);
	pthread_mutex_unlock(&in->mu);
	return 0;
}

int
sc_runtime_submit_wait(struct sc_runtime *rt, int input, struct sc_batch *b,
		       uint64_t timeout_ns)
{
	return sc__errwrap(runtime_submit_wait_body(rt, input, b, timeout_ns),
			   "sc_runtime_submit_wait");
}

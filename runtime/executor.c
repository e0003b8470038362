/*
 * executor.c - kick, claim, run, finish, abandon (see executor.h): what both
 * kinds share (slots, run and its guard, abandon, condemn, snapshots,
 * wait_idle) and the QUEUE kind; the STEAL kind's queues are in
 * executor_steal.c.
 *
 * QUEUE: one mutex guards the queue, the slots' states and the counts; a
 * turn runs with no lock held, on a unit taken out of its slot. Fields that
 * the introspection calls read are atomics written under the mutex
 * (relaxed: the mutex orders them), so a lock-free reader would also be
 * sound.
 */
#include "runtime/executor.h"
#include "runtime/executor_int.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "operators/error.h"
#include "operators/base_int.h"
#include "runtime/panic_int.h"

/* The turns this thread is inside now (sc_exec_in_turn), innermost
 * first. A turn's own guard names its executor (sc__guard.owner, set by
 * run_guarded), which costs the hot path one store; the unit code that
 * abandon runs outside a turn (peers, destroy) pushes one of these marks
 * instead. A turn inside a turn (a callback that drives a second
 * executor) nests in both chains. */
struct turn_mark {
	const struct sc_exec *ex;
	const struct turn_mark *outer;
};

static __attribute__((tls_model(
    "initial-exec"))) _Thread_local const struct turn_mark *sc_turn_top;

static inline void
turn_enter(struct turn_mark *m, const struct sc_exec *ex)
{
	m->ex = ex;
	m->outer = sc_turn_top;
	sc_turn_top = m;
}

static inline void
turn_leave(const struct turn_mark *m)
{
	sc_turn_top = m->outer;
}

bool
sc_exec_in_turn(const struct sc_exec *ex)
{
	for (const struct sc__guard *g = sc__guard_top; g; g = g->outer)
		if (g->owner && (!ex || g->owner == ex))
			return true;
	for (const struct turn_mark *m = sc_turn_top; m; m = m->outer)
		if (!ex || m->ex == ex)
			return true;
	return false;
}

const char *
sc_unit_state_name(enum sc_unit_state s)
{
	switch (s) {
	case SC_UNIT_IDLE:
		return "IDLE";
	case SC_UNIT_QUEUED:
		return "QUEUED";
	case SC_UNIT_RUNNING:
		return "RUNNING";
	case SC_UNIT_RUNNING_KICKED:
		return "RUNNING+KICKED";
	case SC_UNIT_DEAD:
		return "DEAD";
	}
	return "?";
}

uint64_t
sc_exec_now_ns(void)
{
	return sc_clock_coarse_ns();
}

/* --- create / destroy / add -------------------------------------------- */

static int
init_sync(struct sc_exec *ex)
{
	if (pthread_mutex_init(&ex->mu, NULL) != 0)
		goto fail;
	if (pthread_cond_init(&ex->work_cv, NULL) != 0)
		goto undo_mu;
	if (sc__cond_init(&ex->idle_cv) != 0)
		goto undo_work_cv;
	return 0;
undo_work_cv:
	pthread_cond_destroy(&ex->work_cv);
undo_mu:
	pthread_mutex_destroy(&ex->mu);
fail:
	return sc__fail(SC_ENOMEM, "sc_exec_create: no mutex or condvar");
}

const char *
sc_exec_kind_name(enum sc_exec_kind k)
{
	switch (k) {
	case SC_EXEC_DEFAULT:
		return "default";
	case SC_EXEC_QUEUE:
		return "queue";
	case SC_EXEC_STEAL:
		return "steal";
	}
	return "?";
}

static int
exec_kind_parse_body(const char *name, enum sc_exec_kind *out)
{
	static const enum sc_exec_kind kinds[] = {SC_EXEC_DEFAULT,
						  SC_EXEC_QUEUE, SC_EXEC_STEAL};

	for (size_t i = 0; name && out && i < 3; i++)
		if (strcmp(name, sc_exec_kind_name(kinds[i])) == 0) {
			*out = kinds[i];
			return 0;
		}
	return sc__fail(SC_EINVAL,
			"executor kind \"%s\": expected queue, steal or "
			"default",
			name ? name : "(null)");
}

/* SC_EXEC_DEFAULT: $SC_EXECUTOR names the kind (so that a whole test
 * suite, or a program, runs on either without a change), else STEAL. */
static enum sc_exec_kind
kind_resolve(enum sc_exec_kind k)
{
	const char *env;

	if (k != SC_EXEC_DEFAULT)
		return k;
	/* Read at create, before any thread of this executor exists. */
	env = getenv("SC_EXECUTOR"); /* NOLINT(concurrency-mt-unsafe) */
	if (env && *env && sc_exec_kind_parse(env, &k) == 0 &&
	    k != SC_EXEC_DEFAULT)
		return k;
	sc_error_clear();
	return SC_EXEC_STEAL;
}

enum sc_exec_kind
sc_exec_kind_of(const struct sc_exec *ex)
{
	return ex ? ex->kind : SC_EXEC_DEFAULT;
}

int
sc_exec_create(const struct sc_exec_opts *opts, struct sc_exec **out)
{
	struct sc_exec_opts o = {0};
	struct sc_exec *ex;

	if (!out)
		return sc__fail(SC_EINVAL, "sc_exec_create: out is NULL");
	if (opts)
		o = *opts;
	if (o.capacity == 0)
		o.capacity = SC_EXEC_DEFAULT_CAPACITY;
	if (o.capacity >= SC_NONE)
		return sc__fail(SC_EINVAL, "sc_exec_create: capacity %u",
				o.capacity);
	if (o.kind != SC_EXEC_DEFAULT && o.kind != SC_EXEC_QUEUE &&
	    o.kind != SC_EXEC_STEAL)
		return sc__fail(SC_EINVAL, "sc_exec_create: kind %d",
				(int)o.kind);
	o.kind = kind_resolve(o.kind);
	o.workers = o.workers ? o.workers : SC_EXEC_DEFAULT_WORKERS;
	ex = calloc(1, sizeof(*ex));
	if (!ex)
		goto fail;
	ex->slots = calloc(o.capacity, sizeof(*ex->slots));
	if (!ex->slots)
		goto undo_ex;
	ex->kind = o.kind;
	if (ex->kind == SC_EXEC_STEAL && sc__steal_init(ex, o.workers) != 0)
		goto undo_slots;
	if (init_sync(ex) != 0)
		goto undo_wq;
	ex->capacity = o.capacity;
	ex->spin = o.spin ? o.spin : SC_EXEC_DEFAULT_SPIN;
	ex->head = ex->tail = SC_NONE;
	*out = ex;
	return 0;
undo_wq:
	sc__steal_fini(ex);
undo_slots:
	free(ex->slots);
undo_ex:
	free(ex);
fail:
	return sc__fail(SC_ENOMEM, "sc_exec_create: no memory for %u units",
			o.capacity);
}

static void
destroy_fn(void *arg)
{
	struct sc_unit *u = arg;

	u->ops->destroy(u);
}

int
sc_exec_destroy(struct sc_exec *ex)
{
	uint32_t n;

	if (!ex)
		return 0;
	pthread_mutex_lock(&ex->mu);
	if (ex->kind == SC_EXEC_STEAL) {
		struct sc_exec_info info;

		sc__steal_info(ex, &info);
		ex->running = info.running;
	}
	if (atomic_load(&ex->workers) > 0 || ex->running > 0) {
		uint32_t w = atomic_load(&ex->workers), r = ex->running;

		pthread_mutex_unlock(&ex->mu);
		return sc__fail(SC_EBUSY,
				"sc_exec_destroy: %u workers live, %u units "
				"claimed",
				w, r);
	}
	pthread_mutex_unlock(&ex->mu);
	n = atomic_load(&ex->n);
	for (uint32_t i = 0; i < n; i++) {
		struct sc_panic_record rec;

		if (!ex->slots[i].unit)
			continue;
		rec.message[0] = '\0';
		if (sc_panic_guard(destroy_fn, ex->slots[i].unit, &rec) != 0)
			(void)fprintf(stderr,
				      "subcirc: destroy of unit %u (%s) "
				      "panicked: %s\n",
				      i, ex->slots[i].name, rec.message);
	}
	pthread_cond_destroy(&ex->idle_cv);
	pthread_cond_destroy(&ex->work_cv);
	pthread_mutex_destroy(&ex->mu);
	sc__steal_fini(ex);
	free(ex->slots);
	free(ex);
	return 0;
}

int
sc_exec_add(struct sc_exec *ex, struct sc_unit *unit, uint32_t *id)
{
	const struct sc_unit_ops *ops;
	struct sc__slot *s;
	const char *name;
	uint32_t n;

	if (!ex || !unit || !id || !unit->ops)
		return sc__fail(SC_EINVAL, "sc_exec_add: NULL argument");
	ops = unit->ops;
	if (!ops->turn || !ops->neighbours || !ops->name || !ops->destroy)
		return sc__fail(SC_EINVAL, "sc_exec_add: unit ops incomplete");
	name = ops->name(unit);
	pthread_mutex_lock(&ex->mu);
	if (atomic_load(&ex->shutdown)) {
		pthread_mutex_unlock(&ex->mu);
		return sc__fail(SC_ESHUTDOWN, "sc_exec_add: shut down");
	}
	n = atomic_load_explicit(&ex->n, memory_order_relaxed);
	if (n == ex->capacity) {
		pthread_mutex_unlock(&ex->mu);
		return sc__fail(SC_EFULL,
				"sc_exec_add: executor holds %u units", n);
	}
	s = &ex->slots[n];
	s->unit = unit;
	s->ref = unit;
	(void)snprintf(s->name, sizeof(s->name), "%s", name ? name : "?");
	s->next = SC_NONE;
	atomic_store_explicit(&s->worker, -1, memory_order_relaxed);
	slot_set_state(s, SC_UNIT_IDLE);
	/* Publish the slot before its id can be kicked lock-free. */
	atomic_store_explicit(&ex->n, n + 1, memory_order_release);
	pthread_mutex_unlock(&ex->mu);
	*id = n;
	return 0;
}

/* --- the queue ----------------------------------------------------------- */

/* Link id at the back of the FIFO; the caller holds ex->mu. */
static inline __attribute__((always_inline)) void
fifo_link_locked(struct sc_exec *ex, uint32_t id)
{
	ex->slots[id].next = SC_NONE;
	if (ex->tail == SC_NONE)
		ex->head = id;
	else
		ex->slots[ex->tail].next = id;
	ex->tail = id;
	atomic_store_explicit(
	    &ex->qlen,
	    atomic_load_explicit(&ex->qlen, memory_order_relaxed) + 1,
	    memory_order_relaxed);
}

static inline __attribute__((always_inline)) void
queue_push_locked(struct sc_exec *ex, uint32_t id)
{
	fifo_link_locked(ex, id);
	slot_set_state(&ex->slots[id], SC_UNIT_QUEUED);
}

static inline __attribute__((always_inline)) uint32_t
queue_pop_locked(struct sc_exec *ex)
{
	uint32_t id = ex->head;

	if (id == SC_NONE)
		return SC_NONE;
	ex->head = ex->slots[id].next;
	if (ex->head == SC_NONE)
		ex->tail = SC_NONE;
	atomic_store_explicit(
	    &ex->qlen,
	    atomic_load_explicit(&ex->qlen, memory_order_relaxed) - 1,
	    memory_order_relaxed);
	return id;
}

void
sc__fifo_push_locked(struct sc_exec *ex, uint32_t id)
{
	fifo_link_locked(ex, id);
}

uint32_t
sc__fifo_pop_locked(struct sc_exec *ex)
{
	return queue_pop_locked(ex);
}

static void
wake_idle_waiters_locked(struct sc_exec *ex)
{
	if (ex->head == SC_NONE && ex->running == 0 &&
	    atomic_load_explicit(&ex->idle_waiters, memory_order_relaxed))
		pthread_cond_broadcast(&ex->idle_cv);
}

void
sc__exec_wake_idle(struct sc_exec *ex)
{
	pthread_mutex_lock(&ex->mu);
	pthread_cond_broadcast(&ex->idle_cv);
	pthread_mutex_unlock(&ex->mu);
}

/* --- kick ---------------------------------------------------------------- */

static inline __attribute__((always_inline)) void
kick_locked(struct sc_exec *ex, uint32_t id)
{
	struct sc__slot *s = &ex->slots[id];

	int st = slot_state(s);

	if (st == SC_UNIT_DEAD)
		return; /* never kicked again */
	relaxed_inc(&s->kicks, 1);
	switch (st) {
	case SC_UNIT_IDLE:
		queue_push_locked(ex, id);
		/* Only a parked worker needs a signal; glibc's signal is
		 * itself free when every waiter was already signalled. */
		if (ex->sleepers)
			pthread_cond_signal(&ex->work_cv);
		break;
	case SC_UNIT_RUNNING:
		slot_set_state(s, SC_UNIT_RUNNING_KICKED);
		break;
	default: /* QUEUED and RUNNING_KICKED: kicks coalesce */
		break;
	}
}

int
sc_exec_kick(struct sc_exec *ex, uint32_t id)
{
	uint32_t n;

	if (!ex)
		return sc__fail(SC_EINVAL, "sc_exec_kick: executor is NULL");
	/* Checked before the lock: a bad id must not get anywhere near the
	 * executor's state. */
	n = atomic_load_explicit(&ex->n, memory_order_acquire);
	if (id >= n)
		return sc__fail(SC_ENOENT,
				"sc_exec_kick: no unit %u (%u units)", id, n);
	if (ex->kind == SC_EXEC_STEAL)
		return sc__steal_kick(ex, id);
	pthread_mutex_lock(&ex->mu);
	if (atomic_load_explicit(&ex->shutdown, memory_order_relaxed)) {
		pthread_mutex_unlock(&ex->mu);
		return sc__fail(SC_ESHUTDOWN,
				"sc_exec_kick: unit %u: shut down", id);
	}
	kick_locked(ex, id);
	pthread_mutex_unlock(&ex->mu);
	return 0;
}

/* --- claim --------------------------------------------------------------- */

static inline __attribute__((always_inline)) void
claim_locked(struct sc_exec *ex, uint32_t id, int32_t worker,
	     struct sc_claim *c)
{
	struct sc__slot *s = &ex->slots[id];
	uint64_t w = atomic_load_explicit(&s->sw, memory_order_relaxed);

	SC_ASSERT((w & SC_SW_STATE) == SC_UNIT_QUEUED);
	atomic_store_explicit(&s->sw,
			      (w & ~(uint64_t)SC_SW_STATE) | SC_UNIT_RUNNING,
			      memory_order_relaxed);
	sc__claim_fill(ex, id, worker, c);
}

int
sc_exec_claim(struct sc_exec *ex, int32_t worker, struct sc_claim *c)
{
	uint32_t id;

	if (!ex || !c || c->unit)
		return sc__fail(SC_EINVAL, "sc_exec_claim: %s",
				c && c->unit ? "claim already holds a unit"
					     : "NULL argument");
	if (ex->kind == SC_EXEC_STEAL)
		return sc__steal_claim(ex, worker, c);
	pthread_mutex_lock(&ex->mu);
	if (atomic_load_explicit(&ex->shutdown, memory_order_relaxed)) {
		pthread_mutex_unlock(&ex->mu);
		return SC_ESHUTDOWN;
	}
	id = queue_pop_locked(ex);
	if (id == SC_NONE) {
		pthread_mutex_unlock(&ex->mu);
		return SC_EEMPTY;
	}
	claim_locked(ex, id, worker, c);
	ex->running++;
	pthread_mutex_unlock(&ex->mu);
	return 0;
}

int
sc_exec_steal(struct sc_exec *ex, int32_t thief, int32_t victim,
	      struct sc_claim *c)
{
	if (!ex || !c || c->unit)
		return sc__fail(SC_EINVAL, "sc_exec_steal: %s",
				c && c->unit ? "claim already holds a unit"
					     : "NULL argument");
	if (ex->kind != SC_EXEC_STEAL)
		return SC_EEMPTY; /* no per-worker queues */
	return sc__steal_steal(ex, thief, victim, c);
}

uint32_t
sc_exec_queued(struct sc_exec *ex, int32_t w)
{
	if (!ex)
		return 0;
	if (ex->kind == SC_EXEC_STEAL)
		return sc__steal_queued(ex, w);
	return w < 0 ? atomic_load_explicit(&ex->qlen, memory_order_relaxed)
		     : 0;
}

/* Poll the queue length without the lock for a little while: a kick that
 * comes within a few microseconds then costs no futex hand-off. */
static void
spin_for_work(struct sc_exec *ex)
{
	for (uint32_t i = 0; i < ex->spin; i++) {
		if (atomic_load_explicit(&ex->qlen, memory_order_relaxed) ||
		    atomic_load_explicit(&ex->shutdown, memory_order_relaxed))
			return;
		sc_cpu_relax();
	}
}

int
sc_exec_claim_blocking(struct sc_exec *ex, int32_t worker, struct sc_claim *c)
{
	bool spun = false;
	uint32_t id;

	if (!ex || !c || c->unit)
		return sc__fail(SC_EINVAL, "sc_exec_claim_blocking: %s",
				c && c->unit ? "claim already holds a unit"
					     : "NULL argument");
	if (ex->kind == SC_EXEC_STEAL)
		return sc__steal_claim_blocking(ex, worker, c);
	pthread_mutex_lock(&ex->mu);
	for (;;) {
		if (atomic_load_explicit(&ex->shutdown, memory_order_relaxed))
			break;
		id = queue_pop_locked(ex);
		if (id != SC_NONE) {
			claim_locked(ex, id, worker, c);
			ex->running++;
			pthread_mutex_unlock(&ex->mu);
			return 0;
		}
		if (!spun) {
			pthread_mutex_unlock(&ex->mu);
			spin_for_work(ex);
			pthread_mutex_lock(&ex->mu);
			spun = true;
			continue;
		}
		/* Parked; a spurious wake-up loops back to the checks. */
		ex->sleepers++;
		pthread_cond_wait(&ex->work_cv, &ex->mu);
		ex->sleepers--;
	}
	pthread_mutex_unlock(&ex->mu);
	return SC_ESHUTDOWN;
}

/* --- run ----------------------------------------------------------------- */

struct run_ctx {
	struct sc_exec *ex; /* its guard's owner (sc_exec_in_turn) */
	struct sc_claim *c;
	uint32_t budget;
	size_t need; /* ids neighbours() reported */
};

/*
 * The turn's guard, written out here rather than through sc_panic_guard:
 * the hot path then saves a call through a function pointer and a frame,
 * a sixth of a turn's cost. It is the same protocol (panic_int.h):
 * sigsetjmp without the mask, push the guard, pop it on the way out; a
 * panic pops it and jumps back here. noinline keeps the sigsetjmp frame
 * this function's own.
 */
static __attribute__((noinline)) int
run_guarded(struct run_ctx *r, struct sc_panic_record *rec)
{
	struct sc__guard g;
	struct sc_unit *u = r->c->unit;

	g.rec = rec;
	g.outer = sc__guard_top;
	g.owner = r->ex;
	if (sigsetjmp(g.env, 0) != 0)
		return SC_EPANIC; /* the panic popped g */
	sc__guard_top = &g;
	r->c->turn = u->ops->turn(u, r->budget);
	r->need = 0;
	if (r->c->turn.progress > 0)
		r->need = u->ops->neighbours(u, r->c->nbrs, r->c->cap_nbrs);
	sc__guard_top = g.outer;
	return 0;
}

static void
neighbours_fn(void *arg)
{
	struct run_ctx *r = arg;
	struct sc_unit *u = r->c->unit;

	r->need = u->ops->neighbours(u, r->c->nbrs, r->c->cap_nbrs);
}

/* Kill the claimed unit for a fault found outside its code (a bad
 * neighbour list); the message is already in rec. */
static int
bury(struct sc_exec *ex, struct sc_claim *c, struct sc_panic_record *rec)
{
	rec->signo = 0;
	(void)sc_exec_abandon(ex, c, rec);
	return SC_EPANIC;
}

/* Room for `want` ids in c->nbrs; false if that cannot be had (a count
 * whose byte size overflows, or no memory). */
static bool
nbrs_reserve(struct sc_claim *c, size_t want)
{
	uint32_t *p;

	if (want <= c->cap_nbrs)
		return true;
	if (want > SIZE_MAX / sizeof(*p))
		return false;
	p = realloc(c->nbrs, want * sizeof(*p));
	if (!p)
		return false;
	c->nbrs = p;
	c->cap_nbrs = want;
	return true;
}

/* The turn named more neighbours than c->nbrs holds: grow it and ask
 * again (under a guard: neighbours may panic). A count that cannot be
 * had (its byte size overflows, or no memory) buries the unit: trusting
 * it would overflow the buffer. */
static __attribute__((noinline, cold)) int
run_regrow(struct sc_exec *ex, struct sc_claim *c, size_t want,
	   struct sc_panic_record *rec)
{
	struct run_ctx ctx = {.ex = ex, .c = c, .need = want};
	struct run_ctx *r = &ctx;

	if (!nbrs_reserve(c, want)) {
		(void)snprintf(rec->message, sizeof(rec->message),
			       "neighbours answered %zu ids: no memory for "
			       "them",
			       want);
		return bury(ex, c, rec);
	}
	if (sc_panic_guard(neighbours_fn, r, rec) != 0) {
		(void)sc_exec_abandon(ex, c, rec);
		return SC_EPANIC;
	}
	if (r->need != want) {
		(void)snprintf(rec->message, sizeof(rec->message),
			       "neighbours answered %zu ids, then %zu", want,
			       r->need);
		return bury(ex, c, rec);
	}
	return 0;
}

/*
 * The turn in c returned after sc_exec_condemn marked it: abandon it with
 * the condemner's words. c->nbrs holds the neighbours it named (it moved
 * their frames); the abandon kicks them with the unit's peers.
 */
static int
run_condemned(struct sc_exec *ex, struct sc_claim *c)
{
	struct sc__slot *s = &ex->slots[c->id];
	struct sc_panic_record rec;

	memset(&rec, 0, sizeof(rec));
	/* Written before the verdict's release, read after its acquire. */
	memcpy(rec.message, s->why, sizeof(rec.message));
	(void)sc_exec_abandon(ex, c, &rec);
	return SC_EPANIC;
}

/*
 * What follows a turn that returned, with `need` neighbour ids answered:
 * grow c->nbrs and ask again if they did not fit, check every id, and
 * decide against a concurrent condemn. 0 with c->n_nbrs set and c->ran
 * true; SC_EPANIC with the unit abandoned (nothing held).
 */
static inline __attribute__((always_inline)) int
turn_after(struct sc_exec *ex, struct sc_claim *c, size_t need,
	   struct sc_panic_record *rec)
{
	uint32_t n;

	if (need > c->cap_nbrs && run_regrow(ex, c, need, rec) != 0)
		return SC_EPANIC;
	n = atomic_load_explicit(&ex->n, memory_order_acquire);
	for (size_t i = 0; i < need; i++)
		if (c->nbrs[i] >= n) {
			(void)snprintf(rec->message, sizeof(rec->message),
				       "neighbours named unit %u; there are %u",
				       c->nbrs[i], n);
			return bury(ex, c, rec);
		}
	c->n_nbrs = need;
	/* The turn has returned. One exchange decides against a concurrent
	 * sc_exec_condemn (which moves RUNNING to CONDEMNED under the lock):
	 * whichever comes first wins, so a condemn either kills this turn or
	 * is refused, never the next one. */
	if ((atomic_exchange_explicit(&ex->slots[c->id].verdict,
				      SC_TURN_RETURNED, memory_order_acquire) &
	     3) == SC_TURN_CONDEMNED)
		return run_condemned(ex, c);
	c->ran = true;
	return 0;
}

int
sc_exec_run(struct sc_exec *ex, struct sc_claim *c, uint32_t budget)
{
	struct run_ctx r = {.ex = ex, .c = c, .budget = sc_unit_budget(budget)};
	struct sc_panic_record rec;

	if (!ex || !c || !c->unit || c->ran)
		return sc__fail(SC_EINVAL, "sc_exec_run: nothing claimed");
	if (run_guarded(&r, &rec) != 0) {
		(void)sc_exec_abandon(ex, c, &rec);
		return SC_EPANIC;
	}
	return turn_after(ex, c, r.need, &rec);
}

/* --- finish / abandon ---------------------------------------------------- */

/* Hand the unit in c back, leaving c's fields as they were (the caller
 * clears them, or a claim overwrites them); the caller holds ex->mu and
 * counts ex->running down. Returns whether the executor is shut down. */
static inline __attribute__((always_inline)) bool
finish_locked(struct sc_exec *ex, const struct sc_claim *c)
{
	struct sc__slot *s = &ex->slots[c->id];
	bool again, down;

	SC_ASSERT(sc__mutex_locked(&ex->mu));
	/* The claim holds this slot's token, and the slot does not. */
	SC_ASSERT(s->unit == NULL && c->unit == s->ref && ex->running > 0);
	s->unit = c->unit; /* the token goes back */
	relaxed_inc(&s->progress, c->turn.progress);
	relaxed_inc(&ex->turns_finished, 1);
	again = c->turn.more || slot_state(s) == SC_UNIT_RUNNING_KICKED;
	slot_end_turn(s, SC_UNIT_IDLE);
	down = atomic_load_explicit(&ex->shutdown, memory_order_relaxed);
	if (!down) {
		/* Behind the units already waiting. No signal: the worker
		 * that finishes is about to claim again. */
		if (again)
			queue_push_locked(ex, c->id);
		for (size_t i = 0; i < c->n_nbrs; i++)
			kick_locked(ex, c->nbrs[i]);
	}
	return down;
}

static inline void
claim_clear(struct sc_claim *c)
{
	c->unit = NULL;
	c->ran = false;
	c->n_nbrs = 0;
}

int
sc_exec_finish(struct sc_exec *ex, struct sc_claim *c)
{
	if (!ex || !c || !c->unit || !c->ran)
		return sc__fail(SC_EINVAL, "sc_exec_finish: %s",
				c && c->unit ? "the claimed unit was not run"
					     : "nothing claimed");
	if (ex->kind == SC_EXEC_STEAL) {
		(void)sc__steal_finish(ex, c, false);
		return 0;
	}
	pthread_mutex_lock(&ex->mu);
	(void)finish_locked(ex, c);
	ex->running--;
	wake_idle_waiters_locked(ex);
	pthread_mutex_unlock(&ex->mu);
	claim_clear(c);
	return 0;
}

/* finish, then claim the front unit into c, in one critical section;
 * true when c holds a new unit. */
static inline __attribute__((always_inline)) bool
finish_claim(struct sc_exec *ex, struct sc_claim *c, int32_t worker)
{
	uint32_t id = SC_NONE;

	pthread_mutex_lock(&ex->mu);
	if (!finish_locked(ex, c))
		id = queue_pop_locked(ex);
	if (id != SC_NONE) {
		/* running stays: one handed back, one claimed */
		claim_locked(ex, id, worker, c);
	} else {
		ex->running--;
		wake_idle_waiters_locked(ex);
		claim_clear(c);
	}
	pthread_mutex_unlock(&ex->mu);
	return id != SC_NONE;
}

int
sc_exec_finish_claim(struct sc_exec *ex, struct sc_claim *c, int32_t worker)
{
	if (!ex || !c || !c->unit || !c->ran)
		return sc__fail(SC_EINVAL, "sc_exec_finish_claim: %s",
				c && c->unit ? "the claimed unit was not run"
					     : "nothing claimed");
	if (ex->kind == SC_EXEC_STEAL) {
		/* The finisher is the next claimer: its queue gets the
		 * kicks, its next slot the first unit they queue. */
		c->worker = worker;
		if (sc__steal_finish(ex, c, true))
			return 0;
	} else if (finish_claim(ex, c, worker)) {
		return 0;
	}
	return sc_exec_is_shutdown(ex) ? SC_ESHUTDOWN : SC_EEMPTY;
}

/* --- the worker's loop ---------------------------------------------------- */

/* A worker's state, kept outside work_guarded's frame (in its caller's):
 * after a panic jumps back into that frame, what its own locals held is
 * indeterminate (C11 7.13.2.1), what is here is not. */
struct work_ctx {
	struct sc_exec *ex;
	struct sc_claim c;	    /* the unit this worker holds */
	struct sc_panic_record rec; /* where a turn's panic is written */
	int32_t worker;
	uint32_t budget;
};

/*
 * One guard for every turn of the worker: sigsetjmp runs once, here, and
 * each turn only pushes the guard before it and pops it after (two
 * thread-local stores), instead of a sigsetjmp per turn (a fifth of a
 * turn's instructions). Isolation is as exact as one guard per turn: the
 * guard is on sc__guard_top only while a turn (or its neighbours) runs,
 * so a panic anywhere else finds no guard of ours; a panic in the turn
 * pops it and jumps back to the sigsetjmp below, which abandons the unit
 * this worker holds (w->c) and goes on. The jump buffer stays valid for
 * every later panic as this frame does not return in between.
 */
static __attribute__((noinline)) void
work_guarded(struct work_ctx *w)
{
	struct sc__guard g;

	g.rec = &w->rec;
	g.outer = sc__guard_top;
	g.owner = w->ex;
	if (sigsetjmp(g.env, 0) != 0)
		(void)sc_exec_abandon(w->ex, &w->c, &w->rec);
	for (;;) {
		struct sc_claim *c = &w->c;
		struct sc_unit *u;
		size_t need = 0;

		if (!c->unit &&
		    sc_exec_claim_blocking(w->ex, w->worker, c) != 0)
			return;
		u = c->unit;
		sc__guard_top = &g;
		c->turn = u->ops->turn(u, w->budget);
		if (c->turn.progress > 0)
			need = u->ops->neighbours(u, c->nbrs, c->cap_nbrs);
		sc__guard_top = g.outer;
		if (turn_after(w->ex, c, need, &w->rec) != 0)
			continue; /* abandoned: c holds nothing */
		if (w->ex->kind == SC_EXEC_STEAL)
			(void)sc__steal_finish(w->ex, c, true);
		else
			(void)finish_claim(w->ex, c, w->worker);
	}
}

int
sc_exec_work(struct sc_exec *ex, int32_t worker, uint32_t budget)
{
	/* On this frame, not work_guarded's (see struct work_ctx); no
	 * allocation, so a worker cannot fail to start its loop. */
	struct work_ctx w;

	if (!ex)
		return sc__fail(SC_EINVAL, "sc_exec_work: executor is NULL");
	memset(&w, 0, sizeof(w));
	w.ex = ex;
	w.worker = worker;
	w.budget = sc_unit_budget(budget);
	sc_claim_init(&w.c);
	if (ex->kind == SC_EXEC_STEAL)
		sc__steal_self_set(ex, worker);
	work_guarded(&w);
	if (ex->kind == SC_EXEC_STEAL)
		sc__steal_self_set(NULL, -1);
	sc_claim_fini(&w.c);
	return 0;
}

/* Mark unit id's turn number turns + 1 condemned; the caller holds ex->mu. */
static int
condemn_locked(struct sc_exec *ex, uint32_t id, uint64_t turns, const char *why)
{
	struct sc__slot *s = &ex->slots[id];
	int st = slot_state(s);
	uint64_t v;

	if ((st != SC_UNIT_RUNNING && st != SC_UNIT_RUNNING_KICKED) ||
	    slot_turns(s) != turns)
		return SC_ESTATE; /* not running, or another turn */
	v = atomic_load_explicit(&s->verdict, memory_order_relaxed);
	if (v == SC_VERDICT(turns, SC_TURN_CONDEMNED))
		return 0; /* already: the first words stand */
	if (v != SC_VERDICT(turns, SC_TURN_RUNNING))
		return SC_ESTATE; /* returned (perhaps condemned, being read) */
	/* Only run reads why, and only after it sees CONDEMNED, which only a
	 * condemn (serialised by the lock) can set, by the compare-exchange
	 * below (release): nobody reads why while we write it. */
	(void)snprintf(s->why, sizeof(s->why), "%s", why);
	if (!atomic_compare_exchange_strong_explicit(
		&s->verdict, &v, SC_VERDICT(turns, SC_TURN_CONDEMNED),
		memory_order_release, memory_order_relaxed))
		return SC_ESTATE; /* run saw it return first */
	return 0;
}

int
sc_exec_condemn(struct sc_exec *ex, uint32_t id, uint64_t turns,
		const char *why)
{
	uint32_t n;
	int rc;

	if (!ex || !why)
		return sc__fail(SC_EINVAL, "sc_exec_condemn: %s is NULL",
				ex ? "why" : "executor");
	/* Checked before the lock, as for a kick. */
	n = atomic_load_explicit(&ex->n, memory_order_acquire);
	if (id >= n)
		return sc__fail(
		    SC_ENOENT, "sc_exec_condemn: no unit %u (%u units)", id, n);
	pthread_mutex_lock(&ex->mu);
	rc = condemn_locked(ex, id, turns, why);
	pthread_mutex_unlock(&ex->mu);
	if (rc)
		return sc__fail(rc,
				"sc_exec_condemn: unit %u (%s): turn %llu is "
				"not running",
				id, ex->slots[id].name,
				(unsigned long long)turns + 1);
	return 0;
}

void
sc__exec_record_panic_locked(struct sc_exec *ex,
			     const struct sc_panic_record *rec)
{
	if (ex->npanics < SC_EXEC_PANICS_KEPT)
		ex->panics[ex->npanics] = *rec;
	ex->npanics++;
}

/* --- death: peers, destroy, kicks --------------------------------------- */

struct peers_ctx {
	struct sc_unit *u;
	uint32_t *out; /* where the ids go */
	size_t max;    /* room there */
	size_t need;   /* what peers answered */
};

static void
peers_fn(void *arg)
{
	struct peers_ctx *p = arg;

	p->need = p->u->ops->peers(p->u, p->out, p->max);
}

/* Ask the dying unit u for its peers (unit.h), appended to c->nbrs after
 * the neighbours its turn named, if any. Cannot fail the death: a peers
 * that panics is reported, and then only what is already in c->nbrs is
 * kicked; a list that does not fit (no memory for it) is reported and
 * false returned: then every unit is kicked (a kick too many costs one
 * empty turn, one too few loses a frame). */
static bool
gather_peers(struct sc_claim *c, struct sc_unit *u, const char *name)
{
	struct peers_ctx p = {.u = u};
	struct sc_panic_record prec;
	size_t room;

	if (!u->ops->peers)
		return true;
	prec.message[0] = '\0';
	for (int ask = 0; ask < 2; ask++) {
		room = c->cap_nbrs - c->n_nbrs;
		p.out = c->nbrs ? c->nbrs + c->n_nbrs : NULL;
		p.max = room;
		if (sc_panic_guard(peers_fn, &p, &prec) != 0) {
			(void)fprintf(stderr,
				      "subcirc: peers of dying unit %u (%s) "
				      "panicked: %s\n",
				      c->id, name, prec.message);
			return true;
		}
		if (p.need <= room) {
			c->n_nbrs += p.need;
			return true;
		}
		if (p.need > SIZE_MAX - c->n_nbrs ||
		    !nbrs_reserve(c, c->n_nbrs + p.need))
			break;
	}
	(void)fprintf(stderr,
		      "subcirc: dying unit %u (%s) named %zu peers: no room "
		      "for them, every unit kicked\n",
		      c->id, name, p.need);
	return false;
}

/* Kick the dead unit's neighbours and peers in c->nbrs (every unit if
 * !all_peers); the caller holds ex->mu and the unit still counts as
 * running, so wait_idle cannot see a quiet executor before the kicks
 * land. */
static void
death_kicks_locked(struct sc_exec *ex, const struct sc_claim *c, bool all_peers)
{
	uint32_t n = atomic_load_explicit(&ex->n, memory_order_relaxed);

	if (atomic_load_explicit(&ex->shutdown, memory_order_relaxed))
		return;
	for (uint32_t id = 0; id < n && !all_peers; id++)
		if (id != c->id)
			kick_locked(ex, id);
	for (size_t i = 0; i < c->n_nbrs; i++)
		if (c->nbrs[i] < n && c->nbrs[i] != c->id)
			kick_locked(ex, c->nbrs[i]);
}

int
sc_exec_abandon(struct sc_exec *ex, struct sc_claim *c,
		const struct sc_panic_record *rec_in)
{
	struct sc_panic_record rec, drec;
	struct turn_mark mark;
	struct sc__slot *s;
	struct sc_unit *u;
	bool all_peers;

	if (!ex || !c || !c->unit || !rec_in)
		return sc__fail(SC_EINVAL, "sc_exec_abandon: nothing claimed");
	s = &ex->slots[c->id];
	u = c->unit;
	rec = *rec_in;
	rec.unit = c->id;
	memcpy(rec.name, s->name, sizeof(rec.name));
	rec.worker = c->worker;
	rec.in_destroy = false;

	pthread_mutex_lock(&ex->mu);
	SC_ASSERT(s->unit == NULL && u == s->ref); /* the claim's token */
	if (ex->kind == SC_EXEC_STEAL)
		sc__steal_bury_locked(ex, c->id);
	else
		slot_end_turn(s, SC_UNIT_DEAD);
	s->ref = NULL; /* no has_pending from now: destroy is next */
	relaxed_inc(&ex->turns_finished, 1);
	sc__exec_record_panic_locked(ex, &rec);
	pthread_mutex_unlock(&ex->mu);

	/* Whom the death concerns, asked while the unit still exists. Its
	 * peers and destroy are unit code of a unit still counted running:
	 * a wait for idle from there would wait for itself. */
	turn_enter(&mark, ex);
	all_peers = gather_peers(c, u, s->name);
	/* destroy runs with no lock, inside a guard: a destroy that panics
	 * is recorded, not fatal to the worker. */
	drec.message[0] = '\0';
	if (sc_panic_guard(destroy_fn, u, &drec) != 0) {
		drec.unit = c->id;
		memcpy(drec.name, s->name, sizeof(drec.name));
		drec.worker = c->worker;
		drec.in_destroy = true;
	} else {
		drec.in_destroy = false;
	}
	turn_leave(&mark);

	/* Still counted as running until its destroy is over, so that
	 * wait_idle sees the destroy's panic too, and until its peers are
	 * kicked: after destroy, so a producer kicked here sees the input
	 * edges destroy closed. */
	pthread_mutex_lock(&ex->mu);
	if (drec.in_destroy)
		sc__exec_record_panic_locked(ex, &drec);
	if (ex->kind == SC_EXEC_STEAL) {
		pthread_mutex_unlock(&ex->mu);
		sc__steal_death_kicks(ex, c, all_peers);
		goto out;
	}
	death_kicks_locked(ex, c, all_peers);
	ex->running--;
	wake_idle_waiters_locked(ex);
	pthread_mutex_unlock(&ex->mu);
out:
	c->unit = NULL;
	c->ran = false;
	c->n_nbrs = 0;
	return 0;
}

/* --- revival: a dead slot gets a new unit (sc_exec_revive) ------------- */

/*
 * Kept apart from the state machine's hot paths on purpose: DEAD -> IDLE
 * is the one edge out of DEAD, taken only here, and only once no turn is
 * in flight, because a dying unit counts as running until its abandon
 * (peers, destroy, death kicks) is over: with running == 0 the old unit
 * is gone and nothing can touch the slot but this call.
 */
int
sc_exec_revive(struct sc_exec *ex, uint32_t id, struct sc_unit *unit)
{
	struct sc__slot *s;
	const char *name;
	int rc = 0;

	if (!ex || !unit || !unit->ops || !unit->ops->turn ||
	    !unit->ops->neighbours || !unit->ops->name || !unit->ops->destroy)
		return sc__fail(SC_EINVAL, "sc_exec_revive: NULL argument or "
					   "unit ops incomplete");
	if (id >= atomic_load_explicit(&ex->n, memory_order_acquire))
		return sc__fail(SC_ENOENT, "sc_exec_revive: no unit %u", id);
	name = unit->ops->name(unit);
	s = &ex->slots[id];
	pthread_mutex_lock(&ex->mu);
	if (atomic_load_explicit(&ex->shutdown, memory_order_relaxed))
		rc = SC_ESHUTDOWN;
	else if (slot_state(s) != SC_UNIT_DEAD)
		rc = SC_ESTATE;
	else if (ex->kind == SC_EXEC_STEAL ? sc__steal_busy(ex)
					   : ex->running > 0)
		rc = SC_EBUSY; /* STEAL: a unit queued or running */
	if (!rc) {
		uint64_t w = atomic_load_explicit(&s->sw, memory_order_relaxed);

		SC_ASSERT(!s->unit && !s->ref); /* buried */
		s->unit = unit;
		s->ref = unit;
		(void)snprintf(s->name, sizeof(s->name), "%s",
			       name ? name : "?");
		s->next = SC_NONE;
		atomic_store_explicit(&s->worker, -1, memory_order_relaxed);
		atomic_store_explicit(&s->since, 0, memory_order_relaxed);
		atomic_store_explicit(&s->since_sw, 0, memory_order_relaxed);
		/* Its turns so far stay counted; only the state moves. */
		atomic_store_explicit(&s->sw,
				      (w & ~(uint64_t)SC_SW_STATE) |
					  (unsigned)SC_UNIT_IDLE,
				      memory_order_relaxed);
	}
	pthread_mutex_unlock(&ex->mu);
	if (rc == SC_ESTATE)
		return sc__fail(rc, "sc_exec_revive: unit %u (%s) is not dead",
				id, s->name);
	if (rc)
		return sc__fail(rc, "sc_exec_revive: unit %u: %s", id,
				rc == SC_EBUSY ? "a turn is in flight"
					       : "shut down");
	return 0;
}

/* --- waiting, shutdown, workers ------------------------------------------ */

/* Whether a unit is queued or running; QUEUE: the caller holds ex->mu. */
static bool
busy_locked(struct sc_exec *ex)
{
	if (ex->kind == SC_EXEC_STEAL)
		return sc__steal_busy(ex);
	return ex->head != SC_NONE || ex->running > 0;
}

int
sc_exec_wait_idle(struct sc_exec *ex, uint64_t timeout_ns,
		  struct sc_panic_record *first)
{
	struct timespec deadline;
	int rc = 0;

	if (!ex)
		return sc__fail(SC_EINVAL, "sc_exec_wait_idle: NULL");
	if (sc_exec_in_turn(ex))
		return sc__fail(SC_ESTATE,
				"sc_exec_wait_idle: called from inside a "
				"unit's turn, which would wait for itself");
	if (timeout_ns)
		sc__clock_deadline(&deadline, timeout_ns);
	pthread_mutex_lock(&ex->mu);
	/* seq_cst: STEAL's last decrement of `active` reads it without the
	 * lock (executor_steal.c, "Idle"). */
	atomic_fetch_add(&ex->idle_waiters, 1);
	while (busy_locked(ex)) {
		if (!timeout_ns) {
			pthread_cond_wait(&ex->idle_cv, &ex->mu);
			continue;
		}
		if (pthread_cond_timedwait(&ex->idle_cv, &ex->mu, &deadline) ==
			ETIMEDOUT &&
		    busy_locked(ex)) {
			rc = SC_ETIMEDOUT;
			break;
		}
	}
	atomic_fetch_sub(&ex->idle_waiters, 1);
	if (rc == 0 && ex->npanics > 0) {
		if (first)
			*first = ex->panics[0];
		rc = SC_EPANIC;
	}
	pthread_mutex_unlock(&ex->mu);
	if (rc == SC_ETIMEDOUT)
		return sc__fail(SC_ETIMEDOUT,
				"sc_exec_wait_idle: not idle after %llu ns",
				(unsigned long long)timeout_ns);
	if (rc == SC_EPANIC)
		return sc__fail(SC_EPANIC, "unit %u (%s) panicked: %s",
				ex->panics[0].unit, ex->panics[0].name,
				ex->panics[0].message);
	return 0;
}

void
sc_exec_shutdown(struct sc_exec *ex)
{
	uint32_t id;

	if (!ex)
		return;
	if (ex->kind == SC_EXEC_STEAL) {
		sc__steal_shutdown(ex);
		return;
	}
	pthread_mutex_lock(&ex->mu);
	atomic_store(&ex->shutdown, true);
	while ((id = queue_pop_locked(ex)) != SC_NONE) {
		slot_set_state(&ex->slots[id], SC_UNIT_IDLE);
	}
	pthread_cond_broadcast(&ex->work_cv);
	wake_idle_waiters_locked(ex);
	pthread_mutex_unlock(&ex->mu);
}

void
sc__exec_wake_all(struct sc_exec *ex)
{
	pthread_mutex_lock(&ex->mu);
	pthread_cond_broadcast(&ex->work_cv);
	pthread_mutex_unlock(&ex->mu);
}

bool
sc_exec_is_shutdown(const struct sc_exec *ex)
{
	return ex && atomic_load(&ex->shutdown);
}

void
sc_exec_worker_enter(struct sc_exec *ex)
{
	if (ex)
		atomic_fetch_add(&ex->workers, 1);
}

void
sc_exec_worker_leave(struct sc_exec *ex)
{
	if (ex)
		atomic_fetch_sub(&ex->workers, 1);
}

int
sc_exec_panic(struct sc_exec *ex, uint32_t i, struct sc_panic_record *out)
{
	int rc = 0;

	if (!ex || !out)
		return sc__fail(SC_EINVAL, "sc_exec_panic: NULL");
	pthread_mutex_lock(&ex->mu);
	if (i < ex->npanics && i < SC_EXEC_PANICS_KEPT)
		*out = ex->panics[i];
	else
		rc = SC_ENOENT;
	pthread_mutex_unlock(&ex->mu);
	if (rc)
		return sc__fail(rc, "sc_exec_panic: no panic %u", i);
	return 0;
}

/* --- introspection ------------------------------------------------------- */

void
sc_exec_info(struct sc_exec *ex, struct sc_exec_info *out)
{
	if (!ex || !out)
		return;
	pthread_mutex_lock(&ex->mu);
	out->units = atomic_load(&ex->n);
	out->workers_live = atomic_load(&ex->workers);
	out->running = ex->running;
	out->queue_len = atomic_load(&ex->qlen);
	out->turns_finished = atomic_load(&ex->turns_finished);
	out->panics = ex->npanics;
	out->idle = ex->head == SC_NONE && ex->running == 0;
	out->shutdown = atomic_load(&ex->shutdown);
	if (ex->kind == SC_EXEC_STEAL)
		sc__steal_info(ex, out);
	pthread_mutex_unlock(&ex->mu);
}

/* Observer stamping: the first snapshot that sees a unit's state word (its
 * state and the turn it is at) writes the time beside it; a later one that
 * sees the same word keeps it. Any transition changes the word (a unit is
 * QUEUED, or RUNNING, at most once per count of finished turns), so the
 * hot path stamps nothing and reads no clock (two reads per turn were a
 * third of a turn's cost); an age is at most one snapshot period short,
 * never long. Called with the snapshot lock held. */
static uint64_t
stamp_locked(struct sc__slot *s, uint64_t sw, uint64_t now)
{
	if (atomic_load_explicit(&s->since_sw, memory_order_relaxed) != sw ||
	    atomic_load_explicit(&s->since, memory_order_relaxed) == 0) {
		atomic_store_explicit(&s->since_sw, sw, memory_order_relaxed);
		atomic_store_explicit(&s->since, now, memory_order_relaxed);
	}
	return atomic_load_explicit(&s->since, memory_order_relaxed);
}

static void
slot_info_locked(struct sc__slot *s, uint32_t id, uint64_t now,
		 struct sc_exec_unit_info *o)
{
	uint64_t sw = atomic_load_explicit(&s->sw, memory_order_relaxed);
	int st = (int)(sw & SC_SW_STATE);
	bool running = st == SC_UNIT_RUNNING || st == SC_UNIT_RUNNING_KICKED;

	o->id = id;
	memcpy(o->name, s->name, sizeof(o->name));
	o->state = (enum sc_unit_state)st;
	o->queued_since_ns = 0;
	o->running_since_ns = 0;
	if (st == SC_UNIT_QUEUED)
		o->queued_since_ns = stamp_locked(s, sw, now);
	else if (running)
		o->running_since_ns = stamp_locked(s, sw, now);
	o->worker = running
			? atomic_load_explicit(&s->worker, memory_order_relaxed)
			: -1;
	o->turns = sw >> SC_SW_SHIFT;
	o->kicks = atomic_load_explicit(&s->kicks, memory_order_relaxed);
	o->progress = atomic_load_explicit(&s->progress, memory_order_relaxed);
	/* ref is cleared under the lock before a dead unit's destroy, so
	 * calling has_pending here cannot meet a freed unit. */
	o->has_pending = s->ref && s->ref->ops->has_pending &&
			 s->ref->ops->has_pending(s->ref);
}

size_t
sc_exec_snapshot(struct sc_exec *ex, struct sc_exec_unit_info *out, size_t max)
{
	uint64_t now = sc_clock_coarse_ns();
	uint32_t n;

	if (!ex || (!out && max))
		return 0;
	pthread_mutex_lock(&ex->mu);
	n = atomic_load(&ex->n);
	for (uint32_t i = 0; i < n && i < max; i++)
		slot_info_locked(&ex->slots[i], i, now, &out[i]);
	pthread_mutex_unlock(&ex->mu);
	return n;
}

int
sc_exec_unit_state(struct sc_exec *ex, uint32_t id)
{
	uint32_t n;

	if (!ex)
		return sc__fail(SC_EINVAL, "sc_exec_unit_state: ex is NULL");
	n = atomic_load_explicit(&ex->n, memory_order_acquire);
	if (id >= n)
		return sc__fail(SC_ENOENT, "sc_exec_unit_state: no unit %u",
				id);
	return slot_state(&ex->slots[id]);
}

void
sc_claim_init(struct sc_claim *c)
{
	if (!c)
		return;
	memset(c, 0, sizeof(*c));
	c->worker = -1;
}

void
sc_claim_fini(struct sc_claim *c)
{
	if (!c)
		return;
	free(c->nbrs);
	c->nbrs = NULL;
	c->cap_nbrs = 0;
}

int
sc_exec_kind_parse(const char *name, enum sc_exec_kind *out)
{
	return sc__errwrap(exec_kind_parse_body(name, out),
			   "sc_exec_kind_parse");
}

/*
 * executor_steal.c - the STEAL executor (executor.h, "Two executors"): a
 * queue per worker, an injection queue, stealing, and a next slot.
 *
 * No lock on a worker's hot path. Each slot's state word (turns << 3 |
 * state, executor_int.h) moves only by compare-and-swap, and every kick
 * does one, even of a unit already QUEUED or RUNNING_KICKED (the same
 * word back): the CAS chain on the word orders a kick after the frames
 * its kicker sent, and before the claim or finish that reads it. With a
 * plain load a kick could read QUEUED while the claimer's turn reads the
 * edge before the frame lands (the store-buffer pattern), and the frame
 * would be stranded.
 *
 * Where a unit waits: only the thread whose CAS made it QUEUED (a kick
 * from IDLE, or the finish of its own turn) puts it anywhere, once, and
 * a take removes it once (the ring's CAS on head, or the injection
 * queue's lock), so a unit is in at most one place: a worker's ring, the
 * injection queue, or a worker's next slot (held for the instant between
 * a finish and the claim that follows it in sc__steal_finish; nobody else
 * can see it there).
 *
 * Idle: `active` counts units QUEUED or RUNNING*. A kick counts a unit
 * before it can be taken; a finish that makes its unit IDLE uncounts it
 * after the kicks it makes, so the count is never 0 while a unit waits or
 * runs. The next slot lets a finish hand its own count to the unit it
 * runs next: no shared counter is touched on a ping-pong turn. wait_idle
 * sleeps on idle_cv; the decrement that reaches 0 wakes it, and the two
 * sides order their counter and waiter updates with seq_cst, so neither
 * misses the other.
 *
 * Parking: a worker that found nothing spins `spin` polls, then counts
 * itself in `parked` under ex->mu and looks once more before it waits on
 * work_cv; a thread that put a unit in a queue then reads `parked` by a
 * seq_cst RMW (ordered against the parker's increment, as the two sides
 * of Dekker's protocol) and signals one parked worker if it is not 0 (a
 * busy pool signals nobody). shutdown makes the same RMW after setting its
 * flag, so a push that raced with shutdown either sees the flag and
 * discards what it pushed, or is seen by shutdown's drain.
 */
#include "runtime/executor.h"
#include "runtime/executor_int.h"

#include <stdlib.h>
#include <string.h>

#include "operators/error.h"

/* The executor and worker index of this thread while it runs
 * sc_exec_work on a STEAL executor: a kick made inside a turn then goes to
 * that worker's own queue. */
static _Thread_local const struct sc_exec *self_ex;
static _Thread_local int32_t self_w = -1;
static _Thread_local struct sc__wq *self_q; /* own(self_ex, self_w) */

static inline struct sc__wq *own(struct sc_exec *ex, int32_t w);

void
sc__steal_self_set(struct sc_exec *ex, int32_t worker)
{
	self_ex = ex;
	self_w = worker;
	self_q = ex ? own(ex, worker) : NULL;
}

int
sc__steal_init(struct sc_exec *ex, uint32_t workers)
{
	ex->wq = calloc(workers, sizeof(*ex->wq));
	if (!ex->wq)
		return SC_ENOMEM;
	ex->nwq = workers;
	return 0;
}

void
sc__steal_fini(struct sc_exec *ex)
{
	free(ex->wq);
	ex->wq = NULL;
}

/* --- a worker's ring (executor_int.h, struct sc__wq) --------------------- */

/* The owner only. False when full. */
static inline bool
wq_push(struct sc__wq *q, uint32_t id)
{
	uint32_t t = atomic_load_explicit(&q->tail, memory_order_relaxed);
	uint32_t h = atomic_load_explicit(&q->head, memory_order_acquire);

	if (t - h >= SC_WQ_CAP)
		return false;
	atomic_store_explicit(&q->cell[t % SC_WQ_CAP], id,
			      memory_order_relaxed);
	atomic_store_explicit(&q->tail, t + 1, memory_order_release);
	return true;
}

/* Anyone. The front unit, or SC_NONE when empty. */
static inline uint32_t
wq_take(struct sc__wq *q)
{
	uint32_t h = atomic_load_explicit(&q->head, memory_order_acquire);

	for (;;) {
		uint32_t t =
		    atomic_load_explicit(&q->tail, memory_order_acquire);
		uint32_t id;

		if (t == h)
			return SC_NONE;
		id = atomic_load_explicit(&q->cell[h % SC_WQ_CAP],
					  memory_order_relaxed);
		if (atomic_compare_exchange_weak_explicit(&q->head, &h, h + 1,
							  memory_order_acq_rel,
							  memory_order_acquire))
			return id;
	}
}

static inline uint32_t
wq_len(struct sc__wq *q)
{
	uint32_t t = atomic_load_explicit(&q->tail, memory_order_acquire);

	return t - atomic_load_explicit(&q->head, memory_order_acquire);
}

/* Worker w's ring, or NULL when w has none (the host, the sim's -1, or an
 * index past opts.workers). */
static inline struct sc__wq *
own(struct sc_exec *ex, int32_t w)
{
	return w >= 0 && (uint32_t)w < ex->nwq ? &ex->wq[w] : NULL;
}

/* Worker w's ring if this thread may push to it: its owner is the thread
 * that runs worker w's sc_exec_work, or, while no pool thread is in the
 * executor, the one thread that drives it (the sim, a test). Any other
 * caller naming w (a host finishing a claim it made as w while the pool
 * runs) gets NULL and uses the injection queue: a ring has one producer. */
static inline struct sc__wq *
mine(struct sc_exec *ex, int32_t w)
{
	if (self_ex == ex)
		return self_w == w ? self_q : NULL;
	if (atomic_load_explicit(&ex->workers, memory_order_relaxed) != 0)
		return NULL;
	return own(ex, w);
}

/* Steals look at rings below nwq_used; a worker counts itself in before
 * its first claim (so before its first push). */
static inline void
note_worker(struct sc_exec *ex, int32_t w)
{
	uint32_t used =
	    atomic_load_explicit(&ex->nwq_used, memory_order_relaxed);

	if (!own(ex, w))
		return;
	while ((uint32_t)w >= used &&
	       !atomic_compare_exchange_weak_explicit(
		   &ex->nwq_used, &used, (uint32_t)w + 1, memory_order_relaxed,
		   memory_order_relaxed))
		;
}

/* --- counting, waking ----------------------------------------------------- */

static inline void
active_sub(struct sc_exec *ex, uint32_t by)
{
	if (atomic_fetch_sub_explicit(&ex->active, by, memory_order_seq_cst) ==
		by &&
	    atomic_load_explicit(&ex->idle_waiters, memory_order_seq_cst))
		sc__exec_wake_idle(ex);
}

static bool
has_work(struct sc_exec *ex)
{
	uint32_t used =
	    atomic_load_explicit(&ex->nwq_used, memory_order_relaxed);

	if (atomic_load_explicit(&ex->qlen, memory_order_relaxed))
		return true;
	for (uint32_t v = 0; v < used; v++)
		if (wq_len(&ex->wq[v]))
			return true;
	return false;
}

static void drain(struct sc_exec *ex);

/* After a push: wake one parked worker if there is one; after shutdown,
 * discard what the push put there (see the top of this file). */
static void
notify(struct sc_exec *ex)
{
	/* An RMW, not a fence (ThreadSanitizer models no fences): it
	 * orders the push before the read of `parked` and of the shutdown
	 * flag, against park's and shutdown's RMW of the same word. */
	if (atomic_fetch_add_explicit(&ex->parked, 0, memory_order_seq_cst)) {
		pthread_mutex_lock(&ex->mu);
		pthread_cond_signal(&ex->work_cv);
		pthread_mutex_unlock(&ex->mu);
	}
	if (atomic_load_explicit(&ex->shutdown, memory_order_acquire))
		drain(ex);
}

/* --- states ----------------------------------------------------------------
 */

/* A kick's move of slot s (executor.h): IDLE -> QUEUED, RUNNING ->
 * RUNNING_KICKED, QUEUED and RUNNING_KICKED to themselves (a CAS all the
 * same: see the top of this file), DEAD ignored. True when this kick made
 * the unit QUEUED: the caller must then put it in a queue. kick_to_next
 * is the next slot's kick: IDLE -> RUNNING, the kick and the claim in one
 * step (nobody else could have reached it in between). */
static inline bool
kick_move(struct sc__slot *s, unsigned won)
{
	uint64_t w = atomic_load_explicit(&s->sw, memory_order_relaxed);

	for (;;) {
		unsigned st = (unsigned)(w & SC_SW_STATE);
		uint64_t base = w & ~(uint64_t)SC_SW_STATE;
		uint64_t to = w;

		if (st == SC_UNIT_DEAD)
			return false;
		if (st == SC_UNIT_IDLE)
			to = base | won;
		else if (st == SC_UNIT_RUNNING)
			to = base | SC_UNIT_RUNNING_KICKED;
		if (atomic_compare_exchange_weak_explicit(
			&s->sw, &w, to, memory_order_acq_rel,
			memory_order_relaxed)) {
			atomic_fetch_add_explicit(&s->kicks, 1,
						  memory_order_relaxed);
			return st == SC_UNIT_IDLE;
		}
	}
}

static inline bool
kick_state(struct sc__slot *s)
{
	return kick_move(s, SC_UNIT_QUEUED);
}

static inline bool
kick_to_next(struct sc__slot *s)
{
	return kick_move(s, SC_UNIT_RUNNING);
}

/* Slot s from `from` (the state the caller knows it is in, the only one
 * that moves it) to `to`, by CAS against concurrent kicks' no-op CAS;
 * `turn` adds a finished turn. */
static inline void
move_state(struct sc__slot *s, unsigned from, unsigned to, bool turn)
{
	uint64_t w = atomic_load_explicit(&s->sw, memory_order_relaxed);
	uint64_t nw;

	do {
		SC_ASSERT((w & SC_SW_STATE) == from);
		(void)from;
		nw = (w & ~(uint64_t)SC_SW_STATE) | to;
		if (turn)
			nw += 1u << SC_SW_SHIFT;
	} while (!atomic_compare_exchange_weak_explicit(
	    &s->sw, &w, nw, memory_order_acq_rel, memory_order_relaxed));
}

/* A queued unit taken out of every queue after shutdown: IDLE. */
static void
discard(struct sc_exec *ex, uint32_t id)
{
	move_state(&ex->slots[id], SC_UNIT_QUEUED, SC_UNIT_IDLE, false);
	active_sub(ex, 1);
}

static void
drain(struct sc_exec *ex)
{
	uint32_t used =
	    atomic_load_explicit(&ex->nwq_used, memory_order_relaxed);
	uint32_t id;

	for (;;) {
		pthread_mutex_lock(&ex->mu);
		id = sc__fifo_pop_locked(ex);
		pthread_mutex_unlock(&ex->mu);
		if (id == SC_NONE)
			break;
		discard(ex, id);
	}
	for (uint32_t v = 0; v < used; v++)
		while ((id = wq_take(&ex->wq[v])) != SC_NONE)
			discard(ex, id);
}

/* Put unit id, just made QUEUED by this thread, at the back of worker w's
 * ring (the injection queue when w has none or it is full), counted. */
static bool
place(struct sc_exec *ex, struct sc__wq *q, uint32_t id)
{
	atomic_fetch_add_explicit(&ex->active, 1, memory_order_relaxed);
	if (q && wq_push(q, id))
		return false;
	pthread_mutex_lock(&ex->mu);
	sc__fifo_push_locked(ex, id);
	pthread_mutex_unlock(&ex->mu);
	return true;
}

/* The fairness rule's queue for a unit that goes again (executor.h,
 * "Fairness"): the back of its worker's ring, behind every unit waiting
 * there and, moved in front of it (in order, as many as fit), every unit
 * waiting in the injection queue; so it runs after all of them, and the
 * injection queue is left empty (a burst from the host does not keep
 * every later turn on its lock). A finisher with no ring, or a ring too
 * full, leaves it at the back of the injection queue. Already counted.
 * True when it went to the injection queue. */
static bool
requeue(struct sc_exec *ex, struct sc__wq *q, uint32_t id)
{
	uint32_t moved;
	bool inj;

	if (q && !atomic_load_explicit(&ex->qlen, memory_order_relaxed) &&
	    wq_push(q, id))
		return false;
	pthread_mutex_lock(&ex->mu);
	while (q && wq_len(q) + 1 < SC_WQ_CAP &&
	       (moved = sc__fifo_pop_locked(ex)) != SC_NONE)
		(void)wq_push(q, moved); /* room checked */
	inj = !q || atomic_load_explicit(&ex->qlen, memory_order_relaxed) ||
	      !wq_push(q, id);
	if (inj)
		sc__fifo_push_locked(ex, id);
	pthread_mutex_unlock(&ex->mu);
	return inj;
}

/* --- kick, claim -----------------------------------------------------------
 */

int
sc__steal_kick(struct sc_exec *ex, uint32_t id)
{
	if (atomic_load_explicit(&ex->shutdown, memory_order_relaxed))
		return sc__fail(SC_ESHUTDOWN,
				"sc_exec_kick: unit %u: shut down", id);
	if (!kick_state(&ex->slots[id]))
		return 0;
	(void)place(ex, self_ex == ex ? self_q : NULL, id);
	notify(ex);
	return 0;
}

/*
 * The front of the injection queue; a worker (q) also moves a share of
 * what waits behind it to the back of its own ring, in order (its share:
 * the queue over the workers, as Go's scheduler takes from its global
 * queue, at most half a ring), so that a burst from the host spreads over
 * the rings, where taking needs no lock, and leaves the injection queue
 * empty (a unit that says more then stays in its worker's ring).
 */
static uint32_t
inj_take(struct sc_exec *ex, struct sc__wq *q)
{
	uint32_t id, share, used;

	if (!atomic_load_explicit(&ex->qlen, memory_order_relaxed))
		return SC_NONE;
	used = atomic_load_explicit(&ex->nwq_used, memory_order_relaxed);
	pthread_mutex_lock(&ex->mu);
	id = sc__fifo_pop_locked(ex);
	if (id != SC_NONE && q) {
		share = atomic_load_explicit(&ex->qlen, memory_order_relaxed) /
			(used ? used : 1);
		if (share > SC_WQ_CAP / 2 - wq_len(q))
			share = wq_len(q) < SC_WQ_CAP / 2
				    ? SC_WQ_CAP / 2 - wq_len(q)
				    : 0;
		while (share-- > 0) {
			uint32_t more = sc__fifo_pop_locked(ex);

			if (more == SC_NONE)
				break;
			(void)wq_push(q, more); /* room checked above */
		}
	}
	pthread_mutex_unlock(&ex->mu);
	return id;
}

/* The claim order of executor.h (sc_exec_claim). */
static uint32_t
find_work(struct sc_exec *ex, int32_t w, struct sc__wq *q)
{
	uint32_t used =
	    atomic_load_explicit(&ex->nwq_used, memory_order_relaxed);
	uint32_t id;

	if (q) {
		if (++q->ticks % SC_EXEC_INJECT_EVERY == 0 &&
		    (id = inj_take(ex, NULL)) != SC_NONE)
			return id;
		if ((id = wq_take(q)) != SC_NONE)
			return id;
	}
	if ((id = inj_take(ex, q)) != SC_NONE)
		return id;
	for (uint32_t k = 1; k <= used; k++) {
		uint32_t v = (uint32_t)((int64_t)w + k) % used;

		if (q && v == (uint32_t)w)
			continue;
		if ((id = wq_take(&ex->wq[v])) != SC_NONE)
			return id;
	}
	return SC_NONE;
}

/* Claim unit id, just taken out of a queue by this thread, into c; after
 * shutdown it is discarded instead (false). */
static bool
take(struct sc_exec *ex, uint32_t id, int32_t w, struct sc_claim *c)
{
	if (atomic_load_explicit(&ex->shutdown, memory_order_relaxed)) {
		discard(ex, id);
		return false;
	}
	move_state(&ex->slots[id], SC_UNIT_QUEUED, SC_UNIT_RUNNING, false);
	sc__claim_fill(ex, id, w, c);
	return true;
}

int
sc__steal_claim(struct sc_exec *ex, int32_t worker, struct sc_claim *c)
{
	uint32_t id;

	if (atomic_load_explicit(&ex->shutdown, memory_order_relaxed)) {
		drain(ex); /* as claim_blocking does on its way out */
		return SC_ESHUTDOWN;
	}
	note_worker(ex, worker);
	id = find_work(ex, worker, mine(ex, worker));
	if (id == SC_NONE)
		return SC_EEMPTY;
	return take(ex, id, worker, c) ? 0 : SC_ESHUTDOWN;
}

int
sc__steal_steal(struct sc_exec *ex, int32_t thief, int32_t victim,
		struct sc_claim *c)
{
	uint32_t id;

	if (victim < 0 || (uint32_t)victim >= ex->nwq)
		return sc__fail(SC_EINVAL, "sc_exec_steal: no worker %d",
				victim);
	if (atomic_load_explicit(&ex->shutdown, memory_order_relaxed))
		return SC_ESHUTDOWN;
	note_worker(ex, thief);
	id = wq_take(&ex->wq[victim]);
	if (id == SC_NONE)
		return SC_EEMPTY;
	return take(ex, id, thief, c) ? 0 : SC_ESHUTDOWN;
}

static void
spin_for_work(struct sc_exec *ex)
{
	for (uint32_t i = 0; i < ex->spin; i++) {
		if (has_work(ex) ||
		    atomic_load_explicit(&ex->shutdown, memory_order_relaxed))
			return;
		sc_cpu_relax();
	}
}

/* Count in as parked, look once more, wait; a wake-up with nothing to
 * take (spurious, or another worker was first) loops back in the caller. */
static void
park(struct sc_exec *ex)
{
	pthread_mutex_lock(&ex->mu);
	atomic_fetch_add_explicit(&ex->parked, 1, memory_order_seq_cst);
	if (!has_work(ex) &&
	    !atomic_load_explicit(&ex->shutdown, memory_order_relaxed))
		pthread_cond_wait(&ex->work_cv, &ex->mu);
	atomic_fetch_sub_explicit(&ex->parked, 1, memory_order_relaxed);
	pthread_mutex_unlock(&ex->mu);
}

int
sc__steal_claim_blocking(struct sc_exec *ex, int32_t worker, struct sc_claim *c)
{
	bool spun = false, woke = false;
	uint32_t id;

	note_worker(ex, worker);
	while (!atomic_load_explicit(&ex->shutdown, memory_order_relaxed)) {
		id = find_work(ex, worker, mine(ex, worker));
		if (id != SC_NONE) {
			if (!take(ex, id, worker, c))
				break;
			/* Woken for work and more is left: pass the wake on,
			 * so that a burst wakes as many workers as it needs,
			 * one at a time. */
			if (woke && has_work(ex))
				notify(ex);
			return 0;
		}
		if (!spun) {
			spin_for_work(ex);
			spun = true;
			continue;
		}
		park(ex);
		woke = true;
	}
	/* On the way out: a finish of this worker that skipped its notify
	 * (see sc__steal_finish) may have pushed after shutdown's drain. */
	drain(ex);
	return SC_ESHUTDOWN;
}

/* --- finish ----------------------------------------------------------------
 */

/* What one finish knows and did so far, passed from step to step. */
struct finish {
	struct sc__wq *q; /* the finisher's ring; NULL: host, sim (-1) */
	bool down;	  /* shutdown had begun when the finish began */
	bool again;	  /* the unit goes back to a queue */
	bool pushed;	  /* this finish queued something */
	bool inherit;	  /* the next slot's unit takes over this count */
	bool inj;	  /* something went (or may go) to the injector */
	bool hold;	  /* a ringless finisher's own count over kicks */
	uint32_t next;	  /* the next slot's unit, or SC_NONE */
	uint32_t mine;	  /* units pushed to q */
};

/* Step 1: the token goes back, then the state says so: QUEUED when the
 * unit runs again (it said more, or was kicked while running, and no
 * shutdown), else IDLE; the version advances either way. */
static void
finish_state(struct sc_exec *ex, const struct sc_claim *c, struct finish *f)
{
	struct sc__slot *s = &ex->slots[c->id];
	uint64_t w, nw;

	SC_ASSERT(s->unit == NULL && c->unit == s->ref);
	s->unit = c->unit; /* the token goes back before the state says so */
	relaxed_inc(&s->progress, c->turn.progress);
	w = atomic_load_explicit(&s->sw, memory_order_relaxed);
	do {
		unsigned st = (unsigned)(w & SC_SW_STATE);

		SC_ASSERT(st == SC_UNIT_RUNNING ||
			  st == SC_UNIT_RUNNING_KICKED);
		f->again =
		    !f->down && (c->turn.more || st == SC_UNIT_RUNNING_KICKED);
		nw = (w & ~(uint64_t)SC_SW_STATE) + (1u << SC_SW_SHIFT);
		nw |= f->again ? SC_UNIT_QUEUED : SC_UNIT_IDLE;
	} while (!atomic_compare_exchange_weak_explicit(
	    &s->sw, &w, nw, memory_order_acq_rel, memory_order_relaxed));
}

/*
 * Step 2, a finisher with no ring (the host, the sim's -1): it queues the
 * unit before its kicks, in front of the units they queue, as the
 * one-queue executor does; it then holds one count of its own over the
 * kicks (a worker may take the unit, finish it and uncount it at once: see
 * finish_requeue_worker). No next slot here, and no worker's hot path: two
 * RMWs more are no matter.
 */
static void
finish_requeue_ringless(struct sc_exec *ex, const struct sc_claim *c,
			struct finish *f)
{
	atomic_fetch_add_explicit(&ex->active, 1, memory_order_relaxed);
	f->inj |= requeue(ex, f->q, c->id);
	f->pushed = true;
	f->hold = true;
}

/* Step 3: kick the unit's neighbours; with `chain`, the first one this
 * worker may run next goes to the next slot instead of a queue. */
static void
finish_kicks(struct sc_exec *ex, const struct sc_claim *c, bool chain,
	     struct finish *f)
{
	for (size_t i = 0; i < c->n_nbrs && !f->down; i++) {
		uint32_t id = c->nbrs[i];

		if (chain && f->q && f->next == SC_NONE &&
		    f->q->streak < SC_EXEC_NEXT_BOUND) {
			if (!kick_to_next(&ex->slots[id]))
				continue;
			/* The next slot, claimed already. It takes over this
			 * unit's count if this unit goes idle; else (this one
			 * is in a queue, where a thief may finish it) it is
			 * counted now. */
			f->next = id;
			if (f->again)
				atomic_fetch_add_explicit(&ex->active, 1,
							  memory_order_relaxed);
			else
				f->inherit = true;
			continue;
		}
		if (!kick_state(&ex->slots[id]))
			continue;
		f->inj |= place(ex, f->q, id);
		f->pushed = true;
		f->mine++;
	}
}

/*
 * Step 4, a worker: it queues the unit only now, after every kick counted
 * what it queued: in the ring a thief may take this unit, finish it and
 * uncount it at once, which before the kicks would let wait_idle see 0
 * with this finish's kicks, or the next slot's unit, still to be counted
 * (the model's BUG_REQUEUE_BEFORE_KICKS). Its count stays.
 */
static void
finish_requeue_worker(struct sc_exec *ex, const struct sc_claim *c,
		      struct finish *f)
{
	f->inj |= requeue(ex, f->q, c->id);
	f->pushed = true;
	f->mine++;
}

/*
 * Step 5: wake a parked worker only for work this one will not take at
 * once, and only when its ring starts to hold some: a worker that finishes
 * and claims takes its ring's front next, so one unit there (a unit that
 * said more, alone) is no reason to wake anyone, and while the ring holds
 * two or more the push that made it so woke one (that push's RMW, notify,
 * is the wake's half of the parking protocol). (The ring held fewer than 2
 * before this finish's `mine` pushes; a thief's take in between can only
 * skip a wake: the owner still runs what it pushed.) Nor can a skipped
 * notify strand a unit after shutdown: a worker drains every queue on its
 * way out of claim_blocking, after its last push.
 */
static void
finish_wake(struct sc_exec *ex, bool chain, const struct finish *f)
{
	if (f->pushed && (!chain || f->inj ||
			  (wq_len(f->q) >= 2 && wq_len(f->q) < f->mine + 2)))
		notify(ex);
}

/* Step 6: the claim that follows (the next slot's unit, else, with
 * `chain`, any work found), or none: true when *c holds a new claim. */
static bool
finish_claim_next(struct sc_exec *ex, struct sc_claim *c, bool chain,
		  const struct finish *f)
{
	uint32_t id;

	if (f->next != SC_NONE) {
		f->q->streak++;
		sc__claim_fill(ex, f->next, c->worker, c);
		return true;
	}
	if (f->q)
		f->q->streak = 0;
	if (chain && !f->down) {
		id = find_work(ex, c->worker, f->q);
		if (id != SC_NONE && take(ex, id, c->worker, c))
			return true;
	}
	c->unit = NULL;
	c->ran = false;
	c->n_nbrs = 0;
	if (atomic_load_explicit(&ex->shutdown, memory_order_acquire))
		drain(ex); /* what a skipped notify would have discarded */
	return false;
}

bool
sc__steal_finish(struct sc_exec *ex, struct sc_claim *c, bool chain)
{
	struct finish f = {
	    .q = mine(ex, c->worker),
	    .down = atomic_load_explicit(&ex->shutdown, memory_order_relaxed),
	    .next = SC_NONE};

	f.inj = !f.q;
	finish_state(ex, c, &f);
	if (f.again && !f.q)
		finish_requeue_ringless(ex, c, &f);
	finish_kicks(ex, c, chain, &f);
	if (f.again && f.q)
		finish_requeue_worker(ex, c, &f);
	if ((!f.again && !f.inherit) || f.hold)
		active_sub(ex, 1); /* after the kicks it counted */
	finish_wake(ex, chain, &f);
	return finish_claim_next(ex, c, chain, &f);
}

/* --- death, shutdown, figures -------------------------------------------- */

void
sc__steal_bury_locked(struct sc_exec *ex, uint32_t id)
{
	struct sc__slot *s = &ex->slots[id];
	uint64_t w = atomic_load_explicit(&s->sw, memory_order_relaxed);
	uint64_t nw;

	do {
		SC_ASSERT((w & SC_SW_STATE) == SC_UNIT_RUNNING ||
			  (w & SC_SW_STATE) == SC_UNIT_RUNNING_KICKED);
		nw = ((w & ~(uint64_t)SC_SW_STATE) + (1u << SC_SW_SHIFT)) |
		     SC_UNIT_DEAD;
	} while (!atomic_compare_exchange_weak_explicit(
	    &s->sw, &w, nw, memory_order_acq_rel, memory_order_relaxed));
}

void
sc__steal_death_kicks(struct sc_exec *ex, const struct sc_claim *c, bool list)
{
	uint32_t n = atomic_load_explicit(&ex->n, memory_order_acquire);
	struct sc__wq *q = mine(ex, c->worker);
	bool pushed = false;

	if (!atomic_load_explicit(&ex->shutdown, memory_order_relaxed)) {
		for (uint32_t id = 0; id < n && !list; id++)
			if (id != c->id && kick_state(&ex->slots[id])) {
				(void)place(ex, q, id);
				pushed = true;
			}
		for (size_t i = 0; i < c->n_nbrs; i++) {
			uint32_t id = c->nbrs[i];

			if (id < n && id != c->id &&
			    kick_state(&ex->slots[id])) {
				(void)place(ex, q, id);
				pushed = true;
			}
		}
	}
	if (pushed)
		notify(ex);
	active_sub(ex, 1); /* the dead unit's */
}

void
sc__steal_shutdown(struct sc_exec *ex)
{
	pthread_mutex_lock(&ex->mu);
	atomic_store_explicit(&ex->shutdown, true, memory_order_seq_cst);
	pthread_cond_broadcast(&ex->work_cv);
	pthread_mutex_unlock(&ex->mu);
	/* Against notify's RMW: a push either sees the flag, or is seen
	 * by the drain below. */
	(void)atomic_fetch_add_explicit(&ex->parked, 0, memory_order_seq_cst);
	drain(ex);
	sc__exec_wake_idle(ex);
}

bool
sc__steal_busy(struct sc_exec *ex)
{
	return atomic_load_explicit(&ex->active, memory_order_seq_cst) > 0;
}

uint32_t
sc__steal_queued(struct sc_exec *ex, int32_t w)
{
	struct sc__wq *q = own(ex, w);

	if (w < 0)
		return atomic_load_explicit(&ex->qlen, memory_order_relaxed);
	return q ? wq_len(q) : 0;
}

/* A scan of the slots: no counter shared by the workers is kept for these
 * (it would be one more cache line every turn of every worker touches). */
void
sc__steal_info(struct sc_exec *ex, struct sc_exec_info *out)
{
	uint32_t n = atomic_load_explicit(&ex->n, memory_order_acquire);
	uint32_t queued = 0, running = 0;
	uint64_t turns = 0;

	for (uint32_t i = 0; i < n; i++) {
		uint64_t w = atomic_load_explicit(&ex->slots[i].sw,
						  memory_order_relaxed);
		unsigned st = (unsigned)(w & SC_SW_STATE);

		queued += st == SC_UNIT_QUEUED;
		running +=
		    st == SC_UNIT_RUNNING || st == SC_UNIT_RUNNING_KICKED;
		turns += w >> SC_SW_SHIFT;
	}
	out->units = n;
	out->running = running;
	out->queue_len = queued;
	out->turns_finished = turns;
	out->idle = !sc__steal_busy(ex);
}

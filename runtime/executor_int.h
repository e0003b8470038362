/*
 * executor_int.h - the executor's internals, shared by its two kinds
 * (executor.c: the one queue; executor_steal.c: per-worker queues), and
 * test hooks. Internal to runtime/ and its tests.
 */
#ifndef SC_RUNTIME_EXECUTOR_INT_H
#define SC_RUNTIME_EXECUTOR_INT_H

#include <pthread.h>
#include <stdatomic.h>

#include "operators/base.h"
#include "runtime/executor.h"
#include "runtime/panic.h"

#define SC_EXEC_DEFAULT_CAPACITY 1024
#define SC_EXEC_DEFAULT_WORKERS	 64
#define SC_EXEC_DEFAULT_SPIN	 256
#define SC_EXEC_PANICS_KEPT	 64
#define SC_NONE			 UINT32_MAX

/* The verdict on a slot's current turn (sc_exec_condemn), in the low two
 * bits of a word whose upper bits are the number of turns the unit had
 * finished when the turn was claimed: a condemn of one turn can never
 * match the next one's word. */
#define SC_TURN_RUNNING	     0 /* claimed; its turn has not returned yet */
#define SC_TURN_RETURNED     1 /* sc_exec_run saw it return; too late */
#define SC_TURN_CONDEMNED    2 /* condemned: abandoned when it returns */
#define SC_VERDICT(turns, v) (((uint64_t)(turns) << 2) | (uint64_t)(v))

/* A slot's state word: the turns it finished (handed back or abandoned)
 * above SC_SW_SHIFT bits of enum sc_unit_state. One word, so that a
 * reader sees the state and the turn it belongs to together, and a
 * finish moves both with one store. */
#define SC_SW_SHIFT 3
#define SC_SW_STATE 7u

struct sc__slot {
	struct sc_unit *unit;	     /* the unit while in its slot; NULL while
					claimed (the token is out) or dead */
	struct sc_unit *ref;	     /* the unit for has_pending; NULL once
					dead (its destroy may be running) */
	_Atomic uint64_t sw;	     /* turns << SC_SW_SHIFT | state */
	uint32_t next;		     /* FIFO link while QUEUED */
	char name[SC_UNIT_NAME_MAX]; /* copied at add */
	_Atomic uint64_t since;	     /* when a snapshot first saw the state
					word since_sw (snapshots only) */
	_Atomic uint64_t since_sw;   /* the word `since` belongs to; a
					change of state or turn changes the
					word, so the hot path stamps
					nothing */
	_Atomic int32_t worker;	     /* the claimer (read while RUNNING*) */
	_Atomic uint64_t kicks;	     /* kicks while alive */
	_Atomic uint64_t progress;   /* frames moved, summed */
	_Atomic uint64_t verdict;    /* SC_VERDICT: reset by claim, then
					one of run and condemn moves it,
					whichever comes first */
	char why[SC_PANIC_MSG_MAX];  /* condemn's words; written only
					while verdict is RUNNING, read by
					run after it sees CONDEMNED */
};

/* STEAL: claims of a worker between two looks at the injection queue
 * first; the most turns in a row a worker takes from its next slot
 * before it takes the front of its queue; cells of a worker's queue. */
#define SC_EXEC_INJECT_EVERY 61
#define SC_EXEC_NEXT_BOUND   3
#define SC_WQ_CAP	     1024u

/*
 * STEAL: one worker's queue, a bounded ring with one producer (its owner
 * pushes at tail) and many consumers (the owner and thieves take the
 * front, head, by compare-and-swap), so it is FIFO for everyone: the
 * fairness rule (executor.h) holds for what a thief takes as for what the
 * owner takes. head and tail count from 0 and wrap at 2^32; a taker reads
 * the cell before its CAS, and the owner writes a cell only when the ring
 * has room, that is after head moved past it, so a taker whose CAS
 * succeeds read a cell nobody overwrote (an ABA needs 2^32 pushes
 * during one take).
 */
struct sc__wq {
	_Atomic uint32_t head; /* next cell to take (CAS) */
	char pad0[60];
	_Atomic uint32_t tail; /* next free cell (the owner's store) */
	uint32_t streak;       /* turns in a row from the next slot (owner) */
	uint32_t ticks;	       /* claims made (owner), for INJECT_EVERY */
	char pad1[52];
	_Atomic uint32_t cell[SC_WQ_CAP]; /* unit ids */
};

struct sc_exec {
	pthread_mutex_t mu;	   /* QUEUE: guards everything below but the
				      atomics' lock-free reads; STEAL: the
				      injection queue, add, panics, condemn,
				      snapshots and parking */
	enum sc_exec_kind kind;	   /* QUEUE or STEAL */
	struct sc__wq *wq;	   /* STEAL: nwq queues; NULL for QUEUE */
	uint32_t nwq;		   /* STEAL: per-worker queues allocated */
	_Atomic uint32_t nwq_used; /* STEAL: 1 + the highest worker index
				      that claimed (steals look below it) */
	_Atomic uint32_t active;   /* STEAL: units QUEUED or RUNNING*, the
				      next slot's counted at its claim; 0 is
				      idle */
	_Atomic uint32_t parked;   /* STEAL: workers parked on work_cv */
	pthread_cond_t work_cv;	   /* parked workers wait here */
	pthread_cond_t idle_cv;	   /* wait_idle waits here (monotonic clock) */
	struct sc__slot *slots;	   /* capacity slots; ids index them */
	uint32_t capacity;	   /* slots allocated */
	_Atomic uint32_t n;	   /* slots in use; release-published by add,
				      read lock-free by kick's id check */
	uint32_t head, tail;	   /* the FIFO (SC_NONE when empty) */
	_Atomic uint32_t qlen; /* queued units; polled by spinning workers */
	uint32_t running;      /* claimed and not yet handed back */
	uint32_t sleepers;     /* workers parked on work_cv */
	_Atomic uint32_t idle_waiters;	 /* threads in wait_idle */
	uint32_t spin;			 /* polls before parking */
	_Atomic bool shutdown;		 /* set once by sc_exec_shutdown */
	_Atomic uint32_t workers;	 /* live worker threads */
	_Atomic uint64_t turns_finished; /* all turns handed back */
	uint32_t npanics;		 /* panics recorded (all of them) */
	struct sc_panic_record panics[SC_EXEC_PANICS_KEPT]; /* the first ones */
};

static inline void
relaxed_inc(_Atomic uint64_t *a, uint64_t by)
{
	/* Only ever written under the mutex: a plain load and store is
	 * enough, and cheaper than a locked add. */
	atomic_store_explicit(
	    a, atomic_load_explicit(a, memory_order_relaxed) + by,
	    memory_order_relaxed);
}

static inline int
slot_state(const struct sc__slot *s)
{
	return (int)(atomic_load_explicit(&s->sw, memory_order_relaxed) &
		     SC_SW_STATE);
}

static inline uint64_t
slot_turns(const struct sc__slot *s)
{
	return atomic_load_explicit(&s->sw, memory_order_relaxed) >>
	       SC_SW_SHIFT;
}

/* The state machine's edges (executor.h): kick IDLE->QUEUED and
 * RUNNING->RUNNING_KICKED, claim QUEUED->RUNNING, finish RUNNING*->IDLE or
 * QUEUED, abandon RUNNING*->DEAD, shutdown QUEUED->IDLE, and add's first
 * IDLE on a zeroed (IDLE) slot. DEAD is final here (sc_exec_revive, apart,
 * is its one way out). For SC_ASSERT. */
static inline bool
state_edge_ok(int from, int to)
{
	switch (from) {
	case SC_UNIT_IDLE:
		return to == SC_UNIT_IDLE || to == SC_UNIT_QUEUED;
	case SC_UNIT_QUEUED:
		return to == SC_UNIT_RUNNING || to == SC_UNIT_IDLE;
	case SC_UNIT_RUNNING:
		return to != SC_UNIT_RUNNING;
	case SC_UNIT_RUNNING_KICKED:
		return to == SC_UNIT_IDLE || to == SC_UNIT_QUEUED ||
		       to == SC_UNIT_DEAD;
	default:
		return false;
	}
}

static inline void
slot_set_state(struct sc__slot *s, int st)
{
	uint64_t w = atomic_load_explicit(&s->sw, memory_order_relaxed);

	SC_ASSERT(state_edge_ok((int)(w & SC_SW_STATE), st));
	atomic_store_explicit(&s->sw,
			      (w & ~(uint64_t)SC_SW_STATE) | (unsigned)st,
			      memory_order_relaxed);
}

/* A turn ends (finish or abandon): one more turn, and state st. */
static inline void
slot_end_turn(struct sc__slot *s, int st)
{
	uint64_t w = atomic_load_explicit(&s->sw, memory_order_relaxed);

	SC_ASSERT(state_edge_ok((int)(w & SC_SW_STATE), st));
	atomic_store_explicit(
	    &s->sw, (((w >> SC_SW_SHIFT) + 1) << SC_SW_SHIFT) | (unsigned)st,
	    memory_order_relaxed);
}

/*
 * sc__exec_wake_all - wake every parked worker with nothing queued: a
 * spurious wake-up on demand, to show that no worker leaves on one.
 */
void sc__exec_wake_all(struct sc_exec *ex);

/* --- shared by the two kinds (executor.c) ------------------------------- */

/* Record a panic; the caller holds ex->mu. */
void sc__exec_record_panic_locked(struct sc_exec *ex,
				  const struct sc_panic_record *rec);

/* Broadcast idle_cv when a thread waits in wait_idle (takes ex->mu). */
void sc__exec_wake_idle(struct sc_exec *ex);

/* The injection queue of STEAL is the FIFO of QUEUE: link and unlink
 * without touching states; the caller holds ex->mu. */
void sc__fifo_push_locked(struct sc_exec *ex, uint32_t id);
uint32_t sc__fifo_pop_locked(struct sc_exec *ex);

/* Fill *c from slot id, whose state the caller just made RUNNING: the
 * token moves out of the slot into c, and the verdict is reset for the
 * turn it is at. */
static inline __attribute__((always_inline)) void
sc__claim_fill(struct sc_exec *ex, uint32_t id, int32_t worker,
	       struct sc_claim *c)
{
	struct sc__slot *s = &ex->slots[id];

	SC_ASSERT(s->unit != NULL); /* the token is in the slot */
	atomic_store_explicit(&s->worker, worker, memory_order_relaxed);
	atomic_store_explicit(&s->verdict,
			      SC_VERDICT(slot_turns(s), SC_TURN_RUNNING),
			      memory_order_relaxed);
	c->id = id;
	c->unit = s->unit;
	c->worker = worker;
	c->ran = false;
	c->n_nbrs = 0;
	s->unit = NULL; /* the token is out */
}

/* --- STEAL (executor_steal.c) ------------------------------------------- */

int sc__steal_init(struct sc_exec *ex, uint32_t workers);
void sc__steal_fini(struct sc_exec *ex);
int sc__steal_kick(struct sc_exec *ex, uint32_t id);
int sc__steal_claim(struct sc_exec *ex, int32_t worker, struct sc_claim *c);
int sc__steal_steal(struct sc_exec *ex, int32_t thief, int32_t victim,
		    struct sc_claim *c);
int sc__steal_claim_blocking(struct sc_exec *ex, int32_t worker,
			     struct sc_claim *c);
/* Hand back c's unit and kick its neighbours; with `next`, claim the
 * next unit into c (the next slot, else find work) and return true when
 * c holds one. */
bool sc__steal_finish(struct sc_exec *ex, struct sc_claim *c, bool next);
/* abandon, the state half: DEAD (under ex->mu, which the caller holds). */
void sc__steal_bury_locked(struct sc_exec *ex, uint32_t id);
/* abandon, the kicks half: kick ids (all units if !list), then the dead
 * unit's count goes (wait_idle may see idle). */
void sc__steal_death_kicks(struct sc_exec *ex, const struct sc_claim *c,
			   bool list);
void sc__steal_shutdown(struct sc_exec *ex);
void sc__steal_info(struct sc_exec *ex, struct sc_exec_info *out);
bool sc__steal_busy(struct sc_exec *ex);
uint32_t sc__steal_queued(struct sc_exec *ex, int32_t w);
/* The thread's worker, as sc_exec_work sets it for STEAL. */
void sc__steal_self_set(struct sc_exec *ex, int32_t worker);

#endif /* SC_RUNTIME_EXECUTOR_INT_H */

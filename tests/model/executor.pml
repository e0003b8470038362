/*
 * executor.pml: a Promela model of the executor protocol (README.md, "The unit
 * protocol"), checked with spin by tests/model/check.sh.
 *
 * What is modelled.  NU units in a chain (0 <-> 1 <-> 2), each with an input
 * count of frames; NW workers; one FIFO queue (a channel) and the units'
 * states and slots, all guarded by one mutex; a condition variable on which
 * idle workers park; a host that pushes HOST_FRAMES frames into unit 0 and
 * kicks it after each push.
 *
 *   kick(u)   under the lock: IDLE -> QUEUED (queued once, one parked worker
 *             woken), QUEUED stays (kicks coalesce), RUNNING ->
 *             RUNNING_KICKED, DEAD ignores it.
 *   claim()   under the lock: pop the front unit and take it out of its slot
 *             (the claimed unit is the ownership token), RUNNING.
 *   turn      no lock held: moves at most BUDGET frames from its input to the
 *             next unit's input (the tail consumes them), says `more` when
 *             input is left, and may panic (at most PANICS times in all).
 *   finish()  under the lock: back into its slot; QUEUED again (behind the
 *             others) if it said more or was kicked while running, else
 *             IDLE.  Then, without the lock, it kicks both neighbours if the
 *             turn moved a frame (a consumer that freed room kicks its
 *             producer too).
 *   die()     a dying turn (sc_exec_abandon): a panic before it moved
 *             anything, or a turn that moved frames and then panicked (an
 *             outbox flushed before the panic) or was condemned while it
 *             ran (sc_exec_condemn, the watchdog's kill policy; the
 *             condemn itself, under the lock, touches only a per-turn
 *             verdict word, and the turn's end decides against it with one
 *             atomic exchange, so the model only chooses, at the turn,
 *             whether it dies).  All share the PANICS budget (a separate
 *             budget made the safety search 2.5 times larger).  The unit
 *             becomes DEAD under the lock, is never run or kicked again;
 *             then, in a second critical section while it is still owned
 *             (its destroy ran in between, without the lock), every peer
 *             (both neighbours, whether or not frames moved) is kicked:
 *             a live consumer it fed takes the frames (property 2), a
 *             producer sees the closed edge.  Its own leftover input is
 *             undeliverable and ignored at quiescence.
 *   workers   loop on claim/turn/finish; when the queue is empty they park on
 *             the condition variable, which may also wake one spuriously
 *             (at most SPURIOUS times in all, to keep the state space small
 *             and finite).
 *
 * Work is bounded (HOST_FRAMES frames, each moved NU-1 times), so every run
 * quiesces: the `quiescence` process fires on spin's `timeout` (no statement
 * is executable anywhere) and asserts what idle means.
 *
 * Properties.
 *   1. Never two owners: owners[u] counts workers holding u between claim
 *      and finish/abandon; claim asserts it is 1, and that the queued unit
 *      is in its slot.
 *   2. No lost kick: a ghost flag pending[u] is set by every kick and
 *      cleared when a turn of u starts; at quiescence no live unit has a
 *      kick that no later turn answered, nor an input frame left over.
 *   3. The pool goes idle once kicks stop: at quiescence the queue is
 *      empty, every live unit is IDLE and every worker is parked.
 *   4. No deadlock: every blocked process at the end must sit at an end
 *      label (a parked worker); spin reports any other invalid end state.
 *   5. No livelock: check.sh also runs a non-progress-cycle search (-DNP):
 *      since the work is bounded, any infinite run is a bug.  The only
 *      progress label is in the quiescence process after it has checked.
 *   6. Shutdown (-DSHUTDOWN: the host calls sc_exec_shutdown after its last
 *      kick): the queue is discarded, kicks and claims are refused, every
 *      parked worker is woken; at the end every worker has left its loop
 *      (none parked for ever: the park is no end state then), every unit
 *      is IDLE or DEAD and owned by nobody.
 *
 * Planted bugs (each must make the check FAIL; check.sh verifies it):
 *   -DBUG_NO_REQUEUE_KICKED  finish ignores RUNNING_KICKED and puts a unit
 *                            that was kicked during its turn back to IDLE:
 *                            the frame that kick announced is stranded
 *                            (fails property 2: assertion at quiescence).
 *   -DBUG_NO_WAKE            kick queues but wakes no parked worker: the
 *                            host's kick sits in the queue with every worker
 *                            asleep (fails property 3: queue not empty).
 *   -DBUG_CLAIM_KEEPS_SLOT   claim pops the queue but leaves the unit in its
 *                            slot, looking IDLE: a kick during its turn
 *                            queues it again and a second worker claims it
 *                            while the first still runs it (fails
 *                            property 1: two owners).
 *   -DBUG_NO_MORE_AT_BUDGET  a turn that stops at its budget with input left
 *                            does not say more: two frames announced by
 *                            coalesced kicks reach the tail, which has no
 *                            consumer to kick it back, and one is stranded
 *                            (fails property 2: input left at quiescence).
 *   -DBUG_SHUTDOWN_SIGNALS_ONE  (with -DSHUTDOWN) shutdown wakes one
 *                            parked worker instead of all: the others sleep
 *                            on and the pool can never be joined (fails
 *                            property 6: exited == NW).
 *   -DBUG_NO_DEATH_KICKS     a dying unit's peers are not kicked: a frame
 *                            its turn moved before it died sits in the
 *                            consumer's input while the consumer is idle
 *                            (fails property 2: input left at quiescence).
 *   -DBUG_KICK_WITHOUT_PROGRESS  finish kicks the neighbours after every
 *                            turn, not only one that moved a frame: two
 *                            neighbours kick each other for ever (fails
 *                            property 5: a non-progress cycle).
 */

#ifndef NU
#define NU 3
#endif
#ifndef NW
#define NW 3
#endif
#ifndef BUDGET
#define BUDGET 1
#endif
#ifndef HOST_FRAMES
#define HOST_FRAMES 2
#endif
#ifndef PANICS
#define PANICS 1
#endif
#ifndef SPURIOUS
#define SPURIOUS 1
#endif
#ifndef BUG_KICK_WITHOUT_PROGRESS
#define PROGRESS_KICKS (moved > 0)
#else
#define PROGRESS_KICKS 1
#endif
#define NOUNIT 255
#ifdef SHUTDOWN
#define PARK_LABEL parked /* after shutdown, parking for ever is a bug */
#else
#define PARK_LABEL end_park /* a worker may park for ever when idle */
#endif
#if NW != 3
#error "signal_one() is written out for three workers"
#endif

mtype = { IDLE, QUEUED, RUNNING, RUNNING_KICKED, DEAD };

mtype state[NU];          /* guarded by the mutex */
bool slot[NU];            /* the unit sits in its slot (is not claimed) */
chan q = [NU] of { byte };/* the FIFO run queue, guarded by the mutex */
bool waiting[NW];         /* parked on the condition variable */
byte spurious_left = SPURIOUS; /* spurious wakes still to happen, in all */
byte nparked;             /* workers parked right now */
byte input[NU];           /* frames on the unit's input edge (SPSC, no lock) */
byte owners[NU];          /* ghost: workers holding the unit */
bool pending[NU];         /* ghost: a kick no turn has started after yet */
byte panics_left = PANICS; /* abandons left: a panic or a condemn */
bool host_done;
bool shut;                /* sc_exec_shutdown was called (SHUTDOWN only) */
byte exited;              /* workers that left their loop */

/*
 * The mutex.  Nothing blocks while it is held, except pthread_cond_wait,
 * which releases it, so every critical section is one atomic block: the
 * sections are serialised exactly as the mutex serialises them, and the
 * model need not interleave a lock holder with processes waiting for the
 * lock (which could only spin on it).  This keeps the state space small
 * enough to check 3 workers x 3 units in seconds.
 */

/* notify_one, with the lock held: wake one worker that is parked now, if
 * any; a signal with no waiter is lost, as with pthread_cond_signal.
 * Written out for NW == 3 (see the check at the top). */
inline signal_one()
{
	if
	:: waiting[0] -> waiting[0] = 0
	:: waiting[1] -> waiting[1] = 0
	:: waiting[2] -> waiting[2] = 0
	:: else -> skip
	fi
}

/* The body of kick, with the lock held.  After shutdown kicks are refused. */
inline kick_locked(u)
{
	if
	:: shut -> skip
	:: else -> pending[u] = 1
	fi;
	if
	:: shut -> skip
	:: !shut && state[u] == IDLE ->
		state[u] = QUEUED;
		q!u;
#ifndef BUG_NO_WAKE
		signal_one()
#else
		skip
#endif
	:: !shut && state[u] == RUNNING -> state[u] = RUNNING_KICKED
	:: else -> skip /* QUEUED, RUNNING_KICKED: coalesce; DEAD: ignore */
	fi
}

inline kick(u)
{
	atomic { kick_locked(u) }
}

/*
 * claim_blocking: with the lock held, take the front unit out of its slot;
 * with the queue empty, pthread_cond_wait (release the lock and park in one
 * step; wake on a signal or spuriously; take the lock again and recheck).
 */
inline claim(w, u)
{
	do
	:: atomic { shut -> u = NOUNIT; break }
	:: atomic {
		!shut && len(q) > 0 ->
		q?u;
		assert(slot[u]);
#ifndef BUG_CLAIM_KEEPS_SLOT
		slot[u] = 0;
		state[u] = RUNNING;
#else
		state[u] = IDLE;
#endif
		owners[u]++;
		assert(owners[u] == 1);
		break
	   }
	:: atomic { !shut && len(q) == 0 -> waiting[w] = 1; nparked++ };
PARK_LABEL:
		if
		:: atomic { waiting[w] == 0 -> nparked-- }
		:: atomic { waiting[w] && spurious_left > 0 ->
			spurious_left--; waiting[w] = 0; nparked-- }
		fi
	od
}

/* The turn, with no lock held, in one step: it starts (answering every kick
 * before it) and reads its input together; an edge has one producer and one
 * consumer, so nothing else can take those frames.  Kicks and pushes that
 * land after it are what finish must not lose. */
inline turn(u, moved, more)
{
	atomic {
		pending[u] = 0;
		moved = 0;
		do
		:: moved < BUDGET && input[u] > 0 ->
			input[u]--;
			if
			:: u + 1 < NU -> input[u + 1]++
			:: else -> skip
			fi;
			moved++
		:: else -> break
		od;
#ifndef BUG_NO_MORE_AT_BUDGET
		more = (input[u] > 0)
#else
		more = 0
#endif
	}
}

inline finish(u, moved, more)
{
	atomic {
		owners[u]--;
		slot[u] = 1;
		if
		:: shut -> state[u] = IDLE /* what is left is discarded */
#ifndef BUG_NO_REQUEUE_KICKED
		:: !shut && (more || state[u] == RUNNING_KICKED) ->
#else
		:: !shut && more ->
#endif
			state[u] = QUEUED;
			q!u
		:: else -> state[u] = IDLE
		fi
	};
	/* The lock is dropped between the hand-back and each neighbour's kick. */
	if
	:: PROGRESS_KICKS && u > 0 -> kick(u - 1)
	:: else -> skip
	fi;
	if
	:: PROGRESS_KICKS && u + 1 < NU -> kick(u + 1)
	:: else -> skip
	fi
}

/* A dying turn (sc_exec_abandon): buried under the lock, never queued or
 * kicked again; its destroy runs without the lock; then its peers are
 * kicked in a second critical section while it is still owned. */
inline die(u)
{
	atomic { state[u] = DEAD };
	atomic {
#ifndef BUG_NO_DEATH_KICKS
		if
		:: u > 0 -> kick_locked(u - 1)
		:: else -> skip
		fi;
		if
		:: u + 1 < NU -> kick_locked(u + 1)
		:: else -> skip
		fi;
#endif
		owners[u]--
	}
}

/*
 * sc_exec_shutdown (SHUTDOWN only): discard the queue (those units go IDLE),
 * refuse kicks and claims from now on, and wake EVERY parked worker, so that
 * each sees the flag and leaves; running turns finish and go IDLE.
 */
inline shutdown()
{
	atomic {
		shut = 1;
		do
		:: q?sent -> state[sent] = IDLE
		:: empty(q) -> break
		od;
		sent = 0;
#ifndef BUG_SHUTDOWN_SIGNALS_ONE
		waiting[0] = 0;
		waiting[1] = 0;
		waiting[2] = 0
#else
		signal_one()
#endif
	}
}

proctype worker(byte w)
{
	byte u, moved;
	bool more;

	do
	:: claim(w, u);
		if
		:: u == NOUNIT -> break
		:: atomic { u != NOUNIT && panics_left > 0 ->
			panics_left--; pending[u] = 0 };
			die(u)
		:: atomic { u != NOUNIT && panics_left > 0 ->
			panics_left--; turn(u, moved, more) };
			die(u)
		:: atomic { u != NOUNIT -> turn(u, moved, more) };
			finish(u, moved, more)
		fi;
		u = 0; moved = 0; more = 0 /* keep dead values out of the state */
	od;
	atomic { exited++; u = 0 }
}

proctype host()
{
	byte sent;

	do
	:: sent < HOST_FRAMES ->
		input[0]++;
		sent++;
		kick(0)
	:: else -> break
	od;
	host_done = 1;
	sent = 0;
#ifdef SHUTDOWN
	shutdown()
#endif
}

proctype quiescence()
{
	byte i;

	timeout;
	assert(host_done);
	assert(len(q) == 0);
#ifndef SHUTDOWN
	assert(nparked == NW);
#else
	assert(exited == NW); /* every worker woke and left: none to join */
#endif
	i = 0;
	do
	:: i < NU ->
		assert(state[i] == IDLE || state[i] == DEAD);
		assert(owners[i] == 0);
#ifndef SHUTDOWN
		/* Work is discarded at shutdown; without it, none is lost. */
		assert(state[i] == DEAD || pending[i] == 0);
		assert(state[i] == DEAD || input[i] == 0);
#endif
		i++
	:: else -> break
	od;
#ifdef LIVENESS
	/* Checked.  For the non-progress-cycle search (-DNP) this self-loop is
	 * the one progress label, so a quiesced run is accepted and any other
	 * infinite run (a livelock) is reported. */
progress_checked:
	do
	:: i = 1 - i /* not a bare self-loop, which pan refuses */
	od
#endif
}

init
{
	byte i;

	atomic {
		i = 0;
		do
		:: i < NU -> state[i] = IDLE; slot[i] = 1; i++
		:: else -> break
		od;
		i = 0;
		do
		:: i < NW -> run worker(i); i++
		:: else -> break
		od;
		run host();
		run quiescence()
	}
}

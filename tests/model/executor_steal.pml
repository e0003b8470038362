/*
 * executor_steal.pml: a Promela model of the STEAL executor
 * (runtime/executor_steal.c), checked with spin by tests/model/check.sh
 * beside executor.pml (the one-queue executor).
 *
 * What is modelled.  NU units in a chain (0 -> 1 -> 2), each with an input
 * count of frames; NW workers, each with its own FIFO ring (a channel: the
 * owner pushes at the back, anyone takes the front in one step, as the CAS
 * on head does); the injection queue (a channel under the mutex); the
 * units' states, moved by atomic steps (the CAS of the code); a host that
 * pushes HOST_FRAMES frames into unit 0 and kicks it after each push.
 *
 *   kick(u)    IDLE -> QUEUED (the kicker then puts u in a queue: its own
 *              ring if it is a worker, else the injection queue, and then
 *              notifies), RUNNING -> RUNNING_KICKED, QUEUED and
 *              RUNNING_KICKED stay (the no-op CAS), DEAD ignored.
 *   find work  a worker's claim: its own ring's front, else the injection
 *              queue's front, else the front of the other worker's ring (a
 *              steal); QUEUED -> RUNNING.
 *   turn       no lock: moves at most BUDGET frames from its input to the
 *              next unit's input, says more while input is left.
 *   finish     its own state first (QUEUED if it said more or was kicked,
 *              else IDLE), then it kicks the next unit if it moved a frame
 *              (and the previous, which had room freed), then a QUEUED one
 *              goes to the back of its ring, behind the injection queue's
 *              units, which move in front of it (after the kicks: see
 *              nactive below): the first unit its kicks make QUEUED goes to
 *              the worker's NEXT SLOT (at most NEXT_BOUND turns in a row),
 *              claimed by its kick (IDLE -> RUNNING in one step); the
 *              others go to the back of its ring.  Then it notifies, and claims (the next slot, else
 *              find work).
 *   notify     after every push (the code skips the wake when the pusher
 *              itself takes what it pushed next; not modelled: a wake too
 *              many is harmless to these properties).
 *   park       a worker that found nothing takes the mutex, counts itself
 *              in `nparked`, looks at every queue once more and waits on
 *              the condition variable (releasing the mutex) if all are
 *              empty; notify (after a push) reads nparked and, if it is not
 *              0, signals one parked worker under the mutex.  The model's
 *              atomic steps are sequentially consistent, as the code's
 *              seq_cst RMWs on `parked` make those two reads.
 *   nactive    units QUEUED or RUNNING*, as the code counts them: a kick
 *              counts before it queues, a finish that goes IDLE uncounts
 *              after its kicks, the next slot inherits the count of a unit
 *              that goes IDLE.  The host, done, waits for 0 (wait_idle)
 *              and then checks that nothing is queued or running.
 *
 * Properties (the same numbering as executor.pml).
 *   1. Never two owners: owners[u] <= 1 at every claim, and a claimed unit
 *      was QUEUED.
 *   2. No lost kick: at quiescence no unit has a kick that no later turn
 *      answered (pending[u]) nor an input frame left over.
 *   3. The pool goes idle: at quiescence every queue is empty, every unit
 *      IDLE, every worker parked.
 *   4. No deadlock (invalid end states).
 *   7. wait_idle (the code's `active`, nactive here, at 0) never returns
 *      while a unit is queued or running.
 *
 * Planted bugs (each must make the check FAIL; check.sh verifies it):
 *   -DBUG_QUEUED_TWICE      a kick of a QUEUED unit queues it again: two
 *                           workers take it, one from each queue (fails 1:
 *                           owners[u] == 1).
 *   -DBUG_STEAL_READS_EARLY a thief's turn reads its input before its
 *                           claim is ordered with kicks (a plain load of the
 *                           state where the code has a CAS): a frame pushed
 *                           and kicked in between is coalesced into a claim
 *                           that never sees it, a kick lost in a steal
 *                           (fails 2: input[i] == 0).
 *   -DBUG_REQUEUE_BEFORE_KICKS  a unit that said more is put in its ring
 *                           before its kicks count the unit its next slot
 *                           claims: a thief takes it, finishes it and
 *                           uncounts it, and wait_idle sees 0 while the
 *                           next slot's unit runs (fails 7).
 *   -DBUG_PARK_CHECK_FIRST  a worker looks at the queues before it counts
 *                           itself parked: a push in between reads
 *                           nparked == 0 and wakes nobody, and the parked
 *                           worker is never woken for it (fails 3).
 */

#ifndef NU
#define NU 3
#endif
#ifndef NW
#define NW 2
#endif
#ifndef BUDGET
#define BUDGET 1
#endif
#ifndef HOST_FRAMES
#define HOST_FRAMES 2
#endif
#ifndef NEXT_BOUND
#define NEXT_BOUND 1
#endif
#define NOUNIT 255
#define FREE 255
#if NW != 2
#error "the victim and signal_one are written out for two workers"
#endif

mtype = { IDLE, QUEUED, RUNNING, RUNNING_KICKED, DEAD };

mtype state[NU];
chan ring[NW] = [NU] of { byte }; /* per-worker rings */
chan inj = [NU] of { byte };      /* the injection queue (mutex) */
byte mu = FREE;                   /* the mutex's holder, for parking */
bool waiting[NW];                 /* parked on the condition variable */
byte nparked;                     /* counted in as parked (`parked`) */
byte nactive;                      /* units QUEUED or RUNNING* */
byte input[NU];
byte owners[NU];                  /* ghost: workers holding the unit */
bool pending[NU];                 /* ghost: a kick no turn answered yet */
bool host_done;

#define HAS_WORK (len(inj) > 0 || len(ring[0]) > 0 || len(ring[1]) > 0)

inline signal_one()
{
	if
	:: waiting[0] -> waiting[0] = 0
	:: waiting[1] -> waiting[1] = 0
	:: else -> skip
	fi
}

/* After a push: read nparked (lock-free), then signal under the mutex. */
inline notify()
{
	if
	:: nparked > 0 -> atomic { mu == FREE -> signal_one() }
	:: else -> skip
	fi
}

/* A kick's state move; won = 1 when it made u QUEUED (then the caller
 * counts it and puts it somewhere). */
inline kick_state(u, won)
{
	atomic {
		won = 0;
		if
		:: state[u] == DEAD -> skip
		:: else -> pending[u] = 1;
			if
			:: state[u] == IDLE -> state[u] = QUEUED; won = 1
			:: state[u] == RUNNING -> state[u] = RUNNING_KICKED
#ifdef BUG_QUEUED_TWICE
			:: state[u] == QUEUED -> won = 1
#endif
			:: else -> skip
			fi
		fi
	}
}

/* Claim u, just taken from a queue: QUEUED -> RUNNING. */
inline take(u)
{
	assert(state[u] == QUEUED);
	state[u] = RUNNING;
	owners[u]++;
	assert(owners[u] == 1)
}

proctype worker(byte w)
{
	byte u = NOUNIT, v, k, moved, streak, next, snap;
	bool more, won, again, inherit, early;

	do
	:: u == NOUNIT ->
		/* find work: own ring, injection, the other's ring (steal) */
		early = 0;
		if
		:: atomic { len(ring[w]) > 0 -> ring[w]?u; take(u) }
		:: atomic { len(ring[w]) == 0 && len(inj) > 0 -> inj?u; take(u) }
#ifndef BUG_STEAL_READS_EARLY
		:: atomic { len(ring[w]) == 0 && len(inj) == 0 &&
			    len(ring[1 - w]) > 0 -> ring[1 - w]?u; take(u) }
#else
		:: atomic { len(ring[w]) == 0 && len(inj) == 0 &&
			    len(ring[1 - w]) > 0 -> ring[1 - w]?<u>;
			snap = input[u]; early = 1 };
			/* the input was read before the claim took the unit */
			atomic {
				if
				:: ring[1 - w]?[eval(u)] -> ring[1 - w]?eval(u);
					take(u)
				:: else -> u = NOUNIT; early = 0; snap = 0
				fi }
#endif
		:: atomic { !HAS_WORK ->
#ifndef BUG_PARK_CHECK_FIRST
			mu == FREE -> mu = w; nparked++ };
			/* counted in, under the mutex: look once more */
			if
			:: atomic { HAS_WORK -> nparked--; mu = FREE }
			:: atomic { !HAS_WORK -> waiting[w] = 1; mu = FREE };
end_park:
				atomic { waiting[w] == 0 -> nparked-- }
			fi
#else
			skip };
			/* looked (and saw nothing) before counting in */
			atomic { mu == FREE -> mu = w; nparked++ };
			atomic { waiting[w] = 1; mu = FREE };
end_park_bug:
			atomic { waiting[w] == 0 -> nparked-- }
#endif
		fi
	:: u != NOUNIT ->
		/* the turn */
		atomic {
			pending[u] = 0;
			if
			:: !early -> snap = input[u]
			:: else -> skip
			fi;
			moved = 0;
			do
			:: moved < BUDGET && snap > 0 ->
				snap--; input[u]--;
				if
				:: u + 1 < NU -> input[u + 1]++
				:: else -> skip
				fi;
				moved++
			:: else -> break
			od;
			more = (input[u] > 0 && !early) || (early && snap > 0);
			snap = 0; early = 0
		};
		/* finish: own state first */
		atomic {
			owners[u]--;
			again = (more || state[u] == RUNNING_KICKED);
			if
			:: again -> state[u] = QUEUED /* queued after the kicks */
#ifdef BUG_REQUEUE_BEFORE_KICKS
				; ring[w]!u
#endif
			:: else -> state[u] = IDLE
			fi
		};
		next = NOUNIT; inherit = 0;
		k = 0;
		do
		:: k < 2 ->
			if
			:: k == 0 && moved > 0 && u + 1 < NU -> v = u + 1
			:: k == 1 && moved > 0 && u > 0 -> v = u - 1
			:: else -> v = NOUNIT
			fi;
			if
			:: v != NOUNIT && next == NOUNIT &&
			   streak < NEXT_BOUND ->
				/* the next slot: kick and claim in one step */
				atomic {
					kick_state(v, won);
					if
					:: won -> state[v] = RUNNING;
						owners[v]++;
						assert(owners[v] == 1);
						next = v
					:: else -> skip
					fi
				};
				if
				:: won && again -> atomic { nactive++ }
				:: won && !again -> inherit = 1
				:: else -> skip
				fi
			:: v != NOUNIT &&
			   !(next == NOUNIT && streak < NEXT_BOUND) ->
				kick_state(v, won);
				if
				:: won -> atomic { nactive++; ring[w]!v }
				:: else -> skip
				fi
			:: else -> skip
			fi;
			k++
		:: else -> break
		od;
		if
#ifndef BUG_REQUEUE_BEFORE_KICKS
		:: again ->
			/* Only now, after every kick counted what it queued:
			 * from the ring a thief may take it, finish it and
			 * uncount it at once. The injection queue's units move
			 * in front of it. */
			atomic {
				do
				:: inj?v -> ring[w]!v
				:: empty(inj) -> break
				od;
				v = 0;
				ring[w]!u
			}
#else
		:: again -> skip
#endif
		:: !again && !inherit -> atomic { nactive-- }
		:: else -> skip
		fi;
		notify();
		if
		:: next != NOUNIT -> streak++; u = next
		:: else -> streak = 0; u = NOUNIT
		fi;
		v = 0; k = 0; moved = 0; more = 0; won = 0; next = NOUNIT;
		again = 0; inherit = 0
	od
}

proctype host()
{
	byte sent, i;
	bool won;

	do
	:: sent < HOST_FRAMES ->
		input[0]++;
		sent++;
		kick_state(0, won);
		if
		:: won -> atomic { nactive++; inj!0 }; notify()
		:: else -> skip
		fi
	:: else -> break
	od;
	host_done = 1;
	/* wait_idle: once nactive is 0 nothing is queued or running */
	atomic {
		nactive == 0 ->
		assert(len(inj) == 0 && len(ring[0]) == 0 && len(ring[1]) == 0);
		i = 0;
		do
		:: i < NU -> assert(owners[i] == 0 && state[i] == IDLE); i++
		:: else -> break
		od
	}
}

proctype quiescence()
{
	byte i;

	timeout;
	assert(host_done);
	assert(len(inj) == 0 && len(ring[0]) == 0 && len(ring[1]) == 0);
	assert(nparked == NW);
	i = 0;
	do
	:: i < NU ->
		assert(state[i] == IDLE);
		assert(owners[i] == 0);
		assert(pending[i] == 0);
		assert(input[i] == 0);
		i++
	:: else -> break
	od;
#ifdef LIVENESS
	/* The one progress label, as in executor.pml: a quiesced run is
	 * accepted, any other infinite run (a livelock) is reported. */
progress_checked:
	do
	:: i = 1 - i
	od
#endif
}

init
{
	byte i;

	atomic {
		i = 0;
		do
		:: i < NU -> state[i] = IDLE; i++
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

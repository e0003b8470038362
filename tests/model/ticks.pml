/*
 * ticks.pml: a Promela model of tick mode's frontiers (units/runtime.h,
 * "Host ticks"; units/edge.h, "Tick edges"; units/subcircuit.h, "Tick
 * mode" and "Ahead ports"), checked with spin by tests/model/check_ticks.sh.
 * The executor's kicks are executor.pml's business; here a unit runs
 * whenever it can, and what is checked is the frontier protocol alone.
 *
 * What is modelled.  A loop through a delay across two units:
 *
 *   host --h--> A --ab--> B --ba (ahead: B's delay)--> A
 *
 * Edges are FIFO channels of EDGE_CAP messages, each a data frame or a
 * marker, with its stamp (a data frame's tick, a marker's frontier).
 * The host sends, for every tick t < T, 0 or 1 data frames (its choice),
 * then the marker t + 1.  A unit gathers tick `cur` by reading each input
 * whose frontier is not past cur, up to its next marker; once every
 * input's frontier is past cur (and cur is below the host's closed ticks,
 * the horizon), it steps cur.  A sends its output of cur then the marker
 * cur + 1; B, whose output is a delay, announces 1 at the start and, once
 * it stepped cur, sends tick cur + 1 of its output then the marker cur + 2.
 *
 * Properties.
 *   1. No unit steps a tick before its inputs are complete: at each step,
 *      the frames of that tick a unit has received equal those sent to it.
 *   2. Every tick below T is stepped exactly once by each unit, and no
 *      unit steps a tick the host has not closed.
 *   3. Nothing deadlocks: every process reaches its end (spin's invalid
 *      end states).
 *
 * Planted bugs (each must fail, tests/model/check_ticks.sh):
 *   BUG_FRONTIER_BEFORE_FRAMES  A sends its marker before its frame;
 *   BUG_MARKER_LOST             the host's marker of tick 1 is not sent;
 *   BUG_NO_DELAY                B's output is not ahead (a loop without a
 *                               delay across units).
 */

#ifndef T
#define T 3
#endif
#define EDGE_CAP 2

#define DATA 0
#define MARK 1

chan h = [EDGE_CAP] of { bit, byte };
chan ab = [EDGE_CAP] of { bit, byte };
chan ba = [EDGE_CAP] of { bit, byte };

byte horizon = 0;		/* host ticks closed */
byte sent_a[T + 2], sent_b[T + 2];	/* data frames of each tick sent to A, B */
byte stepped_a[T + 2], stepped_b[T + 2];
bool done_a = false, done_b = false;

active proctype host()
{
	byte t = 0;

	do
	:: t < T ->
		if
		:: sent_a[t]++; h!DATA,t
		:: skip
		fi;
		horizon = t + 1;
#ifdef BUG_MARKER_LOST
		if
		:: t != 1 -> h!MARK,t + 1
		:: else -> skip
		fi;
#else
		h!MARK,t + 1;
#endif
		t++
	:: else -> break
	od
}

/* A: inputs h and ba; output ab. */
active proctype unit_a()
{
	byte cur = 0, fh = 0, fb = 0, got[T + 2], kind, st;

	do
	:: cur >= T -> break
	:: atomic { fh <= cur && nempty(h) -> h?kind,st;
		if
		:: kind == MARK -> fh = st
		:: else -> assert(st == cur); got[st]++
		fi }
	:: atomic { fb <= cur && nempty(ba) -> ba?kind,st;
		if
		:: kind == MARK -> fb = st
		:: else -> assert(st == cur); got[st]++
		fi }
	:: atomic { fh > cur && fb > cur && cur < horizon ->
		assert(got[cur] == sent_a[cur]);
		stepped_a[cur]++ }
		/* its output: one frame per tick, then the marker */
#ifdef BUG_FRONTIER_BEFORE_FRAMES
		ab!MARK,cur + 1;
		sent_b[cur]++;
		ab!DATA,cur;
#else
		sent_b[cur]++;
		ab!DATA,cur;
		ab!MARK,cur + 1;
#endif
		cur++
	od;
	done_a = true
}

/* B: input ab; output ba, a delay's: a tick ahead. */
active proctype unit_b()
{
	byte cur = 0, fa = 0, got[T + 2], kind, st;

#ifndef BUG_NO_DELAY
	ba!MARK,1;
#endif
	do
	:: cur >= T -> break
	:: atomic { fa <= cur && nempty(ab) -> ab?kind,st;
		if
		:: kind == MARK -> fa = st
		:: else -> assert(st == cur); got[st]++
		fi }
	:: atomic { fa > cur && cur < horizon ->
		assert(got[cur] == sent_b[cur]);
		stepped_b[cur]++ }
#ifdef BUG_NO_DELAY
		sent_a[cur]++;
		ba!DATA,cur;
		ba!MARK,cur + 1;
#else
		/* tick cur + 1 of the delay, sent once cur is stepped; A
		 * reads no tick past T - 1, so the last one is not sent */
		if
		:: cur + 1 < T -> sent_a[cur + 1]++; ba!DATA,cur + 1;
			ba!MARK,cur + 2
		:: else -> skip
		fi;
#endif
		cur++
	od;
	done_b = true
}

/* At the end: every tick stepped once by each unit. */
active proctype check()
{
	byte t = 0;

	(done_a && done_b);
	do
	:: t < T -> assert(stepped_a[t] == 1 && stepped_b[t] == 1); t++
	:: else -> break
	od
}

/*
 * subcircuit_int.h - library-internal: a sub-circuit unit's state and the
 * pieces of its turn that its two turns share.
 *
 * A unit turns in one of two modes (subcircuit.h): the coalescing turn
 * (units/subcircuit.c) and the tick turn (units/tick.c). Both open with
 * the same flush (sc__sub_turn_flush: step 1 of subcircuit.h's turn) and
 * close with the same tally (sc__sub_turn_tally: step 4, the figures and
 * the timeline's slice); in between each reads its inputs and steps in
 * its own way, with the feed, waterline and send helpers below.
 *
 * The figures (struct sc__unit_figures) are kept apart from the unit when
 * the runtime asks (desc.figures), so that they can be read from any
 * thread even after the unit died and the executor freed it.
 *
 * Threads: every field of struct sc_subcircuit is its owner's (the thread
 * running its turn, unit.h), but for those marked otherwise.
 */
#ifndef SC_UNITS_SUBCIRCUIT_INT_H
#define SC_UNITS_SUBCIRCUIT_INT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "operators/doing_int.h"
#include "units/edge.h"
#include "units/exchange.h"
#include "units/subcircuit.h"

/* Written by the unit's turns alone (a relaxed load and store each, no
 * read-modify-write), read from any thread. */
struct sc__unit_figures {
	_Atomic uint64_t turns, frames_in, rows_in, frames_out, rows_out;
	_Atomic uint64_t busy_ns;
	/* Tick mode: the tick the unit gathers, the first input edge whose
	 * frontier has not passed it (NULL: none) and that frontier, as the
	 * last turn left them (sc__unit_wait_read), for a watchdog. */
	_Atomic uint64_t wait_tick, wait_front;
	_Atomic(struct sc_edge *) wait_edge;
	/* What the running turn does now (operators/doing_int.h): its word
	 * is read from any thread (a watchdog), the rest is the turn's. */
	struct sc__doing doing;
	/* The longest turn so far (ns; the coarse clock unless a timeline
	 * records) and, when a timeline recorded it, its longest phase's
	 * word (0: not known) and length. */
	_Atomic uint64_t longest_ns, longest_word, longest_phase_ns;
};

/* Read them into *out. */
void sc__unit_figures_read(const struct sc__unit_figures *f,
			   struct sc_subcircuit_stats *out);

/* The wait the unit's last turn published (tick mode): false when it
 * waits on no edge, or when the words were being rewritten (the tick read
 * before and after differ: look again later). Any thread. */
bool sc__unit_wait_read(const struct sc__unit_figures *f, uint64_t *tick,
			uint64_t *front, struct sc_edge **edge);

/* Add to a figure only this unit's turns write. */
static inline void
sc__fig_bump(_Atomic uint64_t *f, uint64_t by)
{
	atomic_store_explicit(
	    f, atomic_load_explicit(f, memory_order_relaxed) + by,
	    memory_order_relaxed);
}

/* One input edge. */
struct sub_in {
	struct sc_edge *edge;	     /* consumer end */
	int stream;		     /* fed with its frames */
	uint32_t peer;		     /* producer unit, or SC_SUBCIRCUIT_HOST */
	bool gated;		     /* skipped while backpressured */
	uint64_t mark;		     /* popped count at the last look */
	uint64_t front;		     /* tick mode: the last marker read (every
					tick below it is complete on this edge) */
	struct sc_edge_waterline wl; /* the last due on this edge (mask
					0: none yet; subcircuit.h,
					"Waterlines") */
};

/* One boundary output stream. */
struct sub_out {
	int stream;	      /* boundary output */
	struct sc_exchange x; /* the producer ends, one per replica of
				 the consumer, and the routing */
	uint32_t *peers;      /* consumer units, per edge */
	uint64_t *marks;      /* pushed count at the last look, per edge */
	bool gating;	      /* its backpressure gates input */
	bool ahead;	      /* tick mode: a delay's, a tick ahead */
	int ahead_from;	      /* the delay's input stream, if ahead */
};

struct sc_subcircuit {
	struct sc_unit unit; /* first: the executor's handle */
	char name[SC_UNIT_NAME_MAX];
	struct sc_circuit *circuit; /* the part */
	struct sub_in *in;
	size_t nin;
	struct sub_out *out;
	size_t nout;
	size_t rr;	     /* the input edge the next poll starts at */
	uint32_t *nbrs;	     /* neighbours of the last turn */
	size_t n_nbrs;	     /* how many */
	size_t cap_nbrs;     /* room: every peer fits */
	uint32_t *peers;     /* every unit across an edge, once each */
	size_t n_peers;	     /* how many */
	atomic_bool blocked; /* backpressured at the end of the last turn;
				read by has_pending from any thread */
	atomic_bool turning; /* inside a turn now; kept only where
				SC_ASSERT checks (one turn at a time, the
				host reads the circuit only outside one) */
	void (*host_popped)(void *ctx);
	void *host_ctx;
	struct sc_timeline *tl; /* or NULL */
	uint32_t tl_id;
	struct sc__unit_figures own;  /* the figures, unless d->figures */
	struct sc__unit_figures *fig; /* &own or d->figures */
	uint64_t turn_rows_in, turn_rows_out; /* this turn's, for its slice */
	struct sc_batch **restore; /* a rebuild's integrals, per input
				      edge, until its first turn; NULL */
	/* tick mode (subcircuit.h, "Tick mode"; units/tick.c) */
	bool ticks;   /* on */
	bool quiet;   /* no per-tick node: empty ticks need no step */
	bool fed;     /* a frame of tick `cur` was fed */
	uint64_t cur; /* the tick being gathered: every tick below it is
			 stepped and announced on every output edge */
	uint64_t (*horizon)(const void *ctx); /* ticks the host closed */
	const void *horizon_ctx;
	bool wl_in, wl_out; /* a boundary input, output, carries a
			       waterline column (the cut says) */
};

/* A turn's clock, from its flush to its tally. */
struct sc__sub_clock {
	bool traced;   /* a timeline records: every turn is timed */
	bool timed;    /* this turn is timed (busy_ns) */
	uint64_t t0;   /* its start: sc_clock_ns when timed, else
			  sc_clock_coarse_ns (the longest turn) */
	uint64_t cpu0; /* traced: the thread's CPU time at its start */
};

/*
 * sc__sub_turn_flush - open a turn: start its clock, mark it, run a
 * rebuild's first turn if one is due (subcircuit.h, "A rebuild"), flush
 * every outbox that has room and publish the waterlines a full outbox
 * held back (step 1). Returns whether a gating output is still
 * backpressured.
 */
bool sc__sub_turn_flush(struct sc_subcircuit *s, struct sc__sub_clock *c);

/*
 * sc__sub_turn_tally - close a turn that took `polled` work items: store
 * `blocked` for has_pending, count the frames moved on every end and name
 * their neighbours (step 4), bump the figures, record the timeline's
 * slice, unmark the turn and wake a host waiting for room if a host edge
 * was popped. Returns the turn's result with `more`.
 */
struct sc_turn sc__sub_turn_tally(struct sc_subcircuit *s,
				  const struct sc__sub_clock *c,
				  uint32_t polled, bool blocked, bool more);

/* Feed one frame (owned) polled from edge e (NULL: held by no edge) to
 * stream `stream`; panics on a feed error. */
void sc__sub_feed_frame(struct sc_subcircuit *s, struct sc_edge *e, int stream,
			struct sc_batch *b);

/* Before a step: take every edge's due waterline and raise each boundary
 * input's (subcircuit.h, "Waterlines"). */
void sc__sub_raise_waterlines(struct sc_subcircuit *s);

/* Send every boundary output's delta through its exchange, then publish
 * the outputs' waterlines; panics on a hard error. */
void sc__sub_send_outputs(struct sc_subcircuit *s);

#endif /* SC_UNITS_SUBCIRCUIT_INT_H */

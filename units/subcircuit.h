/*
 * subcircuit.h - a unit that runs a synchronous sub-circuit between edges.
 *
 * One sub-circuit unit is the circuit of a part of a graph (circuit.h,
 * sc_circuit_create_part) with the consumer ends of its input edges and
 * the producer ends of its output edges around it. units/runtime_build.c
 * builds one per unit (per shard) of a placement. A unit turns in one of
 * two modes for its life: the coalescing turn below (units/subcircuit.c)
 * or, in tick mode, the tick turn (see Tick mode; units/tick.c). Both
 * share steps 1 and 4 (units/subcircuit_int.h).
 *
 * A turn (budget b, the most frames it takes: runtime/unit.h, The budget):
 *   1. flush every output edge's outbox that has room now (and publish
 *      the waterlines a full outbox held back);
 *   2. poll at most b frames, one at a time round-robin over the input
 *      edges (starting after the edge the last turn stopped at, so no edge
 *      starves), and feed each to the circuit by its stream id: frames fed
 *      to one stream before a step add, and every operator is a function
 *      of its input's integral, so it does not matter how frames are
 *      grouped into steps;
 *   3. if anything was fed, step the circuit once and send the delta of
 *      every boundary output through its exchange (units/exchange.h):
 *      routed by a hash of the key columns when the consumer is sharded,
 *      whole otherwise; a full edge keeps it in its outbox;
 *   4. progress = frames popped + frames pushed (edge traffic counters),
 *      neighbours = the units across every edge that moved, both ways;
 *      the figures (sc_subcircuit_stats) and the timeline's slice.
 *
 * more: the turn polled a full budget and an input edge it may read still
 * holds frames (kicks coalesce, so a unit must drain what one kick
 * announced). A full output edge is NOT more: the consumer's pop kicks
 * this unit back (unit.h).
 *
 * Backpressure. When an output edge marked `gating` is backpressured
 * (sc_edge_backpressured) after the flush, the turn does not read the
 * input edges marked `gated`. The runtime marks as gating/gated exactly the
 * edges that leave/enter this unit's strongly connected component of the
 * unit graph (units/analysis.h; and every host edge is gated): inside a cycle
 * of units, a unit that stopped reading because its consumer is full, whose
 * consumer stopped for the same reason, would deadlock; across components the
 * unit graph is a DAG, where backpressure always ends at a sink that reads.
 * Outboxes of edges inside a cycle are therefore not bounded by the
 * outbox bound, only by the data in flight.
 *
 * A failure of the circuit (a step or feed error: a user callback's code,
 * SC_EOVERFLOW, SC_ENOMEM) becomes a panic of this unit (sc_panic), with
 * the error's name and message: the unit dies, the others go on. When a
 * unit is destroyed it closes its input edges (frames addressed to it are
 * undeliverable from then on). It holds no executor: peers() names every
 * unit across its edges, and the executor kicks them after a death
 * (unit.h, "Death"), so a producer notices the close, drops its outbox
 * and stops waiting for room that will never come, and a consumer takes
 * what the dying turn sent. Units may be destroyed in any order.
 *
 * A rebuild (a restart, units/runtime.h). A unit created with `restore`
 * stands for one that died: restore[i] is the integral of everything
 * input edge i carried (its producer's trace, units/exchange.h), and the
 * edges of the out ports are traced. Its first turn, before anything
 * else, feeds each integral to its stream and steps once: the fresh
 * circuit's outputs then hold what the dead one's would have; and it
 * sends on every out edge the correction `share - trace`
 * (sc_exchange_correct), so each consumer ends with exactly its share,
 * whatever the dead unit had sent before it died. Then the turn goes on
 * as any turn. Running it as a turn, not on the host that built the
 * unit, keeps every user callback of the rebuild (the step's) inside a
 * turn: under the panic guard, fault catching and the in-turn marker; a
 * rebuild that panics dies as any turn does. A new unit's traffic marks
 * start at its edges' counts now, so it does not take the dead one's
 * traffic for its own.
 *
 * Waterlines (operators/waterline.h). When the cut carries waterline
 * columns, a unit publishes each boundary output's waterlines on every
 * edge of its exchange after each step (and again after the next turn's
 * flush, when a full outbox held one back), and before each step takes
 * every input edge's due publication (edge.h, "Waterlines": only once the
 * frames sent before it are fed) and raises each boundary input's
 * waterline to the min over the edges that feed that stream (the replicas
 * of a sharded producer each bound only their own share). Host edges
 * carry none: an input node's waterline comes from its rows. Tick mode
 * does the same around each tick's step. Edges between ranks (mpi_link.h)
 * carry none either, so a unit fed from another rank keeps its state. A
 * rebuild's first step raises its inputs' waterlines too, after feeding
 * the integrals: its edges' newest publications are due at once
 * (sc_edge_reopen), so a rebuilt unit is bounded from its first step.
 *
 * Tick mode (desc.ticks; units/runtime.h, Modes). Every edge is a tick
 * edge (edge.h, "Tick edges"), and the unit steps tick by tick as the
 * single circuit does: it gathers tick `cur` by reading each input up to
 * its next marker (feeding the frames, which are all of tick cur); once
 * every input's frontier has passed cur, it steps once, sends its outputs
 * (stamped cur) and announces cur + 1 on every output edge. A part with
 * no per-tick node (no integrate, differentiate or delay) gives an empty
 * output for empty input, so it steps only ticks that brought frames and
 * passes a range of empty ticks on as one marker. An output edge that
 * cannot take the announcement (its outbox or ring full) holds the next
 * step back: the turn returns without `more`, and the consumer's pop
 * kicks it, so a full edge stops its producer without spinning and an
 * outbox holds one tick at most. A tick turn's budget counts frames read
 * (markers included) and ticks stepped or skipped, together. Restarts are
 * not supported in tick mode. The design of tick mode, host and unit
 * side, is units/tick_int.h's.
 *
 * Ahead ports. In tick mode an output stream that is a delay's is sent a
 * tick ahead: the delay's output at t + 1 is its input at t, so once the
 * unit has stepped t it sends the delta of the delay's input stamped
 * t + 1 and announces t + 2 on that port (tick 0 of a delay is empty:
 * the port announces 1 before the first step). That is what lets a loop
 * through a delay cross units (units/analysis.h, "Ticks"): the unit
 * downstream of the delay has tick t + 1 of it before the loop's other
 * units have even stepped t + 1. A unit fed only through such ports
 * would then run a tick beyond the host's; so no unit steps a tick the
 * host has not closed (desc.horizon); the runtime kicks every unit fed
 * through an ahead port when the host closes a tick, since such a unit
 * may wait on the horizon alone, with no push left to come.
 *
 * Deaths in tick mode. A unit that dies ends its output edges
 * (sc_edge_end) as well as closing its inputs: once a consumer has read
 * what the dead unit sent, it takes that edge's frontier as past every
 * tick, so it goes on stepping ticks with the rest of its inputs (its
 * outputs then depend on a dead unit, as sc_runtime_upstream_dead says).
 * The executor kicks the dead unit's peers (unit.h, "Death"), so a
 * consumer waiting on it is run.
 *
 * has_pending (for the watchdog) says an input edge the unit would read
 * holds frames; it reads atomics only. In tick mode every turn also
 * leaves in the unit's figures the tick it gathers and the first input
 * edge short of it (units/subcircuit_int.h), for the watchdog's FRONTIER
 * check through sc_runtime_waits.
 *
 * Threads: as unit.h says. The circuit is touched only by the unit's
 * owner; sc_subcircuit_circuit is for the runtime's host thread while the
 * executor is idle (the executor's lock orders it after every turn).
 */
#ifndef SC_UNITS_SUBCIRCUIT_H
#define SC_UNITS_SUBCIRCUIT_H

#ifdef __cplusplus
extern "C" {
#endif

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "operators/circuit.h"
#include "operators/graph.h"
#include "runtime/unit.h"
#include "units/edge.h"
#include "units/exchange.h"

struct sc_subcircuit;
struct sc_timeline;
struct sc__unit_figures;

/* The producer of a host edge: nobody to kick. */
#define SC_SUBCIRCUIT_HOST UINT32_MAX

/* One input edge (the unit holds its consumer end). */
struct sc_subcircuit_in {
	struct sc_edge *edge; /* borrowed; outlives the unit */
	int stream;	      /* the graph stream its frames feed */
	uint32_t peer;	      /* producer unit id, or SC_SUBCIRCUIT_HOST */
	bool gated;	      /* not read while the unit is backpressured */
};

/* One boundary output stream and the edges it goes out on (the unit holds
 * their producer ends): one per replica of the consumer unit. */
struct sc_subcircuit_out {
	int stream;		      /* a stream the part produces */
	uint32_t key;		      /* routing key columns (nedges > 1) */
	uint32_t nedges;	      /* 1..SC_EXCHANGE_MAX */
	struct sc_edge *const *edges; /* borrowed, nedges */
	const uint32_t *peers;	      /* consumer unit ids, nedges */
	bool gating;		      /* backpressure here stops gated input */
	/* NULL, or per edge its trace (NULL entries: not traced), borrowed:
	 * it must outlive the unit (units/exchange.h, Traces) */
	struct sc_exchange_trace *const *traces;
	/* tick mode: `stream` is a delay of stream `ahead_from` (in the part
	 * or a boundary input), sent a tick ahead (see Ahead ports) */
	bool ahead;
	int ahead_from;
};

/* What to build (all copied but the edges and the graph). */
struct sc_subcircuit_desc {
	const char *name;		     /* for logs and panics */
	struct sc_graph *graph;		     /* must outlive the unit */
	const int *nodes;		     /* the part's node ids */
	size_t nnodes;			     /* >= 1 */
	const struct sc_subcircuit_in *in;   /* input edges */
	size_t nin;			     /* how many */
	const struct sc_subcircuit_out *out; /* output streams */
	size_t nout;			     /* how many */
	/* Called at the end of a turn that took frames from a host edge (on
	 * the worker), so a host blocked on a full input can retry. May be
	 * NULL. */
	void (*host_popped)(void *ctx);
	void *host_ctx;
	/* Where each turn is recorded as a slice named `timeline_id`
	 * (runtime/timeline.h), or NULL. A turn reads the clock only while
	 * the timeline is on. */
	struct sc_timeline *timeline;
	uint32_t timeline_id;
	/* Where the unit keeps its figures (sc_subcircuit_stats), when they
	 * must outlive it (the runtime reads them after a unit died and was
	 * freed); NULL: inside the unit. Library-internal storage
	 * (units/subcircuit_int.h). */
	struct sc__unit_figures *figures;
	/* NULL; or a rebuild (see the top): per input edge, the integral
	 * its first turn feeds (NULL entries: nothing), retained by the
	 * unit */
	struct sc_batch *const *restore;
	bool ticks; /* tick mode (see the top); every edge a tick edge */
	/* tick mode: the ticks the host has closed (no tick at or beyond
	 * it is stepped: see Ahead ports), read by horizon(horizon_ctx)
	 * from any thread; NULL: no bound */
	uint64_t (*horizon)(const void *ctx);
	const void *horizon_ctx;
};

/*
 * What a unit has done (sc_subcircuit_stats): turns run, frames taken from
 * its input edges and their rows, deltas it sent on its outputs and their
 * rows. Each is written by the unit's own turns only and read from any
 * thread at any time (relaxed atomics: each figure only grows, but two
 * read together may be one turn apart).
 */
/* A traced turn at least this long names its longest phase in its slice
 * (runtime/timeline.h: "op", "doing", "op_ms", "cpu_ms"). */
#define SC_SUBCIRCUIT_LONG_TURN_NS 1000000ull

struct sc_subcircuit_stats {
	uint64_t turns;
	uint64_t frames_in, rows_in;
	uint64_t frames_out, rows_out;
	uint64_t busy_ns;    /* time inside its turns: measured on one turn in
				32 and counted 32 times (every turn while a
				timeline records), so an estimate */
	uint64_t longest_ns; /* its longest turn: on the coarse clock (1-4
				ms ticks) unless a timeline recorded it */
	/* That turn's longest phase, known when a timeline recorded it:
	 * longest_doing NULL when not known. */
	const char *longest_doing; /* "step", "grow", "merge", "sort",
				      "output" (static) */
	int32_t longest_op;	   /* the operator: its graph node id, or
				      -1 for the unit's own work */
	uint64_t longest_phase_ns; /* how long that phase lasted */
};

/*
 * sc_subcircuit_create - build the part's circuit and the unit. Returns 0
 * and *out (the caller adds sc_subcircuit_unit(*out) to an executor, which
 * then owns it, or frees it with sc_subcircuit_destroy); SC_EINVAL (NULL,
 * no node, an out stream of 0 edges, an in/out stream the part does not
 * read/produce); SC_ENOMEM; or an error of sc_circuit_create_part.
 */
int sc_subcircuit_create(const struct sc_subcircuit_desc *d,
			 struct sc_subcircuit **out);

/* sc_subcircuit_destroy - what the unit's destroy does (see the top). For
 * a unit never added to an executor. NULL is allowed. */
void sc_subcircuit_destroy(struct sc_subcircuit *s);

/* The unit to add to an executor. */
struct sc_unit *sc_subcircuit_unit(struct sc_subcircuit *s);

/* The unit's circuit (see Threads above). */
struct sc_circuit *sc_subcircuit_circuit(struct sc_subcircuit *s);

/* sc_subcircuit_tick_now - inside a delta callback (sc_circuit_on_delta)
 * of a tick-mode unit's step, the tick that step belongs to; UINT64_MAX
 * outside one (a thread-local: the calling thread's step). */
uint64_t sc_subcircuit_tick_now(void);

/* sc_subcircuit_stats - the unit's figures so far, from any thread (see
 * struct sc_subcircuit_stats). s and out must not be NULL. */
void sc_subcircuit_stats(const struct sc_subcircuit *s,
			 struct sc_subcircuit_stats *out);

#ifdef __cplusplus
}
#endif

#endif /* SC_UNITS_SUBCIRCUIT_H */

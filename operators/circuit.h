/*
 * circuit.h - HOW a graph runs: a synchronous, single-threaded circuit.
 *
 * A circuit is built from a graph (graph.h), or from a subset of its nodes
 * (a "part", for units/), and runs it on one clock: sc_circuit_step() runs
 * every operator of the part exactly once, in a topological order computed
 * when the circuit is built. Between steps the host feeds input batches
 * (sc_circuit_feed) and reads output deltas and integrals.
 *
 * One tick:
 *
 *   1. every delay emits what it latched in the previous tick (empty in the
 *      first), so a delay depends on nothing this tick: that is how a cycle
 *      through a delay has an order, and a cycle without one has none
 *      (refused at build, SC_ECYCLE, naming the cycle's nodes);
 *   2. every other node, in topological order, computes this tick's delta
 *      from the deltas of the streams it reads. Inputs (and boundary
 *      inputs of a part) emit what was fed since the last step, summed
 *      once at the start of the step (sc_circuit_feed), or
 *      the empty Z-set. Stateful operators (join, antijoin, distinct,
 *      aggregate, topk) are the kernels of join.h, distinct.h,
 *      aggregate.h and topk.h; integrate and differentiate keep one batch;
 *      materialized outputs integrate into a trace, stream outputs keep
 *      nothing (graph.h);
 *   3. delays latch their input's delta; output callbacks run;
 *   4. every trace gets a bounded budget of merge work (trace.h), so the
 *      cost of keeping the LSM spines in shape is spread over the steps
 *      instead of landing in one burst: max(work_min, 2 * ceil(log2 N) *
 *      rows inserted this tick) units per kernel, N its rows.
 *
 * Empty deltas are represented internally by no batch at all, so a tick in
 * which little changes costs little: a linear operator whose input is
 * empty does nothing. The exception is integrate, a per-tick operator that
 * emits its whole integral every tick: it merges each delta into one
 * consolidated batch (O(N) per tick) and shares that batch as its output.
 *
 * Statistics. Every node counts the rows it read and wrote and the ticks
 * in which it had work (sc_circuit_node_stats): cheap counters that a
 * placement by measured cost (units/) can read.
 *
 * Failure. A step that fails (a user callback's error, a weight overflow,
 * no memory) returns that code, and leaves the circuit half-applied: some
 * operators have absorbed this tick, others not. So the circuit then
 * refuses every further step with SC_ESTATE (and a message naming the
 * first failure); only reading and destroying remain. Feeding, in
 * contrast, is checked before anything changes: a batch whose width is not
 * the input's schema is SC_ESCHEMA and nothing is applied.
 *
 * Parts (units/). sc_circuit_create_part builds the circuit of a subset of
 * a graph's nodes. A stream produced outside the part and read inside it
 * (a boundary input, sc_graph_cut) is fed with sc_circuit_feed exactly like
 * an input node, by the id of the node that produces it; a stream produced
 * inside is read with sc_circuit_delta by its producer's id, whether or not
 * something outside reads it. Because every operator is a function of its
 * input's history, running the parts in any order that feeds each boundary
 * stream the same deltas gives every node the same deltas as the whole
 * circuit would. Stepping parts tick by tick needs an order in which every
 * boundary stream is produced before it is consumed, so a cycle that
 * crosses parts cannot be run that way (its delay would see its boundary
 * input one tick late): keep each cycle inside one part, or run the parts *
 * asynchronously to a fixed point as units/ does. In code:
 *
 *     sc_circuit_create_part(g, nodes, n, &c);
 *     const struct sc_cut *cut = sc_circuit_cut(c);
 *     each tick:
 *         for s in cut->in:  sc_circuit_feed(c, s, what stream s emitted);
 *         sc_circuit_step(c);
 *         for s in cut->out: sc_circuit_delta(c, s, &d), hand d on;
 *
 * A part keeps state only for its own nodes and its boundary inputs, in
 * dense slots laid out in the order a step runs them, so a step costs
 * O(part) however large the graph is (with K units, a step that scanned
 * the graph would cost each unit O(graph)). Feeding and reading find a
 * stream's slot by its graph id in O(log part). Building still costs
 * O(graph): the cut and the topological order look at the whole graph.
 *
 * Symbols. A circuit holds the ids of every row it keeps (its traces,
 * kept batches and pending feeds) in its schemas' tables, so a host may
 * release its references once it has fed the rows (symbol.h, "Who holds
 * an id").
 *
 * Threads: a circuit is single-threaded. Distinct circuits (even of the
 * same, frozen, graph) may run on distinct threads at once, as long as
 * their user callbacks allow it.
 */
#ifndef SC_CIRCUIT_H
#define SC_CIRCUIT_H

#ifdef __cplusplus
extern "C" {
#endif

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "operators/batch.h"
#include "operators/error.h"
#include "operators/graph.h"
#include "operators/waterline.h"

struct sc_circuit;

/*
 * A callback on a node's delta, run once per step in which the delta is
 * not empty, after all the step's operators ran (topological order among
 * callbacks). `delta` is borrowed for the call (retain it to keep it).
 * Returns 0 or a negative SC_E* code, which fails the step with that code.
 */
typedef int (*sc_delta_fn)(void *ctx, int node, const struct sc_batch *delta);

/*
 * sc_circuit_create - a circuit of the whole graph. Freezes the graph
 * (graph.h) until the circuit is destroyed. Returns 0 and *out; SC_EINVAL;
 * SC_ESTATE (an unbound feedback); SC_ECYCLE (a cycle without a delay: the
 * message names its nodes, "'a' -> 'b' -> 'a'"); SC_ENOMEM; or an error of
 * a stateful kernel's create.
 */
int sc_circuit_create(struct sc_graph *g, struct sc_circuit **out);

/*
 * sc_circuit_create_part - a circuit of the nodes nodes[0..n) of g (order
 * and repeats do not matter): only those operators are instantiated; the
 * streams they read from outside are its boundary inputs (fed with
 * sc_circuit_feed), and the streams it produces for outside are its
 * boundary outputs (sc_circuit_cut lists both). Errors as
 * sc_circuit_create, and SC_ENOENT for an id that is not a node, SC_EINVAL
 * for n == 0.
 */
int sc_circuit_create_part(struct sc_graph *g, const int *nodes, size_t n,
			   struct sc_circuit **out);

/* sc_circuit_destroy - free every operator's state and thaw the graph.
 * NULL is allowed. */
void sc_circuit_destroy(struct sc_circuit *c);

/* sc_circuit_cut - the circuit's boundary (borrowed; the whole graph's
 * circuit has none). */
const struct sc_cut *sc_circuit_cut(const struct sc_circuit *c);

/*
 * sc_circuit_feed - add batch b (borrowed; the circuit takes its own
 * reference) to what stream `stream` emits at the next step. `stream` is an
 * input node of the circuit or one of its boundary inputs. Feeding the same
 * stream twice before a step adds the batches.
 *
 * The batches fed before a step are kept as they are and summed once, by
 * the step (a balanced tree of merges: O(rows log b) for b batches, where
 * merging each into a running sum cost O(rows * b)). A feed whose total
 * with the earlier ones would take a row's weight out of int64 is still
 * refused here: while the sum of |w| over what is held fits in int64 no
 * total can overflow, and past that bound each feed sums what it holds at
 * once, as a merge per feed. Returns
 *   0             b is held for the next step
 *   SC_EINVAL     NULL, or a stream the circuit computes itself
 *   SC_ENOENT     no such node, or not one the circuit reads, or a symbol
 *                 of b that is not live (symbol.h, "Who holds an id")
 *   SC_ESCHEMA    b's width is not the stream's
 *   SC_EOVERFLOW  a row's total with the earlier feeds since the last
 *                 step leaves int64: the step's delta could not hold it.
 *                 Step, then feed b again (alone it fits). Only a delta
 *                 must fit: an integral may pass int64 between steps and
 *                 come back (traces, distinct and the aggregates hold it
 *                 exactly; only a read of it says SC_EOVERFLOW), so which
 *                 feeds share a step never decides an error. A unit in
 *                 coalescing mode, whose turns chose that grouping, steps
 *                 early so (units/subcircuit.c); in tick mode the host's
 *                 ticks decide it, and the unit panics
 *   SC_ENOMEM     no room to hold b
 *   SC_ESTATE     the circuit failed
 * On failure nothing is applied (b is not held). The frames held keep
 * their rows' symbols until their tick is over.
 */
int sc_circuit_feed(struct sc_circuit *c, int stream, struct sc_batch *b);

/*
 * sc_circuit_step - run one tick (see the top of this file). Returns 0; the
 * code of the first failure (a callback's, SC_EOVERFLOW, SC_ENOMEM), after
 * which the circuit refuses further steps; SC_ESTATE if it had already
 * failed; SC_EINVAL (NULL). One exception: the sum of the batches fed
 * since the last step (sc_circuit_feed) comes first and can fail only with
 * SC_ENOMEM (never SC_EOVERFLOW: the feed ruled that out); then the tick
 * has not begun, nothing is applied, the feeds are still held and the
 * circuit has not failed, so the step may be retried.
 */
int sc_circuit_step(struct sc_circuit *c);

/*
 * sc_circuit_carried - how many nodes still owe part of a delta to later
 * steps. A step's delta is a batch (int64 weights), but a node's delta
 * can leave int64 only because of how the deltas were grouped into steps:
 * a map, flat_map or index_by folding two rows of 2^62
 * into one, a plus, minus or negate of such deltas, or a join's change past
 * int64 (join.h). Such a node computes its delta again with 128-bit
 * weights, emits each row's weight clamped into int64 and carries the
 * rest, and every later step emits the next part with whatever else it
 * computes, until nothing is carried. So only a value that is outside
 * int64 once settled is ever an error (the nodes that are not linear, and
 * integrate and differentiate, still fail with SC_EOVERFLOW: their deltas
 * are bounded by other rules, aggregate.h, distinct.h, topk.h). A caller
 * that groups steps as it likes (a coalescing unit, the settle
 * reference) steps again, with no new feeds, while this is not 0, and
 * reads the outputs' deltas after each step; in tick mode the carry goes
 * out with the next tick. 0 for NULL.
 */
size_t sc_circuit_carried(const struct sc_circuit *c);

/* sc_circuit_steps - ticks run so far. */
uint64_t sc_circuit_steps(const struct sc_circuit *c);

/*
 * sc_circuit_delta - the delta stream `node` had in the last step (the
 * empty batch before the first), as a new reference (*out; the caller
 * releases it). `node` is any node of the part or a boundary input.
 * Returns 0, SC_EINVAL, SC_ENOENT (not in this circuit), SC_ENOMEM.
 */
int sc_circuit_delta(const struct sc_circuit *c, int node,
		     struct sc_batch **out);

/*
 * sc_circuit_check - can `node`'s stream be read whole? An aggregate's
 * live group whose COUNT or integer SUM is outside int64 has no output row
 * (aggregate.h: that rule keeps a partial integral from failing a step), so
 * a stream downstream of it lacks that row; this says so. Walks the part
 * back from `node` (any node of the circuit or a boundary input) through
 * every aggregate of the part on the way.
 *   0             no aggregate upstream in this circuit holds such a group
 *   SC_EOVERFLOW  one does: the message names `node` and the aggregate
 *   SC_ESCHEMA    an aggregate declared SC_AGG_NONNEGATIVE holds a group
 *                 whose total weight is negative (aggregate.h,
 *                 "Nonnegative inputs"): its input breaks the declaration
 *                 now; the message names `node` and the aggregate
 *   SC_EINVAL     c is NULL
 *   SC_ENOENT     node is not read or computed by this circuit
 *   SC_ENOMEM     no room for the walk
 */
int sc_circuit_check(const struct sc_circuit *c, int node);

/*
 * sc_circuit_integral - the sum of a materialized OUTPUT node's deltas over
 * all steps so far, as a new consolidated batch (*out, the caller releases
 * it). Returns 0, SC_EINVAL (NULL, or not an output node of the circuit),
 * SC_ESTATE (a stream output, graph.h: it keeps no integral), SC_ENOENT,
 * SC_ENOMEM, SC_EOVERFLOW (as sc_circuit_check: an aggregate upstream holds
 * a live group whose value is outside int64, so the integral would miss its
 * row), SC_ESCHEMA (as sc_circuit_check: a breach of SC_AGG_NONNEGATIVE).
 */
int sc_circuit_integral(const struct sc_circuit *c, int node,
			struct sc_batch **out);

/*
 * sc_circuit_on_delta - call fn(ctx, node, delta) after every step in which
 * `node` (any node of the part) had a non-empty delta; fn NULL removes it.
 * One callback per node. Returns 0, SC_EINVAL, SC_ENOENT.
 */
int sc_circuit_on_delta(struct sc_circuit *c, int node, sc_delta_fn fn,
			void *ctx);

/*
 * sc_circuit_set_work - the least merge work each trace gets per step
 * (default 256 units; see the top of this file). 0 leaves merging to the
 * traces' own safety net. Returns 0 or SC_EINVAL.
 */
int sc_circuit_set_work(struct sc_circuit *c, size_t work_min);

/* sc_circuit_pending - merge work outstanding over all traces (0 when
 * every spine is settled). */
size_t sc_circuit_pending(const struct sc_circuit *c);

/*
 * sc_circuit_settle - do all outstanding merge work now (for a quiet
 * moment, or before measuring). Returns 0, SC_EINVAL, SC_ENOMEM,
 * SC_EOVERFLOW.
 */
int sc_circuit_settle(struct sc_circuit *c);

/* What one node of a circuit has done so far. */
struct sc_node_stats {
	uint64_t ticks_busy; /* ticks in which it read a non-empty delta */
	uint64_t rows_in;    /* rows of the deltas it read, all ports */
	uint64_t rows_out;   /* rows of the deltas it wrote */
};

/*
 * sc_circuit_node_stats - the counters of `node` (a node of the part, or a
 * boundary input: then only rows_out, the rows fed). Returns 0, SC_EINVAL,
 * SC_ENOENT.
 */
int sc_circuit_node_stats(const struct sc_circuit *c, int node,
			  struct sc_node_stats *out);

/* What one node of a circuit keeps between steps. */
struct sc_node_state {
	size_t rows;  /* rows held (a row stored in two runs counts twice) */
	size_t bytes; /* bytes they take */
};

/*
 * sc_circuit_node_state - what `node` keeps between steps now: an output's
 * trace (nothing for a stream output), a stateful kernel's traces and
 * tables, the batch integrate, differentiate and delay hold; not the
 * delta of the last step, nor a boundary input's pending feed (zeros for
 * the nodes that keep nothing). For tests and benchmarks of memory.
 * Returns 0 and *out, SC_EINVAL (NULL), SC_ENOENT.
 */
int sc_circuit_node_state(const struct sc_circuit *c, int node,
			  struct sc_node_state *out);

/*
 * sc_circuit_state - what the whole circuit keeps between steps: the sum of
 * sc_circuit_node_state over its nodes. Returns 0 and *out, SC_EINVAL.
 */
int sc_circuit_state(const struct sc_circuit *c, struct sc_node_state *out);

/* --- lateness and waterlines (waterline.h) -------------------------------- */

/*
 * sc_circuit_set_waterline - raise the waterline of fed stream `stream` (an
 * input node with lateness declared on col, or a boundary input whose
 * stream carries col) to `value`: the promise that every delta fed after
 * the next step has col >= value (waterline.h). A boundary input reads it
 * back at once; an input node's waterline is recomputed by the next step
 * (max(value, max_seen - L)), and feeds are checked against it from now
 * on. The next step's cleanup uses it. Lowering is ignored (returns 0).
 * Returns
 *   0           raised (or already higher)
 *   SC_EINVAL   c NULL, or a stream the circuit computes itself
 *   SC_ENOENT   no such stream in this circuit, or it carries no
 *               waterline on col
 */
int sc_circuit_set_waterline(struct sc_circuit *c, int stream, uint32_t col,
			     int64_t value);

/*
 * sc_circuit_waterline - after a step, the waterline of stream `node` on
 * column col: *value bounds every delta of that stream in the steps to
 * come (SC_WATERLINE_NONE: nothing known yet). Returns 0, SC_EINVAL,
 * SC_ENOENT (no such stream in the circuit, or it carries none on col).
 */
int sc_circuit_waterline(const struct sc_circuit *c, int node, uint32_t col,
			 int64_t *value);

/*
 * sc_circuit_delta_waterline - inside a delta callback (sc_circuit_on_delta,
 * and so units/runtime.h's sc_runtime_on_delta), the waterline of the
 * reported stream on column col that bounds this delta and every later
 * one (the value after the previous step: SC_WATERLINE_NONE before any).
 * A sink closes what lies below it: no row there will come from this
 * circuit again. *source (if not NULL) names the reporting circuit, the
 * same for all its callbacks: a sharded node's replicas each report their
 * own share under their own waterline, so a sink waits for every source's.
 * Returns
 *   0           *value (and *source) set
 *   SC_EINVAL   value is NULL
 *   SC_ESTATE   not inside a delta callback on this thread
 *   SC_ENOENT   the stream carries no waterline on col (waterline.h's
 *               transfer: none declared upstream, or a node that drops
 *               it); *source is set all the same
 */
int sc_circuit_delta_waterline(uint32_t col, int64_t *value,
			       const void **source);

/*
 * sc_circuit_waterlines - every column of stream `node` that carries a
 * waterline: *mask (bit i: column i) and, if values is not NULL, values[i]
 * for each such i (room for SC_SCHEMA_MAX_COLS). Returns 0, SC_EINVAL,
 * SC_ENOENT.
 */
int sc_circuit_waterlines(const struct sc_circuit *c, int node, uint32_t *mask,
			  int64_t *values);

/*
 * sc_circuit_late - the late rows of input node `input` so far: admitted
 * (SC_LATE_ADMIT) and refused (their feed failed with SC_ELATE), over all
 * its declarations. Returns 0, SC_EINVAL, SC_ENOENT (not an input of this
 * circuit). Either pointer may be NULL.
 */
int sc_circuit_late(const struct sc_circuit *c, int input, uint64_t *admitted,
		    uint64_t *refused);

/*
 * sc_circuit_set_cleanup - turn the dropping of dead state (waterline.h)
 * on (the default) or off. Off, every kernel keeps its whole integral, as
 * a circuit without lateness does; the outputs are the same either way
 * for inputs that respect their lateness. May be called between any two
 * steps. Returns 0 or SC_EINVAL.
 */
int sc_circuit_set_cleanup(struct sc_circuit *c, bool on);

/*
 * sc_circuit_fprint - the circuit's nodes in the order a step runs them,
 * one line each: id, name, kind, inputs, columns and the counters of
 * sc_circuit_node_stats; then its boundary. For logs and debugging.
 */
void sc_circuit_fprint(FILE *f, const struct sc_circuit *c);

#ifdef __cplusplus
}
#endif

#endif /* SC_CIRCUIT_H */

/*
 * graph.h - WHAT to compute: a typed graph of Z-set operators.
 *
 * A graph names operators (nodes) and the streams between them. It is a
 * description only: it holds no data and runs nothing. circuit.h turns a
 * graph, or any subset of its nodes, into a synchronous circuit that runs
 * it; units/ cuts the same graph into sub-circuits by a placement. Keeping
 * the WHAT apart from the HOW is why this module has no step(), no batch
 * and no state.
 *
 * Nodes and streams. Every node has a small integer id (0, 1, 2, ... in
 * the order of creation), a kind, a name and exactly ONE output stream, so
 * a stream is named by the id of the node that produces it. A node reads
 * 0..n input streams through numbered ports (join: port 0 = left, port 1 =
 * right). An edge is (from, to, port): stream `from` enters node `to` at
 * `port`. Every function that adds a node returns its id (>= 0) or a
 * negative SC_E* code, so calls nest naturally:
 *
 *     int in = sc_graph_input(g, "bids", &bid_schema);
 *     int big = sc_graph_filter(g, in, is_big, NULL);
 *     int out = sc_graph_output(g, "big_bids", big);
 *
 * and an error from an inner call (a negative id) is passed through by the
 * outer one unchanged: its code comes out, and the outer call's message
 * names the outer call and quotes the inner one's, so the first error is
 * reported by name and sc_errmsg() always names the call that returned.
 *
 * Schemas are inferred and checked as nodes are added: plus/minus need
 * equal schemas, a join's key columns must have equal types, a map or
 * flat_map states its output schema, index_by projects. Streams that meet
 * in one node (join, antijoin, plus, minus, sum, bind) take their symbols
 * from one table when both name one (a circuit holds a row's symbols in
 * its schema's table, symbol.h). A node that does not type-check is
 * refused (SC_ESCHEMA) and the graph is unchanged.
 *
 * Streams carry Z-sets, one per tick. By convention a stream is a stream of
 * CHANGES (deltas): the linear operators (map, filter, flat_map, index_by,
 * plus, negate, minus) are the same whether their input is read as values
 * or as changes; the stateful ones (join, antijoin, distinct, aggregate,
 * topk)
 * are incremental: the integral of their output is the operator applied to
 * the integral of their input(s). integrate, differentiate and delay are
 * per-tick stream operators: integrate's output at tick t is the sum of its
 * inputs up to t, differentiate's is input(t) - input(t-1), delay's is
 * input(t-1) (the empty Z-set at t = 0).
 *
 * Loops. Nodes can only read streams that already exist, so a graph built
 * by the calls above is acyclic. A loop needs a stream that is used before
 * it is defined: sc_graph_feedback(schema) declares one (a node that
 * forwards its input unchanged) and sc_graph_bind(fb, from) later connects
 * its input. A cycle is legal only if it passes through a delay; the graph
 * accepts any binding, and sc_graph_check (and every circuit built from the
 * graph) refuses a cycle without a delay with SC_ECYCLE and a message that
 * names its nodes.
 *
 * Cutting the graph (for units/). sc_graph_cut(nodes) computes the
 * boundary of a subset of nodes: the streams produced outside the subset
 * and read inside it (boundary inputs: the subset's circuit is fed them
 * like input nodes), and the streams produced inside and read outside
 * (boundary outputs: the subset's circuit exposes their deltas). Together
 * with the node and edge iteration below (sc_graph_node_info,
 * sc_graph_edge) that is all a placement layer needs; see circuit.h for
 * sc_circuit_create_part.
 *
 * User code. map, filter and flat_map call user functions once per row of
 * each delta. They must be pure functions of the row (and of state the
 * user keeps constant while circuits run): the incremental results are
 * right only because f(a + b) = f(a) + f(b) holds row by row. A callback
 * returns 0, or a negative SC_E* code that fails the circuit's step with
 * that code (a positive return is reported as SC_ECALLBACK).
 *
 * Lifetime. A graph is single-threaded while it is built. Once a circuit
 * has been built from it, the graph is FROZEN: every call that would change
 * it fails with SC_EBUSY, and sc_graph_destroy refuses (SC_EBUSY) until the
 * last such circuit is destroyed; any number of threads may then read it
 * (the read-only calls below) at once.
 */
#ifndef SC_GRAPH_H
#define SC_GRAPH_H

#ifdef __cplusplus
extern "C" {
#endif

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "operators/error.h"
#include "operators/schema.h"

struct sc_graph;
struct sc_aggregate_spec; /* aggregate.h */
struct sc_topk_spec;	  /* topk.h */
struct sc_multiagg_spec;  /* multiagg.h */
struct sc_session_spec;	  /* session.h */

/* The kinds of node. */
enum sc_node_kind {
	SC_NODE_INPUT = 0,	/* fed by the host, per tick */
	SC_NODE_OUTPUT = 1,	/* its input, made readable (a stream too) */
	SC_NODE_MAP = 2,	/* one row out per row in */
	SC_NODE_FILTER = 3,	/* the rows a predicate keeps */
	SC_NODE_FLAT_MAP = 4,	/* 0..n rows out per row in */
	SC_NODE_INDEX_BY = 5,	/* project / permute columns (re-key) */
	SC_NODE_PLUS = 6,	/* the sum of n >= 1 streams */
	SC_NODE_NEGATE = 7,	/* -a */
	SC_NODE_MINUS = 8,	/* a - b */
	SC_NODE_JOIN = 9,	/* incremental equi-join on a key prefix */
	SC_NODE_ANTIJOIN = 10,	/* rows of a whose key is absent from b */
	SC_NODE_DISTINCT = 11,	/* incremental set semantics */
	SC_NODE_AGGREGATE = 12, /* incremental group-by aggregate */
	SC_NODE_INTEGRATE = 13, /* running sum */
	SC_NODE_DIFFERENTIATE = 14, /* change from the previous tick */
	SC_NODE_DELAY = 15,	    /* the previous tick's value */
	SC_NODE_FEEDBACK = 16,	    /* forward of a stream bound later */
	SC_NODE_TOPK = 17,	    /* incremental top-k rows per group */
	SC_NODE_MULTIAGG = 18,	    /* several aggregates of one group */
	SC_NODE_SESSION = 19,	    /* session windows per group */
	SC__NODE_KIND_COUNT = 20
};

/* The most input ports of a node (an n-ary plus). */
#define SC_GRAPH_MAX_INPUTS 64

/* --- user callbacks -------------------------------------------------------
 * `row` holds the input schema's ncols words (encoded, schema.h). Each
 * returns 0 or a negative SC_E* code. */

/* map: write the output schema's ncols words into `out`. */
typedef int (*sc_map_fn)(void *ctx, const uint64_t *row, uint64_t *out);

/* filter: set *keep. */
typedef int (*sc_filter_fn)(void *ctx, const uint64_t *row, bool *keep);

/* The sink a flat_map callback writes its rows into (opaque). */
struct sc_emitter;

/* flat_map: call sc_emit 0..n times. */
typedef int (*sc_flat_map_fn)(void *ctx, const uint64_t *row,
			      struct sc_emitter *out);

/*
 * sc_emit - from a flat_map callback: add one output row (the output
 * schema's ncols words, copied) with the weight of the input row. Emitting
 * the same row twice doubles its weight. Returns 0, SC_EINVAL or
 * SC_ENOMEM; a callback should return the error unchanged.
 */
int sc_emit(struct sc_emitter *out, const uint64_t *row);

/*
 * sc_emit_own - from a flat_map callback: hand the step one reference to
 * `id`, a symbol of the output schema's table that the callback made
 * (sc_symtab_intern) or took (sc_symtab_retain) for a row it emits, such
 * as a text computed from an input's text. The circuit lets the reference
 * go when this step's delta goes (at the circuit's next step, or when it
 * is destroyed); by then every keeper downstream (a trace, an edge, a
 * materialized output) holds the id itself (symbol.h, "Who holds an id"),
 * so the id lives exactly as long as a row that names it. Hand one
 * reference per reference taken: the same id handed twice is released
 * twice. Returns:
 *   0            the reference is the step's
 *   SC_EINVAL    out NULL, id SC_SYMBOL_NONE, or an output schema that
 *                names no symbol table; the reference stays the caller's
 *   SC_ENOMEM    the reference stays the caller's
 * A callback should return the error unchanged (and release what it
 * kept), which fails the step.
 */
int sc_emit_own(struct sc_emitter *out, uint64_t id);

/* --- life ----------------------------------------------------------------- */

/* sc_graph_create - an empty graph. Returns 0 and *out, SC_EINVAL,
 * SC_ENOMEM. */
int sc_graph_create(struct sc_graph **out);

/*
 * sc_graph_destroy - free the graph and the contexts it owns. Returns 0, or
 * SC_EBUSY (and frees nothing) while a circuit built from it is alive. NULL
 * is allowed (returns 0).
 */
int sc_graph_destroy(struct sc_graph *g);

/* --- nodes -------------------------------------------------------------------
 * Each returns the new node's id (>= 0) or a negative code, and adds
 * nothing on failure. Common failures: SC_EINVAL (g or a pointer NULL),
 * SC_ENOENT (an input id that is not a node), SC_ESCHEMA (types do not
 * fit), SC_EBUSY (graph frozen), SC_ENOMEM. A negative `from` is returned
 * as it is (an error passed through from a nested call), with a message
 * naming this call and quoting the last one raised. The node's name is
 * "<kind>#<id>" unless set by sc_graph_set_name. */

/*
 * sc_graph_input - a stream the host feeds. `name` (copied) must be unique
 * among the graph's named nodes (SC_EINVAL otherwise). The schema is
 * copied (its symbol table pointer too).
 */
int sc_graph_input(struct sc_graph *g, const char *name,
		   const struct sc_schema *schema);

/*
 * Outputs come in two modes. A MATERIALIZED output (sc_graph_output) is
 * readable whole: a circuit integrates its deltas into a trace, which
 * sc_circuit_integral (and sc_runtime_integral) read. A STREAM output
 * (sc_graph_output_stream) keeps nothing: each tick's delta goes to the
 * sink installed on the node (sc_circuit_on_delta, sc_runtime_on_delta),
 * once, and is dropped at the next tick, so the output's memory does not
 * grow with the number of ticks or rows (Nexmark q0 over 100M events
 * holds one delta, not 100M rows). Its integral cannot be read: asking is
 * SC_ESTATE. A stream output with no sink installed simply drops its
 * deltas. Only the output node differs: the operators upstream keep what
 * they need either way.
 */

/*
 * sc_graph_output - a materialized output: make stream `from` readable
 * under `name` (unique, as for inputs): a circuit keeps its delta per tick
 * and its integral.
 */
int sc_graph_output(struct sc_graph *g, const char *name, int from);

/*
 * sc_graph_output_stream - a stream output of `from` under `name` (as
 * sc_graph_output): a circuit keeps only this tick's delta and hands it to
 * the node's delta callback. Errors as sc_graph_output.
 */
int sc_graph_output_stream(struct sc_graph *g, const char *name, int from);

/* sc_graph_map - out = { fn(r) x w : (r, w) in in }, rows of `out_schema`.
 * ctx is passed to fn and not owned. */
int sc_graph_map(struct sc_graph *g, int from,
		 const struct sc_schema *out_schema, sc_map_fn fn, void *ctx);

/* sc_graph_filter - the rows of `from` for which fn keeps. */
int sc_graph_filter(struct sc_graph *g, int from, sc_filter_fn fn, void *ctx);

/* sc_graph_flat_map - each row's emitted rows, times its weight. */
int sc_graph_flat_map(struct sc_graph *g, int from,
		      const struct sc_schema *out_schema, sc_flat_map_fn fn,
		      void *ctx);

/*
 * sc_graph_index_by - re-key: rows (r[cols[0]], ..., r[cols[n-1]]), so that
 * a join or aggregate finds its key in the first columns. Columns may be
 * repeated or dropped (dropping columns is a projection: rows that become
 * equal add). n in 1..SC_SCHEMA_MAX_COLS; cols copied.
 */
int sc_graph_index_by(struct sc_graph *g, int from, const uint32_t *cols,
		      uint32_t n);

/* sc_graph_plus - a + b (equal schemas). */
int sc_graph_plus(struct sc_graph *g, int a, int b);

/* sc_graph_sum - from[0] + ... + from[n-1], n in 1..SC_GRAPH_MAX_INPUTS,
 * equal schemas. A stream may appear more than once (it is added twice). */
int sc_graph_sum(struct sc_graph *g, const int *from, uint32_t n);

/* sc_graph_negate - -a. */
int sc_graph_negate(struct sc_graph *g, int a);

/* sc_graph_minus - a - b (equal schemas). */
int sc_graph_minus(struct sc_graph *g, int a, int b);

/*
 * sc_graph_join - the equi-join of a and b on their first k columns (k at
 * most either's column count, 0 = the cross product; the key columns' types
 * must be equal).
 * Output rows: the key, a's other columns, b's other columns (at most
 * SC_SCHEMA_MAX_COLS in all), weight w_a * w_b. Incremental: the integral of
 * the output is the join of the integrals. Re-key with index_by first.
 */
int sc_graph_join(struct sc_graph *g, int a, int b, uint32_t k);

/*
 * sc_graph_join_within - the time-bounded join: the pairs of
 * sc_graph_join(g, a, b, k) with a.lo <= b.t <= a.hi, where lo = a's column
 * a_lo_col, hi = a's a_hi_col and t = b's b_time_col (all past the key, of
 * one type, i64 or u64). Same output rows as the join. With waterlines
 * (waterline.h) its state stays bounded: a-rows with a.hi below b's
 * waterline on t, and b-rows with b.t below a's on lo, can match no future
 * row and are dropped; its output's a.hi and b.t columns carry min(W_b(t),
 * W_a(lo)). Errors as sc_graph_join, and SC_ESCHEMA / SC_ETYPE for the
 * three columns. The node's kind is SC_NODE_JOIN (placement and sharding
 * by key treat it as a join); sc_node_info's `within` says it is bounded.
 */
int sc_graph_join_within(struct sc_graph *g, int a, int b, uint32_t k,
			 uint32_t a_lo_col, uint32_t a_hi_col,
			 uint32_t b_time_col);

/*
 * sc_graph_antijoin - the rows of a (a's schema) whose first k columns match
 * no row of b with a positive integrated weight. Key types as for join.
 */
int sc_graph_antijoin(struct sc_graph *g, int a, int b, uint32_t k);

/* sc_graph_distinct - every row whose integrated weight is positive, with
 * weight 1 (incrementally: output changes only where that flips). */
int sc_graph_distinct(struct sc_graph *g, int a);

/*
 * sc_graph_aggregate - group `a` by its first spec->k columns and aggregate
 * one value column (aggregate.h says which kinds, the output value type
 * and how NaN, empty groups and symbols behave). Output rows: (key...,
 * value), weight 1 per live group. The spec is copied.
 */
int sc_graph_aggregate(struct sc_graph *g, int a,
		       const struct sc_aggregate_spec *spec);

/*
 * sc_graph_aggregate_flags - sc_graph_aggregate declared with `flags`: 0,
 * or SC_AGG_NONNEGATIVE (COUNT/SUM/AVG), the user's promise that no row of
 * `a`'s integral has a negative weight once settled (a set, or
 * multiplicities such as a projection of another aggregate's output). The
 * node then keeps O(groups) state, not a row per distinct input row, and
 * its output equals sc_graph_aggregate's for every input that keeps the
 * promise; whatever the input, it settles under every placement where the
 * single circuit does. A settled breach (a group of negative total weight)
 * is reported by sc_circuit_check and sc_circuit_integral as SC_ESCHEMA
 * naming the node (aggregate.h, "Nonnegative inputs"). Returns the node
 * id, or SC_EINVAL (NULL spec, an unknown flag, the flag on MIN/MAX) and
 * sc_graph_aggregate's other codes.
 */
int sc_graph_aggregate_flags(struct sc_graph *g, int a,
			     const struct sc_aggregate_spec *spec,
			     uint32_t flags);

/*
 * sc_graph_topk - per group of the first spec->key columns of `a`, its
 * rows ranked at most spec->limit by spec's order (topk.h says how ranks,
 * ties and weights behave). Output: a's schema, a's rows. The spec is
 * copied; spec->ncols must be a's width (SC_ESCHEMA otherwise), and the
 * spec well formed (sc_topk_spec_check's codes).
 */
int sc_graph_topk(struct sc_graph *g, int a, const struct sc_topk_spec *spec);

/*
 * sc_graph_multiagg - per group of the first spec->k columns of `a`, one
 * row of the key and every term's value (multiagg.h says what each term
 * computes). Output: k + nterms columns, the key's types then each
 * term's (sc_multiagg_out_type). The spec is copied. Returns the node
 * id, or sc_multiagg_spec_check's codes, or SC_ESCHEMA (spec->ncols is
 * not a's width, or a term's col_type is not its column's type) or
 * SC_ETYPE (a filter column that is not bool).
 */
int sc_graph_multiagg(struct sc_graph *g, int a,
		      const struct sc_multiagg_spec *spec);

/*
 * sc_graph_session - per group of the first spec->k columns of `a`, its
 * session windows over the i64 column spec->time_col with spec->gap
 * (session.h): rows (key, start, end, count), the key's types then three
 * i64 columns. The spec is copied. Returns the node id, or
 * sc_session_spec_check's codes, or SC_ESCHEMA (spec->ncols is not a's
 * width) or SC_ETYPE (the time column is not i64).
 */
int sc_graph_session(struct sc_graph *g, int a,
		     const struct sc_session_spec *spec);

/* sc_graph_integrate - the running sum of a, per tick. */
int sc_graph_integrate(struct sc_graph *g, int a);

/* sc_graph_differentiate - a(t) - a(t-1), per tick (a(-1) = 0). */
int sc_graph_differentiate(struct sc_graph *g, int a);

/* sc_graph_delay - a(t-1), per tick (empty at t = 0). Breaks cycles. */
int sc_graph_delay(struct sc_graph *g, int a);

/*
 * sc_graph_feedback - declare a stream of `schema` whose producer is bound
 * later by sc_graph_bind (to build loops: fb = feedback; d = delay(fb);
 * x = plus(in, d); bind(fb, x)). The node forwards its input unchanged.
 */
int sc_graph_feedback(struct sc_graph *g, const struct sc_schema *schema);

/*
 * sc_graph_bind - connect feedback node `fb` to read stream `from` (same
 * schema). Returns 0, SC_EINVAL (fb is not a feedback node), SC_ESTATE
 * (already bound), SC_ENOENT, SC_ESCHEMA, SC_EBUSY. Any binding is accepted
 * here; a cycle without a delay is refused by sc_graph_check.
 */
int sc_graph_bind(struct sc_graph *g, int fb, int from);

/*
 * sc_graph_set_name - rename node `id` (copied; for messages and lookup).
 * Names must be unique among named nodes: SC_EINVAL otherwise.
 */
int sc_graph_set_name(struct sc_graph *g, int id, const char *name);

/*
 * sc__graph_flat_map_owned - sc_graph_flat_map whose ctx the graph owns:
 * `drop(ctx)` runs when the graph is destroyed, and also when this call
 * fails (so the caller never leaks it). Internal (window.c).
 */
int sc__graph_flat_map_owned(struct sc_graph *g, int from,
			     const struct sc_schema *out_schema,
			     sc_flat_map_fn fn, void *ctx,
			     void (*drop)(void *ctx));

/* --- reading the graph (any thread once frozen) --------------------------- */

/* What one node is. Pointers are borrowed from the graph. */
struct sc_node_info {
	enum sc_node_kind kind;		/* what it computes */
	const char *name;		/* unique, never NULL */
	const struct sc_schema *schema; /* of its output stream */
	uint32_t ninputs;		/* ports */
	const int *inputs;		/* stream read at port i; -1 for an
					 * unbound feedback */
	uint32_t key;			/* join/antijoin k; aggregate's and
					 * multiagg's k; topk's group key
					 * width */
	bool stream;			/* output: a stream output (keeps
					 * no integral) */
	bool within;			/* join: time-bounded
					 * (sc_graph_join_within) */
};

/* sc_graph_node_count - how many nodes (ids are 0 .. count-1). */
size_t sc_graph_node_count(const struct sc_graph *g);

/* sc_graph_node_info - fill *out for node id. Returns 0, SC_EINVAL,
 * SC_ENOENT (no such node). */
int sc_graph_node_info(const struct sc_graph *g, int id,
		       struct sc_node_info *out);

/* sc_graph_schema - the schema of stream id, or NULL if no such node. */
const struct sc_schema *sc_graph_schema(const struct sc_graph *g, int id);

/* sc_graph_find - the id of the node named `name`, or SC_ENOENT / SC_EINVAL. */
int sc_graph_find(const struct sc_graph *g, const char *name);

/*
 * sc_graph_fprint - one line per node: id, name, kind, the streams it reads
 * and its schema's types. For logs and debugging.
 */
void sc_graph_fprint(FILE *f, const struct sc_graph *g);

/* sc_node_kind_name - "map", "join", ... ("?" if unknown). Static. */
const char *sc_node_kind_name(enum sc_node_kind kind);

/* An edge: stream `from` read by node `to` at port `port`. */
struct sc_edge_info {
	int from;
	int to;
	uint32_t port;
};

/* sc_graph_edge_count - how many edges (bound ports). */
size_t sc_graph_edge_count(const struct sc_graph *g);

/*
 * sc_graph_edge - edge i of sc_graph_edge_count (ordered by `to`, then by
 * port). O(nodes) per call: for a loop over all edges, walk the nodes'
 * inputs instead. Returns 0, SC_EINVAL, SC_ENOENT (i out of range).
 */
int sc_graph_edge(const struct sc_graph *g, size_t i, struct sc_edge_info *out);

/*
 * sc_graph_check - the graph as a whole: every feedback bound (SC_ESTATE
 * naming the first unbound one) and every cycle through a delay (SC_ECYCLE
 * naming the nodes of one cycle, "a -> b -> a"). Returns 0 if the graph can
 * be built into a circuit.
 */
int sc_graph_check(const struct sc_graph *g);

/*
 * The boundary of a subset of nodes (a "part"). Caller storage, filled by
 * sc_graph_cut, freed by sc_cut_fini. Ids are sorted and distinct.
 */
struct sc_cut {
	size_t nin;	  /* boundary inputs */
	int *in;	  /* streams produced outside the part, read inside */
	size_t nout;	  /* boundary outputs */
	int *out;	  /* streams produced inside, read outside (output
			   * nodes are never in `out`: no node reads them) */
	uint32_t *in_wl;  /* per in[i]: the columns that carry a waterline
			   * (bit c: column c; waterline.h) */
	uint32_t *out_wl; /* per out[i]: the same */
};

/*
 * sc_graph_cut - the boundary of the part made of nodes[0..n) (ids; order
 * and repeats do not matter), with the waterline columns of each boundary
 * stream (in_wl, out_wl: sc_graph_waterline_cols of the whole graph, so a
 * part's boundary input carries the columns of the stream it stands for).
 * Returns 0 and fills *out (free with sc_cut_fini), SC_EINVAL (NULL, n 0),
 * SC_ENOENT (an id that is not a node), SC_ESTATE (an unbound feedback in
 * the graph), SC_ECYCLE (a cycle without a delay), SC_ENOMEM.
 */
int sc_graph_cut(const struct sc_graph *g, const int *nodes, size_t n,
		 struct sc_cut *out);

/* sc_cut_fini - free what sc_graph_cut allocated. NULL is allowed. */
void sc_cut_fini(struct sc_cut *c);

/* --- for circuit.c -------------------------------------------------------- */

/* Freeze (count one more circuit) / thaw (one fewer). Internal. */
void sc__graph_freeze(struct sc_graph *g);
void sc__graph_thaw(struct sc_graph *g);

#ifdef __cplusplus
}
#endif

#endif /* SC_GRAPH_H */

/*
 * circuit_gen.h - seeded random circuits and an independent reference
 * evaluator, for the operators/ circuit tests and the units/ tests, which
 * run the same circuits placed into units.
 *
 * A generated circuit is first a SPEC (struct cg_spec: a list of nodes
 * with their operator, inputs, schema and parameters); the spec is built
 * into an sc_graph (graph.h) one node per spec node, so spec index i is
 * graph node id i. The reference evaluator runs the spec with nothing but
 * plain arrays of (row, weight) and nested loops (struct cz): linear
 * operators are applied to each tick's value, and every stateful operator
 * (join, antijoin, distinct, aggregate, topk) is recomputed FROM SCRATCH on
 * the integrals of its inputs, its tick value being the difference from the
 * previous tick's result. It shares no code with operators/ beyond the
 * encodings of schema.h and the user callbacks (cg_map_fn and the filter
 * and flat_map callbacks in circuit_gen.c, the "user's" code, called by
 * both).
 *
 * Values. Columns are i64 or u64 and hold small values (0..7 from the
 * generator; maps fold values back into 0..7), so rows collide, joins
 * match and groups gather. Aggregates are count, sum, min and max (avg is
 * checked by test_circuit.c on its own).
 *
 * Loops. With some probability a loop is added: fb = feedback(S),
 * d = delay(fb), y = plus(x, d), z = filter(y), bind(fb, z); only d reads
 * fb, so the reference can evaluate fb after the rest of the tick.
 *
 * Replay. A circuit and its deltas are a function of the seed alone (the
 * RNG of prop.h, drawn in a fixed order), so a property test's failing
 * seed rebuilds the same graph and feeds it the same deltas.
 *
 * Errors. The generator and the reference abort on what can only be a
 * test bug (an allocation failure, a graph call that refuses a node the
 * spec made): a test never sees a half-built circuit.
 *
 * Built once into the static library sc_testcircuit (tests/CMakeLists.txt,
 * on sc_operators and sc_testprop), which both the operators and the
 * units test programs link.
 */
#ifndef SC_TEST_CIRCUIT_GEN_H
#define SC_TEST_CIRCUIT_GEN_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "operators/aggregate.h"
#include "operators/batch.h"
#include "operators/graph.h"
#include "operators/schema.h"
#include "operators/multiagg.h"
#include "operators/session.h"
#include "operators/topk.h"
#include "tests/support/prop.h"

/* --- the reference Z-set: rows and weights, linear search ----------------- */

struct cz {
	uint32_t ncols;
	size_t n, cap;
	uint64_t *rows; /* n * ncols words */
	int64_t *w;	/* n weights; zero entries mean absent */
};

/* An empty Z-set of rows of ncols (1..SC_SCHEMA_MAX_COLS) columns; aborts
 * on 0. Allocates nothing until the first row; free with cz_fini. */
void cz_init(struct cz *z, uint32_t ncols);

/* Free z's rows; z is empty afterwards and may be initialised again. */
void cz_fini(struct cz *z);

/* dst = src, both initialised and of the same width. */
void cz_copy(struct cz *dst, const struct cz *src);

/* True when batch b (NULL: empty) equals z: the same non-zero rows with
 * the same weights, and b is sorted, distinct and zero-free (checked by
 * plain loops, not by batch.c). */
bool cz_equals_batch(const struct cz *z, const struct sc_batch *b);

/* Print z's live rows to f, for a failure report. */
void cz_fprint(FILE *f, const struct cz *z);

/* --- the user callbacks' parameters --------------------------------------- */

enum { CG_MAXC = 6 }; /* widest row the generator makes */

/* map: out[j] = enc(otype[j], (v[src[j]] * mul[j] + add[j]) mod 8) */
struct cg_map {
	uint32_t nin, nout;
	enum sc_type itype[CG_MAXC], otype[CG_MAXC];
	uint32_t src[CG_MAXC];
	int mul[CG_MAXC], add[CG_MAXC];
	int fail_at; /* if >= 0: return SC_ECALLBACK on a row whose first
		      * column's value is fail_at (for error tests) */
};

/* The map callback of graph.h (ctx: a struct cg_map): writes out per the
 * rule above and returns 0, or SC_ECALLBACK on a row whose first column
 * is fail_at. */
int cg_map_fn(void *ctx, const uint64_t *row, uint64_t *out);

/* filter: keep iff (v[i] + v[j]) mod m != r */
struct cg_filter {
	enum sc_type itype[CG_MAXC];
	uint32_t i, j;
	int m, r;
};

/* flat_map: n = v[i] mod 3 copies, copy e with column c = (v[c] + e) mod 8 */
struct cg_flat {
	uint32_t ncols;
	enum sc_type itype[CG_MAXC];
	uint32_t i, c;
};

/* --- the spec ------------------------------------------------------------- */

enum cg_op {
	CG_INPUT,
	CG_OUTPUT,
	CG_MAP,
	CG_FILTER,
	CG_FLAT_MAP,
	CG_INDEX_BY,
	CG_PLUS,
	CG_NEGATE,
	CG_MINUS,
	CG_JOIN,
	CG_ANTIJOIN,
	CG_DISTINCT,
	CG_AGGREGATE,
	CG_INTEGRATE,
	CG_DIFFERENTIATE,
	CG_DELAY,
	CG_WINDOW,
	CG_FEEDBACK,
	CG_TOPK,
	CG_MULTIAGG,
	CG_SESSION,
	CG__OPS
};

struct cg_node {
	enum cg_op op;
	uint32_t nin;
	int in[4];
	uint32_t ncols;
	enum sc_type types[CG_MAXC + 1];
	/* parameters */
	struct cg_map map;
	struct cg_filter filter;
	struct cg_flat flat;
	uint32_t cols[CG_MAXC]; /* index_by */
	uint32_t k;		/* join / antijoin key */
	struct sc_aggregate_spec agg;
	struct sc_topk_spec topk;
	struct sc_multiagg_spec magg;
	struct sc_session_spec sess;
	uint32_t wcol;	    /* window time column */
	int64_t width, hop; /* window */
	int bind;	    /* feedback: the node it reads */
	/* reference state */
	struct cz val;	  /* this tick's value */
	struct cz st;	  /* integrate: sum; differentiate: last input; delay:
			   * latched; output / input: integral */
	struct cz ia, ib; /* stateful: integrals of the inputs */
	struct cz prev;	  /* stateful: last tick's full result */
};

struct cg_spec {
	uint64_t seed;
	size_t n;
	struct cg_node *nodes;	/* n; heap (stable: callbacks point in) */
	struct sc_graph *graph; /* built from the spec */
	size_t ninputs;
	int inputs[8]; /* node ids of the inputs */
};

/* Generator options. */
struct cg_opts {
	uint32_t max_inputs; /* 1..8 */
	uint32_t max_ops;    /* operator nodes besides inputs and outputs */
	uint32_t max_cols;   /* input width, 1..4 */
	bool stateful;	     /* join, antijoin, distinct, aggregate, topk,
				multiagg, session */
	bool loops;	     /* feedback loops through a delay */
};

/* The defaults: 3 inputs, 14 ops, 3 columns, stateful ops and loops. */
void cg_opts_default(struct cg_opts *o);

/* A random circuit for `seed`: its spec, its graph and a fresh reference
 * state. Aborts on internal errors (a test bug). Free with cg_free. */
struct cg_spec *cg_generate(uint64_t seed, const struct cg_opts *o);

/* A circuit of one operator `op` (not input, output or feedback): input
 * node 0 (and, for binary ops, input node 1, whose schema shares a's first
 * column types), the op as node 1 or 2, and an output reading it (the last
 * node). For the per-operator oracles. Free with cg_free. */
struct cg_spec *cg_generate_single(uint64_t seed, enum cg_op op);

/* Free s (NULL: nothing) and destroy its graph; aborts if a circuit built
 * from the graph is still alive (a test bug). */
void cg_free(struct cg_spec *s);

/* --- the reference ---------------------------------------------------------
 */

/* The operator of node nd (linear or stateful, not the per-tick integrate,
 * differentiate or delay, on which it aborts) applied from scratch to the
 * Z-sets ins[0..nd->nin); adds the result to out. */
void cg_ref_apply(const struct cg_node *nd, const struct cz *const *ins,
		  struct cz *out);

/* Run the reference one tick: fed[i] is the batch fed to input
 * s->inputs[i] this tick (NULL: nothing); afterwards every node's val is
 * its delta of the tick and an output's st its integral. */
void cg_ref_step(struct cg_spec *s, struct sc_batch *const *fed);

/* --- random deltas -------------------------------------------------------- */

/* A random delta for input node `id` given its integral so far (the
 * reference's st): inserts, retractions of present rows (whole or in
 * part), overwrites (retract a row, insert it with one column changed),
 * now and then a retraction of an absent row (a negative weight). Returns
 * a new batch the caller owns (maybe empty), or NULL when the coin says
 * "feed nothing". */
struct sc_batch *cg_gen_delta(const struct cg_spec *s, int id,
			      struct sc_rng *r);

/* --- messages ------------------------------------------------------------- */

/* The op's name ("join"; "?" out of range), a static string. */
const char *cg_op_name(enum cg_op op);

/* Print the spec to f, node by node, for a failure report. */
void cg_fprint(FILE *f, const struct cg_spec *s);

#endif /* SC_TEST_CIRCUIT_GEN_H */

/*
 * waterline.h - event-time lateness, waterlines and the state they free.
 *
 * A live stream never ends, so an operator that keeps its input's integral
 * (a join, a window's aggregate, distinct, top-k) grows for ever unless it
 * knows that some of that state can no longer change any output. Lateness
 * is how the user says so; waterlines carry the promise through the graph;
 * cleanup acts on it.
 *
 * Lateness. sc_graph_lateness(g, input, col, L, flags) declares that the
 * rows of input node `input` arrive with col >= max_seen - L, max_seen the
 * largest col fed so far (any weight). The input's WATERLINE is then
 *
 *     W = max_seen - L   (saturating; nothing known before the first row)
 *
 * A SUBMISSION (one sc_circuit_feed in the single circuit, one
 * sc_runtime_submit in the runtime) is checked against W as it stood
 * BEFORE it: a row with col < W is late. By default the whole submission
 * is refused, nothing applied, with SC_ELATE and a message that says how
 * many rows were late and the first one (its value and W). With
 * SC_LATE_ADMIT, late rows are admitted and counted (sc_circuit_late);
 * exactness is then not promised for them. Then W advances with the
 * submission's rows.
 *
 * Waterlines. A waterline is a pair (column, value) on a stream: "every
 * future DELTA row of this stream has column >= value". The pairs a
 * stream carries after step s bound the deltas of steps s + 1, s + 2, ...
 * (not those of step s itself: an input's waterline after a step includes
 * the rows of that step). Which columns carry one is static (a function of
 * the graph: sc_graph_waterline_cols); the values are computed after every
 * step. The transfer, per node kind:
 *
 *   input       its declared columns
 *   filter, distinct, negate, output, feedback
 *               every column passes
 *   index_by    columns follow their permutation
 *   map, flat_map
 *               none, but those declared monotone (sc_graph_monotone:
 *               out_col = f(in_col) with f non-decreasing)
 *   window      (window.h) the input's columns pass, and the start column
 *               gets the smallest window start s with s + width > W(time)
 *   plus, minus per column the min over the inputs (none if an input
 *               lacks it)
 *   join, antijoin
 *               a key column with a waterline on both sides gets the min
 *               of the two; the other columns none. A time-bounded join
 *               (sc_graph_join_within: a.lo <= b.t <= a.hi) also gives
 *               a.hi and b.t the min of W_b(t) and W_a(lo)
 *   aggregate, topk
 *               the group key's columns pass; values none
 *   integrate, differentiate, delay
 *               none (they re-emit or re-order old rows)
 *
 * Values are int64_t. A u64 column's value is read as min(v, INT64_MAX),
 * which keeps every bound sound (a clamp is monotone). INT64_MIN means
 * "nothing known yet" (before any row).
 *
 * Cleanup. After a step, each stateful kernel may drop the state that no
 * future row respecting its inputs' waterlines can reach; the integral of
 * every output is unchanged (only internal state goes):
 *
 *   aggregate, topk   groups whose key column < the input's waterline on
 *                     it (their last output was emitted by the step that
 *                     received their last row)
 *   distinct          rows with a column < the input's waterline on it
 *   join              with a waterline on a key column: a-rows whose key
 *                     < W_b, b-rows whose key < W_a (no future delta of
 *                     the other side can match them); time-bounded: also
 *                     a-rows with a.hi < W_b(t), b-rows with b.t < W_a(lo)
 *   antijoin          the same as join on the key
 *
 * It is spread over steps: each kernel sweeps a bounded number of rows per
 * step (about twice the rows it absorbed, at least the circuit's work_min),
 * rewriting one trace run or one stretch of a hash table at a time, so a
 * step never pays a stop-the-world pass. Dead state is therefore dropped
 * some steps after it died, but its amount stays within a constant factor
 * of the live state. sc_circuit_set_cleanup(c, false) turns it off (for the
 * exactness comparison); sc_circuit_node_state and sc_circuit_state report
 * the rows and bytes kept.
 *
 * Why exact. A kernel's state is only ever read to combine with a future
 * delta row: a join probes the other side's integral with the delta's key,
 * an aggregate reads the groups of the delta's keys. A delta row respects
 * the waterlines, so it never reads a key below them, and dropping those
 * rows changes no output. Rows of one key may sit in several runs of a
 * trace (a row and its retraction); a sweep may drop one before the other,
 * which leaves a wrong weight on a key that nothing reads again.
 *
 * Parts (units/). sc_graph_cut lists, for each boundary stream, the
 * columns it carries (struct sc_cut, in_wl and out_wl); a part's circuit
 * takes the values of its boundary inputs from sc_circuit_set_waterline
 * (the runtime forwards its producers' sc_circuit_waterline), and its
 * input nodes' from the rows fed.
 *
 * Threads: as graph.h and circuit.h. struct sc_late is caller storage used
 * by one thread at a time.
 */
#ifndef SC_WATERLINE_H
#define SC_WATERLINE_H

#ifdef __cplusplus
extern "C" {
#endif

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "operators/batch.h"
#include "operators/error.h"

struct sc_graph;
struct sc_circuit;

/* sc_graph_lateness flag: admit late rows (counted) instead of refusing
 * their submission. */
#define SC_LATE_ADMIT 1u

/* "Nothing known": the value of a waterline before any row. */
#define SC_WATERLINE_NONE INT64_MIN

/* --- declaring ------------------------------------------------------------ */

/*
 * sc_graph_lateness - declare that column `col` (i64 or u64) of input node
 * `input` arrives at most `lateness` behind the largest value fed so far.
 * flags: 0 or SC_LATE_ADMIT. One declaration per (input, col); several
 * columns of one input may be declared (a row is late if it is late on
 * any). Returns
 *   0             declared
 *   SC_EINVAL     g NULL, lateness < 0, unknown flags, or (input, col)
 *                 already declared
 *   SC_ENOENT     no such node
 *   SC_ESCHEMA    `input` is not an input node, or col is out of range
 *   SC_ETYPE      the column is neither i64 nor u64
 *   SC_EBUSY      the graph is frozen (graph.h)
 *   SC_ENOMEM
 */
int sc_graph_lateness(struct sc_graph *g, int input, uint32_t col,
		      int64_t lateness, unsigned flags);

/* A monotone map of one value: must be non-decreasing (a <= b implies
 * f(a) <= f(b)) and pure. */
typedef int64_t (*sc_monotone_fn)(void *ctx, int64_t v);

/*
 * sc_graph_monotone - declare that, in every row map or flat_map node
 * `node` emits, column out_col = fn(ctx, in_col of the row it came from),
 * fn non-decreasing; so out_col gets the waterline fn(W(in_col)). Both
 * columns i64 or u64. One declaration per out_col. Returns 0, SC_EINVAL
 * (NULL, fn NULL, out_col already declared, node neither map nor
 * flat_map), SC_ENOENT, SC_ESCHEMA (a column out of range), SC_ETYPE,
 * SC_EBUSY, SC_ENOMEM. The graph trusts the declaration: a wrong one
 * makes cleanup drop live state.
 */
int sc_graph_monotone(struct sc_graph *g, int node, uint32_t out_col,
		      uint32_t in_col, sc_monotone_fn fn, void *ctx);

/* sc_graph_monotone_offset - as sc_graph_monotone with out_col = in_col +
 * offset (saturating); offset 0 declares a column the map copies. */
int sc_graph_monotone_offset(struct sc_graph *g, int node, uint32_t out_col,
			     uint32_t in_col, int64_t offset);

/* One lateness declaration, as the graph holds it. */
struct sc_lateness {
	int input;	  /* the input node */
	uint32_t col;	  /* its time column */
	int64_t lateness; /* L >= 0 */
	unsigned flags;	  /* SC_LATE_ADMIT or 0 */
	bool is_signed;	  /* i64 (else u64) */
};

/* sc_graph_lateness_count - how many declarations g holds (0 for NULL). */
size_t sc_graph_lateness_count(const struct sc_graph *g);

/* sc_graph_lateness_get - declaration i (in the order declared). Returns 0,
 * SC_EINVAL, SC_ENOENT (i out of range). */
int sc_graph_lateness_get(const struct sc_graph *g, size_t i,
			  struct sc_lateness *out);

/*
 * sc_graph_waterline_cols - the columns of stream `node` that carry a
 * waterline (bit i: column i), computed from the whole graph. Returns 0 and
 * *mask, SC_EINVAL, SC_ENOENT, SC_ESTATE (an unbound feedback), SC_ECYCLE,
 * SC_ENOMEM.
 */
int sc_graph_waterline_cols(const struct sc_graph *g, int node, uint32_t *mask);

/* --- checking a submission (the runtime's host side, and circuit.c) ----- */

/*
 * One declaration's waterline and counters, in caller storage. Fields are
 * read through the calls below.
 */
struct sc_late {
	struct sc_lateness decl; /* what was declared */
	bool seen;		 /* a row was fed (max is valid) */
	int64_t max;		 /* the largest value fed (clamped) */
	int64_t raised;		 /* a waterline raised from outside */
	uint64_t admitted;	 /* late rows admitted (SC_LATE_ADMIT) */
	uint64_t refused;	 /* late rows whose submission was refused */
};

/* sc_late_init - *l for declaration *decl, nothing seen yet. */
void sc_late_init(struct sc_late *l, const struct sc_lateness *decl);

/* sc_late_waterline - W now (SC_WATERLINE_NONE before any row). */
int64_t sc_late_waterline(const struct sc_late *l);

/*
 * sc_late_count - the late rows of b against W now (b is not applied and W
 * does not move): their number, and in *first (if not NULL) the index of
 * the first. b's width must cover the column (SC_ESCHEMA is not checked
 * here: the caller has). O(rows).
 */
size_t sc_late_count(const struct sc_late *l, const struct sc_batch *b,
		     size_t *first);

/*
 * sc_late_refuse - count `nlate` refused rows and return SC_ELATE with the
 * message "<who>: N late row(s) of M on column C of '<name>': the first,
 * row F, has C = V below the waterline W (lateness L)". `name` may be NULL;
 * `who` NULL names sc_late_refuse. SC_EINVAL when l or b is NULL or `first` is
 * not a row of b. (Of the tracker's other calls, a NULL l or b does nothing and
 * counts 0 rows; sc_late_submit returns SC_EINVAL.)
 */
int sc_late_refuse(struct sc_late *l, const struct sc_batch *b, size_t nlate,
		   size_t first, const char *who, const char *name);

/* sc_late_advance - b was applied: W advances with its rows, and `nlate`
 * of them (sc_late_count) are counted as admitted late. */
void sc_late_advance(struct sc_late *l, const struct sc_batch *b, size_t nlate);

/* sc_late_raise - raise W to at least `value` (a heartbeat: time moved on
 * with no row). Lowering is ignored. */
void sc_late_raise(struct sc_late *l, int64_t value);

/*
 * sc_late_submit - the whole check for one declaration: count, then refuse
 * (SC_ELATE, nothing moves) or advance. Returns 0 or SC_ELATE. For a
 * submission with several declarations, count them all first (refusing if
 * any refuses) and advance them all after.
 */
int sc_late_submit(struct sc_late *l, const struct sc_batch *b, const char *who,
		   const char *name);

/* --- in a circuit ----------------------------------------------------------
 * The prototypes of the circuit's side are in circuit.h:
 * sc_circuit_set_waterline, sc_circuit_waterline, sc_circuit_late,
 * sc_circuit_set_cleanup, sc_circuit_state. */

#ifdef __cplusplus
}
#endif

#endif /* SC_WATERLINE_H */

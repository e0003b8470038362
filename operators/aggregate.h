/*
 * aggregate.h - incremental grouped aggregates: count, sum, avg, min, max.
 *
 * An aggregate groups its input rows by their first k columns and emits,
 * for every group whose integrated input is non-empty (has a row of
 * non-zero integrated weight) and whose value an i64 can hold (see
 * "Values outside int64"), one output row (key[0..k), value) of weight 1.
 * When a step changes a group's value, it emits -(key, old) and
 * +(key, new); a group that appears emits only the +, one that empties only
 * the -. So the integral of the output is always the aggregate of the
 * integral of the input, however the input was cut into steps.
 *
 * The values, with w the integrated weight of a row and v its value column:
 *
 *   COUNT  sum of w over the group (i64). `col` is ignored.
 *   SUM    sum of w * v. Over an i64 or u64 column: i64 (see "Values
 *          outside int64" below). Over an f64 column:
 *          f64, kept EXACTLY by an sc_xsum (xsum.h: a row of weight w adds
 *          w * v with no rounding) and rounded once when read, so adding
 *          and retracting values never drifts.
 *   AVG    f64: the exact sum divided by the count, rounded once
 *          (sc_xsum_mean). i64 and u64 values enter the exact sum exactly
 *          (as two doubles, high and low 32 bits). A group whose weights
 *          sum to 0 (possible only with negative weights) reads NaN.
 *   MIN    the smallest v among the group's rows of non-zero integrated
 *   MAX    weight (the largest for MAX), any column type, in the order of
 *          the column's encoding (schema.h). SYMBOLS ORDER BY ID, NOT
 *          ALPHABETICALLY: min and max over a symbol column are the
 *          earliest and latest interned, not the first and last in
 *          alphabetical order.
 *
 * Edge cases, each pinned by a test in tests/operators/test_aggregate.c:
 *   - A group is live while one of its rows has a non-zero integrated
 *     weight, even if the weights sum to 0: then COUNT reads (key, 0),
 *     AVG reads NaN (0 / 0), and SUM reads the weighted sum of the rows.
 *   - SUM and AVG over f64 follow the exact sum's weighted counts of NaN,
 *     +inf and -inf (xsum.h): a NaN row of weight +1 and another of -1
 *     cancel, and a row of +inf with a negative weight counts as -inf.
 *     MIN and MAX look at live rows instead, in the encoding's order where
 *     NaN is above +inf: MAX of that same group is NaN.
 *
 * Values outside int64. A group's count and integer sum are kept exactly in
 * wider integers (128 and 192 bits: a group holds fewer than 2^64 rows, each
 * of int64 weight, so neither can overflow), so that no step fails because
 * a PARTIAL integral passes int64: how a schedule groups deltas into steps
 * (+INT64_MAX, then +1, then -1, in one step or in three) never matters.
 * The rule: a live group whose COUNT, or integer SUM, is outside int64 has
 * NO output row (its row is retracted when the value leaves int64, and
 * emitted again when it comes back), since an i64 column cannot encode it.
 * So the integral of the output is still a function of the integral of the
 * input alone. That such a value is an error is reported by
 * sc_aggregate_check, a read of the current integral: SC_EOVERFLOW while
 * any live group's value is outside int64, 0 once none is; read after the
 * input has settled, it names exactly the settled values that do not fit.
 * AVG is an f64 and always has a row: with a count outside int64 it reads
 * the exact sum rounded divided by the count rounded. A row's integrated
 * weight outside int64 fails no step either: COUNT/SUM/AVG hold it
 * exactly (rowhash_int.h), and MIN/MAX read it only for its sign (live
 * or not) from a trace that keeps it exactly (trace.h), their output rows
 * weighing 1 (see Errors).
 *
 * State. COUNT, SUM and AVG keep only what a delta row asks for, in hash
 * tables updated once per delta row: the integrated weight of every row of
 * non-zero weight (operators/rowhash_int.h: row -> weight, records in
 * place), which says exactly when a row becomes live or dead, and per key
 * the group's live-row count, weight count and sum (an i64 column's in 192
 * bits, an f64's as an sc_xsum; groups_int.h). A step of d rows costs O(d)
 * expected, one row-table probe per row (prefetched a few rows ahead) and
 * one group probe per group of the delta, never O(rows in a group) nor
 * O(log N), and there is no merge work (sc_aggregate_work does nothing for
 * them, sc_aggregate_pending is 0). Bytes per row of state: the row's
 * record, (ncols + 1) * 8, over a load of 0.25..0.5, plus the group's
 * entry shared by its rows.
 *
 * Nonnegative inputs (SC_AGG_NONNEGATIVE, COUNT/SUM/AVG only: a flag of
 * sc_aggregate_create_flags and sc_graph_aggregate_flags). The row
 * table above is what makes the edge cases exact for ANY Z-set, and it
 * grows with the distinct rows of the input's integral, which on an
 * endless stream (Nexmark q4's AVG over (category, closing price)) no
 * waterline can shrink. A user who knows more declares it by the flag:
 * every row's integrated weight in this aggregate's input is never
 * negative once the input has settled (the input is a set, or a Z-set of
 * multiplicities: a projection of a distinct or of another aggregate's
 * output, say). Then a group is live exactly when its total weight is
 * > 0, so the aggregate keeps per group only its total weight and exact
 * sum (groups_int.h), no row at all: state O(groups), a step of d rows
 * O(d) with no row probe. Contract:
 *   - Where the integral has no negative row after each step, every
 *     output delta equals the row-keeping aggregate's, step by step; where
 *     it has none once settled, the settled output integrals are equal
 *     (the values are sums either way, so only liveness can differ, and
 *     only while a row is negative).
 *   - Whatever the input, the output's integral is a function of the
 *     input's integral alone (the state is (total weight, sum) per group,
 *     a sum over the integral), so every placement and schedule settles
 *     where the single circuit does, even where a PARTIAL integral has a
 *     negative row (a retraction that arrived before its insertion): that
 *     is no step error.
 *   - A group has an output row while its total weight is > 0; one whose
 *     total weight is < 0, or 0 with a sum that is not 0, has none, and
 *     is a breach of the declaration that sc_aggregate_check reports
 *     (SC_ESCHEMA, before SC_EOVERFLOW): read it once the input has
 *     settled, as the overflow report, and it names exactly the settled
 *     breaches. A breach whose rows cancel in both the weight and the sum
 *     (+1 of value v and -1 of another row of value v) leaves no trace in
 *     (count, sum) and is not detected: those groups then have no output
 *     row, where the row-keeping aggregate would emit COUNT 0 / AVG NaN.
 *   - Cleanup (waterline.h) drops groups below the key's waterline as
 *     before; a breach swept so stays counted by sc_aggregate_check.
 *   - MIN and MAX refuse the flag (SC_EINVAL: they keep a trace anyway).
 *
 * MIN and MAX need order, so they keep the integral of their input in a
 * trace (trace.h) indexed by (key, value, the other columns): a group's
 * rows are one range per run, sorted by value, and min and max are the
 * first and last row of the range whose weight summed over the runs is
 * non-zero; a retraction simply cancels a row, so the next value shows
 * through, exactly. A step of d rows costs O(d log N): a bounded walk of
 * each touched group's range per run from its ends (operators/probe_int.h:
 * galloping in short runs, a lockstep search through a cached fence index
 * in long ones), skipping cancelled rows, and the trace's merge work is
 * spread by sc_aggregate_work (about 2 log2 N units per inserted row; see
 * trace.h).
 *
 * Errors: a failing step leaves the state as it was and writes no output
 * (MIN/MAX compute everything into scratch before they change anything;
 * COUNT/SUM/AVG update the row table as they read it and, on failure,
 * apply the rows done so far again with the opposite weight, which cannot
 * fail): a delta of the wrong width is SC_ESCHEMA. An integrated row
 * weight beyond int64 is no step error for any kind, since between steps
 * it may be a partial integral: COUNT/SUM/AVG hold it exactly
 * (rowhash_int.h), as their NaN and infinity counts (xsum.h); MIN/MAX
 * ask the trace only whether the row is live (probe_int.h,
 * sc__probe_next_live). An i64 sum or count beyond int64 is not a step
 * error (above).
 * Single-threaded, like everything in operators/.
 */
#ifndef SC_AGGREGATE_H
#define SC_AGGREGATE_H

#ifdef __cplusplus
extern "C" {
#endif

#include <stddef.h>
#include <stdint.h>

#include "operators/batch.h"
#include "operators/error.h"
#include "operators/schema.h"

enum sc_agg_kind {
	SC_AGG_COUNT = 0,
	SC_AGG_SUM = 1,
	SC_AGG_AVG = 2,
	SC_AGG_MIN = 3,
	SC_AGG_MAX = 4
};

struct sc_aggregate_spec {
	uint32_t ncols;	       /* input row width, 1..SC_SCHEMA_MAX_COLS */
	uint32_t k;	       /* group by the first k columns, k <= ncols
				* (k == 0: one group of everything) */
	enum sc_agg_kind kind; /* what to compute */
	uint32_t col;	       /* value column (< ncols); ignored by COUNT */
	enum sc_type col_type; /* its type; SUM takes i64, u64, f64; AVG
				* the same; MIN/MAX any; ignored by COUNT */
};

/* A flag of sc_aggregate_create_flags (and sc_graph_aggregate_flags): the
 * user declares that no row of the aggregate's input has a negative
 * integrated weight once settled, so COUNT/SUM/AVG keep only (total
 * weight, exact sum) per group ("Nonnegative inputs"). The flags are an
 * argument, not a spec field, so every spec written as a positional
 * initializer stays complete. */
#define SC_AGG_NONNEGATIVE 0x1u

struct sc_aggregate;

/*
 * sc_aggregate_create - an aggregate as `spec` says (copied), empty.
 * Returns 0 and *out; SC_EINVAL (NULL, or an unknown kind); SC_ESCHEMA
 * (ncols, k or col out of range); SC_ETYPE (an unknown col_type, or SUM /
 * AVG over a bool or symbol column); SC_ENOMEM.
 */
int sc_aggregate_create(const struct sc_aggregate_spec *spec,
			struct sc_aggregate **out);

/*
 * sc_aggregate_create_flags - sc_aggregate_create with `flags` (0, or
 * SC_AGG_NONNEGATIVE for COUNT/SUM/AVG: "Nonnegative inputs"). Returns as
 * sc_aggregate_create, and SC_EINVAL for an unknown flag or
 * SC_AGG_NONNEGATIVE on MIN or MAX.
 */
int sc_aggregate_create_flags(const struct sc_aggregate_spec *spec,
			      uint32_t flags, struct sc_aggregate **out);

/*
 * sc_aggregate_out_type - the type of the output's value column (the last
 * of its k + 1 columns): i64 for COUNT and integer SUM, f64 for f64 SUM and
 * for AVG, col_type for MIN and MAX. Returns 0 and *out, or SC_EINVAL.
 */
int sc_aggregate_out_type(const struct sc_aggregate *agg, enum sc_type *out);

/* sc_aggregate_out_ncols - k + 1. */
uint32_t sc_aggregate_out_ncols(const struct sc_aggregate *agg);

/*
 * sc_aggregate_step - one tick: `delta` (spec.ncols columns, borrowed;
 * NULL means empty) is added to the integral and the output delta (a new
 * batch of k + 1 columns, one reference for the caller) is written to
 * *out. Returns 0, SC_EINVAL (agg or out NULL), SC_ESCHEMA (wrong width),
 * SC_ENOMEM (no row weight, count or sum outside int64 fails a step, of
 * any kind: a count or sum only loses its row, above); on failure
 * nothing changed and *out is unwritten.
 */
int sc_aggregate_step(struct sc_aggregate *agg, const struct sc_batch *delta,
		      struct sc_batch **out);

/*
 * sc_aggregate_work - at most `budget` units of merge work on the trace
 * (MIN/MAX; COUNT/SUM/AVG have none and return 0). Returns 0, SC_EINVAL,
 * SC_ENOMEM, SC_EOVERFLOW (as sc_trace_work).
 */
int sc_aggregate_work(struct sc_aggregate *agg, size_t budget);

/*
 * sc_aggregate_check - are all the live groups' values encodable, and does
 * the input keep its SC_AGG_NONNEGATIVE declaration? Returns
 *   0             every live group has its output row;
 *   SC_ESCHEMA    (SC_AGG_NONNEGATIVE only) some group's total weight is
 *                 negative, or 0 with a non-zero sum, now: the input holds
 *                 a row of negative integrated weight (the message says
 *                 how many groups); reported before SC_EOVERFLOW;
 *   SC_EOVERFLOW  some live group's COUNT or integer SUM is outside int64
 *                 now, so it has no row (the message says how many);
 *   SC_EINVAL     agg is NULL.
 * A function of the integral of the input alone, never of how it was
 * stepped; call it once the input has settled.
 */
int sc_aggregate_check(const struct sc_aggregate *agg);

/* sc_aggregate_pending - merge work outstanding (0: settled; always 0 for
 * COUNT/SUM/AVG). */
size_t sc_aggregate_pending(const struct sc_aggregate *agg);

/* sc_aggregate_groups - live groups of COUNT/SUM/AVG (0 for MIN/MAX, which
 * keep no group table; under SC_AGG_NONNEGATIVE, groups whose state is not
 * all zero); _rows - rows held (COUNT/SUM/AVG: rows of non-zero
 * integrated weight, 0 under SC_AGG_NONNEGATIVE; MIN/MAX: the trace's
 * rows, over its runs); _bytes -
 * bytes of the state (hash tables, or trace and fences). For benchmarks. */
size_t sc_aggregate_groups(const struct sc_aggregate *agg);
size_t sc_aggregate_rows(const struct sc_aggregate *agg);
size_t sc_aggregate_bytes(const struct sc_aggregate *agg);

/* sc_aggregate_destroy - free. NULL is allowed. */
void sc_aggregate_destroy(struct sc_aggregate *agg);

#ifdef __cplusplus
}
#endif

#endif /* SC_AGGREGATE_H */

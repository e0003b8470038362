/*
 * topk.h - incremental top-k per group, ties kept, exact under retraction.
 *
 * What it computes. The input's rows are grouped by their first `key`
 * columns and ranked, inside each group, by an order on `norder` other
 * columns (each ascending or descending; the order of the column's encoding,
 * schema.h, so SYMBOLS RANK BY ID). A row is PRESENT with multiplicity w
 * when its integrated weight w is positive; rows whose integrated weight is
 * zero or negative are absent (as distinct.h reads weights). The rank of a
 * present row is
 *
 *     1 + (the summed multiplicity of the group's present rows strictly
 *          ahead of it in the order)
 *
 * so rows equal on every order column tie and share a rank, and the next
 * rank skips (SQL's RANK()). The output is every present row whose rank is
 * at most `limit`, with its multiplicity: the input's schema, the input's
 * rows unchanged. A group may therefore show more than `limit` rows (all
 * the rows tied at the last rank), and a row of multiplicity 3 ranks like
 * three rows.
 *
 * Incremental: the integral of the output is always the top-k of the
 * integral of the input. A step recomputes only the groups its delta
 * touches, each from its integral before and after the step, and emits the
 * difference: a top row retracted leaves the output and the next row of
 * its group (if any) enters in the same step.
 *
 * The Nexmark shapes, for instance:
 *
 *   q19  per auction the 10 highest prices:  key = {auction}, order =
 *        {price desc}, limit 10
 *   q18  per (bidder, auction) the latest bid: key = {bidder, auction},
 *        order = {date_time desc}, limit 1
 *   q9   per auction the highest price, earliest first: order = {price
 *        desc, date_time asc}, limit 1
 *
 * (index_by the group columns to the front first: the group is the first
 * `key` columns, as for aggregate.h).
 *
 * State. The integral of the input in a trace (trace.h) whose rows are
 * laid out (key, order columns, the rest), with every descending order
 * column stored complemented (~v): the encoding orders words as unsigned
 * integers, so complementing reverses the order of any type, and a
 * group's rows are then one range per run sorted best first. A group's
 * top is the front of that range: the probe (probe_int.h) walks it from
 * the front, summing weights over the runs and skipping rows that cancel,
 * and stops at the first tie class whose rank passes `limit`. The output
 * rows are mapped back (un-permuted, un-complemented).
 *
 * Cost of a step of d rows touching g groups: the delta re-laid out and
 * sorted (O(d log d); skipped when the layout is the input's own), then per
 * touched group two walks of its front (before and after the step), each
 * O(limit + ties at the last rank + the cancelled or non-positive rows
 * passed on the way) rows, plus one seek per run (galloping, O(log N)).
 * Nothing per group is kept besides the trace: the output's integral is
 * not stored, it is re-read from the input's. The trace's merge work is
 * spread by sc_topk_work as for every operator (trace.h). In a circuit the
 * trace holds the symbols of its rows (symbol.h), complemented columns
 * read back as the ids they store.
 *
 * Errors: the step computes everything before it changes anything, so a
 * failing step leaves the state as it was and writes no output: a delta of
 * the wrong width is SC_ESCHEMA. A row whose integrated weight is outside
 * int64 is no error (which partial integrals a step sees
 * is up to how a schedule grouped deltas into steps): the trace holds it
 * exactly, and the output's integral is always the top of the input's
 * integral with each row's weight clamped into int64 (the walk's clamp,
 * probe_int.h), so it is exact whenever the row's weight fits, as settled
 * values do; ranking counts such a row as INT64_MAX copies, which only a
 * limit above INT64_MAX tells apart. Single-threaded, like everything in
 * operators/.
 */
#ifndef SC_TOPK_H
#define SC_TOPK_H

#ifdef __cplusplus
extern "C" {
#endif

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "operators/batch.h"
#include "operators/error.h"
#include "operators/schema.h"

struct sc_topk_spec {
	uint32_t ncols;			    /* input row width, 1..MAX_COLS */
	uint32_t key;			    /* group by the first `key`
					     * columns (0: one group) */
	uint32_t norder;		    /* order columns, >= 1 */
	uint32_t order[SC_SCHEMA_MAX_COLS]; /* their indices, most
					     * significant first: distinct,
					     * each in [key, ncols) */
	bool desc[SC_SCHEMA_MAX_COLS];	    /* order[i] is descending */
	uint64_t limit;			    /* keep ranks 1..limit, >= 1 */
};

struct sc_topk;

/*
 * sc_topk_spec_check - is `spec` well formed? Returns 0, or:
 *   SC_EINVAL   spec NULL, or limit 0
 *   SC_ESCHEMA  ncols out of range, key >= ncols, norder 0 or above
 *               ncols - key, an order column repeated, inside the key or
 *               past ncols
 * with a message naming `fn`. (graph.c checks with it too.)
 */
int sc_topk_spec_check(const struct sc_topk_spec *spec, const char *fn);

/*
 * sc_topk_create - a top-k as `spec` says (copied), empty. Returns 0 and
 * *out; the errors of sc_topk_spec_check; SC_EINVAL (out NULL);
 * SC_ENOMEM.
 */
int sc_topk_create(const struct sc_topk_spec *spec, struct sc_topk **out);

/*
 * sc_topk_step - one tick: `delta` (spec.ncols columns, borrowed; NULL
 * means empty) is added to the integral and the change of the top rows (a
 * new batch of spec.ncols columns, one reference for the caller) is written
 * to *out. Returns:
 *   0            *out written
 *   SC_EINVAL    topk or out NULL
 *   SC_ESCHEMA   the delta's width is not spec.ncols
 *   SC_ENOMEM
 * On failure nothing changed and *out is unwritten.
 */
int sc_topk_step(struct sc_topk *tk, const struct sc_batch *delta,
		 struct sc_batch **out);

/*
 * sc_topk_work - at most `budget` units of merge work on the trace.
 * Returns 0, SC_EINVAL, SC_ENOMEM, SC_EOVERFLOW (as sc_trace_work).
 */
int sc_topk_work(struct sc_topk *tk, size_t budget);

/* sc_topk_pending - merge work outstanding (0: settled). */
size_t sc_topk_pending(const struct sc_topk *tk);

/* sc_topk_rows / sc_topk_bytes - rows and bytes the trace holds (for
 * benchmarks and tests of memory). 0 for NULL. */
size_t sc_topk_rows(const struct sc_topk *tk);
size_t sc_topk_bytes(const struct sc_topk *tk);

/* sc_topk_destroy - free. NULL is allowed. */
void sc_topk_destroy(struct sc_topk *tk);

#ifdef __cplusplus
}
#endif

#endif /* SC_TOPK_H */

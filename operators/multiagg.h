/*
 * multiagg.h - several aggregates of one group in one operator: counts,
 * filtered counts, distinct counts, sums, averages, minima and maxima,
 * one output row per group.
 *
 * What it computes. The input's rows are grouped by their first k
 * columns (index_by the group columns to the front first, as for
 * aggregate.h). For every group whose total weight (the sum of its rows'
 * integrated weights) is positive, the output holds one row of weight 1:
 *
 *     (key[0..k), term 0's value, term 1's value, ...)
 *
 * with w the integrated weight of a row and v its `col` word:
 *
 *   COUNT           the sum of w over the group's rows that pass the
 *                   term's filter (i64). SQL's COUNT(*) [FILTER (WHERE f)].
 *   COUNT_DISTINCT  how many distinct v have a positive summed weight
 *                   among the group's rows that pass the filter (i64):
 *                   COUNT(DISTINCT col) [FILTER (WHERE f)], set semantics
 *                   as distinct.h reads weights.
 *   SUM             the sum of w * v over an i64 or u64 column (i64).
 *   AVG             that sum divided by the group's total weight (f64):
 *                   both rounded to doubles, then divided, so it is
 *                   correctly rounded while both are below 2^53 (SQLite
 *                   computes AVG of integers the same way).
 *   MIN, MAX        the smallest (largest) v with a positive summed weight
 *                   in the group, any column type, in the order of the
 *                   column's encoding (schema.h: SYMBOLS ORDER BY ID).
 *
 * A filter is a bool column of the input, a map computing the predicate
 * into it ahead of the operator: a row passes where it is true (the
 * kernel reads "the word is not 0", which is a bool's true; in a graph,
 * sc_graph_multiagg refuses a filter column of another type, since an
 * encoded i64 0 is not the word 0). SC_MAGG_ALL passes every row. Only COUNT
 * and COUNT_DISTINCT take a filter, since their value over no row is 0; SQL's
 * SUM, AVG, MIN and MAX of no row are NULL, which an i64 column cannot say.
 *
 * When a step changes a group's row it emits -(old) and +(new); a group
 * that appears emits only the +, one whose total weight stops being
 * positive only the -. So the integral of the output is always the
 * function above of the integral of the input, however the input was cut
 * into steps: every placement and schedule settles where the single
 * circuit does. A live group whose SUM leaves int64 has no output row
 * until it comes back (as aggregate.h's "Values outside int64"), and
 * sc_multiagg_check reports it. (A live group always has a MIN and a MAX:
 * its weights sum to a positive total, so some value's do too.)
 *
 * Why one operator. Nexmark's q15 asks per day for 12 counts, 6 of them
 * distinct counts under 3 filters. As separate aggregates joined on the
 * group key that is 12 kernels, each with its own table of the groups,
 * and 11 joins that each keep both sides. Here a delta row costs one probe
 * of the group table, one probe of the distinct table per COUNT_DISTINCT
 * term it passes, and one trace insertion per MIN/MAX term.
 *
 * State, in three parts:
 *   - the group table (groups_int.h: grows in slices, entries never
 *     copied) with, per group, its total weight and each COUNT's in 128
 *     bits, each SUM's in 192 (so no partial integral overflows, as in
 *     aggregate.h), each COUNT_DISTINCT's number of values, each MIN/MAX's
 *     current value;
 *   - one row table (rowhash_int.h) shared by every COUNT_DISTINCT term,
 *     from (key, term, v) to the summed weight of the group's rows of that
 *     v passing the term's filter: a value is counted while it is
 *     positive;
 *   - per MIN/MAX term, a trace (trace.h) of the input's whole rows,
 *     their columns permuted to (key, v, the rest; v stays in the key
 *     where it is a key column), whose group range is read from its ends
 *     (probe_int.h): the MIN (MAX) is the first (last) v whose rows' weights
 *     sum to a positive total, read exactly. No two rows become one, so a
 *     step never adds two rows' weights (which may leave int64) before the
 *     trace holds them.
 * A group's entry goes once its total weight, every count and sum is 0,
 * no distinct row and no MIN/MAX value is left. Cleanup (waterline.h)
 * drops the groups, distinct rows and trace rows whose key is below the
 * key's waterline, a bounded amount per step. In a circuit the group
 * entries hold their keys' symbols, the distinct rows theirs, the traces
 * their rows' (symbol.h).
 *
 * Cost of a step of d rows: O(d) expected for the counts and sums (one
 * group probe per row, prefetched), plus one row-table probe per row and
 * COUNT_DISTINCT term it passes, plus O(d log N) per MIN/MAX term and,
 * per group the step touches, the trace rows its walk reads: those of its
 * extreme v and of the v of no positive weight it passes over. The traces'
 * merge work is spread by sc_multiagg_work.
 *
 * Errors: a failing step leaves the state as it was and writes no output
 * (the room it needs is reserved before anything changes; a distinct row
 * whose weight leaves int64 widens the table, which may fail with
 * SC_ENOMEM, and then the rows applied are applied again negated).
 * Single-threaded, like everything in operators/.
 */
#ifndef SC_MULTIAGG_H
#define SC_MULTIAGG_H

#ifdef __cplusplus
extern "C" {
#endif

#include <stddef.h>
#include <stdint.h>

#include "operators/batch.h"
#include "operators/error.h"
#include "operators/schema.h"

enum sc_magg_kind {
	SC_MAGG_COUNT = 0,
	SC_MAGG_COUNT_DISTINCT = 1,
	SC_MAGG_SUM = 2,
	SC_MAGG_AVG = 3,
	SC_MAGG_MIN = 4,
	SC_MAGG_MAX = 5
};

/* A term's filter that passes every row. */
#define SC_MAGG_ALL UINT32_MAX

/* Terms an operator computes at most (the output is k + nterms columns,
 * at most SC_SCHEMA_MAX_COLS). */
#define SC_MAGG_MAX_TERMS 24

struct sc_magg_term {
	enum sc_magg_kind kind;
	uint32_t col;	       /* the value column (< ncols); ignored by
				* COUNT */
	enum sc_type col_type; /* its type: SUM and AVG take i64 and u64,
				* the others any; ignored by COUNT */
	uint32_t filter;       /* a bool column (< ncols) whose true
				* passes a row, or SC_MAGG_ALL; COUNT and
				* COUNT_DISTINCT only */
};

struct sc_multiagg_spec {
	uint32_t ncols;	 /* input row width, 1..SC_SCHEMA_MAX_COLS */
	uint32_t k;	 /* group by the first k columns, k <= ncols */
	uint32_t nterms; /* 1..SC_MAGG_MAX_TERMS, k + nterms <=
			  * SC_SCHEMA_MAX_COLS */
	struct sc_magg_term terms[SC_MAGG_MAX_TERMS];
};

struct sc_multiagg;

/*
 * sc_multiagg_spec_check - whether `spec` describes a multi-aggregate;
 * `who` names the caller in the message. Returns
 *   0            it does
 *   SC_EINVAL    spec is NULL, or a term's kind is unknown, or a filter
 *                on a term other than COUNT or COUNT_DISTINCT
 *   SC_ESCHEMA   ncols, k or nterms out of range, or a term's col or
 *                filter is not a column
 *   SC_ETYPE     SUM or AVG over a column that is not i64 or u64, or a
 *                col_type that is no type
 */
int sc_multiagg_spec_check(const struct sc_multiagg_spec *spec,
			   const char *who);

/*
 * sc_multiagg_create - a multi-aggregate as `spec` says (copied), empty.
 * Returns 0 and *out, SC_EINVAL (a NULL argument), sc_multiagg_spec_check's
 * codes, or SC_ENOMEM.
 */
int sc_multiagg_create(const struct sc_multiagg_spec *spec,
		       struct sc_multiagg **out);

/* sc_multiagg_destroy - frees everything; NULL is a no-op. */
void sc_multiagg_destroy(struct sc_multiagg *m);

/*
 * sc_multiagg_out_type - the type of output column k + t (term t's
 * value): i64 for COUNT, COUNT_DISTINCT and SUM, f64 for AVG, the
 * column's type for MIN and MAX. Returns 0 or SC_EINVAL (a NULL argument,
 * or t >= nterms).
 */
int sc_multiagg_out_type(const struct sc_multiagg_spec *spec, uint32_t t,
			 enum sc_type *out);

/*
 * sc_multiagg_step - absorb `delta` (ncols wide; NULL or empty: nothing)
 * and write the change of the output to *out (k + nterms wide, sorted and
 * consolidated; empty when nothing changed). Returns
 *   0            done
 *   SC_EINVAL    m or out is NULL
 *   SC_ESCHEMA   delta is not ncols wide
 *   SC_ENOMEM    no memory; nothing changed, *out untouched
 */
int sc_multiagg_step(struct sc_multiagg *m, const struct sc_batch *delta,
		     struct sc_batch **out);

/*
 * sc_multiagg_work - up to about `budget` units of the MIN/MAX traces'
 * merge work (trace.h). Returns 0, SC_EINVAL (m NULL) or SC_ENOMEM.
 */
int sc_multiagg_work(struct sc_multiagg *m, size_t budget);

/* Merge work owed (0 without a MIN/MAX term), groups held, rows held
 * (groups, distinct rows and trace rows), bytes held. 0 for NULL. */
size_t sc_multiagg_pending(const struct sc_multiagg *m);
size_t sc_multiagg_groups(const struct sc_multiagg *m);
size_t sc_multiagg_rows(const struct sc_multiagg *m);
size_t sc_multiagg_bytes(const struct sc_multiagg *m);

/*
 * sc_multiagg_check - a read of the current integral: 0 while no live
 * group has a COUNT or SUM outside int64, SC_EOVERFLOW (naming how many)
 * while one has (its output row is withheld), SC_EINVAL for NULL.
 */
int sc_multiagg_check(const struct sc_multiagg *m);

#ifdef __cplusplus
}
#endif

#endif /* SC_MULTIAGG_H */

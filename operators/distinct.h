/*
 * distinct.h - the incremental distinct of a Z-set stream.
 *
 * distinct(Z) maps every row of positive weight to weight 1 and drops the
 * rest. Incrementally (the counting algorithm; DBSP, Budiu et al., VLDB
 * 2023): the operator keeps the integral I of its input, and for each
 * row r of a delta with weight w it reads the integrated weight
 * old = I[r] and new = old + w. The output changes only when the weight
 * crosses zero:
 *
 *     old <= 0 < new   ->  +1 r
 *     new <= 0 < old   ->  -1 r
 *     otherwise        ->  nothing
 *
 * State: I is a hash table from a row to its integrated weight
 * (operators/rowhash_int.h: open addressing, records in place, rows of
 * weight 0 dropped), (ncols + 1) * 8 bytes per live row over a load of
 * 0.25..0.5. Nothing else is ever asked of it (no range, no order), so it
 * need not be a sorted trace: a step of d rows costs O(d) expected, one
 * hash probe per row (their cache misses overlapped by prefetching a few
 * rows ahead), whatever the size of the state, and there is no merge work
 * (sc_distinct_work does nothing, sc_distinct_pending is 0).
 *
 * Errors: a delta of the wrong width is SC_ESCHEMA. An integrated weight
 * that leaves int64 is no error: the table widens to exact 128-bit weights
 * (operators/rowhash_int.h), since between steps a weight may be a
 * partial integral that a later delta brings back, so a step is never
 * SC_EOVERFLOW (SC_ENOMEM if the widened table cannot be allocated). On
 * any failure the rows the step had applied are undone (each added again
 * with the opposite weight, which cannot fail), so the state is unchanged
 * and no output is written. Single-threaded, like everything in
 * operators/.
 */
#ifndef SC_DISTINCT_H
#define SC_DISTINCT_H

#ifdef __cplusplus
extern "C" {
#endif

#include <stddef.h>
#include <stdint.h>

#include "operators/batch.h"
#include "operators/error.h"

struct sc_distinct;

/*
 * sc_distinct_create - a distinct over rows of `ncols` columns, empty.
 * Returns 0 and *out, SC_EINVAL (out NULL), SC_ESCHEMA (ncols 0 or above
 * SC_SCHEMA_MAX_COLS), SC_ENOMEM.
 */
int sc_distinct_create(uint32_t ncols, struct sc_distinct **out);

/*
 * sc_distinct_step - one tick: `delta` (borrowed; NULL means empty) is
 * added to the integral, and the output delta (a new batch of ncols
 * columns, weights +1 / -1, one reference for the caller) is written to
 * *out. Returns 0, SC_EINVAL (d or out NULL), SC_ESCHEMA, SC_ENOMEM; on
 * failure nothing changed and *out is unwritten. Never SC_EOVERFLOW: a
 * row's integrated weight past int64 is held exactly (rowhash_int.h),
 * since between steps it may be a partial integral.
 */
int sc_distinct_step(struct sc_distinct *d, const struct sc_batch *delta,
		     struct sc_batch **out);

/*
 * sc_distinct_work - merge work (kept for the stateful operators' common
 * shape; a hash table has none). Returns 0 or SC_EINVAL (d NULL).
 */
int sc_distinct_work(struct sc_distinct *d, size_t budget);

/* sc_distinct_pending - merge work outstanding: always 0. */
size_t sc_distinct_pending(const struct sc_distinct *d);

/* sc_distinct_rows / _bytes - rows of non-zero integrated weight held, and
 * the bytes of the state. */
size_t sc_distinct_rows(const struct sc_distinct *d);
size_t sc_distinct_bytes(const struct sc_distinct *d);

/* sc_distinct_destroy - free. NULL is allowed. */
void sc_distinct_destroy(struct sc_distinct *d);

#ifdef __cplusplus
}
#endif

#endif /* SC_DISTINCT_H */

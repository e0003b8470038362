/*
 * distinct.h - the incremental distinct of a Z-set stream.
 *
 * distinct(Z) maps every row of positive weight to weight 1 and drops the
 * rest. Incrementally (the counting algorithm; DBSP, Budiu et al., VLDB
 * 2023): the operator keeps the integral I of its input in a trace, and for
 * each row r of a delta with weight w it reads the integrated weight
 * old = I[r] and new = old + w. The output changes only when the weight
 * crosses zero:
 *
 *     old <= 0 < new   ->  +1 r
 *     new <= 0 < old   ->  -1 r
 *     otherwise        ->  nothing
 *
 * Cost of a step of d rows: one point probe per row into the trace, in row
 * order (operators/probe_int.h: galloping from the previous row's position
 * in short runs, O(d log(N / d)) compares per run; a lockstep search
 * through a cached fence index in long runs, about one cache miss per row
 * per long run; O(log N) runs), and no scan of the state. The trace's merge
 * work is done by sc_distinct_work (about 2 log2 N units per inserted row keep
 * the spine in shape; see trace.h).
 *
 * Errors: the step validates before changing anything: a delta of the
 * wrong width is SC_ESCHEMA; a delta that would make an integrated weight
 * leave int64 is SC_EOVERFLOW; either way the trace is unchanged and no
 * output is written. Single-threaded, like everything in operators/.
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
 * *out. Returns 0, SC_EINVAL (d or out NULL), SC_ESCHEMA, SC_EOVERFLOW,
 * SC_ENOMEM; on failure nothing changed and *out is unwritten.
 */
int sc_distinct_step(struct sc_distinct *d, const struct sc_batch *delta,
		     struct sc_batch **out);

/*
 * sc_distinct_work - at most `budget` units of merge work on the trace.
 * Returns 0, SC_EINVAL, SC_ENOMEM, SC_EOVERFLOW (as sc_trace_work).
 */
int sc_distinct_work(struct sc_distinct *d, size_t budget);

/* sc_distinct_pending - merge work outstanding (0: settled). */
size_t sc_distinct_pending(const struct sc_distinct *d);

/* sc_distinct_rows / _bytes - rows and bytes the trace holds. */
size_t sc_distinct_rows(const struct sc_distinct *d);
size_t sc_distinct_bytes(const struct sc_distinct *d);

/* sc_distinct_destroy - free. NULL is allowed. */
void sc_distinct_destroy(struct sc_distinct *d);

#ifdef __cplusplus
}
#endif

#endif /* SC_DISTINCT_H */

/*
 * trace.h - the integral of a stream of batches, kept as an LSM spine.
 *
 * A trace is the running sum of every batch inserted into it. It is kept
 * as a list of *runs* (consolidated batches), largest first (a sum does not
 * care about order, and ordering by size rather than age is what bounds
 * the merge work, see below). Inserting places the batch among the runs by
 * its size (a reference, no copy). Merge work folds neighbouring runs
 * together so that, once the work is done, every run is more than twice
 * the size of the next smaller one:
 *
 *     size(run[i]) > 2 * size(run[i + 1])
 *
 * so a trace of N rows has at most log2(N) + 1 runs, and a key lookup is
 * one binary search per run: O(log^2 N).
 *
 * Merging is spread over calls: sc_trace_work(t, budget) takes at most
 * `budget` steps of the one merge in progress (a resumable linear
 * merge of the two runs it folds), starting the next merge when one ends.
 * Until a merge completes, its two inputs stay visible as runs, so lookups
 * and the integral are exact at every moment, whatever the budgets.
 *
 * Amortised cost: a merge folds run i + 1 into run i only when size(i) <=
 * 2 * size(i + 1), and size(i) >= size(i + 1), so every row it moves lands
 * in a run at least half as large again as the one it left (cancellation
 * only shrinks later work). A row is therefore merged at most log_1.5(N) ~
 * 1.71 log2(N) times, and the merge work over N inserted rows is O(N log N)
 * steps, whatever the sizes and order of the inserts: a caller that spends
 * a budget of about 2 * log2(N) units per inserted row keeps the spine in
 * shape, and sc_trace_pending reports the work outstanding. As a safety
 * net, sc_trace_insert itself does the work needed to keep the run count
 * below SC_TRACE_MAX_RUNS (a caller that never calls work still gets a
 * bounded spine, at the cost of a longer insert now and then).
 *
 * Cleanup (waterline.h). A kernel whose inputs carry waterlines sweeps its
 * traces for rows no future delta can reach: one run at a time, a bounded
 * number of rows per call, the run rewritten without them and swapped in
 * once read whole (so lookups stay exact meanwhile). A run a merge takes
 * meanwhile is swept again on a later round. The run each merge writes is
 * read next, with the merge work's budget (sc_trace_work), so that dead
 * rows do not pile up in the runs that merge most; no call reads or
 * copies more rows than its budget.
 *
 * A trace is single-threaded (like everything in operators/). The batches
 * it holds are shared read-only, so a batch inserted here may still be read
 * by others.
 */
#ifndef SC_TRACE_H
#define SC_TRACE_H

#ifdef __cplusplus
extern "C" {
#endif

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "operators/batch.h"
#include "operators/error.h"

struct sc_trace;

/* The most runs a trace ever holds; insert merges to stay below it. */
#define SC_TRACE_MAX_RUNS 48

/*
 * sc_trace_create - an empty trace of rows of `ncols` columns. Returns 0
 * and *out, SC_EINVAL, SC_ESCHEMA (bad ncols), SC_ENOMEM.
 */
int sc_trace_create(uint32_t ncols, struct sc_trace **out);

/* sc_trace_destroy - release every run and free. NULL is allowed. */
void sc_trace_destroy(struct sc_trace *t);

/*
 * sc_trace_insert - add batch b to the integral. The trace takes its own
 * reference (the caller keeps its one). An empty batch is a no-op. Returns
 * 0, SC_EINVAL, SC_ESCHEMA (column counts differ), SC_ENOMEM,
 * SC_ESTATE (the safety net found no merge to make); on failure the trace
 * is unchanged.
 */
int sc_trace_insert(struct sc_trace *t, struct sc_batch *b);

/*
 * sc_trace_work - do at most `budget` units of merge work. One unit is one
 * step of a merge: it moves one input row (or two equal rows, which it
 * adds) and emits at most one. Writes the units done into *done if done is
 * not NULL (less than budget means no work is left). With cleanup on
 * (waterline.h), as many units again read the run the last merge wrote
 * for dead rows (a row read or copied a unit; not counted in *done). Returns 0,
 * SC_EINVAL or SC_ENOMEM; never SC_EOVERFLOW. A merge whose two runs alone pass
 * int64 (+MAX and +1, with -1 in a third) folds the whole spine into one
 * run instead, so the merge schedule never decides anything. When a
 * row's weights summed over ALL the runs leave int64, that is a partial
 * integral, which later inserts may bring back (and which of them a trace
 * sees is up to how a schedule grouped deltas into steps), so it is no error
 * here either: the spine is folded into runs that each fit (the totals clamped
 * into int64, then the remainders), stays exact, and merges no more until the
 * next insert (sc_trace_pending is 0 meanwhile). Only a read of such a row
 * fails: sc_trace_integral, sc_trace_cursor_next and sc_trace_lookup say
 * SC_EOVERFLOW while it is outside int64.
 */
int sc_trace_work(struct sc_trace *t, size_t budget, size_t *done);

/*
 * sc_trace_pending - an upper bound on the units of work needed to bring
 * the spine into shape now (the rest of the merge in hand plus the merges
 * the invariant asks for next). 0 means settled.
 */
size_t sc_trace_pending(const struct sc_trace *t);

/* sc_trace_runs - how many runs the spine has now. */
size_t sc_trace_runs(const struct sc_trace *t);

/* sc_trace_run - run i (0 = largest), borrowed: valid until the next insert
 * or work on t. NULL if i is out of range. */
const struct sc_batch *sc_trace_run(const struct sc_trace *t, size_t i);

/* sc_trace_rows - rows stored over all runs (a row that appears in two runs
 * counts twice). */
size_t sc_trace_rows(const struct sc_trace *t);

/* sc_trace_bytes - bytes held by the runs and the merge in hand. */
size_t sc_trace_bytes(const struct sc_trace *t);

/*
 * sc_trace_integral - the whole integral as one consolidated batch (*out,
 * a new reference). The trace is unchanged (it does not adopt the result).
 * Returns 0, SC_EINVAL, SC_ENOMEM, SC_EOVERFLOW (a row's integral is
 * outside int64 now; see sc_trace_work).
 */
int sc_trace_integral(const struct sc_trace *t, struct sc_batch **out);

/*
 * A cursor over the rows of a trace with a given key prefix, in row order,
 * each with its weight summed over the runs; rows whose weights cancel are
 * skipped. Caller storage; no allocation. Valid until the next insert or
 * work on the trace. Fields private to trace.c.
 */
struct sc_trace_cursor {
	uint32_t ncols;				       /* row width */
	uint32_t nruns;				       /* runs with a match */
	const struct sc_batch *run[SC_TRACE_MAX_RUNS]; /* the runs */
	size_t pos[SC_TRACE_MAX_RUNS];		       /* next row in run[i] */
	size_t end[SC_TRACE_MAX_RUNS]; /* end of its key range */
};

/*
 * sc_trace_seek - position c on the rows whose first k columns equal
 * key[0..k) (k == 0: every row). Returns 0, SC_EINVAL, SC_ESCHEMA (k >
 * ncols).
 */
int sc_trace_seek(const struct sc_trace *t, const uint64_t *key, uint32_t k,
		  struct sc_trace_cursor *c);

/*
 * sc_trace_cursor_next - the next matching row with a non-zero summed
 * weight: returns 1 and writes *row (borrowed, ncols words) and *weight;
 * returns 0 at the end; SC_EOVERFLOW if the row's weights sum beyond int64
 * (the cursor then stands after that row).
 */
int sc_trace_cursor_next(struct sc_trace_cursor *c, const uint64_t **row,
			 int64_t *weight);

/*
 * sc_trace_lookup - the rows with key prefix key[0..k) and their summed
 * weights, as one new consolidated batch (*out). Errors as seek and
 * SC_ENOMEM / SC_EOVERFLOW.
 */
int sc_trace_lookup(const struct sc_trace *t, const uint64_t *key, uint32_t k,
		    struct sc_batch **out);

#ifdef __cplusplus
}
#endif

#endif /* SC_TRACE_H */

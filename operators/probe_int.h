/*
 * probe_int.h - monotone probes into the runs of a trace, shared by the
 * stateful operators (join, distinct, aggregate). Internal.
 *
 * A step of a stateful operator looks up the rows of a sorted delta in a
 * trace: the keys it asks for only grow. A probe remembers, per run, where
 * the previous lookup landed and gallops forward from there (exponential
 * then binary search; Bentley and Yao, 1976), so d increasing lookups in a
 * run of n rows cost O(d log(n / d)) compares instead of O(d log n), and a
 * lookup that lands near the last one costs O(1).
 *
 * A probe sees the runs of a trace and, optionally, one extra batch (a
 * delta not inserted yet), so an operator can read "the integral after
 * this step" without changing the trace: that is how steps validate and
 * compute everything before they mutate.
 *
 * After sc__probe_seek(key, k), the rows with that key prefix are one range
 * per run; sc__probe_next walks them forward and sc__probe_prev backward,
 * in row order, each row once with its weight summed over the runs, rows
 * whose weights cancel skipped. The two walks share the range: they meet
 * in the middle and never return a row twice.
 *
 * A probe borrows the runs: it is valid until the next insert or work on
 * the trace. Caller storage, no allocation.
 */
#ifndef SC_PROBE_INT_H
#define SC_PROBE_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "operators/batch.h"
#include "operators/trace.h"

#define SC__PROBE_MAX (SC_TRACE_MAX_RUNS + 1)

/* Runs at least this long (and 16 times the keys) are searched in batches
 * by sc__probe_prepare. */
#define SC__PROBE_BATCH_MIN 2048

/*
 * Fences: for each long run of a trace, the first word of every
 * SC__FENCE_STRIDE-th row, in one dense array (1/16 of a word per row, so
 * the fences of a run of 1M rows take 500 KB and stay in cache). A
 * prepared probe searches the fence, not the run, and then only one block
 * of 16 rows of the run: one or two cache misses per key instead of one
 * per level of a binary search over a run that does not fit in cache.
 * Runs are immutable, so a run's fence is built once and kept while the
 * run lives; the cache holds a reference to each run it has a fence for,
 * so a run's address cannot be reused while its fence is kept. Each
 * prepare drops the fences of runs that have left the trace.
 */
#define SC__FENCE_STRIDE 16
#define SC__FENCE_MIN	 32768 /* runs shorter than this get no fence */

struct sc__fences {
	size_t n;				 /* entries */
	struct sc_batch *run[SC_TRACE_MAX_RUNS]; /* a reference each */
	uint64_t *first[SC_TRACE_MAX_RUNS];	 /* the fence words */
	size_t nf[SC_TRACE_MAX_RUNS];		 /* how many */
};

void sc__fences_init(struct sc__fences *fs);
void sc__fences_fini(struct sc__fences *fs);
/* Drop the fences of runs no longer in t, releasing them: called after
 * merge work, so that a merged-away run is not kept alive by its fence. */
void sc__fences_sync(struct sc__fences *fs, const struct sc_trace *t);
/* Bytes the fences hold (not the runs they keep alive). */
size_t sc__fences_bytes(const struct sc__fences *fs);

struct sc__probe {
	uint32_t ncols;				   /* row width */
	uint32_t nruns;				   /* runs probed */
	uint32_t ntrace;			   /* of which the trace's */
	const struct sc_batch *run[SC__PROBE_MAX]; /* borrowed */
	size_t from[SC__PROBE_MAX]; /* every later key is at or after this */
	size_t lo[SC__PROBE_MAX];   /* the current key range, still to walk */
	size_t hi[SC__PROBE_MAX];   /* forward walks lo up, backward hi down */
	/* Prepared lookups (sc__probe_prepare), or pm == 0: */
	const struct sc_batch *pkeys; /* the batch whose keys were prepared */
	uint32_t pk;		      /* their width */
	size_t pm;		      /* distinct keys prepared */
	size_t pi;		      /* the next one expected */
	size_t *kidx;		      /* pm row indices of pkeys, one per key */
	size_t *pre[SC__PROBE_MAX];   /* per long run: pm lower bounds */
	const uint64_t *fence[SC__PROBE_MAX]; /* per run: its fence or NULL */
	size_t nfence[SC__PROBE_MAX];	      /* fence words */
	size_t *block; /* the allocation behind kidx and pre */
};

/*
 * sc__probe_init - a probe over the runs of t (may be NULL: none) and the
 * batch `extra` (may be NULL or empty). Both must have p's width; checked
 * by the caller.
 */
void sc__probe_init(struct sc__probe *p, uint32_t ncols,
		    const struct sc_trace *t, const struct sc_batch *extra);

/*
 * sc__probe_prepare - search every long run (SC__PROBE_BATCH_MIN rows or
 * more, and at least 16 rows per key) for all the distinct k-column key
 * prefixes of `keys` (sorted) at once, so that the seeks (or weights, with k ==
 * ncols) that follow, in that order, find their place in those runs without
 * searching. The searches run in lockstep, many keys at a time, so their cache
 * misses overlap instead of following one another: a probe into a long run is
 * bound by memory latency, and this turns latency into bandwidth.
 * A seek whose key is not the next prepared one just searches as usual.
 * `fs` (may be NULL) is the fence cache of the probe's trace: the long
 * trace runs are searched through their fences (built on first use).
 * Preparing only saves time: if an allocation fails the probe simply
 * searches as it would unprepared. Call sc__probe_fini after.
 */
void sc__probe_prepare(struct sc__probe *p, const struct sc_batch *keys,
		       uint32_t k, struct sc__fences *fs);

/* sc__probe_fini - free what sc__probe_prepare allocated. */
void sc__probe_fini(struct sc__probe *p);

/*
 * sc__probe_seek - the rows whose first k columns equal key[0..k). Keys of
 * successive seeks must not decrease (compared on their first k words).
 */
void sc__probe_seek(struct sc__probe *p, const uint64_t *key, uint32_t k);

/*
 * sc__probe_next / sc__probe_prev - the next row of the range from the
 * front (from the back) with a non-zero summed weight: 1 and *row
 * (borrowed), *w; 0 when the range is exhausted; SC_EOVERFLOW when a
 * row's weights sum beyond int64.
 */
int sc__probe_next(struct sc__probe *p, const uint64_t **row, int64_t *w);
int sc__probe_prev(struct sc__probe *p, const uint64_t **row, int64_t *w);

/*
 * sc__probe_next_live / sc__probe_prev_live - as sc__probe_next/prev, but
 * a summed weight outside int64 is no error: *w is clamped into int64
 * (its sign, and whether it is zero, stay exact). For callers that ask
 * only whether a row is live (MIN/MAX), so that a partial integral past
 * int64 fails no step. 1 or 0, never SC_EOVERFLOW.
 */
int sc__probe_next_live(struct sc__probe *p, const uint64_t **row, int64_t *w);
int sc__probe_prev_live(struct sc__probe *p, const uint64_t **row, int64_t *w);

/*
 * sc__probe_next_wide / sc__probe_prev_wide - as sc__probe_next/prev, with
 * the summed weight exact in 128 bits (a trace may hold a row past int64:
 * trace.h). 1 or 0, never an error. For the join's wide step (join.c) and
 * callers that sum several rows' weights (multiagg.c's MIN/MAX).
 */
int sc__probe_next_wide(struct sc__probe *p, const uint64_t **row, __int128 *w);
int sc__probe_prev_wide(struct sc__probe *p, const uint64_t **row, __int128 *w);

/*
 * sc__probe_weight - the summed weight of the exact row `row` (0 if
 * absent). Rows of successive calls must not decrease. 0 or SC_EOVERFLOW.
 */
int sc__probe_weight(struct sc__probe *p, const uint64_t *row, int64_t *w);

/*
 * A bound on every integrated weight: the sum of |w| over every row ever
 * added, saturating. While mass + (the delta's mass) <= INT64_MAX no
 * integrated weight (nor any partial sum of runs) can leave int64, and an
 * operator can skip its per-row overflow checks.
 */
uint64_t sc__batch_mass(const struct sc_batch *b);

static inline uint64_t
sc__mass_add(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

static inline bool
sc__mass_safe(uint64_t mass)
{
	return mass <= (uint64_t)INT64_MAX;
}

/*
 * sc__trace_make_room - make sure the next sc_trace_insert on t cannot
 * fail: if the spine is at its run limit, settle it now (merging changes
 * no integral, so a step may do this before it validates its input).
 */
int sc__trace_make_room(struct sc_trace *t);

/*
 * sc__check_delta - NULL is fine (empty); else its width must be ncols.
 * Returns 0 or SC_ESCHEMA naming `fn` and `what`.
 */
int sc__check_delta(const char *fn, const char *what, const struct sc_batch *b,
		    uint32_t ncols);

#endif /* SC_PROBE_INT_H */

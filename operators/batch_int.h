/*
 * batch_int.h - internals of batches: the record helpers batch.c and
 * batch_sort.c share, raw construction and the resumable merge (trace.c),
 * and the key scans of the stateful operators (join.c, aggregate.c,
 * probe.c). Not part of the public API.
 */
#ifndef SC_BATCH_INT_H
#define SC_BATCH_INT_H

#include <stdlib.h>
#include <string.h>

#include "operators/batch.h"

#define SC__INLINE static inline __attribute__((always_inline))

/* --- records -------------------------------------------------------------- */

/* Records never overlap. memcpy of a constant size (the fixed strides
 * below) becomes a few moves; a loop here may instead be turned into a call
 * to memmove by gcc's loop-pattern recognition, which costs more than the
 * copy. */
SC__INLINE void
sc__rec_copy(uint64_t *dst, const uint64_t *src, uint32_t stride)
{
	memcpy(dst, src, (size_t)stride * sizeof(uint64_t));
}

/* A three-way compare of two records' keys, as sc_row_cmp. */
SC__INLINE int
sc__rec_cmp(const uint64_t *a, const uint64_t *b, uint32_t ncols)
{
	/* The common narrow rows compare in a few instructions. */
	if (ncols == 1)
		return (a[0] > b[0]) - (a[0] < b[0]);
	if (ncols == 2) {
		unsigned __int128 x = ((unsigned __int128)a[0] << 64) | a[1];
		unsigned __int128 y = ((unsigned __int128)b[0] << 64) | b[1];

		return (x > y) - (x < y);
	}
	if (ncols == 3) {
		/* Word by word: the first word usually decides, and two
		 * 128-bit compares cost more than the branches. */
		if (a[0] != b[0])
			return a[0] > b[0] ? 1 : -1;
		if (a[1] != b[1])
			return a[1] > b[1] ? 1 : -1;
		return (a[2] > b[2]) - (a[2] < b[2]);
	}
	return sc_row_cmp(a, b, ncols);
}

/* The hot loops, specialised for the common strides so the record copy
 * and compare unroll: rows of 1 to 4 columns, and of 7 (a cache line
 * with its weight; Nexmark's bids). call_fixed and call_any are statements (a
 * call and its semicolon), which is why they stand unparenthesised. */
#define SC__DISPATCH(stride, call_fixed, call_any)                             \
	switch (stride) {                                                      \
	case 2: {                                                              \
		const uint32_t S_ = 2;                                         \
		call_fixed;                                                    \
		break;                                                         \
	}                                                                      \
	case 3: {                                                              \
		const uint32_t S_ = 3;                                         \
		call_fixed;                                                    \
		break;                                                         \
	}                                                                      \
	case 4: {                                                              \
		const uint32_t S_ = 4;                                         \
		call_fixed;                                                    \
		break;                                                         \
	}                                                                      \
	case 5: {                                                              \
		const uint32_t S_ = 5;                                         \
		call_fixed;                                                    \
		break;                                                         \
	}                                                                      \
	case 8: {                                                              \
		const uint32_t S_ = 8;                                         \
		call_fixed;                                                    \
		break;                                                         \
	}                                                                      \
	default:                                                               \
		call_any; /* NOLINT(bugprone-macro-parentheses) */             \
		break;                                                         \
	}

/* n records of `stride` words (sc__mem_alloc), or NULL on overflow of the
 * byte count or out of memory. */
uint64_t *sc__rec_alloc(size_t n, uint32_t stride);

/*
 * Builders of at most SC__SMALL_ROWS records (a step's delta, a frame on an
 * edge: the common case) skip the radix sort. Its fixed costs (a scan, a
 * scratch area, counters to clear) are what a delta of a few rows paid
 * for; an insertion sort over 32 records costs less than clearing one
 * histogram.
 */
#define SC__SMALL_ROWS 32

/* A header block with room for `cap` inline records, uninitialised. NULL
 * if out of memory. */
static inline struct sc_batch *
sc__small_alloc(size_t cap, uint32_t stride)
{
	return malloc(sizeof(struct sc_batch) +
		      cap * stride * sizeof(uint64_t));
}

/*
 * Make the block r (room for `cap` records, `nout` of them written after
 * the header) a batch of one reference. A block left with much less than
 * its room (rows cancelled) is shrunk, as sc__batch_adopt shrinks, so
 * sc_batch_bytes stays near the truth. Returns the batch (r may move).
 */
SC__INLINE struct sc_batch *
sc__small_seal(struct sc_batch *r, uint32_t ncols, size_t nout, size_t cap)
{
	if (nout < cap - cap / 4) {
		struct sc_batch *s = realloc(
		    r, sizeof(*r) + nout * (ncols + 1) * sizeof(uint64_t));

		if (s)
			r = s;
	}
	r->refs = 1;
	r->ncols = ncols;
	r->stride = ncols + 1;
	r->count = nout;
	r->data = nout ? (uint64_t *)(r + 1) : NULL;
	return r;
}

/*
 * sc__batch_builder_finish_prefix - sc_batch_builder_finish of records the
 * caller pushed in order of their first k words (a projection that keeps
 * a prefix of a consolidated batch's columns: sc_batch_index_by). Only
 * the runs of records equal on those words are sorted (batch_sort.c,
 * sort_prefix); k >= ncols is a check-free consolidation. Records out of
 * that order give a batch that is not consolidated: the caller's promise.
 */
int sc__batch_builder_finish_prefix(struct sc_batch_builder *b, uint32_t k,
				    struct sc_batch **out);

/*
 * sc__batch_builder_finish_parts - the same where the records [0, split)
 * and [split, count) are each in order of their first k words (a join's
 * two passes, join.c): each part is sorted so, then the two are merged.
 * split 0 is one part in that order; split >= count (nothing known past
 * it) is a plain finish. Returns as sc_batch_builder_finish.
 */
int sc__batch_builder_finish_parts(struct sc_batch_builder *b, uint32_t k,
				   size_t split, struct sc_batch **out);

/* --- raw construction and the merge --------------------------------------- */

/*
 * sc__batch_adopt - wrap `count` consolidated records in `data` (malloc'ed,
 * capacity `cap` records; ownership passes to the batch, which may shrink
 * it) into a new batch. On SC_ENOMEM `data` is freed.
 */
int sc__batch_adopt(uint32_t ncols, uint64_t *data, size_t count, size_t cap,
		    struct sc_batch **out);

/*
 * A merge of two consolidated batches a + b that can advance a bounded
 * number of input rows at a time. The output buffer is allocated at init
 * (|a| + |b| records) and adopted by the result at finish; for a small
 * merge it is the records of the result's own block (`small`).
 */
/*
 * The equal pairs a merge met, for a caller that must know which entries
 * it added up or cancelled (trace.c drops the symbol holds of those
 * entries, symbol_int.h). Caller storage, reused across merges.
 */
struct sc__merge_eq {
	size_t *at;    /* a's row index of each pair; top bit: it cancelled */
	size_t n, cap; /* pairs noted, room */
	bool lost;     /* no memory to note one: the list is incomplete */
};

#define SC__MERGE_EQ_CANCELLED ((size_t)1 << (sizeof(size_t) * 8 - 1))

struct sc__merge {
	const struct sc_batch *a; /* borrowed; the caller keeps them alive */
	const struct sc_batch *b;
	size_t ia, ib;		 /* next input row of a and of b */
	size_t nout;		 /* records written to out */
	uint64_t *out;		 /* (|a| + |b|) * stride words */
	struct sc_batch *small;	 /* out's block when inline, else NULL */
	struct sc__merge_eq *eq; /* equal pairs noted here, or NULL; set
				  * after sc__merge_init */
};

/* Start a + b (same ncols; checked by the caller). SC_ENOMEM. */
int sc__merge_init(struct sc__merge *m, const struct sc_batch *a,
		   const struct sc_batch *b);

/*
 * Take at most `budget` merge steps. A step emits at most one row and
 * moves one input row, or two equal ones that it adds. Writes the steps
 * taken into *moved. Returns 0 or
 * SC_EOVERFLOW (positions left at the overflowing pair: nothing of it was
 * written).
 */
int sc__merge_step(struct sc__merge *m, size_t budget, size_t *moved);

/* Rows of input not yet moved: a bound on the steps left. */
static inline size_t
sc__merge_left(const struct sc__merge *m)
{
	return (m->a->count - m->ia) + (m->b->count - m->ib);
}

/* Once sc__merge_left is 0: the result (*out); the merge's buffer passes to
 * it. SC_ENOMEM (then the buffer is freed). */
int sc__merge_finish(struct sc__merge *m, struct sc_batch **out);

/* Abandon a merge, freeing its buffer. */
void sc__merge_abort(struct sc__merge *m);

/* --- layouts -------------------------------------------------------------- */

/*
 * The layout (key, v, the rest) of rows of ncols columns whose first k are
 * their key: column col brought next to the key, the others in their
 * order, so a trace of whole rows so laid out reads a key's rows in the
 * order of v (session windows, multi-aggregate extremes). A col in the
 * key, or at k already, leaves the rows as they are. A permutation makes
 * no two rows one, so laying a delta out never adds two weights.
 */
struct sc__layout {
	uint32_t perm[SC_SCHEMA_MAX_COLS]; /* input column of column i */
	uint32_t ncols;
	bool permuted; /* perm is not the identity */
};

static inline void
sc__layout_init(struct sc__layout *l, uint32_t ncols, uint32_t k, uint32_t col)
{
	uint32_t n = col < k ? k : k + 1;

	l->ncols = ncols;
	l->permuted = false;
	for (uint32_t i = 0; i < ncols; i++) {
		uint32_t at = i < k ? i : i == col ? k : n++;

		l->perm[at] = i;
		l->permuted |= at != i;
	}
}

/* b laid out so, as a new reference (b itself when nothing moves).
 * 0, or sc_batch_index_by's SC_ENOMEM. */
static inline int
sc__layout_apply(const struct sc__layout *l, const struct sc_batch *b,
		 struct sc_batch **out)
{
	if (!l->permuted) {
		*out = sc_batch_retain((struct sc_batch *)b);
		return 0;
	}
	return sc_batch_index_by(b, l->perm, l->ncols, out);
}

/* --- keys ---------------------------------------------------------------- */

/* The end of the run of rows of b that share row i's first k columns. */
static inline size_t
sc__batch_key_end(const struct sc_batch *b, size_t i, uint32_t k)
{
	size_t n = sc_batch_count(b);
	const uint64_t *key = sc_batch_row(b, i);

	while (++i < n && sc_row_eq(sc_batch_row(b, i), key, k))
		;
	return i;
}

/*
 * The first row index in [lo, hi) whose first k columns are >= key
 * (strict: > key), hi if none: a binary search, the one behind
 * sc_batch_lower_bound, sc_batch_key_range and the probe's bounded
 * searches. The rows of [lo, hi) must be sorted (they are in any batch).
 */
static inline size_t
sc__batch_search(const struct sc_batch *b, size_t lo, size_t hi,
		 const uint64_t *key, uint32_t k, bool strict)
{
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = sc_row_cmp(sc_batch_row(b, mid), key, k);

		if (strict ? c > 0 : c >= 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

/* --- wide Z-sets -------------------------------------------------------------
 *
 * A step's delta is a batch, whose weights are int64; a delta whose row
 * weight leaves int64 only because of how a schedule grouped deltas into
 * steps (two rows of 2^62 mapped to one key, a join's change past int64)
 * is held here, with 128-bit weights, and emitted in int64-sized parts over
 * successive passes of the step (circuit.h, sc_circuit_carried). Cold: only
 * a step whose narrow result overflowed ever builds one.
 */
struct sc__wide {
	uint32_t ncols; /* row width */
	size_t n, cap;	/* rows held (unsorted, repeats allowed), room */
	uint64_t *rows; /* n * ncols words */
	__int128 *w;	/* their weights */
};

/* sc__wide_init - empty, no allocation. sc__wide_fini frees. */
void sc__wide_init(struct sc__wide *x, uint32_t ncols);
void sc__wide_fini(struct sc__wide *x);

/* sc__wide_add - add w times row (w == 0: nothing). 0 or SC_ENOMEM (then
 * unchanged). */
int sc__wide_add(struct sc__wide *x, const uint64_t *row, __int128 w);

/* sc__wide_add_batch - add every row of b (NULL: none) times sign (+1 or
 * -1, exact: -INT64_MIN fits). 0 or SC_ENOMEM (then unchanged). */
int sc__wide_add_batch(struct sc__wide *x, const struct sc_batch *b, int sign);

/* sc__wide_add_builder - add what builder b holds (its records, unsorted).
 * 0 or SC_ENOMEM (then unchanged). */
int sc__wide_add_builder(struct sc__wide *x, const struct sc_batch_builder *b);

/*
 * sc__wide_take - consolidate x and take from each row the part of its
 * weight that fits int64 (the weight clamped into int64): *out is the batch
 * of those parts (NULL when x sums to zero), and x keeps the remainders
 * (rows left at zero dropped). Repeated takes emit the whole Z-set. 0 or
 * SC_ENOMEM (then x and *out are unchanged).
 */
int sc__wide_take(struct sc__wide *x, struct sc_batch **out);

/*
 * sc__join_set_spill - where join j's wide step (join.c) puts the part of
 * an output row's change that does not fit int64 in this step, instead of
 * failing with SC_EOVERFLOW: the step's output holds the change clamped
 * into int64, `spill` (rows of the join's output width; NULL: none, fail)
 * the rest, for the circuit to emit in the next passes. A failing step
 * leaves the spill as it was.
 */
struct sc_join;
void sc__join_set_spill(struct sc_join *j, struct sc__wide *spill);

/* sc__antijoin_set_spill - the same for an antijoin: a step whose output
 * has a row past int64 puts its whole output in the spill (its own batch
 * is then empty). */
struct sc_antijoin;
void sc__antijoin_set_spill(struct sc_antijoin *aj, struct sc__wide *spill);

#endif /* SC_BATCH_INT_H */

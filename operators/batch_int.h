/*
 * batch_int.h - internals of batches shared with trace.c: raw construction
 * and the resumable merge. Not part of the public API.
 */
#ifndef SC_BATCH_INT_H
#define SC_BATCH_INT_H

#include "operators/batch.h"

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
struct sc__merge {
	const struct sc_batch *a; /* borrowed; the caller keeps them alive */
	const struct sc_batch *b;
	size_t ia, ib;		/* next input row of a and of b */
	size_t nout;		/* records written to out */
	uint64_t *out;		/* (|a| + |b|) * stride words */
	struct sc_batch *small; /* out's block when inline, else NULL */
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

#endif /* SC_BATCH_INT_H */

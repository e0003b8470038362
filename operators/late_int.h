/*
 * late_int.h - the lateness check of one submission against every
 * declaration of its input (waterline.h, "Lateness"). Library internal:
 * the single circuit's feed (circuit.c) and the runtime's submit
 * (units/runtime_late.c) both check through it, so a submission is judged
 * by one rule wherever it enters.
 *
 * The rule. A submission is checked against each declaration's waterline
 * as it stood BEFORE it, all of them first, and nothing moves: if any
 * declaration without SC_LATE_ADMIT has late rows, the whole submission
 * is refused (SC_ELATE, those rows counted as refused). Only once the
 * caller has applied it do the waterlines advance with its rows, the late
 * rows of admitting declarations counted as admitted. The two halves are
 * two calls because applying may still fail in between (the caller then
 * skips the advance, and nothing moved).
 */
#ifndef SC_LATE_INT_H
#define SC_LATE_INT_H

#include <stddef.h>

#include "operators/batch.h"
#include "operators/waterline.h"

/*
 * sc__late_check - count b's late rows against each of the n declarations
 * l[0..n) (into nlate[i] when nlate is not NULL; the counts are only
 * valid when it returns 0). Returns
 *   0          no declaration refuses: b may be applied, then call
 *              sc__late_advance
 *   SC_ELATE   the first declaration without SC_LATE_ADMIT that has late
 *              rows refused b (sc_late_refuse: counted as refused, the
 *              message starts with `who` and names node `name`, which may
 *              be NULL); nothing else moved
 */
int sc__late_check(struct sc_late *l, size_t n, const struct sc_batch *b,
		   size_t *nlate, const char *who, const char *name);

/* sc__late_advance - b was applied: each of the n waterlines advances with
 * its rows, and its late rows are counted as admitted: nlate[i] of them as
 * sc__late_check counted, or, with nlate NULL, counted again here. */
void sc__late_advance(struct sc_late *l, size_t n, const struct sc_batch *b,
		      const size_t *nlate);

#endif /* SC_LATE_INT_H */

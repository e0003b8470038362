/*
 * join.h - the incremental equi-join and antijoin of two Z-set streams.
 *
 * Both inputs are *indexed* on their first k columns (sc_batch_index_by
 * re-keys a stream that is not). A join keeps the integral of each input
 * in a trace (trace.h) and, for input deltas da and db, emits the bilinear
 * delta of the join (DBSP, Budiu et al., VLDB 2023, the incremental join):
 *
 *     d(A join B) = da join Ib  +  Ia join db  +  da join db
 *
 * where Ia and Ib are the integrals as they were BEFORE this step; then
 * the traces absorb da and db. An output row is
 *
 *     (key[0..k), a's columns k.., b's columns k..)
 *
 * of a_ncols + b_ncols - k columns (at most SC_SCHEMA_MAX_COLS), with the
 * product of the two weights. k == 0 is the cross product.
 *
 * Cost of a step: the rows of da are sorted, so their keys are probed into
 * Ib in increasing order (operators/probe_int.h). A short run is searched
 * by galloping forward from the previous key's position: O(d log(n / d))
 * compares for d keys in a run of n rows. A long run (one that does not
 * fit in cache, where every search level would be a cache miss) is
 * searched for all d keys at once, in lockstep so that the misses overlap,
 * through a cached fence of its every 16th first word, so each key misses
 * the cache about once per long run. A trace has O(log N) runs: O(d log^2
 * N) compares in all, plus the output. The traces' merge work is NOT done by
 * the step: sc_*_work spreads it (see trace.h: about 2 log2 N units of work per
 * inserted row keep each spine in shape, so O(log N) amortised per input row).
 * A step only merges when a spine reaches SC_TRACE_MAX_RUNS runs (the trace's
 * safety net), and it does that before it changes anything.
 *
 * The antijoin keeps the same two traces and emits the rows of a, with a's
 * weights, whose key has NO positive-weight presence in the integral of b:
 *
 *     antijoin(A, B) = A - (A semijoin distinct(B))
 *
 * where a key is *present* in B when some row of Ib with that key has an
 * integrated weight > 0. A step emits da's rows whose key is absent from
 * the new Ib, and, for every key whose presence db changes, retracts (the
 * key became present) or re-inserts (it became absent) Ia's rows of that
 * key. The output rows have a's a_ncols columns.
 *
 * Errors: every step validates before it changes anything, so a failing
 * step leaves both traces as they were and writes no output: a delta of the
 * wrong width is SC_ESCHEMA.
 *
 * Weights past int64. A product da * Ib, Ia * db or
 * da * db, an integrated weight, and an output row's integral involve the
 * partial integrals that a schedule's grouping of deltas into steps
 * happens to build, so none of them may fail a step. With M_a and M_b the
 * sums of |weight| of every row ever fed to each side, a step within the
 * bound 2 * M_a * M_b <= INT64_MAX is the narrow step above: every partial
 * integral, delta and product is bounded by those sums and fits. Past the
 * bound the step is wide (join.c): the traces hold integrals past int64
 * exactly (trace.h), and for each output row the step touches (one pair of
 * an a row and a b row) it computes the row's integral before and after in
 * 128 bits and emits the change of its value clamped into int64. So the
 * output's integral is always the join of the inputs' integrals with each
 * row's weight clamped into int64: exact whenever the row fits, as every
 * settled value does, and the same in every placement once settled. A
 * step that moves one output row's clamped integral by more than int64 at
 * once (from below -2^62 to above 2^62 or back) cannot put that change in
 * one batch: in a circuit the step emits it clamped and the circuit
 * carries the rest into the next steps (circuit.h, sc_circuit_carried;
 * batch_int.h, sc__join_set_spill); a join stepped on its own says
 * SC_EOVERFLOW then. The wide step costs a walk of the touched keys' rows
 * on both sides. The antijoin's presence reads
 * only signs, so b's integrals may pass int64, and a's are held exactly;
 * its output (a's rows, with a's weights) is exact, and a step whose
 * output has a row past int64 (an a row past int64 whose key turns
 * absent) puts its whole output in the circuit's carry, emitted clamped
 * over the next steps; an antijoin stepped on its own says SC_EOVERFLOW
 * then.
 *
 * Threads: a join is single-threaded, like everything in operators/. The
 * batches given to and returned by a step are immutable and may be shared.
 */
#ifndef SC_JOIN_H
#define SC_JOIN_H

#ifdef __cplusplus
extern "C" {
#endif

#include <stddef.h>
#include <stdint.h>

#include "operators/batch.h"
#include "operators/error.h"

struct sc_join;
struct sc_antijoin;

/*
 * sc_join_create - a join of a stream of a_ncols-column rows with a stream
 * of b_ncols-column rows on their first k columns, with empty integrals.
 * Returns 0 and *out; SC_EINVAL (out NULL); SC_ESCHEMA (a_ncols or b_ncols
 * 0 or above SC_SCHEMA_MAX_COLS, k above either, or an output row wider
 * than SC_SCHEMA_MAX_COLS); SC_ENOMEM.
 */
int sc_join_create(uint32_t a_ncols, uint32_t b_ncols, uint32_t k,
		   struct sc_join **out);

/*
 * sc_join_step - one clock tick: da and db are this tick's deltas (either
 * may be NULL, meaning empty; both are borrowed, the join keeps its own
 * references). Writes the output delta (a new batch of sc_join_out_ncols
 * columns, possibly empty, one reference owned by the caller) to *out.
 * Returns 0; SC_EINVAL (j or out NULL); SC_ESCHEMA (a delta's width is not
 * a_ncols / b_ncols); SC_EOVERFLOW (an output row's clamped integral
 * would move by more than int64 in this step and the join has no spill:
 * see "Weights past int64" above); SC_ENOMEM. On failure nothing changed and
 * *out is unwritten.
 */
int sc_join_step(struct sc_join *j, const struct sc_batch *da,
		 const struct sc_batch *db, struct sc_batch **out);

/*
 * sc_join_work - do at most `budget` units of merge work (one unit = one
 * row moved by a merge) on the two traces, A's first. Returns 0, SC_EINVAL
 * (j NULL), SC_ENOMEM or SC_EOVERFLOW (from the trace; the integrals stay
 * exact). Merge work never changes an integral or any later output.
 */
int sc_join_work(struct sc_join *j, size_t budget);

/* sc_join_pending - merge work outstanding on both traces (trace.h's
 * sc_trace_pending summed); 0 when both spines are settled. */
size_t sc_join_pending(const struct sc_join *j);

/* sc_join_out_ncols - the width of output rows: a_ncols + b_ncols - k. */
uint32_t sc_join_out_ncols(const struct sc_join *j);

/* sc_join_rows - rows held by the two traces (a row stored in two runs
 * counts twice); sc_join_bytes - bytes they hold. For benchmarks. */
size_t sc_join_rows(const struct sc_join *j);
size_t sc_join_bytes(const struct sc_join *j);

/* sc_join_destroy - release the traces and free. NULL is allowed. */
void sc_join_destroy(struct sc_join *j);

/*
 * sc_antijoin_create - an antijoin of a_ncols-column rows by the presence
 * of their first-k-column key among b_ncols-column rows. Errors as
 * sc_join_create (the output has a_ncols columns).
 */
int sc_antijoin_create(uint32_t a_ncols, uint32_t b_ncols, uint32_t k,
		       struct sc_antijoin **out);

/*
 * sc_antijoin_step - one tick, as sc_join_step; the output has a_ncols
 * columns. Errors as sc_join_step (SC_EOVERFLOW: an output row's change
 * past int64 with no spill); on failure nothing changed.
 */
int sc_antijoin_step(struct sc_antijoin *aj, const struct sc_batch *da,
		     const struct sc_batch *db, struct sc_batch **out);

/* sc_antijoin_work, _pending, _rows, _bytes, _destroy - as for the join. */
int sc_antijoin_work(struct sc_antijoin *aj, size_t budget);
size_t sc_antijoin_pending(const struct sc_antijoin *aj);
size_t sc_antijoin_rows(const struct sc_antijoin *aj);
size_t sc_antijoin_bytes(const struct sc_antijoin *aj);
void sc_antijoin_destroy(struct sc_antijoin *aj);

#ifdef __cplusplus
}
#endif

#endif /* SC_JOIN_H */

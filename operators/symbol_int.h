/*
 * symbol_int.h - the references that kept rows hold on their symbols
 * (symbol.h, "Who holds an id"). Internal: trace.c, the stateful kernels,
 * circuit.c and the runtime's edges (units/edge.c) take and drop them.
 */
#ifndef SC_SYMBOL_INT_H
#define SC_SYMBOL_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "operators/batch.h"
#include "operators/schema.h"
#include "operators/symbol.h"

/*
 * Which columns of some rows hold ids of table `tab`: bit c of `mask` for
 * column c. A kernel that stores a column complemented (topk.c keeps a
 * descending order column as ~v) sets its bit in `flip` too. tab NULL or
 * mask 0: the rows hold no symbol, and every call below does nothing.
 */
struct sc__symcols {
	struct sc_symtab *tab; /* not owned */
	uint32_t mask;	       /* columns that hold ids */
	uint32_t flip;	       /* of those, the ones stored as ~id */
};

/* The symbol columns of rows of schema s, in s's table (none when the
 * schema names no table). */
void sc__symcols_of(const struct sc_schema *s, struct sc__symcols *out);

/* The same columns after a permutation: output column i is input column
 * perm[i] (n columns), complemented where flip_cols[i] is not 0. */
void sc__symcols_permute(const struct sc__symcols *in, const uint32_t *perm,
			 const uint64_t *flip_cols, uint32_t n,
			 struct sc__symcols *out);

static inline bool
sc__symcols_any(const struct sc__symcols *s)
{
	return s->tab && s->mask;
}

/*
 * sc__symtab_check - every symbol word of b is a live id: 0, or SC_ENOENT
 * naming `fn`, the first dead id and its column (nothing held then).
 */
int sc__symtab_check(const struct sc__symcols *s, const struct sc_batch *b,
		     const char *fn);

/*
 * sc__symtab_hold / sc__symtab_unhold - add (drop) one reference per
 * symbol word of every row of b (NULL allowed), in one pass under the
 * table's locks. The ids of a hold must be live (held by whoever handed
 * the rows over); a dead one is skipped (an assert in debug builds).
 * Neither can fail: a count that would wrap saturates, which at 2^64
 * holds is a leak, not a fault.
 */
void sc__symtab_hold(const struct sc__symcols *s, const struct sc_batch *b);
void sc__symtab_unhold(const struct sc__symcols *s, const struct sc_batch *b);

/*
 * sc__symtab_unhold_merge - a and b (sorted batches of the same width)
 * are about to be replaced by their sum, which holds one reference per
 * entry as they do: drop the references of the entries the sum loses, one
 * per row found in both (two if its weights cancel). One linear walk; the
 * rows found in one only (most of them) cost a compare and no reference
 * traffic. The weights must not overflow (the merge checked).
 */
void sc__symtab_unhold_merge(const struct sc__symcols *s,
			     const struct sc_batch *a,
			     const struct sc_batch *b);

/*
 * sc__symtab_unhold_pairs - the same from the list a merge noted
 * (batch_int.h, struct sc__merge_eq): for each of a's rows at[0..n), one
 * reference per symbol word, two when the pair cancelled.
 */
void sc__symtab_unhold_pairs(const struct sc__symcols *s,
			     const struct sc_batch *a, const size_t *at,
			     size_t n);

/*
 * sc__symtab_hold_changes - for a keeper that is a table of rows (a hash
 * table, not a trace), after it applied `delta`: one reference taken for
 * each row of delta that is now kept and was not (weight_now(ctx, row) is
 * its weight after the step, not 0, and minus the delta's weight it was
 * 0), one dropped for each that was kept and is not any more. In one
 * pass. The ids must be live (the delta holds them).
 */
void sc__symtab_hold_changes(
    const struct sc__symcols *s, const struct sc_batch *delta,
    __int128 (*weight_now)(void *ctx, const uint64_t *row), void *ctx);

/* sc__symtab_unhold_slots - a table of rows letting all of them go: for
 * each of `n` slots of `stride` words, a row of `ncols` words then its
 * weight, one reference dropped per symbol word of every slot whose weight
 * is not 0 (0 marks an empty slot, as in rowhash_int.h). In one pass. */
void sc__symtab_unhold_slots(const struct sc__symcols *s, const uint64_t *slots,
			     size_t n, uint32_t stride, uint32_t ncols);

/*
 * sc__circuit_feed_held - sc_circuit_feed of b, whose ids the caller holds
 * once per symbol word in columns `held` (an edge's frame, units/edge_int.h).
 * Where those are the stream's own columns and the frame is kept as fed,
 * the circuit takes those holds as the frame's, instead of a check and a
 * hold of its own, and sets *taken: the caller then drops its reference
 * on b without unholding. Otherwise (*taken false, on every failure too)
 * the caller keeps its holds, and the circuit took its own as
 * sc_circuit_feed does. Returns as sc_circuit_feed.
 */
struct sc_circuit;
int sc__circuit_feed_held(struct sc_circuit *c, int stream, struct sc_batch *b,
			  const struct sc__symcols *held, bool *taken);

/* --- the keepers: every trace a kernel keeps holds its rows' ids --------- */

struct sc_trace;
struct sc_join;
struct sc_antijoin;
struct sc_distinct;
struct sc_aggregate;
struct sc_topk;
struct sc_multiagg;
struct sc_session;

/* sc__trace_set_symbols - the trace holds the ids of every run it keeps,
 * from now on. Only on an empty trace (asserted). */
void sc__trace_set_symbols(struct sc_trace *t, const struct sc__symcols *s);

/* The kernels' traces, from their inputs' symbol columns (in the input's
 * layout; each kernel maps them to its trace layout). Only while empty. */
void sc__join_set_symbols(struct sc_join *j, const struct sc__symcols *a,
			  const struct sc__symcols *b);
void sc__antijoin_set_symbols(struct sc_antijoin *aj,
			      const struct sc__symcols *a,
			      const struct sc__symcols *b);
void sc__distinct_set_symbols(struct sc_distinct *d,
			      const struct sc__symcols *s);
void sc__aggregate_set_symbols(struct sc_aggregate *agg,
			       const struct sc__symcols *s);
void sc__topk_set_symbols(struct sc_topk *tk, const struct sc__symcols *s);
void sc__multiagg_set_symbols(struct sc_multiagg *m,
			      const struct sc__symcols *s);
void sc__session_set_symbols(struct sc_session *s,
			     const struct sc__symcols *in);

#endif /* SC_SYMBOL_INT_H */

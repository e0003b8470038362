/*
 * circuit_wide.c - wide deltas: the cold pass of a node whose delta left
 * int64 (circuit_int.h).
 *
 * Design. A linear node's delta can leave int64 only because of how a
 * schedule grouped deltas into steps (two rows of 2^62 mapped to one
 * key), and so can a join's change (join.h). Such a delta is computed
 * again with 128-bit weights into the node's carry, and the node emits,
 * pass after pass, each row's weight clamped into int64 (sc__wide_take)
 * until the carry is empty: sc_circuit_carried says more passes are owed,
 * and each pass is a step with no new input (circuit.h). Cold: a narrow
 * step never comes here, and sc__circuit_node_run calls in only when its
 * operator overflowed or the node still carries.
 */
#include "operators/circuit_int.h"

#include <stdlib.h>

#include "operators/join.h"

/* The carried rows, holding their symbols (the frames that held them
 * let go at the next tick). */
static int
carry_hold(struct sc__node_rt *r)
{
	struct sc_batch *h = NULL;
	int rc = 0;

	if (r->carry->n)
		rc = sc_batch_from_records(r->carry->ncols, r->carry->rows,
					   NULL, r->carry->n, &h);
	if (rc)
		return rc;
	sc__symtab_hold(&r->sym, h);
	sc__symtab_unhold(&r->sym, r->carry_hold);
	sc_batch_release(r->carry_hold);
	r->carry_hold = h;
	return 0;
}

/* The node's delta again, wide, into x: only for the linear nodes whose
 * narrow sum overflowed. */
static int
wide_redo(struct sc__node_rt *r, struct sc__wide *x, struct sc_batch *a,
	  struct sc_batch *b, const struct sc_circuit *c, int rc)
{
	const struct sc__node *nd = r->nd;
	uint64_t row[SC_SCHEMA_MAX_COLS];

	switch (nd->kind) {
	case SC_NODE_MAP:
	case SC_NODE_FLAT_MAP:
		/* The failed finish left the builder as it was; an empty one
		 * means the code was the callback's own. */
		if (sc_batch_builder_count(r->bld) == 0)
			return rc;
		rc = sc__wide_add_builder(x, r->bld);
		sc_batch_builder_clear(r->bld);
		return rc;
	case SC_NODE_INDEX_BY:
		rc = 0;
		for (size_t i = 0; rc == 0 && i < a->count; i++) {
			const uint64_t *in = sc_batch_row(a, i);

			for (uint32_t k = 0; k < nd->ncols_idx; k++)
				row[k] = in[nd->cols[k]];
			rc = sc__wide_add(x, row, sc_batch_weight(a, i));
		}
		return rc;
	case SC_NODE_PLUS:
		rc = 0;
		for (uint32_t p = 0; rc == 0 && p < nd->nin; p++)
			rc = sc__wide_add_batch(x, c->rt[r->in[p]].delta, 1);
		return rc;
	case SC_NODE_NEGATE:
		return sc__wide_add_batch(x, a, -1);
	case SC_NODE_MINUS:
		rc = sc__wide_add_batch(x, a, 1);
		return rc ? rc : sc__wide_add_batch(x, b, -1);
	default:
		return rc; /* not linear: the error stands */
	}
}

__attribute__((noinline, cold)) int
sc__circuit_node_wide(struct sc_circuit *c, struct sc__node_rt *r,
		      struct sc_batch *a, struct sc_batch *b, int rc,
		      struct sc_batch **out)
{
	bool now;

	if (!r->carry) {
		r->carry = malloc(sizeof(*r->carry));
		if (!r->carry)
			return sc__fail(SC_ENOMEM,
					"sc_circuit_step: out of memory");
		sc__wide_init(r->carry, r->nd->schema.ncols);
	}
	if (rc == SC_EOVERFLOW) {
		rc = wide_redo(r, r->carry, a, b, c, rc);
		*out = NULL;
	} else if (rc == 0 && *out) {
		rc = sc__wide_add_batch(r->carry, *out, 1);
		sc_batch_release(*out);
		*out = NULL;
	}
	if (rc == 0)
		rc = sc__wide_take(r->carry, out);
	if (rc == 0)
		rc = carry_hold(r);
	if (rc)
		return rc; /* the step fails, and the circuit with it */
	now = r->carry->n != 0;
	if (now != r->carrying) {
		c->carried += now ? 1 : (size_t)-1;
		r->carrying = now;
	}
	return 0;
}

/*
 * circuit_ops.c - the step of one node of a circuit (circuit_int.h).
 *
 * Design. A step runs the part's nodes in topological order, and each
 * node's delta is a function of the deltas its ports read this tick
 * (circuit.h, step 2). sc__circuit_node_run dispatches on the node's
 * kind: the linear operators (map, filter, flat_map, index_by, plus,
 * negate, minus) are computed here from the input deltas alone; integrate
 * and differentiate keep one batch; outputs fold into their trace; the
 * stateful kinds (join, antijoin, distinct, aggregate, topk) hand their
 * deltas to their kernel, whose create, work, pending and state are
 * chosen by kind below as well, so that the kind switch lives in one
 * file. An empty delta is no batch at all, so an idle node costs a
 * branch. A delta that leaves int64 goes to the cold wide pass
 * (circuit_wide.c).
 */
#include "operators/circuit_int.h"

#include <stdlib.h>
#include <string.h>

#include "operators/aggregate.h"
#include "operators/aggregate_int.h"
#include "operators/distinct.h"
#include "operators/join.h"
#include "operators/symbol.h"
#include "operators/multiagg.h"
#include "operators/session.h"
#include "operators/topk.h"

/* --- kernels -------------------------------------------------------------- */

void
sc__circuit_kernel_destroy(enum sc_node_kind kind, void *k)
{
	switch (kind) {
	case SC_NODE_JOIN:
		sc_join_destroy(k);
		break;
	case SC_NODE_ANTIJOIN:
		sc_antijoin_destroy(k);
		break;
	case SC_NODE_DISTINCT:
		sc_distinct_destroy(k);
		break;
	case SC_NODE_AGGREGATE:
		sc_aggregate_destroy(k);
		break;
	case SC_NODE_TOPK:
		sc_topk_destroy(k);
		break;
	case SC_NODE_MULTIAGG:
		sc_multiagg_destroy(k);
		break;
	case SC_NODE_SESSION:
		sc_session_destroy(k);
		break;
	default:
		break;
	}
}

/* A time-bounded join (sc_graph_join_within): a join that keeps only the
 * pairs inside the bounds. */
static int
join_within_create(const struct sc__node *nd, uint32_t a, uint32_t b, void **k)
{
	int rc = sc_join_create(a, b, nd->key, (struct sc_join **)k);

	if (rc == 0)
		sc__join_set_within(*k, nd->w_lo, nd->w_hi, nd->w_t);
	return rc;
}

int
sc__circuit_kernel_create(const struct sc_circuit *c, const struct sc__node *nd,
			  void **k)
{
	uint32_t a = 0, b = 0;

	if (nd->nin >= 1)
		a = sc__circuit_node(c, nd->in[0])->schema.ncols;
	if (nd->nin >= 2)
		b = sc__circuit_node(c, nd->in[1])->schema.ncols;
	switch (nd->kind) {
	case SC_NODE_JOIN:
		if (nd->within)
			return join_within_create(nd, a, b, k);
		return sc_join_create(a, b, nd->key, (struct sc_join **)k);
	case SC_NODE_ANTIJOIN:
		return sc_antijoin_create(a, b, nd->key,
					  (struct sc_antijoin **)k);
	case SC_NODE_DISTINCT:
		return sc_distinct_create(a, (struct sc_distinct **)k);
	case SC_NODE_AGGREGATE:
		return sc__aggregate_create_decl(nd->spec,
						 (struct sc_aggregate **)k);
	case SC_NODE_TOPK:
		return sc_topk_create(nd->spec, (struct sc_topk **)k);
	case SC_NODE_MULTIAGG:
		return sc_multiagg_create(nd->spec, (struct sc_multiagg **)k);
	case SC_NODE_SESSION:
		return sc_session_create(nd->spec, (struct sc_session **)k);
	default:
		*k = NULL;
		return 0;
	}
}

/* A kernel's traces hold the symbols of the rows they keep, in the
 * tables of its inputs' schemas (symbol.h). */
void
sc__circuit_kernel_symbols(const struct sc_circuit *c,
			   const struct sc__node_rt *r)
{
	const struct sc__symcols *a = &c->rt[r->in[0]].sym;
	const struct sc__symcols *b =
	    r->nd->nin > 1 ? &c->rt[r->in[1]].sym : NULL;

	switch (r->nd->kind) {
	case SC_NODE_JOIN:
		sc__join_set_symbols(r->kernel, a, b);
		break;
	case SC_NODE_ANTIJOIN:
		sc__antijoin_set_symbols(r->kernel, a, b);
		break;
	case SC_NODE_DISTINCT:
		sc__distinct_set_symbols(r->kernel, a);
		break;
	case SC_NODE_AGGREGATE:
		sc__aggregate_set_symbols(r->kernel, a);
		break;
	case SC_NODE_TOPK:
		sc__topk_set_symbols(r->kernel, a);
		break;
	case SC_NODE_MULTIAGG:
		sc__multiagg_set_symbols(r->kernel, a);
		break;
	case SC_NODE_SESSION:
		sc__session_set_symbols(r->kernel, a);
		break;
	default:
		break;
	}
}

int
sc__circuit_kernel_work(enum sc_node_kind kind, void *k, size_t budget)
{
	switch (kind) {
	case SC_NODE_JOIN:
		return sc_join_work(k, budget);
	case SC_NODE_ANTIJOIN:
		return sc_antijoin_work(k, budget);
	case SC_NODE_DISTINCT:
		return sc_distinct_work(k, budget);
	case SC_NODE_AGGREGATE:
		return sc_aggregate_work(k, budget);
	case SC_NODE_TOPK:
		return sc_topk_work(k, budget);
	case SC_NODE_MULTIAGG:
		return sc_multiagg_work(k, budget);
	case SC_NODE_SESSION:
		return sc_session_work(k, budget);
	default:
		return 0;
	}
}

size_t
sc__circuit_kernel_pending(enum sc_node_kind kind, const void *k)
{
	switch (kind) {
	case SC_NODE_JOIN:
		return sc_join_pending(k);
	case SC_NODE_ANTIJOIN:
		return sc_antijoin_pending(k);
	case SC_NODE_DISTINCT:
		return sc_distinct_pending(k);
	case SC_NODE_AGGREGATE:
		return sc_aggregate_pending(k);
	case SC_NODE_TOPK:
		return sc_topk_pending(k);
	case SC_NODE_MULTIAGG:
		return sc_multiagg_pending(k);
	case SC_NODE_SESSION:
		return sc_session_pending(k);
	default:
		return 0;
	}
}

/* Rows and bytes a kernel holds. */
void
sc__circuit_kernel_state(enum sc_node_kind kind, const void *k,
			 struct sc_node_state *st)
{
	switch (kind) {
	case SC_NODE_JOIN:
		st->rows = sc_join_rows(k);
		st->bytes = sc_join_bytes(k);
		break;
	case SC_NODE_ANTIJOIN:
		st->rows = sc_antijoin_rows(k);
		st->bytes = sc_antijoin_bytes(k);
		break;
	case SC_NODE_DISTINCT:
		st->rows = sc_distinct_rows(k);
		st->bytes = sc_distinct_bytes(k);
		break;
	case SC_NODE_AGGREGATE:
		st->rows = sc_aggregate_rows(k);
		st->bytes = sc_aggregate_bytes(k);
		break;
	case SC_NODE_TOPK:
		st->rows = sc_topk_rows(k);
		st->bytes = sc_topk_bytes(k);
		break;
	case SC_NODE_MULTIAGG:
		st->rows = sc_multiagg_rows(k);
		st->bytes = sc_multiagg_bytes(k);
		break;
	case SC_NODE_SESSION:
		st->rows = sc_session_rows(k);
		st->bytes = sc_session_bytes(k);
		break;
	default:
		break;
	}
}

/* Each op_* computes *out (NULL = empty) from its inputs' deltas. */

/* Finish a builder into *out, NULL if nothing was pushed. */
static int
finish(struct sc_batch_builder *bld, struct sc_batch **out)
{
	if (sc_batch_builder_count(bld) == 0) {
		*out = NULL;
		return 0;
	}
	return sc_batch_builder_finish(bld, out);
}

static int
op_map(struct sc_circuit *c, const struct sc__node *nd, struct sc__node_rt *r,
       const struct sc_batch *in, struct sc_batch **out)
{
	int rc = sc_batch_builder_reserve(r->bld, in->count);

	for (size_t i = 0; rc == 0 && i < in->count; i++) {
		rc = sc__circuit_user_code(
		    nd->fn.map(nd->ctx, sc_batch_row(in, i), c->row));
		if (rc == 0)
			rc = sc_batch_builder_push(r->bld, c->row,
						   nd->schema.ncols,
						   sc_batch_weight(in, i));
	}
	if (rc == 0)
		return finish(r->bld, out);
	sc_batch_builder_clear(r->bld);
	return rc;
}

static int
op_filter(const struct sc__node *nd, struct sc__node_rt *r, struct sc_batch *in,
	  struct sc_batch **out)
{
	int rc = sc_batch_builder_reserve(r->bld, in->count);

	for (size_t i = 0; rc == 0 && i < in->count; i++) {
		bool keep = false;

		rc = sc__circuit_user_code(
		    nd->fn.filter(nd->ctx, sc_batch_row(in, i), &keep));
		if (rc == 0 && keep)
			rc = sc_batch_builder_push(r->bld, sc_batch_row(in, i),
						   in->ncols,
						   sc_batch_weight(in, i));
	}
	if (rc) {
		sc_batch_builder_clear(r->bld);
		return rc;
	}
	if (sc_batch_builder_count(r->bld) == in->count) {
		/* Everything kept: share the input instead of a copy. */
		sc_batch_builder_clear(r->bld);
		*out = sc_batch_retain(in);
		return 0;
	}
	return finish(r->bld, out);
}

int
sc_emit(struct sc_emitter *out, const uint64_t *row)
{
	if (!out || !row)
		return sc__fail(SC_EINVAL, "sc_emit: NULL argument");
	return sc_batch_builder_push(out->bld, row, out->ncols, out->weight);
}

int
sc_emit_own(struct sc_emitter *out, uint64_t id)
{
	struct sc__owned *o;

	if (!out || !out->symbols)
		return sc__fail(SC_EINVAL, "sc_emit_own: %s",
				out ? "the flat_map's output "
				      "schema names no "
				      "symbol table"
				    : "NULL emitter");
	if (id == SC_SYMBOL_NONE)
		return sc__fail(SC_EINVAL, "sc_emit_own: id 0 is no symbol");
	o = out->owned;
	if (o->n == o->cap) {
		size_t cap = o->cap ? o->cap * 2 : 64;
		uint64_t *v = realloc(o->ids, cap * sizeof(*v));

		if (!v)
			return sc__fail(SC_ENOMEM,
					"sc_emit_own: out of memory");
		o->ids = v;
		o->cap = cap;
	}
	o->ids[o->n++] = id;
	return 0;
}

static int
op_flat_map(const struct sc__node *nd, struct sc__node_rt *r,
	    const struct sc_batch *in, struct sc_batch **out)
{
	struct sc_emitter em = {r->bld, nd->schema.ncols, 0, &r->owned,
				nd->schema.symbols};
	int rc = 0;

	for (size_t i = 0; rc == 0 && i < in->count; i++) {
		em.weight = sc_batch_weight(in, i);
		rc = sc__circuit_user_code(
		    nd->fn.flat_map(nd->ctx, sc_batch_row(in, i), &em));
	}
	if (rc == 0)
		return finish(r->bld, out);
	sc_batch_builder_clear(r->bld);
	return rc;
}

static int
op_sum(const struct sc_circuit *c, const struct sc__node_rt *r,
       struct sc_batch **out)
{
	struct sc_batch *parts[SC_GRAPH_MAX_INPUTS];
	uint32_t k = 0;

	for (uint32_t p = 0; p < r->nd->nin; p++)
		if (c->rt[r->in[p]].delta)
			parts[k++] = c->rt[r->in[p]].delta;
	if (k == 0) {
		*out = NULL;
		return 0;
	}
	if (k == 1) {
		*out = sc_batch_retain(parts[0]);
		return 0;
	}
	return sc_batch_sum(parts, k, out);
}

static int
op_minus(struct sc_batch *a, struct sc_batch *b, struct sc_batch **out)
{
	struct sc_batch *nb;
	int rc;

	if (!b) {
		*out = a ? sc_batch_retain(a) : NULL;
		return 0;
	}
	rc = sc_batch_negate(b, &nb);
	if (rc || !a) {
		if (rc == 0)
			*out = nb;
		return rc;
	}
	rc = sc_batch_add(a, nb, out);
	sc_batch_release(nb);
	return rc;
}

/* integrate: the running sum, emitted whole every tick. */
static int
op_integrate(struct sc__node_rt *r, struct sc_batch *in, struct sc_batch **out)
{
	struct sc_batch *sum;
	int rc;

	if (in) {
		if (!r->state) {
			r->state = sc_batch_retain(in);
			sc__symtab_hold(&r->sym, in);
		} else {
			rc = sc_batch_add(r->state, in, &sum);
			if (rc)
				return rc;
			/* The new state's holds first: the old one's may be
			 * the last on an id both have. */
			sc__symtab_hold(&r->sym, sum);
			sc__symtab_unhold(&r->sym, r->state);
			sc_batch_release(r->state);
			r->state = sum;
		}
	}
	*out = r->state && r->state->count ? sc_batch_retain(r->state) : NULL;
	return 0;
}

/* differentiate: this tick's input minus the last. */
static int
op_differentiate(struct sc__node_rt *r, struct sc_batch *in,
		 struct sc_batch **out)
{
	int rc = op_minus(in, r->state, out);

	if (rc)
		return rc;
	sc__symtab_hold(&r->sym, in);
	sc__symtab_unhold(&r->sym, r->state);
	sc_batch_release(r->state);
	r->state = in ? sc_batch_retain(in) : NULL;
	return 0;
}

static int
op_output(struct sc__node_rt *r, struct sc_batch *in, struct sc_batch **out)
{
	int rc = 0;

	*out = NULL;
	if (!in)
		return 0;
	if (!r->trace) { /* a stream output: pass the delta on, keep none */
		*out = sc_batch_retain(in);
		return 0;
	}
	rc = sc_trace_insert(r->trace, in);
	if (rc)
		return rc;
	r->inserted += in->count;
	*out = sc_batch_retain(in);
	return 0;
}

static int
op_kernel(const struct sc__node *nd, struct sc__node_rt *r, struct sc_batch *a,
	  struct sc_batch *b, struct sc_batch **out)
{
	r->inserted += sc__circuit_rows(a) + sc__circuit_rows(b);
	switch (nd->kind) {
	case SC_NODE_JOIN:
		return sc_join_step(r->kernel, a, b, out);
	case SC_NODE_ANTIJOIN:
		return sc_antijoin_step(r->kernel, a, b, out);
	case SC_NODE_DISTINCT:
		return sc_distinct_step(r->kernel, a, out);
	case SC_NODE_TOPK:
		return sc_topk_step(r->kernel, a, out);
	case SC_NODE_MULTIAGG:
		return sc_multiagg_step(r->kernel, a, out);
	case SC_NODE_SESSION:
		return sc_session_step(r->kernel, a, out);
	default:
		return sc_aggregate_step(r->kernel, a, out);
	}
}

/* Add this tick's rows to the node's counters. */
static void
count_rows(const struct sc_circuit *c, struct sc__node_rt *r)
{
	uint64_t in = 0;

	for (uint32_t p = 0; p < r->nd->nin; p++)
		in += sc__circuit_rows(c->rt[r->in[p]].delta);
	r->stats.ticks_busy += in > 0;
	r->stats.rows_in += in;
	r->stats.rows_out += sc__circuit_rows(r->delta);
}

/* Run the operator of the node in slot r: set its delta for this tick. */
int
sc__circuit_node_run(struct sc_circuit *c, struct sc__node_rt *r)
{
	const struct sc__node *nd = r->nd;
	struct sc_batch *a = nd->nin > 0 ? c->rt[r->in[0]].delta : NULL;
	struct sc_batch *b = nd->nin > 1 ? c->rt[r->in[1]].delta : NULL;
	struct sc_batch *out = NULL;
	int rc = 0;

	switch (nd->kind) {
	case SC_NODE_INPUT:
	case SC_NODE_DELAY:
		return 0; /* set at the start of the tick */
	case SC_NODE_OUTPUT:
		rc = op_output(r, a, &out);
		break;
	case SC_NODE_FEEDBACK:
		out = a ? sc_batch_retain(a) : NULL;
		break;
	case SC_NODE_MAP:
		rc = a ? op_map(c, nd, r, a, &out) : 0;
		break;
	case SC_NODE_FILTER:
		rc = a ? op_filter(nd, r, a, &out) : 0;
		break;
	case SC_NODE_FLAT_MAP:
		rc = a ? op_flat_map(nd, r, a, &out) : 0;
		break;
	case SC_NODE_INDEX_BY:
		rc =
		    a ? sc_batch_index_by(a, nd->cols, nd->ncols_idx, &out) : 0;
		break;
	case SC_NODE_PLUS:
		rc = op_sum(c, r, &out);
		break;
	case SC_NODE_NEGATE:
		rc = a ? sc_batch_negate(a, &out) : 0;
		break;
	case SC_NODE_MINUS:
		rc = op_minus(a, b, &out);
		break;
	case SC_NODE_INTEGRATE:
		rc = op_integrate(r, a, &out);
		break;
	case SC_NODE_DIFFERENTIATE:
		rc = op_differentiate(r, a, &out);
		break;
	default:
		rc = op_kernel(nd, r, a, b, &out);
		break;
	}
	if (__builtin_expect(rc == SC_EOVERFLOW || (r->carry && r->carry->n),
			     0))
		rc = sc__circuit_node_wide(c, r, a, b, rc, &out);
	if (rc)
		return rc;
	if (out && out->count == 0) {
		sc_batch_release(out);
		out = NULL;
	}
	r->delta = out;
	count_rows(c, r);
	return 0;
}

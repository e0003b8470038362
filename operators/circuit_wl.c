/*
 * circuit_wl.c - a circuit's waterlines and cleanup (waterline.h,
 * circuit_int.h).
 *
 * Design. Which columns of a stream carry a waterline is static (a
 * function of the whole graph, computed at build); the values are
 * computed after each step, in the order the step ran, by each node's
 * transfer (sc__wl_transfer), inputs taking their declarations'
 * waterlines and boundary inputs what the host set. Then each kernel
 * sweeps a bounded amount of the state that its inputs' waterlines say no
 * future row can reach (the horizons below), so cleanup is spread over
 * the steps and never a stop-the-world pass. A circuit whose graph
 * declares no lateness has no waterline state and pays one branch a step.
 */
#include "operators/circuit_int.h"

#include <stdlib.h>

#include "operators/aggregate.h"
#include "operators/distinct.h"
#include "operators/join.h"
#include "operators/multiagg.h"
#include "operators/topk.h"

/*
 * The waterline state of a circuit whose graph declares lateness: every
 * slot's static columns (those of the whole graph, so a boundary input
 * carries its stream's), values "nothing known", and the declarations of
 * the part's input nodes, grouped by slot.
 */
int
sc__circuit_wl_build(struct sc_circuit *c)
{
	const struct sc_graph *g = c->g;
	uint32_t *masks = malloc((c->n + 1) * sizeof(*masks));
	int rc;

	c->wl = calloc(c->nslots, sizeof(*c->wl));
	c->wl_cols = calloc(c->nslots, sizeof(*c->wl_cols));
	c->late = calloc(g->nlate, sizeof(*c->late));
	if (!masks || !c->wl || !c->wl_cols || !c->late) {
		free(masks);
		return sc__fail(SC_ENOMEM, "sc_circuit_create: no memory");
	}
	rc = sc__wl_static(g, masks, "sc_circuit_create");
	for (size_t i = 0; rc == 0 && i < c->nslots; i++) {
		struct sc__node_rt *r = &c->rt[i];

		c->wl_cols[i] = masks[r->id];
		c->wl[i].mask = masks[r->id];
		for (uint32_t col = 0; col < SC_SCHEMA_MAX_COLS; col++)
			c->wl[i].v[col] = SC_WATERLINE_NONE;
		if (i >= c->norder || r->nd->kind != SC_NODE_INPUT)
			continue;
		r->late = c->late + c->nlate;
		for (size_t d = 0; d < g->nlate; d++)
			if (g->late[d].input == r->id)
				sc_late_init(&c->late[c->nlate++], &g->late[d]);
		r->nlate = (uint32_t)(c->late + c->nlate - r->late);
		if (r->nlate == 0)
			r->late = NULL;
	}
	free(masks);
	return rc;
}

static enum sc_type
col_type(const struct sc_circuit *c, int slot, uint32_t col)
{
	return c->rt[slot].nd->schema.types[col];
}

/* The horizon of the rows of port `side` of a join (0: a's rows, from b's
 * waterlines; 1: b's rows, from a's), see waterline.h's "Cleanup". An
 * antijoin reads b's integral for b's own deltas too (a key's presence
 * before and after), so its b-rows die only below both waterlines. */
static void
join_horizon(const struct sc_circuit *c, const struct sc__node_rt *r, int side,
	     struct sc__horizon *h)
{
	const struct sc__node *nd = r->nd;
	int mine = r->in[side], other = r->in[1 - side];
	const struct sc__wl *wo = &c->wl[other], *wm = &c->wl[mine];
	bool anti = nd->kind == SC_NODE_ANTIJOIN;

	h->n = 0;
	for (uint32_t col = 0; col < nd->key; col++) {
		int64_t v;

		if (!(wo->mask >> col & 1u))
			continue;
		v = wo->v[col];
		if (anti && side == 1) {
			if (!(wm->mask >> col & 1u))
				continue;
			v = wm->v[col] < v ? wm->v[col] : v;
		}
		sc__horizon_add(h, col, col_type(c, mine, col), v);
	}
	if (!nd->within)
		return;
	if (side == 0 && (wo->mask >> nd->w_t & 1u)) /* a.hi < W_b(t) */
		sc__horizon_add(h, nd->w_hi, col_type(c, mine, nd->w_hi),
				wo->v[nd->w_t]);
	if (side == 1 && (wo->mask >> nd->w_lo & 1u)) /* b.t < W_a(lo) */
		sc__horizon_add(h, nd->w_t, col_type(c, mine, nd->w_t),
				wo->v[nd->w_lo]);
}

/* The horizon of a one-input kernel: its input's waterlines on columns
 * [0, ncols). */
static void
unary_horizon(const struct sc_circuit *c, const struct sc__node_rt *r,
	      uint32_t ncols, struct sc__horizon *h)
{
	const struct sc__wl *w = &c->wl[r->in[0]];

	h->n = 0;
	for (uint32_t col = 0; col < ncols; col++)
		if (w->mask >> col & 1u)
			sc__horizon_add(h, col, col_type(c, r->in[0], col),
					w->v[col]);
}

/* One bounded sweep of a kernel's dead state. */
static void
kernel_sweep(const struct sc_circuit *c, struct sc__node_rt *r, size_t budget)
{
	struct sc__horizon ha, hb;

	switch (r->nd->kind) {
	case SC_NODE_JOIN:
	case SC_NODE_ANTIJOIN:
		join_horizon(c, r, 0, &ha);
		join_horizon(c, r, 1, &hb);
		if (ha.n == 0 && hb.n == 0)
			return;
		if (r->nd->kind == SC_NODE_JOIN)
			sc__join_sweep(r->kernel, &ha, &hb, budget);
		else
			sc__antijoin_sweep(r->kernel, &ha, &hb, budget);
		return;
	case SC_NODE_DISTINCT:
		unary_horizon(c, r, r->nd->schema.ncols, &ha);
		if (ha.n)
			sc__distinct_sweep(r->kernel, &ha, budget);
		return;
	case SC_NODE_AGGREGATE:
	case SC_NODE_TOPK:
	case SC_NODE_MULTIAGG:
		unary_horizon(c, r, r->nd->key, &ha);
		if (ha.n == 0)
			return;
		if (r->nd->kind == SC_NODE_AGGREGATE)
			sc__aggregate_sweep(r->kernel, &ha, budget);
		else if (r->nd->kind == SC_NODE_MULTIAGG)
			sc__multiagg_sweep(r->kernel, &ha, budget);
		else
			sc__topk_sweep(r->kernel, &ha, budget);
		return;
	default:
		return;
	}
}

/*
 * After a step: every stream's waterlines, in the order the step ran (a
 * node's inputs come first; boundary inputs keep what the host set), then
 * a bounded sweep of each kernel's dead state, about twice the rows it
 * absorbed this step and at least work_min. Sweeps cannot fail.
 */
void
sc__circuit_wl_step(struct sc_circuit *c)
{
	const struct sc__wl *in[SC_GRAPH_MAX_INPUTS];

	for (size_t i = 0; i < c->norder; i++) {
		struct sc__node_rt *r = &c->rt[i];
		struct sc__wl *w = &c->wl[i];

		if (r->role == SC__ROLE_FED) {
			for (uint32_t d = 0; d < r->nlate; d++)
				w->v[r->late[d].decl.col] =
				    sc_late_waterline(&r->late[d]);
			continue;
		}
		for (uint32_t p = 0; p < r->nd->nin; p++)
			in[p] = &c->wl[r->in[p]];
		sc__wl_transfer(c->g, r->nd, in, w);
		w->mask &= c->wl_cols[i];
	}
	/* A sweep may drop the last hold on an id that this tick's deltas
	 * still carry (a join's output names the auction a sweep lets go),
	 * and a unit hands those deltas on after the step: so they hold
	 * their ids until the next tick begins, as a fed batch's do. With
	 * no kernel there is no sweep, and nothing to hold against. */
	for (size_t i = 0; c->sweeps && !c->no_cleanup && i < c->norder; i++) {
		struct sc__node_rt *r = &c->rt[i];

		if (!r->held && r->delta && sc__symcols_any(&r->sym)) {
			sc__symtab_hold(&r->sym, r->delta);
			r->held = true;
		}
	}
	for (size_t i = 0; !c->no_cleanup && i < c->norder; i++) {
		struct sc__node_rt *r = &c->rt[i];
		size_t budget = 2 * r->inserted;

		if (!r->kernel)
			continue;
		if (budget < c->work_min)
			budget = c->work_min;
		if (budget)
			kernel_sweep(c, r, budget);
	}
}

int
sc_circuit_set_waterline(struct sc_circuit *c, int stream, uint32_t col,
			 int64_t value)
{
	struct sc__node_rt *r;
	int slot = sc__circuit_known(c, stream, "sc_circuit_set_waterline");

	if (slot < 0)
		return slot;
	r = &c->rt[slot];
	if (r->role != SC__ROLE_FED)
		return sc__fail(SC_EINVAL,
				"sc_circuit_set_waterline: '%s' is computed by "
				"this circuit, not fed",
				r->nd->name);
	if (!c->wl || col >= SC_SCHEMA_MAX_COLS ||
	    !(c->wl_cols[slot] >> col & 1u))
		return sc__fail(SC_ENOENT,
				"sc_circuit_set_waterline: '%s' carries no "
				"waterline on column %u",
				r->nd->name, col);
	if ((size_t)slot >= c->norder) { /* a boundary input */
		if (value > c->wl[slot].v[col])
			c->wl[slot].v[col] = value;
		return 0;
	}
	for (uint32_t d = 0; d < r->nlate; d++)
		if (r->late[d].decl.col == col)
			sc_late_raise(&r->late[d], value);
	return 0;
}

int
sc_circuit_waterlines(const struct sc_circuit *c, int node, uint32_t *mask,
		      int64_t *values)
{
	int slot = sc__circuit_known(c, node, "sc_circuit_waterlines");

	if (slot < 0)
		return slot;
	if (!mask)
		return sc__fail(SC_EINVAL, "sc_circuit_waterlines: mask is "
					   "NULL");
	*mask = c->wl ? c->wl[slot].mask : 0;
	for (uint32_t col = 0; values && col < SC_SCHEMA_MAX_COLS; col++)
		if (*mask >> col & 1u)
			values[col] = c->wl[slot].v[col];
	return 0;
}

int
sc_circuit_waterline(const struct sc_circuit *c, int node, uint32_t col,
		     int64_t *value)
{
	int64_t v[SC_SCHEMA_MAX_COLS];
	uint32_t mask;
	int rc = sc_circuit_waterlines(c, node, &mask, v);

	if (rc)
		return rc;
	if (!value)
		return sc__fail(SC_EINVAL, "sc_circuit_waterline: value is "
					   "NULL");
	if (col >= SC_SCHEMA_MAX_COLS || !(mask >> col & 1u))
		return sc__fail(SC_ENOENT,
				"sc_circuit_waterline: '%s' carries no "
				"waterline on column %u",
				sc__circuit_node(c, node)->name, col);
	*value = v[col];
	return 0;
}

int
sc_circuit_late(const struct sc_circuit *c, int input, uint64_t *admitted,
		uint64_t *refused)
{
	const struct sc__node_rt *r;
	uint64_t a = 0, f = 0;
	int slot = sc__circuit_known(c, input, "sc_circuit_late");

	if (slot < 0)
		return slot;
	r = &c->rt[slot];
	if (r->nd->kind != SC_NODE_INPUT || (size_t)slot >= c->norder)
		return sc__fail(SC_ENOENT,
				"sc_circuit_late: '%s' is not an input of this "
				"circuit",
				r->nd->name);
	for (uint32_t d = 0; d < r->nlate; d++) {
		a += r->late[d].admitted;
		f += r->late[d].refused;
	}
	if (admitted)
		*admitted = a;
	if (refused)
		*refused = f;
	return 0;
}

int
sc_circuit_set_cleanup(struct sc_circuit *c, bool on)
{
	if (!c)
		return sc__fail(SC_EINVAL, "sc_circuit_set_cleanup: circuit is "
					   "NULL");
	c->no_cleanup = !on;
	return 0;
}

/*
 * waterline.c - lateness declarations, the waterline transfer and the
 * submission check (see waterline.h).
 */
#include "operators/waterline.h"
#include "operators/aggregate.h"
#include "operators/graph_int.h"
#include "operators/late_int.h"
#include "operators/topk.h"
#include "operators/waterline_int.h"

#include <stdlib.h>
#include <string.h>

/* --- declaring ------------------------------------------------------------ */

static bool
time_type(enum sc_type t)
{
	return t == SC_TYPE_I64 || t == SC_TYPE_U64;
}

static int
check_graph(const struct sc_graph *g, int node, const char *fn)
{
	if (!g)
		return sc__fail(SC_EINVAL, "%s: graph is NULL", fn);
	if (__atomic_load_n(&g->circuits, __ATOMIC_ACQUIRE))
		return sc__fail(SC_EBUSY,
				"%s: the graph is frozen while circuits built "
				"from it are alive",
				fn);
	if (node < 0 || (size_t)node >= g->n)
		return sc__fail(SC_ENOENT, "%s: no node %d (graph has %zu)", fn,
				node, g->n);
	return 0;
}

static int
check_time_col(const struct sc_graph *g, int node, const struct sc_schema *s,
	       uint32_t col, const char *fn)
{
	if (col >= s->ncols)
		return sc__fail(SC_ESCHEMA,
				"%s: column %u of '%s' does not exist (%u "
				"columns)",
				fn, col, g->nodes[node].name, s->ncols);
	if (!time_type(s->types[col]))
		return sc__fail(
		    SC_ETYPE, "%s: column %u of '%s' is %s, want i64 or u64",
		    fn, col, g->nodes[node].name, sc_type_name(s->types[col]));
	return 0;
}

int
sc_graph_lateness(struct sc_graph *g, int input, uint32_t col, int64_t lateness,
		  unsigned flags)
{
	const char *fn = "sc_graph_lateness";
	struct sc_lateness *d;
	int rc = check_graph(g, input, fn);

	if (rc)
		return rc;
	if (lateness < 0 || (flags & ~SC_LATE_ADMIT))
		return sc__fail(SC_EINVAL,
				"%s: lateness %lld, flags %#x: want lateness "
				">= 0 and flags 0 or SC_LATE_ADMIT",
				fn, (long long)lateness, flags);
	if (g->nodes[input].kind != SC_NODE_INPUT)
		return sc__fail(SC_ESCHEMA,
				"%s: '%s' is a %s node, not an input", fn,
				g->nodes[input].name,
				sc_node_kind_name(g->nodes[input].kind));
	rc = check_time_col(g, input, &g->nodes[input].schema, col, fn);
	if (rc)
		return rc;
	for (size_t i = 0; i < g->nlate; i++)
		if (g->late[i].input == input && g->late[i].col == col)
			return sc__fail(SC_EINVAL,
					"%s: column %u of '%s' already has a "
					"lateness",
					fn, col, g->nodes[input].name);
	if (g->nlate == g->late_cap) {
		size_t cap = g->late_cap ? 2 * g->late_cap : 4;

		d = realloc(g->late, cap * sizeof(*d));
		if (!d)
			return sc__fail(SC_ENOMEM, "%s: no memory", fn);
		g->late = d;
		g->late_cap = cap;
	}
	d = &g->late[g->nlate++];
	d->input = input;
	d->col = col;
	d->lateness = lateness;
	d->flags = flags;
	d->is_signed = g->nodes[input].schema.types[col] == SC_TYPE_I64;
	return 0;
}

static int
add_mono(struct sc_graph *g, int node, uint32_t out_col, uint32_t in_col,
	 sc_monotone_fn fn, void *ctx, int64_t offset, const char *who)
{
	struct sc__node *nd;
	struct sc__mono *m;
	int rc = check_graph(g, node, who);

	if (rc)
		return rc;
	nd = &g->nodes[node];
	if (nd->kind != SC_NODE_MAP && nd->kind != SC_NODE_FLAT_MAP)
		return sc__fail(SC_EINVAL, "%s: '%s' is a %s node, not a map",
				who, nd->name, sc_node_kind_name(nd->kind));
	rc = check_time_col(g, node, &nd->schema, out_col, who);
	if (rc == 0)
		rc = check_time_col(g, nd->in[0], &g->nodes[nd->in[0]].schema,
				    in_col, who);
	if (rc)
		return rc;
	for (uint32_t i = 0; i < nd->nmono; i++)
		if (nd->mono[i].out_col == out_col)
			return sc__fail(SC_EINVAL,
					"%s: column %u of '%s' is already "
					"declared monotone",
					who, out_col, nd->name);
	m = realloc(nd->mono, (nd->nmono + 1) * sizeof(*m));
	if (!m)
		return sc__fail(SC_ENOMEM, "%s: no memory", who);
	nd->mono = m;
	m[nd->nmono++] = (struct sc__mono){out_col, in_col, fn, ctx, offset};
	return 0;
}

int
sc_graph_monotone(struct sc_graph *g, int node, uint32_t out_col,
		  uint32_t in_col, sc_monotone_fn fn, void *ctx)
{
	if (!fn)
		return sc__fail(SC_EINVAL, "sc_graph_monotone: fn is NULL");
	return add_mono(g, node, out_col, in_col, fn, ctx, 0,
			"sc_graph_monotone");
}

int
sc_graph_monotone_offset(struct sc_graph *g, int node, uint32_t out_col,
			 uint32_t in_col, int64_t offset)
{
	return add_mono(g, node, out_col, in_col, NULL, NULL, offset,
			"sc_graph_monotone_offset");
}

size_t
sc_graph_lateness_count(const struct sc_graph *g)
{
	return g ? g->nlate : 0;
}

int
sc_graph_lateness_get(const struct sc_graph *g, size_t i,
		      struct sc_lateness *out)
{
	if (!g || !out)
		return sc__fail(SC_EINVAL,
				"sc_graph_lateness_get: NULL argument");
	if (i >= g->nlate)
		return sc__fail(SC_ENOENT,
				"sc_graph_lateness_get: no declaration %zu "
				"(graph has %zu)",
				i, g->nlate);
	*out = g->late[i];
	return 0;
}

/* --- transfer ------------------------------------------------------------- */

static int64_t
min64(int64_t a, int64_t b)
{
	return a < b ? a : b;
}

static int64_t
clamp128(__int128 v)
{
	if (v < INT64_MIN)
		return INT64_MIN;
	if (v > INT64_MAX)
		return INT64_MAX;
	return (int64_t)v;
}

static bool
has(const struct sc__wl *w, uint32_t col)
{
	return w && (w->mask >> col & 1u);
}

static void
put(struct sc__wl *out, uint32_t col, int64_t v)
{
	out->mask |= 1u << col;
	out->v[col] = v;
}

/* The input declarations of node id. */
static void
xfer_input(const struct sc_graph *g, const struct sc__node *nd,
	   struct sc__wl *out)
{
	int id = (int)(nd - g->nodes);

	for (size_t i = 0; i < g->nlate; i++)
		if (g->late[i].input == id)
			put(out, g->late[i].col, SC_WATERLINE_NONE);
}

static void
xfer_mono(const struct sc__node *nd, const struct sc__wl *in,
	  struct sc__wl *out)
{
	for (uint32_t i = 0; i < nd->nmono; i++) {
		const struct sc__mono *m = &nd->mono[i];
		int64_t w;

		if (!has(in, m->in_col))
			continue;
		w = in->v[m->in_col];
		if (w != SC_WATERLINE_NONE)
			w = m->fn ? m->fn(m->ctx, w)
				  : clamp128((__int128)w + m->offset);
		put(out, m->out_col, w);
	}
}

/* A window: the input's columns, and the start column from the time's
 * waterline: the smallest start s (a multiple of hop) with s + width > W,
 * since a row at t >= W only falls in windows that end after t. */
static void
xfer_window(const struct sc__node *nd, const struct sc__wl *in,
	    struct sc__wl *out)
{
	uint32_t start = nd->schema.ncols - 1;
	__int128 x, q, hop = nd->win_hop;

	if (!in)
		return;
	*out = *in;
	out->mask &= (1u << start) - 1u;
	if (!has(in, nd->win_col))
		return;
	if (in->v[nd->win_col] == SC_WATERLINE_NONE) {
		put(out, start, SC_WATERLINE_NONE);
		return;
	}
	x = (__int128)in->v[nd->win_col] - nd->win_width; /* s > x */
	q = x / hop;
	if (x % hop != 0 && x < 0)
		q--;
	put(out, start, clamp128((q + 1) * hop));
}

static void
xfer_index(const struct sc__node *nd, const struct sc__wl *in,
	   struct sc__wl *out)
{
	for (uint32_t i = 0; i < nd->ncols_idx; i++)
		if (has(in, nd->cols[i]))
			put(out, i, in->v[nd->cols[i]]);
}

/* Per column the min over every port (none where a port lacks it). */
static void
xfer_min(const struct sc__node *nd, const struct sc__wl *const *in,
	 struct sc__wl *out)
{
	uint32_t mask = UINT32_MAX;

	for (uint32_t p = 0; p < nd->nin; p++)
		mask &= in[p] ? in[p]->mask : 0;
	for (uint32_t c = 0; c < nd->schema.ncols; c++) {
		int64_t v = INT64_MAX;

		if (!(mask >> c & 1u))
			continue;
		for (uint32_t p = 0; p < nd->nin; p++)
			v = min64(v, in[p]->v[c]);
		put(out, c, v);
	}
}

static void
xfer_join(const struct sc_graph *g, const struct sc__node *nd,
	  const struct sc__wl *a, const struct sc__wl *b, struct sc__wl *out)
{
	uint32_t na = g->nodes[nd->in[0]].schema.ncols;
	int64_t v;

	for (uint32_t c = 0; c < nd->key; c++)
		if (has(a, c) && has(b, c))
			put(out, c, min64(a->v[c], b->v[c]));
	if (!nd->within || !has(a, nd->w_lo) || !has(b, nd->w_t))
		return;
	/* A pair from a new a-row has hi >= t >= lo >= W_a(lo); one from a
	 * new b-row has hi >= t >= W_b(t). */
	v = min64(a->v[nd->w_lo], b->v[nd->w_t]);
	if (nd->kind == SC_NODE_JOIN) {
		put(out, nd->w_hi, v);
		put(out, na + nd->w_t - nd->key, v);
	}
}

/* The group key's columns pass. */
static void
xfer_key(const struct sc__wl *in, uint32_t k, struct sc__wl *out)
{
	for (uint32_t c = 0; c < k; c++)
		if (has(in, c))
			put(out, c, in->v[c]);
}

void
sc__wl_transfer(const struct sc_graph *g, const struct sc__node *nd,
		const struct sc__wl *const *in, struct sc__wl *out)
{
	const struct sc__wl *a = nd->nin > 0 ? in[0] : NULL;
	const struct sc__wl *b = nd->nin > 1 ? in[1] : NULL;

	out->mask = 0;
	switch (nd->kind) {
	case SC_NODE_INPUT:
		xfer_input(g, nd, out);
		break;
	case SC_NODE_OUTPUT:
	case SC_NODE_FILTER:
	case SC_NODE_DISTINCT:
	case SC_NODE_NEGATE:
	case SC_NODE_FEEDBACK:
		if (a)
			*out = *a;
		break;
	case SC_NODE_MAP:
		xfer_mono(nd, a, out);
		break;
	case SC_NODE_FLAT_MAP:
		if (nd->window)
			xfer_window(nd, a, out);
		else
			xfer_mono(nd, a, out);
		break;
	case SC_NODE_INDEX_BY:
		xfer_index(nd, a, out);
		break;
	case SC_NODE_PLUS:
	case SC_NODE_MINUS:
		xfer_min(nd, in, out);
		break;
	case SC_NODE_JOIN:
	case SC_NODE_ANTIJOIN:
		xfer_join(g, nd, a, b, out);
		break;
	case SC_NODE_AGGREGATE:
	case SC_NODE_TOPK:
	case SC_NODE_MULTIAGG:
	case SC_NODE_SESSION:
		xfer_key(a, nd->key, out);
		break;
	default: /* integrate, differentiate, delay: none */
		break;
	}
	/* Only time columns carry a waterline (a monotone map's own check
	 * aside, everything above preserves types). */
	for (uint32_t c = 0; c < nd->schema.ncols; c++)
		if (!time_type(nd->schema.types[c]))
			out->mask &= ~(1u << c);
	out->mask &=
	    nd->schema.ncols >= 32 ? UINT32_MAX : (1u << nd->schema.ncols) - 1u;
}

int
sc__wl_static(const struct sc_graph *g, uint32_t *masks, const char *who)
{
	struct sc__wl *wl = NULL;
	const struct sc__wl *in[SC_GRAPH_MAX_INPUTS];
	bool *all = NULL;
	int *order = NULL;
	size_t n = 0;
	int rc = 0;

	memset(masks, 0, g->n * sizeof(*masks));
	if (g->nlate == 0)
		return 0;
	wl = calloc(g->n, sizeof(*wl));
	all = malloc(g->n * sizeof(*all));
	order = malloc(g->n * sizeof(*order));
	if (!wl || !all || !order) {
		rc = sc__fail(SC_ENOMEM, "%s: no memory", who);
		goto out_free;
	}
	for (size_t i = 0; i < g->n; i++)
		all[i] = true;
	rc = sc__graph_topo(g, all, order, &n, who);
	for (size_t i = 0; rc == 0 && i < n; i++) {
		const struct sc__node *nd = &g->nodes[order[i]];

		for (uint32_t p = 0; p < nd->nin; p++)
			in[p] = nd->in[p] >= 0 ? &wl[nd->in[p]] : NULL;
		sc__wl_transfer(g, nd, in, &wl[order[i]]);
		masks[order[i]] = wl[order[i]].mask;
	}
out_free:
	free(wl);
	free(all);
	free(order);
	return rc;
}

int
sc_graph_waterline_cols(const struct sc_graph *g, int node, uint32_t *mask)
{
	uint32_t *masks;
	int rc;

	if (!g || !mask)
		return sc__fail(SC_EINVAL,
				"sc_graph_waterline_cols: NULL argument");
	if (node < 0 || (size_t)node >= g->n)
		return sc__fail(SC_ENOENT,
				"sc_graph_waterline_cols: no node %d", node);
	masks = malloc(g->n * sizeof(*masks));
	if (!masks)
		return sc__fail(SC_ENOMEM,
				"sc_graph_waterline_cols: no memory");
	rc = sc__wl_static(g, masks, "sc_graph_waterline_cols");
	if (rc == 0)
		*mask = masks[node];
	free(masks);
	return rc;
}

/* --- checking a submission ------------------------------------------------ */

void
sc_late_init(struct sc_late *l, const struct sc_lateness *decl)
{
	if (!l)
		return;
	memset(l, 0, sizeof(*l));
	if (decl)
		l->decl = *decl;
	l->raised = SC_WATERLINE_NONE;
}

int64_t
sc_late_waterline(const struct sc_late *l)
{
	int64_t w = SC_WATERLINE_NONE;

	if (!l)
		return SC_WATERLINE_NONE;
	if (l->seen)
		w = clamp128((__int128)l->max - l->decl.lateness);
	return w > l->raised ? w : l->raised;
}

static int64_t
value_of(const struct sc_late *l, const uint64_t *row)
{
	return sc__wl_value(l->decl.is_signed ? SC_TYPE_I64 : SC_TYPE_U64,
			    row[l->decl.col]);
}

size_t
sc_late_count(const struct sc_late *l, const struct sc_batch *b, size_t *first)
{
	int64_t w = sc_late_waterline(l);
	size_t n = 0;

	if (w == SC_WATERLINE_NONE || !b)
		return 0;
	for (size_t i = 0; i < sc_batch_count(b); i++) {
		if (value_of(l, sc_batch_row(b, i)) >= w)
			continue;
		if (n++ == 0 && first)
			*first = i;
	}
	return n;
}

int
sc_late_refuse(struct sc_late *l, const struct sc_batch *b, size_t nlate,
	       size_t first, const char *who, const char *name)
{
	if (!who)
		who = "sc_late_refuse";
	if (!l || !b)
		return sc__fail(SC_EINVAL, "%s: sc_late_refuse: NULL %s", who,
				!l ? "tracker" : "batch");
	/* `first` is read from b below: a row b does not have is the
	 * caller's error, not a late row. */
	if (first >= sc_batch_count(b))
		return sc__fail(SC_EINVAL,
				"%s: sc_late_refuse: first late row %zu of a "
				"batch of %zu",
				who, first, sc_batch_count(b));
	l->refused += nlate;
	return sc__fail(
	    SC_ELATE,
	    "%s: %zu late row%s of %zu on column %u%s%s%s: the "
	    "first, row %zu, has %lld below the waterline %lld "
	    "(lateness %lld); nothing applied",
	    who, nlate, nlate == 1 ? "" : "s", sc_batch_count(b), l->decl.col,
	    name ? " of '" : "", name ? name : "", name ? "'" : "", first,
	    (long long)value_of(l, sc_batch_row(b, first)),
	    (long long)sc_late_waterline(l), (long long)l->decl.lateness);
}

void
sc_late_advance(struct sc_late *l, const struct sc_batch *b, size_t nlate)
{
	if (!l || !b)
		return;
	for (size_t i = 0; i < sc_batch_count(b); i++) {
		int64_t v = value_of(l, sc_batch_row(b, i));

		if (!l->seen || v > l->max)
			l->max = v;
		l->seen = true;
	}
	l->admitted += nlate;
}

void
sc_late_raise(struct sc_late *l, int64_t value)
{
	if (l && value > l->raised)
		l->raised = value;
}

int
sc_late_submit(struct sc_late *l, const struct sc_batch *b, const char *who,
	       const char *name)
{
	size_t first = 0, n;

	if (!l || !b)
		return sc__fail(SC_EINVAL, "%s: sc_late_submit: NULL %s",
				who ? who : "sc_late_submit",
				!l ? "tracker" : "batch");
	n = sc_late_count(l, b, &first);
	if (n && !(l->decl.flags & SC_LATE_ADMIT))
		return sc_late_refuse(l, b, n, first, who, name);
	sc_late_advance(l, b, n);
	return 0;
}

int
sc__late_check(struct sc_late *l, size_t n, const struct sc_batch *b,
	       size_t *nlate, const char *who, const char *name)
{
	for (size_t i = 0; i < n; i++) {
		size_t first = 0, k = sc_late_count(&l[i], b, &first);

		if (nlate)
			nlate[i] = k;
		if (k && !(l[i].decl.flags & SC_LATE_ADMIT))
			return sc_late_refuse(&l[i], b, k, first, who, name);
	}
	return 0;
}

void
sc__late_advance(struct sc_late *l, size_t n, const struct sc_batch *b,
		 const size_t *nlate)
{
	for (size_t i = 0; i < n; i++)
		sc_late_advance(
		    &l[i], b, nlate ? nlate[i] : sc_late_count(&l[i], b, NULL));
}

/*
 * circuit.c - the synchronous circuit: build a part of a graph, run ticks
 * (see circuit.h for the design).
 */
#include "operators/circuit.h"
#include "operators/aggregate.h"
#include "operators/aggregate_int.h"
#include "operators/batch_int.h"
#include "operators/distinct.h"
#include "operators/graph_int.h"
#include "operators/join.h"
#include "operators/probe_int.h"
#include "operators/symbol_int.h"
#include "operators/topk.h"
#include "operators/trace.h"
#include "operators/waterline_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WORK_MIN_DEFAULT 256

/* What a stream is to this circuit. */
enum role {
	ROLE_FED = 1, /* an input node or a boundary input: fed by the host */
	ROLE_OP = 2   /* computed by an operator of the part */
};

/*
 * The run-time state of one stream the circuit knows, in a slot of its
 * own. The slots are dense: first the part's nodes in the order a step runs
 * them, then the boundary inputs. So a step touches the part's slots and
 * nothing else, and costs O(part) whatever the size of the graph it was cut
 * from (with K units, each step would otherwise pay for all K parts).
 */
struct rt {
	const struct sc__node *nd;    /* the graph's node (frozen) */
	const int *in;		      /* slot of the stream at each port */
	int id;			      /* the node's id in the graph */
	uint8_t role;		      /* enum role */
	struct sc_batch *delta;	      /* this tick's delta; NULL = empty */
	struct sc_batch **frames;     /* fed since the last step, in order */
	size_t nframes, frames_cap;   /* frames held, room */
	uint64_t fmass;		      /* sum of |w| over frames, saturating */
	struct sc_batch *state;	      /* integrate: the integral; differentiate:
				       * last input; delay: the latched input */
	struct sc_trace *trace;	      /* output: the integral of its deltas */
	void *kernel;		      /* join/antijoin/distinct/aggregate */
	struct sc_batch_builder *bld; /* map/filter/flat_map: the circuit's
				       * builder for its width (shared) */
	size_t inserted;	      /* rows absorbed by state this tick */
	uint64_t total;		      /* rows absorbed so far (bounds N) */
	struct sc_node_stats stats;   /* rows read and written */
	sc_delta_fn cb;		      /* delta callback, or NULL */
	void *cb_ctx;		      /* its context */
	struct sc__symcols sym;	      /* the symbol columns of its rows */
	bool held;		      /* its delta holds its symbols */
	struct sc_late *late;	      /* input: its lateness declarations
				       * (in c->late), or NULL */
	uint32_t nlate;		      /* how many */
	bool carrying;		      /* counted in c->carried */
	struct sc__wide *carry;	      /* weight this node still owes its
				       * output, for the next passes (issue
				       * 14, bug 21), or NULL */
	struct sc_batch *carry_hold;  /* carry's rows, holding symbols */
};

struct sc_circuit {
	struct sc_graph *g; /* frozen while the circuit lives */
	size_t n;	    /* graph nodes (ids 0..n-1) */
	struct rt *rt;	    /* nslots of them: the part, then cut.in */
	size_t norder;	    /* nodes in the part (slots 0..norder-1) */
	size_t nslots;	    /* norder + cut.nin */
	int *by_id;	    /* the slots, sorted by node id (lookups) */
	int *ports;	    /* every rt[].in, end to end */
	struct sc_cut cut;  /* the part's boundary */
	size_t work_min;    /* least merge work per trace per step */
	uint64_t steps;	    /* ticks run */
	int failed;	    /* 0, or the code of the step that failed */
	char why[256];	    /* the message of that failure */
	uint64_t *row;	    /* a scratch row of SC_SCHEMA_MAX_COLS words */
	/* One builder per row width, shared by the nodes that build batches
	 * of that width: nodes run one at a time and a builder is empty
	 * between uses, so sharing keeps one set of warm buffers in cache
	 * instead of one per node. */
	struct sc_batch_builder *bld[SC_SCHEMA_MAX_COLS + 1];
	/* Waterlines (waterline.h): NULL unless the graph declares a
	 * lateness, so a circuit without one pays a branch per step. */
	struct sc__wl *wl;    /* nslots of them: each stream's, after the
			       * last step */
	uint32_t *wl_cols;    /* nslots: the columns each carries */
	struct sc_late *late; /* the part's inputs' declarations */
	size_t nlate;	      /* how many */
	bool no_cleanup;      /* sc_circuit_set_cleanup(c, false) */
	size_t carried;	      /* nodes whose carry is not empty */
};

static const struct sc__node *
node_of(const struct sc_circuit *c, int id)
{
	return &c->g->nodes[id];
}

/* --- kernels -------------------------------------------------------------- */

static void
kernel_destroy(enum sc_node_kind kind, void *k)
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

static int
kernel_create(const struct sc_circuit *c, const struct sc__node *nd, void **k)
{
	uint32_t a = 0, b = 0;

	if (nd->nin >= 1)
		a = node_of(c, nd->in[0])->schema.ncols;
	if (nd->nin >= 2)
		b = node_of(c, nd->in[1])->schema.ncols;
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
	default:
		*k = NULL;
		return 0;
	}
}

/* A kernel's traces hold the symbols of the rows they keep, in the
 * tables of its inputs' schemas (symbol.h). */
static void
kernel_symbols(const struct sc_circuit *c, const struct rt *r)
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
	default:
		break;
	}
}

static int
kernel_work(enum sc_node_kind kind, void *k, size_t budget)
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
	default:
		return 0;
	}
}

static size_t
kernel_pending(enum sc_node_kind kind, const void *k)
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
	default:
		return 0;
	}
}

/* Rows and bytes a kernel holds. */
static void
kernel_state(enum sc_node_kind kind, const void *k, struct sc_node_state *st)
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
	default:
		break;
	}
}

/* --- build ---------------------------------------------------------------- */

/* The circuit's shared builder for rows of ncols columns, made on first
 * use. */
static int
builder_for(struct sc_circuit *c, uint32_t ncols, struct sc_batch_builder **out)
{
	struct sc_batch_builder *b = c->bld[ncols];
	int rc;

	if (!b) {
		b = malloc(sizeof(*b));
		if (!b)
			return sc__fail(SC_ENOMEM, "sc_circuit_create: no "
						   "memory");
		rc = sc_batch_builder_init(b, ncols);
		if (rc) {
			free(b);
			return rc;
		}
		c->bld[ncols] = b;
	}
	*out = b;
	return 0;
}

/* Allocate the state the part's node in slot `slot` needs. */
static int
rt_init(struct sc_circuit *c, size_t slot)
{
	struct rt *r = &c->rt[slot];
	const struct sc__node *nd = r->nd;

	int rc;

	r->role = nd->kind == SC_NODE_INPUT ? ROLE_FED : ROLE_OP;
	/* A fed batch holds its symbols from sc_circuit_feed to the tick
	 * after the one that emitted it, a delay's from its latch on. */
	r->held = r->role == ROLE_FED || nd->kind == SC_NODE_DELAY;
	switch (nd->kind) {
	case SC_NODE_OUTPUT:
		/* A stream output keeps nothing: no trace (graph.h). */
		if (nd->stream)
			return 0;
		rc = sc_trace_create(nd->schema.ncols, &r->trace);
		if (rc == 0)
			sc__trace_set_symbols(r->trace, &r->sym);
		return rc;
	case SC_NODE_MAP:
	case SC_NODE_FILTER:
	case SC_NODE_FLAT_MAP:
		return builder_for(c, nd->schema.ncols, &r->bld);
	default:
		rc = kernel_create(c, nd, &r->kernel);
		if (rc == 0 && r->kernel)
			kernel_symbols(c, r);
		if (rc == 0 && (nd->kind == SC_NODE_JOIN ||
				nd->kind == SC_NODE_ANTIJOIN)) {
			/* A change past int64 is emitted over passes. */
			r->carry = malloc(sizeof(*r->carry));
			if (!r->carry)
				return sc__fail(SC_ENOMEM,
						"sc_circuit_create: out of "
						"memory");
			sc__wide_init(r->carry, nd->schema.ncols);
			if (nd->kind == SC_NODE_JOIN)
				sc__join_set_spill(r->kernel, r->carry);
			else
				sc__antijoin_set_spill(r->kernel, r->carry);
		}
		return rc;
	}
}

static void
rt_fini(struct rt *r)
{
	if (r->held)
		sc__symtab_unhold(&r->sym, r->delta);
	sc__symtab_unhold(&r->sym, r->state); /* integrate, differentiate,
					       * delay */
	sc_batch_release(r->delta);
	for (size_t i = 0; i < r->nframes; i++) {
		sc__symtab_unhold(&r->sym, r->frames[i]);
		sc_batch_release(r->frames[i]);
	}
	free(r->frames);
	sc_batch_release(r->state);
	sc__symtab_unhold(&r->sym, r->carry_hold);
	sc_batch_release(r->carry_hold);
	sc__wide_fini(r->carry);
	free(r->carry);
	sc_trace_destroy(r->trace);
	if (r->kernel)
		kernel_destroy(r->nd->kind, r->kernel);
	memset(r, 0, sizeof(*r)); /* r->bld is the circuit's */
}

void
sc_circuit_destroy(struct sc_circuit *c)
{
	if (!c)
		return;
	if (c->rt)
		for (size_t i = 0; i < c->nslots; i++)
			rt_fini(&c->rt[i]);
	sc__graph_thaw(c->g);
	sc_cut_fini(&c->cut);
	free(c->rt);
	free(c->by_id);
	free(c->ports);
	free(c->row);
	free(c->wl);
	free(c->wl_cols);
	free(c->late);
	for (size_t i = 0; i <= SC_SCHEMA_MAX_COLS; i++) {
		if (!c->bld[i])
			continue;
		sc_batch_builder_fini(c->bld[i]);
		free(c->bld[i]);
	}
	free(c);
}

/* The slot of stream `id`, or -1 if the circuit neither computes nor reads
 * it: a binary search of by_id, O(log part). */
static int
slot_of(const struct sc_circuit *c, int id)
{
	size_t lo = 0, hi = c->nslots;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int at = c->rt[c->by_id[mid]].id;

		if (at == id)
			return c->by_id[mid];
		if (at < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

/*
 * Index the slots by id and point every port of the part's nodes at the
 * slot of the stream it reads (in the part or a boundary input, so it has
 * one). slot_at, of the graph's size, maps ids to slots for the build only:
 * the circuit keeps O(part) state and looks ids up in by_id.
 */
static void
index_slots(struct sc_circuit *c, int *slot_at)
{
	size_t k = 0;

	for (size_t id = 0; id < c->n; id++)
		slot_at[id] = -1;
	for (size_t i = 0; i < c->nslots; i++)
		slot_at[c->rt[i].id] = (int)i;
	for (size_t id = 0; id < c->n; id++)
		if (slot_at[id] >= 0)
			c->by_id[k++] = slot_at[id];
	k = 0;
	for (size_t i = 0; i < c->norder; i++) {
		const struct sc__node *nd = node_of(c, c->rt[i].id);

		c->rt[i].in = c->ports + k;
		for (uint32_t p = 0; p < nd->nin; p++)
			c->ports[k++] = slot_at[nd->in[p]];
	}
}

/* Fill the slots: the part in topological order, then the boundary
 * inputs. */
static void
fill_slots(struct sc_circuit *c, const int *order)
{
	for (size_t i = 0; i < c->nslots; i++) {
		int id = i < c->norder ? order[i] : c->cut.in[i - c->norder];

		c->rt[i].id = id;
		c->rt[i].nd = node_of(c, id);
		c->rt[i].role = ROLE_FED; /* the part's nodes: set by rt_init */
		c->rt[i].held = true;
		sc__symcols_of(&c->rt[i].nd->schema, &c->rt[i].sym);
	}
}

/* The ports of the part's nodes, all together. */
static size_t
count_ports(const struct sc_circuit *c, const int *order)
{
	size_t nports = 0;

	for (size_t i = 0; i < c->norder; i++)
		nports += node_of(c, order[i])->nin;
	return nports;
}

/*
 * The waterline state of a circuit whose graph declares lateness: every
 * slot's static columns (those of the whole graph, so a boundary input
 * carries its stream's), values "nothing known", and the declarations of
 * the part's input nodes, grouped by slot.
 */
static int
wl_build(struct sc_circuit *c)
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
		struct rt *r = &c->rt[i];

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

/* Topological order of the part, its slots and their state. */
static int
circuit_build(struct sc_circuit *c, const int *nodes, size_t n)
{
	bool *in_part = calloc(c->n + 1, sizeof(bool));
	int *order = malloc((c->n + 1) * sizeof(int));
	int rc;

	if (!in_part || !order) {
		rc = sc__fail(SC_ENOMEM, "sc_circuit_create: no memory");
		goto out_free;
	}
	for (size_t i = 0; i < n; i++)
		in_part[nodes[i]] = true;
	rc = sc__graph_topo(c->g, in_part, order, &c->norder,
			    "sc_circuit_create");
	if (rc)
		goto out_free;
	c->nslots = c->norder + c->cut.nin;
	c->rt = calloc(c->nslots, sizeof(*c->rt));
	c->by_id = malloc(c->nslots * sizeof(int));
	c->ports = malloc((count_ports(c, order) + 1) * sizeof(int));
	if (!c->rt || !c->by_id || !c->ports) {
		rc = sc__fail(SC_ENOMEM, "sc_circuit_create: no memory");
		goto out_free;
	}
	fill_slots(c, order);
	index_slots(c, order); /* the order is in the slots: reuse its room */
	for (size_t i = 0; rc == 0 && i < c->norder; i++)
		rc = rt_init(c, i);
	if (rc == 0 && c->g->nlate)
		rc = wl_build(c);
out_free:
	free(in_part);
	free(order);
	return rc;
}

int
sc_circuit_create_part(struct sc_graph *g, const int *nodes, size_t n,
		       struct sc_circuit **out)
{
	struct sc_circuit *c;
	int rc;

	if (!g || !nodes || !out || n == 0)
		return sc__fail(SC_EINVAL, "sc_circuit_create: NULL argument "
					   "or empty part");
	c = calloc(1, sizeof(*c));
	if (!c)
		return sc__fail(SC_ENOMEM, "sc_circuit_create: no memory");
	c->g = g;
	sc__graph_freeze(g);
	c->n = g->n;
	c->work_min = WORK_MIN_DEFAULT;
	rc = sc_graph_cut(g, nodes, n, &c->cut);
	if (rc)
		goto out_circuit;
	c->row = malloc(SC_SCHEMA_MAX_COLS * sizeof(uint64_t));
	if (!c->row) {
		rc = sc__fail(SC_ENOMEM, "sc_circuit_create: no memory");
		goto out_circuit;
	}
	rc = circuit_build(c, nodes, n);
	if (rc)
		goto out_circuit;
	*out = c;
	return 0;
out_circuit:
	sc_circuit_destroy(c);
	return rc;
}

int
sc_circuit_create(struct sc_graph *g, struct sc_circuit **out)
{
	int *all;
	int rc;

	if (!g || !out)
		return sc__fail(SC_EINVAL, "sc_circuit_create: NULL argument");
	if (g->n == 0)
		return sc__fail(SC_EINVAL, "sc_circuit_create: the graph has "
					   "no node");
	all = malloc(g->n * sizeof(int));
	if (!all)
		return sc__fail(SC_ENOMEM, "sc_circuit_create: no memory");
	for (size_t i = 0; i < g->n; i++)
		all[i] = (int)i;
	rc = sc_circuit_create_part(g, all, g->n, out);
	free(all);
	return rc;
}

const struct sc_cut *
sc_circuit_cut(const struct sc_circuit *c)
{
	return c ? &c->cut : NULL;
}

uint64_t
sc_circuit_steps(const struct sc_circuit *c)
{
	return c ? c->steps : 0;
}

/* --- feeding and reading -------------------------------------------------- */

/* The slot (>= 0) of stream `id` if the circuit knows it, else a negative
 * error code. */
static int
known(const struct sc_circuit *c, int id, const char *fn)
{
	int slot;

	if (!c)
		return sc__fail(SC_EINVAL, "%s: circuit is NULL", fn);
	if (id < 0 || (size_t)id >= c->n)
		return sc__fail(SC_ENOENT, "%s: no node %d (graph has %zu)", fn,
				id, c->n);
	slot = slot_of(c, id);
	if (slot < 0)
		return sc__fail(SC_ENOENT,
				"%s: node '%s' is not read or computed by "
				"this circuit",
				fn, node_of(c, id)->name);
	return slot;
}

/*
 * The frames of a turn are gathered, not merged one by one: merging each
 * frame into a running sum costs O(rows so far) per frame, O(rows * b) for
 * a turn of b frames (half a closed-loop grid run's instructions went
 * there). The step sums them once (frames_sum). A feed must still refuse
 * a frame that takes a row's total out of int64, at once and changing
 * nothing: the mass of the frames held (sum of |w|) bounds every partial
 * and total weight, so while it stays within int64 no sum can overflow and
 * the frame is only kept; a frame that would pass the bound makes the feed
 * sum what it holds now, exactly (sc_batch_sum), as every feed did before.
 */
static int
frames_push(struct rt *r, struct sc_batch *b)
{
	if (r->nframes == r->frames_cap) {
		size_t cap = r->frames_cap ? 2 * r->frames_cap : 8;
		struct sc_batch **f = realloc(r->frames, cap * sizeof(void *));

		if (!f)
			return sc__fail(SC_ENOMEM,
					"sc_circuit_feed: out of memory");
		r->frames = f;
		r->frames_cap = cap;
	}
	r->frames[r->nframes++] = sc_batch_retain(b);
	sc__symtab_hold(&r->sym, b);
	return 0;
}

/* Replace the frames by their sum `sum` (consumed; NULL or empty: none,
 * so feeds that cancel leave no delta and on_delta never sees an empty
 * one); `mass`: recompute the bound for later feeds. */
static void
frames_set(struct rt *r, struct sc_batch *sum, bool mass)
{
	/* The sum's rows hold their ids before the frames' let go: the
	 * frames may be all that keeps them alive. */
	if (sum && sum->count != 0)
		sc__symtab_hold(&r->sym, sum);
	for (size_t i = 0; i < r->nframes; i++) {
		sc__symtab_unhold(&r->sym, r->frames[i]);
		sc_batch_release(r->frames[i]);
	}
	r->nframes = 0;
	r->fmass = 0;
	if (sum && sum->count == 0) {
		sc_batch_release(sum);
		sum = NULL;
	}
	if (sum) {
		r->frames[r->nframes++] = sum;
		/* Only a feed's fold needs the bound again; the step's sum
		 * goes out as the delta at once. */
		r->fmass = mass ? sc__batch_mass(sum) : 0;
	}
}

/* Sum the frames held and frame b (NULL: none) exactly, now. */
static int
frames_fold(struct rt *r, struct sc_batch *b)
{
	struct sc_batch *sum;
	int rc;

	if (b) {
		rc = frames_push(r, b);
		if (rc)
			return rc;
	}
	rc = sc_batch_sum(r->frames, r->nframes, &sum);
	if (rc) {
		if (b) { /* not applied: drop it again */
			sc__symtab_unhold(&r->sym, r->frames[r->nframes - 1]);
			sc_batch_release(r->frames[--r->nframes]);
		}
		return rc;
	}
	frames_set(r, sum, b != NULL);
	return 0;
}

/*
 * Lateness (waterline.h): a feed is one submission, checked against every
 * declaration of its input before anything is applied; if it is held, the
 * waterlines advance with it (late_commit). Late rows of a declaration
 * without SC_LATE_ADMIT refuse the whole feed.
 */
static int
late_check(struct rt *r, const struct sc_batch *b)
{
	for (uint32_t i = 0; i < r->nlate; i++) {
		struct sc_late *l = &r->late[i];
		size_t first = 0, n = sc_late_count(l, b, &first);

		if (n && !(l->decl.flags & SC_LATE_ADMIT))
			return sc_late_refuse(l, b, n, first, "sc_circuit_feed",
					      r->nd->name);
	}
	return 0;
}

/* After a feed: if it was held (rc 0), advance the waterlines. */
static int
late_commit(struct rt *r, const struct sc_batch *b, int rc)
{
	for (uint32_t i = 0; rc == 0 && i < r->nlate; i++)
		sc_late_advance(&r->late[i], b,
				sc_late_count(&r->late[i], b, NULL));
	return rc;
}

int
sc_circuit_feed(struct sc_circuit *c, int stream, struct sc_batch *b)
{
	const struct sc__node *nd;
	struct rt *r;
	uint64_t mass;
	int rc;
	int slot = known(c, stream, "sc_circuit_feed");

	if (slot < 0)
		return slot;
	r = &c->rt[slot];
	nd = r->nd;
	if (!b)
		return sc__fail(SC_EINVAL, "sc_circuit_feed: batch is NULL");
	if (c->failed)
		return sc__fail(SC_ESTATE,
				"sc_circuit_feed: the circuit failed earlier "
				"(%s)",
				c->why);
	if (r->role != ROLE_FED)
		return sc__fail(SC_EINVAL,
				"sc_circuit_feed: '%s' is computed by this "
				"circuit, not fed",
				nd->name);
	if (b->ncols != nd->schema.ncols)
		return sc__fail(
		    SC_ESCHEMA,
		    "sc_circuit_feed: batch of %u columns for '%s', "
		    "whose schema has %u",
		    b->ncols, nd->name, nd->schema.ncols);
	if (b->count == 0)
		return 0;
	/* The frames held keep their symbols until their tick is over, so
	 * the host may release its own references now (symbol.h). */
	rc = sc__symtab_check(&r->sym, b, "sc_circuit_feed");
	if (rc == 0 && r->late)
		rc = late_check(r, b);
	if (rc)
		return rc;
	mass = sc__mass_add(r->fmass, sc__batch_mass(b));
	if (!sc__mass_safe(mass))
		return late_commit(r, b, frames_fold(r, b));
	if (frames_push(r, b))
		return SC_ENOMEM;
	r->fmass = mass;
	return late_commit(r, b, 0);
}

/*
 * The step's sum of each fed stream's frames. The mass bound rules out an
 * overflow, so only SC_ENOMEM can fail it; a stream already summed stays
 * summed (the same Z-set), so a failure changes nothing the host can see.
 */
static int
frames_sum(struct sc_circuit *c)
{
	for (size_t i = 0; i < c->nslots; i++) {
		struct rt *r = &c->rt[i];
		int rc;

		if (r->role != ROLE_FED || r->nframes < 2)
			continue;
		rc = frames_fold(r, NULL);
		if (rc)
			return rc;
	}
	return 0;
}

int
sc_circuit_delta(const struct sc_circuit *c, int node, struct sc_batch **out)
{
	const struct rt *r;
	int slot = known(c, node, "sc_circuit_delta");

	if (slot < 0)
		return slot;
	if (!out)
		return sc__fail(SC_EINVAL, "sc_circuit_delta: out is NULL");
	r = &c->rt[slot];
	if (r->delta) {
		*out = sc_batch_retain(r->delta);
		return 0;
	}
	return sc_batch_empty(r->nd->schema.ncols, out);
}

int
sc_circuit_integral(const struct sc_circuit *c, int node, struct sc_batch **out)
{
	const struct rt *r;
	int rc;
	int slot = known(c, node, "sc_circuit_integral");

	if (slot < 0)
		return slot;
	if (!out)
		return sc__fail(SC_EINVAL, "sc_circuit_integral: out is NULL");
	r = &c->rt[slot];
	if (r->nd->kind == SC_NODE_OUTPUT && r->nd->stream)
		return sc__fail(SC_ESTATE,
				"sc_circuit_integral: '%s' is a stream output: "
				"it keeps no integral (read its deltas with "
				"sc_circuit_on_delta, or make it with "
				"sc_graph_output)",
				r->nd->name);
	if (!r->trace)
		return sc__fail(SC_EINVAL,
				"sc_circuit_integral: '%s' is a %s node, not "
				"an output",
				r->nd->name, sc_node_kind_name(r->nd->kind));
	rc = sc_circuit_check(c, node);
	if (rc)
		return rc;
	return sc_trace_integral(r->trace, out);
}

/* An aggregate's live groups whose value is outside int64 have no output
 * row (aggregate.h), so a read of anything downstream of one would miss
 * them without a word: the reads ask first. Slots of the part are walked
 * back from `slot` through each node's ports (feedback closes cycles, hence
 * the marks). */
int
sc_circuit_check(const struct sc_circuit *c, int node)
{
	bool *seen;
	int *stack;
	size_t sp = 0;
	int rc = 0, slot = known(c, node, "sc_circuit_check");

	if (slot < 0)
		return slot;
	seen = calloc(c->nslots, sizeof(*seen));
	stack = malloc(c->nslots * sizeof(*stack));
	if (!seen || !stack) {
		free(seen);
		free(stack);
		return sc__fail(SC_ENOMEM, "sc_circuit_check");
	}
	seen[slot] = true;
	stack[sp++] = slot;
	while (sp > 0 && !rc) {
		const struct rt *r = &c->rt[stack[--sp]];
		int arc = r->role == ROLE_OP &&
				  r->nd->kind == SC_NODE_AGGREGATE && r->kernel
			      ? sc_aggregate_check(r->kernel)
			      : 0;

		/* SC_ESCHEMA: a settled breach of SC_AGG_NONNEGATIVE. */
		if (arc == SC_EOVERFLOW || arc == SC_ESCHEMA) {
			char why[240];

			/* sc__fail formats into the buffer sc_errdetail
			 * reads: copy it first. */
			(void)snprintf(why, sizeof(why), "%s", sc_errdetail());
			rc = sc__fail(arc, "'%s' reads aggregate '%s': %s",
				      c->rt[slot].nd->name, r->nd->name, why);
		}
		if ((size_t)(r - c->rt) >= c->norder)
			continue; /* a boundary input: no ports here */
		for (uint32_t q = 0; q < r->nd->nin; q++) {
			int w = r->in[q];

			if (w >= 0 && !seen[w]) {
				seen[w] = true;
				stack[sp++] = w;
			}
		}
	}
	free(seen);
	free(stack);
	return rc;
}

int
sc_circuit_on_delta(struct sc_circuit *c, int node, sc_delta_fn fn, void *ctx)
{
	int slot = known(c, node, "sc_circuit_on_delta");

	if (slot < 0)
		return slot;
	c->rt[slot].cb = fn;
	c->rt[slot].cb_ctx = fn ? ctx : NULL;
	return 0;
}

int
sc_circuit_set_work(struct sc_circuit *c, size_t work_min)
{
	if (!c)
		return sc__fail(SC_EINVAL, "sc_circuit_set_work: circuit is "
					   "NULL");
	c->work_min = work_min;
	return 0;
}

/* --- the operators ------------------------------------------------------- */

/* Each op_* computes *out (NULL = empty) from its inputs' deltas. */

/* A user callback's code as the step reports it. */
static int
user_code(int rc)
{
	return rc > 0 ? SC_ECALLBACK : rc;
}

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
op_map(struct sc_circuit *c, const struct sc__node *nd, struct rt *r,
       const struct sc_batch *in, struct sc_batch **out)
{
	int rc = sc_batch_builder_reserve(r->bld, in->count);

	for (size_t i = 0; rc == 0 && i < in->count; i++) {
		rc =
		    user_code(nd->fn.map(nd->ctx, sc_batch_row(in, i), c->row));
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
op_filter(const struct sc__node *nd, struct rt *r, struct sc_batch *in,
	  struct sc_batch **out)
{
	int rc = sc_batch_builder_reserve(r->bld, in->count);

	for (size_t i = 0; rc == 0 && i < in->count; i++) {
		bool keep = false;

		rc = user_code(
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

static int
op_flat_map(const struct sc__node *nd, struct rt *r, const struct sc_batch *in,
	    struct sc_batch **out)
{
	struct sc_emitter em = {r->bld, nd->schema.ncols, 0};
	int rc = 0;

	for (size_t i = 0; rc == 0 && i < in->count; i++) {
		em.weight = sc_batch_weight(in, i);
		rc = user_code(
		    nd->fn.flat_map(nd->ctx, sc_batch_row(in, i), &em));
	}
	if (rc == 0)
		return finish(r->bld, out);
	sc_batch_builder_clear(r->bld);
	return rc;
}

static int
op_sum(const struct sc_circuit *c, const struct rt *r, struct sc_batch **out)
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
op_integrate(struct rt *r, struct sc_batch *in, struct sc_batch **out)
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
op_differentiate(struct rt *r, struct sc_batch *in, struct sc_batch **out)
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
op_output(struct rt *r, struct sc_batch *in, struct sc_batch **out)
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

static size_t
rows(const struct sc_batch *b)
{
	return b ? b->count : 0;
}

static int
op_kernel(const struct sc__node *nd, struct rt *r, struct sc_batch *a,
	  struct sc_batch *b, struct sc_batch **out)
{
	r->inserted += rows(a) + rows(b);
	switch (nd->kind) {
	case SC_NODE_JOIN:
		return sc_join_step(r->kernel, a, b, out);
	case SC_NODE_ANTIJOIN:
		return sc_antijoin_step(r->kernel, a, b, out);
	case SC_NODE_DISTINCT:
		return sc_distinct_step(r->kernel, a, out);
	case SC_NODE_TOPK:
		return sc_topk_step(r->kernel, a, out);
	default:
		return sc_aggregate_step(r->kernel, a, out);
	}
}

/* Add this tick's rows to the node's counters. */
static void
count_rows(const struct sc_circuit *c, struct rt *r)
{
	uint64_t in = 0;

	for (uint32_t p = 0; p < r->nd->nin; p++)
		in += rows(c->rt[r->in[p]].delta);
	r->stats.ticks_busy += in > 0;
	r->stats.rows_in += in;
	r->stats.rows_out += rows(r->delta);
}

/*
 * Wide deltas (issue 14, bug 21). A linear node's delta can leave int64
 * only because of how a schedule grouped deltas into steps (two rows of
 * 2^62 mapped to one key), and so can a join's change (join.h). Such a
 * delta is computed again with 128-bit weights into the node's carry, and
 * the node emits, pass after pass, each row's weight clamped into int64
 * (sc__wide_take) until the carry is empty: sc_circuit_carried says more
 * passes are owed, and each pass is a step with no new input
 * (circuit.h). Cold: a narrow step never comes here.
 */

/* The carried rows, holding their symbols (the frames that held them
 * let go at the next tick). */
static int
carry_hold(struct rt *r)
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
wide_redo(struct rt *r, struct sc__wide *x, struct sc_batch *a,
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

static __attribute__((noinline, cold)) int
node_wide(struct sc_circuit *c, struct rt *r, struct sc_batch *a,
	  struct sc_batch *b, int rc, struct sc_batch **out)
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

/* Run the operator of the node in slot r: set its delta for this tick. */
static int
node_run(struct sc_circuit *c, struct rt *r)
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
		rc = node_wide(c, r, a, b, rc, &out);
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

/* --- the tick ------------------------------------------------------------- */

/* Record the first failure of a step; the circuit refuses steps after it. */
static int
step_fail(struct sc_circuit *c, int id, int rc, const char *what)
{
	const struct sc__node *nd = node_of(c, id);
	char inner[160];

	(void)snprintf(inner, sizeof(inner), "%s", sc_errdetail());
	(void)snprintf(
	    c->why, sizeof(c->why), "step %llu, node '%s' (%s): %s %s%s%s",
	    (unsigned long long)c->steps, nd->name, sc_node_kind_name(nd->kind),
	    what, sc_errname(rc), inner[0] ? ": " : "", inner);
	c->failed = rc;
	return sc__fail(rc, "sc_circuit_step: %s", c->why);
}

/* Start of a tick: forget the last deltas; inputs and delays emit. */
static void
tick_begin(struct sc_circuit *c)
{
	for (size_t i = 0; i < c->nslots; i++) {
		struct rt *r = &c->rt[i];

		if (r->held)
			sc__symtab_unhold(&r->sym, r->delta);
		sc_batch_release(r->delta);
		r->delta = NULL;
		r->inserted = 0;
		if (r->role == ROLE_FED) {
			r->delta = r->nframes ? r->frames[0] : NULL;
			r->nframes = 0;
			r->fmass = 0;
			r->stats.rows_out += rows(r->delta);
		} else if (r->nd->kind == SC_NODE_DELAY) {
			r->delta = r->state;
			r->state = NULL;
			r->stats.rows_out += rows(r->delta);
		}
	}
}

/* bit length of x: ceil(log2(x + 1)). */
static size_t
bits(uint64_t x)
{
	return x ? 64 - (size_t)__builtin_clzll(x) : 0;
}

/* End of a tick: spread merge work over every trace. */
static int
tick_work(struct sc_circuit *c)
{
	for (size_t i = 0; i < c->norder; i++) {
		struct rt *r = &c->rt[i];
		size_t budget;
		int rc;

		if (!r->trace && !r->kernel)
			continue;
		r->total += r->inserted;
		if (c->work_min == 0)
			continue; /* merging left to the safety net */
		budget = 2 * bits(r->total) * r->inserted;
		if (budget < c->work_min)
			budget = c->work_min;
		if (r->trace)
			rc = sc_trace_work(r->trace, budget, NULL);
		else
			rc = kernel_work(r->nd->kind, r->kernel, budget);
		if (rc)
			return step_fail(c, r->id, rc, "merge work failed:");
	}
	return 0;
}

/* End of a tick: delays latch, callbacks see the deltas. */
static int
tick_end(struct sc_circuit *c)
{
	for (size_t i = 0; i < c->norder; i++) {
		struct rt *r = &c->rt[i];

		if (r->nd->kind == SC_NODE_DELAY) {
			struct sc_batch *in = c->rt[r->in[0]].delta;

			r->state = in ? sc_batch_retain(in) : NULL;
			sc__symtab_hold(&r->sym, in);
			r->stats.ticks_busy += in != NULL;
			r->stats.rows_in += rows(in);
		}
	}
	for (size_t i = 0; i < c->norder; i++) {
		struct rt *r = &c->rt[i];
		int rc;

		if (!r->cb || !r->delta)
			continue;
		sc_error_clear();
		rc = user_code(r->cb(r->cb_ctx, r->id, r->delta));
		if (rc)
			return step_fail(c, r->id, rc,
					 "delta callback returned");
	}
	return tick_work(c);
}

/* --- waterlines and cleanup (waterline.h) -------------------------------- */

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
join_horizon(const struct sc_circuit *c, const struct rt *r, int side,
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
unary_horizon(const struct sc_circuit *c, const struct rt *r, uint32_t ncols,
	      struct sc__horizon *h)
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
kernel_sweep(const struct sc_circuit *c, struct rt *r, size_t budget)
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
		unary_horizon(c, r, r->nd->key, &ha);
		if (ha.n == 0)
			return;
		if (r->nd->kind == SC_NODE_AGGREGATE)
			sc__aggregate_sweep(r->kernel, &ha, budget);
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
static void
wl_step(struct sc_circuit *c)
{
	const struct sc__wl *in[SC_GRAPH_MAX_INPUTS];

	for (size_t i = 0; i < c->norder; i++) {
		struct rt *r = &c->rt[i];
		struct sc__wl *w = &c->wl[i];

		if (r->role == ROLE_FED) {
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
	for (size_t i = 0; !c->no_cleanup && i < c->norder; i++) {
		struct rt *r = &c->rt[i];
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
	struct rt *r;
	int slot = known(c, stream, "sc_circuit_set_waterline");

	if (slot < 0)
		return slot;
	r = &c->rt[slot];
	if (r->role != ROLE_FED)
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
	int slot = known(c, node, "sc_circuit_waterlines");

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
				node_of(c, node)->name, col);
	*value = v[col];
	return 0;
}

int
sc_circuit_late(const struct sc_circuit *c, int input, uint64_t *admitted,
		uint64_t *refused)
{
	const struct rt *r;
	uint64_t a = 0, f = 0;
	int slot = known(c, input, "sc_circuit_late");

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

int
sc_circuit_step(struct sc_circuit *c)
{
	int rc;

	if (!c)
		return sc__fail(SC_EINVAL, "sc_circuit_step: circuit is NULL");
	if (c->failed)
		return sc__fail(SC_ESTATE,
				"sc_circuit_step: the circuit failed earlier "
				"and may be half-applied; destroy it (%s)",
				c->why);
	rc = frames_sum(c);
	if (rc)
		return rc;
	tick_begin(c);
	for (size_t i = 0; i < c->norder; i++) {
		sc_error_clear();
		rc = node_run(c, &c->rt[i]);
		if (rc)
			return step_fail(c, c->rt[i].id, rc, "failed with");
	}
	rc = tick_end(c);
	if (rc)
		return rc;
	if (c->wl)
		wl_step(c);
	c->steps++;
	return 0;
}

size_t
sc_circuit_carried(const struct sc_circuit *c)
{
	return c ? c->carried : 0;
}

/* --- merge work ----------------------------------------------------------- */

size_t
sc_circuit_pending(const struct sc_circuit *c)
{
	size_t n = 0;

	if (!c)
		return 0;
	for (size_t i = 0; i < c->norder; i++) {
		const struct rt *r = &c->rt[i];

		if (r->trace)
			n += sc_trace_pending(r->trace);
		else if (r->kernel)
			n += kernel_pending(r->nd->kind, r->kernel);
	}
	return n;
}

int
sc_circuit_settle(struct sc_circuit *c)
{
	if (!c)
		return sc__fail(SC_EINVAL,
				"sc_circuit_settle: circuit is NULL");
	for (size_t i = 0; i < c->norder; i++) {
		struct rt *r = &c->rt[i];
		int rc = 0;

		if (r->trace)
			rc = sc_trace_work(r->trace, SIZE_MAX, NULL);
		else if (r->kernel)
			rc = kernel_work(r->nd->kind, r->kernel, SIZE_MAX);
		if (rc)
			return rc;
	}
	return 0;
}

int
sc_circuit_node_stats(const struct sc_circuit *c, int node,
		      struct sc_node_stats *out)
{
	int slot = known(c, node, "sc_circuit_node_stats");

	if (slot < 0)
		return slot;
	if (!out)
		return sc__fail(SC_EINVAL,
				"sc_circuit_node_stats: out is NULL");
	*out = c->rt[slot].stats;
	return 0;
}

int
sc_circuit_node_state(const struct sc_circuit *c, int node,
		      struct sc_node_state *out)
{
	const struct rt *r;
	int slot = known(c, node, "sc_circuit_node_state");

	if (slot < 0)
		return slot;
	if (!out)
		return sc__fail(SC_EINVAL,
				"sc_circuit_node_state: out is NULL");
	r = &c->rt[slot];
	memset(out, 0, sizeof(*out));
	if (r->trace) {
		out->rows = sc_trace_rows(r->trace);
		out->bytes = sc_trace_bytes(r->trace);
	} else if (r->kernel) {
		kernel_state(r->nd->kind, r->kernel, out);
	} else if (r->state) {
		out->rows = r->state->count;
		out->bytes = sc_batch_bytes(r->state);
	}
	return 0;
}

int
sc_circuit_state(const struct sc_circuit *c, struct sc_node_state *out)
{
	struct sc_node_state st, sum = {0, 0};

	if (!c || !out)
		return sc__fail(SC_EINVAL, "sc_circuit_state: NULL argument");
	for (size_t i = 0; i < c->nslots; i++) {
		if (sc_circuit_node_state(c, c->rt[i].id, &st))
			continue;
		sum.rows += st.rows;
		sum.bytes += st.bytes;
	}
	*out = sum;
	return 0;
}

void
sc_circuit_fprint(FILE *f, const struct sc_circuit *c)
{
	if (!f || !c)
		return;
	(void)fprintf(f, "circuit of %zu nodes, %llu steps%s%s\n", c->norder,
		      (unsigned long long)c->steps,
		      c->failed ? ", FAILED: " : "", c->failed ? c->why : "");
	for (size_t i = 0; i < c->norder; i++) {
		const struct sc_node_stats *st = &c->rt[i].stats;

		sc__graph_fprint_node(f, c->g, c->rt[i].id);
		(void)fprintf(f, " busy %llu in %llu out %llu\n",
			      (unsigned long long)st->ticks_busy,
			      (unsigned long long)st->rows_in,
			      (unsigned long long)st->rows_out);
	}
	(void)fprintf(f, "boundary in:");
	for (size_t i = 0; i < c->cut.nin; i++)
		(void)fprintf(f, " %d", c->cut.in[i]);
	(void)fprintf(f, "\nboundary out:");
	for (size_t i = 0; i < c->cut.nout; i++)
		(void)fprintf(f, " %d", c->cut.out[i]);
	(void)fputc('\n', f);
}

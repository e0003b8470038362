/*
 * circuit.c - the synchronous circuit: build a part of a graph, feed and
 * read its streams, run ticks (see circuit.h for the design, and
 * circuit_int.h for which file holds which part of a step).
 */
#include "operators/circuit_int.h"
#include "operators/aggregate.h"
#include "operators/multiagg.h"
#include "operators/session.h"
#include "operators/doing_int.h"
#include "operators/join.h"
#include "operators/late_int.h"
#include "operators/probe_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WORK_MIN_DEFAULT 256

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
	struct sc__node_rt *r = &c->rt[slot];
	const struct sc__node *nd = r->nd;

	int rc;

	r->role = nd->kind == SC_NODE_INPUT ? SC__ROLE_FED : SC__ROLE_OP;
	/* A fed batch holds its symbols from sc_circuit_feed to the tick
	 * after the one that emitted it, a delay's from its latch on. */
	r->held = r->role == SC__ROLE_FED || nd->kind == SC_NODE_DELAY;
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
		rc = sc__circuit_kernel_create(c, nd, &r->kernel);
		if (rc == 0 && r->kernel) {
			sc__circuit_kernel_symbols(c, r);
			c->sweeps = true;
		}
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

/* Drop the holds of the n batches at v, then the batches. */
static void
batches_let_go(struct sc__node_rt *r, struct sc_batch **v, size_t *n)
{
	for (size_t i = 0; i < *n; i++) {
		sc__symtab_unhold(&r->sym, v[i]);
		sc_batch_release(v[i]);
	}
	*n = 0;
}

/* Drop every frame held and its holds: frames[0] has none of its own
 * while a cover stands in for them (frames_cover). */
static void
frames_drop(struct sc__node_rt *r)
{
	for (size_t i = 0; i < r->nframes; i++) {
		if (i > 0 || r->ncover == 0)
			sc__symtab_unhold(&r->sym, r->frames[i]);
		sc_batch_release(r->frames[i]);
	}
	r->nframes = 0;
	batches_let_go(r, r->cover, &r->ncover);
}

/* This tick's delta lets its holds go: its own, or those of the frames
 * a step summed it from. */
static void
delta_let_go(struct sc__node_rt *r)
{
	if (r->nspent)
		batches_let_go(r, r->spent, &r->nspent);
	else
		sc__symtab_unhold(&r->sym, r->delta);
}

/* The references a flat_map's callback handed its last step (sc_emit_own)
 * go with that step's delta. */
static void
owned_let_go(struct sc__node_rt *r)
{
	if (!r->owned.n)
		return;
	(void)sc_symtab_release_ids(r->nd->schema.symbols, r->owned.ids,
				    r->owned.n);
	r->owned.n = 0;
}

static void
rt_fini(struct sc__node_rt *r)
{
	if (r->held)
		delta_let_go(r);
	owned_let_go(r);
	free(r->owned.ids);
	sc__symtab_unhold(&r->sym, r->state); /* integrate, differentiate,
					       * delay */
	sc_batch_release(r->delta);
	frames_drop(r);
	free(r->frames);
	free(r->cover);
	free(r->spent);
	sc_batch_release(r->state);
	sc__symtab_unhold(&r->sym, r->carry_hold);
	sc_batch_release(r->carry_hold);
	sc__wide_fini(r->carry);
	free(r->carry);
	sc_trace_destroy(r->trace);
	if (r->kernel)
		sc__circuit_kernel_destroy(r->nd->kind, r->kernel);
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
		const struct sc__node *nd = sc__circuit_node(c, c->rt[i].id);

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
		c->rt[i].nd = sc__circuit_node(c, id);
		c->rt[i].role =
		    SC__ROLE_FED; /* the part's nodes: set by rt_init */
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
		nports += sc__circuit_node(c, order[i])->nin;
	return nports;
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
		rc = sc__circuit_wl_build(c);
out_free:
	free(in_part);
	free(order);
	return rc;
}

static int
circuit_create_part_body(struct sc_graph *g, const int *nodes, size_t n,
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
int
sc__circuit_known(const struct sc_circuit *c, int id, const char *fn)
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
				fn, sc__circuit_node(c, id)->name);
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
frames_push(struct sc__node_rt *r, struct sc_batch *b, bool hold)
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
	if (hold)
		sc__symtab_hold(&r->sym, b);
	return 0;
}

/*
 * A step's sum of the frames is summed from them alone, so it names no id
 * that they do not: instead of a hold on every row of the sum and an
 * unhold on every row of each frame now, the frames keep their holds (and
 * stay alive) as the sum's cover until the tick of the sum is over, when
 * they let go once (delta_let_go). Moves the frames into r->cover (a
 * frames[0] that was itself covered goes: its cover stays); false, with
 * nothing changed, if there is no memory for the list.
 */
static bool
frames_cover(struct sc__node_rt *r)
{
	bool first_covered = r->ncover > 0;
	size_t need = r->ncover + r->nframes;

	if (need > r->cover_cap) {
		size_t cap = need < 8 ? 8 : 2 * need;
		struct sc_batch **v =
		    realloc(r->cover, cap * sizeof(struct sc_batch *));

		if (!v)
			return false;
		r->cover = v;
		r->cover_cap = cap;
	}
	for (size_t i = 0; i < r->nframes; i++) {
		if (i == 0 && first_covered)
			sc_batch_release(r->frames[0]);
		else
			r->cover[r->ncover++] = r->frames[i];
	}
	r->nframes = 0;
	return true;
}

/* Replace the frames by their sum `sum` (consumed; NULL or empty: none,
 * so feeds that cancel leave no delta and on_delta never sees an empty
 * one); `mass`: recompute the bound for later feeds. */
static void
frames_set(struct sc__node_rt *r, struct sc_batch *sum, bool mass)
{
	/* A step's sum goes out as the delta at once: the frames cover it
	 * (frames_cover). Otherwise the sum's rows hold their ids before the
	 * frames' let go: the frames may be all that keeps them alive. */
	bool covered = !mass && sum && sum->count != 0 &&
		       sc__symcols_any(&r->sym) && frames_cover(r);

	if (!covered && sum && sum->count != 0)
		sc__symtab_hold(&r->sym, sum);
	if (!covered)
		frames_drop(r);
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
frames_fold(struct sc__node_rt *r, struct sc_batch *b)
{
	struct sc_batch *sum;
	int rc;

	if (b) {
		rc = frames_push(r, b, true);
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

static bool
symcols_equal(const struct sc__symcols *a, const struct sc__symcols *b)
{
	return a->tab == b->tab && a->mask == b->mask && a->flip == b->flip;
}

/*
 * sc_circuit_feed, where the caller may hand over holds it has on b's ids
 * (`held`, NULL: none): they are taken (*taken) when they are the
 * stream's own columns and the frame is kept as it is, and then the frame
 * keeps them in place of a hold of its own.
 */
static int
feed(struct sc_circuit *c, int stream, struct sc_batch *b,
     const struct sc__symcols *held, bool *taken)
{
	const struct sc__node *nd;
	struct sc__node_rt *r;
	uint64_t mass;
	bool give;
	int rc;
	int slot = sc__circuit_known(c, stream, "sc_circuit_feed");

	*taken = false;
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
	if (r->role != SC__ROLE_FED)
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
	 * the host may release its own references now (symbol.h). Ids the
	 * caller holds are live: only the others need the check. */
	give = held && sc__symcols_any(held) && symcols_equal(held, &r->sym);
	rc = give ? 0 : sc__symtab_check(&r->sym, b, "sc_circuit_feed");
	/* Lateness (waterline.h): a feed is one submission, checked against
	 * every declaration of its input before anything is applied; if it
	 * is held, the waterlines advance with it. */
	if (rc == 0 && r->late)
		rc = sc__late_check(r->late, r->nlate, b, NULL,
				    "sc_circuit_feed", nd->name);
	if (rc)
		return rc;
	mass = sc__mass_add(r->fmass, sc__batch_mass(b));
	if (!sc__mass_safe(mass)) {
		rc = frames_fold(r, b); /* takes holds of its own */
	} else if (frames_push(r, b, !give)) {
		rc = SC_ENOMEM;
	} else {
		r->fmass = mass;
		*taken = give;
	}
	if (rc == 0)
		sc__late_advance(r->late, r->nlate, b, NULL);
	return rc;
}

int
sc_circuit_feed(struct sc_circuit *c, int stream, struct sc_batch *b)
{
	bool taken;

	return feed(c, stream, b, NULL, &taken);
}

int
sc__circuit_feed_held(struct sc_circuit *c, int stream, struct sc_batch *b,
		      const struct sc__symcols *held, bool *taken)
{
	return feed(c, stream, b, held, taken);
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
		struct sc__node_rt *r = &c->rt[i];
		int rc;

		if (r->role != SC__ROLE_FED || r->nframes < 2)
			continue;
		sc__doing_node(r->id, SC__ACT_SORT);
		rc = frames_fold(r, NULL);
		if (rc)
			return rc;
	}
	return 0;
}

int
sc_circuit_delta(const struct sc_circuit *c, int node, struct sc_batch **out)
{
	const struct sc__node_rt *r;
	int slot = sc__circuit_known(c, node, "sc_circuit_delta");

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
	const struct sc__node_rt *r;
	int rc;
	int slot = sc__circuit_known(c, node, "sc_circuit_integral");

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

/* A walk of sc_circuit_check: the circuit, and the slot whose read asks. */
struct check {
	const struct sc_circuit *c;
	int slot;
};

/* One slot upstream of the read: an aggregate of the part with a live
 * group outside int64 (or a settled breach of SC_AGG_NONNEGATIVE, which
 * is SC_ESCHEMA) fails the read, naming both; else its ports go on (a
 * boundary input has none here). */
static int
check_slot(void *ctx, int slot, const int **in, uint32_t *nin)
{
	const struct check *k = ctx;
	const struct sc__node_rt *r = &k->c->rt[slot];
	int arc = 0;

	if (r->role == SC__ROLE_OP && r->kernel &&
	    r->nd->kind == SC_NODE_AGGREGATE)
		arc = sc_aggregate_check(r->kernel);
	else if (r->role == SC__ROLE_OP && r->kernel &&
		 r->nd->kind == SC_NODE_MULTIAGG)
		arc = sc_multiagg_check(r->kernel);
	else if (r->role == SC__ROLE_OP && r->kernel &&
		 r->nd->kind == SC_NODE_SESSION)
		arc = sc_session_check(r->kernel);

	if (arc == SC_EOVERFLOW || arc == SC_ESCHEMA) {
		char why[240];

		/* sc__fail formats into the buffer sc_errdetail reads: copy
		 * it first. */
		(void)snprintf(why, sizeof(why), "%s", sc_errdetail());
		return sc__fail(arc, "'%s' reads aggregate '%s': %s",
				k->c->rt[k->slot].nd->name, r->nd->name, why);
	}
	if ((size_t)slot < k->c->norder) {
		*in = r->in;
		*nin = r->nd->nin;
	}
	return 0;
}

/* An aggregate's live groups whose value is outside int64 have no output
 * row (aggregate.h), so a read of anything downstream of one would miss
 * them without a word: the reads ask first. The part's slots are walked
 * back from `slot` through each node's ports (sc__graph_walk_up). */
int
sc_circuit_check(const struct sc_circuit *c, int node)
{
	struct check k = {.c = c};

	k.slot = sc__circuit_known(c, node, "sc_circuit_check");
	if (k.slot < 0)
		return k.slot;
	return sc__graph_walk_up(c->nslots, k.slot, check_slot, &k,
				 "sc_circuit_check");
}

int
sc_circuit_on_delta(struct sc_circuit *c, int node, sc_delta_fn fn, void *ctx)
{
	int slot = sc__circuit_known(c, node, "sc_circuit_on_delta");

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

/* --- the tick ------------------------------------------------------------- */

/* Record the first failure of a step; the circuit refuses steps after it. */
static int
step_fail(struct sc_circuit *c, int id, int rc, const char *what)
{
	const struct sc__node *nd = sc__circuit_node(c, id);
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
		struct sc__node_rt *r = &c->rt[i];

		if (r->held)
			delta_let_go(r);
		/* A delta the cleanup held (circuit_wl.c) was held for its
		 * tick only. */
		r->held =
		    r->role == SC__ROLE_FED || r->nd->kind == SC_NODE_DELAY;
		sc_batch_release(r->delta);
		r->delta = NULL;
		owned_let_go(r);
		r->inserted = 0;
		if (r->role == SC__ROLE_FED) {
			struct sc_batch **v = r->spent;
			size_t cap = r->spent_cap;

			r->delta = r->nframes ? r->frames[0] : NULL;
			r->nframes = 0;
			/* A covered delta's holds are its cover's. */
			r->spent = r->cover;
			r->spent_cap = r->cover_cap;
			r->nspent = r->ncover;
			r->cover = v;
			r->cover_cap = cap;
			r->ncover = 0;
			r->fmass = 0;
			r->stats.rows_out += sc__circuit_rows(r->delta);
		} else if (r->nd->kind == SC_NODE_DELAY) {
			r->delta = r->state;
			r->state = NULL;
			r->stats.rows_out += sc__circuit_rows(r->delta);
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
		struct sc__node_rt *r = &c->rt[i];
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
		sc__doing_node(r->id, SC__ACT_MERGE);
		if (r->trace)
			rc = sc_trace_work(r->trace, budget, NULL);
		else
			rc = sc__circuit_kernel_work(r->nd->kind, r->kernel,
						     budget);
		if (rc)
			return step_fail(c, r->id, rc, "merge work failed:");
	}
	return 0;
}

/* The delta callback running on this thread: its circuit and node
 * (sc_circuit_delta_waterline reads them), {NULL, -1} outside one. */
struct cb_now {
	const struct sc_circuit *c;
	int node;
};
static _Thread_local struct cb_now cb_now = {NULL, -1};

/* End of a tick: delays latch, callbacks see the deltas. */
static int
tick_end(struct sc_circuit *c)
{
	for (size_t i = 0; i < c->norder; i++) {
		struct sc__node_rt *r = &c->rt[i];

		if (r->nd->kind == SC_NODE_DELAY) {
			struct sc_batch *in = c->rt[r->in[0]].delta;

			r->state = in ? sc_batch_retain(in) : NULL;
			sc__symtab_hold(&r->sym, in);
			r->stats.ticks_busy += in != NULL;
			r->stats.rows_in += sc__circuit_rows(in);
		}
	}
	for (size_t i = 0; i < c->norder; i++) {
		struct sc__node_rt *r = &c->rt[i];
		int rc;

		if (!r->cb || !r->delta)
			continue;
		sc__doing_node(r->id, SC__ACT_OUTPUT);
		sc_error_clear();
		cb_now = (struct cb_now){c, r->id};
		rc = sc__circuit_user_code(r->cb(r->cb_ctx, r->id, r->delta));
		cb_now = (struct cb_now){NULL, -1};
		if (rc)
			return step_fail(c, r->id, rc,
					 "delta callback returned");
	}
	return tick_work(c);
}

int
sc_circuit_delta_waterline(uint32_t col, int64_t *value, const void **source)
{
	int rc;

	if (!value)
		return sc__fail(SC_EINVAL, "sc_circuit_delta_waterline: value "
					   "is NULL");
	if (!cb_now.c)
		return sc__fail(SC_ESTATE, "sc_circuit_delta_waterline: not "
					   "inside a delta callback");
	if (source)
		*source = cb_now.c;
	/* Not yet recomputed for this step: the value after the previous
	 * one, which bounds this step's delta (waterline.h). */
	rc = sc_circuit_waterline(cb_now.c, cb_now.node, col, value);
	return rc;
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
		sc__doing_node(c->rt[i].id, SC__ACT_STEP);
		rc = sc__circuit_node_run(c, &c->rt[i]);
		if (rc)
			return step_fail(c, c->rt[i].id, rc, "failed with");
	}
	rc = tick_end(c);
	if (rc)
		return rc;
	if (c->wl)
		sc__circuit_wl_step(c);
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
		const struct sc__node_rt *r = &c->rt[i];

		if (r->trace)
			n += sc_trace_pending(r->trace);
		else if (r->kernel)
			n += sc__circuit_kernel_pending(r->nd->kind, r->kernel);
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
		struct sc__node_rt *r = &c->rt[i];
		int rc = 0;

		if (r->trace)
			rc = sc_trace_work(r->trace, SIZE_MAX, NULL);
		else if (r->kernel)
			rc = sc__circuit_kernel_work(r->nd->kind, r->kernel,
						     SIZE_MAX);
		if (rc)
			return rc;
	}
	return 0;
}

int
sc_circuit_node_stats(const struct sc_circuit *c, int node,
		      struct sc_node_stats *out)
{
	int slot = sc__circuit_known(c, node, "sc_circuit_node_stats");

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
	const struct sc__node_rt *r;
	int slot = sc__circuit_known(c, node, "sc_circuit_node_state");

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
		sc__circuit_kernel_state(r->nd->kind, r->kernel, out);
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

int
sc_circuit_create_part(struct sc_graph *g, const int *nodes, size_t n,
		       struct sc_circuit **out)
{
	return sc__errwrap(circuit_create_part_body(g, nodes, n, out),
			   "sc_circuit_create_part");
}

/*
 * placement.c - node -> unit maps: the strategies, validation, printing.
 *
 * See placement.h. A placement is two arrays: unit_of[node] and
 * shards[unit]. Every strategy fills unit_of, then goes through the same
 * finish step (placement_make), which checks that every node is placed in
 * range and no unit is empty, so a bug in a strategy fails like bad user
 * input does: by name, with nothing built.
 */
#include "units/placement.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "operators/base.h"
#include "operators/circuit.h"

struct sc_placement {
	const struct sc_graph *g; /* borrowed; outlives the placement */
	size_t nnodes;		  /* nodes placed */
	uint32_t nunits;	  /* units before replication */
	uint32_t *unit_of;	  /* nnodes unit indices */
	uint32_t *shards;	  /* nunits replication factors, >= 1 */
	const char *strategy;	  /* which strategy made it (a literal) */
	uint32_t nranks;	  /* process ranks it spans, >= 1 */
	uint32_t *rank_manual;	  /* replica slots' ranks (unit-major), or
				   * NULL: the spread rule (placement.h) */
};

/* A node name for messages ("?" if the graph does not know it). */
static const char *
node_name(const struct sc_graph *g, int id)
{
	struct sc_node_info ni;

	if (sc_graph_node_info(g, id, &ni) != 0)
		return "?";
	return ni.name;
}

static int
check_graph(const char *fn, const struct sc_graph *g, struct sc_placement **out)
{
	if (!g || !out)
		return sc__fail(SC_EINVAL, "%s: NULL %s", fn,
				g ? "out" : "graph");
	if (sc_graph_node_count(g) == 0)
		return sc__fail(SC_EINVAL, "%s: the graph has no nodes", fn);
	return 0;
}

/*
 * placement_make - validate unit_of[0..n) (n: g's node count, which the
 * caller read once) against nunits and build the placement (taking
 * unit_of, which is freed on failure too). Names the first node unplaced
 * or out of range and the first empty unit. `strategy` is a literal.
 */
static int
placement_make(const char *fn, const struct sc_graph *g, int32_t *unit_of,
	       size_t n, uint32_t nunits, const char *strategy,
	       struct sc_placement **out)
{
	struct sc_placement *p = NULL;
	uint32_t *used = NULL;
	int rc = SC_ENOMEM;

	if (nunits == 0) {
		rc = sc__fail(SC_EINVAL, "%s: no units", fn);
		goto free_map;
	}
	used = calloc(nunits, sizeof(*used));
	if (!used) {
		rc = sc__fail(SC_ENOMEM, "%s: %u units", fn, nunits);
		goto free_map;
	}
	for (size_t i = 0; i < n; i++) {
		if (unit_of[i] < 0) {
			rc =
			    sc__fail(SC_EINVAL, "%s: node %zu '%s' is unplaced",
				     fn, i, node_name(g, (int)i));
			goto free_used;
		}
		if ((uint32_t)unit_of[i] >= nunits) {
			rc = sc__fail(SC_EINVAL,
				      "%s: node %zu '%s' is placed in unit %d, "
				      "out of range (%u units)",
				      fn, i, node_name(g, (int)i), unit_of[i],
				      nunits);
			goto free_used;
		}
		used[unit_of[i]]++;
	}
	for (uint32_t u = 0; u < nunits; u++)
		if (!used[u]) {
			rc = sc__fail(SC_EINVAL, "%s: unit %u has no node", fn,
				      u);
			goto free_used;
		}
	p = calloc(1, sizeof(*p));
	if (!p || !(p->shards = malloc(nunits * sizeof(*p->shards)))) {
		rc = sc__fail(SC_ENOMEM, "%s: placement of %zu nodes", fn, n);
		free(p);
		goto free_used;
	}
	p->g = g;
	p->nnodes = n;
	p->nunits = nunits;
	p->unit_of = (uint32_t *)unit_of; /* validated: all in range */
	for (uint32_t u = 0; u < nunits; u++)
		p->shards[u] = 1;
	p->strategy = strategy;
	p->nranks = 1;
	free(used);
	*out = p;
	return 0;
free_used:
	free(used);
free_map:
	free(unit_of);
	return rc;
}

static int32_t *
map_alloc(const char *fn, size_t n)
{
	int32_t *m = malloc((n ? n : 1) * sizeof(*m));

	if (!m)
		sc__fail(SC_ENOMEM, "%s: %zu nodes", fn, n);
	return m;
}

int
sc_placement_single(const struct sc_graph *g, struct sc_placement **out)
{
	int rc = check_graph("sc_placement_single", g, out);
	int32_t *m;
	size_t n;

	if (rc)
		return rc;
	n = sc_graph_node_count(g);
	if (!(m = map_alloc("sc_placement_single", n)))
		return SC_ENOMEM;
	for (size_t i = 0; i < n; i++)
		m[i] = 0;
	return placement_make("sc_placement_single", g, m, n, 1, "single", out);
}

int
sc_placement_per_node(const struct sc_graph *g, struct sc_placement **out)
{
	int rc = check_graph("sc_placement_per_node", g, out);
	size_t n;
	int32_t *m;

	if (rc)
		return rc;
	n = sc_graph_node_count(g);
	if (!(m = map_alloc("sc_placement_per_node", n)))
		return SC_ENOMEM;
	for (size_t i = 0; i < n; i++)
		m[i] = (int32_t)i;
	return placement_make("sc_placement_per_node", g, m, n, (uint32_t)n,
			      "per-node", out);
}

/* --- chains: union-find over "only reader of my only input" ----------- */

static uint32_t
uf_find(uint32_t *parent, uint32_t x)
{
	/* The smaller id roots (uf_union), and halving keeps it: a parent is
	 * never above its child. */
	SC_ASSERT(parent[x] <= x);
	while (parent[x] != x) {
		SC_ASSERT(parent[parent[x]] <= parent[x]);
		parent[x] = parent[parent[x]];
		x = parent[x];
	}
	return x;
}

static void
uf_union(uint32_t *parent, uint32_t a, uint32_t b)
{
	a = uf_find(parent, a);
	b = uf_find(parent, b);
	if (a != b)
		parent[a < b ? b : a] =
		    a < b ? a : b; /* the smaller id roots */
}

/* readers[i] = how many (node, port) pairs read stream i. */
static int
count_readers(const struct sc_graph *g, uint32_t *readers)
{
	size_t n = sc_graph_node_count(g);

	memset(readers, 0, n * sizeof(*readers));
	for (size_t i = 0; i < n; i++) {
		struct sc_node_info ni;
		int rc = sc_graph_node_info(g, (int)i, &ni);

		if (rc)
			return rc;
		for (uint32_t p = 0; p < ni.ninputs; p++)
			if (ni.inputs[p] >= 0)
				readers[ni.inputs[p]]++;
	}
	return 0;
}

/*
 * Renumber union-find roots into dense unit indices, in order of each
 * unit's first node, into m, starting at `first`. Returns the next
 * free index (the unit count when first is 0).
 */
static uint32_t
number_roots(uint32_t *parent, size_t n, int32_t *m, uint32_t first)
{
	uint32_t next = first;

	for (size_t i = 0; i < n; i++)
		m[i] = -1;
	for (size_t i = 0; i < n; i++) {
		uint32_t r = uf_find(parent, (uint32_t)i);

		if (m[r] < 0)
			m[r] = (int32_t)next++;
		m[i] = m[r];
	}
	return next;
}

static bool shard_safe_kind(enum sc_node_kind k);

/*
 * The chain partition as union-find parents (parent[n], caller storage).
 * With `keyed` (sharded): a keyed node never joins its input's unit, so
 * it heads a unit of its own, and only nodes that may share a sharded
 * unit (linear ones and outputs, shard_safe_kind) join a unit that holds
 * a keyed node: its linear tail runs in the replicas too. Returns 0, or
 * SC_ENOMEM / a graph error with parent[] possibly unwritten.
 */
static int
chain_parents(const struct sc_graph *g, uint32_t *parent, const bool *keyed)
{
	size_t n = sc_graph_node_count(g);
	uint32_t *readers = malloc(n * sizeof(*readers));
	bool *hk = calloc(n, sizeof(*hk)); /* the set holds a keyed node */
	int rc;

	if (!readers || !hk) {
		free(readers);
		free(hk);
		return sc__fail(SC_ENOMEM, "chains: %zu nodes", n);
	}
	rc = count_readers(g, readers);
	for (size_t i = 0; i < n; i++) {
		parent[i] = (uint32_t)i;
		hk[i] = keyed && keyed[i];
	}
	for (size_t i = 0; i < n && !rc; i++) {
		struct sc_node_info ni;
		uint32_t a, b;
		int from;

		rc = sc_graph_node_info(g, (int)i, &ni);
		if (rc || ni.ninputs != 1 || ni.inputs[0] < 0)
			continue;
		from = ni.inputs[0];
		if (readers[from] != 1)
			continue;
		a = uf_find(parent, (uint32_t)from);
		b = uf_find(parent, (uint32_t)i);
		if (keyed && (keyed[i] || (hk[a] && !shard_safe_kind(ni.kind))))
			continue;
		uf_union(parent, a, b);
		hk[uf_find(parent, a)] = hk[a] || hk[b];
	}
	free(readers);
	free(hk);
	return rc;
}

int
sc_placement_chains(const struct sc_graph *g, struct sc_placement **out)
{
	const char *fn = "sc_placement_chains";
	int rc = check_graph(fn, g, out);
	uint32_t *parent, nunits;
	int32_t *m;
	size_t n;

	if (rc)
		return rc;
	n = sc_graph_node_count(g);
	if (!(m = map_alloc(fn, n)))
		return SC_ENOMEM;
	if (!(parent = malloc(n * sizeof(*parent)))) {
		free(m);
		return sc__fail(SC_ENOMEM, "%s: %zu nodes", fn, n);
	}
	/* parent[] is written only when chain_parents succeeds: walk it
	 * only then (it failed allocating before writing it once). */
	rc = chain_parents(g, parent, NULL);
	if (rc) {
		free(parent);
		free(m);
		return rc;
	}
	nunits = number_roots(parent, n, m, 0);
	free(parent);
	return placement_make(fn, g, m, n, nunits, "chains", out);
}

int
sc_placement_random(const struct sc_graph *g, uint32_t nunits, uint64_t seed,
		    struct sc_placement **out)
{
	const char *fn = "sc_placement_random";
	int rc = check_graph(fn, g, out);
	uint32_t *raw, used = 0;
	int32_t *m;
	size_t n;

	if (rc)
		return rc;
	if (nunits == 0)
		return sc__fail(SC_EINVAL, "%s: 0 units", fn);
	n = sc_graph_node_count(g);
	if (!(m = map_alloc(fn, n)))
		return SC_ENOMEM;
	if (!(raw = malloc(n * sizeof(*raw)))) {
		free(m);
		return sc__fail(SC_ENOMEM, "%s: %zu nodes", fn, n);
	}
	/* Drop empty units: renumber in order of each unit's first node
	 * (a quadratic scan over nodes, so that nunits may be anything
	 * without an array of that size). */
	for (size_t i = 0; i < n; i++) {
		raw[i] = (uint32_t)(sc_splitmix_next(&seed) % nunits);
		m[i] = -1;
		for (size_t j = 0; j < i && m[i] < 0; j++)
			if (raw[j] == raw[i])
				m[i] = m[j];
		if (m[i] < 0)
			m[i] = (int32_t)used++;
	}
	free(raw);
	return placement_make(fn, g, m, n, used, "random", out);
}

int
sc_placement_manual(const struct sc_graph *g, const int32_t *unit_of, size_t n,
		    uint32_t nunits, struct sc_placement **out)
{
	const char *fn = "sc_placement_manual";
	int rc = check_graph(fn, g, out);
	int32_t *m;

	if (rc)
		return rc;
	if (!unit_of)
		return sc__fail(SC_EINVAL, "%s: NULL map", fn);
	if (n != sc_graph_node_count(g))
		return sc__fail(SC_EINVAL,
				"%s: the map has %zu entries, the graph %zu "
				"nodes",
				fn, n, sc_graph_node_count(g));
	if (!(m = map_alloc(fn, n)))
		return SC_ENOMEM;
	memcpy(m, unit_of, n * sizeof(*m));
	return placement_make(fn, g, m, n, nunits, "manual", out);
}

/* --- sharding ------------------------------------------------------------- */

/* The key width of a keyed stateful node, or 0 if it is not one. */
static uint32_t
keyed_width(const struct sc_graph *g, const struct sc_node_info *ni)
{
	switch (ni->kind) {
	case SC_NODE_AGGREGATE:
	case SC_NODE_TOPK:
	case SC_NODE_MULTIAGG:
	case SC_NODE_SESSION:
	case SC_NODE_JOIN:
	case SC_NODE_ANTIJOIN:
		return ni->key;
	case SC_NODE_DISTINCT:
		return sc_graph_schema(g, ni->inputs[0])->ncols;
	default:
		return 0;
	}
}

static bool
shard_safe_kind(enum sc_node_kind k)
{
	switch (k) {
	case SC_NODE_INPUT:
	case SC_NODE_OUTPUT:
	case SC_NODE_MAP:
	case SC_NODE_FILTER:
	case SC_NODE_FLAT_MAP:
	case SC_NODE_INDEX_BY:
	case SC_NODE_PLUS:
	case SC_NODE_NEGATE:
	case SC_NODE_MINUS:
		return true;
	default:
		return false;
	}
}

/*
 * The one keyed node of `unit`, in *found, checking that its other nodes
 * are of kinds that may run sharded. Returns 0 or SC_EINVAL naming the
 * node that prevents it (fn names the caller in the message).
 */
static int
shard_keyed_node(const char *fn, const struct sc_placement *p, uint32_t unit,
		 int *found)
{
	int keyed = -1;

	for (size_t i = 0; i < p->nnodes; i++) {
		struct sc_node_info ni;

		if (p->unit_of[i] != unit)
			continue;
		if (sc_graph_node_info(p->g, (int)i, &ni) != 0)
			return SC_EINVAL;
		if (keyed_width(p->g, &ni) > 0) {
			if (keyed >= 0)
				return sc__fail(
				    SC_EINVAL,
				    "%s: unit %u holds two keyed "
				    "nodes, '%s' and '%s'",
				    fn, unit, node_name(p->g, keyed), ni.name);
			keyed = (int)i;
		} else if (!shard_safe_kind(ni.kind)) {
			return sc__fail(SC_EINVAL,
					"%s: unit %u: node '%s' (%s) cannot be "
					"sharded",
					fn, unit, ni.name,
					sc_node_kind_name(ni.kind));
		}
	}
	if (keyed < 0)
		return sc__fail(SC_EINVAL,
				"%s: unit %u has no keyed node (aggregate, "
				"join or antijoin with a key, distinct)",
				fn, unit);
	*found = keyed;
	return 0;
}

/* Whether node `reader` (its info) reads stream s on some port. */
static bool
node_reads(const struct sc_node_info *reader, int s)
{
	for (uint32_t q = 0; q < reader->ninputs; q++)
		if (reader->inputs[q] == s)
			return true;
	return false;
}

/*
 * Whether stream s enters `unit`: made in another unit (a boundary input),
 * or an input node of the unit (the host's rows enter there).
 */
static bool
stream_enters(const struct sc_placement *p, uint32_t unit, int s)
{
	struct sc_node_info si;

	if (s < 0 || (size_t)s >= p->nnodes ||
	    sc_graph_node_info(p->g, s, &si) != 0)
		return false;
	return p->unit_of[s] != unit || si.kind == SC_NODE_INPUT;
}

/*
 * The sharding rule of placement.h, the one function that both
 * sc_placement_set_shards (which refuses a unit) and sc_placement_key
 * (which sc_runtime_create asks for the routing key of every stream that
 * enters a sharded unit) apply, so that a unit set_shards accepts always
 * builds: `unit` holds one keyed node (*keyed) and otherwise only
 * shard-safe kinds, and every stream entering it is read inside it by the
 * keyed node, and by no other node, since rows are routed by that node's
 * key. Returns 0 or SC_EINVAL naming the node that prevents it.
 */
static int
shard_check(const char *fn, const struct sc_placement *p, uint32_t unit,
	    int *keyed)
{
	struct sc_node_info ki;
	int found;
	int rc = shard_keyed_node(fn, p, unit, &found);

	if (rc)
		return rc;
	if (sc_graph_node_info(p->g, found, &ki) != 0)
		return SC_EINVAL;
	for (size_t i = 0; i < p->nnodes; i++) {
		struct sc_node_info ni;

		if (p->unit_of[i] != unit || (int)i == found)
			continue;
		if (sc_graph_node_info(p->g, (int)i, &ni) != 0)
			return SC_EINVAL;
		/* An input node of the unit: no key routes its rows unless
		 * the keyed node reads it. */
		if (ni.kind == SC_NODE_INPUT && !node_reads(&ki, (int)i))
			return sc__fail(SC_EINVAL,
					"%s: unit %u: input node '%s' enters "
					"the unit, but the keyed node '%s', "
					"whose key routes entering rows, does "
					"not read it",
					fn, unit, ni.name, ki.name);
		for (uint32_t q = 0; q < ni.ninputs; q++) {
			int s = ni.inputs[q];

			if (stream_enters(p, unit, s))
				return sc__fail(SC_EINVAL,
						"%s: unit %u: node '%s' reads "
						"'%s', a stream entering the "
						"unit, which only the keyed "
						"node '%s' may read",
						fn, unit, ni.name,
						node_name(p->g, s), ki.name);
		}
	}
	*keyed = found;
	return 0;
}

int
sc_placement_set_shards(struct sc_placement *p, uint32_t unit, uint32_t k)
{
	int keyed;
	int rc;

	if (!p)
		return sc__fail(SC_EINVAL, "sc_placement_set_shards: NULL");
	if (unit >= p->nunits)
		return sc__fail(SC_EINVAL,
				"sc_placement_set_shards: unit %u out of range "
				"(%u units)",
				unit, p->nunits);
	if (k < 1 || k > SC_PLACEMENT_MAX_SHARDS)
		return sc__fail(SC_EINVAL,
				"sc_placement_set_shards: %u shards (1..%d)", k,
				SC_PLACEMENT_MAX_SHARDS);
	if (p->rank_manual && k != p->shards[unit])
		return sc__fail(SC_ESTATE,
				"sc_placement_set_shards: unit %u: the ranks "
				"were named replica by replica; set the shards "
				"first",
				unit);
	if (k > 1 &&
	    (rc = shard_check("sc_placement_set_shards", p, unit, &keyed)) != 0)
		return rc;
	p->shards[unit] = k;
	return 0;
}

int
sc_placement_sharded(const struct sc_graph *g, uint32_t k,
		     struct sc_placement **out)
{
	const char *fn = "sc_placement_sharded";
	int rc = check_graph(fn, g, out);
	struct sc_placement *p = NULL;
	uint32_t *parent = NULL, nunits;
	bool *keyed = NULL;
	int32_t *m = NULL;
	size_t n;

	if (rc)
		return rc;
	if (k < 1 || k > SC_PLACEMENT_MAX_SHARDS)
		return sc__fail(SC_EINVAL, "%s: %u shards (1..%d)", fn, k,
				SC_PLACEMENT_MAX_SHARDS);
	n = sc_graph_node_count(g);
	m = map_alloc(fn, n);
	parent = malloc(n * sizeof(*parent));
	keyed = calloc(n, sizeof(*keyed));
	if (!m || !parent || !keyed) {
		rc = sc__fail(SC_ENOMEM, "%s: %zu nodes", fn, n);
		goto free_all;
	}
	for (size_t i = 0; i < n; i++) {
		struct sc_node_info ni;

		if (sc_graph_node_info(g, (int)i, &ni) == 0)
			keyed[i] = keyed_width(g, &ni) > 0;
	}
	/* Each keyed node heads a unit of its own, with its linear tail. */
	if ((rc = chain_parents(g, parent, keyed)) != 0)
		goto free_all;
	nunits = number_roots(parent, n, m, 0);
	rc = placement_make(fn, g, m, n, nunits, "sharded", &p);
	m = NULL; /* placement_make took it */
	if (rc)
		goto free_all;
	for (size_t i = 0; i < n && k > 1; i++)
		if (keyed[i] &&
		    (rc = sc_placement_set_shards(p, p->unit_of[i], k)) != 0)
			goto free_all;
	*out = p;
	p = NULL;
free_all:
	sc_placement_destroy(p);
	free(keyed);
	free(parent);
	free(m);
	return rc;
}

/* --- balanced: even runs of the id order ------------------------------ */

/* The kind's cost per row (placement.h: rough relative costs). */
static double
kind_weight(enum sc_node_kind k)
{
	switch (k) {
	case SC_NODE_JOIN:
	case SC_NODE_ANTIJOIN:
		return 4.0;
	case SC_NODE_DISTINCT:
	case SC_NODE_AGGREGATE:
	case SC_NODE_MULTIAGG:
	case SC_NODE_SESSION:
		return 3.0;
	case SC_NODE_INTEGRATE:
	case SC_NODE_DIFFERENTIATE:
		return 2.0;
	default:
		return 1.0;
	}
}

int
sc_placement_cost_estimate(const struct sc_graph *g, double *cost, size_t n)
{
	const char *fn = "sc_placement_cost_estimate";

	if (!g || !cost)
		return sc__fail(SC_EINVAL, "%s: NULL", fn);
	if (n != sc_graph_node_count(g))
		return sc__fail(SC_EINVAL, "%s: %zu costs for %zu nodes", fn, n,
				sc_graph_node_count(g));
	for (size_t i = 0; i < n; i++) {
		struct sc_node_info ni;
		int rc = sc_graph_node_info(g, (int)i, &ni);

		if (rc)
			return rc;
		cost[i] = kind_weight(ni.kind);
	}
	return 0;
}

/* Feed the circuit submissions 0..steps-1 of gen, a step each. A tick
 * workload's boundary carries no rows: it is passed over, so each batch
 * is still a step (the costs count rows, which are the same either way). */
static int
calibrate_feed(struct sc_circuit *c, sc_settle_gen_fn gen, void *ctx,
	       size_t steps)
{
	for (size_t i = 0; i < steps; i++) {
		struct sc_settle_step st = {.input = -1, .batch = NULL};
		int rc = gen(ctx, i, &st);

		if (rc == 0 && st.input == SC_SETTLE_TICK && !st.batch)
			continue;
		if (rc == 0)
			rc = sc_circuit_feed(c, st.input, st.batch);
		sc_batch_release(st.batch);
		if (rc == 0)
			rc = sc_circuit_step(c);
		if (rc)
			return rc;
	}
	return 0;
}

/* cost[i] from the circuit's counters (placement.h: measured cost). */
static int
calibrate_read(const struct sc_graph *g, const struct sc_circuit *c,
	       double *cost, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct sc_node_info ni;
		struct sc_node_stats st;
		int rc = sc_graph_node_info(g, (int)i, &ni);

		if (rc == 0)
			rc = sc_circuit_node_stats(c, (int)i, &st);
		if (rc)
			return rc;
		cost[i] = kind_weight(ni.kind) *
			  ((double)st.rows_in + (double)st.rows_out +
			   (double)st.ticks_busy);
	}
	return 0;
}

int
sc_placement_calibrate(struct sc_graph *g, sc_settle_gen_fn gen, void *ctx,
		       size_t steps, double *cost, size_t n)
{
	const char *fn = "sc_placement_calibrate";
	struct sc_circuit *c = NULL;
	double *tmp;
	int rc;

	if (!g || !gen || !cost)
		return sc__fail(SC_EINVAL, "%s: NULL", fn);
	if (steps == 0)
		return sc__fail(SC_EINVAL, "%s: 0 steps", fn);
	if (n != sc_graph_node_count(g))
		return sc__fail(SC_EINVAL, "%s: %zu costs for %zu nodes", fn, n,
				sc_graph_node_count(g));
	/* Into a copy first: cost is written only on success. */
	if (!(tmp = malloc((n ? n : 1) * sizeof(*tmp))))
		return sc__fail(SC_ENOMEM, "%s: %zu nodes", fn, n);
	if ((rc = sc_circuit_create(g, &c)) != 0)
		goto free_tmp;
	rc = calibrate_feed(c, gen, ctx, steps);
	if (rc == 0)
		rc = calibrate_read(g, c, tmp, n);
	sc_circuit_destroy(c);
	if (rc == 0)
		memcpy(cost, tmp, n * sizeof(*tmp));
free_tmp:
	free(tmp);
	return rc;
}

/*
 * The blocks that no cut may split: block[i] is the block of node i, in
 * id order, and bcost[b] its cost. A feedback fb bound to `from` (> fb)
 * forbids every cut between fb and from. Returns the block count.
 */
static size_t
balanced_blocks(const struct sc_graph *g, const double *cost, size_t n,
		size_t *block, double *bcost)
{
	size_t nb = 0, reach = 0; /* no cut before node `reach` */

	for (size_t i = 0; i < n; i++) {
		struct sc_node_info ni;

		if (i == 0 || i > reach)
			bcost[nb++] = 0.0;
		block[i] = nb - 1;
		bcost[nb - 1] += cost[i];
		if (sc_graph_node_info(g, (int)i, &ni) == 0 &&
		    ni.kind == SC_NODE_FEEDBACK && ni.ninputs == 1 &&
		    ni.inputs[0] > (int)i && (size_t)ni.inputs[0] > reach)
			reach = (size_t)ni.inputs[0];
	}
	return nb;
}

/* Units the greedy pass opens with no unit over `cap` (a block over cap
 * gets a unit alone); into unit_of_block when non-NULL. */
static uint32_t
balanced_pass(const double *bcost, size_t nb, double cap,
	      uint32_t *unit_of_block)
{
	uint32_t units = 1;
	double load = 0.0;

	for (size_t b = 0; b < nb; b++) {
		if (load > 0.0 && load + bcost[b] > cap) {
			units++;
			load = 0.0;
		}
		load += bcost[b];
		if (unit_of_block)
			unit_of_block[b] = units - 1;
	}
	return units;
}

/* The least cap with which the greedy pass opens at most k units. */
static double
balanced_cap(const double *bcost, size_t nb, uint32_t k)
{
	double lo = 0.0, hi = 0.0;

	for (size_t b = 0; b < nb; b++) {
		hi += bcost[b];
		lo = bcost[b] > lo ? bcost[b] : lo;
	}
	/* hi (the total) always fits in one unit; lo (the costliest
	 * block) is a floor no cut can go under. */
	for (int it = 0; it < 100 && hi - lo > 1e-9 * hi; it++) {
		double mid = lo + (hi - lo) / 2;

		if (balanced_pass(bcost, nb, mid, NULL) <= k)
			hi = mid;
		else
			lo = mid;
	}
	return hi;
}

static int
balanced_check(const char *fn, const struct sc_graph *g, uint32_t k,
	       const double *cost, size_t n, struct sc_placement **out)
{
	int rc = check_graph(fn, g, out);

	if (rc)
		return rc;
	if (k < 1 || k > SC_PLACEMENT_MAX_BALANCED)
		return sc__fail(SC_EINVAL, "%s: %u units (1..%d)", fn, k,
				SC_PLACEMENT_MAX_BALANCED);
	if (n != sc_graph_node_count(g))
		return sc__fail(SC_EINVAL, "%s: %zu costs for %zu nodes", fn, n,
				sc_graph_node_count(g));
	for (size_t i = 0; cost && i < n; i++)
		if (!(cost[i] >= 0.0) || cost[i] > 1e300)
			return sc__fail(SC_EINVAL,
					"%s: node %zu '%s' has cost %g (want a "
					"finite cost >= 0)",
					fn, i, node_name(g, (int)i), cost[i]);
	return 0;
}

int
sc_placement_balanced(const struct sc_graph *g, uint32_t k, const double *cost,
		      size_t n, struct sc_placement **out)
{
	const char *fn = "sc_placement_balanced";
	int rc = balanced_check(fn, g, k, cost, n, out);
	double *est = NULL, *bcost = NULL;
	uint32_t *ub = NULL, units;
	size_t *block = NULL, nb;
	int32_t *m = NULL;

	if (rc)
		return rc;
	est = malloc(n * sizeof(*est));
	bcost = malloc(n * sizeof(*bcost));
	block = malloc(n * sizeof(*block));
	ub = malloc(n * sizeof(*ub));
	m = map_alloc(fn, n);
	if (!est || !bcost || !block || !ub || !m) {
		rc = sc__fail(SC_ENOMEM, "%s: %zu nodes", fn, n);
		goto free_all;
	}
	if (!cost && (rc = sc_placement_cost_estimate(g, est, n)) != 0)
		goto free_all;
	nb = balanced_blocks(g, cost ? cost : est, n, block, bcost);
	units = balanced_pass(bcost, nb, balanced_cap(bcost, nb, k), ub);
	for (size_t i = 0; i < n; i++)
		m[i] = (int32_t)ub[block[i]];
	rc = placement_make(fn, g, m, n, units, "balanced", out);
	m = NULL; /* placement_make took it */
free_all:
	free(m);
	free(ub);
	free(block);
	free(bcost);
	free(est);
	return rc;
}

/* The K of "balanced" without one: the cores online (placement.h). */
static uint32_t
balanced_default_units(void)
{
	long c = sysconf(_SC_NPROCESSORS_ONLN);

	if (c < 1)
		return 1;
	return c > SC_PLACEMENT_MAX_BALANCED ? SC_PLACEMENT_MAX_BALANCED
					     : (uint32_t)c;
}

#define SC__STRATEGIES                                                         \
	"single, per-node, chains, random:N, sharded:K, balanced, balanced:K"

/* "balanced:K": digits only, K in 1..SC_PLACEMENT_MAX_BALANCED. */
static int
parse_balanced(const struct sc_graph *g, const char *spec,
	       struct sc_placement **out)
{
	const char *num = spec + 9;
	unsigned long v;

	errno = 0;
	v = strtoul(num, NULL, 10);
	if (!*num || strspn(num, "0123456789") != strlen(num) || errno ||
	    v < 1 || v > SC_PLACEMENT_MAX_BALANCED)
		return sc__fail(
		    SC_EINVAL,
		    "sc_placement_parse: '%s': balanced:K takes a "
		    "whole number in 1..%d (strategies: " SC__STRATEGIES ")",
		    spec, SC_PLACEMENT_MAX_BALANCED);
	return sc_placement_balanced(g, (uint32_t)v, NULL,
				     sc_graph_node_count(g), out);
}

static int
parse_strategy(const struct sc_graph *g, const char *spec, uint64_t seed,
	       struct sc_placement **out)
{
	const char *fn = "sc_placement_parse";
	unsigned long v;
	char *end;

	if (!strcmp(spec, "single"))
		return sc_placement_single(g, out);
	if (!strcmp(spec, "per-node"))
		return sc_placement_per_node(g, out);
	if (!strcmp(spec, "chains"))
		return sc_placement_chains(g, out);
	if (!strcmp(spec, "balanced"))
		return sc_placement_balanced(g, balanced_default_units(), NULL,
					     sc_graph_node_count(g), out);
	if (!strncmp(spec, "balanced:", 9))
		return parse_balanced(g, spec, out);
	if (!strncmp(spec, "random:", 7) || !strncmp(spec, "sharded:", 8)) {
		const char *num = strchr(spec, ':') + 1;
		bool random = spec[0] == 'r';
		uint32_t hi = random ? UINT32_MAX : SC_PLACEMENT_MAX_SHARDS;

		/* Digits only: strtoul alone would take spaces, a sign or a
		 * wrapped negative. */
		errno = 0;
		v = strtoul(num, &end, 10);
		if (!*num || strspn(num, "0123456789") != strlen(num) ||
		    errno || v < 1 || v > hi)
			return sc__fail(
			    SC_EINVAL,
			    "%s: '%s': %s takes a whole number in "
			    "1..%" PRIu32 " (strategies: " SC__STRATEGIES ")",
			    fn, spec, random ? "random:N" : "sharded:K", hi);
		return random ? sc_placement_random(g, (uint32_t)v, seed, out)
			      : sc_placement_sharded(g, (uint32_t)v, out);
	}
	return sc__fail(SC_EINVAL,
			"%s: unknown strategy '%s' (" SC__STRATEGIES ")", fn,
			spec);
}

/* --- ranks ------------------------------------------------------------------
 */

size_t
sc_placement_replicas(const struct sc_placement *p)
{
	size_t n = 0;

	for (uint32_t u = 0; p && u < p->nunits; u++)
		n += p->shards[u];
	return n;
}

uint32_t
sc_placement_ranks(const struct sc_placement *p)
{
	return p ? p->nranks : 0;
}

int
sc_placement_spread_ranks(struct sc_placement *p, uint32_t nranks)
{
	if (!p)
		return sc__fail(SC_EINVAL, "sc_placement_spread_ranks: NULL");
	if (nranks < 1 || nranks > SC_PLACEMENT_MAX_RANKS)
		return sc__fail(SC_EINVAL,
				"sc_placement_spread_ranks: %u ranks (1..%d)",
				nranks, SC_PLACEMENT_MAX_RANKS);
	free(p->rank_manual);
	p->rank_manual = NULL;
	p->nranks = nranks;
	return 0;
}

int
sc_placement_set_ranks(struct sc_placement *p, uint32_t nranks,
		       const uint32_t *rank, size_t n)
{
	const char *fn = "sc_placement_set_ranks";
	size_t want;
	uint32_t *copy;

	if (!p || !rank)
		return sc__fail(SC_EINVAL, "%s: NULL", fn);
	if (nranks < 1 || nranks > SC_PLACEMENT_MAX_RANKS)
		return sc__fail(SC_EINVAL, "%s: %u ranks (1..%d)", fn, nranks,
				SC_PLACEMENT_MAX_RANKS);
	want = sc_placement_replicas(p);
	if (n != want)
		return sc__fail(SC_EINVAL,
				"%s: %zu ranks given for %zu replicas", fn, n,
				want);
	for (size_t i = 0; i < n; i++)
		if (rank[i] >= nranks)
			return sc__fail(SC_EINVAL,
					"%s: replica slot %zu on rank %u, out "
					"of 0..%u",
					fn, i, rank[i], nranks - 1);
	copy = malloc(n * sizeof(*copy));
	if (!copy)
		return sc__fail(SC_ENOMEM, "%s: %zu replicas", fn, n);
	memcpy(copy, rank, n * sizeof(*copy));
	free(p->rank_manual);
	p->rank_manual = copy;
	p->nranks = nranks;
	return 0;
}

int
sc_placement_rank_of(const struct sc_placement *p, uint32_t unit,
		     uint32_t replica)
{
	size_t slot = 0;

	if (!p)
		return sc__fail(SC_EINVAL, "sc_placement_rank_of: NULL");
	if (unit >= p->nunits || replica >= p->shards[unit])
		return sc__fail(SC_ENOENT,
				"sc_placement_rank_of: no replica %u of unit "
				"%u",
				replica, unit);
	if (!p->rank_manual)
		return (int)((p->shards[unit] > 1 ? replica : unit) %
			     p->nranks);
	for (uint32_t u = 0; u < unit; u++)
		slot += p->shards[u];
	return (int)p->rank_manual[slot + replica];
}

/* "@ranks:N" (spread) or "@ranks:R,R,..." (a rank per replica slot)
 * after a strategy: applied to the placement *p made of the prefix. */
static int
parse_ranks(struct sc_placement *p, const char *spec, const char *list)
{
	uint32_t rank[SC_PLACEMENT_MAX_RANK_LIST], hi = 0;
	size_t n = 0;

	for (const char *c = list;; c++) {
		size_t len = strspn(c, "0123456789");
		unsigned long v;

		errno = 0;
		v = strtoul(c, NULL, 10);
		if (len == 0 || len > 5 || errno ||
		    v > SC_PLACEMENT_MAX_RANKS ||
		    n == SC_PLACEMENT_MAX_RANK_LIST ||
		    (c[len] != ',' && c[len] != 0))
			return sc__fail(SC_EINVAL,
					"sc_placement_parse: '%s': ranks:N "
					"takes N in 1..%d, or a list of ranks "
					"in 0..%d, one per replica",
					spec, SC_PLACEMENT_MAX_RANKS,
					SC_PLACEMENT_MAX_RANKS - 1);
		rank[n++] = (uint32_t)v;
		hi = (uint32_t)v > hi ? (uint32_t)v : hi;
		c += len;
		if (!*c)
			break;
	}
	if (n == 1 && !strchr(list, ','))
		return sc_placement_spread_ranks(p, rank[0]);
	return sc_placement_set_ranks(p, hi + 1, rank, n);
}

int
sc_placement_parse(const struct sc_graph *g, const char *spec, uint64_t seed,
		   struct sc_placement **out)
{
	char base[64];
	const char *at, *list;
	struct sc_placement *p;
	int rc;

	if (!spec)
		return sc__fail(SC_EINVAL, "sc_placement_parse: NULL spec");
	at = strstr(spec, "@ranks:");
	if (!strncmp(spec, "ranks:", 6)) {
		/* ranks:N alone: chains, spread over the ranks. */
		(void)snprintf(base, sizeof(base), "chains");
		list = spec + 6;
	} else if (!at) {
		return parse_strategy(g, spec, seed, out);
	} else if ((size_t)(at - spec) >= sizeof(base)) {
		return sc__fail(SC_EINVAL, "sc_placement_parse: '%s': too long",
				spec);
	} else {
		(void)snprintf(base, sizeof(base), "%.*s", (int)(at - spec),
			       spec);
		list = at + 7;
	}
	rc = parse_strategy(g, base, seed, &p);
	if (rc)
		return rc;
	rc = parse_ranks(p, spec, list);
	if (rc) {
		sc_placement_destroy(p);
		return rc;
	}
	*out = p;
	return 0;
}

void
sc_placement_destroy(struct sc_placement *p)
{
	if (!p)
		return;
	free(p->unit_of);
	free(p->shards);
	free(p->rank_manual);
	free(p);
}

/* --- reading ---------------------------------------------------------------
 */

const struct sc_graph *
sc_placement_graph(const struct sc_placement *p)
{
	return p ? p->g : NULL;
}

const char *
sc_placement_strategy(const struct sc_placement *p)
{
	return p ? p->strategy : "?";
}

uint32_t
sc_placement_units(const struct sc_placement *p)
{
	return p ? p->nunits : 0;
}

size_t
sc_placement_nodes(const struct sc_placement *p)
{
	return p ? p->nnodes : 0;
}

int
sc_placement_unit_of(const struct sc_placement *p, int node)
{
	if (!p)
		return sc__fail(SC_EINVAL, "sc_placement_unit_of: NULL");
	if (node < 0 || (size_t)node >= p->nnodes)
		return sc__fail(SC_ENOENT, "sc_placement_unit_of: no node %d",
				node);
	SC_ASSERT(p->unit_of[node] < p->nunits); /* placement_make checked */
	return (int)p->unit_of[node];
}

uint32_t
sc_placement_shards(const struct sc_placement *p, uint32_t unit)
{
	if (!p || unit >= p->nunits)
		return 0;
	SC_ASSERT(p->shards[unit] >= 1 &&
		  p->shards[unit] <= SC_PLACEMENT_MAX_SHARDS);
	return p->shards[unit];
}

int
sc_placement_key(const struct sc_placement *p, uint32_t unit, int stream,
		 uint32_t *key)
{
	struct sc_node_info ni;
	int keyed;

	if (!p || !key || unit >= p->nunits || p->shards[unit] < 2)
		return sc__fail(SC_EINVAL,
				"sc_placement_key: unit %u is not "
				"sharded",
				unit);
	if (shard_check("sc_placement_key", p, unit, &keyed) != 0)
		return SC_EINVAL;
	if (sc_graph_node_info(p->g, keyed, &ni) != 0)
		return SC_EINVAL;
	/* shard_check passed: every stream entering the unit, a boundary
	 * input or an input node of the unit, is among the keyed node's
	 * inputs, and its rows are routed by that node's key. */
	if (node_reads(&ni, stream)) {
		*key = keyed_width(p->g, &ni);
		return 0;
	}
	return sc__fail(SC_EINVAL,
			"sc_placement_key: unit %u does not read stream %d "
			"'%s' (its keyed node '%s' does not)",
			unit, stream, node_name(p->g, stream), ni.name);
}

/* --- printing ------------------------------------------------------------- */

/*
 * A stream being written, with the first failure kept: after a write
 * fails, the rest are skipped, and out_end reports it, so the printers
 * read as a list of writes and still return SC_EIO when the stream
 * refuses one (a full disk, say).
 */
struct out {
	FILE *f;
	bool failed; /* a write failed (errno then in err) */
	int err;     /* errno of the first failed write */
};

static void
out_fail(struct out *o)
{
	o->failed = true;
	o->err = errno;
}

static void __attribute__((format(printf, 2, 3)))
out_printf(struct out *o, const char *fmt, ...)
{
	va_list ap;
	int rc;

	if (o->failed)
		return;
	va_start(ap, fmt);
	rc = vfprintf(o->f, fmt, ap);
	va_end(ap);
	if (rc < 0)
		out_fail(o);
}

static void
out_putc(struct out *o, int c)
{
	if (!o->failed && fputc(c, o->f) == EOF)
		out_fail(o);
}

/*
 * Flush (a buffered stream reports most failures only then) and return 0,
 * or SC_EIO naming fn and the system's reason.
 */
static int
out_end(struct out *o, const char *fn)
{
	char why[128] = "unknown reason";

	if (!o->failed && fflush(o->f) != 0)
		out_fail(o);
	if (!o->failed)
		return 0;
	(void)strerror_r(o->err, why, sizeof(why));
	return sc__fail(SC_EIO, "%s: writing failed: %s", fn, why);
}

/* " @rank R" or " @ranks R,R,..." (one per replica), when it spans
 * several ranks. */
static void
print_ranks(struct out *o, const struct sc_placement *p, uint32_t u)
{
	if (p->nranks < 2)
		return;
	out_printf(o, " @rank%s", p->shards[u] > 1 ? "s" : "");
	for (uint32_t i = 0; i < p->shards[u]; i++)
		out_printf(o, "%s%d", i ? "," : " ",
			   sc_placement_rank_of(p, u, i));
}

int
sc_placement_fprint(const struct sc_placement *p, FILE *f)
{
	struct out o = {.f = f};

	if (!p || !f)
		return sc__fail(SC_EINVAL, "sc_placement_fprint: NULL");
	out_printf(&o, "placement '%s': %zu nodes in %u units", p->strategy,
		   p->nnodes, p->nunits);
	if (p->nranks > 1)
		out_printf(&o, " over %u ranks", p->nranks);
	out_putc(&o, '\n');
	for (uint32_t u = 0; u < p->nunits; u++) {
		bool first = true;

		out_printf(&o, "unit %u", u);
		if (p->shards[u] > 1)
			out_printf(&o, " x%u", p->shards[u]);
		print_ranks(&o, p, u);
		out_putc(&o, ':');
		for (size_t i = 0; i < p->nnodes; i++) {
			struct sc_node_info ni;

			if (p->unit_of[i] != u ||
			    sc_graph_node_info(p->g, (int)i, &ni) != 0)
				continue;
			out_printf(&o, "%s %s (%s)", first ? "" : ",", ni.name,
				   sc_node_kind_name(ni.kind));
			first = false;
		}
		out_putc(&o, '\n');
	}
	return out_end(&o, "sc_placement_fprint");
}

/* The body of a DOT string literal: quotes and backslashes escaped,
 * newlines as DOT's \n. */
static void
dot_escaped(struct out *o, const char *s)
{
	for (; *s; s++) {
		if (*s == '\n') {
			out_printf(o, "\\n");
			continue;
		}
		if (*s == '"' || *s == '\\')
			out_putc(o, '\\');
		out_putc(o, *s);
	}
}

/* One cluster: unit u, its shards, its nodes labelled "name\nkind". */
static void
dot_cluster(struct out *o, const struct sc_placement *p, uint32_t u)
{
	out_printf(o, "\tsubgraph cluster_u%u {\n\t\tlabel=\"unit %u", u, u);
	if (p->shards[u] > 1)
		out_printf(o, " x%u", p->shards[u]);
	print_ranks(o, p, u);
	out_printf(o, "\";\n");
	for (size_t i = 0; i < p->nnodes; i++) {
		struct sc_node_info ni;

		if (p->unit_of[i] != u ||
		    sc_graph_node_info(p->g, (int)i, &ni) != 0)
			continue;
		out_printf(o, "\t\tn%zu [label=\"", i);
		dot_escaped(o, ni.name);
		out_printf(o, "\\n");
		dot_escaped(o, sc_node_kind_name(ni.kind));
		out_printf(o, "\"];\n");
	}
	out_printf(o, "\t}\n");
}

/* Every graph edge into node i: bold across units, else labelled with
 * the port when i has several. */
static void
dot_edges_into(struct out *o, const struct sc_placement *p, size_t i)
{
	struct sc_node_info ni;

	if (sc_graph_node_info(p->g, (int)i, &ni) != 0)
		return;
	for (uint32_t q = 0; q < ni.ninputs; q++) {
		int s = ni.inputs[q];

		if (s < 0 || (size_t)s >= p->nnodes)
			continue;
		out_printf(o, "\tn%d -> n%zu", s, i);
		if (p->unit_of[s] != p->unit_of[i])
			out_printf(o, " [style=bold]");
		else if (ni.ninputs > 1)
			out_printf(o, " [label=\"%u\"]", q);
		out_printf(o, ";\n");
	}
}

int
sc_placement_fprint_dot(const struct sc_placement *p, FILE *f)
{
	struct out o = {.f = f};

	if (!p || !f)
		return sc__fail(SC_EINVAL, "sc_placement_fprint_dot: NULL");
	out_printf(&o, "digraph placement {\n\trankdir=LR;\n\tlabel=\"");
	dot_escaped(&o, p->strategy);
	out_printf(&o, "\";\n\tnode [shape=box];\n");
	for (uint32_t u = 0; u < p->nunits; u++)
		dot_cluster(&o, p, u);
	for (size_t i = 0; i < p->nnodes; i++)
		dot_edges_into(&o, p, i);
	out_printf(&o, "}\n");
	return out_end(&o, "sc_placement_fprint_dot");
}

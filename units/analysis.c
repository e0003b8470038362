/*
 * analysis.c - loops across units and the unit graph's components (see
 * analysis.h). Tarjan's algorithm (Tarjan 1972, "Depth-first search and
 * linear graph algorithms"), run once over the nodes (for loops) and once
 * over the units (for gating).
 */
#include "units/analysis.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* --- strongly connected components (Tarjan) -------------------------- */

static bool
is_delay(const struct sc_graph *g, int node)
{
	struct sc_node_info ni;

	return sc_graph_node_info(g, node, &ni) == 0 &&
	       ni.kind == SC_NODE_DELAY;
}

struct scc_state {
	uint32_t n;
	uint32_t **adj; /* adj[u]: successors, adj_n[u] of them */
	uint32_t *adj_n, *adj_cap;
	uint32_t *index, *low, *stack, *comp;
	bool *on;
	uint32_t next, sp, ncomp;
};

static void
scc_visit(struct scc_state *s, uint32_t v)
{
	s->index[v] = s->low[v] = s->next++;
	s->stack[s->sp++] = v;
	s->on[v] = true;
	for (uint32_t i = 0; i < s->adj_n[v]; i++) {
		/* adj_n[v] > 0 only once add_arc allocated adj[v]; the
		 * analyzer does not follow the calloc'd counts. */
		uint32_t w =
		    s->adj[v][i]; // NOLINT(clang-analyzer-core.NullDereference)

		if (s->index[w] == UINT32_MAX) {
			scc_visit(s, w);
			if (s->low[w] < s->low[v])
				s->low[v] = s->low[w];
		} else if (s->on[w] && s->index[w] < s->low[v]) {
			s->low[v] = s->index[w];
		}
	}
	if (s->low[v] == s->index[v]) {
		uint32_t w;

		do {
			w = s->stack[--s->sp];
			s->on[w] = false;
			s->comp[w] = s->ncomp;
		} while (w != v);
		s->ncomp++;
	}
}

static int
add_arc(struct scc_state *s, uint32_t a, uint32_t b)
{
	uint32_t cap = s->adj_cap[a];
	uint32_t *arr;

	for (uint32_t i = 0; i < s->adj_n[a]; i++)
		if (s->adj[a][i] == b)
			return 0;
	if (s->adj_n[a] == cap) {
		cap = cap ? 2 * cap : 4;
		arr = realloc(s->adj[a], cap * sizeof(*arr));
		if (!arr)
			return sc__fail(SC_ENOMEM, "sc_analysis: %u arcs", cap);
		s->adj[a] = arr;
		s->adj_cap[a] = cap;
	}
	s->adj[a][s->adj_n[a]++] = b;
	return 0;
}

/*
 * The strongly connected components of the graph's streams, with every
 * node mapped to a vertex: its unit (by_unit) or itself. comp[vertex]
 * receives the component of each of the n vertices.
 */
static int
scc_of(const struct sc_graph *g, const struct sc_placement *p, bool by_unit,
       bool skip_delays, uint32_t *comp)
{
	size_t nn = sc_graph_node_count(g);
	uint32_t n = by_unit ? sc_placement_units(p) : (uint32_t)nn;
	struct scc_state s;
	int rc = 0;

	memset(&s, 0, sizeof(s));
	s.n = n;
	s.adj = calloc(n, sizeof(*s.adj));
	s.adj_n = calloc(n, sizeof(uint32_t));
	s.adj_cap = calloc(n, sizeof(uint32_t));
	s.index = malloc(n * sizeof(uint32_t));
	s.low = malloc(n * sizeof(uint32_t));
	s.stack = malloc(n * sizeof(uint32_t));
	s.on = calloc(n, sizeof(bool));
	s.comp = comp;
	if (!s.adj || !s.adj_n || !s.adj_cap || !s.index || !s.low ||
	    !s.stack || !s.on) {
		rc = sc__fail(SC_ENOMEM, "sc_analysis: %u vertices", n);
		goto free_state;
	}
	for (size_t i = 0; i < nn && !rc; i++) {
		struct sc_node_info ni;
		uint32_t b = by_unit ? (uint32_t)sc_placement_unit_of(p, (int)i)
				     : (uint32_t)i;

		if ((rc = sc_graph_node_info(g, (int)i, &ni)) != 0)
			break;
		for (uint32_t q = 0; q < ni.ninputs && !rc; q++) {
			uint32_t a = by_unit ? (uint32_t)sc_placement_unit_of(
						   p, ni.inputs[q])
					     : (uint32_t)ni.inputs[q];

			if (a != b &&
			    !(skip_delays && is_delay(g, ni.inputs[q])))
				rc = add_arc(&s, a, b);
		}
	}
	for (uint32_t v = 0; v < n; v++)
		s.index[v] = UINT32_MAX;
	for (uint32_t v = 0; v < n && !rc; v++)
		if (s.index[v] == UINT32_MAX)
			scc_visit(&s, v);
free_state:
	for (uint32_t v = 0; s.adj && v < n; v++)
		free(s.adj[v]);
	free(s.adj);
	free(s.adj_n);
	free(s.adj_cap);
	free(s.index);
	free(s.low);
	free(s.stack);
	free(s.on);
	return rc;
}

/* Loops must stay inside one unit (analysis.h, "Loops"). Returns 0 or
 * SC_EINVAL naming an edge of the loop that crosses units. */
static int
check_loops(const struct sc_graph *g, const struct sc_placement *p)
{
	size_t nn = sc_graph_node_count(g);
	/* Zeroed, though scc_of writes every entry: the analyzer cannot see
	 * that every vertex is visited. */
	uint32_t *comp = calloc(nn ? nn : 1, sizeof(*comp));
	int rc;

	if (!comp)
		return sc__fail(SC_ENOMEM, "sc_runtime_create: %zu nodes", nn);
	rc = scc_of(g, p, false, false, comp);
	for (size_t i = 0; i < nn && !rc; i++) {
		struct sc_node_info ni, si;

		if ((rc = sc_graph_node_info(g, (int)i, &ni)) != 0)
			break;
		for (uint32_t q = 0; q < ni.ninputs && !rc; q++) {
			int from = ni.inputs[q];

			if (comp[from] != comp[i] ||
			    sc_placement_unit_of(p, from) ==
				sc_placement_unit_of(p, (int)i) ||
			    sc_graph_node_info(g, from, &si) != 0)
				continue;
			rc = sc__fail(SC_EINVAL,
				      "sc_runtime_create: the loop through "
				      "'%s' -> '%s' crosses units %d and %d; "
				      "a loop must stay inside one unit",
				      si.name, ni.name,
				      sc_placement_unit_of(p, from),
				      sc_placement_unit_of(p, (int)i));
		}
	}
	free(comp);
	return rc;
}

/*
 * Tick mode (analysis.h, "Ticks"): the unit graph without the streams of
 * delays must be acyclic. Returns 0 or SC_EINVAL naming a stream on a
 * cycle of it.
 */
static int
check_ticks(const struct sc_graph *g, const struct sc_placement *p)
{
	uint32_t n = sc_placement_units(p);
	size_t nn = sc_graph_node_count(g);
	uint32_t *comp = calloc(n ? n : 1, sizeof(*comp));
	int rc;

	if (!comp)
		return sc__fail(SC_ENOMEM, "sc_runtime_create: %u units", n);
	rc = scc_of(g, p, true, true, comp);
	for (size_t i = 0; i < nn && !rc; i++) {
		struct sc_node_info ni, si;
		int b = sc_placement_unit_of(p, (int)i);

		if ((rc = sc_graph_node_info(g, (int)i, &ni)) != 0)
			break;
		for (uint32_t q = 0; q < ni.ninputs && !rc; q++) {
			int from = ni.inputs[q];
			int a = sc_placement_unit_of(p, from);

			if (a == b || comp[a] != comp[b] || is_delay(g, from) ||
			    sc_graph_node_info(g, from, &si) != 0)
				continue;
			rc = sc__fail(
			    SC_EINVAL,
			    "sc_runtime_create: the stream '%s' -> '%s' "
			    "(units %d and %d) lies on a cycle of units "
			    "that no delay's output crosses: in tick mode "
			    "each unit would wait for the other's tick "
			    "(a loop may cross units only where a delay's "
			    "output leaves its unit)",
			    si.name, ni.name, a, b);
		}
	}
	free(comp);
	return rc;
}

int
sc_analysis_init(struct sc_analysis *a, const struct sc_graph *g,
		 const struct sc_placement *p)
{
	return sc_analysis_init_mode(a, g, p, false);
}

static int
analysis_init_mode_body(struct sc_analysis *a, const struct sc_graph *g,
			const struct sc_placement *p, bool ticks)
{
	uint32_t n;
	int rc;

	if (!a || !g || !p)
		return sc__fail(SC_EINVAL, "sc_analysis_init: NULL");
	memset(a, 0, sizeof(*a));
	if ((rc = ticks ? check_ticks(g, p) : check_loops(g, p)) != 0)
		return rc;
	n = sc_placement_units(p);
	a->comp = malloc((n ? n : 1) * sizeof(*a->comp));
	if (!a->comp)
		return sc__fail(SC_ENOMEM, "sc_runtime_create: %u units", n);
	if ((rc = scc_of(g, p, true, false, a->comp)) != 0) {
		free(a->comp);
		a->comp = NULL;
		return rc;
	}
	a->nunits = n;
	return 0;
}

static bool
kind_per_tick(enum sc_node_kind k)
{
	return k == SC_NODE_INTEGRATE || k == SC_NODE_DIFFERENTIATE ||
	       k == SC_NODE_DELAY;
}

int
sc_analysis_check_mode(const struct sc_graph *g, bool ticks)
{
	size_t nn;

	if (!g)
		return sc__fail(SC_EINVAL, "sc_analysis_check_mode: NULL");
	if (ticks)
		return 0;
	nn = sc_graph_node_count(g);
	for (size_t i = 0; i < nn; i++) {
		struct sc_node_info ni;
		int rc;

		if ((rc = sc_graph_node_info(g, (int)i, &ni)) != 0)
			return rc;
		if (kind_per_tick(ni.kind))
			return sc__fail(
			    SC_EINVAL,
			    "sc_runtime_create: node '%s' (%s) is per tick, "
			    "not a function of its input's integral: in the "
			    "coalescing mode its output would depend on how "
			    "turns group frames into steps; it needs tick "
			    "mode (opts.ticks)",
			    ni.name, sc_node_kind_name(ni.kind));
	}
	return 0;
}

void
sc_analysis_fini(struct sc_analysis *a)
{
	if (!a)
		return;
	free(a->comp);
	a->comp = NULL;
	a->nunits = 0;
}

bool
sc_analysis_gates(const struct sc_analysis *a, uint32_t from, uint32_t to)
{
	return a && a->comp && from < a->nunits && to < a->nunits &&
	       a->comp[from] != a->comp[to];
}

int
sc_analysis_init_mode(struct sc_analysis *a, const struct sc_graph *g,
		      const struct sc_placement *p, bool ticks)
{
	return sc__errwrap(analysis_init_mode_body(a, g, p, ticks),
			   "sc_analysis_init_mode");
}

/*
 * runtime.c - build units and edges from a placement; the host's calls.
 *
 * See runtime.h. Building goes: check the graph; find the strongly
 * connected components of the unit graph (they decide which edges gate
 * backpressure, subcircuit.h); number the instances (unit u's replica k);
 * for every unit, cut its nodes from the graph (sc_graph_cut) and make one
 * edge per (producer replica, consumer replica) for each stream that
 * enters it, plus one host edge per replica for each of its input nodes;
 * then build the sub-circuits, add them to the executor in instance order
 * (so instance i is executor unit i) and start the pool.
 */
#include "units/runtime.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "operators/base.h"
#include "runtime/pool.h"
#include "units/edge.h"
#include "units/subcircuit.h"

#define RT_HOST SC_SUBCIRCUIT_HOST

/* One edge and its ends. */
struct rt_edge {
	struct sc_edge *edge;
	uint32_t from; /* producer instance, or RT_HOST */
	uint32_t to;   /* consumer instance */
	int stream;    /* the stream it carries */
};

/* One executor unit: a replica of a placement unit. */
struct rt_inst {
	uint32_t unit;		   /* placement unit */
	uint32_t shard;		   /* replica index */
	struct sc_subcircuit *sub; /* owned by the executor; dangling once
				      DEAD */
	/* build-time port lists, freed after create */
	struct sc_subcircuit_in *in;
	size_t nin, cap_in;
	struct sc_subcircuit_out *out;
	size_t nout, cap_out;
};

/* The host's end of an input node. */
struct rt_input {
	int node;
	uint32_t ncols;
	uint32_t key;		/* routing key when nedges > 1 */
	uint32_t nedges;	/* replicas of its unit */
	struct sc_edge **edges; /* one per replica */
	uint32_t *insts;	/* their instances */
	pthread_mutex_t mu;	/* one submitter at a time (SPSC edges) */
};

struct sc_runtime {
	struct sc_graph *g;
	const struct sc_placement *p;
	struct sc_runtime_opts o;
	struct sc_exec *ex;
	struct sc_pool *pool;
	uint32_t ninst;
	struct rt_inst *inst;
	uint32_t *first; /* first instance of each unit; [nunits] = ninst */
	struct rt_edge *edges;
	size_t nedges, cap_edges;
	struct rt_input *inputs;
	size_t ninputs;
	uint32_t *scc; /* component of each unit */
	atomic_bool submitted;
	atomic_bool shut;
	bool shut_done; /* shutdown ran (host thread only) */
	int shut_rc;	/* what it returned */
	struct sc_panic_record shut_first;
	/* host waits for room (submit_wait) */
	pthread_mutex_t wait_mu;
	pthread_cond_t wait_cv;
	atomic_uint waiters;
};

/* --- small helpers ------------------------------------------------------- */

static int
grow(void **arr, size_t *cap, size_t need, size_t elem)
{
	void *n;
	size_t c;

	if (need <= *cap)
		return 0;
	c = *cap ? 2 * *cap : 8;
	while (c < need)
		c *= 2;
	n = realloc(*arr, c * elem);
	if (!n)
		return sc__fail(SC_ENOMEM, "runtime: %zu entries", c);
	*arr = n;
	*cap = c;
	return 0;
}

/* --- strongly connected components of the unit graph (Tarjan) --------- */

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
		uint32_t w = s->adj[v][i];

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
	size_t cap = s->adj_cap[a];
	void *arr = s->adj[a];
	int rc;

	for (uint32_t i = 0; i < s->adj_n[a]; i++)
		if (s->adj[a][i] == b)
			return 0;
	rc = grow(&arr, &cap, s->adj_n[a] + 1, sizeof(uint32_t));
	if (rc)
		return rc;
	s->adj[a] = arr;
	s->adj_cap[a] = (uint32_t)cap;
	s->adj[a][s->adj_n[a]++] = b;
	return 0;
}

/*
 * The strongly connected components of the graph's streams, with every
 * node mapped to a vertex: its unit (by_unit) or itself. comp[vertex]
 * receives the component of each of the n vertices.
 */
static int
scc_of(struct sc_runtime *rt, bool by_unit, uint32_t *comp)
{
	size_t nn = sc_graph_node_count(rt->g);
	uint32_t n = by_unit ? sc_placement_units(rt->p) : (uint32_t)nn;
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
		rc = sc__fail(SC_ENOMEM, "sc_runtime_create: %u vertices", n);
		goto free_state;
	}
	for (size_t i = 0; i < nn && !rc; i++) {
		struct sc_node_info ni;
		uint32_t b = by_unit
				 ? (uint32_t)sc_placement_unit_of(rt->p, (int)i)
				 : (uint32_t)i;

		if ((rc = sc_graph_node_info(rt->g, (int)i, &ni)) != 0)
			break;
		for (uint32_t q = 0; q < ni.ninputs && !rc; q++) {
			uint32_t a = by_unit ? (uint32_t)sc_placement_unit_of(
						   rt->p, ni.inputs[q])
					     : (uint32_t)ni.inputs[q];

			if (a != b)
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

/* The unit graph's components: they decide which edges gate
 * backpressure (subcircuit.h). */
static int
compute_scc(struct sc_runtime *rt)
{
	uint32_t n = sc_placement_units(rt->p);

	rt->scc = malloc(n * sizeof(uint32_t));
	if (!rt->scc)
		return sc__fail(SC_ENOMEM, "sc_runtime_create: %u units", n);
	return scc_of(rt, true, rt->scc);
}

/*
 * A loop of the graph (a cycle through a feedback and a delay) must stay
 * inside one unit. Across units, every step of the delay's unit is driven
 * by frames and emits what the loop latched, so the loop's frames would
 * circulate between units for ever and the runtime would never be idle.
 * Returns 0 or SC_EINVAL naming an edge of the loop that crosses units.
 */
static int
check_loops(struct sc_runtime *rt)
{
	size_t nn = sc_graph_node_count(rt->g);
	uint32_t *comp = malloc((nn ? nn : 1) * sizeof(*comp));
	int rc;

	if (!comp)
		return sc__fail(SC_ENOMEM, "sc_runtime_create: %zu nodes", nn);
	rc = scc_of(rt, false, comp);
	for (size_t i = 0; i < nn && !rc; i++) {
		struct sc_node_info ni, si;

		if ((rc = sc_graph_node_info(rt->g, (int)i, &ni)) != 0)
			break;
		for (uint32_t q = 0; q < ni.ninputs && !rc; q++) {
			int from = ni.inputs[q];

			if (comp[from] != comp[i] ||
			    sc_placement_unit_of(rt->p, from) ==
				sc_placement_unit_of(rt->p, (int)i) ||
			    sc_graph_node_info(rt->g, from, &si) != 0)
				continue;
			rc = sc__fail(SC_EINVAL,
				      "sc_runtime_create: the loop through "
				      "'%s' -> '%s' crosses units %d and %d; "
				      "a loop must stay inside one unit",
				      si.name, ni.name,
				      sc_placement_unit_of(rt->p, from),
				      sc_placement_unit_of(rt->p, (int)i));
		}
	}
	free(comp);
	return rc;
}

/* --- building --------------------------------------------------------------
 */

static int
new_edge(struct sc_runtime *rt, int stream, uint32_t from, uint32_t to,
	 struct sc_edge **out)
{
	struct sc_edge_opts eo;
	struct rt_edge *re;
	void *arr = rt->edges;
	int rc = grow(&arr, &rt->cap_edges, rt->nedges + 1, sizeof(*re));

	if (rc)
		return rc;
	rt->edges = arr;
	eo.ncols = sc_graph_schema(rt->g, stream)->ncols;
	eo.capacity = rt->o.edge_capacity;
	eo.outbox_bound = rt->o.outbox_bound;
	re = &rt->edges[rt->nedges];
	if ((rc = sc_edge_create(&eo, &re->edge)) != 0)
		return rc;
	re->from = from;
	re->to = to;
	re->stream = stream;
	rt->nedges++;
	*out = re->edge;
	return 0;
}

static int
add_in_port(struct rt_inst *ci, struct sc_edge *e, int stream, uint32_t peer,
	    bool gated)
{
	void *arr = ci->in;
	int rc = grow(&arr, &ci->cap_in, ci->nin + 1, sizeof(*ci->in));

	if (rc)
		return rc;
	ci->in = arr;
	ci->in[ci->nin++] = (struct sc_subcircuit_in){
	    .edge = e, .stream = stream, .peer = peer, .gated = gated};
	return 0;
}

static int
stream_key(struct sc_runtime *rt, uint32_t unit, int stream, uint32_t *key)
{
	if (sc_placement_shards(rt->p, unit) < 2) {
		*key = 0;
		return 0;
	}
	return sc_placement_key(rt->p, unit, stream, key);
}

/*
 * Stream s (made in unit a) enters unit b: an edge from every replica of
 * a to every replica of b; each replica of a gets one out port for it.
 */
static int
connect_stream(struct sc_runtime *rt, int s, uint32_t a, uint32_t b)
{
	uint32_t na = sc_placement_shards(rt->p, a);
	uint32_t nb = sc_placement_shards(rt->p, b);
	bool cross = rt->scc[a] != rt->scc[b];
	uint32_t key;
	int rc = stream_key(rt, b, s, &key);

	for (uint32_t i = 0; i < na && !rc; i++) {
		struct rt_inst *pi = &rt->inst[rt->first[a] + i];
		struct sc_edge **edges = malloc(nb * sizeof(*edges));
		uint32_t *peers = malloc(nb * sizeof(*peers));
		void *arr = pi->out;

		if (!edges || !peers ||
		    grow(&arr, &pi->cap_out, pi->nout + 1, sizeof(*pi->out))) {
			free(edges);
			free(peers);
			return sc__fail(SC_ENOMEM, "sc_runtime_create: ports");
		}
		pi->out = arr;
		pi->out[pi->nout++] =
		    (struct sc_subcircuit_out){.stream = s,
					       .key = key,
					       .nedges = nb,
					       .edges = edges,
					       .peers = peers,
					       .gating = cross};
		for (uint32_t j = 0; j < nb && !rc; j++) {
			uint32_t to = rt->first[b] + j;

			peers[j] = to;
			edges[j] = NULL;
			rc = new_edge(rt, s, rt->first[a] + i, to, &edges[j]);
			if (!rc)
				rc = add_in_port(&rt->inst[to], edges[j], s,
						 rt->first[a] + i, cross);
		}
	}
	return rc;
}

/* The nodes of unit u (ids, ascending) into a new array. */
static int
unit_nodes(struct sc_runtime *rt, uint32_t u, int **nodes, size_t *n)
{
	size_t nn = sc_graph_node_count(rt->g), k = 0;
	int *arr = malloc(nn * sizeof(*arr));

	if (!arr)
		return sc__fail(SC_ENOMEM, "sc_runtime_create: nodes");
	for (size_t i = 0; i < nn; i++)
		if (sc_placement_unit_of(rt->p, (int)i) == (int)u)
			arr[k++] = (int)i;
	*nodes = arr;
	*n = k;
	return 0;
}

static int
add_input(struct sc_runtime *rt, int node, uint32_t u)
{
	uint32_t nb = sc_placement_shards(rt->p, u);
	struct rt_input *in = &rt->inputs[rt->ninputs];
	int rc;

	memset(in, 0, sizeof(*in));
	in->node = node;
	in->ncols = sc_graph_schema(rt->g, node)->ncols;
	in->nedges = nb;
	in->edges = calloc(nb, sizeof(*in->edges));
	in->insts = calloc(nb, sizeof(*in->insts));
	if (!in->edges || !in->insts) {
		free(in->edges);
		free(in->insts);
		return sc__fail(SC_ENOMEM, "sc_runtime_create: input");
	}
	pthread_mutex_init(&in->mu, NULL);
	rt->ninputs++; /* from here on freed by the runtime's teardown */
	rc = stream_key(rt, u, node, &in->key);
	for (uint32_t j = 0; j < nb && !rc; j++) {
		in->insts[j] = rt->first[u] + j;
		rc = new_edge(rt, node, RT_HOST, in->insts[j], &in->edges[j]);
		if (!rc)
			rc = add_in_port(&rt->inst[in->insts[j]], in->edges[j],
					 node, RT_HOST, true);
	}
	return rc;
}

/* Edges into unit u: its boundary inputs and its input nodes. */
static int
wire_unit(struct sc_runtime *rt, uint32_t u)
{
	struct sc_cut cut;
	size_t n;
	int *nodes;
	int rc = unit_nodes(rt, u, &nodes, &n);

	if (rc)
		return rc;
	memset(&cut, 0, sizeof(cut));
	rc = sc_graph_cut(rt->g, nodes, n, &cut);
	for (size_t i = 0; i < cut.nin && !rc; i++) {
		int s = cut.in[i];

		rc = connect_stream(
		    rt, s, (uint32_t)sc_placement_unit_of(rt->p, s), u);
	}
	for (size_t i = 0; i < n && !rc; i++) {
		struct sc_node_info ni;

		rc = sc_graph_node_info(rt->g, nodes[i], &ni);
		if (!rc && ni.kind == SC_NODE_INPUT)
			rc = add_input(rt, nodes[i], u);
	}
	sc_cut_fini(&cut);
	free(nodes);
	return rc;
}

static void host_popped(void *ctx);

static int
build_unit(struct sc_runtime *rt, uint32_t id)
{
	struct rt_inst *ci = &rt->inst[id];
	struct sc_subcircuit_desc d;
	struct sc_node_info ni;
	char name[SC_UNIT_NAME_MAX];
	uint32_t got;
	size_t n;
	int *nodes;
	int rc = unit_nodes(rt, ci->unit, &nodes, &n);

	if (rc)
		return rc;
	if (sc_graph_node_info(rt->g, nodes[0], &ni) != 0)
		ni.name = "?";
	if (sc_placement_shards(rt->p, ci->unit) > 1)
		snprintf(name, sizeof(name), "u%u.%u %.30s", ci->unit,
			 ci->shard, ni.name);
	else
		snprintf(name, sizeof(name), "u%u %.36s", ci->unit, ni.name);
	memset(&d, 0, sizeof(d));
	d.name = name;
	d.graph = rt->g;
	d.nodes = nodes;
	d.nnodes = n;
	d.in = ci->in;
	d.nin = ci->nin;
	d.out = ci->out;
	d.nout = ci->nout;
	d.exec = rt->ex;
	d.host_popped = host_popped;
	d.host_ctx = rt;
	rc = sc_subcircuit_create(&d, &ci->sub);
	free(nodes);
	if (rc)
		return rc;
	rc = sc_exec_add(rt->ex, sc_subcircuit_unit(ci->sub), &got);
	if (rc) {
		sc_subcircuit_detach(ci->sub);
		sc_subcircuit_destroy(ci->sub);
		ci->sub = NULL;
		return rc;
	}
	if (got != id) /* the executor was fresh: ids are given in order */
		return sc__fail(SC_ESTATE,
				"sc_runtime_create: unit %u got id "
				"%u",
				id, got);
	return 0;
}

static void
free_ports(struct rt_inst *ci)
{
	for (size_t i = 0; i < ci->nout; i++) {
		free((void *)ci->out[i].edges);
		free((void *)ci->out[i].peers);
	}
	free(ci->out);
	free(ci->in);
	ci->out = NULL;
	ci->in = NULL;
	ci->nout = ci->nin = 0;
}

static int
number_instances(struct sc_runtime *rt)
{
	uint32_t nu = sc_placement_units(rt->p), k = 0;

	rt->first = malloc((nu + 1) * sizeof(*rt->first));
	if (!rt->first)
		return sc__fail(SC_ENOMEM, "sc_runtime_create: units");
	for (uint32_t u = 0; u < nu; u++) {
		rt->first[u] = k;
		k += sc_placement_shards(rt->p, u);
	}
	rt->first[nu] = k;
	rt->ninst = k;
	rt->inst = calloc(k, sizeof(*rt->inst));
	if (!rt->inst)
		return sc__fail(SC_ENOMEM, "sc_runtime_create: %u units", k);
	for (uint32_t u = 0; u < nu; u++)
		for (uint32_t j = rt->first[u]; j < rt->first[u + 1]; j++) {
			rt->inst[j].unit = u;
			rt->inst[j].shard = j - rt->first[u];
		}
	return 0;
}

static int
check_args(struct sc_graph *g, const struct sc_placement *p,
	   const struct sc_runtime_opts *o, struct sc_runtime **out)
{
	if (!g || !p || !out)
		return sc__fail(SC_EINVAL, "sc_runtime_create: NULL %s",
				!g   ? "graph"
				: !p ? "placement"
				     : "out");
	if (sc_placement_graph(p) != g ||
	    sc_placement_nodes(p) != sc_graph_node_count(g))
		return sc__fail(SC_EINVAL,
				"sc_runtime_create: the placement is not of "
				"this graph (%zu nodes placed, %zu in the "
				"graph)",
				sc_placement_nodes(p), sc_graph_node_count(g));
	if (o->edge_capacity & (o->edge_capacity - 1))
		return sc__fail(SC_EINVAL,
				"sc_runtime_create: edge capacity %u is not a "
				"power of two",
				o->edge_capacity);
	return sc_graph_check(g);
}

static int
build(struct sc_runtime *rt)
{
	struct sc_exec_opts eo = {.capacity = 0, .spin = 0};
	uint32_t nu = sc_placement_units(rt->p);
	size_t nn = sc_graph_node_count(rt->g);
	int rc;

	if ((rc = check_loops(rt)) || (rc = compute_scc(rt)) ||
	    (rc = number_instances(rt)))
		return rc;
	eo.capacity = rt->ninst > 1024 ? rt->ninst : 0;
	rt->inputs = calloc(nn, sizeof(*rt->inputs));
	if (!rt->inputs)
		return sc__fail(SC_ENOMEM, "sc_runtime_create: inputs");
	if ((rc = sc_exec_create(&eo, &rt->ex)) != 0)
		return rc;
	for (uint32_t u = 0; u < nu && !rc; u++)
		rc = wire_unit(rt, u);
	for (uint32_t i = 0; i < rt->ninst && !rc; i++)
		rc = build_unit(rt, i);
	for (uint32_t i = 0; i < rt->ninst; i++)
		free_ports(&rt->inst[i]);
	if (!rc && rt->o.workers > 0) {
		struct sc_pool_opts po = {.workers = rt->o.workers,
					  .budget = rt->o.budget,
					  .catch_faults = rt->o.catch_faults};

		rc = sc_pool_create(rt->ex, &po, &rt->pool);
	}
	return rc;
}

static void teardown(struct sc_runtime *rt);

int
sc_runtime_create(struct sc_graph *g, const struct sc_placement *p,
		  const struct sc_runtime_opts *opts, struct sc_runtime **out)
{
	struct sc_runtime_opts o = {0};
	struct sc_runtime *rt;
	int rc;

	if (opts)
		o = *opts;
	if ((rc = check_args(g, p, &o, out)) != 0)
		return rc;
	o.budget = o.budget ? o.budget : 64;
	o.edge_capacity = o.edge_capacity ? o.edge_capacity : 64;
	o.outbox_bound = o.outbox_bound ? o.outbox_bound : 4096;
	rt = calloc(1, sizeof(*rt));
	if (!rt)
		return sc__fail(SC_ENOMEM, "sc_runtime_create");
	rt->g = g;
	rt->p = p;
	rt->o = o;
	atomic_init(&rt->submitted, false);
	atomic_init(&rt->shut, false);
	atomic_init(&rt->waiters, 0);
	pthread_mutex_init(&rt->wait_mu, NULL);
	pthread_cond_init(&rt->wait_cv, NULL);
	if ((rc = build(rt)) != 0) {
		char msg[512];

		/* Teardown may overwrite the message: keep the first. */
		snprintf(msg, sizeof(msg), "%s", sc_errmsg());
		teardown(rt);
		return sc__fail(rc, "%s", msg);
	}
	*out = rt;
	return 0;
}

static bool
inst_dead(struct sc_runtime *rt, uint32_t i)
{
	return sc_exec_unit_state(rt->ex, i) == SC_UNIT_DEAD;
}

static void
teardown(struct sc_runtime *rt)
{
	if (rt->pool)
		(void)sc_pool_destroy(rt->pool, NULL);
	if (rt->ex) {
		sc_exec_shutdown(rt->ex);
		for (uint32_t i = 0; i < rt->ninst; i++)
			if (rt->inst[i].sub && !inst_dead(rt, i))
				sc_subcircuit_detach(rt->inst[i].sub);
		(void)sc_exec_destroy(rt->ex);
	}
	for (uint32_t i = 0; rt->inst && i < rt->ninst; i++)
		free_ports(&rt->inst[i]);
	for (size_t i = 0; i < rt->nedges; i++)
		sc_edge_destroy(rt->edges[i].edge);
	for (size_t i = 0; i < rt->ninputs; i++) {
		free(rt->inputs[i].edges);
		free(rt->inputs[i].insts);
		pthread_mutex_destroy(&rt->inputs[i].mu);
	}
	free(rt->inputs);
	free(rt->edges);
	free(rt->inst);
	free(rt->first);
	free(rt->scc);
	pthread_cond_destroy(&rt->wait_cv);
	pthread_mutex_destroy(&rt->wait_mu);
	free(rt);
}

void
sc_runtime_destroy(struct sc_runtime *rt)
{
	if (!rt)
		return;
	(void)sc_runtime_shutdown(rt, NULL);
	teardown(rt);
}

/* --- the host ---------------------------------------------------------------
 */

/* A unit took frames from a host edge: wake the host if it waits. */
static void
host_popped(void *ctx)
{
	struct sc_runtime *rt = ctx;

	/* Pairs with the waiter's increment before its last look at the
	 * edge: either it sees the room, or we see it waiting. */
	atomic_thread_fence(memory_order_seq_cst);
	if (atomic_load(&rt->waiters) == 0)
		return;
	pthread_mutex_lock(&rt->wait_mu);
	pthread_cond_broadcast(&rt->wait_cv);
	pthread_mutex_unlock(&rt->wait_mu);
}

static struct rt_input *
find_input(struct sc_runtime *rt, int node)
{
	for (size_t i = 0; i < rt->ninputs; i++)
		if (rt->inputs[i].node == node)
			return &rt->inputs[i];
	return NULL;
}

/* Send the shares (owned) of one submit; the caller holds in->mu and has
 * checked the room. Returns 0 or SC_EDEAD. */
static int
send_shares(struct sc_runtime *rt, struct rt_input *in, struct sc_batch **share)
{
	int result = 0;

	for (uint32_t j = 0; j < in->nedges; j++) {
		int rc;

		if (!share[j])
			continue;
		rc = sc_edge_send(in->edges[j], share[j]);
		if (rc == SC_EDEAD)
			result = sc__fail(SC_EDEAD,
					  "sc_runtime_submit: the unit of "
					  "input %d is dead",
					  in->node);
		else if (rc == 0)
			(void)sc_exec_kick(rt->ex, in->insts[j]);
	}
	return result;
}

static int
submit_locked(struct sc_runtime *rt, struct rt_input *in, struct sc_batch *b)
{
	struct sc_batch *share[SC_SUBCIRCUIT_ROUTE_MAX];
	int rc;

	for (uint32_t j = 0; j < in->nedges; j++)
		if (!sc_edge_is_closed(in->edges[j]) &&
		    sc_edge_room(in->edges[j]) == 0)
			return SC_EFULL;
	if (in->nedges == 1) {
		share[0] = sc_batch_retain(b);
	} else if ((rc = sc_batch_route(b, in->key, in->nedges, share)) != 0) {
		return rc;
	}
	return send_shares(rt, in, share);
}

static int
submit_check(struct sc_runtime *rt, int input, struct sc_batch *b,
	     struct rt_input **out)
{
	struct rt_input *in;

	if (!rt || !b)
		return sc__fail(SC_EINVAL, "sc_runtime_submit: NULL %s",
				rt ? "batch" : "runtime");
	if (atomic_load(&rt->shut))
		return sc__fail(SC_ESHUTDOWN,
				"sc_runtime_submit: the runtime is shut down");
	in = find_input(rt, input);
	if (!in)
		return sc__fail(
		    input >= 0 && (size_t)input < sc_graph_node_count(rt->g)
			? SC_EINVAL
			: SC_ENOENT,
		    "sc_runtime_submit: node %d is not an input", input);
	if (sc_batch_ncols(b) != in->ncols)
		return sc__fail(SC_ESCHEMA,
				"sc_runtime_submit: batch of %u columns for "
				"input %d of %u",
				sc_batch_ncols(b), input, in->ncols);
	*out = in;
	return 0;
}

int
sc_runtime_submit(struct sc_runtime *rt, int input, struct sc_batch *b)
{
	struct rt_input *in = NULL;
	int rc = submit_check(rt, input, b, &in);

	if (rc)
		return rc;
	atomic_store(&rt->submitted, true);
	if (sc_batch_count(b) == 0)
		return 0; /* the zero delta changes nothing */
	pthread_mutex_lock(&in->mu);
	rc = submit_locked(rt, in, b);
	pthread_mutex_unlock(&in->mu);
	if (rc == SC_EFULL)
		return sc__fail(SC_EFULL,
				"sc_runtime_submit: input %d is full "
				"(backpressure)",
				input);
	return rc;
}

/* Run one queued turn on this thread (workers = 0). Whether one ran. */
static bool
run_one(struct sc_runtime *rt)
{
	struct sc_claim c;
	bool ran = false;

	sc_claim_init(&c);
	if (sc_exec_claim(rt->ex, -1, &c) == 0) {
		ran = true;
		if (sc_exec_run(rt->ex, &c, rt->o.budget) == 0)
			(void)sc_exec_finish(rt->ex, &c);
	}
	sc_claim_fini(&c);
	return ran;
}

int
sc_runtime_submit_wait(struct sc_runtime *rt, int input, struct sc_batch *b,
		       uint64_t timeout_ns)
{
	uint64_t deadline =
	    timeout_ns ? sc_clock_ns() + timeout_ns : UINT64_MAX;

	for (;;) {
		int rc = sc_runtime_submit(rt, input, b);
		struct timespec ts;
		uint64_t t;

		if (rc != SC_EFULL)
			return rc;
		if (sc_clock_ns() >= deadline)
			return sc__fail(SC_ETIMEDOUT,
					"sc_runtime_submit_wait: input %d "
					"still full",
					input);
		if (!rt->pool) {
			if (!run_one(rt))
				return sc__fail(SC_ETIMEDOUT,
						"sc_runtime_submit_wait: input "
						"%d full and nothing to run",
						input);
			continue;
		}
		atomic_fetch_add(&rt->waiters, 1);
		pthread_mutex_lock(&rt->wait_mu);
		rc = sc_runtime_submit(rt, input, b);
		if (rc == SC_EFULL) {
			/* A 10 ms cap: a safety net, never the mechanism. */
			t = sc_clock_ns() + 10000000ull;
			t = t < deadline ? t : deadline;
			clock_gettime(CLOCK_REALTIME, &ts);
			t = (uint64_t)ts.tv_sec * 1000000000ull +
			    (uint64_t)ts.tv_nsec + (t - sc_clock_ns());
			ts.tv_sec = (time_t)(t / 1000000000ull);
			ts.tv_nsec = (long)(t % 1000000000ull);
			pthread_cond_timedwait(&rt->wait_cv, &rt->wait_mu, &ts);
		}
		pthread_mutex_unlock(&rt->wait_mu);
		atomic_fetch_sub(&rt->waiters, 1);
		if (rc != SC_EFULL)
			return rc;
	}
}

static int
first_panic(struct sc_runtime *rt, struct sc_panic_record *first)
{
	struct sc_exec_info info;
	struct sc_panic_record rec;

	memset(&rec, 0, sizeof(rec));
	sc_exec_info(rt->ex, &info);
	if (info.panics == 0)
		return 0;
	if (sc_exec_panic(rt->ex, 0, &rec) == 0 && first)
		*first = rec;
	return sc__fail(SC_EPANIC, "unit %u (%s) panicked: %s", rec.unit,
			rec.name, rec.message);
}

int
sc_runtime_wait_idle(struct sc_runtime *rt, uint64_t timeout_ns,
		     struct sc_panic_record *first)
{
	uint64_t deadline =
	    timeout_ns ? sc_clock_ns() + timeout_ns : UINT64_MAX;

	if (!rt)
		return sc__fail(SC_EINVAL, "sc_runtime_wait_idle: NULL");
	if (rt->pool)
		return sc_exec_wait_idle(rt->ex, timeout_ns, first);
	while (run_one(rt))
		if (sc_clock_ns() >= deadline)
			return sc__fail(SC_ETIMEDOUT,
					"sc_runtime_wait_idle: still busy");
	return first_panic(rt, first);
}

static bool
is_idle(struct sc_runtime *rt)
{
	struct sc_exec_info info;

	sc_exec_info(rt->ex, &info);
	return info.idle;
}

int
sc_runtime_integral(struct sc_runtime *rt, int output, struct sc_batch **out)
{
	struct sc_node_info ni;
	struct sc_batch *sum = NULL;
	int u, rc;

	if (!rt || !out)
		return sc__fail(SC_EINVAL, "sc_runtime_integral: NULL");
	if ((rc = sc_graph_node_info(rt->g, output, &ni)) != 0)
		return rc;
	if (ni.kind != SC_NODE_OUTPUT)
		return sc__fail(SC_EINVAL,
				"sc_runtime_integral: '%s' is not an output",
				ni.name);
	if (!is_idle(rt))
		return sc__fail(SC_EBUSY, "sc_runtime_integral: not idle");
	u = sc_placement_unit_of(rt->p, output);
	for (uint32_t i = rt->first[u]; i < rt->first[u + 1]; i++) {
		struct sc_batch *b = NULL, *t = NULL;

		if (inst_dead(rt, i)) {
			sc_batch_release(sum);
			return sc__fail(SC_EDEAD,
					"sc_runtime_integral: the unit of "
					"'%s' is dead",
					ni.name);
		}
		rc = sc_circuit_integral(sc_subcircuit_circuit(rt->inst[i].sub),
					 output, &b);
		if (!rc && sum)
			rc = sc_batch_add(sum, b, &t);
		if (rc) {
			sc_batch_release(b);
			sc_batch_release(sum);
			return rc;
		}
		if (sum) {
			sc_batch_release(sum);
			sc_batch_release(b);
			sum = t;
		} else {
			sum = b;
		}
	}
	*out = sum;
	return 0;
}

int
sc_runtime_on_delta(struct sc_runtime *rt, int node, sc_delta_fn fn, void *ctx)
{
	int u;

	if (!rt)
		return sc__fail(SC_EINVAL, "sc_runtime_on_delta: NULL");
	if (atomic_load(&rt->submitted))
		return sc__fail(SC_ESTATE,
				"sc_runtime_on_delta: only before the first "
				"submit");
	if ((u = sc_placement_unit_of(rt->p, node)) < 0)
		return u;
	for (uint32_t i = rt->first[u]; i < rt->first[u + 1]; i++) {
		int rc = sc_circuit_on_delta(
		    sc_subcircuit_circuit(rt->inst[i].sub), node, fn, ctx);

		if (rc)
			return rc;
	}
	return 0;
}

static const char *
end_name(struct sc_runtime *rt, uint32_t inst, char *buf, size_t len)
{
	if (inst == RT_HOST)
		snprintf(buf, len, "host");
	else
		snprintf(buf, len, "u%u.%u", rt->inst[inst].unit,
			 rt->inst[inst].shard);
	return buf;
}

int
sc_runtime_check_idle(struct sc_runtime *rt)
{
	if (!rt)
		return sc__fail(SC_EINVAL, "sc_runtime_check_idle: NULL");
	if (!is_idle(rt))
		return sc__fail(SC_EBUSY, "sc_runtime_check_idle: not idle");
	for (size_t i = 0; i < rt->nedges; i++) {
		struct rt_edge *e = &rt->edges[i];
		char a[24], b[24];
		uint64_t pend = sc_edge_pending(e->edge);
		size_t obox = sc_edge_outbox_rows(e->edge);
		bool to_live = !inst_dead(rt, e->to);
		bool from_live = e->from == RT_HOST || !inst_dead(rt, e->from);

		if (to_live && pend)
			return sc__fail(SC_ESTATE,
					"idle, yet edge %s -> %s (stream %d) "
					"holds %llu frames",
					end_name(rt, e->from, a, sizeof(a)),
					end_name(rt, e->to, b, sizeof(b)),
					e->stream, (unsigned long long)pend);
		if (from_live && (obox || sc_edge_has_outbox(e->edge)))
			return sc__fail(SC_ESTATE,
					"idle, yet edge %s -> %s (stream %d) "
					"has an outbox of %zu rows",
					end_name(rt, e->from, a, sizeof(a)),
					end_name(rt, e->to, b, sizeof(b)),
					e->stream, obox);
	}
	return 0;
}

void
sc_runtime_stats(struct sc_runtime *rt, struct sc_runtime_stats *out)
{
	struct sc_exec_info info;

	if (!rt || !out)
		return;
	memset(out, 0, sizeof(*out));
	sc_exec_info(rt->ex, &info);
	out->units = rt->ninst;
	out->edges = (uint32_t)rt->nedges;
	out->turns = info.turns_finished;
	out->panics = info.panics;
	for (uint32_t i = 0; i < rt->ninst; i++)
		out->dead += inst_dead(rt, i);
	for (size_t i = 0; i < rt->nedges; i++) {
		struct sc_edge_traffic t;

		sc_edge_traffic(rt->edges[i].edge, &t);
		out->frames += t.frames_pushed;
		out->rows += t.rows_pushed;
		out->pending += t.frames_pushed - t.frames_popped;
		out->outbox_rows += t.outbox_rows;
		out->undeliverable_frames += t.undeliverable_frames;
		out->undeliverable_rows += t.undeliverable_rows;
	}
}

int
sc_runtime_shutdown(struct sc_runtime *rt, struct sc_panic_record *first)
{
	struct sc_panic_record rec;
	int rc;

	if (!rt)
		return sc__fail(SC_EINVAL, "sc_runtime_shutdown: NULL");
	if (rt->shut_done) {
		if (rt->shut_rc == SC_EPANIC && first)
			*first = rt->shut_first;
		return rt->shut_rc;
	}
	atomic_store(&rt->shut, true);
	memset(&rec, 0, sizeof(rec));
	if (rt->pool) {
		rc = sc_pool_finish(rt->pool, &rec);
		rt->pool = NULL;
	} else {
		rc = sc_runtime_wait_idle(rt, 0, &rec);
		sc_exec_shutdown(rt->ex);
	}
	/* Wake host threads blocked in submit_wait: they see the flag. */
	pthread_mutex_lock(&rt->wait_mu);
	pthread_cond_broadcast(&rt->wait_cv);
	pthread_mutex_unlock(&rt->wait_mu);
	if (rc == SC_EPANIC) {
		struct sc_runtime_stats st;

		/* Name the panic and what it cost: frames that never
		 * arrived. */
		sc_runtime_stats(rt, &st);
		rc = sc__fail(SC_EPANIC,
			      "sc_runtime_shutdown: unit %u (%s) panicked: %s; "
			      "%u dead, %llu frames (%llu rows) addressed to "
			      "dead units were undeliverable",
			      rec.unit, rec.name, rec.message, st.dead,
			      (unsigned long long)st.undeliverable_frames,
			      (unsigned long long)st.undeliverable_rows);
	}
	rt->shut_done = true;
	rt->shut_rc = rc;
	rt->shut_first = rec;
	if (rc == SC_EPANIC && first)
		*first = rec;
	return rc;
}

struct sc_exec *
sc_runtime_exec(struct sc_runtime *rt)
{
	return rt ? rt->ex : NULL;
}

size_t
sc_runtime_unit_ids(const struct sc_runtime *rt, uint32_t unit, uint32_t *ids,
		    size_t max)
{
	size_t n;

	if (!rt || unit >= sc_placement_units(rt->p))
		return 0;
	n = rt->first[unit + 1] - rt->first[unit];
	for (size_t i = 0; i < n && i < max; i++)
		ids[i] = rt->first[unit] + (uint32_t)i;
	return n;
}

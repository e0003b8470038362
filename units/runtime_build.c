/*
 * runtime_build.c - units and edges from a placement (runtime.h).
 *
 * Design. Building goes: check the graph; analyse the placement
 * (units/analysis.h: refuse loops across units; the unit graph's
 * components decide which edges gate backpressure); number the instances
 * (unit u's replica k); for every unit, cut its nodes from the graph
 * (sc_graph_cut) and make one edge per (producer replica, consumer
 * replica) for each stream that enters it, plus one host edge per replica
 * for each of its input nodes; then build the sub-circuits, add them to
 * the executor in instance order (so instance i is executor unit i) and
 * start the pool. Every producer end, the host's included, is an exchange
 * (units/exchange.h). All of it runs on the thread in sc_runtime_create,
 * before any turn: what it writes is "fixed" (units/runtime_int.h), but
 * for a rebuild's sub-circuit (sc__rt_make_sub from a restart).
 */
#include "units/runtime.h"
#include "units/runtime_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "operators/base.h"
#include "runtime/pool.h"
#include "runtime/timeline.h"
#include "units/edge_int.h"
#include "units/runtime_remote.h"
#include "units/tick_int.h"

static int
new_edge(struct sc_runtime *rt, int stream, uint32_t from, uint32_t to,
	 struct sc_edge **out)
{
	struct sc_edge_opts eo;
	struct sc__symcols syms;
	struct rt_edge *re;
	void *arr = rt->edges;
	int rc = sc__rt_grow(&arr, &rt->cap_edges, rt->nedges + 1, sizeof(*re));

	if (rc)
		return rc;
	rt->edges = arr;
	eo.ncols = sc_graph_schema(rt->g, stream)->ncols;
	eo.capacity = rt->o.edge_capacity;
	eo.outbox_bound = rt->o.outbox_bound;
	eo.ticks = rt->o.ticks;
	re = &rt->edges[rt->nedges];
	if ((rc = sc_edge_create(&eo, &re->edge)) != 0)
		return rc;
	/* Every edge holds its frames' ids, the host's and those between
	 * units alike (operators/symbol.h, "Who holds an id"). */
	sc__symcols_of(sc_graph_schema(rt->g, stream), &syms);
	sc__edge_set_symbols(re->edge, &syms);
	re->from = from;
	re->to = to;
	re->stream = stream;
	re->trace = NULL;
	rt->nedges++; /* from here on freed by the runtime's teardown */
	if ((rc = sc__rt_edge_trace(rt, re)) != 0)
		return rc;
	*out = re->edge;
	return 0;
}

static int
add_in_port(struct rt_inst *ci, struct sc_edge *e, int stream, uint32_t peer,
	    bool gated)
{
	void *arr = ci->in;
	int rc = sc__rt_grow(&arr, &ci->cap_in, ci->nin + 1, sizeof(*ci->in));

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

/* Tick mode: a delay's stream leaves its unit a tick ahead
 * (units/subcircuit.h, "Ahead ports"). */
static void
ahead_port(struct sc_runtime *rt, struct sc_subcircuit_out *o)
{
	struct sc_node_info ni;

	if (sc_graph_node_info(rt->g, o->stream, &ni) == 0 &&
	    ni.kind == SC_NODE_DELAY && ni.ninputs == 1) {
		o->ahead = true;
		o->ahead_from = ni.inputs[0];
	}
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
	bool cross = sc_analysis_gates(&rt->an, a, b);
	bool ahead = false;
	uint32_t key;
	int rc = stream_key(rt, b, s, &key);

	for (uint32_t i = 0; i < na && !rc; i++) {
		struct rt_inst *pi = &rt->inst[rt->first[a] + i];
		struct sc_edge **edges = malloc(nb * sizeof(struct sc_edge *));
		uint32_t *peers = malloc(nb * sizeof(*peers));
		struct sc_exchange_trace **traces =
		    rt->restarts
			? calloc(nb, sizeof(struct sc_exchange_trace *))
			: NULL;
		void *arr = pi->out;

		if (!edges || !peers || (rt->restarts && !traces) ||
		    sc__rt_grow(&arr, &pi->cap_out, pi->nout + 1,
				sizeof(*pi->out))) {
			free(edges);
			free(peers);
			free(traces);
			return sc__fail(SC_ENOMEM, "sc_runtime_create: ports");
		}
		pi->out = arr;
		pi->out[pi->nout++] =
		    (struct sc_subcircuit_out){.stream = s,
					       .key = key,
					       .nedges = nb,
					       .edges = edges,
					       .peers = peers,
					       .gating = cross,
					       .traces = traces};
		if (rt->o.ticks)
			ahead_port(rt, &pi->out[pi->nout - 1]);
		ahead = pi->out[pi->nout - 1].ahead;
		for (uint32_t j = 0; j < nb && !rc; j++) {
			uint32_t to = rt->first[b] + j;

			peers[j] = to;
			edges[j] = NULL;
			rt->inst[to].ahead_in |= ahead;
			rc = new_edge(rt, s, rt->first[a] + i, to, &edges[j]);
			if (!rc && traces)
				traces[j] = rt->edges[rt->nedges - 1].trace;
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
	struct sc_edge **edges = calloc(nb, sizeof(struct sc_edge *));
	struct sc_exchange_trace *traces[SC_EXCHANGE_MAX] = {0};
	uint32_t key = 0;
	int rc;

	memset(in, 0, sizeof(*in));
	in->node = node;
	in->ncols = sc_graph_schema(rt->g, node)->ncols;
	sc__symcols_of(sc_graph_schema(rt->g, node), &in->syms);
	in->insts = calloc(nb, sizeof(*in->insts));
	if (!edges || !in->insts) {
		free(edges);
		free(in->insts);
		return sc__fail(SC_ENOMEM, "sc_runtime_create: input");
	}
	pthread_mutex_init(&in->mu, NULL);
	rt->ninputs++; /* from here on freed by the runtime's teardown */
	rc = sc__rt_late_init(&in->late, rt->g, node);
	if (!rc)
		rc = stream_key(rt, u, node, &key);
	for (uint32_t j = 0; j < nb && !rc; j++) {
		in->insts[j] = rt->first[u] + j;
		rc = new_edge(rt, node, RT_HOST, in->insts[j], &edges[j]);
		if (!rc && j < SC_EXCHANGE_MAX)
			traces[j] = rt->edges[rt->nedges - 1].trace;
		if (!rc)
			rc = add_in_port(&rt->inst[in->insts[j]], edges[j],
					 node, RT_HOST, true);
	}
	if (!rc)
		rc = sc_exchange_init(&in->x, key, nb, edges);
	/* The integral of the submissions, for a rebuild of the unit. */
	if (!rc && rt->restarts)
		rc = sc_exchange_set_traces(&in->x, traces);
	free(edges);
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

int
sc__rt_make_sub(struct sc_runtime *rt, uint32_t id,
		struct sc_batch *const *restore, struct sc_subcircuit **out)
{
	struct rt_inst *ci = &rt->inst[id];
	struct sc_subcircuit_desc d;
	struct sc_node_info ni;
	char name[SC_UNIT_NAME_MAX];
	size_t n;
	int *nodes;
	int rc = unit_nodes(rt, ci->unit, &nodes, &n);

	if (rc)
		return rc;
	if (n == 0) { /* sc_placement_check refuses an empty unit */
		free(nodes);
		return sc__fail(SC_ESTATE,
				"sc_runtime_create: unit %u has no "
				"node",
				ci->unit);
	}
	if (sc_graph_node_info(rt->g, nodes[0], &ni) != 0)
		ni.name = "?";
	/* A long node name is cut to fit: the name is for people. */
	if (sc_placement_shards(rt->p, ci->unit) > 1)
		(void)snprintf(name, sizeof(name), "u%u.%u %.30s", ci->unit,
			       ci->shard, ni.name);
	else
		(void)snprintf(name, sizeof(name), "u%u %.36s", ci->unit,
			       ni.name);
	memset(&d, 0, sizeof(d));
	memcpy(ci->name, name, sizeof(ci->name));
	d.name = name;
	d.graph = rt->g;
	d.nodes = nodes;
	d.nnodes = n;
	d.in = ci->in;
	d.nin = ci->nin;
	d.out = ci->out;
	d.nout = ci->nout;
	d.host_popped = sc__rt_host_popped;
	d.host_ctx = rt;
	d.restore = restore;
	d.timeline = rt->o.timeline;
	d.timeline_id = id;
	d.figures = &ci->figures;
	d.ticks = rt->o.ticks;
	d.horizon = sc__rt_horizon;
	d.horizon_ctx = rt;
	/* A unit beyond the names the timeline holds is "unit N" there. */
	if (rt->o.timeline)
		(void)sc_timeline_name(rt->o.timeline, SC_TIMELINE_UNIT, id,
				       name);
	rc = sc_subcircuit_create(&d, out);
	/* Only NULL fails it. */
	if (!rc && rt->o.no_cleanup)
		(void)sc_circuit_set_cleanup(sc_subcircuit_circuit(*out),
					     false);
	free(nodes);
	return rc;
}

static int
build_unit(struct sc_runtime *rt, uint32_t id)
{
	struct rt_inst *ci = &rt->inst[id];
	uint32_t got;
	int rc;

	if (!sc_runtime_remote_local(rt, id))
		return sc__rt_remote_add_proxy(rt, id);
	if ((rc = sc__rt_make_sub(rt, id, NULL, &ci->sub)) != 0)
		return rc;
	rc = sc_exec_add(rt->ex, sc_subcircuit_unit(ci->sub), &got);
	if (rc) {
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

void
sc__rt_free_ports(struct rt_inst *ci)
{
	for (size_t i = 0; i < ci->nout; i++) {
		free((void *)ci->out[i].edges);
		free((void *)ci->out[i].peers);
		free((void *)ci->out[i].traces);
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
	rt->inst = calloc(k ? k : 1, sizeof(*rt->inst));
	if (!rt->inst)
		return sc__fail(SC_ENOMEM, "sc_runtime_create: %u units", k);
	for (uint32_t u = 0; u < nu; u++)
		for (uint32_t j = rt->first[u]; j < rt->first[u + 1]; j++) {
			rt->inst[j].unit = u;
			rt->inst[j].shard = j - rt->first[u];
		}
	return 0;
}

void
sc__rt_edge_name(const struct sc_runtime *rt, const struct rt_edge *e,
		 char *buf, size_t n)
{
	char from[32];

	if (e->from == RT_HOST)
		(void)snprintf(from, sizeof(from), "host");
	else
		(void)snprintf(from, sizeof(from), "u%u.%u",
			       rt->inst[e->from].unit, rt->inst[e->from].shard);
	(void)snprintf(buf, n, "%s -> u%u.%u", from, rt->inst[e->to].unit,
		       rt->inst[e->to].shard);
}

/* The timeline's counter i is edge i's fill (sc_runtime_trace_sample):
 * named "u1 -> u2" (with .shard for replicas), "host -> u0" for an input's.
 * Edges beyond the counters it names stay "counter N". */
static void
name_edge_counters(struct sc_runtime *rt)
{
	for (size_t i = 0; i < rt->nedges; i++) {
		char ends[72], name[80];

		sc__rt_edge_name(rt, &rt->edges[i], ends, sizeof(ends));
		(void)snprintf(name, sizeof(name), "fill %s", ends);
		(void)sc_timeline_name(rt->o.timeline, SC_TIMELINE_COUNTER,
				       (uint32_t)i, name);
	}
}

/* The graph's nodes as the timeline's operators, so that a long turn's
 * slice names the operator that took its time. Nodes beyond the names it
 * holds stay "op N". */
static void
name_ops(struct sc_runtime *rt)
{
	size_t n = sc_graph_node_count(rt->g);
	struct sc_node_info ni;

	for (size_t i = 0; i < n && i <= INT32_MAX; i++)
		if (sc_graph_node_info(rt->g, (int)i, &ni) == 0)
			(void)sc_timeline_name(rt->o.timeline, SC_TIMELINE_OP,
					       (uint32_t)i, ni.name);
}

int
sc__rt_build(struct sc_runtime *rt)
{
	struct sc_exec_opts eo = {.capacity = 0, .spin = 0};
	uint32_t nu = sc_placement_units(rt->p);
	size_t nn = sc_graph_node_count(rt->g);
	int rc;

	if ((rc = sc_analysis_init_mode(&rt->an, rt->g, rt->p, rt->o.ticks)) ||
	    (rc = number_instances(rt)) || (rc = sc__rt_restart_check(rt)) ||
	    (rc = sc__rt_remote_check(rt)) ||
	    (rc = sc_analysis_check_mode(rt->g, rt->o.ticks)) ||
	    (rc = sc__rt_tick_check(rt)))
		return rc;
	eo.capacity = rt->ninst > 1024 ? rt->ninst : 0;
	eo.kind = rt->o.executor;
	rt->inputs = calloc(nn, sizeof(*rt->inputs));
	if (!rt->inputs)
		return sc__fail(SC_ENOMEM, "sc_runtime_create: inputs");
	if ((rc = sc_exec_create(&eo, &rt->ex)) != 0)
		return rc;
	for (uint32_t u = 0; u < nu && !rc; u++)
		rc = wire_unit(rt, u);
	for (uint32_t i = 0; i < rt->ninst && !rc; i++)
		rc = build_unit(rt, i);
	if (!rc && rt->o.remote)
		rc = sc__rt_remote_declare(rt);
	for (uint32_t i = 0; i < rt->ninst; i++)
		if (!sc__rt_inst_restartable(rt, i))
			sc__rt_free_ports(&rt->inst[i]);
	if (!rc && rt->o.timeline)
		name_edge_counters(rt);
	if (!rc && rt->o.timeline)
		name_ops(rt);
	if (!rc && rt->o.workers > 0) {
		struct sc_pool_opts po = {.workers = rt->o.workers,
					  .budget = rt->o.budget,
					  .catch_faults = rt->o.catch_faults};

		rc = sc_pool_create(rt->ex, &po, &rt->pool);
		rt->threaded = rc == 0;
	}
	if (!rc && rt->o.remote)
		rc = rt->o.remote->ops->start(rt->o.remote->ctx, rt);
	rt->remote_started = !rc && rt->o.remote;
	return rc;
}

/*
 * runtime.c - build units and edges from a placement; the host's calls.
 *
 * See runtime.h. Building goes: check the graph; analyse the placement
 * (units/analysis.h: refuse loops across units; the unit graph's
 * components decide which edges gate backpressure); number the instances
 * (unit u's replica k); for every unit, cut its nodes from the graph
 * (sc_graph_cut) and make one edge per (producer replica, consumer
 * replica) for each stream that enters it, plus one host edge per replica
 * for each of its input nodes; then build the sub-circuits, add them to
 * the executor in instance order (so instance i is executor unit i) and
 * start the pool. Every producer end, the host's included, is an exchange
 * (units/exchange.h).
 */
#include "units/runtime.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "operators/base.h"
#include "operators/base_int.h"
#include "runtime/pool.h"
#include "runtime/timeline.h"
#include "runtime/watchdog.h"
#include "units/analysis.h"
#include "units/edge.h"
#include "units/edge_int.h"
#include "units/exchange.h"
#include "units/runtime_remote.h"
#include "units/subcircuit.h"
#include "units/runtime_late_int.h"
#include "units/subcircuit_int.h"

#define RT_HOST SC_SUBCIRCUIT_HOST

/* One edge and its ends. */
struct rt_edge {
	struct sc_edge *edge;
	uint32_t from;			 /* producer instance, or RT_HOST */
	uint32_t to;			 /* consumer instance */
	int stream;			 /* the stream it carries */
	struct sc_exchange_trace *trace; /* what was sent on it, when an
					    end may be rebuilt; else NULL */
};

/* One executor unit: a replica of a placement unit. */
struct rt_inst {
	uint32_t unit;			 /* placement unit */
	uint32_t shard;			 /* replica index */
	struct sc_subcircuit *sub;	 /* owned by the executor; dangling once
					    DEAD */
	struct sc__unit_figures figures; /* its figures, outliving it (and
					    shared by its rebuilds) */
	char name[SC_UNIT_NAME_MAX];	 /* as the unit's */
	/* port lists: built at create, freed then unless the unit may be
	 * rebuilt (its rebuild makes the same ports) */
	struct sc_subcircuit_in *in;
	size_t nin, cap_in;
	struct sc_subcircuit_out *out;
	size_t nout, cap_out;
	/* restarts (runtime.h, Restarts); written by the host at idle */
	struct sc_restart_policy pol; /* this unit's policy */
	uint64_t *stamps;	      /* the last pol.max_restarts restart
					 times, a ring; NULL: none allowed */
	uint32_t nstamps;	      /* stamps in use */
	uint32_t stamp_at;	      /* the oldest (once the ring is full) */
	atomic_bool given_up;	      /* past the bound: stays dead */
	bool kick;		      /* rebuilt, to kick (restart_at_idle) */
	bool ahead_in; /* tick mode: fed by a delay's ahead port, so it may
			  wait on the horizon alone (kicked at each close) */
};

/* A delta callback (sc_runtime_on_delta), kept to install it again in a
 * rebuilt unit's circuit. */
struct rt_ondelta {
	int node;
	sc_delta_fn fn;
	void *ctx;
};

/* The host's end of an input node. */
struct rt_input {
	int node;
	uint32_t ncols;
	struct sc__symcols syms; /* its symbol columns (a submit's check) */
	struct sc_exchange x;	 /* one edge per replica of its unit, routing */
	uint32_t *insts;	 /* their instances, per edge */
	pthread_mutex_t mu;	 /* one submitter at a time (SPSC edges) */
	struct sc__rt_late late; /* its lateness (the submit's check) */
};

struct sc_runtime {
	struct sc_graph *g;
	const struct sc_placement *p;
	struct sc_runtime_opts o;
	struct sc_exec *ex;
	struct sc_pool *pool; /* written by create and shutdown only */
	bool threaded;	      /* workers > 0: fixed at create, so host
				 threads may read it while shutdown runs */
	uint32_t ninst;
	struct rt_inst *inst;
	uint32_t *first; /* first instance of each unit; [nunits] = ninst */
	struct rt_edge *edges;
	size_t nedges, cap_edges;
	struct rt_input *inputs;
	size_t ninputs;
	struct sc_analysis an; /* loops, components: which edges gate */
	atomic_bool submitted;
	atomic_bool shut;
	bool shut_done; /* shutdown ran (host thread only) */
	int shut_rc;	/* what it returned */
	struct sc_panic_record shut_first;
	/* host waits for room (submit_wait) */
	pthread_mutex_t wait_mu;
	pthread_cond_t wait_cv;
	atomic_uint waiters;
	/* restarts (runtime.h, Restarts) */
	bool restarts;		    /* some unit may be rebuilt */
	struct rt_ondelta *ondelta; /* callbacks to install again */
	size_t nondelta, cap_ondelta;
	atomic_uint n_restarts; /* units rebuilt */
	atomic_uint n_failed;	/* rebuilds that could not be made */
	/* tick mode (runtime.h, Host ticks) */
	uint64_t host_tick;	  /* the open tick; written with every input
				     held (tick_try) */
	atomic_bool tick_open;	  /* something was submitted to it */
	_Atomic uint64_t horizon; /* ticks closed: no unit steps beyond */
	/* across ranks (units/runtime_remote.h) */
	atomic_bool *rank_dead; /* per rank, set by the transport */
	bool remote_started;	/* its start succeeded: stop at teardown */
};

static bool inst_restartable(const struct sc_runtime *rt, uint32_t i);
static int edge_trace(struct sc_runtime *rt, struct rt_edge *re);
static int restart_check(struct sc_runtime *rt);
static int restart_at_idle(struct sc_runtime *rt, uint32_t *restarted,
			   uint32_t *failed);
static bool restart_pending(struct sc_runtime *rt, const struct rt_input *in);
static int remote_add_proxy(struct sc_runtime *rt, uint32_t id);
static int remote_check(struct sc_runtime *rt);
static int remote_declare(struct sc_runtime *rt);
static int remote_wait_idle(struct sc_runtime *rt, uint64_t timeout_ns,
			    struct sc_panic_record *first);
static int remote_gather(struct sc_runtime *rt, int output,
			 struct sc_batch **inout);

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

/* --- building --------------------------------------------------------------
 */

static int
new_edge(struct sc_runtime *rt, int stream, uint32_t from, uint32_t to,
	 struct sc_edge **out)
{
	struct sc_edge_opts eo;
	struct sc__symcols syms;
	struct rt_edge *re;
	void *arr = rt->edges;
	int rc = grow(&arr, &rt->cap_edges, rt->nedges + 1, sizeof(*re));

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
	if ((rc = edge_trace(rt, re)) != 0)
		return rc;
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
		    grow(&arr, &pi->cap_out, pi->nout + 1, sizeof(*pi->out))) {
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

static void host_popped(void *ctx);

/* The ticks the host has closed (units/subcircuit.h, Ahead ports), for
 * the units' turns. */
static uint64_t
horizon_of(const void *ctx)
{
	const struct sc_runtime *rt = ctx;

	return atomic_load_explicit(&rt->horizon, memory_order_acquire);
}

/* The sub-circuit of instance id from its ports (restore: NULL, or a
 * rebuild's integrals, subcircuit.h). */
static int
make_sub(struct sc_runtime *rt, uint32_t id, struct sc_batch *const *restore,
	 struct sc_subcircuit **out)
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
	d.host_popped = host_popped;
	d.host_ctx = rt;
	d.restore = restore;
	d.timeline = rt->o.timeline;
	d.timeline_id = id;
	d.figures = &ci->figures;
	d.ticks = rt->o.ticks;
	d.horizon = horizon_of;
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
		return remote_add_proxy(rt, id);
	if ((rc = make_sub(rt, id, NULL, &ci->sub)) != 0)
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

static void
free_ports(struct rt_inst *ci)
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

/* An edge by its ends: "u1.0 -> u3.0" (unit.replica), "host -> u0.0"
 * for an input's. */
static void
edge_name(const struct sc_runtime *rt, const struct rt_edge *e, char *buf,
	  size_t n)
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

		edge_name(rt, &rt->edges[i], ends, sizeof(ends));
		(void)snprintf(name, sizeof(name), "fill %s", ends);
		(void)sc_timeline_name(rt->o.timeline, SC_TIMELINE_COUNTER,
				       (uint32_t)i, name);
	}
}

/* A rebuilt unit would not know its tick, so tick mode refuses restarts
 * (the cycles of units it cannot run are sc_analysis_init_mode's). */
static int
tick_check(struct sc_runtime *rt)
{
	if (rt->o.ticks && rt->restarts)
		return sc__fail(SC_EINVAL, "sc_runtime_create: restart "
					   "policies are not supported in "
					   "tick mode");
	return 0;
}

static int
build(struct sc_runtime *rt)
{
	struct sc_exec_opts eo = {.capacity = 0, .spin = 0};
	uint32_t nu = sc_placement_units(rt->p);
	size_t nn = sc_graph_node_count(rt->g);
	int rc;

	if ((rc = sc_analysis_init_mode(&rt->an, rt->g, rt->p, rt->o.ticks)) ||
	    (rc = number_instances(rt)) || (rc = restart_check(rt)) ||
	    (rc = remote_check(rt)) ||
	    (rc = sc_analysis_check_mode(rt->g, rt->o.ticks)) ||
	    (rc = tick_check(rt)))
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
		rc = remote_declare(rt);
	for (uint32_t i = 0; i < rt->ninst; i++)
		if (!inst_restartable(rt, i))
			free_ports(&rt->inst[i]);
	if (!rc && rt->o.timeline)
		name_edge_counters(rt);
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

static void teardown(struct sc_runtime *rt);

/* The host's wait for room times out on the monotonic clock, as the
 * executor's idle wait does: a wall clock stepped back would stretch it. */
static int
init_wait_cv(struct sc_runtime *rt)
{
	if (sc__cond_init(&rt->wait_cv) != 0)
		return sc__fail(SC_ENOMEM, "sc_runtime_create: condvar");
	return 0;
}

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
	o.shutdown_timeout_ns = o.shutdown_timeout_ns
				    ? o.shutdown_timeout_ns
				    : SC_RUNTIME_SHUTDOWN_TIMEOUT_NS;
	rt = calloc(1, sizeof(*rt));
	if (!rt)
		return sc__fail(SC_ENOMEM, "sc_runtime_create");
	rt->g = g;
	rt->p = p;
	rt->o = o;
	atomic_init(&rt->submitted, false);
	atomic_init(&rt->shut, false);
	atomic_init(&rt->tick_open, false);
	atomic_init(&rt->horizon, 0);
	atomic_init(&rt->waiters, 0);
	pthread_mutex_init(&rt->wait_mu, NULL);
	if ((rc = init_wait_cv(rt)) != 0) {
		pthread_mutex_destroy(&rt->wait_mu);
		free(rt);
		return rc;
	}
	if ((rc = build(rt)) != 0) {
		char msg[512];

		/* Teardown may overwrite the message: keep the first. */
		(void)snprintf(msg, sizeof(msg), "%s", sc_errdetail());
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
	if (rt->remote_started)
		rt->o.remote->ops->stop(rt->o.remote->ctx);
	if (rt->pool)
		(void)sc_pool_destroy(rt->pool, NULL);
	if (rt->ex) {
		sc_exec_shutdown(rt->ex);
		(void)sc_exec_destroy(rt->ex);
	}
	for (uint32_t i = 0; rt->inst && i < rt->ninst; i++) {
		free_ports(&rt->inst[i]);
		free(rt->inst[i].stamps);
	}
	for (size_t i = 0; i < rt->nedges; i++) {
		sc_edge_destroy(rt->edges[i].edge);
		sc_exchange_trace_fini(rt->edges[i].trace);
		free(rt->edges[i].trace);
	}
	free(rt->ondelta);
	for (size_t i = 0; i < rt->ninputs; i++) {
		sc_exchange_fini(&rt->inputs[i].x);
		free(rt->inputs[i].insts);
		pthread_mutex_destroy(&rt->inputs[i].mu);
		sc__rt_late_fini(&rt->inputs[i].late);
	}
	free(rt->inputs);
	free(rt->edges);
	free(rt->inst);
	free(rt->first);
	sc_analysis_fini(&rt->an);
	free(rt->rank_dead);
	pthread_cond_destroy(&rt->wait_cv);
	pthread_mutex_destroy(&rt->wait_mu);
	free(rt);
}

void
sc_runtime_destroy(struct sc_runtime *rt)
{
	int rc;

	if (!rt)
		return;
	rc = sc_runtime_shutdown(rt, NULL);
	if (rc == SC_ESTATE || rc == SC_ETIMEDOUT) {
		/* From a callback, or a turn still runs: freeing now would
		 * pull the runtime from under it. Leaked, and said. */
		(void)fprintf(stderr,
			      "subcirc: sc_runtime_destroy: %s; the runtime "
			      "is left allocated\n",
			      sc_errmsg());
		return;
	}
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
	sc__fence_seq_cst();
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

/*
 * One submit, all or nothing: refused (SC_EFULL) unless every share would
 * enter its ring (sc_exchange_room); then partitioned and sent through the
 * input's exchange, and every replica that got a frame is kicked. The
 * caller holds in->mu.
 */
static int
submit_locked(struct sc_runtime *rt, struct rt_input *in, struct sc_batch *b)
{
	uint64_t pushed = 0;
	int rc, result = 0;

	SC_ASSERT(sc__mutex_locked(&in->mu)); /* one submitter: SPSC edges */
	/* Checked under the input's lock, which shutdown takes once after
	 * setting the flag: a submit either sends and kicks before shutdown
	 * waits for idle (applied), or sees the flag (refused). */
	if (atomic_load(&rt->shut) || sc_exec_is_shutdown(rt->ex))
		return sc__fail(SC_ESHUTDOWN,
				"sc_runtime_submit: the runtime is shut down");
	if ((rc = sc__rt_late_check(&in->late, b, in->node)) != 0)
		return rc; /* SC_ELATE: nothing applied */
	if (!sc_exchange_room(&in->x))
		return SC_EFULL;
	rc = sc_exchange_send(&in->x, sc_batch_retain(b), &pushed);
	if (rc == SC_EDEAD && restart_pending(rt, in))
		rc = 0; /* in the trace: the rebuild applies it */
	if (!rc)
		sc__rt_late_advance(&in->late, b);
	if (rc == SC_EDEAD)
		result = sc__fail(SC_EDEAD,
				  "sc_runtime_submit: the unit of input %d "
				  "is dead",
				  in->node);
	else if (rc)
		return rc;
	/* Under in->mu, which tick_try holds too: the open tick is the one
	 * this frame went to. */
	if (rt->o.ticks)
		atomic_store(&rt->tick_open, true);
	for (uint32_t j = 0; j < in->x.nedges; j++)
		if ((pushed >> j & 1) &&
		    sc_exec_kick(rt->ex, in->insts[j]) == SC_ESHUTDOWN)
			/* Only if the executor was shut down behind the
			 * runtime's back (sc_runtime_exec): the share will
			 * never be processed, so it is refused, not 0. */
			result = sc__fail(SC_ESHUTDOWN,
					  "sc_runtime_submit: the executor "
					  "is shut down");
	return result;
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
	if (!sc_runtime_remote_local(rt, RT_HOST))
		return sc__fail(SC_ESTATE, "sc_runtime_submit: the host runs "
					   "on rank 0");
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
	/* The edges hold the ids from acceptance on (edge_int.h); a dead
	 * one is refused here, as sc_circuit_feed refuses it. */
	*out = in;
	if (sc__symcols_any(&in->syms))
		return sc__symtab_check(&in->syms, b, "sc_runtime_submit");
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

/*
 * Fault catching on host threads (workers = 0 with catch_faults): a
 * thread that runs turns must have the handler and its alternate stack,
 * as a pool worker does (runtime/pool.c), or a hard fault in a turn kills
 * the process. It is turned on the first time a host thread runs a turn
 * and left on (a syscall pair per turn would cost more than the turn);
 * a thread-specific key's destructor turns it off when the thread exits,
 * which frees the stack. The main thread's stays until the process ends.
 */
static pthread_once_t host_catch_once = PTHREAD_ONCE_INIT;
static pthread_key_t host_catch_key;
static bool host_catch_key_ok;
static _Thread_local bool host_catching;

static void
host_catch_off(void *unused)
{
	(void)unused;
	(void)sc_panic_catch_faults(false);
}

static void
host_catch_key_make(void)
{
	host_catch_key_ok =
	    pthread_key_create(&host_catch_key, host_catch_off) == 0;
}

static void
host_catch_faults(void)
{
	if (host_catching)
		return;
	host_catching = true;
	(void)pthread_once(&host_catch_once, host_catch_key_make);
	if (sc_panic_catch_faults(true) != 0) {
		/* The turn still runs, without the net: say so once. */
		(void)fprintf(stderr,
			      "subcirc: host-driven turns run without "
			      "fault catching: %s\n",
			      sc_errmsg());
		return;
	}
	if (host_catch_key_ok)
		(void)pthread_setspecific(host_catch_key, &host_catching);
}

/* Run one queued turn on this thread (workers = 0), under the same fault
 * guard as the pool's when catch_faults is set. Whether one ran. */
static bool
run_one(struct sc_runtime *rt)
{
	struct sc_claim c;
	bool ran = false;

	SC_ASSERT(!rt->threaded); /* the workers run the turns otherwise */
	if (rt->o.catch_faults)
		host_catch_faults();
	sc_claim_init(&c);
	if (sc_exec_claim(rt->ex, -1, &c) == 0) {
		ran = true;
		if (sc_exec_run(rt->ex, &c, rt->o.budget) == 0)
			(void)sc_exec_finish(rt->ex, &c);
	}
	sc_claim_fini(&c);
	return ran;
}

/*
 * With workers = 0, make progress for a full input: run a queued turn on
 * this thread; if none is queued while another host thread runs one (its
 * own wait), wait for that turn (a nap of at most 1 ms on the executor's
 * idle condition), since its progress is what makes room. Returns true
 * when nothing is queued or running at all: then only this thread could
 * make room, and it has nothing to run.
 */
static bool
host_progress(struct sc_runtime *rt)
{
	struct sc_exec_info info;

	if (run_one(rt))
		return false;
	sc_exec_info(rt->ex, &info);
	if (info.running == 0 && info.queue_len == 0)
		return true;
	(void)sc_exec_wait_idle(rt->ex, 1000000, NULL);
	return false;
}

/* With workers: sleep until a unit takes frames from a host edge (or 10
 * ms), unless a last try under the lock finds room. */
static int
wait_for_room(struct sc_runtime *rt, int input, struct sc_batch *b,
	      uint64_t deadline)
{
	struct timespec ts;
	uint64_t t;
	int rc;

	SC_ASSERT(rt->threaded); /* host_popped wakes it: a worker's turn */
	atomic_fetch_add(&rt->waiters, 1);
	pthread_mutex_lock(&rt->wait_mu);
	rc = sc_runtime_submit(rt, input, b);
	if (rc == SC_EFULL) {
		/* A 10 ms cap: a safety net, never the mechanism. On the
		 * monotonic clock, as sc_clock_ns (init_wait_cv). */
		t = sc__deadline_add(sc_clock_ns(), 10000000ull);
		t = t < deadline ? t : deadline;
		ts.tv_sec = (time_t)(t / 1000000000ull);
		ts.tv_nsec = (long)(t % 1000000000ull);
		pthread_cond_timedwait(&rt->wait_cv, &rt->wait_mu, &ts);
	}
	pthread_mutex_unlock(&rt->wait_mu);
	atomic_fetch_sub(&rt->waiters, 1);
	return rc;
}

int
sc_runtime_submit_wait(struct sc_runtime *rt, int input, struct sc_batch *b,
		       uint64_t timeout_ns)
{
	uint64_t deadline = timeout_ns
				? sc__deadline_add(sc_clock_ns(), timeout_ns)
				: UINT64_MAX;
	bool stuck = false;

	/* A callback waiting for room that only the turns behind it make
	 * (its own among them) would wait for itself. */
	if (sc_exec_in_turn(rt->ex))
		return sc__fail(SC_ESTATE, "sc_runtime_submit_wait: called "
					   "from inside a unit's turn (use "
					   "sc_runtime_submit)");
	for (;;) {
		int rc = sc_runtime_submit(rt, input, b);

		if (rc != SC_EFULL)
			return rc;
		if (sc_clock_ns() >= deadline)
			return sc__fail(SC_ETIMEDOUT,
					"sc_runtime_submit_wait: input %d "
					"still full",
					input);
		if (rt->threaded) {
			rc = wait_for_room(rt, input, b, deadline);
			if (rc != SC_EFULL)
				return rc;
			continue;
		}
		/* Nothing queued or running twice in a row, with a submit
		 * between (another host's turn may have just made room): no
		 * one can make room any more. */
		if (host_progress(rt)) {
			if (stuck)
				return sc__fail(SC_ETIMEDOUT,
						"sc_runtime_submit_wait: input "
						"%d full and nothing to run",
						input);
			stuck = true;
		} else {
			stuck = false;
		}
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

/*
 * With workers = 0: run queued turns on this thread until nothing is
 * queued or running. An empty queue is not idle while another host thread
 * runs a turn (its own wait or submit_wait): that turn's finish may queue
 * more, so wait for it (naps of at most 1 ms on the executor's idle
 * condition) and go on. Returns 0 or SC_ETIMEDOUT at `deadline`.
 */
static int
drive(struct sc_runtime *rt, uint64_t deadline)
{
	struct sc_exec_info info;

	for (;;) {
		while (run_one(rt))
			if (sc_clock_ns() >= deadline)
				return SC_ETIMEDOUT;
		sc_exec_info(rt->ex, &info);
		if (info.idle)
			return 0;
		if (sc_clock_ns() >= deadline)
			return SC_ETIMEDOUT;
		(void)sc_exec_wait_idle(rt->ex, 1000000, NULL);
	}
}

/* One wait for idle: the executor's (workers), or this thread's drive. */
static int
wait_idle_once(struct sc_runtime *rt, uint64_t timeout_ns, uint64_t deadline,
	       struct sc_panic_record *first)
{
	if (rt->threaded) {
		uint64_t now = sc_clock_ns();

		if (!timeout_ns)
			return sc_exec_wait_idle(rt->ex, 0, first);
		return sc_exec_wait_idle(
		    rt->ex, deadline > now ? deadline - now : 1, first);
	}
	if (drive(rt, deadline) != 0)
		return sc__fail(SC_ETIMEDOUT,
				"sc_runtime_wait_idle: still busy");
	return first_panic(rt, first);
}

static int tick_close(struct sc_runtime *rt, uint64_t deadline,
		      uint64_t *closed);

int
sc_runtime_wait_idle(struct sc_runtime *rt, uint64_t timeout_ns,
		     struct sc_panic_record *first)
{
	uint64_t deadline = timeout_ns
				? sc__deadline_add(sc_clock_ns(), timeout_ns)
				: UINT64_MAX;

	if (!rt)
		return sc__fail(SC_EINVAL, "sc_runtime_wait_idle: NULL");
	if (sc_exec_in_turn(rt->ex))
		return sc__fail(SC_ESTATE,
				"sc_runtime_wait_idle: called from inside a "
				"unit's turn (a callback), which would wait "
				"for itself");
	if (rt->o.remote)
		return remote_wait_idle(rt, timeout_ns, first);
	/* A host that never closes a tick gets one per wait_idle
	 * (runtime.h, Host ticks). */
	if (rt->o.ticks && atomic_load(&rt->tick_open)) {
		int rc = tick_close(rt, deadline, NULL);

		if (rc && rc != SC_ESHUTDOWN)
			return rc;
	}
	for (;;) {
		uint32_t n = 0, failed = 0;
		int rc = wait_idle_once(rt, timeout_ns, deadline, first);

		/* Idle with a unit dead: bring back what the policy allows
		 * and wait again (runtime.h, Restarts). A rebuild that could
		 * not be made is tried again at once: every try counts
		 * against the rate bound, so this ends. */
		if (rc != SC_EPANIC || !rt->restarts)
			return rc;
		rc = restart_at_idle(rt, &n, &failed);
		if (rc == SC_EBUSY)
			continue; /* a submit came first: wait for it */
		if (n == 0 && failed == 0)
			return first_panic(rt, first);
	}
}

static bool
is_idle(struct sc_runtime *rt)
{
	struct sc_exec_info info;

	sc_exec_info(rt->ex, &info);
	return info.idle;
}

/*
 * Host reads (the integral, the idle check) look into the units' circuits
 * and the producer ends of edges, which only a running turn may touch. At
 * idle no turn runs, but another host thread's submit can kick one at any
 * moment. So a read holds every input's lock (in index order; a submitter
 * takes one only, so no cycle): no submit can kick a unit meanwhile, and
 * an idle executor then stays idle, since every other kick comes from a
 * turn (finish, death) and none runs. The executor's lock, taken by the
 * idle check, orders every finished turn's writes before the read.
 */
static void
hold_inputs(struct sc_runtime *rt)
{
	for (size_t i = 0; i < rt->ninputs; i++)
		pthread_mutex_lock(&rt->inputs[i].mu);
}

/* Whether every input's lock is held (by some thread: see
 * sc__mutex_locked), for SC_ASSERT in the host reads. */
static inline bool
inputs_held(struct sc_runtime *rt)
{
	for (size_t i = 0; i < rt->ninputs; i++)
		if (!sc__mutex_locked(&rt->inputs[i].mu))
			return false;
	return true;
}

static void
release_inputs(struct sc_runtime *rt)
{
	for (size_t i = rt->ninputs; i-- > 0;)
		pthread_mutex_unlock(&rt->inputs[i].mu);
}

/* --- host ticks (runtime.h, Host ticks) ----------------------------------- */

/*
 * Close the open host tick, all or nothing: with every input held (no
 * submit can slip a frame of this tick after its marker), SC_EFULL unless
 * every live host edge has room for the marker; then a marker on each,
 * and every replica fed is kicked. A dead unit's edge (SC_EDEAD) is
 * skipped: it has no frontier to wait for.
 */
static int
tick_try(struct sc_runtime *rt, uint64_t *closed)
{
	int rc = 0;

	hold_inputs(rt);
	if (atomic_load(&rt->shut) || sc_exec_is_shutdown(rt->ex))
		rc = sc__fail(SC_ESHUTDOWN,
			      "sc_runtime_tick: the runtime is shut down");
	for (size_t i = 0; i < rt->ninputs && !rc; i++) {
		struct rt_input *in = &rt->inputs[i];

		for (uint32_t j = 0; j < in->x.nedges && !rc; j++)
			if (!sc_edge_is_closed(in->x.edges[j]) &&
			    sc_edge_room(in->x.edges[j]) == 0)
				rc = SC_EFULL;
	}
	/* Before the markers: a unit that sees one may step the tick. */
	if (!rc)
		atomic_store_explicit(&rt->horizon, rt->host_tick + 1,
				      memory_order_release);
	for (size_t i = 0; i < rt->ninputs && !rc; i++) {
		struct rt_input *in = &rt->inputs[i];

		for (uint32_t j = 0; j < in->x.nedges; j++) {
			int a =
			    sc_edge_advance(in->x.edges[j], rt->host_tick + 1);

			SC_ASSERT(a == 0 || a == SC_EDEAD); /* room checked */
			if (a == 0)
				(void)sc_exec_kick(rt->ex, in->insts[j]);
		}
	}
	/* A unit fed through an ahead port may have every input past the
	 * tick and wait on the horizon alone, with no push left to kick it
	 * (subcircuit.h, "Ahead ports"). */
	for (uint32_t i = 0; i < rt->ninst && !rc; i++)
		if (rt->inst[i].ahead_in)
			(void)sc_exec_kick(rt->ex, i);
	if (!rc) {
		if (closed)
			*closed = rt->host_tick;
		rt->host_tick++;
		atomic_store(&rt->tick_open, false);
	}
	release_inputs(rt);
	return rc;
}

/* With workers: as wait_for_room, for a tick's markers. */
static int
tick_wait_room(struct sc_runtime *rt, uint64_t *closed, uint64_t deadline)
{
	struct timespec ts;
	uint64_t t;
	int rc;

	atomic_fetch_add(&rt->waiters, 1);
	pthread_mutex_lock(&rt->wait_mu);
	rc = tick_try(rt, closed);
	if (rc == SC_EFULL) {
		t = sc__deadline_add(sc_clock_ns(), 10000000ull);
		t = t < deadline ? t : deadline;
		ts.tv_sec = (time_t)(t / 1000000000ull);
		ts.tv_nsec = (long)(t % 1000000000ull);
		pthread_cond_timedwait(&rt->wait_cv, &rt->wait_mu, &ts);
	}
	pthread_mutex_unlock(&rt->wait_mu);
	atomic_fetch_sub(&rt->waiters, 1);
	return rc;
}

static int
tick_close(struct sc_runtime *rt, uint64_t deadline, uint64_t *closed)
{
	bool stuck = false;

	for (;;) {
		int rc = tick_try(rt, closed);

		if (rc != SC_EFULL)
			return rc;
		if (sc_clock_ns() >= deadline)
			return sc__fail(SC_ETIMEDOUT,
					"sc_runtime_tick: an input's edge "
					"is still full");
		if (rt->threaded) {
			rc = tick_wait_room(rt, closed, deadline);
			if (rc != SC_EFULL)
				return rc;
			continue;
		}
		if (host_progress(rt)) {
			if (stuck)
				return sc__fail(SC_ETIMEDOUT,
						"sc_runtime_tick: an input is "
						"full and nothing runs");
			stuck = true;
		} else {
			stuck = false;
		}
	}
}

int
sc_runtime_tick(struct sc_runtime *rt, uint64_t timeout_ns, uint64_t *closed)
{
	uint64_t deadline = timeout_ns
				? sc__deadline_add(sc_clock_ns(), timeout_ns)
				: UINT64_MAX;

	if (!rt)
		return sc__fail(SC_EINVAL, "sc_runtime_tick: NULL");
	if (!rt->o.ticks)
		return sc__fail(SC_ESTATE, "sc_runtime_tick: not in tick mode");
	if (sc_exec_in_turn(rt->ex))
		return sc__fail(SC_ESTATE, "sc_runtime_tick: called from "
					   "inside a unit's turn");
	return tick_close(rt, deadline, closed);
}

int
sc_runtime_tick_try(struct sc_runtime *rt, uint64_t *closed)
{
	int rc;

	if (!rt)
		return sc__fail(SC_EINVAL, "sc_runtime_tick_try: NULL");
	if (!rt->o.ticks)
		return sc__fail(SC_ESTATE,
				"sc_runtime_tick_try: not in tick mode");
	rc = tick_try(rt, closed);
	if (rc == SC_EFULL)
		return sc__fail(SC_EFULL, "sc_runtime_tick_try: an input's "
					  "edge is full (backpressure)");
	return rc;
}

uint64_t
sc_runtime_delta_tick(void)
{
	return sc_subcircuit_tick_now();
}

/* The watchdog's waits hook (runtime.h): what unit `unit`'s last turn
 * published (units/subcircuit_int.h), kept only while it is a wait for
 * an edge, not for the host: the tick is closed, and the edge holds
 * nothing for the unit to read. Atomics only, as the hook must. */
bool
sc_runtime_waits(void *arg, uint32_t unit, struct sc_watchdog_wait *out)
{
	const struct sc_runtime *rt = arg;
	struct sc_edge *e;
	uint64_t tick, front;

	if (!rt || !out || !rt->o.ticks || unit >= rt->ninst ||
	    !sc__unit_wait_read(&rt->inst[unit].figures, &tick, &front, &e))
		return false;
	if (tick >= atomic_load_explicit(&rt->horizon, memory_order_acquire) ||
	    sc_edge_pending(e) > 0)
		return false;
	for (size_t i = 0; i < rt->nedges; i++)
		if (rt->edges[i].edge == e) {
			out->tick = tick;
			out->frontier = front;
			edge_name(rt, &rt->edges[i], out->edge,
				  sizeof(out->edge));
			return true;
		}
	return false;
}

/* The integral of output `output` (node ni) summed over its unit's
 * replicas; the caller holds the inputs and saw the executor idle. */
static int
sum_integral(struct sc_runtime *rt, int output, const struct sc_node_info *ni,
	     struct sc_batch **out)
{
	int u = sc_placement_unit_of(rt->p, output);
	struct sc_batch *sum = NULL;
	int rc;

	SC_ASSERT(inputs_held(rt));

	for (uint32_t i = rt->first[u]; i < rt->first[u + 1]; i++) {
		struct sc_batch *b = NULL, *t = NULL;

		if (!rt->inst[i].sub && !inst_dead(rt, i))
			continue; /* another rank's: remote_gather */
		if (inst_dead(rt, i)) {
			sc_batch_release(sum);
			return sc__fail(SC_EDEAD,
					"sc_runtime_integral: the unit of "
					"'%s' is dead",
					ni->name);
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
	if (!sum)
		return sc_batch_empty(ni->schema->ncols, out);
	*out = sum;
	return 0;
}

/* Every aggregate upstream of `output`, in whichever unit it was placed,
 * holds no live group whose value is outside int64 (such a group has no
 * row, so the output would lack it without a word: sc_circuit_check). The
 * caller holds the inputs and saw the executor idle. */
static int
check_aggregates(struct sc_runtime *rt, int output)
{
	size_t sp = 0, nn = sc_graph_node_count(rt->g);
	bool *seen = calloc(nn, sizeof(*seen));
	int *stack = malloc(nn * sizeof(*stack));
	int rc = 0;

	if (!seen || !stack) {
		free(seen);
		free(stack);
		return sc__fail(SC_ENOMEM, "sc_runtime_integral");
	}
	seen[output] = true;
	stack[sp++] = output;
	while (sp > 0 && !rc) {
		struct sc_node_info ni;
		int v = stack[--sp];

		if ((rc = sc_graph_node_info(rt->g, v, &ni)) != 0)
			break;
		if (ni.kind == SC_NODE_AGGREGATE) {
			int u = sc_placement_unit_of(rt->p, v);

			for (uint32_t i = rt->first[u];
			     i < rt->first[u + 1] && !rc; i++)
				if (!inst_dead(rt, i) && rt->inst[i].sub)
					rc = sc_circuit_check(
					    sc_subcircuit_circuit(
						rt->inst[i].sub),
					    v);
		}
		for (uint32_t q = 0; q < ni.ninputs; q++) {
			int w = ni.inputs[q];

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
sc_runtime_integral(struct sc_runtime *rt, int output, struct sc_batch **out)
{
	struct sc_node_info ni;
	int rc;

	if (!rt || !out)
		return sc__fail(SC_EINVAL, "sc_runtime_integral: NULL");
	if ((rc = sc_graph_node_info(rt->g, output, &ni)) != 0)
		return rc;
	if (ni.kind != SC_NODE_OUTPUT)
		return sc__fail(SC_EINVAL,
				"sc_runtime_integral: '%s' is not an output",
				ni.name);
	hold_inputs(rt);
	if (is_idle(rt)) {
		rc = check_aggregates(rt, output);
		if (!rc)
			rc = sum_integral(rt, output, &ni, out);
		if (!rc && rt->o.remote)
			rc = remote_gather(rt, output, out);
	} else
		rc = sc__fail(SC_EBUSY, "sc_runtime_integral: not idle (a "
					"turn is queued or running)");
	release_inputs(rt);
	return rc;
}

/* The first dead replica of unit u, or RT_HOST if all are alive. */
static uint32_t
dead_replica(struct sc_runtime *rt, int u)
{
	for (uint32_t i = rt->first[u]; i < rt->first[u + 1]; i++)
		if (inst_dead(rt, i))
			return i;
	return RT_HOST;
}

/* Walk the streams back from `node` (depth first, `seen` marks nodes);
 * the first dead replica of a unit on the way, or RT_HOST. */
static int
find_dead_upstream(struct sc_runtime *rt, int node, bool *seen, int *stack,
		   uint32_t *dead, struct sc_node_info *at)
{
	size_t sp = 0;

	*dead = RT_HOST;
	seen[node] = true;
	stack[sp++] = node;
	while (sp > 0) {
		struct sc_node_info ni;
		int v = stack[--sp];
		int rc = sc_graph_node_info(rt->g, v, &ni);

		if (rc)
			return rc;
		*dead = dead_replica(rt, sc_placement_unit_of(rt->p, v));
		if (*dead != RT_HOST) {
			*at = ni;
			return 0;
		}
		for (uint32_t q = 0; q < ni.ninputs; q++) {
			int w = ni.inputs[q];

			if (w >= 0 && !seen[w]) {
				seen[w] = true;
				stack[sp++] = w;
			}
		}
	}
	return 0;
}

int
sc_runtime_upstream_dead(struct sc_runtime *rt, int output, uint32_t *unit)
{
	size_t nn;
	struct sc_node_info ni, at;
	uint32_t dead = RT_HOST;
	bool *seen;
	int *stack;
	int rc;

	if (!rt)
		return sc__fail(SC_EINVAL, "sc_runtime_upstream_dead: NULL");
	if ((rc = sc_graph_node_info(rt->g, output, &ni)) != 0)
		return rc;
	if (ni.kind != SC_NODE_OUTPUT)
		return sc__fail(SC_EINVAL,
				"sc_runtime_upstream_dead: '%s' is not an "
				"output",
				ni.name);
	nn = sc_graph_node_count(rt->g);
	seen = calloc(nn, sizeof(*seen));
	stack = malloc(nn * sizeof(*stack));
	if (seen && stack)
		rc = find_dead_upstream(rt, output, seen, stack, &dead, &at);
	else
		rc = sc__fail(SC_ENOMEM, "sc_runtime_upstream_dead");
	free(seen);
	free(stack);
	if (rc || dead == RT_HOST)
		return rc;
	if (unit)
		*unit = dead;
	return sc__fail(SC_EDEAD,
			"'%s' is downstream of dead unit %u (u%u.%u, holding "
			"'%s'): its integral is partial",
			ni.name, dead, rt->inst[dead].unit,
			rt->inst[dead].shard, at.name);
}

static int restart_keep_ondelta(struct sc_runtime *rt, int node, sc_delta_fn fn,
				void *ctx);

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
		int rc = !rt->inst[i].sub
			     ? 0 /* another rank's */
			     : sc_circuit_on_delta(
				   sc_subcircuit_circuit(rt->inst[i].sub), node,
				   fn, ctx);

		if (rc)
			return rc;
	}
	return restart_keep_ondelta(rt, node, fn, ctx);
}

static const char *
end_name(struct sc_runtime *rt, uint32_t inst, char *buf, size_t len)
{
	if (inst == RT_HOST)
		(void)snprintf(buf, len, "host");
	else
		(void)snprintf(buf, len, "u%u.%u", rt->inst[inst].unit,
			       rt->inst[inst].shard);
	return buf;
}

/* The idle invariant over every edge; the caller holds the inputs and saw
 * the executor idle. */
static int
check_edges(struct sc_runtime *rt)
{
	SC_ASSERT(inputs_held(rt));
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

int
sc_runtime_check_idle(struct sc_runtime *rt)
{
	int rc;

	if (!rt)
		return sc__fail(SC_EINVAL, "sc_runtime_check_idle: NULL");
	hold_inputs(rt);
	if (is_idle(rt))
		rc = check_edges(rt);
	else
		rc = sc__fail(SC_EBUSY, "sc_runtime_check_idle: not idle");
	release_inputs(rt);
	return rc;
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
	out->restarts = atomic_load(&rt->n_restarts);
	out->restarts_failed = atomic_load(&rt->n_failed);
	for (uint32_t i = 0; i < rt->ninst; i++) {
		out->dead += inst_dead(rt, i);
		out->given_up += atomic_load(&rt->inst[i].given_up);
	}
	for (size_t i = 0; i < rt->nedges; i++) {
		struct sc_edge_traffic t;

		sc_edge_traffic(rt->edges[i].edge, &t);
		out->frames += t.frames_pushed;
		out->rows += t.rows_pushed;
		out->pending += t.frames_in_ring;
		if (t.closed)
			out->pending_closed += t.frames_in_ring;
		out->frames_sent += t.frames_sent;
		out->frames_delivered += t.frames_delivered;
		out->frames_undeliverable +=
		    t.frames_drained + t.frames_refused;
		out->outbox_rows += t.outbox_rows;
		out->undeliverable_frames += t.undeliverable_frames;
		out->undeliverable_rows += t.undeliverable_rows;
	}
}

/* The names of the units in a turn now ("u1 m, u2 f") into buf (len
 * bytes with the NUL, cut to fit); how many there are. */
static uint32_t
running_names(struct sc_runtime *rt, char *buf, size_t len)
{
	struct sc_exec_unit_info *ui = calloc(rt->ninst, sizeof(*ui));
	uint32_t k = 0;
	size_t at = 0;

	buf[0] = '\0';
	if (!ui)
		return 0;
	(void)sc_exec_snapshot(rt->ex, ui, rt->ninst);
	for (uint32_t i = 0; i < rt->ninst; i++) {
		int w;

		if (ui[i].state != SC_UNIT_RUNNING &&
		    ui[i].state != SC_UNIT_RUNNING_KICKED)
			continue;
		w = snprintf(buf + at, len - at, "%s%s", k ? ", " : "",
			     ui[i].name);
		k++;
		if (w < 0 || (size_t)w >= len - at)
			at = len - 1;
		else
			at += (size_t)w;
	}
	free(ui);
	return k;
}

/* Shutdown's wait for idle passed opts.shutdown_timeout_ns: name what
 * still runs. The workers are not joined (one is stuck in a turn). */
static int
shutdown_timed_out(struct sc_runtime *rt)
{
	char names[320];
	struct sc_exec_info info;
	uint32_t n = running_names(rt, names, sizeof(names));

	sc_exec_info(rt->ex, &info);
	return sc__fail(
	    SC_ETIMEDOUT,
	    "sc_runtime_shutdown: not idle after %llu ms; %u "
	    "units still running (%s), %u queued",
	    (unsigned long long)(rt->o.shutdown_timeout_ns / 1000000ull), n,
	    n ? names : "none", info.queue_len);
}

int
sc_runtime_shutdown(struct sc_runtime *rt, struct sc_panic_record *first)
{
	struct sc_panic_record rec;
	int rc;

	if (!rt)
		return sc__fail(SC_EINVAL, "sc_runtime_shutdown: NULL");
	if (sc_exec_in_turn(rt->ex))
		return sc__fail(SC_ESTATE,
				"sc_runtime_shutdown: called from inside a "
				"unit's turn (a callback), which would wait "
				"for itself; call it from a host thread");
	if (rt->shut_done) {
		if (rt->shut_rc == SC_EPANIC && first)
			*first = rt->shut_first;
		return rt->shut_rc;
	}
	atomic_store(&rt->shut, true);
	/* A barrier: a submit that passed its check before the flag holds
	 * its input's lock until it has sent and kicked. Once every input's
	 * lock was taken after the flag, every accepted row is queued, so
	 * the wait for idle below processes it. */
	for (size_t i = 0; i < rt->ninputs; i++) {
		pthread_mutex_lock(&rt->inputs[i].mu);
		pthread_mutex_unlock(&rt->inputs[i].mu);
	}
	memset(&rec, 0, sizeof(rec));
	rc = sc_runtime_wait_idle(rt, rt->o.shutdown_timeout_ns, &rec);
	/* Wake host threads blocked in submit_wait: they see the flag. */
	pthread_mutex_lock(&rt->wait_mu);
	pthread_cond_broadcast(&rt->wait_cv);
	pthread_mutex_unlock(&rt->wait_mu);
	if (rc == SC_ETIMEDOUT)
		return shutdown_timed_out(rt); /* not done: a later call
						  tries again */
	if (rt->pool) {
		rc = sc_pool_finish(rt->pool, &rec);
		rt->pool = NULL;
	} else {
		sc_exec_shutdown(rt->ex);
	}
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

uint32_t
sc_runtime_units(const struct sc_runtime *rt)
{
	return rt ? rt->ninst : 0;
}

int
sc_runtime_unit_stats(const struct sc_runtime *rt, uint32_t id,
		      struct sc_subcircuit_stats *out, const char **name)
{
	if (!rt || !out)
		return sc__fail(SC_EINVAL, "sc_runtime_unit_stats: NULL");
	if (id >= rt->ninst)
		return sc__fail(SC_ENOENT,
				"sc_runtime_unit_stats: no unit %u (the "
				"runtime has %u)",
				id, rt->ninst);
	sc__unit_figures_read(&rt->inst[id].figures, out);
	if (name)
		*name = rt->inst[id].name;
	return 0;
}

const struct sc_circuit *
sc_runtime_unit_circuit(const struct sc_runtime *rt, uint32_t id)
{
	if (!rt || id >= rt->ninst || !rt->inst[id].sub)
		return NULL;
	return sc_subcircuit_circuit(rt->inst[id].sub);
}

void
sc_runtime_trace_sample(struct sc_runtime *rt)
{
	struct sc_timeline *tl;
	uint64_t now;

	if (!rt || !sc_timeline_on(rt->o.timeline))
		return;
	tl = rt->o.timeline;
	now = sc_clock_ns();
	for (size_t i = 0; i < rt->nedges; i++)
		sc_timeline_sample(tl, (uint32_t)i, now,
				   (int64_t)sc_edge_pending(rt->edges[i].edge));
}

struct sc_exec *
sc_runtime_exec(struct sc_runtime *rt)
{
	return rt ? rt->ex : NULL;
}

/* --- restarts (runtime.h, "Restarts") --------------------------------------
 *
 * Kept here, apart from the rest: the policy (resolved per instance at
 * create), the traces it needs on edges, and the rebuild, which runs only
 * on a host thread holding every input's lock with the executor idle.
 */

static bool policy_on(const struct sc_restart_policy *pol);

static bool
inst_restartable(const struct sc_runtime *rt, uint32_t i)
{
	return policy_on(&rt->inst[i].pol);
}

static bool
end_restartable(const struct sc_runtime *rt, uint32_t inst)
{
	return inst != RT_HOST && inst_restartable(rt, inst);
}

/* An edge with a restartable end keeps the integral of its sends: the
 * consumer's rebuild is fed it, the producer's rebuild corrects it. */
static int
edge_trace(struct sc_runtime *rt, struct rt_edge *re)
{
	struct sc__symcols syms;

	if (!end_restartable(rt, re->from) && !end_restartable(rt, re->to))
		return 0;
	re->trace = malloc(sizeof(*re->trace));
	if (!re->trace)
		return sc__fail(SC_ENOMEM, "sc_runtime_create: a trace");
	sc_exchange_trace_init(re->trace,
			       sc_graph_schema(rt->g, re->stream)->ncols);
	sc__symcols_of(sc_graph_schema(rt->g, re->stream), &syms);
	sc__exchange_trace_set_symbols(re->trace, &syms);
	return 0;
}

/* A unit rebuilt from its inputs' integrals must be a function of them:
 * no integrate, differentiate or delay (whose output is per tick). */
static int
check_functional(struct sc_runtime *rt, uint32_t u)
{
	size_t nn = sc_graph_node_count(rt->g);

	for (size_t i = 0; i < nn; i++) {
		struct sc_node_info ni;
		int rc;

		if (sc_placement_unit_of(rt->p, (int)i) != (int)u)
			continue;
		if ((rc = sc_graph_node_info(rt->g, (int)i, &ni)) != 0)
			return rc;
		if (ni.kind == SC_NODE_INTEGRATE ||
		    ni.kind == SC_NODE_DIFFERENTIATE ||
		    ni.kind == SC_NODE_DELAY)
			return sc__fail(SC_EINVAL,
					"sc_runtime_create: unit %u cannot be "
					"restarted: node '%s' (%s) is not a "
					"function of its input's integral",
					u, ni.name, sc_node_kind_name(ni.kind));
	}
	return 0;
}

static int
check_policy(const struct sc_restart_policy *pol, uint32_t u)
{
	if (pol->kind != SC_RESTART_NONE && pol->kind != SC_RESTART_BOUNDED)
		return sc__fail(SC_EINVAL,
				"sc_runtime_create: unit %u: unknown restart "
				"kind %d",
				u, (int)pol->kind);
	if (pol->max_restarts > SC_RESTART_MAX)
		return sc__fail(SC_EINVAL,
				"sc_runtime_create: unit %u: %u restarts is "
				"above %u",
				u, pol->max_restarts, SC_RESTART_MAX);
	return 0;
}

/* Unit u's policy as the options give it. */
static const struct sc_restart_policy *
policy_of(const struct sc_runtime *rt, uint32_t u)
{
	return rt->o.unit_restart ? &rt->o.unit_restart[u] : &rt->o.restart;
}

static bool
policy_on(const struct sc_restart_policy *pol)
{
	return pol->kind == SC_RESTART_BOUNDED && pol->max_restarts > 0;
}

/* Resolve every instance's policy, refuse what cannot be restarted, and
 * make the rate bound's rings. Before the edges are made (they ask). */
static int
restart_check(struct sc_runtime *rt)
{
	uint32_t nu = sc_placement_units(rt->p);
	int rc;

	for (uint32_t u = 0; u < nu; u++) {
		const struct sc_restart_policy *pol = policy_of(rt, u);

		if ((rc = check_policy(pol, u)) != 0 ||
		    (policy_on(pol) && (rc = check_functional(rt, u)) != 0))
			return rc;
		rt->restarts = rt->restarts || policy_on(pol);
	}
	for (uint32_t i = 0; i < rt->ninst; i++) {
		struct rt_inst *ci = &rt->inst[i];

		ci->pol = *policy_of(rt, ci->unit);
		atomic_init(&ci->given_up, false);
		if (!policy_on(&ci->pol))
			continue;
		ci->stamps = calloc(ci->pol.max_restarts, sizeof(uint64_t));
		if (!ci->stamps)
			return sc__fail(SC_ENOMEM,
					"sc_runtime_create: restarts");
	}
	rt->o.unit_restart = NULL; /* copied: the caller's may go */
	return 0;
}

static int
restart_keep_ondelta(struct sc_runtime *rt, int node, sc_delta_fn fn, void *ctx)
{
	void *arr = rt->ondelta;
	int rc;

	if (!rt->restarts)
		return 0;
	rc = grow(&arr, &rt->cap_ondelta, rt->nondelta + 1,
		  sizeof(*rt->ondelta));
	if (rc)
		return rc;
	rt->ondelta = arr;
	rt->ondelta[rt->nondelta++] =
	    (struct rt_ondelta){.node = node, .fn = fn, .ctx = ctx};
	return 0;
}

/* Whether every dead replica the submit to `in` met will be rebuilt. */
static bool
restart_pending(struct sc_runtime *rt, const struct rt_input *in)
{
	for (uint32_t j = 0; j < in->x.nedges; j++) {
		uint32_t i = in->insts[j];

		if (inst_dead(rt, i) && (!inst_restartable(rt, i) ||
					 atomic_load(&rt->inst[i].given_up)))
			return false;
	}
	return true;
}

/* The rate bound: fewer than max_restarts restarts in the last
 * period_ns (stamps holds the last max_restarts of them, oldest at
 * stamp_at once full). */
static bool
rate_allows(const struct rt_inst *ci, uint64_t now)
{
	if (ci->nstamps < ci->pol.max_restarts)
		return true;
	if (ci->pol.period_ns == 0)
		return false;
	return now - ci->stamps[ci->stamp_at] >= ci->pol.period_ns;
}

static void
rate_stamp(struct rt_inst *ci, uint64_t now)
{
	if (ci->nstamps < ci->pol.max_restarts) {
		ci->stamps[ci->nstamps++] = now;
		return;
	}
	ci->stamps[ci->stamp_at] = now;
	ci->stamp_at = (ci->stamp_at + 1) % ci->pol.max_restarts;
}

static const struct rt_edge *
edge_of(const struct sc_runtime *rt, const struct sc_edge *e)
{
	for (size_t i = 0; i < rt->nedges; i++)
		if (rt->edges[i].edge == e)
			return &rt->edges[i];
	return NULL;
}

/* Each input edge's integral (its producer's trace), into restore[]. */
static int
input_integrals(struct sc_runtime *rt, const struct rt_inst *ci,
		struct sc_batch **restore)
{
	for (size_t k = 0; k < ci->nin; k++) {
		const struct rt_edge *re = edge_of(rt, ci->in[k].edge);
		int rc =
		    re && re->trace
			? sc_exchange_trace_integral(re->trace, &restore[k])
			: sc__fail(SC_ESTATE, "restart: an input edge "
					      "without a trace");

		if (rc)
			return rc;
	}
	return 0;
}

static int
install_ondelta(struct sc_runtime *rt, uint32_t i, struct sc_subcircuit *sub)
{
	for (size_t k = 0; k < rt->nondelta; k++) {
		const struct rt_ondelta *od = &rt->ondelta[k];
		int rc;

		if (sc_placement_unit_of(rt->p, od->node) !=
		    (int)rt->inst[i].unit)
			continue;
		rc = sc_circuit_on_delta(sc_subcircuit_circuit(sub), od->node,
					 od->fn, od->ctx);
		if (rc)
			return rc;
	}
	return 0;
}

/*
 * Rebuild dead instance i (the caller holds every input and saw the
 * executor idle): its inputs' integrals, its input edges reopened (what
 * waited there is in the integrals: released and counted), a fresh
 * sub-circuit that feeds them at its first turn, its delta callbacks,
 * and the executor slot. On failure the edges are closed again and the
 * unit stays dead.
 */
static int
rebuild_one(struct sc_runtime *rt, uint32_t i)
{
	struct rt_inst *ci = &rt->inst[i];
	struct sc_batch **restore =
	    calloc(ci->nin ? ci->nin : 1, sizeof(struct sc_batch *));
	struct sc_subcircuit *sub = NULL;
	int rc = restore ? input_integrals(rt, ci, restore)
			 : sc__fail(SC_ENOMEM, "restart: unit %u", i);

	if (!rc)
		for (size_t k = 0; k < ci->nin; k++)
			(void)sc_edge_reopen(ci->in[k].edge);
	if (!rc)
		rc = make_sub(rt, i, restore, &sub);
	if (!rc)
		rc = install_ondelta(rt, i, sub);
	if (!rc)
		rc = sc_exec_revive(rt->ex, i, sc_subcircuit_unit(sub));
	if (!rc)
		ci->sub = sub;
	else if (sub)
		sc_subcircuit_destroy(sub); /* closes the edges again */
	else
		for (size_t k = 0; restore && k < ci->nin; k++)
			sc_edge_close(ci->in[k].edge);
	for (size_t k = 0; restore && k < ci->nin; k++)
		sc_batch_release(restore[k]);
	free(restore);
	return rc;
}

/* Rebuild every dead unit the policy allows, then kick them: all built
 * before any runs, since a rebuild touches producer ends that a running
 * rebuilt unit would own. SC_EBUSY when not idle. */
static int
restart_at_idle(struct sc_runtime *rt, uint32_t *restarted, uint32_t *failed)
{
	uint32_t n = 0, nf = 0;
	uint64_t now;
	bool busy;

	*restarted = *failed = 0;
	hold_inputs(rt);
	busy = !is_idle(rt);
	if (busy || sc_exec_is_shutdown(rt->ex)) {
		release_inputs(rt);
		return busy ? SC_EBUSY : 0;
	}
	now = sc_clock_ns();
	for (uint32_t i = 0; i < rt->ninst; i++) {
		struct rt_inst *ci = &rt->inst[i];

		if (!inst_dead(rt, i) || !inst_restartable(rt, i) ||
		    atomic_load(&ci->given_up))
			continue;
		if (!rate_allows(ci, now)) {
			atomic_store(&ci->given_up, true);
			continue;
		}
		rate_stamp(ci, now); /* every attempt counts */
		if (rebuild_one(rt, i) != 0) {
			atomic_fetch_add(&rt->n_failed, 1);
			nf++;
			continue;
		}
		atomic_fetch_add(&rt->n_restarts, 1);
		ci->kick = true;
		n++;
	}
	for (uint32_t i = 0; i < rt->ninst; i++)
		if (rt->inst[i].kick) {
			rt->inst[i].kick = false;
			(void)sc_exec_kick(rt->ex, i);
		}
	release_inputs(rt);
	*restarted = n;
	*failed = nf;
	return 0;
}

int
sc_runtime_restart(struct sc_runtime *rt, uint32_t *restarted)
{
	uint32_t n = 0, failed = 0;
	int rc;

	if (!rt)
		return sc__fail(SC_EINVAL, "sc_runtime_restart: NULL");
	if (sc_exec_in_turn(rt->ex))
		return sc__fail(SC_ESTATE,
				"sc_runtime_restart: called from inside a "
				"unit's turn (a callback)");
	rc = restart_at_idle(rt, &n, &failed);
	if (rc == SC_EBUSY)
		return sc__fail(SC_EBUSY, "sc_runtime_restart: not idle (a "
					  "turn is queued or running)");
	/* A rebuild that could not be made is tried again while nothing
	 * else came back (then the runtime is still idle); each try counts
	 * against the rate bound, so this ends. */
	while (rc == 0 && failed > 0 && n == 0)
		rc = restart_at_idle(rt, &n, &failed);
	if (restarted)
		*restarted = n;
	return rc == SC_EBUSY ? 0 : rc;
}

int
sc_runtime_late(struct sc_runtime *rt, int input, uint64_t *admitted,
		uint64_t *refused)
{
	struct rt_input *in;

	if (!rt)
		return sc__fail(SC_EINVAL, "sc_runtime_late: NULL runtime");
	if (!(in = find_input(rt, input)))
		return sc__fail(SC_ENOENT,
				"sc_runtime_late: node %d is not "
				"an input",
				input);
	pthread_mutex_lock(&in->mu);
	sc__rt_late_counts(&in->late, admitted, refused);
	pthread_mutex_unlock(&in->mu);
	return 0;
}

/* --- across ranks (units/runtime_remote.h) ------------------------------
 */

/* Another rank's replica: it never touches an edge (the transport holds
 * this rank's end of every cut edge), so a kick costs an empty turn;
 * once its rank is dead it panics, and the executor's death rules take
 * over. */
struct rt_proxy {
	struct sc_unit unit;
	struct sc_runtime *rt;
	uint32_t inst;
	char name[SC_UNIT_NAME_MAX];
};

static int
inst_rank(const struct sc_runtime *rt, uint32_t inst)
{
	if (inst == RT_HOST)
		return SC_RUNTIME_HOST_RANK;
	return sc_placement_rank_of(rt->p, rt->inst[inst].unit,
				    rt->inst[inst].shard);
}

bool
sc_runtime_remote_local(const struct sc_runtime *rt, uint32_t inst)
{
	return !rt->o.remote || inst_rank(rt, inst) == rt->o.remote->rank;
}

static struct sc_turn
proxy_turn(struct sc_unit *self, uint32_t budget)
{
	struct rt_proxy *px = (struct rt_proxy *)self;
	int r = inst_rank(px->rt, px->inst);

	(void)budget;
	if (atomic_load(&px->rt->rank_dead[r]))
		sc_panic("unit %s: rank %d is dead", px->name, r);
	return (struct sc_turn){0, false};
}

static size_t
proxy_neighbours(struct sc_unit *self, uint32_t *out, size_t max)
{
	(void)self;
	(void)out;
	(void)max;
	return 0;
}

static const char *
proxy_name(const struct sc_unit *self)
{
	return ((const struct rt_proxy *)self)->name;
}

static void
proxy_destroy(struct sc_unit *self)
{
	free(self);
}

/* The units of this rank across its edges: its death kicks them, so a
 * producer sees the edge the transport closed and drops its outbox. */
static size_t
proxy_peers(struct sc_unit *self, uint32_t *out, size_t max)
{
	struct rt_proxy *px = (struct rt_proxy *)self;
	struct sc_runtime *rt = px->rt;
	size_t n = 0;

	for (size_t i = 0; i < rt->nedges; i++) {
		uint32_t other = rt->edges[i].to == px->inst ? rt->edges[i].from
				 : rt->edges[i].from == px->inst
				     ? rt->edges[i].to
				     : RT_HOST;

		if (other == RT_HOST || !sc_runtime_remote_local(rt, other))
			continue;
		if (n < max)
			out[n] = other;
		n++;
	}
	return n;
}

static const struct sc_unit_ops proxy_ops = {
    .turn = proxy_turn,
    .neighbours = proxy_neighbours,
    .name = proxy_name,
    .destroy = proxy_destroy,
    .peers = proxy_peers,
};

static int
remote_add_proxy(struct sc_runtime *rt, uint32_t id)
{
	struct rt_proxy *px = calloc(1, sizeof(*px));
	uint32_t got;
	int rc;

	if (!px)
		return sc__fail(SC_ENOMEM, "sc_runtime_create: a proxy");
	px->unit.ops = &proxy_ops;
	px->rt = rt;
	px->inst = id;
	(void)snprintf(px->name, sizeof(px->name), "u%u.%u@rank%d",
		       rt->inst[id].unit, rt->inst[id].shard,
		       inst_rank(rt, id));
	memcpy(rt->inst[id].name, px->name, sizeof(px->name));
	if ((rc = sc_exec_add(rt->ex, &px->unit, &got)) != 0) {
		free(px);
		return rc;
	}
	if (got != id)
		return sc__fail(SC_ESTATE,
				"sc_runtime_create: proxy %u got "
				"id %u",
				id, got);
	return 0;
}

/* What a placement across ranks needs (runtime_remote.h, the end). */
static int
remote_check(struct sc_runtime *rt)
{
	const struct sc_runtime_remote *r = rt->o.remote;

	/* One process cannot run another rank's units: refused, not run
	 * here as if the ranks were one. */
	if (!r && sc_placement_ranks(rt->p) > 1)
		return sc__fail(SC_EINVAL,
				"sc_runtime_create: the placement spans %u "
				"ranks: run one process per rank under mpirun "
				"(sc_mpi_runtime_create, units/mpi_runtime.h)",
				sc_placement_ranks(rt->p));
	if (!r)
		return 0;
	if (!r->ops || !r->ops->cut || !r->ops->start || !r->ops->wait_idle ||
	    !r->ops->gather || !r->ops->stop || r->nranks < 1 || r->rank < 0 ||
	    r->rank >= r->nranks)
		return sc__fail(SC_EINVAL,
				"sc_runtime_create: a remote "
				"transport without its operations "
				"or with rank %d of %d",
				r->rank, r->nranks);
	if (sc_placement_ranks(rt->p) != (uint32_t)r->nranks)
		return sc__fail(SC_EINVAL,
				"sc_runtime_create: the placement spans %u "
				"ranks, the transport has %d",
				sc_placement_ranks(rt->p), r->nranks);
	if (rt->o.workers == 0 || rt->o.ticks || rt->restarts)
		return sc__fail(SC_EINVAL,
				"sc_runtime_create: across ranks, %s",
				rt->o.workers == 0 ? "workers = 0 is refused"
				: rt->o.ticks	   ? "tick mode is refused"
						   : "restarts are refused");
	rt->rank_dead = calloc((size_t)r->nranks, sizeof(*rt->rank_dead));
	if (!rt->rank_dead)
		return sc__fail(SC_ENOMEM, "sc_runtime_create: ranks");
	return 0;
}

/* Every cut edge to the transport, in edge order (the same on every
 * rank). */
static int
remote_declare(struct sc_runtime *rt)
{
	const struct sc_runtime_remote *r = rt->o.remote;
	uint32_t id = 0;
	int rc = 0;

	for (size_t i = 0; i < rt->nedges && !rc; i++) {
		struct rt_edge *re = &rt->edges[i];
		struct sc_runtime_cut c = {
		    .id = id,
		    .edge = re->edge,
		    .from = re->from,
		    .to = re->to,
		    .from_rank = inst_rank(rt, re->from),
		    .to_rank = inst_rank(rt, re->to),
		    .stream = re->stream,
		};

		if (c.from_rank == c.to_rank)
			continue;
		rc = r->ops->cut(r->ctx, &c);
		id++;
	}
	return rc;
}

bool
sc_runtime_remote_passive(struct sc_runtime *rt)
{
	struct sc_exec_info info;

	sc_exec_info(rt->ex, &info);
	if (!info.idle)
		return false;
	for (size_t i = 0; i < rt->nedges; i++) {
		struct rt_edge *re = &rt->edges[i];

		if (!sc_runtime_remote_local(rt, re->from) ||
		    sc_runtime_remote_local(rt, re->to))
			continue;
		if (sc_edge_pending(re->edge) > 0 ||
		    sc_edge_outbox_rows(re->edge) > 0)
			return false;
	}
	return true;
}

void
sc_runtime_remote_popped(struct sc_runtime *rt, uint32_t from)
{
	if (from == RT_HOST)
		host_popped(rt);
	else
		(void)sc_exec_kick(rt->ex, from);
}

void
sc_runtime_remote_pushed(struct sc_runtime *rt, uint32_t to)
{
	(void)sc_exec_kick(rt->ex, to);
}

void
sc_runtime_remote_frame_done(struct sc_edge *e, struct sc_batch *b)
{
	sc__edge_frame_done(e, b);
}

void
sc_runtime_remote_rank_dead(struct sc_runtime *rt, int rank)
{
	if (!rt->o.remote || rank < 0 || rank >= rt->o.remote->nranks ||
	    atomic_exchange(&rt->rank_dead[rank], true))
		return;
	/* This thread is the consumer end of the edges into the dead
	 * rank's replicas: close them here (a proxy's destroy runs on a
	 * worker, which must not touch that end). */
	for (size_t i = 0; i < rt->nedges; i++)
		if (inst_rank(rt, rt->edges[i].to) == rank &&
		    sc_runtime_remote_local(rt, rt->edges[i].from))
			sc_edge_close(rt->edges[i].edge);
	for (uint32_t i = 0; i < rt->ninst; i++)
		if (inst_rank(rt, i) == rank)
			(void)sc_exec_kick(rt->ex, i);
}

/* wait_idle across ranks: the transport's quiet, then this rank's panics
 * (a dead rank's proxies among them). */
static int
remote_wait_idle(struct sc_runtime *rt, uint64_t timeout_ns,
		 struct sc_panic_record *first)
{
	int rc = rt->o.remote->ops->wait_idle(rt->o.remote->ctx, timeout_ns);
	char why[512];

	if (rc == SC_ETIMEDOUT) {
		/* The transport's words say which rank and how far. */
		(void)snprintf(why, sizeof(why), "%s", sc_errdetail());
		return sc__fail(SC_ETIMEDOUT,
				"sc_runtime_wait_idle: the ranks are still "
				"busy (%s)",
				why);
	}
	if (rc && rc != SC_EDEAD)
		return rc;
	return first_panic(rt, first);
}

/* This rank's part of output's integral, gathered to rank 0. */
static int
remote_gather(struct sc_runtime *rt, int output, struct sc_batch **inout)
{
	struct sc_batch *all = NULL;
	int rc =
	    rt->o.remote->ops->gather(rt->o.remote->ctx, output, *inout, &all);

	sc_batch_release(*inout);
	*inout = rc ? NULL : all;
	return rc;
}

/*
 * runtime.c - a runtime's life and the host's reads (see runtime.h).
 *
 * Create checks its arguments and fills the defaults, then builds
 * (units/runtime_build.c); destroy shuts down and tears down. Between
 * them the host reads what the units hold: an output's integral, the idle
 * invariant over every edge, which dead unit an output depends on, the
 * stats. Every such read runs with every input's lock held and the
 * executor idle (sc__rt_hold_inputs, units/runtime_int.h): no turn runs
 * and none can start, so the units' circuits and the edges' producer ends
 * are the reader's for that moment. Shutdown is the last wait for idle.
 * Submission and the waits are units/runtime_host.c's, tick mode
 * units/tick.c's, restarts units/runtime_restart.c's and the ranks
 * units/runtime_remote.c's.
 */
#include "units/runtime.h"
#include "units/runtime_int.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "operators/base.h"
#include "operators/doing_int.h"
#include "operators/graph_int.h"
#include "runtime/pool.h"
#include "runtime/timeline.h"
#include "units/edge.h"
#include "units/runtime_remote.h"

/* --- life ----------------------------------------------------------------- */

int
sc__rt_grow(void **arr, size_t *cap, size_t need, size_t elem)
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
	o.budget = sc_unit_budget(o.budget);
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
	if ((rc = sc__rt_build(rt)) != 0) {
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

bool
sc__rt_inst_dead(struct sc_runtime *rt, uint32_t i)
{
	return inst_dead(rt, i);
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
		sc__rt_free_ports(&rt->inst[i]);
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

/* The integral of output `output` (node ni) summed over its unit's
 * replicas; the caller holds the inputs and saw the executor idle. */
static int
sum_integral(struct sc_runtime *rt, int output, const struct sc_node_info *ni,
	     struct sc_batch **out)
{
	int u = sc_placement_unit_of(rt->p, output);
	struct sc_batch *sum = NULL;
	int rc;

	SC_ASSERT(sc__rt_inputs_held(rt));

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

/* One vertex of check_aggregates' walk: an aggregate's live instances
 * hold no group outside int64; the walk goes on to the node's inputs. */
static int
check_node(void *ctx, int v, const int **in, uint32_t *nin)
{
	struct sc_runtime *rt = ctx;
	struct sc_node_info ni;
	int rc = sc_graph_node_info(rt->g, v, &ni);

	if (rc)
		return rc;
	if (ni.kind == SC_NODE_AGGREGATE || ni.kind == SC_NODE_MULTIAGG ||
	    ni.kind == SC_NODE_SESSION) {
		int u = sc_placement_unit_of(rt->p, v);

		for (uint32_t i = rt->first[u]; i < rt->first[u + 1]; i++)
			if (!inst_dead(rt, i) && rt->inst[i].sub &&
			    (rc = sc_circuit_check(
				 sc_subcircuit_circuit(rt->inst[i].sub), v)))
				return rc;
	}
	*in = ni.inputs;
	*nin = ni.ninputs;
	return 0;
}

/* Every aggregate upstream of `output`, in whichever unit it was placed,
 * holds no live group whose value is outside int64 (such a group has no
 * row, so the output would lack it without a word: sc_circuit_check). The
 * caller holds the inputs and saw the executor idle. */
static int
check_aggregates(struct sc_runtime *rt, int output)
{
	return sc__graph_walk_up(sc_graph_node_count(rt->g), output, check_node,
				 rt, "sc_runtime_integral");
}

static int
runtime_integral_body(struct sc_runtime *rt, int output, struct sc_batch **out)
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
	sc__rt_hold_inputs(rt);
	if (sc__rt_is_idle(rt)) {
		rc = check_aggregates(rt, output);
		if (!rc)
			rc = sum_integral(rt, output, &ni, out);
		if (!rc && rt->o.remote)
			rc = sc__rt_remote_gather(rt, output, out);
	} else
		rc = sc__fail(SC_EBUSY, "sc_runtime_integral: not idle (a "
					"turn is queued or running)");
	sc__rt_release_inputs(rt);
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

/* What find_dead's walk looks for and what it found. */
struct dead_walk {
	struct sc_runtime *rt;
	uint32_t dead;		/* the first dead replica met, or RT_HOST */
	struct sc_node_info at; /* the node in its unit */
};

/* A positive code that stops the walk at the first dead replica. */
#define DEAD_FOUND 1

/* One vertex of the walk: stop at a node whose unit has a dead replica,
 * else go on to its inputs. */
static int
dead_node(void *ctx, int v, const int **in, uint32_t *nin)
{
	struct dead_walk *w = ctx;
	int rc = sc_graph_node_info(w->rt->g, v, &w->at);

	if (rc)
		return rc;
	w->dead = dead_replica(w->rt, sc_placement_unit_of(w->rt->p, v));
	if (w->dead != RT_HOST)
		return DEAD_FOUND;
	*in = w->at.inputs;
	*nin = w->at.ninputs;
	return 0;
}

static int
runtime_upstream_dead_body(struct sc_runtime *rt, int output, uint32_t *unit)
{
	struct sc_node_info ni;
	struct dead_walk w = {.rt = rt, .dead = RT_HOST};
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
	rc = sc__graph_walk_up(sc_graph_node_count(rt->g), output, dead_node,
			       &w, "sc_runtime_upstream_dead");
	if (rc != DEAD_FOUND)
		return rc;
	if (unit)
		*unit = w.dead;
	return sc__fail(SC_EDEAD,
			"'%s' is downstream of dead unit %u (u%u.%u, holding "
			"'%s'): its integral is partial",
			ni.name, w.dead, rt->inst[w.dead].unit,
			rt->inst[w.dead].shard, w.at.name);
}

static int
runtime_on_delta_body(struct sc_runtime *rt, int node, sc_delta_fn fn,
		      void *ctx)
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
	return sc__rt_restart_keep_ondelta(rt, node, fn, ctx);
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
	SC_ASSERT(sc__rt_inputs_held(rt));
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
	sc__rt_hold_inputs(rt);
	if (sc__rt_is_idle(rt))
		rc = check_edges(rt);
	else
		rc = sc__fail(SC_EBUSY, "sc_runtime_check_idle: not idle");
	sc__rt_release_inputs(rt);
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

const char *
sc_runtime_op_name(const struct sc_runtime *rt, int op)
{
	struct sc_node_info ni;

	if (!rt)
		return NULL;
	if (op == -1)
		return "(the unit)";
	if (op < 0 || sc_graph_node_info(rt->g, op, &ni) != 0)
		return NULL;
	return ni.name;
}

static const char *
or_unknown(const char *name)
{
	return name ? name : "?";
}

/* The watchdog's doing hook (runtime.h): one relaxed load of the word the
 * running turn publishes, and the graph's name of its node (frozen). */
bool
sc_runtime_doing(void *arg, uint32_t unit, char *buf, size_t size)
{
	const struct sc_runtime *rt = arg;
	uint64_t w;

	if (!rt || !buf || !size || unit >= rt->ninst)
		return false;
	w = sc__doing_read(&rt->inst[unit].figures.doing);
	if (!w)
		return false;
	(void)snprintf(
	    buf, size, "in '%s' (%s)",
	    or_unknown(sc_runtime_op_name(rt, sc__doing_word_node(w))),
	    sc__doing_act_name(sc__doing_word_act(w)));
	return true;
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

int
sc_runtime_integral(struct sc_runtime *rt, int output, struct sc_batch **out)
{
	return sc__errwrap(runtime_integral_body(rt, output, out),
			   "sc_runtime_integral");
}

int
sc_runtime_upstream_dead(struct sc_runtime *rt, int output, uint32_t *unit)
{
	return sc__errwrap(runtime_upstream_dead_body(rt, output, unit),
			   "sc_runtime_upstream_dead");
}

int
sc_runtime_on_delta(struct sc_runtime *rt, int node, sc_delta_fn fn, void *ctx)
{
	return sc__errwrap(runtime_on_delta_body(rt, node, fn, ctx),
			   "sc_runtime_on_delta");
}

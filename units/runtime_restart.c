/*
 * runtime_restart.c - restarts (runtime.h, "Restarts").
 *
 * Design. A unit whose policy allows it is rebuilt after it died, from
 * the integrals of what its input edges carried: each edge with a
 * restartable end keeps a trace of its sends (units/exchange.h, Traces),
 * a fresh sub-circuit is fed those integrals at its first turn and sends
 * each consumer the correction between its share and what the dead unit
 * had sent (units/subcircuit.h, "A rebuild"). Only a unit that is a
 * function of its inputs' integrals can be rebuilt so (no integrate,
 * differentiate or delay: refused at create). The policy is resolved per
 * instance at create; the rate bound (max_restarts in period_ns) is a
 * ring of restart times per instance. A rebuild runs only on a host
 * thread holding every input's lock with the executor idle (from
 * sc_runtime_wait_idle or sc_runtime_restart), so it owns every edge end
 * it touches; all dead units are rebuilt before any is kicked.
 */
#include "units/runtime.h"
#include "units/runtime_int.h"

#include <stdatomic.h>
#include <stdlib.h>

#include "operators/base.h"
#include "units/edge_int.h"

static bool policy_on(const struct sc_restart_policy *pol);

bool
sc__rt_inst_restartable(const struct sc_runtime *rt, uint32_t i)
{
	return policy_on(&rt->inst[i].pol);
}

static bool
end_restartable(const struct sc_runtime *rt, uint32_t inst)
{
	return inst != RT_HOST && sc__rt_inst_restartable(rt, inst);
}

/* An edge with a restartable end keeps the integral of its sends: the
 * consumer's rebuild is fed it, the producer's rebuild corrects it. */
int
sc__rt_edge_trace(struct sc_runtime *rt, struct rt_edge *re)
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
int
sc__rt_restart_check(struct sc_runtime *rt)
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

int
sc__rt_restart_keep_ondelta(struct sc_runtime *rt, int node, sc_delta_fn fn,
			    void *ctx)
{
	void *arr = rt->ondelta;
	int rc;

	if (!rt->restarts)
		return 0;
	rc = sc__rt_grow(&arr, &rt->cap_ondelta, rt->nondelta + 1,
			 sizeof(*rt->ondelta));
	if (rc)
		return rc;
	rt->ondelta = arr;
	rt->ondelta[rt->nondelta++] =
	    (struct rt_ondelta){.node = node, .fn = fn, .ctx = ctx};
	return 0;
}

/* Whether every dead replica the submit to `in` met will be rebuilt. */
bool
sc__rt_restart_pending(struct sc_runtime *rt, const struct rt_input *in)
{
	for (uint32_t j = 0; j < in->x.nedges; j++) {
		uint32_t i = in->insts[j];

		if (sc__rt_inst_dead(rt, i) &&
		    (!sc__rt_inst_restartable(rt, i) ||
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
		rc = sc__rt_make_sub(rt, i, restore, &sub);
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
int
sc__rt_restart_at_idle(struct sc_runtime *rt, uint32_t *restarted,
		       uint32_t *failed)
{
	uint32_t n = 0, nf = 0;
	uint64_t now;
	bool busy;

	*restarted = *failed = 0;
	sc__rt_hold_inputs(rt);
	busy = !sc__rt_is_idle(rt);
	if (busy || sc_exec_is_shutdown(rt->ex)) {
		sc__rt_release_inputs(rt);
		return busy ? SC_EBUSY : 0;
	}
	now = sc_clock_ns();
	for (uint32_t i = 0; i < rt->ninst; i++) {
		struct rt_inst *ci = &rt->inst[i];

		if (!sc__rt_inst_dead(rt, i) ||
		    !sc__rt_inst_restartable(rt, i) ||
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
	sc__rt_release_inputs(rt);
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
	rc = sc__rt_restart_at_idle(rt, &n, &failed);
	if (rc == SC_EBUSY)
		return sc__fail(SC_EBUSY, "sc_runtime_restart: not idle (a "
					  "turn is queued or running)");
	/* A rebuild that could not be made is tried again while nothing
	 * else came back (then the runtime is still idle); each try counts
	 * against the rate bound, so this ends. */
	while (rc == 0 && failed > 0 && n == 0)
		rc = sc__rt_restart_at_idle(rt, &n, &failed);
	if (restarted)
		*restarted = n;
	return rc == SC_EBUSY ? 0 : rc;
}

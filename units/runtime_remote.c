/*
 * runtime_remote.c - the runtime's side of a placement across ranks
 * (units/runtime_remote.h, which holds the transport's interface).
 *
 * Design. Every rank builds every instance and every edge; a replica of
 * another rank becomes a proxy unit here (rt_proxy), which never touches
 * an edge: the transport is this rank's end of every cut edge, so a kick
 * a proxy gets costs one empty turn, and once its rank is dead the proxy
 * panics on its next turn and the executor's death rules take over. At
 * create the cut edges are declared to the transport in edge order (the
 * same on every rank); the waits for idle and the integrals are the
 * transport's collective calls.
 */
#include "units/runtime.h"
#include "units/runtime_int.h"
#include "units/runtime_remote.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "operators/base.h"
#include "runtime/panic.h"
#include "units/edge_int.h"

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
	if (!rt)
		return false;
	return !rt->o.remote || inst_rank(rt, inst) == rt->o.remote->rank;
}

static struct sc_turn
proxy_turn(struct sc_unit *self, uint32_t budget)
{
	struct rt_proxy *px = (struct rt_proxy *)self;
	int r = inst_rank(px->rt, px->inst);

	/* It takes no frame: any budget holds it (unit.h). */
	SC_ASSERT(budget >= 1);
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

int
sc__rt_remote_add_proxy(struct sc_runtime *rt, uint32_t id)
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
int
sc__rt_remote_check(struct sc_runtime *rt)
{
	const struct sc_runtime_remote *r = rt->o.remote;

	/* One process cannot run another rank's units: refused, not run
	 * here as if the ranks were one. */
	if (!r && sc_placement_ranks(rt->p) > 1)
		return sc__fail(
		    SC_EINVAL,
		    "sc_runtime_create: the placement spans %u "
		    "ranks: run one process per rank under mpirun "
		    "and create the runtime with "
		    "sc_mpi_runtime_create (<subcirc/subcirc_mpi.h>; "
		    "link libsubcirc-mpi: pkg-config subcirc-mpi, or "
		    "find_package(subcirc COMPONENTS mpi) and "
		    "subcirc::subcirc_mpi)",
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
int
sc__rt_remote_declare(struct sc_runtime *rt)
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

	if (!rt)
		return false;
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
	if (!rt)
		return;
	if (from == RT_HOST)
		sc__rt_host_popped(rt);
	else
		(void)sc_exec_kick(rt->ex, from);
}

void
sc_runtime_remote_pushed(struct sc_runtime *rt, uint32_t to)
{
	if (rt)
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
	if (!rt || !rt->o.remote || rank < 0 || rank >= rt->o.remote->nranks ||
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
int
sc__rt_remote_wait_idle(struct sc_runtime *rt, uint64_t timeout_ns,
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
	return sc__rt_first_panic(rt, first);
}

/* This rank's part of output's integral, gathered to rank 0. */
int
sc__rt_remote_gather(struct sc_runtime *rt, int output, struct sc_batch **inout)
{
	struct sc_batch *all = NULL;
	int rc =
	    rt->o.remote->ops->gather(rt->o.remote->ctx, output, *inout, &all);

	sc_batch_release(*inout);
	*inout = rc ? NULL : all;
	return rc;
}

/*
 * rt_toys.c - toy units and networks for the runtime tests (rt_toys.h).
 */
#include "tests/support/rt_toys.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "operators/error.h"
#include "runtime/panic.h"

#define TOK(id, hops) (((uint64_t)(id) << 16) | (uint64_t)(hops))
#define TOK_ID(t)     ((uint32_t)((t) >> 16))
#define TOK_HOPS(t)   ((uint32_t)((t)&0xffff))
#define CHAIN_HOPS    0xffff /* a chain token never retires before the sink */

/* --- edges ---------------------------------------------------------------
 * buf slots are written before tail is released and read after tail is
 * acquired; head is released after a slot is read, so a producer never
 * overwrites a slot the consumer has not finished with. */

static _Atomic uint64_t *
slot_of(struct rt_edge *e, uint64_t i)
{
	return &e->buf[i % e->cap];
}

bool
rt_edge_push(struct rt_edge *e, uint64_t tok)
{
	uint64_t t = atomic_load_explicit(&e->tail, memory_order_relaxed);
	uint64_t h = atomic_load_explicit(&e->head, memory_order_acquire);

	if (t - h >= e->cap)
		return false;
	atomic_store_explicit(slot_of(e, t), tok, memory_order_relaxed);
	atomic_store_explicit(&e->tail, t + 1, memory_order_release);
	return true;
}

uint32_t
rt_edge_len(const struct rt_edge *e)
{
	uint64_t h = atomic_load_explicit(&e->head, memory_order_acquire);
	uint64_t t = atomic_load_explicit(&e->tail, memory_order_acquire);

	return (uint32_t)(t - h);
}

bool
rt_edge_full(const struct rt_edge *e)
{
	return rt_edge_len(e) >= e->cap;
}

bool
rt_edge_empty(const struct rt_edge *e)
{
	return rt_edge_len(e) == 0;
}

/* Consumer side: the front token (edge not empty). */
static uint64_t
edge_peek(struct rt_edge *e)
{
	uint64_t h = atomic_load_explicit(&e->head, memory_order_relaxed);

	return atomic_load_explicit(slot_of(e, h), memory_order_relaxed);
}

static void
edge_pop(struct rt_edge *e)
{
	uint64_t h = atomic_load_explicit(&e->head, memory_order_relaxed);

	atomic_store_explicit(&e->head, h + 1, memory_order_release);
}

/* --- the network -----------------------------------------------------------
 */

struct rt_net {
	uint32_t n;		      /* toys */
	bool ring;		      /* ring (else chain) */
	struct rt_edge *edges;	      /* edges[i] is toy i's input */
	uint32_t *ids;		      /* executor id of toy i */
	struct rt_toy_faults *faults; /* per toy */
	_Atomic uint64_t *turns;      /* per toy, survives its destroy */
	uint32_t tokens;	      /* tokens in the game */
	uint32_t fed;		      /* chain: tokens the host has pushed */
	_Atomic uint32_t *seen;	      /* retirements per token id */
	_Atomic uint64_t retired;     /* all retirements */
};

struct rt_toy {
	struct sc_unit unit;	/* first member */
	char name[24];		/* "chain3", "ring0" */
	struct rt_net *net;	/* counts and faults (outlives the toy) */
	uint32_t index;		/* position in the net */
	struct rt_edge *in;	/* input edge */
	struct rt_edge *out;	/* output edge; NULL for the chain's sink */
	uint64_t next_expected; /* sink: FIFO order check */
	bool moved_in;		/* the last turn took from in */
	bool moved_out;		/* the last turn pushed to out */
};

static bool
retires(const struct rt_toy *t, uint64_t tok)
{
	return t->out == NULL || TOK_HOPS(tok) == 0;
}

static void
retire(struct rt_toy *t, uint64_t tok)
{
	uint32_t id = TOK_ID(tok);

	SC_UNIT_ASSERT(id < t->net->tokens, "%s: token %u of %u", t->name, id,
		       t->net->tokens);
	if (!t->net->ring) {
		SC_UNIT_ASSERT(id == t->next_expected,
			       "%s: token %u arrived, expected %llu", t->name,
			       id, (unsigned long long)t->next_expected);
		t->next_expected++;
	}
	atomic_fetch_add(&t->net->seen[id], 1);
	atomic_fetch_add(&t->net->retired, 1);
}

/* Whether a turn now would move a token (atomics only: any thread). */
static bool
can_act(const struct rt_toy *t)
{
	struct rt_edge *in = t->in;
	uint64_t h, tok;

	if (rt_edge_empty(in))
		return false;
	h = atomic_load_explicit(&in->head, memory_order_relaxed);
	tok = atomic_load_explicit(slot_of(in, h), memory_order_relaxed);
	return retires(t, tok) || !rt_edge_full(t->out);
}

/* Volatile so that the compiler cannot see the write is to page 0. */
static volatile uintptr_t rt_bad_address = 8;

static void
inject_faults(struct rt_toy *t, uint64_t turn_no)
{
	const struct rt_toy_faults *f = &t->net->faults[t->index];

	if (f->panic_at_turn == turn_no)
		sc_panic("%s: injected panic in turn %llu", t->name,
			 (unsigned long long)turn_no);
	if (f->segv_at_turn == turn_no)
		*(volatile int *)rt_bad_address = 1; /* a hard fault */
}

static struct sc_turn
toy_turn(struct sc_unit *self, uint32_t budget)
{
	struct rt_toy *t = (struct rt_toy *)self;
	uint64_t turn_no = atomic_fetch_add(&t->net->turns[t->index], 1) + 1;
	uint32_t moved = 0;

	inject_faults(t, turn_no);
	t->moved_in = t->moved_out = false;
	while (moved < budget && !rt_edge_empty(t->in)) {
		uint64_t tok = edge_peek(t->in);

		if (retires(t, tok)) {
			retire(t, tok);
		} else if (rt_edge_push(t->out, tok - 1)) {
			t->moved_out = true;
		} else {
			break; /* full output edge: not more */
		}
		edge_pop(t->in);
		t->moved_in = true;
		moved++;
	}
	/* More only if stopped at the budget with input it could handle. */
	return (struct sc_turn){moved, moved == budget && can_act(t)};
}

static size_t
toy_neighbours(struct sc_unit *self, uint32_t *out, size_t max)
{
	struct rt_toy *t = (struct rt_toy *)self;
	uint32_t ids[2];
	size_t n = 0;

	if (t->moved_in && t->in->producer != RT_HOST)
		ids[n++] = t->in->producer; /* it has room again */
	if (t->moved_out)
		ids[n++] = t->out->consumer; /* it has input */
	for (size_t i = 0; i < n && i < max; i++)
		out[i] = ids[i];
	return n;
}

static size_t
toy_peers(struct sc_unit *self, uint32_t *out, size_t max)
{
	struct rt_toy *t = (struct rt_toy *)self;
	uint32_t ids[2];
	size_t n = 0;

	if (t->in->producer != RT_HOST)
		ids[n++] = t->in->producer;
	if (t->out)
		ids[n++] = t->out->consumer;
	for (size_t i = 0; i < n && i < max; i++)
		out[i] = ids[i];
	return n;
}

static bool
toy_has_pending(const struct sc_unit *self)
{
	return can_act((const struct rt_toy *)self);
}

static const char *
toy_name(const struct sc_unit *self)
{
	return ((const struct rt_toy *)self)->name;
}

static void
toy_destroy(struct sc_unit *self)
{
	struct rt_toy *t = (struct rt_toy *)self;
	bool boom = t->net->faults[t->index].panic_in_destroy;
	char name[sizeof(t->name)];

	memcpy(name, t->name, sizeof(name));
	free(t);
	if (boom)
		sc_panic("%s: injected panic in destroy", name);
}

static const struct sc_unit_ops toy_ops = {
    .turn = toy_turn,
    .neighbours = toy_neighbours,
    .has_pending = toy_has_pending,
    .name = toy_name,
    .destroy = toy_destroy,
    .peers = toy_peers,
};

static void
net_free(struct rt_net *net)
{
	free(net->edges);
	free(net->ids);
	free(net->faults);
	free(net->turns);
	free(net->seen);
	free(net);
}

static struct rt_net *
net_alloc(uint32_t units, uint32_t cap, uint32_t tokens)
{
	struct rt_net *net = calloc(1, sizeof(*net));

	if (!net)
		return NULL;
	net->n = units;
	net->tokens = tokens;
	net->edges = calloc(units, sizeof(*net->edges));
	net->ids = calloc(units, sizeof(*net->ids));
	net->faults = calloc(units, sizeof(*net->faults));
	net->turns = calloc(units, sizeof(*net->turns));
	net->seen = calloc(tokens ? tokens : 1, sizeof(*net->seen));
	if (!net->edges || !net->ids || !net->faults || !net->turns ||
	    !net->seen) {
		net_free(net);
		return NULL;
	}
	for (uint32_t i = 0; i < units; i++)
		net->edges[i].cap = cap;
	return net;
}

/* Add toy i; ids are assigned in order, so edges can name them before. */
static int
net_add_toy(struct rt_net *net, struct sc_exec *ex, uint32_t i,
	    struct rt_edge *out)
{
	struct rt_toy *t = calloc(1, sizeof(*t));
	int rc;

	if (!t)
		return SC_ENOMEM;
	t->unit.ops = &toy_ops;
	(void)snprintf(t->name, sizeof(t->name), "%s%u",
		       net->ring ? "ring" : "chain", i);
	t->net = net;
	t->index = i;
	t->in = &net->edges[i];
	t->out = out;
	rc = sc_exec_add(ex, &t->unit, &net->ids[i]);
	if (rc)
		free(t);
	return rc;
}

static int
net_build(struct sc_exec *ex, struct rt_net *net, struct rt_net **out)
{
	struct sc_exec_info info;
	uint32_t first;
	int rc = 0;

	sc_exec_info(ex, &info);
	first = info.units;
	for (uint32_t i = 0; i < net->n; i++) {
		uint32_t next = (i + 1) % net->n;

		net->edges[i].consumer = first + i;
		net->edges[i].producer =
		    i == 0 ? (net->ring ? first + net->n - 1 : RT_HOST)
			   : first + i - 1;
		(void)next;
	}
	for (uint32_t i = 0; i < net->n && rc == 0; i++) {
		struct rt_edge *o = NULL;

		if (net->ring)
			o = &net->edges[(i + 1) % net->n];
		else if (i + 1 < net->n)
			o = &net->edges[i + 1];
		rc = net_add_toy(net, ex, i, o);
	}
	if (rc) {
		net_free(net); /* toys already added stay with ex */
		return rc;
	}
	*out = net;
	return 0;
}

int
rt_chain_create(struct sc_exec *ex, uint32_t units, uint32_t cap,
		uint32_t tokens, struct rt_net **out)
{
	struct rt_net *net;

	if (units == 0 || cap == 0 || cap > RT_EDGE_MAX || tokens > 0xffffffu)
		return SC_EINVAL;
	net = net_alloc(units, cap, tokens);
	if (!net)
		return SC_ENOMEM;
	return net_build(ex, net, out);
}

int
rt_ring_create(struct sc_exec *ex, uint32_t units, uint32_t cap,
	       uint32_t tokens, uint32_t max_hops, uint64_t seed,
	       struct rt_net **out)
{
	struct rt_net *net;
	uint64_t x = seed;

	if (units == 0 || cap == 0 || cap > RT_EDGE_MAX ||
	    (uint64_t)tokens >= (uint64_t)units * cap || max_hops >= 0xffff)
		return SC_EINVAL;
	net = net_alloc(units, cap, tokens);
	if (!net)
		return SC_ENOMEM;
	net->ring = true;
	for (uint32_t k = 0; k < tokens; k++) {
		uint32_t hops;

		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		hops = (uint32_t)((x >> 33) % (max_hops + 1));
		(void)rt_edge_push(&net->edges[k % units], TOK(k, hops));
	}
	return net_build(ex, net, out);
}

int
rt_net_start(struct rt_net *net, struct sc_exec *ex)
{
	for (uint32_t i = 0; net->ring && i < net->n; i++) {
		int rc = sc_exec_kick(ex, net->ids[i]);

		if (rc)
			return rc;
	}
	return 0;
}

/* Push up to k of the chain's remaining tokens; how many went in. */
static uint32_t
feed(struct rt_net *net, uint32_t k)
{
	uint32_t pushed = 0;

	while (pushed < k && net->fed < net->tokens &&
	       rt_edge_push(&net->edges[0], TOK(net->fed, CHAIN_HOPS))) {
		net->fed++;
		pushed++;
	}
	return pushed;
}

bool
rt_net_host_step(void *ctx, struct sc_exec *ex, uint64_t rnd)
{
	struct rt_net *net = ctx;

	if (net->ring)
		return false;
	if (feed(net, 1 + (uint32_t)(rnd % 4)) > 0)
		(void)sc_exec_kick(ex, net->ids[0]);
	return net->fed < net->tokens;
}

int
rt_net_feed_all(struct rt_net *net, struct sc_exec *ex)
{
	while (!net->ring && net->fed < net->tokens) {
		if (feed(net, net->tokens) > 0) {
			int rc = sc_exec_kick(ex, net->ids[0]);

			if (rc)
				return rc;
		} else {
			sched_yield(); /* the edge is full: let u0 drain */
		}
	}
	return 0;
}

bool
rt_net_check(const struct rt_net *net, char *why, size_t len)
{
	for (uint32_t i = 0; i < net->tokens; i++) {
		uint32_t s = atomic_load(&net->seen[i]);

		if (s != 1) {
			(void)snprintf(why, len,
				       "token %u of %u arrived %u times", i,
				       net->tokens, s);
			return false;
		}
	}
	return true;
}

bool
rt_net_check_conserved(const struct rt_net *net, char *why, size_t len)
{
	uint64_t in_edges = 0, retired = 0;

	for (uint32_t i = 0; i < net->tokens; i++) {
		uint32_t s = atomic_load(&net->seen[i]);

		if (s > 1) {
			(void)snprintf(why, len, "token %u retired %u times", i,
				       s);
			return false;
		}
		retired += s;
	}
	for (uint32_t i = 0; i < net->n; i++)
		in_edges += rt_edge_len(&net->edges[i]);
	if (retired + in_edges +
		(net->ring ? 0 : (uint64_t)(net->tokens - net->fed)) !=
	    net->tokens) {
		(void)snprintf(why, len,
			       "%llu retired + %llu in edges, of %u tokens",
			       (unsigned long long)retired,
			       (unsigned long long)in_edges, net->tokens);
		return false;
	}
	return true;
}

uint64_t
rt_net_retired(const struct rt_net *net)
{
	return atomic_load(&net->retired);
}

uint32_t
rt_net_id(const struct rt_net *net, uint32_t i)
{
	return net->ids[i];
}

struct rt_toy_faults *
rt_net_faults(struct rt_net *net, uint32_t i)
{
	return &net->faults[i];
}

uint64_t
rt_net_turns(const struct rt_net *net, uint32_t i)
{
	return atomic_load(&net->turns[i]);
}

struct rt_edge *
rt_net_edge_in(struct rt_net *net, uint32_t i)
{
	return &net->edges[i];
}

void
rt_net_set_cap(struct rt_net *net, uint32_t i, uint32_t cap)
{
	net->edges[i].cap = cap;
}

void
rt_net_destroy(struct rt_net *net)
{
	if (net)
		net_free(net);
}

/* --- the probe -------------------------------------------------------------
 */

static struct sc_turn
probe_turn(struct sc_unit *self, uint32_t budget)
{
	struct rt_probe *p = (struct rt_probe *)self;

	atomic_fetch_add(&p->turns, 1);
	if (p->on_turn)
		p->on_turn(p, p->ctx);
	return p->result;
}

static size_t
probe_neighbours(struct sc_unit *self, uint32_t *out, size_t max)
{
	struct rt_probe *p = (struct rt_probe *)self;

	for (size_t i = 0; i < p->n_nbrs && i < max; i++)
		out[i] = p->nbrs[i];
	return p->claim_nbrs ? p->claim_nbrs : p->n_nbrs;
}

static size_t
probe_peers(struct sc_unit *self, uint32_t *out, size_t max)
{
	struct rt_probe *p = (struct rt_probe *)self;

	for (size_t i = 0; i < p->n_peers && i < max; i++)
		out[i] = p->peers[i];
	return p->n_peers;
}

static bool
probe_has_pending(const struct sc_unit *self)
{
	return atomic_load(&((const struct rt_probe *)self)->pending);
}

static const char *
probe_name(const struct sc_unit *self)
{
	return ((const struct rt_probe *)self)->name;
}

static void
probe_destroy(struct sc_unit *self)
{
	struct rt_probe *p = (struct rt_probe *)self;

	if (p->destroyed)
		atomic_fetch_add(p->destroyed, 1);
	free(p);
}

static const struct sc_unit_ops probe_ops = {
    .turn = probe_turn,
    .neighbours = probe_neighbours,
    .has_pending = probe_has_pending,
    .name = probe_name,
    .destroy = probe_destroy,
    .peers = probe_peers,
};

struct rt_probe *
rt_probe_add(struct sc_exec *ex, uint32_t *id)
{
	struct rt_probe *p = calloc(1, sizeof(*p));
	struct sc_exec_info info;

	if (!p)
		return NULL;
	p->unit.ops = &probe_ops;
	sc_exec_info(ex, &info);
	(void)snprintf(p->name, sizeof(p->name), "probe%u", info.units);
	if (sc_exec_add(ex, &p->unit, id) != 0) {
		free(p);
		return NULL;
	}
	return p;
}

/*
 * tick.c - tick mode, the host's side and the unit's (the design is
 * units/tick_int.h's): tick t of the runtime is step t of the single
 * circuit; the host closes a tick with a marker on every host edge and
 * raises the horizon; a unit gathers a tick up to every input's marker,
 * steps it once and announces it on its outputs.
 */
#include "units/tick_int.h"

#include <stdatomic.h>
#include <stdint.h>

#include "operators/base.h"
#include "runtime/panic.h"
#include "runtime/watchdog.h"
#include "units/edge.h"
#include "units/runtime.h"
#include "units/runtime_int.h"
#include "units/subcircuit_int.h"

/* --- the host's side (runtime.h, Host ticks) ------------------------------ */

/* The ticks the host has closed (units/subcircuit.h, Ahead ports), for
 * the units' turns. */
uint64_t
sc__rt_horizon(const void *ctx)
{
	const struct sc_runtime *rt = ctx;

	return atomic_load_explicit(&rt->horizon, memory_order_acquire);
}

/* A rebuilt unit would not know its tick, so tick mode refuses restarts
 * (the cycles of units it cannot run are sc_analysis_init_mode's). */
int
sc__rt_tick_check(struct sc_runtime *rt)
{
	if (rt->o.ticks && rt->restarts)
		return sc__fail(SC_EINVAL, "sc_runtime_create: restart "
					   "policies are not supported in "
					   "tick mode");
	return 0;
}

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

	sc__rt_hold_inputs(rt);
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
	sc__rt_release_inputs(rt);
	return rc;
}

/* One try at a close, for sc__rt_wait_room. */
static int
tick_once(struct sc_runtime *rt, void *closed)
{
	return tick_try(rt, closed);
}

int
sc__rt_tick_close(struct sc_runtime *rt, uint64_t deadline, uint64_t *closed)
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
			rc = sc__rt_wait_room(rt, tick_once, closed, deadline);
			if (rc != SC_EFULL)
				return rc;
			continue;
		}
		if (sc__rt_host_progress(rt)) {
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
	return sc__rt_tick_close(rt, deadline, closed);
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
			sc__rt_edge_name(rt, &rt->edges[i], out->edge,
					 sizeof(out->edge));
			return true;
		}
	return false;
}

/* --- the unit's side (subcircuit.h, Tick mode) --------------------------- */

/* The tick the step running on this thread belongs to (tick mode), for
 * delta callbacks (sc_subcircuit_tick_now); UINT64_MAX outside one. */
static _Thread_local uint64_t tick_now = UINT64_MAX;

/* Every input's frontier has passed `cur`: tick cur's frames are all in. */
static bool
tick_complete(const struct sc_subcircuit *s)
{
	if (s->horizon && s->cur >= s->horizon(s->horizon_ctx))
		return false;
	for (size_t i = 0; i < s->nin; i++)
		if (s->in[i].front <= s->cur)
			return false;
	return s->nin > 0;
}

static uint64_t
min_front(const struct sc_subcircuit *s)
{
	uint64_t m = s->horizon ? s->horizon(s->horizon_ctx) : UINT64_MAX;

	for (size_t i = 0; i < s->nin; i++)
		if (s->in[i].front < m)
			m = s->in[i].front;
	return m;
}

/* Whether an input still to be read for tick cur holds frames. */
static bool
tick_left(const struct sc_subcircuit *s)
{
	for (size_t i = 0; i < s->nin; i++)
		if (s->in[i].front <= s->cur && sc_edge_pending(s->in[i].edge))
			return true;
	return false;
}

/* Announce `cur` on every output edge (a marker: every tick below it is
 * sent); whether one is behind (its outbox or ring full: the next tick
 * waits, so an outbox never holds more than one tick). */
static bool
advance_outputs(struct sc_subcircuit *s)
{
	bool behind = false;

	for (size_t i = 0; i < s->nout; i++)
		for (uint32_t j = 0; j < s->out[i].x.nedges; j++) {
			int rc =
			    sc_edge_advance(s->out[i].x.edges[j],
					    s->cur + (s->out[i].ahead ? 1 : 0));

			if (rc == SC_EFULL)
				behind = true;
			else if (rc && rc != SC_EDEAD)
				sc_panic("unit %s: advancing stream %d: %s: "
					 "%s",
					 s->name, s->out[i].stream,
					 sc_errname(rc), sc_errdetail());
		}
	return behind;
}

/* Step tick cur and send its outputs (stamped cur by their edges). */
static void
tick_step(struct sc_subcircuit *s)
{
	int rc;

	sc__sub_raise_waterlines(s);
	tick_now = s->cur;
	rc = sc_circuit_step(s->circuit);
	tick_now = UINT64_MAX;
	if (rc)
		sc_panic("unit %s: step of tick %llu failed: %s: %s", s->name,
			 (unsigned long long)s->cur, sc_errname(rc),
			 sc_errdetail());
	sc__sub_send_outputs(s);
}

/* Take one frame of tick cur, round-robin over the inputs not complete
 * yet: a data frame is fed, a marker moves that input's frontier (and
 * ends its part of tick cur). Whether a frame came. */
static bool
tick_poll(struct sc_subcircuit *s)
{
	for (size_t k = 0; k < s->nin; k++) {
		struct sub_in *p = &s->in[s->rr];
		struct sc_batch *b = NULL;
		uint64_t st = 0;
		size_t n = 0;

		bool ended;

		s->rr = (s->rr + 1) % s->nin;
		if (p->front > s->cur)
			continue;
		/* Ended before the poll: an empty ring then holds nothing
		 * the dead producer sent (subcircuit.h, Deaths). */
		ended = sc_edge_is_ended(p->edge);
		if (sc_edge_poll_stamped(p->edge, 1, &b, &st, &n) != 0 ||
		    n == 0) {
			if (!ended)
				continue;
			p->front = UINT64_MAX;
			return true;
		}
		if (!b) {
			if (st > p->front)
				p->front = st;
			return true;
		}
		/* Between the markers front and the next, frames are of
		 * tick front == cur (edge.h, "Tick edges"). */
		if (st != s->cur)
			sc_panic("unit %s: a frame of tick %llu while "
				 "gathering tick %llu",
				 s->name, (unsigned long long)st,
				 (unsigned long long)s->cur);
		sc__fig_bump(&s->fig->frames_in, 1);
		s->turn_rows_in += sc_batch_count(b);
		s->fed = true;
		sc__sub_feed_frame(s, p->edge, p->stream, b);
		return true;
	}
	return false;
}

/*
 * Publish what tick cur waits on for a watchdog (sc__unit_wait_read): the
 * first input whose frontier has not passed it, or none. The tick is
 * written last, so a reader that sees it unchanged around its reads has
 * an edge of that tick's wait (or, racing with the next turn, of a later
 * one: a wait that held a moment ago either way); a turn pays three
 * stores.
 */
static void
tick_publish(struct sc_subcircuit *s)
{
	struct sc_edge *e = NULL;
	uint64_t front = 0;

	for (size_t i = 0; i < s->nin && !e; i++)
		if (s->in[i].front <= s->cur) {
			e = s->in[i].edge;
			front = s->in[i].front;
		}
	atomic_store_explicit(&s->fig->wait_front, front, memory_order_relaxed);
	atomic_store_explicit(&s->fig->wait_edge, e, memory_order_relaxed);
	atomic_store_explicit(&s->fig->wait_tick, s->cur, memory_order_release);
}

/*
 * The work of a tick-mode turn (subcircuit.h, "Tick mode"): catch up on
 * the announcements a full edge refused, then, up to `budget` frames and
 * steps, step every complete tick and read frames of the tick being
 * gathered. Returns the work done; *more when the budget ran out with a
 * complete tick or frames of tick cur left.
 */
static uint32_t
tick_work(struct sc_subcircuit *s, uint32_t budget, bool *more)
{
	uint32_t work = 0;
	bool behind = false;

	while (work < budget) {
		if (!tick_complete(s)) {
			if (!tick_poll(s))
				break;
			work++;
			continue;
		}
		work++;
		/* An empty tick of a quiet part gives nothing: skip it, and
		 * announce later, so a range of them is one marker. */
		if (s->quiet && !s->fed) {
			s->cur = min_front(s);
			continue;
		}
		/* Tick cur's outputs must be stamped cur: every earlier
		 * tick announced first. */
		if ((behind = advance_outputs(s)))
			break;
		tick_step(s);
		/* After a quiet part's step, the ticks up to its inputs'
		 * frontier are empty too. */
		s->cur = s->quiet ? min_front(s) : s->cur + 1;
		s->fed = false;
	}
	if (!behind)
		behind = advance_outputs(s);
	*more = work >= budget && !behind && (tick_complete(s) || tick_left(s));
	tick_publish(s);
	return work;
}

/* The tick turn (see tick_int.h): the flush and the tally of every turn
 * (subcircuit_int.h) around tick_work. It never gates its inputs: a full
 * output edge holds the next step back instead (advance_outputs). */
struct sc_turn
sc__sub_tick_turn(struct sc_unit *self, uint32_t budget)
{
	struct sc_subcircuit *s = (struct sc_subcircuit *)self;
	struct sc__sub_clock c;
	uint32_t work;
	bool more;

	(void)sc__sub_turn_flush(s, &c);
	work = tick_work(s, budget, &more);
	return sc__sub_turn_tally(s, &c, work, false, more);
}

/* Tick mode: every input must be a tick edge; a part holding no
 * per-tick node is quiet. */
int
sc__sub_tick_init(struct sc_subcircuit *s, const struct sc_subcircuit_desc *d)
{
	s->ticks = d->ticks;
	s->horizon = d->horizon;
	s->horizon_ctx = d->horizon_ctx;
	s->quiet = true;
	if (!d->ticks)
		return 0;
	if (d->restore)
		return sc__fail(SC_EINVAL,
				"sc_subcircuit_create: '%s': a "
				"rebuild in tick mode",
				s->name);
	for (size_t i = 0; i < s->nin; i++)
		if (!sc_edge_is_ticked(s->in[i].edge))
			return sc__fail(SC_EINVAL,
					"sc_subcircuit_create: '%s': input "
					"%zu is not a tick edge",
					s->name, i);
	for (size_t i = 0; i < s->nout; i++)
		for (uint32_t j = 0; j < s->out[i].x.nedges; j++)
			if (!sc_edge_is_ticked(s->out[i].x.edges[j]))
				return sc__fail(SC_EINVAL,
						"sc_subcircuit_create: '%s': "
						"output stream %d: not a tick "
						"edge",
						s->name, s->out[i].stream);
	/* Tick 0 of a delay is empty: say so now, before any turn, as no
	 * one kicks this unit before its inputs move, and in a loop they
	 * move only once its consumers have this (subcircuit.h, "Ahead
	 * ports"). The rings are empty: the marker fits. */
	for (size_t i = 0; i < s->nout; i++)
		for (uint32_t j = 0; s->out[i].ahead && j < s->out[i].x.nedges;
		     j++)
			if (sc_edge_advance(s->out[i].x.edges[j], 1) ==
			    SC_EINVAL)
				return SC_EINVAL;
	tick_publish(s); /* before its first turn, it waits for tick 0 */
	for (size_t i = 0; i < d->nnodes; i++) {
		struct sc_node_info ni;
		int rc = sc_graph_node_info(d->graph, d->nodes[i], &ni);

		if (rc)
			return rc;
		if (ni.kind == SC_NODE_INTEGRATE ||
		    ni.kind == SC_NODE_DIFFERENTIATE ||
		    ni.kind == SC_NODE_DELAY)
			s->quiet = false;
	}
	return 0;
}

uint64_t
sc_subcircuit_tick_now(void)
{
	return tick_now;
}

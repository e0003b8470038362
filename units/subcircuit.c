/*
 * subcircuit.c - the turn of a sub-circuit unit (see subcircuit.h).
 */
#include "units/subcircuit.h"
#include "units/subcircuit_int.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "operators/base.h"
#include "operators/base_int.h"
#include "runtime/panic.h"
#include "runtime/timeline.h"
#include "units/edge_int.h"
#include "units/exchange.h"
#include "units/tick_int.h"

/* One turn in this many is timed for busy_ns when no timeline records. */
#define BUSY_SAMPLE 32

static struct sc_subcircuit *
from_unit(struct sc_unit *u)
{
	return (struct sc_subcircuit *)u; /* unit is the first member */
}

/* Enter (on) or leave a turn. The executor hands a unit to one thread at
 * a time (its claim is the token), so a turn never overlaps another of
 * the same unit: checked where SC_ASSERT is on, free elsewhere. */
static inline void
turn_mark(struct sc_subcircuit *s, bool on)
{
	if (SC_ASSERTS_ON) {
		bool was = atomic_exchange_explicit(&s->turning, on,
						    memory_order_relaxed);

		SC_ASSERT(was != on);
		(void)was;
	}
}

/* --- the turn ----------------------------------------------------------------
 */

/* Whether a gating output is backpressured (its input then waits). */
static bool
gated_now(const struct sc_subcircuit *s)
{
	for (size_t i = 0; i < s->nout; i++)
		if (s->out[i].gating && sc_exchange_backpressured(&s->out[i].x))
			return true;
	return false;
}

/* Flush every outbox that has room; then whether a gating edge is still
 * backpressured. */
static bool
flush_outboxes(struct sc_subcircuit *s)
{
	for (size_t i = 0; i < s->nout; i++)
		sc_exchange_flush(&s->out[i].x);
	return gated_now(s);
}

static bool
readable(const struct sub_in *p, bool blocked)
{
	return !(blocked && p->gated);
}

/* The feed of a frame polled from e (NULL: the host's), handing the
 * edge's holds on its ids to the circuit where it takes them (*taken). */
static int
feed_held(struct sc_subcircuit *s, struct sc_edge *e, int stream,
	  struct sc_batch *b, bool *taken)
{
	if (!e)
		return sc_circuit_feed(s->circuit, stream, b);
	return sc__circuit_feed_held(s->circuit, stream, b, sc__edge_symbols(e),
				     taken);
}

/* The frame leaves the consumer: with the edge's holds, unless the
 * circuit took them. */
static void
frame_let_go(struct sc_edge *e, struct sc_batch *b, bool taken)
{
	if (taken)
		sc_batch_release(b);
	else
		sc__edge_frame_done(e, b);
}

/* Feed one frame (owned) polled from edge e to the circuit; panics on a
 * feed error. The edge's holds on its ids pass to the circuit, or go only
 * after the feed took the circuit's own (edge_int.h). */
void
sc__sub_feed_frame(struct sc_subcircuit *s, struct sc_edge *e, int stream,
		   struct sc_batch *b)
{
	bool taken = false;
	int rc = feed_held(s, e, stream, b, &taken);

	frame_let_go(e, b, taken);
	if (rc)
		sc_panic("unit %s: feed of stream %d failed: %s: %s", s->name,
			 stream, sc_errname(rc), sc_errdetail());
}

/* A coalescing step and its sends, then the steps that emit what a node
 * carried past int64 (circuit.h, sc_circuit_carried), each sent too. */
static void
step_send(struct sc_subcircuit *s)
{
	do {
		int rc = sc_circuit_step(s->circuit);

		if (rc)
			sc_panic("unit %s: step failed: %s: %s", s->name,
				 sc_errname(rc), sc_errdetail());
		sc__sub_send_outputs(s);
	} while (sc_circuit_carried(s->circuit));
}

/* sc__sub_feed_frame for a frame of a coalescing turn. A frame whose sum
 * with the frames held would leave int64 is refused by the feed
 * (circuit.h): the turn chose which frames share a step, so it steps what
 * it holds and sends that first, and the frame starts the next step (the
 * grouping must never decide an error). */
static void
feed_turn_frame(struct sc_subcircuit *s, struct sc_edge *e, int stream,
		struct sc_batch *b)
{
	bool taken = false;
	int rc = feed_held(s, e, stream, b, &taken);

	if (rc == SC_EOVERFLOW) {
		step_send(s);
		rc = feed_held(s, e, stream, b, &taken);
	}
	frame_let_go(e, b, taken);
	if (rc)
		sc_panic("unit %s: feed of stream %d failed: %s: %s", s->name,
			 stream, sc_errname(rc), sc_errdetail());
}

/* Poll at most budget frames round-robin over the readable input edges. */
static uint32_t
poll_inputs(struct sc_subcircuit *s, uint32_t budget, bool blocked)
{
	uint32_t polled = 0;
	size_t idle = 0; /* edges in a row that gave nothing */

	while (polled < budget && idle < s->nin) {
		struct sub_in *p = &s->in[s->rr];
		struct sc_batch *b = NULL;
		size_t n = 0;

		s->rr = (s->rr + 1) % s->nin;
		if (!readable(p, blocked) ||
		    sc_edge_poll(p->edge, 1, &b, &n) != 0 || n == 0) {
			idle++;
			continue;
		}
		idle = 0;
		polled++;
		s->turn_rows_in += sc_batch_count(b);
		feed_turn_frame(s, p->edge, p->stream, b);
	}
	return polled;
}

/* --- waterlines (subcircuit.h, "Waterlines") -------------------------------
 */

/* Each boundary output's waterlines after the last step, published on
 * every edge of its exchange. An edge whose outbox holds rows refuses
 * (edge.h): the next turn's flush is followed by another try. An ahead
 * port's stream is a delay's, which carries none. */
static void
publish_waterlines(struct sc_subcircuit *s)
{
	if (!s->wl_out)
		return;
	for (size_t i = 0; i < s->nout; i++) {
		const struct sub_out *o = &s->out[i];
		int64_t v[SC_EDGE_WL_COLS];
		uint32_t mask = 0;

		if (o->ahead ||
		    sc_circuit_waterlines(s->circuit, o->stream, &mask, v) !=
			0 ||
		    !mask)
			continue;
		for (uint32_t j = 0; j < o->x.nedges; j++)
			(void)sc_edge_set_waterline(o->x.edges[j], mask, v);
	}
}

/* The min over every edge into `stream` of their due waterlines, on the
 * columns all of them have, raised in the circuit. A stream fed by
 * several edges (the replicas of a sharded producer) is bounded only by
 * what bounds each of them. */
static void
raise_stream(struct sc_subcircuit *s, int stream)
{
	int64_t v[SC_EDGE_WL_COLS];
	uint32_t mask = 0;
	bool seen = false;

	for (size_t i = 0; i < s->nin; i++) {
		const struct sub_in *p = &s->in[i];

		if (p->stream != stream)
			continue;
		if (!seen)
			memcpy(v, p->wl.value, sizeof(v));
		mask = seen ? mask & p->wl.mask : p->wl.mask;
		seen = true;
		for (uint32_t c = 0; c < SC_EDGE_WL_COLS; c++)
			if (mask >> c & 1 && p->wl.value[c] < v[c])
				v[c] = p->wl.value[c];
	}
	for (uint32_t c = 0; c < SC_EDGE_WL_COLS; c++)
		if (mask >> c & 1)
			(void)sc_circuit_set_waterline(s->circuit, stream, c,
						       v[c]);
}

/* Before a step: take every edge's due waterline (its frames before it
 * are all fed by now), then raise each boundary input's. Host edges feed
 * input nodes, whose waterlines come from their rows. */
void
sc__sub_raise_waterlines(struct sc_subcircuit *s)
{
	bool any = false;

	if (!s->wl_in)
		return;
	for (size_t i = 0; i < s->nin; i++) {
		struct sub_in *p = &s->in[i];

		if (p->peer != SC_SUBCIRCUIT_HOST &&
		    sc_edge_waterline_due(p->edge, &p->wl))
			any = true;
	}
	for (size_t i = 0; i < s->nin && any; i++) {
		bool first = s->in[i].peer != SC_SUBCIRCUIT_HOST;

		for (size_t j = 0; j < i && first; j++)
			first = s->in[j].stream != s->in[i].stream;
		if (first)
			raise_stream(s, s->in[i].stream);
	}
}

/* Whether the circuit's boundary carries any waterline column, each
 * way: the turns skip the waterline work when it does not. */
static void
wl_init(struct sc_subcircuit *s)
{
	const struct sc_cut *cut = sc_circuit_cut(s->circuit);

	for (size_t i = 0; cut && cut->in_wl && i < cut->nin; i++)
		s->wl_in = s->wl_in || cut->in_wl[i];
	for (size_t i = 0; cut && cut->out_wl && i < cut->nout; i++)
		s->wl_out = s->wl_out || cut->out_wl[i];
}

/* Send every boundary output's delta through its exchange (to the ring,
 * or the outbox of a full edge); panics on a hard error. */
void
sc__sub_send_outputs(struct sc_subcircuit *s)
{
	sc__doing_node(-1, SC__ACT_OUTPUT);
	for (size_t i = 0; i < s->nout; i++) {
		struct sub_out *o = &s->out[i];
		struct sc_batch *d = NULL;
		/* An ahead port sends tick cur + 1 of the delay: its input's
		 * delta of tick cur (subcircuit.h, "Ahead ports"). */
		int rc = sc_circuit_delta(
		    s->circuit, o->ahead ? o->ahead_from : o->stream, &d);

		if (rc)
			sc_panic("unit %s: delta of stream %d: %s: %s", s->name,
				 o->stream, sc_errname(rc), sc_errdetail());
		if (sc_batch_count(d) == 0) {
			sc_batch_release(d);
			continue;
		}
		sc__fig_bump(&s->fig->frames_out, 1);
		s->turn_rows_out += sc_batch_count(d);
		/* EDEAD: the share was counted undeliverable. */
		rc = sc_exchange_send(&o->x, d, NULL);
		if (rc && rc != SC_EDEAD)
			sc_panic("unit %s: sending stream %d: %s: %s", s->name,
				 o->stream, sc_errname(rc), sc_errdetail());
	}
	publish_waterlines(s);
}

static void
add_nbr(struct sc_subcircuit *s, uint32_t id)
{
	for (size_t i = 0; i < s->n_nbrs; i++)
		if (s->nbrs[i] == id)
			return;
	SC_ASSERT(s->n_nbrs < s->cap_nbrs); /* cap_nbrs counts every peer */
	s->nbrs[s->n_nbrs++] = id;
}

/* Frames moved on every end since the last look; neighbours of those. */
static uint64_t
tally(struct sc_subcircuit *s, bool *host_popped)
{
	uint64_t progress = 0;

	s->n_nbrs = 0;
	for (size_t i = 0; i < s->nin; i++) {
		struct sub_in *p = &s->in[i];
		uint64_t m = sc_edge_moved(p->edge, SC_EDGE_CONSUMER, &p->mark);

		if (!m)
			continue;
		progress += m;
		if (p->peer == SC_SUBCIRCUIT_HOST)
			*host_popped = true;
		else
			add_nbr(s, p->peer);
	}
	for (size_t i = 0; i < s->nout; i++) {
		struct sub_out *o = &s->out[i];

		for (uint32_t j = 0; j < o->x.nedges; j++) {
			uint64_t m = sc_edge_moved(
			    o->x.edges[j], SC_EDGE_PRODUCER, &o->marks[j]);

			progress += m;
			if (m)
				add_nbr(s, o->peers[j]);
		}
	}
	return progress;
}

static bool
input_left(const struct sc_subcircuit *s, bool blocked)
{
	for (size_t i = 0; i < s->nin; i++)
		if (readable(&s->in[i], blocked) &&
		    sc_edge_pending(s->in[i].edge) > 0)
			return true;
	return false;
}

/*
 * A rebuild's first turn (subcircuit.h, "A rebuild"): feed the inputs'
 * integrals, step once, and send every out edge its correction. Each
 * integral leaves s->restore before it is fed, so a panic half-way leaves
 * destroy only what is left to release.
 */
static void
rebuild(struct sc_subcircuit *s)
{
	int rc;

	for (size_t i = 0; i < s->nin; i++) {
		struct sc_batch *b = s->restore[i];

		s->restore[i] = NULL;
		/* An integral, held by no edge (NULL). */
		if (b)
			sc__sub_feed_frame(s, NULL, s->in[i].stream, b);
	}
	free(s->restore);
	s->restore = NULL;
	/* The inputs' waterlines as they stand (sc_edge_reopen left each
	 * edge's newest publication due): the integrals just fed are what
	 * they were published after. */
	sc__sub_raise_waterlines(s);
	if ((rc = sc_circuit_step(s->circuit)) != 0)
		sc_panic("unit %s: rebuild step failed: %s: %s", s->name,
			 sc_errname(rc), sc_errdetail());
	for (size_t i = 0; i < s->nout; i++) {
		struct sc_batch *d = NULL;

		rc = sc_circuit_delta(s->circuit, s->out[i].stream, &d);
		if (!rc)
			rc = sc_exchange_correct(&s->out[i].x, d);
		sc_batch_release(d);
		if (rc && rc != SC_EDEAD)
			sc_panic("unit %s: rebuild of stream %d: %s: %s",
				 s->name, s->out[i].stream, sc_errname(rc),
				 sc_errdetail());
	}
	/* What a node carried past int64 goes out as plain deltas: the
	 * corrections and they sum to the target (circuit.h). */
	if (sc_circuit_carried(s->circuit))
		step_send(s);
}

bool
sc__sub_turn_flush(struct sc_subcircuit *s, struct sc__sub_clock *c)
{
	bool blocked;

	/* Busy time: every turn's while a timeline records, else one turn
	 * in BUSY_SAMPLE's, counted BUSY_SAMPLE times (two clock reads a
	 * turn would cost a few percent of a short turn). */
	c->traced = sc_timeline_on(s->tl);
	c->timed = c->traced ||
		   (atomic_load_explicit(&s->fig->turns, memory_order_relaxed) %
		    BUSY_SAMPLE) == 0;
	c->t0 = c->timed ? sc_clock_ns() : sc_clock_coarse_ns();
	/* A long traced turn says how much of it was CPU on its thread, so
	 * that a reader tells work from a worker the kernel took away. */
	c->cpu0 = c->traced ? sc__clock_thread_ns() : 0;
	/* What the turn does, for a watchdog and the trace: its own output
	 * first (the flush); its phases are timed only while traced. */
	sc__doing_begin(&s->fig->doing, sc__doing_word(-1, SC__ACT_OUTPUT),
			c->traced, c->t0);
	turn_mark(s, true);
	s->turn_rows_in = s->turn_rows_out = 0;
	if (s->restore)
		rebuild(s);
	blocked = flush_outboxes(s);
	publish_waterlines(s);		  /* what a full outbox held back */
	sc__doing_node(-1, SC__ACT_STEP); /* reading its inputs */
	return blocked;
}

/* The turn's slice on the timeline: `polled` work items in, and the
 * frames pushed (what moved beyond the frames popped) out. */
static void
record_slice(struct sc_subcircuit *s, const struct sc__sub_clock *c,
	     uint64_t t1, uint32_t polled, uint64_t progress)
{
	uint64_t pushed = progress > polled ? progress - polled : 0;
	const struct sc__doing *d = &s->fig->doing;
	struct sc_timeline_slice sl = {
	    .start_ns = c->t0,
	    .end_ns = t1,
	    .unit = s->tl_id,
	    .frames_in = polled,
	    .frames_out = pushed > UINT32_MAX ? UINT32_MAX : (uint32_t)pushed,
	    .rows_in = s->turn_rows_in,
	    .rows_out = s->turn_rows_out};

	/* A long turn says what took its time; a short one says nothing,
	 * which keeps the trace the size it was. */
	if (t1 - c->t0 >= SC_SUBCIRCUIT_LONG_TURN_NS && d->long_word) {
		sl.doing = sc__doing_act_name(sc__doing_word_act(d->long_word));
		sl.op = sc__doing_word_node(d->long_word);
		sl.op_ns = d->long_ns;
		sl.cpu_ns = sc__clock_thread_ns() - c->cpu0;
	}
	sc_timeline_slice(s->tl, &sl);
}

/* Keep the turn that ended at t1 if it is the unit's longest so far, with
 * its longest phase when the phases were timed (traced). */
static void
note_longest(struct sc_subcircuit *s, const struct sc__sub_clock *c,
	     uint64_t t1)
{
	struct sc__unit_figures *f = s->fig;
	uint64_t dur = t1 > c->t0 ? t1 - c->t0 : 0;

	if (dur <= atomic_load_explicit(&f->longest_ns, memory_order_relaxed))
		return;
	atomic_store_explicit(&f->longest_ns, dur, memory_order_relaxed);
	atomic_store_explicit(&f->longest_word,
			      c->traced ? f->doing.long_word : 0,
			      memory_order_relaxed);
	atomic_store_explicit(&f->longest_phase_ns,
			      c->traced ? f->doing.long_ns : 0,
			      memory_order_relaxed);
}

struct sc_turn
sc__sub_turn_tally(struct sc_subcircuit *s, const struct sc__sub_clock *c,
		   uint32_t polled, bool blocked, bool more)
{
	struct sc_turn t = {0, more};
	bool host_popped = false;
	uint64_t progress, t1;

	atomic_store_explicit(&s->blocked, blocked, memory_order_relaxed);
	progress = tally(s, &host_popped);
	t.progress = progress > UINT32_MAX ? UINT32_MAX : (uint32_t)progress;
	sc__fig_bump(&s->fig->turns, 1);
	sc__fig_bump(&s->fig->rows_in, s->turn_rows_in);
	sc__fig_bump(&s->fig->rows_out, s->turn_rows_out);
	sc__doing_end(&s->fig->doing);
	t1 = c->timed ? sc_clock_ns() : sc_clock_coarse_ns();
	if (c->timed)
		sc__fig_bump(&s->fig->busy_ns,
			     (t1 - c->t0) *
				 (c->traced ? 1 : (uint64_t)BUSY_SAMPLE));
	note_longest(s, c, t1);
	if (c->traced)
		record_slice(s, c, t1, polled, progress);
	turn_mark(s, false);
	if (host_popped && s->host_popped)
		s->host_popped(s->host_ctx);
	return t;
}

/*
 * The coalescing turn: the numbered steps of subcircuit.h's "A turn".
 * Its budget counts the frames it polls (unit.h); the one step it takes
 * for all of them is not counted.
 */
static struct sc_turn
coalescing_turn(struct sc_unit *self, uint32_t budget)
{
	struct sc_subcircuit *s = from_unit(self);
	struct sc__sub_clock c;
	uint32_t polled;
	bool blocked = sc__sub_turn_flush(s, &c); /* 1 */

	polled = poll_inputs(s, budget, blocked); /* 2 */
	if (polled) {				  /* 3 */
		sc__sub_raise_waterlines(s);
		step_send(s);
		/* The sends may have pushed a gating outbox past its bound:
		 * then the rest of the gated input waits for the consumer's
		 * kick, and is not `more`. */
		blocked = gated_now(s);
	}
	sc__fig_bump(&s->fig->frames_in, polled);
	return sc__sub_turn_tally(s, &c, polled, blocked, /* 4 */
				  polled == budget && input_left(s, blocked));
}

static size_t
sub_neighbours(struct sc_unit *self, uint32_t *out, size_t max)
{
	struct sc_subcircuit *s = from_unit(self);

	for (size_t i = 0; i < s->n_nbrs && i < max; i++)
		out[i] = s->nbrs[i];
	return s->n_nbrs;
}

static size_t
sub_peers(struct sc_unit *self, uint32_t *out, size_t max)
{
	struct sc_subcircuit *s = from_unit(self);

	for (size_t i = 0; i < s->n_peers && i < max; i++)
		out[i] = s->peers[i];
	return s->n_peers;
}

static bool
sub_has_pending(const struct sc_unit *self)
{
	const struct sc_subcircuit *s = (const struct sc_subcircuit *)self;
	bool blocked = atomic_load_explicit(&s->blocked, memory_order_relaxed);

	/* Tick mode: the frontiers are the owner's, so a watchdog reads
	 * only whether frames wait at all. */
	return s->ticks ? input_left(s, false) : input_left(s, blocked);
}

static const char *
sub_name(const struct sc_unit *self)
{
	return ((const struct sc_subcircuit *)self)->name;
}

static void
sub_destroy(struct sc_unit *self)
{
	sc_subcircuit_destroy(from_unit(self));
}

/* A unit turns in one mode for its life: the turn is chosen at create. */
static const struct sc_unit_ops sub_ops = {
    .turn = coalescing_turn,
    .neighbours = sub_neighbours,
    .has_pending = sub_has_pending,
    .name = sub_name,
    .destroy = sub_destroy,
    .peers = sub_peers,
};

static const struct sc_unit_ops sub_tick_ops = {
    .turn = sc__sub_tick_turn,
    .neighbours = sub_neighbours,
    .has_pending = sub_has_pending,
    .name = sub_name,
    .destroy = sub_destroy,
    .peers = sub_peers,
};

/* --- life -------------------------------------------------------------------
 */

static void
free_restore(struct sc_subcircuit *s)
{
	for (size_t i = 0; s->restore && i < s->nin; i++)
		sc_batch_release(s->restore[i]);
	free(s->restore);
	s->restore = NULL;
}

static void
free_ports(struct sc_subcircuit *s)
{
	for (size_t i = 0; s->out && i < s->nout; i++) {
		sc_exchange_fini(&s->out[i].x);
		free(s->out[i].peers);
		free(s->out[i].marks);
	}
	free(s->out);
	free(s->in);
	free(s->nbrs);
	free(s->peers);
}

static void
add_peer(struct sc_subcircuit *s, uint32_t id)
{
	if (id == SC_SUBCIRCUIT_HOST)
		return;
	for (size_t i = 0; i < s->n_peers; i++)
		if (s->peers[i] == id)
			return;
	SC_ASSERT(s->n_peers < (s->cap_nbrs ? s->cap_nbrs : 1));
	s->peers[s->n_peers++] = id;
}

/* Every unit across an edge (the host aside), for the death kicks. */
static int
list_peers(struct sc_subcircuit *s)
{
	s->peers = malloc((s->cap_nbrs ? s->cap_nbrs : 1) * sizeof(*s->peers));
	if (!s->peers)
		return SC_ENOMEM;
	s->n_peers = 0;
	for (size_t i = 0; i < s->nin; i++)
		add_peer(s, s->in[i].peer);
	for (size_t i = 0; i < s->nout; i++)
		for (uint32_t j = 0; j < s->out[i].x.nedges; j++)
			add_peer(s, s->out[i].peers[j]);
	return 0;
}

static int
copy_outs(struct sc_subcircuit *s, const struct sc_subcircuit_desc *d)
{
	size_t peers = d->nin;

	s->out = calloc(d->nout ? d->nout : 1, sizeof(*s->out));
	if (!s->out)
		return SC_ENOMEM;
	s->nout = d->nout;
	for (size_t i = 0; i < d->nout; i++) {
		const struct sc_subcircuit_out *o = &d->out[i];
		struct sub_out *p = &s->out[i];

		int rc = o->peers ? sc_exchange_init(&p->x, o->key, o->nedges,
						     o->edges)
				  : SC_EINVAL;

		if (rc == SC_EINVAL)
			return sc__fail(SC_EINVAL,
					"sc_subcircuit_create: '%s': output "
					"stream %d has %u edges, key %u",
					d->name, o->stream, o->nedges, o->key);
		if (rc)
			return rc;
		p->stream = o->stream;
		p->gating = o->gating;
		p->ahead = d->ticks && o->ahead;
		p->ahead_from = o->ahead_from;
		p->peers = malloc(o->nedges * sizeof(*p->peers));
		p->marks = calloc(o->nedges, sizeof(*p->marks));
		if (!p->peers || !p->marks)
			return SC_ENOMEM;
		if (o->traces && sc_exchange_set_traces(&p->x, o->traces) != 0)
			return SC_ENOMEM;
		memcpy(p->peers, o->peers, o->nedges * sizeof(*p->peers));
		/* A rebuilt unit's traffic starts now (subcircuit.h). */
		for (uint32_t j = 0; j < o->nedges; j++)
			(void)sc_edge_moved(o->edges[j], SC_EDGE_PRODUCER,
					    &p->marks[j]);
		peers += o->nedges;
	}
	s->cap_nbrs = peers;
	s->nbrs = malloc((peers ? peers : 1) * sizeof(*s->nbrs));
	return s->nbrs ? 0 : SC_ENOMEM;
}

static int
copy_ins(struct sc_subcircuit *s, const struct sc_subcircuit_desc *d)
{
	s->in = calloc(d->nin ? d->nin : 1, sizeof(*s->in));
	if (!s->in)
		return SC_ENOMEM;
	s->nin = d->nin;
	for (size_t i = 0; i < d->nin; i++) {
		if (!d->in[i].edge)
			return sc__fail(SC_EINVAL,
					"sc_subcircuit_create: '%s': input "
					"%zu has no edge",
					d->name, i);
		s->in[i].edge = d->in[i].edge;
		s->in[i].stream = d->in[i].stream;
		s->in[i].peer = d->in[i].peer;
		s->in[i].gated = d->in[i].gated;
		(void)sc_edge_moved(s->in[i].edge, SC_EDGE_CONSUMER,
				    &s->in[i].mark);
	}
	if (!d->restore)
		return 0;
	s->restore = calloc(d->nin ? d->nin : 1, sizeof(struct sc_batch *));
	if (!s->restore)
		return SC_ENOMEM;
	for (size_t i = 0; i < d->nin; i++)
		s->restore[i] =
		    d->restore[i] ? sc_batch_retain(d->restore[i]) : NULL;
	return 0;
}

int
sc_subcircuit_create(const struct sc_subcircuit_desc *d,
		     struct sc_subcircuit **out)
{
	struct sc_subcircuit *s;
	int rc;

	if (!d || !out || !d->graph || !d->nodes || d->nnodes == 0 ||
	    (d->nin && !d->in) || (d->nout && !d->out))
		return sc__fail(SC_EINVAL, "sc_subcircuit_create: NULL or "
					   "empty description");
	s = calloc(1, sizeof(*s));
	if (!s)
		return sc__fail(SC_ENOMEM, "sc_subcircuit_create");
	s->unit.ops = d->ticks ? &sub_tick_ops : &sub_ops;
	(void)snprintf(s->name, sizeof(s->name), "%s",
		       d->name ? d->name : "unit");
	s->host_popped = d->host_popped;
	s->host_ctx = d->host_ctx;
	s->tl = d->timeline;
	s->tl_id = d->timeline_id;
	s->fig = d->figures ? d->figures : &s->own;
	atomic_init(&s->blocked, false);
	atomic_init(&s->turning, false);
	rc = copy_ins(s, d);
	if (!rc)
		rc = copy_outs(s, d);
	if (!rc)
		rc = list_peers(s);
	if (rc == SC_ENOMEM)
		rc = sc__fail(SC_ENOMEM, "sc_subcircuit_create: '%s'", s->name);
	if (!rc)
		rc = sc__sub_tick_init(s, d);
	if (!rc)
		rc = sc_circuit_create_part(d->graph, d->nodes, d->nnodes,
					    &s->circuit);
	if (!rc)
		wl_init(s);
	if (rc) {
		free_restore(s);
		free_ports(s);
		free(s);
		return rc;
	}
	*out = s;
	return 0;
}

void
sc_subcircuit_destroy(struct sc_subcircuit *s)
{
	if (!s)
		return;
	/* Frames addressed to this unit are undeliverable from now on. A
	 * producer waiting for room in these edges would wait for ever: the
	 * executor kicks it after this destroy (unit.h, "Death"), and it
	 * sees the close and drops its outbox. */
	for (size_t i = 0; i < s->nin; i++)
		sc_edge_close(s->in[i].edge);
	/* Tick mode: its consumers stop waiting for its frontiers. */
	for (size_t i = 0; s->ticks && i < s->nout; i++)
		for (uint32_t j = 0; j < s->out[i].x.nedges; j++)
			sc_edge_end(s->out[i].x.edges[j]);
	sc_circuit_destroy(s->circuit);
	free_restore(s);
	free_ports(s);
	free(s);
}

struct sc_unit *
sc_subcircuit_unit(struct sc_subcircuit *s)
{
	return s ? &s->unit : NULL;
}

struct sc_circuit *
sc_subcircuit_circuit(struct sc_subcircuit *s)
{
	/* For the host while the unit is idle (subcircuit.h, Threads). */
	SC_ASSERT(!s ||
		  !atomic_load_explicit(&s->turning, memory_order_relaxed));
	return s ? s->circuit : NULL;
}

void
sc__unit_figures_read(const struct sc__unit_figures *f,
		      struct sc_subcircuit_stats *out)
{
	uint64_t w;

	out->turns = atomic_load_explicit(&f->turns, memory_order_relaxed);
	out->frames_in =
	    atomic_load_explicit(&f->frames_in, memory_order_relaxed);
	out->rows_in = atomic_load_explicit(&f->rows_in, memory_order_relaxed);
	out->frames_out =
	    atomic_load_explicit(&f->frames_out, memory_order_relaxed);
	out->rows_out =
	    atomic_load_explicit(&f->rows_out, memory_order_relaxed);
	out->busy_ns = atomic_load_explicit(&f->busy_ns, memory_order_relaxed);
	out->longest_ns =
	    atomic_load_explicit(&f->longest_ns, memory_order_relaxed);
	w = atomic_load_explicit(&f->longest_word, memory_order_relaxed);
	out->longest_doing =
	    w ? sc__doing_act_name(sc__doing_word_act(w)) : NULL;
	out->longest_op = w ? sc__doing_word_node(w) : -1;
	out->longest_phase_ns =
	    atomic_load_explicit(&f->longest_phase_ns, memory_order_relaxed);
}

bool
sc__unit_wait_read(const struct sc__unit_figures *f, uint64_t *tick,
		   uint64_t *front, struct sc_edge **edge)
{
	uint64_t t = atomic_load_explicit(&f->wait_tick, memory_order_acquire);

	*edge = atomic_load_explicit(&f->wait_edge, memory_order_relaxed);
	*front = atomic_load_explicit(&f->wait_front, memory_order_relaxed);
	/* Orders the two loads above before the tick's second read. */
	atomic_thread_fence(memory_order_acquire);
	*tick = t;
	return *edge &&
	       atomic_load_explicit(&f->wait_tick, memory_order_relaxed) == t;
}

void
sc_subcircuit_stats(const struct sc_subcircuit *s,
		    struct sc_subcircuit_stats *out)
{
	if (s && out)
		sc__unit_figures_read(s->fig, out);
}

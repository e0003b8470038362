/*
 * edge.c - a bounded SPSC edge of batches: ck_ring, counters, outbox.
 *
 * See edge.h for the design. Layout: the fields each end writes sit on a
 * cache line of their own, so the producer's stores do not evict the
 * consumer's line and back. In a steady stream the ends exchange only what
 * a raw ck_ring exchanges (its two indices): the consumer learns what is
 * there from ck's producer index, which its dequeues read anyway; nobody
 * but a watchdog reads `pushed`; and the producer keeps a private copy of
 * `popped` (stored once per poll) and reloads it only when that copy says
 * the edge is full, about once per `capacity` frames.
 */
#include "units/edge.h"

#include <ck_ring.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "operators/base.h"
#include "operators/base_int.h"
#include "operators/schema.h"
#include "units/edge_int.h"

#define SC_EDGE_LINE 64

/* An outbox frame queued behind the first: see outbox_add. */
struct sc__outbox_more {
	struct sc_batch *b;
	uint64_t sends; /* sends coalesced into b */
};

struct sc_edge {
	/* Read-mostly: set at create, or written once (close). */
	struct ck_ring ring;	      /* ck's indices (own padding inside) */
	struct ck_ring_buffer *slots; /* 2 * capacity slots */
	uint64_t mask;		      /* 2 * capacity - 1 */
	uint32_t capacity;	      /* frames in flight at most */
	uint32_t ncols;		      /* every frame's column count */
	size_t outbox_bound;	      /* rows beyond which: backpressured */
	struct sc__symcols syms;      /* ids a frame holds (edge_int.h) */
	uint64_t *stamps;   /* tick edges: each slot's stamp (a data frame's
			       tick, a marker's frontier); NULL otherwise */
	atomic_bool closed; /* the consumer is gone */
	atomic_bool ended;  /* tick edges: the producer is gone */
	atomic_int drainer; /* 1 while someone drains a closed ring */
	_Atomic uint64_t drained;      /* frames a close took from the ring */
	_Atomic uint64_t refused;      /* sends released at a closed edge */
	_Atomic uint64_t undeliv_rows; /* rows of drained and refused */

	/* Written by the producer end only. */
	alignas(SC_EDGE_LINE) _Atomic uint64_t pushed; /* frames into ring */
	_Atomic uint64_t rows_pushed;		       /* their rows */
	uint64_t popped_seen;		/* producer's last look at popped */
	struct sc_batch *outbox;	/* coalesced sends waiting, or NULL */
	_Atomic uint64_t outbox_rows;	/* rows of outbox (0 if none) */
	_Atomic uint64_t outbox_frames; /* sends coalesced into outbox */
	atomic_bool in_producer;	/* a producer call runs (asserts) */
	uint64_t front;			/* tick edges: the last frontier
					   pushed; data is stamped with it */
	/* Frames queued behind `outbox` where a sum would leave int64
	 * (outbox_add): oldest first, never set unless outbox is. Rows and
	 * sends of all of them are in outbox_rows and outbox_frames. */
	struct sc__outbox_more *more;
	size_t nmore, cmore;
	uint64_t head_sends; /* sends coalesced into outbox itself */
	/* The waterlines published (edge.h, "Waterlines"), under wl_busy:
	 * the producer writes them, the consumer reads. */
	atomic_bool wl_busy;			    /* the spin lock */
	_Atomic uint64_t wl_seq;		    /* publications made */
	_Atomic uint64_t wl_after;		    /* frames pushed before */
	_Atomic uint32_t wl_mask;		    /* columns with a value */
	_Atomic int64_t wl_val[SC_SCHEMA_MAX_COLS]; /* per column */

	/* Written by the consumer end only (or by a drain of a closed edge,
	 * which holds `drainer`). */
	alignas(SC_EDGE_LINE) _Atomic uint64_t popped; /* frames out of ring */
	_Atomic uint64_t rows_popped;		       /* their rows */
	_Atomic uint64_t delivered; /* frames a poll took (popped - drained) */
	atomic_bool in_consumer;    /* a poll runs (asserts) */
	uint64_t wl_read;	    /* the seq of the last publication read */
	struct sc_edge_waterline wl_pend; /* read, not yet due; mask 0:
					     none */
};

/*
 * The single-producer single-consumer rule, asserted. The ends are not
 * threads (a unit's turns run on whichever worker claims it), so what is
 * checked is that no two calls of the same end overlap: each end's calls
 * raise a flag on entry and lower it on leaving, and an entry that finds
 * it raised fires SC_ASSERT. The flag is relaxed, so it adds no ordering
 * that could hide a race from TSan. Without asserts both are empty.
 */
#if defined(SC_DEBUG_ASSERTS)
static inline void
end_enter(atomic_bool *in)
{
	bool was = atomic_exchange_explicit(in, true, memory_order_relaxed);

	SC_ASSERT(!was && "two calls of one end of an edge overlap");
}

static inline void
end_leave(atomic_bool *in)
{
	atomic_store_explicit(in, false, memory_order_relaxed);
}
#else
static inline void
end_enter(atomic_bool *in)
{
	(void)in;
}

static inline void
end_leave(atomic_bool *in)
{
	(void)in;
}
#endif

static bool
is_power_of_two(uint32_t x)
{
	return x != 0 && (x & (x - 1)) == 0;
}

/* A frame leaves the edge: its holds go, then the frame. NULL is fine. */
static inline void
let_go(struct sc_edge *e, struct sc_batch *b)
{
	if (b && sc__symcols_any(&e->syms))
		sc__symtab_unhold(&e->syms, b);
	sc_batch_release(b);
}

void
sc__edge_set_symbols(struct sc_edge *e, const struct sc__symcols *s)
{
	if (e && s)
		e->syms = *s;
}

const struct sc__symcols *
sc__edge_symbols(const struct sc_edge *e)
{
	return &e->syms;
}

void
sc__edge_frame_done(struct sc_edge *e, struct sc_batch *b)
{
	if (e)
		let_go(e, b);
	else
		sc_batch_release(b);
}

int
sc_edge_create(const struct sc_edge_opts *opts, struct sc_edge **out)
{
	struct sc_edge *e;
	size_t size = sizeof(*e);

	if (!opts || !out)
		return sc__fail(SC_EINVAL, "sc_edge_create: NULL %s",
				opts ? "out" : "opts");
	if (!is_power_of_two(opts->capacity) ||
	    opts->capacity > SC_EDGE_MAX_CAPACITY)
		return sc__fail(SC_EINVAL,
				"sc_edge_create: capacity %u is not a power "
				"of two in [1, 2^30]",
				opts->capacity);
	if (opts->ncols == 0 || opts->ncols > SC_SCHEMA_MAX_COLS)
		return sc__fail(SC_ESCHEMA, "sc_edge_create: ncols %u",
				opts->ncols);
	e = aligned_alloc(SC_EDGE_LINE, size);
	if (!e)
		return sc__fail(SC_ENOMEM, "sc_edge_create: %zu bytes", size);
	memset(e, 0, size);
	/* Twice the capacity, so ck's own full check (it keeps one slot
	 * empty) never refuses a push our counters allowed. */
	e->slots = calloc(2 * (size_t)opts->capacity, sizeof(*e->slots));
	if (opts->ticks)
		e->stamps =
		    calloc(2 * (size_t)opts->capacity, sizeof(*e->stamps));
	if (!e->slots || (opts->ticks && !e->stamps)) {
		free(e->slots);
		free(e->stamps);
		free(e);
		return sc__fail(SC_ENOMEM, "sc_edge_create: ring of %u slots",
				2 * opts->capacity);
	}
	ck_ring_init(&e->ring, 2 * opts->capacity);
	e->mask = 2 * (uint64_t)opts->capacity - 1;
	e->capacity = opts->capacity;
	e->ncols = opts->ncols;
	e->outbox_bound = opts->outbox_bound;
	atomic_init(&e->closed, false);
	atomic_init(&e->ended, false);
	atomic_init(&e->drainer, 0);
	*out = e;
	return 0;
}

/* --- the ring ----------------------------------------------------------------
 */

static inline struct ck_ring_buffer *
slot_of(struct sc_edge *e, uint64_t index)
{
	return &e->slots[index & e->mask];
}

/* Whether the producer may push one frame: reload popped only when the
 * cached copy says the ring is full. Producer end. */
static inline bool
ring_has_room(struct sc_edge *e)
{
	uint64_t p = atomic_load_explicit(&e->pushed, memory_order_relaxed);

	if (p - e->popped_seen < e->capacity)
		return true;
	e->popped_seen = atomic_load_explicit(&e->popped, memory_order_acquire);
	return p - e->popped_seen < e->capacity;
}

/*
 * Push one frame; ring_has_room must have said yes. Producer end. The
 * push is ck's reserve/commit pair rather than ck_ring_enqueue_spsc, so
 * that the TSan release can sit between the slot write and the index
 * store that publishes it (inside enqueue_spsc there is no such point).
 */
static inline void
ring_push(struct sc_edge *e, struct sc_batch *b)
{
	uint64_t p = atomic_load_explicit(&e->pushed, memory_order_relaxed);
	/* Read from b before the commit: from then on the consumer may
	 * already have released it. A marker (NULL) has no rows. */
	uint64_t rows =
	    atomic_load_explicit(&e->rows_pushed, memory_order_relaxed) +
	    (b ? sc_batch_count(b) : 0);
	struct ck_ring_buffer *slot;

	SC_ASSERT(p - e->popped_seen < e->capacity); /* ring_has_room said so */
	slot = ck_ring_enqueue_reserve_spsc(&e->ring, e->slots);
	if (!slot)
		abort(); /* the ring has twice the room our counters allow */
	sc__tsan_acquire(slot); /* the consumer's read of its last lap */
	slot->value = b;
	/* The stamp of the slot ck reserved (index p, as the counters say):
	 * written before the release that publishes the slot. */
	if (e->stamps)
		e->stamps[p & e->mask] = e->front;
	sc__tsan_release(slot); /* this write, and the batch behind it */
	/* Count before the commit, so that popped <= pushed always holds
	 * (pending is never negative); for an instant pending counts a frame
	 * the consumer cannot see yet, which a watchdog tolerates. */
	atomic_store_explicit(&e->rows_pushed, rows, memory_order_relaxed);
	atomic_store_explicit(&e->pushed, p + 1, memory_order_release);
	ck_ring_enqueue_commit_spsc(&e->ring);
}

/* Pop frames [from, to) (from being the popped count, and ck having
 * shown them committed) into out, or release them if out is NULL; then
 * publish the new popped count, which lets the producer reuse the slots.
 * The caller is the only one popping. Returns the rows popped. */
static inline uint64_t
ring_pop(struct sc_edge *e, uint64_t from, uint64_t to, struct sc_batch **out,
	 uint64_t *stamps)
{
	uint64_t rows = 0;

	SC_ASSERT(from ==
		  atomic_load_explicit(&e->popped, memory_order_relaxed));
	SC_ASSERT(to - from <= e->capacity);
	for (uint64_t i = from; i < to; i++) {
		struct ck_ring_buffer *slot = slot_of(e, i);
		struct sc_batch *b = NULL;

		sc__tsan_acquire(slot);
		if (!ck_ring_dequeue_spsc(&e->ring, e->slots, &b))
			abort(); /* ck_ring_size said it was there */
		/* Read before `popped` lets the producer reuse the slot. */
		if (stamps)
			stamps[i - from] = e->stamps[i & e->mask];
		sc__tsan_release(slot);
		rows += b ? sc_batch_count(b) : 0;
		if (out)
			out[i - from] = b;
		else
			let_go(e, b);
	}
	atomic_store_explicit(
	    &e->rows_popped,
	    atomic_load_explicit(&e->rows_popped, memory_order_relaxed) + rows,
	    memory_order_relaxed);
	atomic_store_explicit(&e->popped, to, memory_order_release);
	return rows;
}

/* --- closing ----------------------------------------------------------------
 */

/* Count frames that will never reach the consumer, on `which` of the two
 * counters: `drained` (they were in the ring) or `refused` (they never
 * entered it). Kept apart so that frames sent (pushed + refused) and
 * frames out of the ring (delivered + drained) each have their own
 * figure, and sc_edge_traffic's identity can be checked, not assumed. */
static void
count_undeliverable(struct sc_edge *e, _Atomic uint64_t *which, uint64_t frames,
		    uint64_t rows)
{
	atomic_fetch_add(which, frames);
	atomic_fetch_add(&e->undeliv_rows, rows);
}

/*
 * Release every frame in the ring of a closed edge. Two ends may call this
 * at once (the closer, and the producer once it has seen the close), so
 * the one that wins `drainer` pops; the other leaves. The winner looks at
 * the ring again after letting go, so a frame the loser pushed before it
 * tried is not stranded (the seq_cst fence on the producer's side, before
 * it tries, orders its pushes before that look). Should one still slip
 * through, it is counted as undeliverable while it waits (see
 * sc_edge_undeliverable) and released by the producer's next call or by
 * destroy: never dropped in silence.
 */
static void
drain_closed(struct sc_edge *e)
{
	for (;;) {
		int idle = 0;
		uint64_t c, n, rows;

		if (!atomic_compare_exchange_strong(&e->drainer, &idle, 1))
			return;
		SC_ASSERT(atomic_load(&e->closed)); /* drains no open edge */
		c = atomic_load(&e->popped);
		n = ck_ring_size(&e->ring);
		rows = ring_pop(e, c, c + n, NULL, NULL);
		count_undeliverable(e, &e->drained, n, rows);
		atomic_store(&e->drainer, 0);
		if (ck_ring_size(&e->ring) == 0)
			return;
	}
}

/* Release every outbox frame (the caller counted them) and empty it.
 * Producer end, or destroy. */
static void
outbox_release(struct sc_edge *e)
{
	let_go(e, e->outbox);
	for (size_t i = 0; i < e->nmore; i++)
		let_go(e, e->more[i].b);
	e->outbox = NULL;
	e->nmore = 0;
	e->head_sends = 0;
	atomic_store_explicit(&e->outbox_rows, 0, memory_order_relaxed);
	atomic_store_explicit(&e->outbox_frames, 0, memory_order_relaxed);
}

/* The producer saw the close: count and release its outbox, then drain
 * what it may have pushed while the close ran. Producer end. */
static void
producer_saw_close(struct sc_edge *e)
{
	if (e->outbox) {
		count_undeliverable(e, &e->refused,
				    atomic_load_explicit(&e->outbox_frames,
							 memory_order_relaxed),
				    sc_batch_count(e->outbox));
		outbox_release(e);
	}
	sc__fence_seq_cst();
	drain_closed(e);
}

void
sc_edge_close(struct sc_edge *e)
{
	if (!e)
		return;
	atomic_store(&e->closed, true);
	drain_closed(e);
}

static bool wl_read(struct sc_edge *e, struct sc_edge_waterline *w,
		    uint64_t *seq);

/*
 * Reopen: the consumer's unit was rebuilt (a restart, runtime.h) from the
 * integral of everything sent on this edge, so whatever still waits for
 * it here is already in that integral: the ring and the outbox are
 * released as a close would release them (drained, refused), and the
 * edge is open again. The caller owns both ends (nothing runs on them).
 */
int
sc_edge_reopen(struct sc_edge *e)
{
	if (!e)
		return sc__fail(SC_EINVAL, "sc_edge_reopen: NULL edge");
	if (!atomic_load(&e->closed))
		return sc__fail(SC_ESTATE, "sc_edge_reopen: the edge is open");
	end_enter(&e->in_producer);
	producer_saw_close(e);
	end_leave(&e->in_producer);
	SC_ASSERT(ck_ring_size(&e->ring) == 0 && !e->outbox);
	/* The rebuilt consumer takes the newest publication at once: every
	 * frame pushed before it is in the integral the rebuild feeds, and
	 * the frames to come are above it (its promise), so it is due now.
	 * Without it the rebuilt unit knew no waterline, and kept state it
	 * could drop, until the producer next published. */
	{
		struct sc_edge_waterline w;
		uint64_t seq = 0;

		e->wl_pend.mask = 0;
		if (wl_read(e, &w, &seq) && w.mask) {
			w.after = 0;
			e->wl_pend = w;
		}
		e->wl_read = seq;
	}
	atomic_store(&e->closed, false);
	return 0;
}

bool
sc_edge_is_closed(const struct sc_edge *e)
{
	return e && atomic_load_explicit(&e->closed, memory_order_acquire);
}

/* --- the producer end ------------------------------------------------------
 */

/* Push the outbox's frames, oldest first, while the ring has room. */
static int
outbox_flush_slow(struct sc_edge *e)
{
	while (e->outbox) {
		uint64_t rows = sc_batch_count(e->outbox);

		if (!ring_has_room(e))
			return SC_EFULL;
		ring_push(e, e->outbox);
		atomic_store_explicit(
		    &e->outbox_rows,
		    atomic_load_explicit(&e->outbox_rows,
					 memory_order_relaxed) -
			rows,
		    memory_order_relaxed);
		atomic_store_explicit(
		    &e->outbox_frames,
		    atomic_load_explicit(&e->outbox_frames,
					 memory_order_relaxed) -
			e->head_sends,
		    memory_order_relaxed);
		e->outbox = NULL;
		e->head_sends = 0;
		if (e->nmore) {
			e->outbox = e->more[0].b;
			e->head_sends = e->more[0].sends;
			e->nmore--;
			memmove(e->more, e->more + 1,
				e->nmore * sizeof(*e->more));
		}
	}
	return 0;
}

/* Move the outbox into the ring if there is room. Returns 0 or SC_EFULL. */
static inline int
outbox_flush(struct sc_edge *e)
{
	if (!e->outbox)
		return 0;
	return outbox_flush_slow(e);
}

/* One more send into the outbox, with `rows` more rows (mod 2^64). */
static void
outbox_count(struct sc_edge *e, uint64_t rows)
{
	atomic_store_explicit(
	    &e->outbox_rows,
	    atomic_load_explicit(&e->outbox_rows, memory_order_relaxed) + rows,
	    memory_order_relaxed);
	atomic_store_explicit(
	    &e->outbox_frames,
	    atomic_load_explicit(&e->outbox_frames, memory_order_relaxed) + 1,
	    memory_order_relaxed);
}

/* Queue b as a frame of its own behind the outbox's last: its sum with
 * that frame would leave int64. 0 or SC_ENOMEM (nothing changed). */
static int
outbox_queue(struct sc_edge *e, struct sc_batch *b)
{
	if (e->nmore == e->cmore) {
		size_t c = e->cmore ? 2 * e->cmore : 2;
		struct sc__outbox_more *m = realloc(e->more, c * sizeof(*m));

		if (!m)
			return sc__fail(SC_ENOMEM,
					"sc_edge_send: an outbox of %zu "
					"frames",
					c + 1);
		e->more = m;
		e->cmore = c;
	}
	if (sc__symcols_any(&e->syms))
		sc__symtab_hold(&e->syms, b);
	e->more[e->nmore].b = b;
	e->more[e->nmore].sends = 1;
	e->nmore++;
	return 0;
}

/* Sum b into the outbox's frame i (0: outbox itself, then more[i - 1]),
 * taking b. 0, SC_ENOMEM or SC_EOVERFLOW (nothing changed). */
static int
outbox_sum_into(struct sc_edge *e, size_t i, struct sc_batch *b)
{
	struct sc_batch **at = i ? &e->more[i - 1].b : &e->outbox;
	uint64_t *sends = i ? &e->more[i - 1].sends : &e->head_sends;
	uint64_t before = sc_batch_count(*at);
	struct sc_batch *sum = NULL;
	int rc = sc_batch_add(*at, b, &sum);

	if (rc)
		return rc;
	/* The sum holds before the old frame lets go: an id the two share
	 * never reaches zero in between. b was never held. */
	if (sc__symcols_any(&e->syms))
		sc__symtab_hold(&e->syms, sum);
	let_go(e, *at);
	sc_batch_release(b);
	*at = sum;
	(*sends)++;
	/* Wraps where the sum has fewer rows: the add below wraps back. */
	outbox_count(e, sc_batch_count(sum) - before);
	return 0;
}

/*
 * Add b into the outbox (taking b on success). 0 or SC_ENOMEM; on failure
 * the outbox and b are as they were.
 *
 * b is summed into the outbox's last frame. Where a row's weight in that
 * sum would leave int64, it is summed into the first earlier frame where
 * none would, and where every frame would overflow it waits as a frame of
 * its own behind them: a partial sum is not a settled value (the
 * consumer's integral may well fit), and Z-set addition
 * is commutative, so the frames sum to the same input however the sends
 * are grouped, and no schedule turns a sum the consumer could take into an
 * error here. The ring's bound on frames in flight holds (frames leave the
 * outbox only into room); backpressure counts the rows of every frame.
 * A new frame appears only when the sum of the outbox's frames on some
 * row passes int64 on every frame, so there are at most about
 * |that sum| / 2^62 + 1 of them.
 */
static int
outbox_add(struct sc_edge *e, struct sc_batch *b)
{
	int rc;

	if (!e->outbox) {
		if (sc__symcols_any(&e->syms))
			sc__symtab_hold(&e->syms, b);
		e->outbox = b;
		e->head_sends = 1;
		outbox_count(e, sc_batch_count(b));
		return 0;
	}
	rc = outbox_sum_into(e, e->nmore, b);
	for (size_t i = e->nmore; rc == SC_EOVERFLOW && i-- > 0;)
		rc = outbox_sum_into(e, i, b);
	if (rc != SC_EOVERFLOW)
		return rc;
	rc = outbox_queue(e, b);
	if (rc == 0)
		outbox_count(e, sc_batch_count(b));
	return rc;
}

static int
edge_send(struct sc_edge *e, struct sc_batch *batch)
{
	int rc;

	if (sc_batch_ncols(batch) != e->ncols)
		return sc__fail(SC_ESCHEMA,
				"sc_edge_send: batch has %u columns, edge %u",
				sc_batch_ncols(batch), e->ncols);
	if (atomic_load_explicit(&e->closed, memory_order_acquire)) {
		count_undeliverable(e, &e->refused, 1, sc_batch_count(batch));
		sc_batch_release(batch);
		producer_saw_close(e);
		return sc__fail(SC_EDEAD, "sc_edge_send: the consumer is gone");
	}
	if (outbox_flush(e) == 0 && ring_has_room(e)) {
		/* Held before the commit: from then on the consumer may let
		 * it go. */
		if (sc__symcols_any(&e->syms))
			sc__symtab_hold(&e->syms, batch);
		ring_push(e, batch);
		return 0;
	}
	rc = outbox_add(e, batch);
	if (rc)
		return sc__fail(rc, "sc_edge_send: coalescing into the outbox");
	return SC_EFULL;
}

int
sc_edge_send(struct sc_edge *e, struct sc_batch *batch)
{
	int rc;

	if (!e || !batch)
		return sc__fail(SC_EINVAL, "sc_edge_send: NULL %s",
				e ? "batch" : "edge");
	end_enter(&e->in_producer);
	rc = edge_send(e, batch);
	end_leave(&e->in_producer);
	return rc;
}

int
sc_edge_flush(struct sc_edge *e)
{
	int rc;

	if (!e)
		return sc__fail(SC_EINVAL, "sc_edge_flush: NULL edge");
	end_enter(&e->in_producer);
	if (atomic_load_explicit(&e->closed, memory_order_acquire)) {
		producer_saw_close(e);
		rc = sc__fail(SC_EDEAD, "sc_edge_flush: the consumer is gone");
	} else {
		rc = outbox_flush(e);
	}
	end_leave(&e->in_producer);
	return rc;
}

/* The marker goes after the outbox, never into it: the outbox holds only
 * the current tick's rows, so it cannot mix two ticks. */
static int
edge_advance(struct sc_edge *e, uint64_t t)
{
	if (atomic_load_explicit(&e->closed, memory_order_acquire)) {
		producer_saw_close(e);
		return sc__fail(SC_EDEAD,
				"sc_edge_advance: the consumer is gone");
	}
	if (t <= e->front)
		return 0;
	if (outbox_flush(e) != 0 || !ring_has_room(e))
		return SC_EFULL;
	e->front = t;
	ring_push(e, NULL);
	return 0;
}

int
sc_edge_advance(struct sc_edge *e, uint64_t t)
{
	int rc;

	if (!e)
		return sc__fail(SC_EINVAL, "sc_edge_advance: NULL edge");
	if (!e->stamps)
		return sc__fail(SC_EINVAL, "sc_edge_advance: not a tick edge");
	end_enter(&e->in_producer);
	rc = edge_advance(e, t);
	end_leave(&e->in_producer);
	return rc;
}

void
sc_edge_end(struct sc_edge *e)
{
	if (e)
		atomic_store_explicit(&e->ended, true, memory_order_release);
}

bool
sc_edge_is_ended(const struct sc_edge *e)
{
	return e && atomic_load_explicit(&e->ended, memory_order_acquire);
}

uint64_t
sc_edge_frontier(const struct sc_edge *e)
{
	return e ? e->front : 0;
}

bool
sc_edge_is_ticked(const struct sc_edge *e)
{
	return e && e->stamps;
}

bool
sc_edge_backpressured(const struct sc_edge *e)
{
	if (!e || !e->outbox)
		return false;
	return e->outbox_bound == 0 ||
	       atomic_load_explicit(&e->outbox_rows, memory_order_relaxed) >
		   (uint64_t)e->outbox_bound;
}

uint32_t
sc_edge_room(struct sc_edge *e)
{
	uint64_t p;
	uint32_t room;

	if (!e || e->outbox)
		return 0;
	end_enter(&e->in_producer);
	p = atomic_load_explicit(&e->pushed, memory_order_relaxed);
	e->popped_seen = atomic_load_explicit(&e->popped, memory_order_acquire);
	room = e->capacity - (uint32_t)(p - e->popped_seen);
	end_leave(&e->in_producer);
	return room;
}

size_t
sc_edge_outbox_rows(const struct sc_edge *e)
{
	return e ? (size_t)atomic_load_explicit(&e->outbox_rows,
						memory_order_relaxed)
		 : 0;
}

bool
sc_edge_has_outbox(const struct sc_edge *e)
{
	return e && e->outbox;
}

/* --- waterlines (edge.h, "Waterlines") -------------------------------------
 */

/* The publication is a few dozen words, written once per step and read
 * once per turn: a spin lock around it (the other end holds it for those
 * stores only) is simpler than a seqlock and ThreadSanitizer sees it,
 * where it cannot follow a seqlock's fences. */
static void
wl_lock(struct sc_edge *e)
{
	while (
	    atomic_exchange_explicit(&e->wl_busy, true, memory_order_acquire))
		sc_cpu_relax();
}

static void
wl_unlock(struct sc_edge *e)
{
	atomic_store_explicit(&e->wl_busy, false, memory_order_release);
}

int
sc_edge_set_waterline(struct sc_edge *e, uint32_t mask, const int64_t *values)
{
	uint64_t seq;

	if (!e || (mask && !values))
		return sc__fail(SC_EINVAL, "sc_edge_set_waterline: NULL");
	if (e->outbox)
		return SC_EFULL; /* its rows are not in the ring yet */
	wl_lock(e);
	seq = atomic_load_explicit(&e->wl_seq, memory_order_relaxed);
	atomic_store_explicit(
	    &e->wl_after,
	    atomic_load_explicit(&e->pushed, memory_order_relaxed),
	    memory_order_relaxed);
	atomic_store_explicit(&e->wl_mask, mask, memory_order_relaxed);
	for (uint32_t c = 0; c < SC_SCHEMA_MAX_COLS; c++)
		if (mask >> c & 1)
			atomic_store_explicit(&e->wl_val[c], values[c],
					      memory_order_relaxed);
	atomic_store_explicit(&e->wl_seq, seq + 1, memory_order_relaxed);
	wl_unlock(e);
	return 0;
}

_Static_assert(SC_EDGE_WL_COLS == SC_SCHEMA_MAX_COLS,
	       "an edge's waterlines cover every column");

/* The newest publication into *w, and its sequence; false while none
 * was made. Either end. */
static bool
wl_read(struct sc_edge *e, struct sc_edge_waterline *w, uint64_t *seq)
{
	wl_lock(e);
	*seq = atomic_load_explicit(&e->wl_seq, memory_order_relaxed);
	w->after = atomic_load_explicit(&e->wl_after, memory_order_relaxed);
	w->mask = atomic_load_explicit(&e->wl_mask, memory_order_relaxed);
	for (uint32_t c = 0; c < SC_SCHEMA_MAX_COLS; c++)
		w->value[c] = w->mask >> c & 1
				  ? atomic_load_explicit(&e->wl_val[c],
							 memory_order_relaxed)
				  : 0;
	wl_unlock(e);
	return *seq != 0;
}

bool
sc_edge_waterline_due(struct sc_edge *e, struct sc_edge_waterline *out)
{
	uint64_t popped, seq = 0;
	struct sc_edge_waterline w;
	bool due = false;

	if (!e || !out)
		return false;
	popped = atomic_load_explicit(&e->popped, memory_order_relaxed);
	/* The one read before: due once its frames have all been popped. */
	if (e->wl_pend.mask && e->wl_pend.after <= popped) {
		*out = e->wl_pend;
		e->wl_pend.mask = 0;
		due = true;
	}
	if (!wl_read(e, &w, &seq) || seq == e->wl_read || !w.mask)
		return due;
	e->wl_read = seq;
	if (w.after <= popped) {
		*out = w; /* newer than the pending one: that goes */
		e->wl_pend.mask = 0;
		return true;
	}
	e->wl_pend = w; /* the older pending one, if any, was due above or
			   is superseded: its values are at most these */
	return due;
}

/* --- the consumer end ------------------------------------------------------
 */

static int
edge_poll(struct sc_edge *e, size_t max, struct sc_batch **out,
	  uint64_t *stamps, size_t *n)
{
	uint64_t c, avail, k;

	if (atomic_load_explicit(&e->closed, memory_order_acquire))
		return sc__fail(SC_EDEAD, "sc_edge_poll: the edge is closed");
	end_enter(&e->in_consumer);
	/* How many frames are there, from ck's indices: the same cache line
	 * the dequeues read next, so knowing costs no extra transfer. TSan
	 * cannot see that load; the slot annotations in ring_pop carry the
	 * hand-off for it. */
	avail = ck_ring_size(&e->ring);
	k = avail < max ? avail : max;
	if (k) {
		c = atomic_load_explicit(&e->popped, memory_order_relaxed);
		ring_pop(e, c, c + k, out, stamps);
		/* Consumer end only, so a plain add; relaxed, as rows_popped:
		 * readers want the count, not an ordering. */
		atomic_store_explicit(
		    &e->delivered,
		    atomic_load_explicit(&e->delivered, memory_order_relaxed) +
			k,
		    memory_order_relaxed);
	}
	end_leave(&e->in_consumer);
	*n = (size_t)k;
	return 0;
}

int
sc_edge_poll(struct sc_edge *e, size_t max, struct sc_batch **out, size_t *n)
{
	if (!e || !out || !n || max == 0)
		return sc__fail(SC_EINVAL, "sc_edge_poll: %s",
				max ? "NULL argument" : "max is 0");
	return edge_poll(e, max, out, NULL, n);
}

int
sc_edge_poll_stamped(struct sc_edge *e, size_t max, struct sc_batch **out,
		     uint64_t *stamps, size_t *n)
{
	if (!e || !out || !stamps || !n || max == 0)
		return sc__fail(SC_EINVAL, "sc_edge_poll_stamped: %s",
				max ? "NULL argument" : "max is 0");
	if (!e->stamps)
		return sc__fail(SC_EINVAL,
				"sc_edge_poll_stamped: not a tick edge");
	return edge_poll(e, max, out, stamps, n);
}

/* --- counters ---------------------------------------------------------------
 */

uint64_t
sc_edge_pending(const struct sc_edge *e)
{
	uint64_t c, p;

	if (!e)
		return 0;
	/* popped first: pushed only grows and popped never passes it, so
	 * the difference is never negative. */
	c = atomic_load_explicit(&e->popped, memory_order_acquire);
	p = atomic_load_explicit(&e->pushed, memory_order_acquire);
	return p - c;
}

uint32_t
sc_edge_capacity(const struct sc_edge *e)
{
	return e ? e->capacity : 0;
}

uint64_t
sc_edge_moved(const struct sc_edge *e, enum sc_edge_end end, uint64_t *mark)
{
	uint64_t now, d;

	if (!e || !mark)
		return 0;
	now = atomic_load_explicit(end == SC_EDGE_PRODUCER ? &e->pushed
							   : &e->popped,
				   memory_order_acquire);
	d = now - *mark;
	*mark = now;
	return d;
}

void
sc_edge_undeliverable(const struct sc_edge *e, uint64_t *frames, uint64_t *rows)
{
	uint64_t f = 0, r = 0;

	/* What a close released stays counted after a reopen (both are 0
	 * on an edge never closed); what still waits counts only while
	 * closed. */
	if (e) {
		f = atomic_load(&e->drained) + atomic_load(&e->refused);
		r = atomic_load(&e->undeliv_rows);
	}
	if (e && atomic_load_explicit(&e->closed, memory_order_acquire)) {
		uint64_t rc = atomic_load(&e->rows_popped);
		uint64_t c = atomic_load(&e->popped);

		f += atomic_load(&e->pushed) - c +
		     atomic_load(&e->outbox_frames);
		r += atomic_load(&e->rows_pushed) - rc +
		     atomic_load(&e->outbox_rows);
	}
	if (frames)
		*frames = f;
	if (rows)
		*rows = r;
}

void
sc_edge_traffic(const struct sc_edge *e, struct sc_edge_traffic *out)
{
	uint64_t c;

	if (!e || !out)
		return;
	memset(out, 0, sizeof(*out));
	/* Out of the ring before into it: popped never passes pushed, so
	 * frames_in_ring is never negative while both ends run. */
	out->frames_delivered = atomic_load(&e->delivered);
	out->frames_drained = atomic_load(&e->drained);
	c = atomic_load(&e->popped);
	out->rows_popped = atomic_load(&e->rows_popped);
	out->frames_refused = atomic_load(&e->refused);
	out->frames_pushed = atomic_load(&e->pushed);
	out->frames_sent = out->frames_pushed + out->frames_refused;
	out->frames_in_ring = out->frames_pushed - c;
	out->rows_pushed = atomic_load(&e->rows_pushed);
	out->outbox_rows = atomic_load(&e->outbox_rows);
	out->closed = atomic_load(&e->closed);
	sc_edge_undeliverable(e, &out->undeliverable_frames,
			      &out->undeliverable_rows);
}

void
sc_edge_destroy(struct sc_edge *e)
{
	uint64_t c;

	if (!e)
		return;
	c = atomic_load(&e->popped);
	ring_pop(e, c, c + ck_ring_size(&e->ring), NULL, NULL);
	outbox_release(e);
	free(e->more);
	free(e->stamps);
	free(e->slots);
	free(e);
}

/*
 * edge.h - a bounded edge between two units: frames of Z-set deltas.
 *
 * An edge is a single-producer single-consumer queue of frames, one frame
 * being one `struct sc_batch *`. It is what a graph edge becomes when it
 * crosses from one unit into another (README.md, "Design"), and the only
 * thing that crosses threads.
 *
 * The queue. Frames travel through a Concurrency Kit ring (ck_ring, the
 * spsc pointer variant: reserve/commit to push, dequeue to pop). The edge
 * keeps its own two counters beside it, frames pushed (written by the
 * producer end only) and frames popped (written by the consumer end only,
 * once per poll), as C11 atomics. They are the traffic counters a turn
 * derives its progress from and what sc_edge_pending reads from any
 * thread, and `popped` is also what bounds the producer: it pushes only
 * while pushed - popped < capacity. The ck ring is made twice the
 * capacity, so ck's own full check never decides anything. The consumer
 * learns how many frames are there from ck's producer index, which its
 * dequeues read anyway, so in a steady stream the two cores exchange no
 * more cache lines than a raw ck_ring does.
 *
 * ThreadSanitizer cannot see ck's index loads and stores (inline
 * assembly), so to TSan the slot written by the producer and read by the
 * consumer, and the batch behind it, would look unordered: a false race on
 * every frame. operators/base_int.h annotates that hand-off (a release on
 * the slot between its write and ck's commit, an acquire before the
 * dequeue); the way back (a slot reused on the next lap) is ordered by
 * the `popped` counter, which TSan sees. Without the annotations the TSan
 * driver (tests/units/tsan_edge.c) reports the race; with them it is
 * clean, and it did find a real one: reading a batch after its commit.
 *
 * Capacity is in frames and must be a power of two (ck_ring's indexing is
 * a mask), at least 1 and at most 2^30; anything else is SC_EINVAL.
 *
 * The outbox: why. A turn that produced output must put it somewhere even
 * when the ring is full: it cannot wait (no turn blocks, and its consumer
 * may need this very worker to run), and it must not drop it. So a full
 * edge keeps the output in an outbox on the producer's side, coalesced
 * exactly by Z-set addition (sc_batch_add): deltas sum, and every consumer
 * is a function of its input's integral (README.md, "The settle property"), so
 * k frames summed into one are the same input. A retraction that meets its
 * insertion in the outbox cancels there and never travels. sc_edge_flush moves
 * the outbox into the ring as one frame when room appears; a send first
 * flushes, so frames stay in order.
 *
 * Backpressure. The outbox is not a second queue without end: once it
 * holds more than `outbox_bound` rows the edge is backpressured
 * (sc_edge_backpressured), and the producer is expected to stop reading
 * its own input. Its input edges then fill, their producers' outboxes
 * pass their bounds, and so on back to the host, whose submit reports
 * full. Nothing is dropped and nothing spins.
 *
 * Why a full edge is not `more` (unit.h): a producer that said `more`
 * because its output was full would be queued again and again while its
 * consumer, the only one who can make room, waits behind it. Instead the
 * producer returns without `more`; its consumer's next pop is traffic, the
 * consumer's turn names the producer as a neighbour, and the executor
 * kicks the producer, which then flushes. Hence the helper sc_edge_moved:
 * each end asks what it moved since its last look.
 *
 * Ownership. A frame pushed on an edge belongs to the consumer from the
 * moment sc_edge_poll returns it: the consumer releases it
 * (sc_batch_release). A batch given to sc_edge_send belongs to the edge
 * when the call returns 0, SC_EFULL or SC_EDEAD, and still to the caller on
 * any other code (then nothing changed). The edge releases whatever is left
 * in its ring and outbox when it is destroyed. An edge the runtime gave
 * its stream's symbol columns (units/edge_int.h) also holds the ids of
 * every frame it accepted, until the frame leaves it; its consumer lets a
 * polled frame go with sc__edge_frame_done instead of sc_batch_release,
 * unless it handed the frame's holds on to its circuit.
 *
 * Closing. When the consumer dies (its unit panicked and its destroy
 * runs), the consumer end closes the edge (sc_edge_close): the frames in
 * the ring are released and counted as undeliverable, and so is every
 * frame sent afterwards (send returns SC_EDEAD) and the outbox at the
 * producer's next send or flush. sc_edge_undeliverable counts frames and
 * rows; a frame that raced into the ring during the close is counted
 * there as well until the producer's next call or destroy releases it.
 * sc_edge_traffic keeps the two ways apart (frames drained from the ring,
 * sends refused before they entered it) and apart from frames delivered,
 * so the accounting of every frame sent is exact (see struct
 * sc_edge_traffic). A consumer rebuilt after its death (a restart,
 * units/runtime.h) reopens the edge (sc_edge_reopen): what still waited
 * is released and counted as a close counts it, and the counts of what
 * closes released stay.
 *
 * Tick edges (opts.ticks; the runtime's tick mode, units/runtime.h). Every
 * slot of the ring carries a stamp beside its frame, and besides frames
 * the ring carries markers (a NULL frame): the producer's frontier, "no
 * frame of a tick below t will follow". A data frame is stamped with the
 * producer's frontier when it enters the ring: the tick it belongs to.
 * sc_edge_advance(t) pushes a marker t, after the outbox: the outbox holds
 * only rows of the current tick, since an advance waits until it is
 * flushed, so frames of two ticks are never coalesced. One marker covers
 * a range of empty ticks (advancing from 3 to 9 says ticks 3..8 are
 * done). Markers take slots, count as frames of 0 rows in every counter
 * (so their pushes and pops are traffic, and kick the other end as frames
 * do), and a consumer reads them with sc_edge_poll_stamped. The frames
 * between two markers f and f' are all stamped f: a consumer gathering
 * tick f stops at the marker f', and the next frames are of tick f'.
 *
 * Threads. One thread at a time on each end: the producer end (send,
 * flush, backpressured, outbox_rows) and the consumer end (poll, close)
 * may run concurrently with each other. The counters (sc_edge_pending,
 * sc_edge_traffic, sc_edge_moved, sc_edge_undeliverable, sc_edge_is_closed)
 * read atomics only and may be called from any thread (the watchdog's),
 * at any time while the edge exists. create and destroy race with nothing.
 */
#ifndef SC_UNITS_EDGE_H
#define SC_UNITS_EDGE_H

#ifdef __cplusplus
extern "C" {
#endif

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "operators/batch.h"
#include "operators/error.h"

struct sc_edge;

/* The largest capacity an edge accepts (frames). */
#define SC_EDGE_MAX_CAPACITY (1u << 30)

struct sc_edge_opts {
	uint32_t ncols;	     /* columns of every frame's rows, >= 1 */
	uint32_t capacity;   /* frames in flight; a power of two, >= 1 */
	size_t outbox_bound; /* outbox rows beyond which the edge is
				backpressured; 0: any non-empty outbox */
	bool ticks;	     /* a tick edge: stamps and markers (above) */
};

/* Which end of an edge a caller speaks for (sc_edge_moved). */
enum sc_edge_end {
	SC_EDGE_PRODUCER = 0, /* counts frames pushed into the ring */
	SC_EDGE_CONSUMER = 1, /* counts frames popped from the ring */
};

/*
 * A consistent-enough picture of the counters (sc_edge_traffic).
 *
 * Where every frame went. A frame is what travels: a send that entered
 * the ring, or an outbox that a flush pushed as one frame (the k sends
 * coalesced into it become one frame there). The outbox itself holds
 * rows, not frames, until it is flushed; if a close releases it instead,
 * each of its sends counts as a frame refused (they were never merged
 * into one). So, per edge, once both ends are quiet:
 *
 *   frames_sent = frames_delivered + frames_drained + frames_refused
 *                 + frames_in_ring
 *
 * with frames_sent = frames_pushed + frames_refused. frames_in_ring is
 * the ring's own count (pushed - popped), kept apart from the two
 * counters of frames out of it (delivered by a poll, drained by a close),
 * so a frame that left the ring without being counted as either breaks
 * the identity. While the ends run, the fields are read one by one (out
 * of the ring first), so the right side may lag the left by the frames
 * in flight, never the other way.
 */
struct sc_edge_traffic {
	uint64_t frames_sent;	   /* pushed + refused: see above */
	uint64_t frames_pushed;	   /* frames that entered the ring */
	uint64_t frames_delivered; /* frames a poll took (the consumer's) */
	uint64_t frames_drained;   /* frames a close released from the ring */
	uint64_t frames_refused;   /* sends a closed edge released before
				      they entered the ring (a send after
				      the close, or each send coalesced into
				      an outbox the close released) */
	uint64_t frames_in_ring;   /* frames in the ring now */
	uint64_t rows_pushed;	   /* rows of the frames pushed */
	uint64_t rows_popped;	   /* rows of the frames delivered or drained */
	uint64_t outbox_rows;	   /* rows waiting in the outbox */
	uint64_t undeliverable_frames; /* see sc_edge_undeliverable: drained
					  + refused, plus a closed edge's
					  ring and outbox sends */
	uint64_t undeliverable_rows;   /* see sc_edge_undeliverable */
	bool closed;		       /* sc_edge_close was called */
};

/*
 * sc_edge_create - a new open, empty edge. Returns 0 and *out, SC_EINVAL
 * (NULL, capacity 0, not a power of two or above SC_EDGE_MAX_CAPACITY),
 * SC_ESCHEMA (ncols 0 or above SC_SCHEMA_MAX_COLS) or SC_ENOMEM. Any
 * thread.
 */
int sc_edge_create(const struct sc_edge_opts *opts, struct sc_edge **out);

/*
 * sc_edge_destroy - release every batch still in the ring and the outbox
 * (counted as undeliverable if the edge was closed) and free the edge.
 * NULL is a no-op. Neither end may be in use.
 */
void sc_edge_destroy(struct sc_edge *e);

/*
 * sc_edge_send - hand `batch` to the consumer (producer end).
 * Returns
 *   0           pushed into the ring (after the outbox, if any, was
 *               flushed ahead of it); the edge owns the batch;
 *   SC_EFULL    the ring had no room: the batch was added into the outbox
 *               (the edge owns it; it will travel at a later flush). Not a
 *               failure: check sc_edge_backpressured to know whether to
 *               stop reading input;
 *   SC_EDEAD    the edge is closed: the batch (and any outbox) was released
 *               and counted as undeliverable;
 *   SC_EINVAL   e or batch NULL; SC_ESCHEMA: the batch's column count is
 *               not the edge's; SC_ENOMEM: coalescing into the outbox
 *               could not allocate. On these the caller keeps the batch
 *               and the edge is unchanged. Never SC_EOVERFLOW: a send whose
 *               sum with the outbox would leave int64 waits there as a
 *               frame of its own (edge.c, outbox_add).
 * Never blocks, never spins.
 */
int sc_edge_send(struct sc_edge *e, struct sc_batch *batch);

/*
 * sc_edge_flush - move the outbox into the ring if there is room (producer
 * end). Returns 0 (the outbox is empty now, or was), SC_EFULL (no room yet;
 * the outbox stays), SC_EDEAD (closed: the outbox was released and counted
 * as undeliverable), SC_EINVAL.
 */
int sc_edge_flush(struct sc_edge *e);

/*
 * sc_edge_backpressured - whether the outbox holds more than the bound's
 * rows: the producer should stop reading its own input until a flush
 * succeeds. False for NULL. Producer end.
 */
bool sc_edge_backpressured(const struct sc_edge *e);

/*
 * sc_edge_room - frames that sc_edge_send would push into the ring right
 * now (capacity - pending), or 0 while an outbox waits. The consumer can
 * only add room meanwhile, so a producer that sends at most this many
 * frames never fills its outbox. 0 for NULL. Producer end.
 */
uint32_t sc_edge_room(struct sc_edge *e);

/* sc_edge_outbox_rows - rows waiting in the outbox (0 when none). Any
 * thread (a relaxed atomic; exact on the producer's own thread). */
size_t sc_edge_outbox_rows(const struct sc_edge *e);

/* sc_edge_has_outbox - whether a batch waits in the outbox (it may have 0
 * rows if what was sent cancelled). Producer end. */
bool sc_edge_has_outbox(const struct sc_edge *e);

/*
 * sc_edge_advance - the producer's frontier moves to t (producer end of a
 * tick edge): every frame of the ticks below t has been sent, and later
 * sends are stamped t. Returns
 *   0           a marker t is in the ring after the outbox, or t is not
 *               beyond the frontier (nothing to say: nothing changed);
 *   SC_EFULL    the outbox could not be flushed or the ring has no room
 *               for the marker: nothing changed, try again later (the
 *               consumer's pop is traffic that kicks the producer);
 *   SC_EDEAD    the edge is closed (the outbox released as send does);
 *   SC_EINVAL   e is NULL, or not a tick edge.
 * Never blocks.
 */
int sc_edge_advance(struct sc_edge *e, uint64_t t);

/*
 * sc_edge_end - the producer is gone for good (its unit died): nothing
 * more will come, and once the ring is drained the consumer takes the
 * edge's frontier as past every tick (units/subcircuit.h, "Deaths in tick
 * mode"). Producer end, or whoever buries the dead producer. NULL is a
 * no-op.
 */
void sc_edge_end(struct sc_edge *e);

/* sc_edge_is_ended - whether sc_edge_end was called. Any thread; a
 * consumer that reads true and then finds the ring empty has had every
 * frame. */
bool sc_edge_is_ended(const struct sc_edge *e);

/* sc_edge_frontier - the last frontier advanced to (0 at first).
 * Producer end. 0 for NULL. */
uint64_t sc_edge_frontier(const struct sc_edge *e);

/* sc_edge_is_ticked - whether e is a tick edge. Any thread. */
bool sc_edge_is_ticked(const struct sc_edge *e);

/*
 * sc_edge_poll_stamped - as sc_edge_poll, on a tick edge, with each
 * frame's stamp in stamps[0..*n): a data frame (non-NULL, the caller's)
 * and its tick, or a marker (NULL) and its frontier. SC_EINVAL also when
 * e is not a tick edge.
 */
int sc_edge_poll_stamped(struct sc_edge *e, size_t max, struct sc_batch **out,
			 uint64_t *stamps, size_t *n);

/*
 * sc_edge_poll - take up to `max` frames, oldest first (consumer end).
 * Writes them to out[0..*n) and returns 0 (with *n == 0 when the ring is
 * empty); the caller owns each frame and must sc_batch_release it.
 * SC_EINVAL (NULL, max 0), SC_EDEAD (the edge is closed).
 */
int sc_edge_poll(struct sc_edge *e, size_t max, struct sc_batch **out,
		 size_t *n);

/*
 * sc_edge_close - the consumer is gone (consumer end, or whoever buries
 * the dead consumer): from now on sends return SC_EDEAD. Frames left in
 * the ring are released and counted as undeliverable. Idempotent; NULL is
 * a no-op. May run concurrently with the producer end.
 */
void sc_edge_close(struct sc_edge *e);

/*
 * sc_edge_reopen - open a closed edge again for a rebuilt consumer (a
 * restart, units/runtime.h): what still waits in the ring and the outbox
 * is released first and counted as a close counts it (frames drained and
 * refused), since the rebuild took the integral of everything sent
 * instead. The newest waterline publication, if any, is due to the
 * rebuilt consumer at its first sc_edge_waterline_due (every frame sent
 * before it is in that integral), so it knows its input's waterline
 * from its first step. Returns
 *   0           open and empty;
 *   SC_ESTATE   the edge is open (nothing changed);
 *   SC_EINVAL   e is NULL.
 * Neither end may be in use: the caller owns both.
 */
int sc_edge_reopen(struct sc_edge *e);

/* sc_edge_is_closed - whether the edge is closed now (sc_edge_close was
 * called, and no reopen since). Any thread. */
bool sc_edge_is_closed(const struct sc_edge *e);

/*
 * sc_edge_pending - frames in the ring now (pushed - popped). Any thread,
 * atomics only, never blocks: safe from a watchdog while both ends run.
 */
uint64_t sc_edge_pending(const struct sc_edge *e);

/* sc_edge_capacity - the capacity given at create (frames). */
uint32_t sc_edge_capacity(const struct sc_edge *e);

/*
 * Waterlines (operators/waterline.h). A waterline is a promise about the
 * frames to come: every row of every frame sent from now on has column c
 * >= value[c], for each c in the mask. The producer publishes its
 * stream's waterlines after a step (sc_edge_set_waterline), tagged with
 * the frames pushed so far; the consumer may rely on a publication only
 * once it has popped every frame pushed before it (FIFO: those may hold
 * rows below it), which sc_edge_waterline_due checks. A publication
 * waits while the outbox holds rows (they are not counted as pushed yet):
 * the producer publishes again after a later flush. The consumer keeps
 * one publication pending; a newer one replaces it, which only delays
 * the raise (values never go down).
 */
#define SC_EDGE_WL_COLS 32 /* SC_SCHEMA_MAX_COLS */

struct sc_edge_waterline {
	uint64_t after;			/* frames pushed before it */
	uint32_t mask;			/* columns with a value (0: none) */
	int64_t value[SC_EDGE_WL_COLS]; /* per column in mask */
};

/*
 * sc_edge_set_waterline - publish `values` (indexed by column, read for
 * the columns in mask) as the waterlines of every frame sent from now
 * on. Producer end.
 *   0           published
 *   SC_EFULL    the outbox holds rows: not published (try after a flush)
 *   SC_EINVAL   NULL
 */
int sc_edge_set_waterline(struct sc_edge *e, uint32_t mask,
			  const int64_t *values);

/*
 * sc_edge_waterline_due - the newest publication whose frames before it
 * have all been popped, if one became due since the last call: true and
 * *out; false when none did. Consumer end.
 */
bool sc_edge_waterline_due(struct sc_edge *e, struct sc_edge_waterline *out);

/*
 * sc_edge_moved - frames that `end` moved since *mark (pushed for the
 * producer, popped for the consumer), and set *mark to the current count.
 * A unit keeps one mark per edge end it holds (start it at 0): the sum of
 * what its ends moved in a turn is the turn's progress, and every edge
 * whose end moved names a neighbour to kick. Any thread.
 */
uint64_t sc_edge_moved(const struct sc_edge *e, enum sc_edge_end end,
		       uint64_t *mark);

/* sc_edge_traffic - every counter, each read atomically (the set is not a
 * snapshot: counters may move between reads). Any thread. */
void sc_edge_traffic(const struct sc_edge *e, struct sc_edge_traffic *out);

/*
 * sc_edge_undeliverable - frames and rows that will never reach the
 * consumer: released after a close (kept after a reopen), plus, while
 * the edge is closed, those still in its ring and outbox. Both 0 on an
 * edge never closed. Either pointer may be NULL.
 * Any thread; exact once the producer is quiet.
 */
void sc_edge_undeliverable(const struct sc_edge *e, uint64_t *frames,
			   uint64_t *rows);

#ifdef __cplusplus
}
#endif

#endif /* SC_UNITS_EDGE_H */

/*
 * exchange.h - the producer side of every edge: where a unit's output, or
 * a host's submit, goes.
 *
 * One exchange per (producer, stream): the edges from that producer to
 * every replica of the consumer unit, one each. Sending a batch
 *   1. partitions it by key (sc_batch_route, operators/batch.h) into one
 *      share per edge when the consumer is sharded, so every row of a key
 *      meets the same replica; an unsharded consumer gets the batch whole;
 *   2. sends each share on its edge (sc_edge_send): into the ring, or,
 *      when the ring is full, coalesced into that edge's outbox (edge.h,
 *      "The outbox: why"), or counted undeliverable when the consumer is
 *      dead (the edge is closed).
 * This is the one place both producers go through (Timely keeps routing in
 * one pusher, channels/pushers/exchange.rs; DBSP in its communication
 * operators); they differ only in what they do about a full edge:
 *   - a unit's turn cannot wait, so it sends at once and lets a full edge
 *     keep its share in the outbox; it flushes the outboxes at the start of
 *     every turn (sc_exchange_flush) and stops reading gated input while
 *     one is past its bound (sc_exchange_backpressured, subcircuit.h);
 *   - the host can be told "full", so a submit first asks for room on every
 *     edge (sc_exchange_room) and sends nothing unless every share would
 *     enter its ring: all or nothing, so a refused submit applied no share
 *     and may simply be retried.
 *
 * Traces: what a restart needs (units/runtime.h, "Restarts"). A unit
 * rebuilt after a panic must be fed the integral of everything its input
 * edges carried, and must tell its consumers only what they lack: what
 * its outputs hold now minus what it had sent before it died. Both are
 * the integral of the sends on an edge, which its producer side sees
 * whole. So an exchange may keep, per edge, a trace (struct
 * sc_exchange_trace, storage of the caller's, which outlives the units
 * on either end): the sum of every share accepted on that edge (into the
 * ring, the outbox, or counted undeliverable by a closed edge: a frame
 * refused by a dead consumer is still part of what the rebuilt one must
 * see). A share enters the trace exactly when the edge accepts it: the
 * only allocation (room for one more run) is made before the send, so a
 * failed send leaves the trace as it was and an accepted one can always
 * be recorded. The trace is a few runs, each the consolidated sum of the
 * shares since the one before, merged pairwise while the older run is
 * not more than twice the newer (a binary-counter spine: O(log n) runs,
 * each row merged O(log n) times); a merge that fails (memory, or a
 * partial weight past int64) leaves the runs apart, and the integral
 * sums them wide (sc_batch_sum), so only a settled weight past int64 is
 * an error.
 *
 * Threads: the producer end of every edge, so one thread at a time (the
 * unit's owner, or the host holding the input's lock). A trace is written
 * by whoever holds the producer end, and read by it, or by a thread that
 * owns both ends (the runtime's host at idle).
 */
#ifndef SC_UNITS_EXCHANGE_H
#define SC_UNITS_EXCHANGE_H

#include <stdbool.h>
#include <stdint.h>

#include "operators/batch.h"
#include "units/edge.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The most edges one exchange sends on: the replicas of a sharded
 * consumer (placement.h's SC_PLACEMENT_MAX_SHARDS). */
#define SC_EXCHANGE_MAX SC_BATCH_ROUTE_MAX

/* The integral of what was sent on one edge (see Traces above). Caller
 * storage: sc_exchange_trace_init / _fini. */
struct sc_exchange_trace {
	uint32_t ncols;		/* every share's column count */
	struct sc_batch **runs; /* consolidated sums, oldest (largest) first */
	size_t nruns;		/* runs in use */
	size_t cap;		/* room in runs */
	/* The ids its runs hold, one per symbol word of each row: columns
	 * symmask of table symtab (none while NULL). Set by the runtime
	 * (units/edge_int.h, sc__exchange_trace_set_symbols). */
	struct sc_symtab *symtab;
	uint32_t symmask;
};

struct sc_exchange {
	uint32_t key;		/* routing key columns; used when nedges > 1 */
	uint32_t nedges;	/* 1..SC_EXCHANGE_MAX */
	struct sc_edge **edges; /* producer ends (the edges are borrowed and
				   must outlive the exchange; the array is
				   the exchange's) */
	struct sc_exchange_trace **traces; /* NULL, or per edge (NULL
					      entries: not traced); the
					      array is the exchange's */
};

/*
 * sc_exchange_init - an exchange onto edges[0..nedges), routing by the
 * first `key` columns when nedges > 1 (key is ignored for one edge).
 * Returns 0; SC_EINVAL (NULL, nedges 0 or above SC_EXCHANGE_MAX, a NULL
 * edge, key 0 with nedges > 1); SC_ENOMEM. On failure *x holds nothing.
 */
int sc_exchange_init(struct sc_exchange *x, uint32_t key, uint32_t nedges,
		     struct sc_edge *const *edges);

/* sc_exchange_fini - free what init allocated (not the edges). NULL and a
 * zeroed exchange are allowed. */
void sc_exchange_fini(struct sc_exchange *x);

/*
 * sc_exchange_room - whether a send now would push every share into its
 * ring: every open edge has room for one frame (a closed edge takes its
 * share as undeliverable, so it never makes a send wait). The consumers
 * can only add room meanwhile, so a true answer stays true for the
 * producer that asked.
 */
bool sc_exchange_room(const struct sc_exchange *x);

/*
 * sc_exchange_send - partition b by key and send one share per edge; b is
 * the exchange's from the call (the caller retains it first to keep it).
 * Bit j of *pushed (may be NULL) is set when edge j's share entered its
 * ring now, i.e. the consumer behind it has input to be kicked for.
 * Returns
 *   0            every share was accepted (into a ring, or an outbox);
 *   SC_EDEAD     some share went to a closed edge and was counted
 *                undeliverable; the others were accepted;
 *   SC_EINVAL    x or b NULL, or x not initialized (b released);
 *   SC_EINVAL / SC_ENOMEM / SC_EOVERFLOW / SC_ESCHEMA
 *                routing or a send failed: the shares not yet sent are
 *                released; those already sent stay sent (a unit panics on
 *                these; a failed routing sent nothing).
 */
int sc_exchange_send(struct sc_exchange *x, struct sc_batch *b,
		     uint64_t *pushed);

/* sc_exchange_flush - move every outbox that has room into its ring (a
 * still-full edge keeps its outbox; a closed one drops it as
 * undeliverable). */
void sc_exchange_flush(struct sc_exchange *x);

/* sc_exchange_backpressured - whether some edge's outbox is past its bound
 * (sc_edge_backpressured). */
bool sc_exchange_backpressured(const struct sc_exchange *x);

/* sc_exchange_trace_init / _fini - an empty trace of rows of ncols
 * columns; fini releases its runs. Neither fails; NULL is allowed. */
void sc_exchange_trace_init(struct sc_exchange_trace *t, uint32_t ncols);
void sc_exchange_trace_fini(struct sc_exchange_trace *t);

/*
 * sc_exchange_trace_integral - the sum of every share the trace recorded,
 * as a new batch (*out, the caller's; the empty batch when none).
 * Returns 0; SC_ENOMEM; SC_EOVERFLOW (a row's total leaves int64);
 * SC_EINVAL (NULL). The thread that owns the producer end.
 */
int sc_exchange_trace_integral(const struct sc_exchange_trace *t,
			       struct sc_batch **out);

/*
 * sc_exchange_set_traces - record every share accepted on edge j into
 * traces[j] from now on (NULL entries, or traces NULL: edge j is not
 * traced). The traces are borrowed: they must outlive the exchange.
 * Returns 0, SC_ENOMEM (nothing changed), SC_EINVAL.
 */
int sc_exchange_set_traces(struct sc_exchange *x,
			   struct sc_exchange_trace *const *traces);

/*
 * sc_exchange_correct - make every traced edge's integral equal its share
 * of `target` (borrowed): route target as a send would, and send on each
 * traced edge j the correction share_j - trace_j (nothing when it is
 * empty), recorded in the trace like any send. A rebuilt unit calls it
 * once with what its outputs hold, so a consumer ends with exactly its
 * share whatever the dead unit had sent. Returns what sc_exchange_send
 * returns (0, SC_EDEAD when a correction went to a closed edge: it is in
 * the trace all the same), or SC_ENOMEM / SC_EOVERFLOW computing a
 * correction (the edges after it get none).
 */
int sc_exchange_correct(struct sc_exchange *x, const struct sc_batch *target);

#ifdef __cplusplus
}
#endif

#endif /* SC_UNITS_EXCHANGE_H */

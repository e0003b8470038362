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
 * Threads: the producer end of every edge, so one thread at a time (the
 * unit's owner, or the host holding the input's lock).
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

struct sc_exchange {
	uint32_t key;		/* routing key columns; used when nedges > 1 */
	uint32_t nedges;	/* 1..SC_EXCHANGE_MAX */
	struct sc_edge **edges; /* producer ends (the edges are borrowed and
				   must outlive the exchange; the array is
				   the exchange's) */
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

#ifdef __cplusplus
}
#endif

#endif /* SC_UNITS_EXCHANGE_H */

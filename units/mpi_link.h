/*
 * mpi_link.h - remote edges: wire frames (units/wire.h) between process
 * ranks over Open MPI point-to-point messages, with credits, heartbeats
 * and a termination wave.
 *
 * Built only when MPI is found (pkg-config ompi-c, or CMake's FindMPI)
 * into its own library, sc_mpi; libsubcirc never needs MPI. This header
 * does not include <mpi.h>, so a program can include it without MPI's
 * flags; it links sc_mpi and MPI.
 *
 * What it is. Every rank builds the same list of remote edges (the
 * program is SPMD): edge id, producer rank, consumer rank. The producer
 * hands a frame to sc_mpi_link_send, the consumer takes it from
 * sc_mpi_link_recv, and sc_mpi_link_progress moves bytes: it posts
 * MPI_Isend for frames within credit, keeps receives of any source
 * posted ahead in slots of 4 KiB (a larger frame is announced there and
 * sent on a second duplicate of the communicator, received from its
 * source when the announcement is read: mpi_link.c, SLOT), and
 * completes requests with MPI_Test*: no call of this module ever waits
 * on the network. Posted receives, where the link first polled
 * MPI_Improbe and received with MPI_Imrecv, cut a 1-row frame's one-way
 * latency in bench_mpi from 0.95-1.03 us to 0.62-0.63 us (MPI's
 * ping-pong 0.24-0.26 us in the same runs).
 *
 * Threads: why one owner (MPI_THREAD_FUNNELED). Every call on a link is
 * made by one thread, the one that initialised MPI, so the link needs
 * MPI_THREAD_FUNNELED (sc_mpi_link_create checks it) and never MULTIPLE:
 * one owner keeps the request tables, queues and counters without locks,
 * and Open MPI 4's MPI_THREAD_MULTIPLE takes its own locks on every call
 * and is not supported by every transport, so spreading MPI calls over
 * workers would buy contention, not bandwidth. Workers never call MPI:
 * in the runtime (the plan at the end) a worker's frame goes into the
 * edge's outbox as for a local edge, and the thread that owns the link
 * drains it; that thread is the one that blocks, never a worker.
 *
 * Order and gaps. MPI keeps the order of messages between two ranks on
 * one communicator and tag (non-overtaking), and each edge has one
 * producer and one consumer, so one tag for all data keeps every edge's
 * order (a large frame's announcement is in that order, and its frame is
 * received on the second communicator before anything later from its
 * source is handled). The link stamps each frame with its edge's next sequence
 * number (bytes 24..31 of the header, wire.h) as it leaves the outbox, and the
 * consumer checks it with sc_wire_seq_check on arrival: a gap or a
 * duplicate breaks the edge (SC_ESTATE from recv), never merges.
 *
 * Credits (backpressure across ranks). Both ends know the window W
 * (opts.credits): the producer starts with W credits, spends one per
 * frame it puts on the wire, and otherwise keeps the frame in its outbox
 * (opts.outbox frames; beyond that send is SC_EFULL, nothing dropped).
 * The consumer's inbox therefore never holds more than W frames of an
 * edge. When the consumer's program takes frames out, their credits go
 * back in one small message once ceil(W/2) have gathered, or when the
 * inbox is empty. No deadlock: a producer without credit has W frames
 * sent; they are in the consumer's inbox (its program's choice to leave
 * them) or were taken, and then at least ceil(W/2) credits are on their
 * way back.
 *
 * Idle across ranks (sc_mpi_link_quiet): the four-counter method
 * (Mattern, "Algorithms for distributed termination detection", 1987)
 * in waves of MPI_Iallreduce. Each wave sums, over all ranks, the frames
 * sent and received (counters that only grow) and an "active" flag: the
 * caller says whether its rank is locally passive (no unit queued or
 * running, no submission pending) and the link adds its own outbox and
 * inbox. Every rank starts wave k+1 only after wave k completed there,
 * which is after every rank contributed to wave k; so all snapshots of
 * wave k precede all of wave k+1. The link says idle when two
 * consecutive waves agree: S_k = R_k = S_k+1 = R_k+1 and no rank active
 * in either. Why that is correct: take a moment T after all wave-k
 * snapshots and before any wave-k+1 one. Frames sent by T are at most
 * S_k+1 (counters grow) and frames received by T at least R_k, so
 * S(T) <= S_k+1 = R_k <= R(T) <= S(T): nothing in flight at T. Every rank
 * was passive at both its snapshots and received nothing in between (its
 * count did not move), and only a received frame makes a passive rank
 * active, so every rank was passive at T: the circuit was quiet at T, and
 * quiet is stable. All ranks see the same sums, so all say idle on the
 * same wave. Credits and heartbeats are not counted: they never make a
 * passive rank active (a credit matters only to a non-empty outbox).
 * What this needs of the caller: a rank that says "passive" must not
 * make work without a frame arriving (the host does not submit while it
 * waits for idle).
 *
 * Leaving. A message must never reach a rank after it freed the
 * communicator (sc_mpi_link_destroy says why), so destroy is
 * collective: each rank's last message to a peer says it leaves (a peer
 * that has it no longer expects heartbeats from it), and a rank frees
 * its communicators only once every live peer's last message came.
 *
 * Failure is local. MPI_ERRORS_RETURN is set on the link's communicator,
 * so an MPI error comes back as SC_EIO (with MPI's words) instead of
 * aborting. But a peer that dies is seldom an MPI error: Open MPI 4
 * without ULFM keeps buffering sends to it. So every rank sends every
 * other a heartbeat each opts.heartbeat_ns, and a peer not heard from
 * (any message counts) for opts.dead_ns is dead for good: its edges
 * close, frames queued for it are counted undeliverable, send on them is
 * SC_EDEAD, recv from them drains what arrived then says SC_EDEAD, and
 * quiet says SC_EDEAD (a wave cannot complete without it). The other
 * side of that rule: a rank must call progress (or quiet) more often
 * than every dead_ns, or its peers will take its silence for death. Under
 * mpirun, a rank's death ends the whole job unless mpirun is told
 * otherwise: `--mca orte_enable_recovery 1 --mca
 * orte_abort_on_non_zero_status 0` (Open MPI 4).
 *
 * Ownership: a frame given to send belongs to the link from then on (the
 * buffer is taken from the sc_wire_buf, which is left empty); a frame
 * from recv belongs to the caller (its sc_wire_buf now holds it).
 *
 * Plugging into the runtime (for the integration; nothing below exists
 * yet in units/):
 *   - Producer side, units/exchange.c. A stream cut into an edge whose
 *     consumer's rank (sc_placement_rank_of) is not this one gets, in
 *     place of the local sc_edge, a remote edge: the exchange keeps the
 *     edge's outbox exactly as now (coalesced by Z-set addition, bounded,
 *     SC_EFULL to the host), and where it would sc_edge_push a frame it
 *     instead encodes it (sc_wire_encode, the unit's schema and the
 *     graph's symbol table) and calls sc_mpi_link_send; SC_EFULL from the
 *     link means "keep it in the outbox", as a full local edge does. The
 *     edge's readiness test (has it room?) becomes sc_mpi_link_room.
 *   - Consumer side, units/subcircuit.c. A unit whose input comes from a
 *     remote producer reads, at the start of its turn where it drains its
 *     local edges, the frames sc_mpi_link_recv gives for that edge,
 *     decodes each (sc_wire_decode with one sc_wire_rx per remote edge, on
 *     the runtime's symbol table) and sums them into the input as a local
 *     frame. The unit is kicked when the link's progress thread sees a
 *     frame arrive for it (a callback per edge to add:
 *     sc_mpi_link_on_frame), as a local push kicks it.
 *   - The MPI runtime (units/mpi_runtime.c) creates the link after
 *     MPI_Init_thread, builds only its own rank's replicas, runs
 *     sc_mpi_link_progress on one thread (the host's, or a dedicated one
 *     if the host blocks: then MPI_THREAD_SERIALIZED), and
 *     sc_runtime_wait_idle on every rank loops sc_mpi_link_quiet with
 *     "passive" = the local pool is idle.
 */
#ifndef SC_UNITS_MPI_LINK_H
#define SC_UNITS_MPI_LINK_H

#ifdef __cplusplus
extern "C" {
#endif

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "operators/error.h"
#include "units/wire.h"

struct sc_mpi_link;

struct sc_mpi_link_opts {
	uint32_t credits;	/* W: frames in flight per edge, >= 1 */
	uint32_t outbox;	/* frames kept beyond the credit, >= 1 */
	uint64_t heartbeat_ns;	/* a heartbeat to each peer this often */
	uint64_t dead_ns;	/* a peer silent this long is dead;
				 * > heartbeat_ns */
	uint64_t collective_ns; /* a gather not done in this long is
				 * SC_ETIMEDOUT; 0: no deadline */
};

/*
 * sc_mpi_link_opts_default - 32 credits (with 8, a credit message went
 * back every 4 frames and bench_mpi's 256-row stream ran at half the
 * rate), 64 frames of outbox, a heartbeat each 100 ms, and a peer dead
 * after 2 s of silence, and a gather given 60 s (a live peer that never
 * joins it, a program bug, is then an error that says so, not a hang).
 */
void sc_mpi_link_opts_default(struct sc_mpi_link_opts *o);

/* Counters of one rank, all since create. */
struct sc_mpi_link_stats {
	uint64_t frames_sent;	/* data frames put on the wire */
	uint64_t frames_recv;	/* data frames arrived */
	uint64_t bytes_sent;	/* their bytes */
	uint64_t bytes_recv;	/* their bytes */
	uint64_t credit_waits;	/* progress passes that left a frame in
				 * an outbox for want of credit */
	uint64_t undeliverable; /* frames dropped for a dead peer */
	uint64_t credit_msgs;	/* credit messages sent */
	uint64_t waves;		/* termination waves completed */
};

/*
 * sc_mpi_link_create - a link on a duplicate of MPI_COMM_WORLD and one
 * of that (for large frames), errors set to return. MPI must be initialised
 * with at least MPI_THREAD_FUNNELED, and the calling thread must be the one
 * that did. Returns 0          *out; SC_EINVAL  NULL, credits or outbox 0,
 * dead_ns <= heartbeat_ns; SC_ESTATE  MPI not initialised, or below
 * MPI_THREAD_FUNNELED; SC_EIO     an MPI call failed (MPI's words in the
 * message); SC_ENOMEM.
 */
int sc_mpi_link_create(const struct sc_mpi_link_opts *o,
		       struct sc_mpi_link **out);

/*
 * sc_mpi_link_destroy - leave and free the link. Collective: it sends
 * every live peer a last message and, progressing (receiving, no
 * heartbeat), waits until every live peer's last message has come and
 * every request with a live peer is done; a peer still silent after
 * dead_ns counts as dead, and after collective_ns (if not 0) it waits
 * no longer. Why it waits: Open MPI 4 gives the next communicator the
 * id of a freed one, and puts a message that reaches a rank after it
 * freed the communicator it was sent on into that next one at its old
 * sequence number, where it takes the place of the new one's message of
 * that number, which is lost (a frame, a credit, a wave's or
 * MPI_Comm_idup's message: the next link breaks or hangs). Then frames
 * not yet sent are dropped, requests still pending are freed (MPI
 * completes them on its own), and the communicators are freed, but only
 * if every peer left cleanly, none dead and no collective left to MPI
 * (a timed-out gather, a wave in flight); otherwise they are kept for
 * good, so that their ids are never reused. MPI stays initialised.
 * NULL allowed.
 */
void sc_mpi_link_destroy(struct sc_mpi_link *l);

/* This rank and the number of ranks. */
int sc_mpi_link_rank(const struct sc_mpi_link *l);
int sc_mpi_link_size(const struct sc_mpi_link *l);

/*
 * sc_mpi_link_add_edge - declare remote edge `edge` from rank `producer`
 * to rank `consumer` (different ranks; every rank declares the same
 * edges in the same order, before the first progress). Edges that do
 * not touch this rank are kept but carry nothing here. Returns 0;
 * SC_EINVAL (a rank out of range or the same twice, an id already
 * declared); SC_ESTATE (after the first progress); SC_ENOMEM.
 */
int sc_mpi_link_add_edge(struct sc_mpi_link *l, uint32_t edge, int producer,
			 int consumer);

/*
 * sc_mpi_link_send - hand the frame in `frame` (a whole wire frame of
 * this edge, sc_wire_encode's) to the producer end of `edge`. Returns
 *   0             the link owns the bytes; *frame is left empty;
 *   SC_EFULL      the outbox is full (no credit and opts.outbox frames
 *                 waiting): try after progress; frame unchanged;
 *   SC_EDEAD      the consumer's rank is dead; frame unchanged;
 *   SC_EINVAL     NULL, no such edge, not this rank's end, or a frame
 *                 sc_wire_peek refuses or of another edge.
 */
int sc_mpi_link_send(struct sc_mpi_link *l, uint32_t edge,
		     struct sc_wire_buf *frame);

/*
 * sc_mpi_link_room - whether sc_mpi_link_send on `edge` would take a
 * frame now (credit, or room in the outbox): the "has it room?" test of
 * a remote edge. False for an edge that is not this rank's producer end
 * or whose consumer is dead.
 */
bool sc_mpi_link_room(const struct sc_mpi_link *l, uint32_t edge);

/*
 * sc_mpi_link_recv - the next frame of `edge` at its consumer end, in
 * order. Returns
 *   0          *out holds it (its old bytes freed); a credit goes back;
 *   SC_EEMPTY  none arrived yet;
 *   SC_EDEAD   none, and the producer's rank is dead;
 *   SC_ESTATE  the edge broke on a sequence gap (the message says which);
 *   SC_EINVAL  NULL, no such edge, or not this rank's end.
 */
int sc_mpi_link_recv(struct sc_mpi_link *l, uint32_t edge,
		     struct sc_wire_buf *out);

/*
 * sc_mpi_link_progress - move what can move now: complete finished
 * requests, receive what arrived, send within credit, return credits,
 * send heartbeats and declare silent peers dead. Never waits. Returns 0,
 * SC_EIO (an MPI call failed), SC_ENOMEM.
 */
int sc_mpi_link_progress(struct sc_mpi_link *l);

/*
 * sc_mpi_link_quiet - one step of the termination detection (the top):
 * progress, then start or test a wave. Every rank must keep calling it
 * until it says idle. `passive`: this rank has no local work. Returns
 *   0          *idle: true when the whole placed circuit is quiet (the
 *              same answer on every rank, on the same wave);
 *   SC_EDEAD   a peer is dead: no wave can complete;
 *   SC_EIO, SC_ENOMEM.
 */
int sc_mpi_link_quiet(struct sc_mpi_link *l, bool passive, bool *idle);

/*
 * sc_mpi_link_gather - every rank's bytes buf[0..len) to rank 0, the link
 * progressing meanwhile (frames, credits, heartbeats), so a peer that
 * dies is found rather than waited for. Collective: every rank calls it,
 * in the same order. On rank 0, *parts is one block holding the ranks'
 * bytes one after the other and *lens their lengths (size entries), both
 * the caller's to free; elsewhere both are NULL. Returns
 *   0          done;
 *   SC_EDEAD   a peer is dead: the gather cannot complete (its request
 *              is left to MPI);
 *   SC_ETIMEDOUT  not done within opts.collective_ns: some rank did not
 *              join it (the message says which step; the request is
 *              left to MPI with its buffers, buf among them: keep buf
 *              alive; the link is unusable for collectives);
 *   SC_EINVAL  NULL, or more than 2 GiB;
 *   SC_EIO, SC_ENOMEM.
 */
int sc_mpi_link_gather(struct sc_mpi_link *l, const void *buf, size_t len,
		       uint8_t **parts, size_t **lens);

/* sc_mpi_link_peer_dead - whether `rank` was declared dead here. */
bool sc_mpi_link_peer_dead(const struct sc_mpi_link *l, int rank);

/* sc_mpi_link_stats - this rank's counters. */
void sc_mpi_link_stats(const struct sc_mpi_link *l,
		       struct sc_mpi_link_stats *out);

#ifdef __cplusplus
}
#endif

#endif /* SC_UNITS_MPI_LINK_H */

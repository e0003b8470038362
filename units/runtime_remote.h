/*
 * runtime_remote.h - the runtime's side of a circuit placed across
 * process ranks: an abstract transport the runtime calls, and the few
 * runtime calls a transport makes. libsubcirc never needs MPI; sc_mpi
 * (units/mpi_runtime.h) implements this over Open MPI.
 *
 * SPMD. Every rank builds the same graph and placement and creates a
 * runtime with opts.remote set. The runtime numbers instances and makes
 * every edge as before, on every rank, but runs only this rank's
 * replicas (sc_placement_rank_of): another rank's replica is a proxy
 * unit that never touches an edge, so a kick it gets costs one empty
 * turn. An edge whose ends are on different ranks (a cut edge) stays a
 * local bounded sc_edge on both ranks:
 *   - on the producer's rank the transport is its consumer end: it polls
 *     frames when it has room to send them (credits), and calls
 *     sc_runtime_remote_popped so the producer (or a host waiting in
 *     submit_wait) learns of the room, as a local consumer's pop does;
 *   - on the consumer's rank the transport is its producer end: it sends
 *     what arrived only while the edge has room (so a full edge leaves the
 *     frames with the transport, which then grants no credit: backpressure
 *     across ranks) and calls sc_runtime_remote_pushed to kick the
 *     consumer.
 * The host is on rank 0 (SC_RUNTIME_HOST_RANK): a submission to an input
 * placed elsewhere goes into its host edge there, a cut edge like any
 * other; a submit on another rank is refused (SC_ESTATE).
 *
 * What is collective. sc_runtime_wait_idle (and so shutdown and
 * destroy) and sc_runtime_integral must be called by every rank, in the
 * same order: wait_idle returns on every rank when the whole placed
 * circuit is quiet (the transport's termination detection, with
 * "passive" from sc_runtime_remote_passive), and integral gathers the
 * replicas' integrals of an output to rank 0 (another rank gets the sum
 * of its own replicas' part).
 *
 * Failure is local. When the transport finds a rank dead it calls
 * sc_runtime_remote_rank_dead: that rank's proxies panic on their next
 * turn, so the existing rules apply (their input edges close and count
 * what they refuse as undeliverable, sc_runtime_upstream_dead names them,
 * wait_idle says SC_EPANIC); its wait_idle then reports local quiet only,
 * since no termination wave can complete without the dead rank.
 *
 * Not across ranks (sc_runtime_create refuses with SC_EINVAL): tick mode,
 * restart policies, workers = 0 (the host would run the turns, and a
 * transport's thread cannot).
 */
#ifndef SC_UNITS_RUNTIME_REMOTE_H
#define SC_UNITS_RUNTIME_REMOTE_H

#ifdef __cplusplus
extern "C" {
#endif

#include <stdbool.h>
#include <stdint.h>

#include "operators/batch.h"
#include "units/edge.h"

struct sc_runtime;

/* The rank the host runs on. */
#define SC_RUNTIME_HOST_RANK 0

/* One cut edge, as sc_runtime_create declares it to the transport. */
struct sc_runtime_cut {
	uint32_t id;	      /* 0.. in edge order: the same on every rank */
	struct sc_edge *edge; /* this rank's copy; the runtime's */
	uint32_t from;	      /* producer instance, or SC_SUBCIRCUIT_HOST */
	uint32_t to;	      /* consumer instance */
	int from_rank;	      /* the producer's rank (the host's: 0) */
	int to_rank;	      /* the consumer's, != from_rank */
	int stream;	      /* the graph stream it carries (its schema) */
};

struct sc_runtime_remote_ops {
	/* cut - declare cut edge c (every cut edge, in id order, also those
	 * that touch another pair of ranks). During create; 0 or an error,
	 * which fails the create. */
	int (*cut)(void *ctx, const struct sc_runtime_cut *c);
	/* start - the runtime is built and its workers run: move frames
	 * from now on. 0 or an error, which fails the create. */
	int (*start)(void *ctx, struct sc_runtime *rt);
	/* wait_idle - until the whole placed circuit is quiet (0), a peer
	 * is dead and this rank is quiet (SC_EDEAD), or timeout_ns passed
	 * (SC_ETIMEDOUT; 0: for ever). Host thread. */
	int (*wait_idle)(void *ctx, uint64_t timeout_ns);
	/* gather - the sum over ranks of `local` (borrowed) into *out on
	 * rank 0; *out is local's copy elsewhere. Host thread, at idle. */
	int (*gather)(void *ctx, int output, const struct sc_batch *local,
		      struct sc_batch **out);
	/* stop - move nothing more: before the runtime frees its edges. */
	void (*stop)(void *ctx);
};

struct sc_runtime_remote {
	int rank;   /* this process's rank */
	int nranks; /* the placement's sc_placement_ranks must equal it */
	const struct sc_runtime_remote_ops *ops;
	void *ctx;
};

/* sc_runtime_remote_local - whether instance `inst` runs on this rank
 * (the host, SC_SUBCIRCUIT_HOST, runs on rank 0). Any thread. */
bool sc_runtime_remote_local(const struct sc_runtime *rt, uint32_t inst);

/*
 * sc_runtime_remote_passive - this rank's part of the termination test:
 * no unit queued or running, and every cut edge whose producer is here
 * holds no frame in its ring and no row in its outbox. Stable once true
 * while no frame arrives and the host submits nothing. The transport's
 * thread.
 */
bool sc_runtime_remote_passive(struct sc_runtime *rt);

/* sc_runtime_remote_popped - the transport took frames from a cut edge
 * whose producer is `from` (a unit here, or the host): kick it, or wake a
 * host in submit_wait. The transport's thread. */
void sc_runtime_remote_popped(struct sc_runtime *rt, uint32_t from);

/* sc_runtime_remote_pushed - the transport pushed frames on a cut edge
 * into `to` (a unit here): kick it. The transport's thread. */
void sc_runtime_remote_pushed(struct sc_runtime *rt, uint32_t to);

/* sc_runtime_remote_frame_done - the transport is done with frame b
 * (owned), which it polled from cut edge e: drop the edge's holds on its
 * symbol ids and release it. */
void sc_runtime_remote_frame_done(struct sc_edge *e, struct sc_batch *b);

/* sc_runtime_remote_rank_dead - `rank` is dead: its replicas are dead
 * here too (see Failure above). Idempotent. The transport's thread. */
void sc_runtime_remote_rank_dead(struct sc_runtime *rt, int rank);

#ifdef __cplusplus
}
#endif

#endif /* SC_UNITS_RUNTIME_REMOTE_H */

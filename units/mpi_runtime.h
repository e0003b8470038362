/*
 * mpi_runtime.h - a runtime (units/runtime.h) whose placement spans MPI
 * ranks: the transport of units/runtime_remote.h over units/mpi_link.h.
 * Part of sc_mpi (built only when MPI is found); no <mpi.h> here.
 *
 * Every rank of an SPMD program builds the same graph and placement
 * (ranks:N, sharded:K over ranks, or manual ranks) and calls
 * sc_mpi_runtime_create; each runs its own replicas with its own pool,
 * and one link thread per rank carries the cut edges: it is the consumer
 * end of a cut edge on the producer's rank (it polls a frame only when
 * the link has credit for it, encodes it with units/wire.h and sends it)
 * and the producer end on the consumer's rank (it takes a frame from the
 * link only while the edge has room, decodes it and pushes it, kicking
 * the consumer). So a full edge on the consumer's side holds frames in
 * the link, which returns no credit, and the producer's edge fills and
 * its outbox coalesces, exactly as for a local edge: backpressure across
 * ranks with nothing dropped and nobody spinning.
 *
 * Thread level: MPI_THREAD_SERIALIZED. The link thread is not the thread
 * that initialised MPI (so FUNNELED is not enough), and it is the only
 * thread that calls MPI while the runtime lives: the host's wait_idle and
 * integral hand their part (termination waves, the gather) to it and
 * wait. One caller at a time is what SERIALIZED promises; MULTIPLE would
 * make Open MPI lock every call for concurrency nobody uses. Why a
 * thread of its own rather than the host's: a host blocked in its own
 * code or in submit_wait must not stop frames, credits or heartbeats
 * (a silent rank is taken for dead after opts.dead_ns).
 *
 * Collective calls (every rank, same order): sc_runtime_wait_idle,
 * sc_runtime_integral, sc_runtime_shutdown, and sc_mpi_runtime_destroy.
 * The host submits on rank 0 only (units/runtime_remote.h). While the
 * runtime lives, the program makes no MPI call of its own.
 *
 * Idle: sc_runtime_wait_idle loops the link's four-counter waves
 * (units/mpi_link.h) with passive = sc_runtime_remote_passive (no unit
 * queued or running here, no frame waiting in a cut edge for the link);
 * the frames the link holds count as active by the link's own rule.
 * Failure: a peer the link declares dead makes its replicas dead here
 * (units/runtime_remote.h, Failure); wait_idle then waits for this
 * rank's own quiet and says SC_EPANIC with the proxy's record.
 */
#ifndef SC_UNITS_MPI_RUNTIME_H
#define SC_UNITS_MPI_RUNTIME_H

#ifdef __cplusplus
extern "C" {
#endif

#include "units/mpi_link.h"
#include "units/runtime.h"

struct sc_mpi_runtime;

/*
 * sc_mpi_runtime_create - the link (lo, or sc_mpi_link_opts_default's
 * when NULL) and a runtime of g placed by p (opts as for
 * sc_runtime_create, opts->remote ignored) on this rank. MPI must be
 * initialised with MPI_THREAD_SERIALIZED or more, from this thread.
 * Collective. Returns
 *   0          *out;
 *   SC_ESTATE  MPI not initialised, or below MPI_THREAD_SERIALIZED;
 *   SC_EINVAL  p spans another number of ranks than MPI_COMM_WORLD,
 *              workers 0, tick mode or restarts (units/runtime_remote.h),
 *              or what sc_runtime_create refuses;
 *   SC_EIO, SC_ENOMEM.
 */
int sc_mpi_runtime_create(struct sc_graph *g, const struct sc_placement *p,
			  const struct sc_runtime_opts *opts,
			  const struct sc_mpi_link_opts *lo,
			  struct sc_mpi_runtime **out);

/* sc_mpi_runtime_destroy - destroy the runtime (a collective shutdown),
 * stop the link thread, free the link. NULL allowed. */
void sc_mpi_runtime_destroy(struct sc_mpi_runtime *m);

/* The runtime: submit (rank 0), wait_idle, integral and the rest. */
struct sc_runtime *sc_mpi_runtime_rt(struct sc_mpi_runtime *m);

/* This rank and the number of ranks. */
int sc_mpi_runtime_rank(const struct sc_mpi_runtime *m);
int sc_mpi_runtime_size(const struct sc_mpi_runtime *m);

/* sc_mpi_runtime_stats - this rank's link counters (frames and bytes
 * sent and received, credits waited on), read on the host thread while
 * the link thread runs: each counter is a plain word, so a figure may be
 * a moment old; exact at idle. */
void sc_mpi_runtime_stats(struct sc_mpi_runtime *m,
			  struct sc_mpi_link_stats *out);

#ifdef __cplusplus
}
#endif

#endif /* SC_UNITS_MPI_RUNTIME_H */

/*
 * nexmark_par.h - the Nexmark generator (nexmark.h) over several threads,
 * its chunks handed out in the order of the stream.
 *
 * Event n depends on (seed, n) alone, so the stream cuts into chunks of
 * `chunk` events that threads make independently: chunk i (events
 * i*chunk .. i*chunk + chunk - 1) is made by thread i % threads, each
 * with a generator of its own sought to the chunk's first event
 * (sc_nexmark_seek), into one batch per stream. The caller takes the
 * chunks strictly in order (sc_nexmark_par_next), so what it submits is
 * exactly what one generator would have made: the same events, in the
 * same order, cut the same way; only the symbol ids may differ (they
 * follow the order in which texts are interned), never the texts.
 *
 * Each thread works at most `ahead` chunks ahead of the caller (two: one
 * the caller holds, one being made), so memory stays bounded however
 * fast the threads are, and the threads wait when the caller is slower.
 *
 * Who holds the ids. A chunk holds one reference on every fresh text its
 * rows name, from its making to sc_nexmark_par_done: the caller feeds
 * the chunk's batches (the runtime then holds what it keeps, symbol.h)
 * and gives the chunk back, which drops them. The generators' bounded
 * sets (names, cities, channels) live until destroy.
 *
 * Threads: one caller thread calls next/done; the threads are the
 * module's own. The symbol table is shared (it is thread safe).
 */
#ifndef SC_BENCH_WORKLOADS_NEXMARK_PAR_H
#define SC_BENCH_WORKLOADS_NEXMARK_PAR_H

#include <stddef.h>
#include <stdint.h>

#include "bench/workloads/nexmark.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One chunk, owned by the module until sc_nexmark_par_done. */
struct sc_nexmark_chunk {
	uint64_t first;	 /* number of its first event */
	uint64_t events; /* how many (the last chunk may be short) */
	/* One batch per stream kept (the `kinds` of create), NULL when the
	 * chunk has no row of it. The caller may take a batch (set it NULL
	 * after taking its reference); done releases those left. */
	struct sc_batch *b[SC_NEXMARK_KINDS];
	uint64_t cpu_ns; /* the making thread's CPU time spent on it */
};

struct sc_nexmark_par;

/*
 * sc_nexmark_par_create - start `threads` threads making the stream of
 * options `o` into `symbols` (borrowed: it must outlive the module), in
 * chunks of `chunk` events, `total` events in all (0: no end), keeping
 * the rows of the streams whose bit (1 << kind) is set in `kinds`.
 * Returns:
 *   0            *out is the module, its threads at work
 *   SC_EINVAL    an argument NULL, threads 0 or above 256, chunk 0, kinds
 *                0 or above 7, or options sc_nexmark_create refuses (the
 *                message names what)
 *   SC_ENOMEM    no memory, or a thread could not be started (nothing left
 *                running)
 */
int sc_nexmark_par_create(const struct sc_nexmark_opts *o,
			  struct sc_symtab *symbols, unsigned threads,
			  uint64_t chunk, uint64_t total, uint32_t kinds,
			  struct sc_nexmark_par **out);

/*
 * sc_nexmark_par_next - the next chunk in the stream's order, waiting for
 * its thread to make it. Give it back with sc_nexmark_par_done before
 * asking for the next. Returns:
 *   0            *out is the chunk
 *   1            the stream is over (`total` events handed out); *out NULL
 *   SC_EINVAL    p or out NULL, or the last chunk not given back
 *   SC_ENOMEM, SC_EOVERFLOW   making the chunk failed (the message says
 *                where); the stream cannot go on, the same error again
 */
int sc_nexmark_par_next(struct sc_nexmark_par *p,
			struct sc_nexmark_chunk **out);

/*
 * sc_nexmark_par_done - give back the chunk next handed out: its batches
 * left in it are released, its texts' references dropped, and its slot
 * goes back to its thread. NULL c is a no-op.
 */
void sc_nexmark_par_done(struct sc_nexmark_par *p, struct sc_nexmark_chunk *c);

/*
 * sc_nexmark_par_cpu_ns - the CPU time every thread has spent making
 * chunks so far (those not yet handed out included). Thread safe.
 */
uint64_t sc_nexmark_par_cpu_ns(struct sc_nexmark_par *p);

/*
 * sc_nexmark_par_destroy - stop the threads (a chunk being made is
 * finished first), drop every chunk not handed out, and free the module.
 * A chunk handed out and not given back is given back here. NULL is a
 * no-op.
 */
void sc_nexmark_par_destroy(struct sc_nexmark_par *p);

#ifdef __cplusplus
}
#endif

#endif /* SC_BENCH_WORKLOADS_NEXMARK_PAR_H */

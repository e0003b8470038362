/*
 * runtime_int.h - library-internal: the runtime's state (struct
 * sc_runtime) and the functions its files share.
 *
 * The runtime is split by idea, one file each:
 *   runtime.c          create, destroy, the host's reads (integrals, the
 *                      idle check, upstream deaths), stats and shutdown;
 *   runtime_build.c    units and edges from a placement;
 *   runtime_host.c     submission, the waits for room and for idle, and
 *                      the turns a host thread runs when workers = 0;
 *   tick.c             tick mode, host and unit side (units/tick_int.h);
 *   runtime_restart.c  restart policies and rebuilds;
 *   runtime_remote.c   another rank's replicas (units/runtime_remote.h);
 *   runtime_late.c     lateness at submit (units/runtime_late_int.h).
 *
 * Who owns what. Every field below says which thread writes it and what
 * guards it, in the words:
 *   "fixed"        written by sc_runtime_create (the host thread, before
 *                  any turn runs or any other thread sees the runtime),
 *                  read-only afterwards, so any thread may read it;
 *   "in->mu"       guarded by that input's lock;
 *   "all inputs"   written by a host thread holding every input's lock
 *                  (sc__rt_hold_inputs) with the executor idle, so no
 *                  turn runs and no submit can kick one meanwhile;
 *   "atomic"       read and written by any thread, as the field says;
 *   "host"         the host thread that calls the function named.
 */
#ifndef SC_UNITS_RUNTIME_INT_H
#define SC_UNITS_RUNTIME_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "operators/base_int.h"
#include "operators/symbol_int.h"
#include "units/analysis.h"
#include "units/exchange.h"
#include "units/runtime.h"
#include "units/runtime_late_int.h"
#include "units/subcircuit.h"
#include "units/subcircuit_int.h"

/* The producer of a host edge, in rt_edge.from and the remote calls. */
#define RT_HOST SC_SUBCIRCUIT_HOST

/* One edge and its ends. Fixed, but for what the edge and the trace
 * synchronise themselves. */
struct rt_edge {
	struct sc_edge *edge; /* SPSC: its producer end is the producer's
				 (a turn, or the host under in->mu), its
				 consumer end the consumer's turn */
	uint32_t from;	      /* producer instance, or RT_HOST */
	uint32_t to;	      /* consumer instance */
	int stream;	      /* the stream it carries */
	struct sc_exchange_trace *trace; /* what was sent on it, when an end
					    may be rebuilt; else NULL.
					    Written by the producer's sends,
					    read at a rebuild (all inputs) */
};

/* One executor unit: a replica of a placement unit. */
struct rt_inst {
	uint32_t unit;		   /* fixed: placement unit */
	uint32_t shard;		   /* fixed: replica index */
	struct sc_subcircuit *sub; /* fixed, or rewritten by a rebuild (all
				      inputs); owned by the executor;
				      dangling once DEAD; NULL for another
				      rank's replica */
	struct sc__unit_figures figures; /* atomic: written by its turns
					    (and its rebuilds' turns), read
					    by anyone; outlives the unit */
	char name[SC_UNIT_NAME_MAX];	 /* fixed: as the unit's */
	/* Port lists: fixed. Built at create, freed then unless the unit
	 * may be rebuilt (its rebuild makes the same ports, all inputs). */
	struct sc_subcircuit_in *in;
	size_t nin, cap_in;
	struct sc_subcircuit_out *out;
	size_t nout, cap_out;
	/* Restarts (runtime.h, Restarts). */
	struct sc_restart_policy pol; /* fixed: this unit's policy */
	uint64_t *stamps;	      /* all inputs: the last pol.max_restarts
					 restart times, a ring; NULL: none allowed */
	uint32_t nstamps;	      /* all inputs: stamps in use */
	uint32_t stamp_at;    /* all inputs: the oldest (once the ring is
				 full) */
	atomic_bool given_up; /* atomic: set at a restart (all inputs), read
				 by submits and stats: past the bound, it
				 stays dead */
	bool kick;	      /* all inputs: rebuilt, to kick at the end of
				 the same restart */
	bool ahead_in; /* fixed: tick mode, fed by a delay's ahead port, so
			  it may wait on the horizon alone (kicked at each
			  close, units/tick.c) */
};

/* A delta callback (sc_runtime_on_delta), kept to install it again in a
 * rebuilt unit's circuit. Host before the first submit; read at a rebuild
 * (all inputs). */
struct rt_ondelta {
	int node;
	sc_delta_fn fn;
	void *ctx;
};

/* The host's end of an input node. */
struct rt_input {
	int node;		 /* fixed */
	uint32_t ncols;		 /* fixed */
	struct sc__symcols syms; /* fixed: its symbol columns (a submit's
				    check) */
	struct sc_exchange x;	 /* in->mu: one edge per replica of its unit,
				    and the routing (the edges' producer
				    ends are the lock holder's) */
	uint32_t *insts;	 /* fixed: their instances, per edge */
	pthread_mutex_t mu;	 /* one submitter at a time (SPSC edges);
				    taken in index order by
				    sc__rt_hold_inputs */
	struct sc__rt_late late; /* in->mu: its lateness (the submit's
				    check) */
};

struct sc_runtime {
	struct sc_graph *g;	      /* fixed */
	const struct sc_placement *p; /* fixed */
	struct sc_runtime_opts o;     /* fixed, defaults filled */
	struct sc_exec *ex;	      /* fixed; locks itself */
	struct sc_pool *pool;	      /* host: create and shutdown only */
	bool threaded;		      /* fixed: workers > 0, so host threads
					 may read it while shutdown runs */
	uint32_t ninst;		      /* fixed */
	struct rt_inst *inst;	      /* fixed array; fields as above */
	uint32_t *first;	      /* fixed: first instance of each unit;
					 [nunits] = ninst */
	struct rt_edge *edges;	      /* fixed array (after create) */
	size_t nedges, cap_edges;     /* fixed */
	struct rt_input *inputs;      /* fixed array; fields as above */
	size_t ninputs;		      /* fixed */
	struct sc_analysis an;	      /* fixed: loops, components: which
					 edges gate */
	atomic_bool submitted;	      /* atomic: set by the first submit */
	atomic_bool shut;	      /* atomic: set by shutdown, read by
					 submits under in->mu */
	bool shut_done;		      /* host (shutdown): it ran */
	int shut_rc;		      /* host (shutdown): what it returned */
	struct sc_panic_record shut_first; /* host (shutdown) */
	/* A host thread's wait for room (sc__rt_wait_room). */
	pthread_mutex_t wait_mu; /* guards the waits on wait_cv */
	pthread_cond_t wait_cv;	 /* broadcast by sc__rt_host_popped */
	atomic_uint waiters;	 /* atomic: host threads in such a wait */
	/* Restarts (runtime.h, Restarts; units/runtime_restart.c). */
	bool restarts;		    /* fixed: some unit may be rebuilt */
	struct rt_ondelta *ondelta; /* host (sc_runtime_on_delta, before the
				       first submit) */
	size_t nondelta, cap_ondelta;
	atomic_uint n_restarts; /* atomic: units rebuilt */
	atomic_uint n_failed;	/* atomic: rebuilds that could not be made */
	/* Tick mode (runtime.h, Host ticks; units/tick.c). */
	uint64_t host_tick;	  /* all inputs (sc__rt_hold_inputs, not
				     idle): the open tick */
	atomic_bool tick_open;	  /* atomic: set by a submit under in->mu,
				     cleared by a close (all inputs) */
	_Atomic uint64_t horizon; /* atomic: ticks closed (release, by a
				     close); no unit steps beyond */
	/* Across ranks (units/runtime_remote.h, units/runtime_remote.c). */
	atomic_bool *rank_dead; /* fixed array; each atomic, set by the
				   transport's thread */
	bool remote_started;	/* host: create, then teardown */
};

/* --- runtime.c ------------------------------------------------------------ */

/* Whether instance i is DEAD in the executor. Any thread. */
bool sc__rt_inst_dead(struct sc_runtime *rt, uint32_t i);

/* Grow *arr (of elem-byte entries, room *cap) to room for `need`: 0 or
 * SC_ENOMEM (*arr is then as it was). */
int sc__rt_grow(void **arr, size_t *cap, size_t need, size_t elem);

/* --- runtime_build.c ------------------------------------------------------ */

/* Everything sc_runtime_create builds after its argument checks: the
 * analysis, the instances, the edges, the units, the pool and the remote
 * transport's start. 0 or an error (the caller tears down what is made). */
int sc__rt_build(struct sc_runtime *rt);

/* The sub-circuit of instance id from its ports (restore: NULL, or a
 * rebuild's integrals, subcircuit.h) into *out. Host: create, or a
 * rebuild (all inputs). */
int sc__rt_make_sub(struct sc_runtime *rt, uint32_t id,
		    struct sc_batch *const *restore,
		    struct sc_subcircuit **out);

/* Free instance ci's port lists. */
void sc__rt_free_ports(struct rt_inst *ci);

/* An edge by its ends into buf (n bytes): "u1.0 -> u3.0" (unit.replica),
 * "host -> u0.0" for an input's. Any thread (fixed fields only). */
void sc__rt_edge_name(const struct sc_runtime *rt, const struct rt_edge *e,
		      char *buf, size_t n);

/* --- runtime_host.c ------------------------------------------------------- */

/* A unit took frames from a host edge (subcircuit_desc.host_popped, or the
 * transport's pop): wake the host threads waiting for room. Any thread. */
void sc__rt_host_popped(void *ctx);

/*
 * With workers = 0, make progress for a full input or tick: run a queued
 * turn on this thread, or wait (1 ms at most) for another host thread's
 * turn. Returns true when nothing is queued or running at all: only this
 * thread could make room then, and it has nothing to run.
 */
bool sc__rt_host_progress(struct sc_runtime *rt);

/*
 * With workers: one wait for room. Counted in rt->waiters and holding
 * wait_mu, try(rt, arg) once more (so a pop between the caller's last try
 * and this wait is not missed: sc__rt_host_popped broadcasts under
 * wait_mu); if it says SC_EFULL, sleep until a pop wakes this thread, 10
 * ms pass or `deadline` (sc_clock_ns) comes. Returns what try returned.
 */
int sc__rt_wait_room(struct sc_runtime *rt,
		     int (*try_once)(struct sc_runtime *rt, void *arg),
		     void *arg, uint64_t deadline);

/* SC_EPANIC naming the executor's first panic (copied to *first if not
 * NULL), or 0 when none. */
int sc__rt_first_panic(struct sc_runtime *rt, struct sc_panic_record *first);

/* Whether the executor is idle (nothing queued or running). */
bool sc__rt_is_idle(struct sc_runtime *rt);

/*
 * The host's reads (integral, idle check, restart, tick close) hold every
 * input's lock, taken in index order (a submitter takes one only, so no
 * cycle): no submit can kick a unit meanwhile, so an idle executor stays
 * idle (every other kick comes from a turn). Release in reverse order.
 * sc__rt_inputs_held says whether every lock is held (by some thread),
 * for SC_ASSERT.
 */
void sc__rt_hold_inputs(struct sc_runtime *rt);
void sc__rt_release_inputs(struct sc_runtime *rt);
bool sc__rt_inputs_held(struct sc_runtime *rt);

/* --- runtime_restart.c ---------------------------------------------------- */

/* Whether instance i has a policy that allows a restart. Fixed fields. */
bool sc__rt_inst_restartable(const struct sc_runtime *rt, uint32_t i);

/* Give re a trace when an end of it may be rebuilt. Create only. */
int sc__rt_edge_trace(struct sc_runtime *rt, struct rt_edge *re);

/* Resolve every instance's policy, refuse what cannot be restarted, make
 * the rate bound's rings. Create, before the edges are made. */
int sc__rt_restart_check(struct sc_runtime *rt);

/* Keep a delta callback for the rebuilds (when restarts are on). Host,
 * before the first submit. 0 or SC_ENOMEM. */
int sc__rt_restart_keep_ondelta(struct sc_runtime *rt, int node, sc_delta_fn fn,
				void *ctx);

/* Whether every dead replica a submit to `in` met will be rebuilt. The
 * submitter, under in->mu. */
bool sc__rt_restart_pending(struct sc_runtime *rt, const struct rt_input *in);

/* Rebuild every dead unit the policy allows, then kick them; counts into
 * *restarted and *failed. SC_EBUSY when not idle; 0 otherwise. Host. */
int sc__rt_restart_at_idle(struct sc_runtime *rt, uint32_t *restarted,
			   uint32_t *failed);

/* --- runtime_remote.c ----------------------------------------------------- */

/* What a placement across ranks needs, checked at create. */
int sc__rt_remote_check(struct sc_runtime *rt);

/* Instance id is another rank's: a proxy unit for it. Create. */
int sc__rt_remote_add_proxy(struct sc_runtime *rt, uint32_t id);

/* Every cut edge to the transport, in edge order. Create. */
int sc__rt_remote_declare(struct sc_runtime *rt);

/* sc_runtime_wait_idle across ranks. Host. */
int sc__rt_remote_wait_idle(struct sc_runtime *rt, uint64_t timeout_ns,
			    struct sc_panic_record *first);

/* This rank's part of output's integral (*inout, replaced), gathered to
 * rank 0. Host, at idle. */
int sc__rt_remote_gather(struct sc_runtime *rt, int output,
			 struct sc_batch **inout);

#endif /* SC_UNITS_RUNTIME_INT_H */

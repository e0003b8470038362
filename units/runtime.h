/*
 * runtime.h - the host side: a graph, placed into units, run by workers.
 *
 * A runtime ties together a graph (graph.h), a placement (placement.h), an
 * executor with a pool of worker threads (runtime/), and the bounded edges
 * between units (edge.h). At create it builds one sub-circuit unit
 * (subcircuit.h) per unit of the placement, K of them for a unit sharded K
 * ways, and one edge per (producer replica, stream, consumer replica) for
 * every stream that crosses units; every input node gets an edge from the
 * host per replica of its unit. Then the host:
 *
 *   submit     a batch (a delta) to an input. Non-blocking: SC_EFULL when
 *              the input's edge is full (backpressure: the units behind it
 *              are behind), and nothing is applied; or blocking with a
 *              timeout. The batch is routed by key if the input's unit is
 *              sharded. Each submit kicks the unit(s) it feeds.
 *   wait_idle  until no unit is queued or running: the placed circuit has
 *              settled, and every output's integral equals the single
 *              circuit's for the same inputs (the settle property, proven
 *              by tests/units/test_settle.c for every strategy, 1..4
 *              workers and many seeded schedules).
 *   integral   of an output node, at idle (summed over shards).
 *   on_delta   a callback per delta of a node, on the worker that ran it.
 *   shutdown   wait for idle, stop and join the workers; the first unit
 *              panic is reported (SC_EPANIC and its record).
 *
 * Modes. The runtime has two modes, chosen at create by opts.ticks.
 *
 *   coalescing (the default): a unit steps whenever a turn finds frames,
 *              grouping them as it finds them, and an outbox sums what
 *              a full edge cannot take yet. Settling holds for graphs
 *              whose operators are functions of their input's integral:
 *              every operator but integrate, differentiate and delay,
 *              whose output is per tick (there the grouping is the tick,
 *              so their outputs would depend on the schedule). So
 *              sc_runtime_create refuses (SC_EINVAL, naming the node and
 *              why) a graph holding any of them, a loop (it goes through
 *              a delay) included, in one unit or across units.
 *   tick mode  (opts.ticks): every unit steps tick by tick, as the single
 *              circuit does, so graphs with per-tick operators settle
 *              where the single circuit does at every tick, not only
 *              at the end (Host ticks, below).
 *
 * Loops. In the coalescing mode a loop across units is refused, with an
 * edge of it named: its frames would circulate between units for ever.
 * In tick mode a loop through a delay may cross units where the delay's
 * output leaves its unit: that unit announces tick t + 1 of the delay
 * once it has stepped t (units/subcircuit.h, "Ahead ports"), which is
 * what lets the loop make progress. A cycle of units that crosses at no
 * delay's output (two units each waiting for the other's tick) is
 * refused, naming a stream on it (units/analysis.h, "Ticks"); so are
 * restart policies in tick mode (a rebuilt unit would not know its
 * tick).
 *
 * Host ticks. In tick mode the host's submissions go to the open host
 * tick (0 at first); sc_runtime_tick closes it, and tick t of the placed
 * circuit is step t of the single circuit fed exactly the submissions of
 * host tick t. A host that never calls sc_runtime_tick gets one tick per
 * sc_runtime_wait_idle (which closes the open tick when something was
 * submitted to it, so every submission is stepped by the time it is
 * idle); empty ticks are made only by sc_runtime_tick. Every edge is a
 * tick edge (units/edge.h, "Tick edges"): frames carry their tick, and
 * each producer announces its frontier (a marker: no frame of a tick
 * below t will follow; a range of empty ticks is one marker). A unit
 * steps tick t once, when every input's frontier has passed t, with
 * exactly tick t's frames, then sends its outputs and its frontier t + 1
 * (units/subcircuit.h, "Tick mode"). There is no global barrier: a unit
 * downstream may step tick t while one upstream is on t + 3. A delta
 * callback learns the tick of the step it reports with
 * sc_runtime_delta_tick. No unit steps a tick the host has not closed
 * (a unit fed only by a delay could otherwise run one tick ahead), so
 * at idle every output holds what the single circuit holds after the
 * ticks closed so far.
 * Several host threads may submit while another closes ticks. A
 * submission belongs to the tick open when its submit sends, which it
 * does holding its input's lock; sc_runtime_tick holds every input's
 * lock while it closes. So a submission is wholly in one tick (all its
 * shards too): not in one closed by a close that returned before its
 * submit began, nor past the first close begun after its submit
 * returned. A submit_wait that waited for room belongs to the tick open
 * at its attempt that went in; a refused submit (SC_EFULL) to none.
 * Order within a tick does not matter (a tick is a sum).
 * A unit that dies in tick mode ends its output edges (units/subcircuit.h,
 * "Deaths in tick mode"): its consumers go on stepping ticks with the rest
 * of their inputs, their outputs then partial as sc_runtime_upstream_dead
 * says. Backpressure works as in the coalescing mode: a full edge holds
 * back its producer's next tick (an outbox holds one tick at most), and
 * the consumer's pop kicks it; the host's submit and tick report
 * SC_EFULL or wait.
 *
 * A unit that panics (its circuit failed: a user callback's error, an
 * overflow) dies alone: its input edges close, and frames addressed to it
 * from then on, by units or by the host, are counted as undeliverable
 * (sc_runtime_stats); a submit to an input whose unit is dead returns
 * SC_EDEAD. The rest of the graph goes on. With a restart policy the
 * unit comes back instead (Restarts, below).
 *
 * Restarts. With a restart policy (opts.restart for every unit, or
 * opts.unit_restart per placement unit), a dead unit is rebuilt, as a
 * BEAM supervisor restarts a child, at most max_restarts times in any
 * period_ns (0: in the runtime's life); past that it stays dead, with the
 * dead-unit semantics above. The rebuilt graph settles exactly where it
 * would have had the unit never died:
 *   - every edge into or out of a restartable unit keeps, on its producer
 *     side, the integral of every share sent on it (its trace,
 *     units/exchange.h), host edges included (the integral of the
 *     submissions to the unit's inputs), frames a dead consumer refused
 *     among them;
 *   - the rebuild discards the frames still waiting for the dead unit
 *     (its edges reopen, sc_edge_reopen: counted drained or refused, so
 *     the frame accounting below stays exact), builds a fresh
 *     sub-circuit, and its first turn feeds it the integral of each
 *     input edge and steps once (units/subcircuit.h, "A rebuild");
 *   - that turn then sends on each output edge the correction
 *     `target - held`: its share of what the rebuilt outputs hold, minus
 *     the trace of what the dead unit had sent there (Z-set arithmetic),
 *     so every consumer ends with exactly its share.
 * Each replica of a sharded unit restarts on its own (its input is its
 * shard). Only a unit whose part is integral-functional can be rebuilt
 * from its inputs' integrals, so sc_runtime_create refuses (SC_EINVAL,
 * naming the node) a policy on a unit holding an integrate, a
 * differentiate or a delay.
 *
 * When. A rebuild reads and resets the producer ends of the dead unit's
 * input edges, which belong to other units' turns and to submitters. So
 * it happens on a host thread, only while the executor is idle and the
 * thread holds every input's lock (as the host reads do): no turn runs,
 * no submit can kick one, and the executor's lock orders every finished
 * turn's writes before the rebuild's reads; the rebuilt units are kicked
 * only after all of them are built. That is inside sc_runtime_wait_idle
 * (and so shutdown): once idle with a unit dead, it rebuilds what the
 * policy allows and waits again, until nothing more comes back; and in
 * sc_runtime_restart, for callers that drive the executor themselves.
 * Until then the dead unit's frames are refused as usual, and a submit
 * to it returns 0: its rows are in the trace, and the rebuild applies
 * them (should the rebuild then be refused, they are lost with the
 * unit, as sc_runtime_upstream_dead says). Panics stay recorded
 * (wait_idle and shutdown still say SC_EPANIC, with the first one);
 * sc_runtime_stats counts restarts and units given up, and
 * sc_runtime_upstream_dead says whether an output is whole. A delta
 * callback (sc_runtime_on_delta) is installed again in the rebuilt
 * circuit, whose first step reports the whole integral as one delta.
 *
 * Workers. opts.workers threads run the turns. With workers = 0 no thread
 * is started: sc_runtime_wait_idle (and sc_runtime_submit_wait) run the
 * queued turns on the calling thread, or the caller drives the executor
 * itself (sc_runtime_exec), e.g. with the seeded scheduler (runtime/sim.h),
 * which is how the tests explore schedules.
 *
 * Threads: submit and submit_wait may be called from any number of host
 * threads at once (one lock per input), also while another host thread
 * reads (integral, check_idle) or shuts down; the others from one host
 * thread, never from a worker or a callback. The calls that wait for turns
 * (wait_idle, submit_wait, shutdown) tell a callback by the executor's
 * in-turn marker (sc_exec_in_turn) and return SC_ESTATE instead of
 * waiting for themselves; shutdown waits for idle at most
 * opts.shutdown_timeout_ns (30 s by default), then names the units still
 * in a turn (SC_ETIMEDOUT) instead of hanging on one that never returns.
 *
 * With catch_faults, hard faults in a turn become unit panics on every
 * thread that runs turns: the workers, and with workers = 0 the host
 * threads inside wait_idle, submit_wait and shutdown (each turns fault
 * catching on for itself the first time it runs a turn).
 */
#ifndef SC_UNITS_RUNTIME_H
#define SC_UNITS_RUNTIME_H

#ifdef __cplusplus
extern "C" {
#endif

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "operators/batch.h"
#include "operators/circuit.h"
#include "operators/graph.h"
#include "runtime/executor.h"
#include "runtime/panic.h"
#include "units/placement.h"
#include "units/subcircuit.h"

struct sc_runtime;
struct sc_timeline;
struct sc_runtime_remote;

/* What happens to a unit that dies (see Restarts above). */
enum sc_restart_kind {
	SC_RESTART_NONE = 0,	/* it stays dead (the default) */
	SC_RESTART_BOUNDED = 1, /* rebuilt, at most max_restarts times in
				   any period_ns */
};

/* The most max_restarts a policy may ask for. */
#define SC_RESTART_MAX 4096u

struct sc_restart_policy {
	enum sc_restart_kind kind;
	uint32_t max_restarts; /* R: 1..SC_RESTART_MAX; 0 restarts none */
	uint64_t period_ns;    /* T: in any window this long; 0: in the
				  runtime's whole life */
};

struct sc_runtime_opts {
	uint32_t workers;	/* worker threads; 0: none (see above) */
	uint32_t budget;	/* frames per turn (runtime/unit.h);
				   0: SC_UNIT_BUDGET_DEFAULT */
	uint32_t edge_capacity; /* frames per edge, a power of two; 0: 64 */
	size_t outbox_bound;	/* outbox rows before backpressure; 0: 4096 */
	bool catch_faults;	/* hard faults in a turn kill only that unit,
				   on workers and on host threads that run
				   turns (workers = 0) alike */
	uint64_t shutdown_timeout_ns;	  /* shutdown's wait for idle; 0: 30 s
					     (SC_RUNTIME_SHUTDOWN_TIMEOUT_NS);
					     UINT64_MAX: for ever */
	struct sc_restart_policy restart; /* every unit's (zero: none) */
	/* NULL, or one policy per placement unit (sc_placement_units
	 * entries, copied), replacing `restart` for that unit */
	const struct sc_restart_policy *unit_restart;
	struct sc_timeline *timeline; /* every turn recorded there as a slice
					 named after its unit (ids as the
					 executor's), or NULL; borrowed: it
					 must outlive the runtime */
	enum sc_exec_kind executor;   /* runtime/executor.h; SC_EXEC_DEFAULT:
					 $SC_EXECUTOR, else STEAL */
	bool ticks;		      /* tick mode (see Modes and Host ticks
					 above) */
	bool no_cleanup;	      /* lateness (operators/waterline.h):
					 every unit keeps its whole state
					 (sc_circuit_set_cleanup off), for
					 the exactness comparison; default
					 false, cleanup on */
	/* NULL; or the transport of a circuit placed across process ranks
	 * (units/runtime_remote.h), borrowed: it must outlive the runtime */
	const struct sc_runtime_remote *remote;
};

/* The default of opts.shutdown_timeout_ns: 30 s. */
#define SC_RUNTIME_SHUTDOWN_TIMEOUT_NS (30ull * 1000000000ull)

/*
 * Figures over every unit and edge (sc_runtime_stats).
 *
 * Where every frame went, summed over all edges, host edges included
 * (struct sc_edge_traffic says what a frame is: an outbox is rows until a
 * flush sends it as one frame):
 *
 *   frames_sent = frames_delivered + frames_undeliverable + pending
 *
 * exact once nothing runs (after wait_idle with no submitter, or after
 * shutdown). frames_undeliverable counts what the closes of dead units'
 * edges released (drained from rings, or refused before entering one),
 * and what a restart discarded when it reopened them (in the rebuilt
 * unit's integrals instead); frames still in rings are `pending`. At idle the
 * rings of live units' edges are empty (sc_runtime_check_idle), so pending is
 * pending_closed, and frames_sent - frames_delivered - frames_undeliverable -
 * pending_closed counts frames lost: stranded before a live consumer
 * that will not run, or gone from a ring uncounted. Unlike
 * undeliverable_frames, frames_undeliverable does not count what still waits in
 * a closed edge's ring (that is in `pending`) or outbox (rows, not yet a
 * frame).
 */
struct sc_runtime_stats {
	uint32_t units;		       /* executor units (replicas counted) */
	uint32_t dead;		       /* of which dead after a panic */
	uint32_t edges;		       /* edges, host edges included */
	uint64_t frames;	       /* frames pushed over all edges */
	uint64_t rows;		       /* rows of those frames */
	uint64_t pending;	       /* frames in rings now */
	uint64_t pending_closed;       /* of which in closed edges' rings
					  (a dead consumer's: never taken) */
	uint64_t frames_sent;	       /* frames pushed, or refused by a
					  closed edge (see above) */
	uint64_t frames_delivered;     /* frames a consumer's poll took */
	uint64_t frames_undeliverable; /* frames a close drained or refused */
	uint64_t outbox_rows;	       /* rows waiting in outboxes now */
	uint64_t undeliverable_frames; /* frames addressed to dead units */
	uint64_t undeliverable_rows;   /* their rows */
	uint64_t turns;		       /* turns finished */
	uint32_t panics;	       /* panics recorded */
	uint32_t restarts;	       /* units rebuilt (Restarts above) */
	uint32_t restarts_failed;      /* rebuilds that could not be made
					  (memory): the unit stayed dead
					  for that round */
	uint32_t given_up;	       /* dead units the rate bound keeps
					  dead */
};

/*
 * sc_runtime_create - build the units and edges for `p` (a placement of g)
 * and start opts->workers threads. opts may be NULL (every default, no
 * worker). g is frozen while the runtime lives; g and p must outlive it.
 * Returns 0 and *out; SC_EINVAL (NULL, p not of g, a capacity that is not
 * a power of two, a loop that crosses units, naming it; a restart policy
 * of an unknown kind or above SC_RESTART_MAX, or on a unit that is not
 * integral-functional, naming the node; in the coalescing mode a per-tick
 * node, naming it; in tick mode a cycle of units that crosses at no
 * delay's output, naming a stream of it, or a restart policy: see Modes
 * and Loops); SC_ESTATE /
 * SC_ECYCLE (sc_graph_check); SC_ENOMEM; or
 * an error of a circuit's or the pool's create. Nothing is left on failure.
 */
int sc_runtime_create(struct sc_graph *g, const struct sc_placement *p,
		      const struct sc_runtime_opts *opts,
		      struct sc_runtime **out);

/*
 * sc_runtime_destroy - shut down (if not done yet), destroy every unit and
 * edge. NULL is allowed. Not from a worker: when that shutdown refuses
 * (SC_ESTATE: called from a callback) or times out (SC_ETIMEDOUT: a turn
 * still runs and uses the runtime), nothing is freed, the reason goes to
 * stderr and the runtime is leaked rather than freed under a turn.
 */
void sc_runtime_destroy(struct sc_runtime *rt);

/*
 * sc_runtime_submit - add batch b (borrowed: the runtime takes its own
 * references) to input node `input`, without blocking. Returns 0 (the
 * units are kicked; also when a replica it feeds is dead but will be
 * rebuilt: see Restarts); SC_EFULL (an edge of the input is full:
 * backpressure; nothing applied, try later); SC_EDEAD (the input's unit,
 * or one of its shards, is dead for good: those rows are counted
 * undeliverable); SC_ESCHEMA (b's
 * width is not the input's; nothing applied); SC_ENOENT (a symbol word of
 * b is not a live id: nothing applied, nothing held); SC_ENOENT / SC_EINVAL
 * (not an input node, NULL); SC_ESHUTDOWN (shutdown has begun; nothing
 * applied: a submit racing sc_runtime_shutdown from another thread is
 * either applied before shutdown waits for idle, or refused, never both
 * 0 and lost); SC_ELATE (a late row: Lateness below; nothing applied);
 * SC_ENOMEM. Any host thread. Once it returned 0 the
 * runtime holds the ids of b's symbol columns (operators/symbol.h, "Who
 * holds an id"): the host may release its own at once.
 */
int sc_runtime_submit(struct sc_runtime *rt, int input, struct sc_batch *b);

/*
 * Lateness (operators/waterline.h). An input node with lateness declared
 * on its graph is checked at the host, before anything is sent: a
 * submission with a row below the input's waterline (the largest value
 * of that column accepted so far, minus L) is refused whole with
 * SC_ELATE, its message naming how many rows were late and the first
 * (its value and the waterline), or, with SC_LATE_ADMIT, sent and its
 * late rows counted. sc_runtime_late reads the counts.
 *
 * sc_runtime_late - late rows of input node `input` so far: admitted and
 * refused (either pointer may be NULL). Any thread. Returns 0, SC_EINVAL
 * (NULL runtime), SC_ENOENT (not an input node).
 */
int sc_runtime_late(struct sc_runtime *rt, int input, uint64_t *admitted,
		    uint64_t *refused);

/*
 * sc_runtime_submit_wait - as submit, but waits while it would be SC_EFULL,
 * up to timeout_ns (0: for ever); SC_ETIMEDOUT then, with nothing applied.
 * Wakes when the input's unit takes frames. With workers = 0 it runs queued
 * turns on this thread while it waits, and while another host thread runs
 * the turns it waits for that thread's progress; SC_ETIMEDOUT at once
 * only when nothing is queued or running at all (nobody could make room).
 * Any host thread; from inside a turn (a callback) SC_ESTATE at once, as
 * the room it waits for may be its own unit's to make.
 */
int sc_runtime_submit_wait(struct sc_runtime *rt, int input, struct sc_batch *b,
			   uint64_t timeout_ns);

/*
 * sc_runtime_wait_idle - wait until nothing is queued or running
 * (timeout_ns 0: for ever; a huge one saturates). With workers = 0, runs
 * the queued turns on this thread. With restarts, rebuilds the dead units
 * the policy allows each time it finds the runtime idle, and waits again
 * (see Restarts). Returns
 *   0             idle;
 *   SC_EPANIC     idle, and a unit panicked: the first panic in *first
 *                 (may be NULL);
 *   SC_ETIMEDOUT  still busy at the deadline;
 *   SC_ESTATE     called from inside a turn (a callback, on a worker or
 *                 in a host-driven turn): it would wait for itself;
 *   SC_EINVAL     rt is NULL.
 */
int sc_runtime_wait_idle(struct sc_runtime *rt, uint64_t timeout_ns,
			 struct sc_panic_record *first);

/*
 * sc_runtime_integral - the integral of output node `output` (summed over
 * the replicas of a sharded unit), as a new batch (*out; the caller
 * releases it). Only while idle: safe against host threads submitting at
 * the same time (a submit waits while the read holds the inputs, so no
 * turn can start under it), which then make it SC_EBUSY whenever a turn
 * is queued or running. Returns
 *   0             the integral; WHOLE only if sc_runtime_upstream_dead
 *                 says 0: an output whose own unit is alive but which is
 *                 downstream of a dead unit also reads 0, with only what
 *                 arrived before the death (a partial integral), so a
 *                 caller that may have had a panic (wait_idle or shutdown
 *                 said SC_EPANIC) asks sc_runtime_upstream_dead;
 *   SC_EDEAD      the output's own unit (or a replica of it) is dead;
 *   SC_EBUSY      not idle;
 *   SC_EINVAL     NULL, or not an output node; SC_ENOENT: no such node;
 *   SC_ENOMEM, SC_EOVERFLOW  summing the replicas failed, or an aggregate
 *                 upstream (in any unit) holds a live group whose value is
 *                 outside int64, which has no row (sc_circuit_check).
 */
int sc_runtime_integral(struct sc_runtime *rt, int output,
			struct sc_batch **out);

/*
 * sc_runtime_upstream_dead - whether output node `output`'s integral is
 * partial: some unit its rows come through (its own, or one upstream of
 * it, by the graph's streams; any replica of a sharded one) is dead, so
 * what that unit would have sent never arrived. Returns
 *   0           every such unit is alive: the integral is whole;
 *   SC_EDEAD    one is dead: its executor id in *unit (may be NULL), and
 *               sc_errmsg names it and the output;
 *   SC_EINVAL   NULL, or not an output node; SC_ENOENT: no such node.
 * Any host thread at any time (it reads unit states only); exact at idle.
 */
int sc_runtime_upstream_dead(struct sc_runtime *rt, int output, uint32_t *unit);

/*
 * sc_runtime_on_delta - call fn(ctx, node, delta) after every step of the
 * unit holding `node` in which its delta was not empty, on the worker that
 * ran the step (one replica at a time per replica; a sharded node's
 * replicas each report their share). Only before the first submit. Returns
 * 0, SC_ESTATE (after a submit), SC_ENOENT, SC_EINVAL.
 */
int sc_runtime_on_delta(struct sc_runtime *rt, int node, sc_delta_fn fn,
			void *ctx);

/*
 * sc_runtime_check_idle - the invariant of an idle runtime: every edge into
 * a live unit is empty and every outbox of a live producer is flushed.
 * Returns 0, SC_EBUSY (not idle), or SC_ESTATE naming the first edge that
 * breaks it. Safe against concurrent submitters, as sc_runtime_integral.
 * For tests and for a final check.
 */
int sc_runtime_check_idle(struct sc_runtime *rt);

/*
 * sc_runtime_stats - the figures above into *out (nothing for a NULL
 * argument). Any thread, while rt exists, concurrently with submitters
 * and turns: it reads the edges' atomic counters (the edge set is fixed
 * at create) and the executor's figures (under its lock, briefly), never
 * a trace or an outbox. The counters are read one by one,
 * so while anything runs the figures are not a snapshot (the frame
 * identity may be off by the frames in flight); they are exact at idle.
 */
void sc_runtime_stats(struct sc_runtime *rt, struct sc_runtime_stats *out);

/*
 * sc_runtime_shutdown - refuse submits from now on, wait until idle (at
 * most opts.shutdown_timeout_ns, 30 s by default), stop and join the
 * workers. Integrals stay readable. Returns
 *   0             done;
 *   SC_EPANIC     done, and a unit panicked: the first panic in *first
 *                 (may be NULL), the dead and undeliverable counts in
 *                 sc_errmsg;
 *   SC_ETIMEDOUT  not idle by the deadline (a turn that does not return):
 *                 sc_errmsg names the units still running; submits stay
 *                 refused, the workers are not joined, and a later call
 *                 waits again;
 *   SC_ESTATE     called from inside a turn (a callback), which would
 *                 wait for itself; nothing done;
 *   SC_EINVAL     rt is NULL.
 * Idempotent once done (a later call returns what it returned). One host
 * thread.
 */
int sc_runtime_shutdown(struct sc_runtime *rt, struct sc_panic_record *first);

/* How many units the runtime made (each replica of a sharded unit is
 * one; ids 0..n-1 as the executor's). 0 for NULL. */
uint32_t sc_runtime_units(const struct sc_runtime *rt);

/*
 * sc_runtime_unit_stats - unit `id`'s figures so far (turns, frames and
 * rows in and out: units/subcircuit.h) and its name (*name, may be NULL;
 * valid while rt lives). Any thread, while rt exists, concurrently with
 * turns: the figures only grow, each read on its own. Returns
 *   0           the figures
 *   SC_EINVAL   rt or out is NULL
 *   SC_ENOENT   no unit `id` (not below sc_runtime_units)
 */
int sc_runtime_unit_stats(const struct sc_runtime *rt, uint32_t id,
			  struct sc_subcircuit_stats *out, const char **name);

/*
 * sc_runtime_unit_circuit - unit `id`'s circuit in this process, to read
 * its state and waterlines (sc_circuit_state, sc_circuit_waterline) in
 * tests and figures; NULL for no such unit or a replica another rank
 * runs. Only while no turn runs (at idle, no submitter): a turn changes
 * the circuit under the reader.
 */
const struct sc_circuit *sc_runtime_unit_circuit(const struct sc_runtime *rt,
						 uint32_t id);

/*
 * sc_runtime_trace_sample - sample every edge's fill (frames in its ring
 * now) into opts.timeline as counter tracks named after the edge, at the
 * time of the call, from the calling thread (a host loop calls it now and
 * then; no turn pays for it). Counter ids: the edges in order of creation.
 * Does nothing without a timeline or while it is off. Any thread.
 */
void sc_runtime_trace_sample(struct sc_runtime *rt);

/*
 * sc_runtime_restart - rebuild every dead unit whose policy allows it now
 * (see Restarts), and kick them; for a caller that drives the executor
 * itself (runtime/sim.h), which then runs the rebuilt units' turns.
 * *restarted (may be NULL) counts the units rebuilt. A unit past its
 * rate bound is given up (it stays dead); one whose rebuild cannot be
 * made (memory) stays dead for now, and the attempt counts against its
 * bound. Returns
 *   0           done (maybe nothing was dead);
 *   SC_EBUSY    a turn is queued or running: nothing done;
 *   SC_ESTATE   called from inside a turn (a callback);
 *   SC_EINVAL   rt is NULL.
 * Any host thread, as the host reads.
 */
int sc_runtime_restart(struct sc_runtime *rt, uint32_t *restarted);

/*
 * sc_runtime_tick - close the open host tick (tick mode; see Host ticks):
 * every submission since the previous close belongs to it, and the units
 * may step it. All or nothing: it waits, up to timeout_ns (0: for ever),
 * until every input's edge has room for the tick's marker, running turns
 * on this thread meanwhile when workers = 0, as submit_wait does. Returns
 *   0             closed: the tick's number in *closed (may be NULL);
 *   SC_ETIMEDOUT  an input's edge stayed full (nothing closed);
 *   SC_ESHUTDOWN  shutdown has begun (nothing closed);
 *   SC_ESTATE     not in tick mode, or called from inside a turn;
 *   SC_EINVAL     rt is NULL.
 * Any host thread; it holds every input's lock while it closes, so a
 * concurrent submit lands wholly in this tick or wholly in the next.
 */
int sc_runtime_tick(struct sc_runtime *rt, uint64_t timeout_ns,
		    uint64_t *closed);

/* sc_runtime_tick_try - as sc_runtime_tick without waiting: SC_EFULL
 * (nothing closed) when an input's edge has no room for the marker. Any
 * host thread, also one that drives the executor itself (a host event of
 * the seeded scheduler, runtime/sim.h), since it runs no turn. */
int sc_runtime_tick_try(struct sc_runtime *rt, uint64_t *closed);

/* sc_runtime_delta_tick - inside a delta callback (sc_runtime_on_delta) in
 * tick mode, the tick of the step it reports; UINT64_MAX anywhere else. */
uint64_t sc_runtime_delta_tick(void);

struct sc_watchdog_wait;

/*
 * sc_runtime_waits - the watchdog's waits hook for this runtime's units
 * (runtime/watchdog.h, "Frontiers"): pass it as opts.waits with the
 * runtime as opts.waits_arg, and a unit whose next tick waits for an
 * input edge's frontier longer than opts.frontier_ns is reported
 * (FRONTIER), naming the tick, the edge ("u1.0 -> u3.0": unit.replica at
 * each end, "host" for an input's) and the frontier. A unit waits on an
 * edge when the tick it gathers is one the host has closed, and that
 * edge, whose frontier has not passed it, holds nothing for it to read;
 * a tick the host has not closed is not a wait. Returns whether unit
 * `unit` waits so, with *out filled; false outside tick mode, for an
 * unknown id or NULL. Any thread while rt exists, concurrently with
 * turns: it reads what the unit's last turn published (atomics).
 */
bool sc_runtime_waits(void *rt, uint32_t unit, struct sc_watchdog_wait *out);

/*
 * sc_runtime_doing - the watchdog's doing hook for this runtime's units
 * (runtime/watchdog.h, "What a stalled turn does"): pass it as opts.doing
 * with the runtime as opts.doing_arg, and a STALL report says what the
 * turn is doing, "in 'count by col' (grow)": the operator (the graph's
 * node name, or "(the unit)" for the unit's own reads and sends) and the
 * activity (step, grow, merge, sort or output). Returns whether unit
 * `unit` publishes one now (a running turn), with buf (size bytes)
 * written; false for an unknown id, NULL or a unit between turns. Any
 * thread while rt exists, concurrently with turns: one relaxed load of
 * the word the turn publishes (operators/doing_int.h), no lock.
 */
bool sc_runtime_doing(void *rt, uint32_t unit, char *buf, size_t size);

/*
 * sc_runtime_op_name - the name of operator `op` of rt's graph (a node
 * id, as sc_subcircuit_stats.longest_op gives it): the node's name,
 * "(the unit)" for -1; NULL for an unknown id or a NULL rt. Static or
 * the graph's: valid while rt lives. Any thread.
 */
const char *sc_runtime_op_name(const struct sc_runtime *rt, int op);

/* The executor (to drive with runtime/sim.h when workers = 0, or to
 * watch with runtime/watchdog.h). */
struct sc_exec *sc_runtime_exec(struct sc_runtime *rt);

#ifdef __cplusplus
}
#endif

#endif /* SC_UNITS_RUNTIME_H */

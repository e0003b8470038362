/*
 * placement.h - WHERE a graph runs: each node mapped to a unit.
 *
 * A placement maps every node of a graph (graph.h) to a unit index in
 * 0 .. units-1, and gives each unit a replication factor (its shards,
 * 1 unless the unit is sharded). units/runtime.h builds one synchronous
 * sub-circuit per unit (per shard) from it and cuts every stream that
 * crosses units into a bounded edge. Whatever the placement, the placed
 * circuit settles where the single circuit does (the settle property of
 * units/runtime.h, checked by units/settle.h); a placement only decides
 * how the work spreads over cores and what crosses an edge.
 *
 * Strategies:
 *   single    everything in unit 0: the reference, no edge at all;
 *   per-node  one unit per node: the most edges, the most parallelism;
 *   chains    linear chains fused: a node joins the unit of its only input
 *             when it is that stream's only reader (union-find, so the
 *             result does not depend on the order nodes were made);
 *   random    seeded: every node to a uniform unit of n, then empty units
 *             dropped and the rest renumbered in order of first node;
 *   manual    an explicit map, validated;
 *   sharded   chains, except that every keyed stateful node (aggregate and
 *             join/antijoin with a key of >= 1 column, distinct) heads a
 *             unit of its own, with the linear chain that follows it (its
 *             tail runs in the replicas too), replicated K ways;
 *   balanced  at most K units of even work: the nodes in id order cut into
 *             K runs whose costs (measured or estimated, below) are as
 *             even as they can be.
 *
 * Balanced: why runs of the id order. A node's inputs exist before it is
 * made (graph.h), so ids are a topological order, but for the stream a
 * feedback is bound to later. Cutting that order into contiguous runs
 * sends every edge from a unit to itself or to a later one: the unit
 * graph is a DAG, so every edge between units gates backpressure
 * (units/analysis.h) and nothing circulates. A loop (feedback fb bound to
 * a later node `from`) must stay in one unit, so no cut falls between fb
 * and `from`: the ids in between form one block, never split. Among the
 * cuts left, the one whose costliest unit costs least is found by a
 * binary search on that cost, each probe a greedy pass that opens a unit
 * only when the next block would overflow the probe (the painter's
 * partition; O(nodes log(total / precision))). Units end up fewer than K
 * when more would not lower the costliest one (or there are fewer
 * blocks).
 *
 * Cost. Measured (sc_placement_calibrate): the single circuit of the
 * graph is fed a short prefix of the workload, and each node's cost is
 * its kind's weight times the rows it read and wrote plus the ticks it
 * had work in (sc_circuit_node_stats), so a node that sees more rows, or
 * does more per row, weighs more. Estimated (no run allowed,
 * sc_placement_cost_estimate): the kind's weight alone, as if every node
 * saw the same rows. The weights (per row: 1 for linear nodes, inputs and
 * outputs; 2 for integrate and differentiate; 3 for distinct and
 * aggregate; 4 for join and antijoin, which probe an index and emit
 * products) are rough relative costs of the kernels, not measured times:
 * the row counts carry most of the difference. Row counts are
 * deterministic, so a calibrated placement is the same on every run.
 *
 * Sharding. A unit replicated K ways runs as K sub-circuits of the same
 * nodes; every row that enters the unit is routed to replica
 * sc_row_hash(first `key` columns) mod K through exchange edges, so all
 * rows of one key meet in one replica, and the replicas' outputs are
 * summed by whoever reads them (deltas sum). That is correct only when the
 * unit's result for a key depends on that key's rows alone, so a unit may
 * be sharded (sc_placement_set_shards) only when it holds exactly one
 * keyed node (as above), its other nodes are input, output or linear
 * (map, filter, flat_map, index_by, plus, negate, minus), and every stream
 * that enters the unit (a boundary input or an input node of the unit) is
 * read inside the unit by the keyed node, and by no other node of the
 * unit: an input node of the unit that the keyed node does not read has
 * no key to route it by. The routing key of each entering stream is the
 * keyed node's key (distinct: every column). sc_placement_set_shards and
 * sc_placement_key (which units/runtime.h asks for each entering stream)
 * apply this one rule, so a unit that set_shards accepts always builds.
 *
 * Ranks (units on several processes, units/mpi_link.h). A placement may
 * also say which process rank runs each replica of each unit; every
 * process builds the same graph and placement and runs the replicas that
 * are its own. By default everything is on rank 0 of 1. The spread rule
 * (sc_placement_spread_ranks, "ranks:N"): an unsharded unit u runs on
 * rank u mod N (round-robin by unit), and replica i of a sharded unit on
 * rank i mod N, so a unit sharded K ways spreads its keys over the ranks.
 * Manual (sc_placement_set_ranks): a rank per replica slot, in unit-major
 * order (unit 0's replicas, then unit 1's, ...). Since manual ranks name
 * slots, changing a unit's shards afterwards is refused (SC_ESTATE); the
 * spread rule follows the shards as they change. A rank may be left
 * without a unit (it then only relays).
 *
 * Bad input changes nothing: a node left unplaced, a unit index out of
 * range, an empty unit in a manual map, or an unshardable unit is SC_EINVAL
 * with a message naming the node or unit.
 *
 * Printing: as text (one line per unit, its nodes by name and kind) and as
 * Graphviz DOT (one cluster per unit, every node, every edge; edges that
 * cross units are drawn bold). A stream that refuses a write is SC_EIO.
 *
 * Lifetime and threads: a placement borrows its graph, which must outlive
 * it. It is immutable once made (but for sc_placement_set_shards), and any
 * number of threads may read it.
 */
#ifndef SC_UNITS_PLACEMENT_H
#define SC_UNITS_PLACEMENT_H

#ifdef __cplusplus
extern "C" {
#endif

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "operators/error.h"
#include "operators/graph.h"
#include "units/settle_step.h"

struct sc_placement;

/* The most shards of one unit. */
#define SC_PLACEMENT_MAX_SHARDS 64

/* sc_placement_single - every node in unit 0. Returns 0 and *out,
 * SC_EINVAL (NULL, or a graph without nodes), SC_ENOMEM. */
int sc_placement_single(const struct sc_graph *g, struct sc_placement **out);

/* sc_placement_per_node - node i in unit i. Errors as single. */
int sc_placement_per_node(const struct sc_graph *g, struct sc_placement **out);

/* sc_placement_chains - linear chains fused (see the top). Errors as
 * single. */
int sc_placement_chains(const struct sc_graph *g, struct sc_placement **out);

/*
 * sc_placement_random - every node to one of `nunits` units chosen by a
 * RNG seeded with `seed` (the same seed, the same placement), empty units
 * dropped. nunits >= 1. Errors as single.
 */
int sc_placement_random(const struct sc_graph *g, uint32_t nunits,
			uint64_t seed, struct sc_placement **out);

/*
 * sc_placement_manual - node i in unit unit_of[i], for the n nodes of the
 * graph (n must be its node count), units 0 .. nunits-1, none empty.
 * Returns 0 and *out; SC_EINVAL naming the first node unplaced (a negative
 * entry) or out of range, the first empty unit, or a wrong n; SC_ENOMEM.
 */
int sc_placement_manual(const struct sc_graph *g, const int32_t *unit_of,
			size_t n, uint32_t nunits, struct sc_placement **out);

/*
 * sc_placement_sharded - chains, with every keyed stateful node heading a
 * unit of its own (with its linear tail) replicated `k` ways
 * (1 <= k <= SC_PLACEMENT_MAX_SHARDS).
 * Errors as single.
 */
int sc_placement_sharded(const struct sc_graph *g, uint32_t k,
			 struct sc_placement **out);

/* The most units of a balanced placement. */
#define SC_PLACEMENT_MAX_BALANCED 4096

struct sc_circuit;

/*
 * sc_placement_balanced - at most k units (1 <= k <=
 * SC_PLACEMENT_MAX_BALANCED) of even cost, as the top says; cost[i] is
 * node i's cost (n must be the graph's node count), or NULL for the
 * estimate. Returns
 *   0          *out, strategy "balanced";
 *   SC_EINVAL  NULL g or out, no nodes, k out of range, a wrong n, or a
 *              cost that is negative or not finite (naming the node);
 *   SC_ENOMEM.
 */
int sc_placement_balanced(const struct sc_graph *g, uint32_t k,
			  const double *cost, size_t n,
			  struct sc_placement **out);

/*
 * sc_placement_cost_estimate - cost[i] = the weight of node i's kind (the
 * top), for the n nodes of g. Returns 0; SC_EINVAL (NULL, a wrong n).
 */
int sc_placement_cost_estimate(const struct sc_graph *g, double *cost,
			       size_t n);

/*
 * sc_placement_calibrate - the measured cost of each of g's n nodes: the
 * single circuit of g (built and destroyed here, so g is frozen only
 * meanwhile) is fed submissions 0 .. steps-1 of gen (each batch it
 * makes is released here), one step each (a tick boundary, {SC_SETTLE_TICK,
 * NULL}, is passed over), and cost[i] is node i's weight times
 * (rows in + rows out + ticks busy). cost is written only on success. Returns
 *   0          cost[0..n);
 *   SC_EINVAL  NULL g, gen or cost, steps 0, a wrong n;
 *   SC_ENOMEM, or the first error of the circuit (create, feed, step)
 *              or of gen.
 * One thread; gen's batches must fit g's inputs.
 */
int sc_placement_calibrate(struct sc_graph *g, sc_settle_gen_fn gen, void *ctx,
			   size_t steps, double *cost, size_t n);

/*
 * sc_placement_parse - a strategy by name, for tools: "single",
 * "per-node", "chains", "random:N" (seeded by `seed`), "sharded:K",
 * "balanced:K" (estimated costs), or "balanced" (balanced:C with C the
 * cores online, capped at SC_PLACEMENT_MAX_BALANCED: a unit per worker
 * of a runtime with a worker per core). Any of them may end in
 * "@ranks:N" (spread over N ranks, 1..SC_PLACEMENT_MAX_RANKS) or
 * "@ranks:R,R,..." (manual: a rank per replica slot, at most
 * SC_PLACEMENT_MAX_RANK_LIST, over max(R)+1 ranks); "ranks:N" alone is
 * "chains@ranks:N".
 * Returns 0 and *out; SC_EINVAL for an unknown name (the message lists the
 * known ones); errors of the strategy.
 */
int sc_placement_parse(const struct sc_graph *g, const char *spec,
		       uint64_t seed, struct sc_placement **out);

/*
 * sc_placement_set_shards - replicate `unit` k ways (k = 1 undoes it).
 * Returns 0; SC_EINVAL (unit out of range, k out of 1..64, or a unit that
 * cannot be sharded: the message names the node that prevents it);
 * SC_ESTATE (a new k after manual ranks: they name replica slots).
 * Nothing changes on failure.
 */
int sc_placement_set_shards(struct sc_placement *p, uint32_t unit, uint32_t k);

/* The most process ranks a placement spans, and the longest list of
 * ranks sc_placement_parse reads. */
#define SC_PLACEMENT_MAX_RANKS	   4096
#define SC_PLACEMENT_MAX_RANK_LIST 256

/*
 * sc_placement_spread_ranks - spread the replicas over `nranks` ranks by
 * the spread rule (the top), replacing any manual ranks. Returns 0;
 * SC_EINVAL (NULL, nranks out of 1..SC_PLACEMENT_MAX_RANKS).
 */
int sc_placement_spread_ranks(struct sc_placement *p, uint32_t nranks);

/*
 * sc_placement_set_ranks - replica slot i (unit-major) on rank[i], over
 * `nranks` ranks; n must be sc_placement_replicas(p). Returns
 *   0          the ranks are set (copied);
 *   SC_EINVAL  NULL, nranks out of range, a wrong n, a rank >= nranks
 *              (naming the slot);
 *   SC_ENOMEM.
 * Nothing changes on failure.
 */
int sc_placement_set_ranks(struct sc_placement *p, uint32_t nranks,
			   const uint32_t *rank, size_t n);

/* sc_placement_destroy - free it. NULL is allowed. */
void sc_placement_destroy(struct sc_placement *p);

/* --- reading ---------------------------------------------------------------
 */

/* The graph it places (borrowed). */
const struct sc_graph *sc_placement_graph(const struct sc_placement *p);

/* "single", "per-node", "chains", "random", "manual", "sharded" or
 * "balanced". */
const char *sc_placement_strategy(const struct sc_placement *p);

/* How many units (before replication). */
uint32_t sc_placement_units(const struct sc_placement *p);

/* How many nodes it places (the graph's node count when it was made). */
size_t sc_placement_nodes(const struct sc_placement *p);

/* sc_placement_unit_of - the unit of node id (>= 0), or SC_ENOENT. */
int sc_placement_unit_of(const struct sc_placement *p, int node);

/* sc_placement_shards - the replication of `unit` (1 if not sharded, 0 if
 * unit is out of range). */
uint32_t sc_placement_shards(const struct sc_placement *p, uint32_t unit);

/* sc_placement_replicas - replica slots: the sum of every unit's shards. */
size_t sc_placement_replicas(const struct sc_placement *p);

/* sc_placement_ranks - the ranks it spans (1 unless ranks were set). */
uint32_t sc_placement_ranks(const struct sc_placement *p);

/* sc_placement_rank_of - the rank of replica `replica` of `unit`, >= 0;
 * SC_ENOENT (no such unit or replica), SC_EINVAL (NULL). Any thread. */
int sc_placement_rank_of(const struct sc_placement *p, uint32_t unit,
			 uint32_t replica);

/*
 * sc_placement_key - the routing key width of stream `stream` as it enters
 * sharded `unit` (how many leading columns are hashed). Every stream that
 * enters a unit sc_placement_set_shards accepted has one. Returns 0 and
 * *key; SC_EINVAL if the unit is not sharded or its keyed node does not
 * read the stream.
 */
int sc_placement_key(const struct sc_placement *p, uint32_t unit, int stream,
		     uint32_t *key);

/*
 * sc_placement_fprint - the placement as text: a header line, then one line
 * per unit ("unit 2 x4: agg_row (aggregate), ..."; across ranks the header
 * says " over N ranks" and each unit " @rank R" or " @ranks R,R,.." per
 * replica), then fflush(f), since
 * a buffered stream reports most write failures only when flushed. After
 * a failed write nothing more is written. Returns
 *   0          all of it was written and flushed;
 *   SC_EINVAL  p or f is NULL (nothing written);
 *   SC_EIO     a write or the flush failed (a full disk, say);
 *              the message names the system's reason, and f may hold
 *              part of the text.
 * Any thread, one per stream.
 */
int sc_placement_fprint(const struct sc_placement *p, FILE *f);

/*
 * sc_placement_fprint_dot - the placement as a Graphviz digraph: one
 * cluster per unit labelled with its index and shards, every node labelled
 * with its name and kind, every graph edge (bold when it crosses units,
 * labelled with the port when the reader has several), then fflush(f).
 * Returns and writes as sc_placement_fprint (SC_EIO on a failed write).
 */
int sc_placement_fprint_dot(const struct sc_placement *p, FILE *f);

#ifdef __cplusplus
}
#endif

#endif /* SC_UNITS_PLACEMENT_H */

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
 *             tail runs in the replicas too), replicated K ways.
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

/*
 * sc_placement_parse - a strategy by name, for tools: "single",
 * "per-node", "chains", "random:N" (seeded by `seed`) or "sharded:K".
 * Returns 0 and *out; SC_EINVAL for an unknown name (the message lists the
 * known ones); errors of the strategy.
 */
int sc_placement_parse(const struct sc_graph *g, const char *spec,
		       uint64_t seed, struct sc_placement **out);

/*
 * sc_placement_set_shards - replicate `unit` k ways (k = 1 undoes it).
 * Returns 0; SC_EINVAL (unit out of range, k out of 1..64, or a unit that
 * cannot be sharded: the message names the node that prevents it).
 * Nothing changes on failure.
 */
int sc_placement_set_shards(struct sc_placement *p, uint32_t unit, uint32_t k);

/* sc_placement_destroy - free it. NULL is allowed. */
void sc_placement_destroy(struct sc_placement *p);

/* --- reading ---------------------------------------------------------------
 */

/* The graph it places (borrowed). */
const struct sc_graph *sc_placement_graph(const struct sc_placement *p);

/* "single", "per-node", "chains", "random", "manual" or "sharded". */
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
 * per unit ("unit 2 x4: agg_row (aggregate), ..."), then fflush(f), since
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

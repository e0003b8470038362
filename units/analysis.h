/*
 * analysis.h - what the runtime must know about a placed graph before it
 * builds the units: loops that cross units, and which unit edges gate
 * backpressure. It sits beside the placement (placement.h): both read the
 * graph and the unit of each node, nothing else.
 *
 * Loops. A loop of the graph (a cycle through a feedback and a delay) must
 * stay inside one unit: across units, every step of the delay's unit is
 * driven by frames and emits what the loop latched, so the loop's frames
 * would circulate between units for ever and the runtime would never be
 * idle. The strongly connected components of the node graph find them:
 * an edge inside a component whose ends are in two units is such a loop.
 *
 * Gating. Inside a cycle of units, a unit that stopped reading because its
 * consumer is full, whose consumer stopped for the same reason, would
 * deadlock; across the components of the unit graph, the unit graph is a
 * DAG, where backpressure always ends at a sink that reads. So an edge
 * from unit a to unit b gates backpressure (subcircuit.h) exactly when a
 * and b lie in different components of the unit graph.
 *
 * Ticks. In tick mode (units/runtime.h) a unit steps tick t once every
 * input has passed t, so two units that wait for each other's tick t
 * would wait for ever, except where the stream between them is a delay's
 * output: its unit announces tick t + 1 of it once it has stepped t
 * (units/subcircuit.h, "Ahead ports"). So in tick mode a loop may cross
 * units, and the condition is that the unit graph without the delays'
 * streams is acyclic (the same Tarjan pass, skipping those arcs); a cycle
 * of units that crosses at no delay's output is refused, naming a stream
 * on it.
 *
 * Modes. The coalescing mode (units/runtime.h, "Modes") lets a unit group
 * frames into steps as its turns find them, which is exact only for
 * operators that are functions of their input's integral: every operator
 * but integrate, differentiate and delay, whose output is per tick (the
 * grouping is the tick). sc_analysis_check_mode refuses those, naming the
 * first such node, unless the runtime asked for tick mode.
 *
 * Cost: Tarjan's algorithm, O(nodes + edges) once over the nodes and once
 * over the units, at runtime create; the mode check is one pass over the
 * nodes.
 */
#ifndef SC_UNITS_ANALYSIS_H
#define SC_UNITS_ANALYSIS_H

#include <stdbool.h>
#include <stdint.h>

#include "operators/graph.h"
#include "units/placement.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The analysis of one placement, on the caller's storage. */
struct sc_analysis {
	uint32_t nunits; /* units of the placement */
	uint32_t *comp;	 /* component of each unit in the unit graph */
};

/*
 * sc_analysis_init - check p's loops and find the unit graph's
 * components. Returns 0; SC_EINVAL (NULL, or a loop that crosses units,
 * naming an edge of it and the two units); SC_ENOMEM; an error of
 * sc_graph_node_info. On failure *a holds nothing. Any thread; g and p are
 * only read.
 */
int sc_analysis_init(struct sc_analysis *a, const struct sc_graph *g,
		     const struct sc_placement *p);

/*
 * sc_analysis_check_mode - whether g can run in the mode asked for
 * (`ticks`: tick mode; false: the coalescing mode). Returns
 *   0           tick mode, or every node is integral-functional;
 *   SC_EINVAL   the coalescing mode and a per-tick node (integrate,
 *               differentiate, delay: a loop holds one too), named with
 *               its kind and why: its output would depend on the schedule;
 *               also g NULL;
 *   an error of sc_graph_node_info.
 * Any thread; g is only read.
 */
int sc_analysis_check_mode(const struct sc_graph *g, bool ticks);

/*
 * sc_analysis_init_mode - as sc_analysis_init in the coalescing mode
 * (ticks false); in tick mode (ticks true) a loop may cross units, and
 * what is refused (SC_EINVAL, naming a stream and its two units) is a
 * cycle of units that crosses at no delay's output (see Ticks above).
 */
int sc_analysis_init_mode(struct sc_analysis *a, const struct sc_graph *g,
			  const struct sc_placement *p, bool ticks);

/* sc_analysis_fini - free what init allocated. NULL and a zeroed analysis
 * are allowed. */
void sc_analysis_fini(struct sc_analysis *a);

/* sc_analysis_gates - whether an edge from unit `from` to unit `to` gates
 * backpressure: they lie in different components (both < nunits). */
bool sc_analysis_gates(const struct sc_analysis *a, uint32_t from, uint32_t to);

#ifdef __cplusplus
}
#endif

#endif /* SC_UNITS_ANALYSIS_H */

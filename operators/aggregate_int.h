/*
 * aggregate_int.h - what a graph's aggregate node keeps: its spec and the
 * flags it was declared with (sc_graph_aggregate_flags), so that every
 * circuit made from the graph, whole or a unit's part, creates the same
 * aggregate. Internal to graph.c, circuit_ops.c and aggregate.c.
 */
#ifndef SC_AGGREGATE_INT_H
#define SC_AGGREGATE_INT_H

#include <stdint.h>

#include "operators/aggregate.h"

struct sc__aggregate_decl {
	struct sc_aggregate_spec spec; /* first: the node's spec pointer is
					  also a spec pointer */
	uint32_t flags;		       /* sc_aggregate_create_flags' */
};

/* sc__aggregate_create_decl - sc_aggregate_create_flags(&d->spec,
 * d->flags, out), with its return codes. */
int sc__aggregate_create_decl(const struct sc__aggregate_decl *d,
			      struct sc_aggregate **out);

#endif /* SC_AGGREGATE_INT_H */

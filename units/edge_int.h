/*
 * edge_int.h - library-internal: the holds an edge's frames keep on their
 * symbols (operators/symbol.h, "Who holds an id").
 *
 * An edge given the symbol columns of its stream holds one reference per
 * symbol word of every frame it has accepted, from the moment it accepts
 * it (pushed into the ring, or summed into the outbox) until the frame
 * leaves the edge: drained or refused at a close, released at destroy, or
 * handed to the consumer, which either hands the holds on with it
 * (sc__circuit_feed_held: the circuit's fed frame keeps them) or lets it
 * go with sc__edge_frame_done once it has fed it (the circuit having taken
 * its own hold). The
 * outbox's sum takes its holds before the parts it replaces let theirs
 * go, so an id both carry never reaches zero in between. A frame refused
 * at a closed edge is never held.
 */
#ifndef SC_UNITS_EDGE_INT_H
#define SC_UNITS_EDGE_INT_H

#include "operators/symbol_int.h"
#include "units/edge.h"

/* sc__edge_set_symbols - the frames of e hold the ids of columns s (copied;
 * tab NULL or mask 0: none). Before any frame is sent. */
void sc__edge_set_symbols(struct sc_edge *e, const struct sc__symcols *s);

/* sc__edge_symbols - the columns whose ids e's frames hold (none: tab
 * NULL or mask 0). A consumer may hand a polled frame's holds on (then it
 * lets the frame go with sc_batch_release, not sc__edge_frame_done). */
const struct sc__symcols *sc__edge_symbols(const struct sc_edge *e);

/* sc__edge_frame_done - the consumer is done with frame b (owned) that it
 * polled from e: drop the edge's holds on its ids, then release it. A
 * marker (NULL) is allowed. */
void sc__edge_frame_done(struct sc_edge *e, struct sc_batch *b);

/* sc__exchange_trace_set_symbols - the runs of trace t (units/exchange.h,
 * a restartable edge's integral of its sends) hold the ids of columns s, as
 * a circuit's trace holds its runs' ids: taken when a share is recorded,
 * the sum's before the runs it replaces let go, all dropped at fini.
 * Before anything is recorded. */
struct sc_exchange_trace;
void sc__exchange_trace_set_symbols(struct sc_exchange_trace *t,
				    const struct sc__symcols *s);

#endif /* SC_UNITS_EDGE_INT_H */

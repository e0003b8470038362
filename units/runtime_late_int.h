/*
 * runtime_late_int.h - the host side of lateness in the runtime
 * (operators/waterline.h): each input node's declarations, checked at
 * sc_runtime_submit before anything is sent, so that a submission with a
 * late row is refused whole (SC_ELATE) on the host instead of failing the
 * feed inside a unit. Library internal.
 *
 * Why the host's check suffices for the units: the input node's circuit
 * (in a unit, or each replica of a sharded one) checks its own feeds
 * against its own waterline, the largest value among the rows it was sent
 * minus L. A replica gets a share of what the host accepted, so its
 * largest value is at most the host's: every row the host lets through is
 * above the replica's waterline too, and the feed never refuses.
 *
 * Threads: one submitter at a time (the input's lock, runtime_host.c).
 */
#ifndef SC_UNITS_RUNTIME_LATE_INT_H
#define SC_UNITS_RUNTIME_LATE_INT_H

#include <stddef.h>
#include <stdint.h>

#include "operators/batch.h"
#include "operators/graph.h"
#include "operators/waterline.h"

/* The declarations of one input node. */
struct sc__rt_late {
	struct sc_late *decl; /* one per declaration on the node */
	size_t *nlate;	      /* scratch: the late rows of a submission */
	size_t n;	      /* how many declarations (0: no check) */
	int input;	      /* the input node */
	char who[48];	      /* "sc_runtime_submit: input N", for refusals */
};

/* sc__rt_late_init - the declarations of input node `input` of g. Returns
 * 0 or SC_ENOMEM. */
int sc__rt_late_init(struct sc__rt_late *l, const struct sc_graph *g,
		     int input);

/* sc__rt_late_fini - free them. */
void sc__rt_late_fini(struct sc__rt_late *l);

/*
 * sc__rt_late_check - count b's late rows against every declaration's
 * waterline now (nothing moves). Returns 0 (b may be sent; then call
 * sc__rt_late_advance once it was) or SC_ELATE (a declaration without
 * SC_LATE_ADMIT has late rows: counted as refused, the message names the
 * first; nothing else moves). `input` is the node given to init. The rule
 * is operators/late_int.h's, shared with the single circuit's feed.
 */
int sc__rt_late_check(struct sc__rt_late *l, const struct sc_batch *b,
		      int input);

/* sc__rt_late_advance - b was sent: every waterline advances with its
 * rows, and the late rows sc__rt_late_check counted are admitted. */
void sc__rt_late_advance(struct sc__rt_late *l, const struct sc_batch *b);

/* sc__rt_late_counts - late rows admitted and refused so far, over the
 * declarations. */
void sc__rt_late_counts(const struct sc__rt_late *l, uint64_t *admitted,
			uint64_t *refused);

#endif /* SC_UNITS_RUNTIME_LATE_INT_H */

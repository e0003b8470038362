/*
 * settle_step.h - one host submission, and a generator of them.
 *
 * A submission (an input node and a batch) is what the settle check
 * (units/settle.h) replays into a runtime and into the single circuit, and
 * what a placement's calibration (units/placement.h) feeds a circuit to
 * measure each node's cost. Both floors need the type, so it sits below
 * both: placement includes this header, never settle.h.
 *
 * Ownership. A step borrows its batch; a generator's step hands a new
 * batch to its caller, who releases it.
 */
#ifndef SC_UNITS_SETTLE_STEP_H
#define SC_UNITS_SETTLE_STEP_H

#include <stddef.h>

#include "operators/batch.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One host submission: batch (borrowed by the callee) to input node; in
 * a tick work, {SC_SETTLE_TICK, NULL} closes the host tick instead. */
struct sc_settle_step {
	int input;
	struct sc_batch *batch;
};

/* The input of a step that closes the host tick (tick works only). */
#define SC_SETTLE_TICK (-1)

/*
 * sc_settle_gen_fn - produce submission i (0, 1, ... in order) into *out:
 * the input node and a new batch, which the caller then owns. Returns 0,
 * or a negative SC_E* code that stops the caller.
 */
typedef int (*sc_settle_gen_fn)(void *ctx, size_t i,
				struct sc_settle_step *out);

#ifdef __cplusplus
}
#endif

#endif /* SC_UNITS_SETTLE_STEP_H */

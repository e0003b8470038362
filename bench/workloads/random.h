/*
 * random.h - seeded random circuits, for `subcirc stress` and the settle
 * tests.
 *
 * A random circuit is a graph of 1..3 inputs and 2..11 operators drawn
 * from those whose output is a function of their input's integral (map,
 * filter, flat_map, index_by, plus, negate, minus, join, antijoin,
 * distinct, aggregate, a hopping window): the operators every placement must
 * settle exactly where the single circuit does (units/runtime.h). Every stream
 * has the same schema, (key, value) as two i64 columns, so that any operator
 * can read any stream: a join's three columns are projected back to (key, right
 * value), an aggregate's output is (key, sum), a window's (key, start). Keys
 * stay in 0..7 so that joins and groups meet. Every stream that no operator
 * reads becomes an output.
 *
 * The workload (sc_randc_next) is a seeded list of small deltas (1..4
 * rows, weights +1 or -1) to random inputs. The same seed makes the same
 * graph and the same deltas, on every machine.
 *
 * For tick mode (sc_randc_create_ticks) the draw also holds the per-tick
 * operators delay, integrate and differentiate, and a running total
 * through a delay (s = a + delay(s), a loop): the coalescing mode refuses
 * them (units/runtime.h, "Modes"), so only a tick-mode run may take such
 * a circuit. The plain draw is unchanged by it: a seed makes the same
 * circuit as before.
 *
 * There is no from-scratch reference here: the reference is the single
 * circuit of the same graph fed the same deltas (graph.h's operators are
 * checked against their own oracles in tests/operators/).
 */
#ifndef SC_BENCH_WORKLOADS_RANDOM_H
#define SC_BENCH_WORKLOADS_RANDOM_H

#include <stddef.h>
#include <stdint.h>

#include "operators/batch.h"
#include "operators/error.h"
#include "operators/graph.h"
#include "units/settle.h"

struct sc_randc;

/* The most inputs and outputs of a random circuit. */
#define SC_RANDC_MAX_IO 16

/*
 * sc_randc_create - the random circuit of `seed`. Returns 0 and *out,
 * SC_EINVAL (NULL), SC_ENOMEM, or an error of the graph (a bug: every
 * drawn node type-checks).
 */
int sc_randc_create(uint64_t seed, struct sc_randc **out);

/* sc_randc_create_ticks - as sc_randc_create, with the per-tick operators
 * and loops through a delay in the draw (tick mode only, see above). */
int sc_randc_create_ticks(uint64_t seed, struct sc_randc **out);

/* sc_randc_destroy - free it and its graph; SC_EBUSY while a circuit or
 * runtime of the graph lives. NULL is allowed. */
int sc_randc_destroy(struct sc_randc *rc);

/* The graph (owned). */
struct sc_graph *sc_randc_graph(const struct sc_randc *rc);

/* The input node ids: writes at most max, returns how many there are. */
size_t sc_randc_inputs(const struct sc_randc *rc, int *ids, size_t max);

/* The output node ids: writes at most max, returns how many there are. */
size_t sc_randc_outputs(const struct sc_randc *rc, int *ids, size_t max);

/*
 * sc_randc_next - the next delta: *input (an input node) and *out (a new
 * batch, caller releases). Returns 0, SC_EINVAL, SC_ENOMEM.
 */
int sc_randc_next(struct sc_randc *rc, int *input, struct sc_batch **out);

/*
 * sc_randc_settle_step - the random circuit as a settle workload
 * (units/settle.h): an sc_settle_gen_fn whose ctx is the struct sc_randc;
 * submission i is sc_randc_next. Returns what sc_randc_next does.
 */
int sc_randc_settle_step(void *ctx, size_t i, struct sc_settle_step *out);

#endif /* SC_BENCH_WORKLOADS_RANDOM_H */

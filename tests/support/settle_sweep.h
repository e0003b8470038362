/*
 * settle_sweep.h - the sweep the settle suites of partial sums share
 * (tests/units/test_settle_{row_weights,partial_folds,nonneg}.c): one
 * work, the single circuit's reference, then every placement strategy x
 * `nsched` seeded schedules on the simulator (1 to 3 units held at once,
 * edge capacities 2 and 64 in turn), each of which must settle where the
 * single circuit does. Criterion's asserts, so only inside a Test().
 */
#ifndef SC_TESTS_SUPPORT_SETTLE_SWEEP_H
#define SC_TESTS_SUPPORT_SETTLE_SWEEP_H

#include <criterion/criterion.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "operators/batch.h"
#include "operators/graph.h"
#include "tests/support/prop.h"
#include "units/placement.h"
#include "units/settle.h"

static const char *const sc_sweep_strategies[] = {
    "single", "per-node", "chains", "random:2", "sharded:2", "sharded:3"};
#define SC_SWEEP_NSTRATEGIES                                                   \
	(sizeof(sc_sweep_strategies) / sizeof(sc_sweep_strategies[0]))

/* Submission i of n goes to one input: whole[k] is every submission to
 * inputs[k] summed into one (sc_batch_sum sums each row in 128 bits, so a
 * total that fits is exact even where a running sum would pass int64):
 * the reference a work is held to. The caller releases whole[k].batch. */
static inline void
sc_sweep_consolidate(const struct sc_settle_step *steps, size_t n,
		     const int *inputs, size_t ninputs,
		     struct sc_settle_step *whole)
{
	struct sc_batch **mine = calloc(n ? n : 1, sizeof(struct sc_batch *));

	cr_assert(mine != NULL);
	for (size_t in = 0; in < ninputs; in++) {
		size_t k = 0;

		whole[in].input = inputs[in];
		for (size_t i = 0; i < n; i++)
			if (steps[i].input == inputs[in])
				mine[k++] = steps[i].batch;
		cr_assert_eq(sc_batch_sum(mine, k, &whole[in].batch), 0, "%s",
			     sc_errmsg());
	}
	free(mine);
}

/* Run `work` (of graph g) under every strategy x nsched schedules drawn
 * from seed; each must settle with `outputs` outputs compared. `replay`
 * (the property's replay line) is printed with a failure. Returns the
 * runs made: SC_SWEEP_NSTRATEGIES * nsched. */
static inline uint64_t
sc_sweep_settle(struct sc_settle_work *work, const struct sc_graph *g,
		uint64_t seed, uint64_t nsched, uint32_t outputs,
		const char *replay)
{
	static const uint32_t caps[] = {2, 64};
	uint64_t runs = 0;

	for (size_t si = 0; si < SC_SWEEP_NSTRATEGIES; si++) {
		struct sc_placement *p = NULL;

		cr_assert_eq(
		    sc_placement_parse(g, sc_sweep_strategies[si], seed, &p), 0,
		    "%s", sc_errmsg());
		for (uint64_t sched = 0; sched < nsched; sched++) {
			struct sc_settle_opts o = {
			    .mode = SC_SETTLE_SIM,
			    .seed = seed * 1000 + sched,
			    .units = 1 + (uint32_t)(sched % 3),
			    .edge_capacity = caps[sched % 2]};
			struct sc_settle_result res;

			cr_assert_eq(sc_settle_run(work, p, &o, &res), 0, "%s",
				     sc_errmsg());
			cr_assert(res.ok, "%s, capacity %u: %s\nreplay: %s\n%s",
				  sc_sweep_strategies[si], o.edge_capacity,
				  res.why, res.replay, replay);
			cr_assert_eq(res.outputs_compared, outputs);
			sc_settle_result_fini(&res);
			runs++;
		}
		sc_placement_destroy(p);
	}
	return runs;
}

#endif /* SC_TESTS_SUPPORT_SETTLE_SWEEP_H */

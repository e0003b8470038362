/*
 * test_random_circuit.c - seeded random circuits (DAGs of every operator,
 * with and without feedback loops through a delay, over random schemas)
 * checked whole against the independent reference evaluator of
 * tests/support/circuit_gen.h after every step: every node's delta, and
 * every output's integral.
 *
 * Replay a failure with the printed SC_SEED=... command; SC_SEEDS_SCALE
 * runs more seeds.
 */
#include <criterion/criterion.h>

#include "operators/circuit.h"
#include "tests/support/circuit_gen.h"
#include "tests/support/prop.h"

#define STEPS 16

/* Report one node's disagreement with the reference. */
static void
report(const struct cg_spec *s, int node, const struct sc_batch *got,
       const struct cz *want, const char *what, int step)
{
	(void)fprintf(stderr, "step %d: %s of node %d (%s) differs\n", step,
		      what, node, cg_op_name(s->nodes[node].op));
	cg_fprint(stderr, s);
	(void)fprintf(stderr, "circuit gave:\n");
	sc_batch_fprint(stderr, got, NULL);
	cz_fprint(stderr, want);
}

/* Compare every node's delta and every output's integral. */
static bool
check_all(const struct cg_spec *s, struct sc_circuit *c, int step)
{
	for (size_t i = 0; i < s->n; i++) {
		const struct cg_node *nd = &s->nodes[i];
		struct sc_batch *b = NULL;
		bool ok;

		cr_assert_eq(sc_circuit_delta(c, (int)i, &b), 0, "%s",
			     sc_errmsg());
		ok = cz_equals_batch(&nd->val, b);
		if (!ok)
			report(s, (int)i, b, &nd->val, "delta", step);
		sc_batch_release(b);
		if (!ok)
			return false;
		if (nd->op != CG_OUTPUT)
			continue;
		cr_assert_eq(sc_circuit_integral(c, (int)i, &b), 0, "%s",
			     sc_errmsg());
		ok = cz_equals_batch(&nd->st, b);
		if (!ok)
			report(s, (int)i, b, &nd->st, "integral", step);
		sc_batch_release(b);
		if (!ok)
			return false;
	}
	return true;
}

/* Feed every input a random delta, step both, compare. */
static bool
run_steps(struct cg_spec *s, struct sc_circuit *c, struct sc_rng *r)
{
	for (int step = 0; step < STEPS; step++) {
		struct sc_batch *fed[8] = {0};
		bool ok;

		for (size_t i = 0; i < s->ninputs; i++) {
			fed[i] = cg_gen_delta(s, s->inputs[i], r);
			if (fed[i])
				cr_assert_eq(
				    sc_circuit_feed(c, s->inputs[i], fed[i]), 0,
				    "%s", sc_errmsg());
		}
		cr_assert_eq(sc_circuit_step(c), 0, "step %d: %s", step,
			     sc_errmsg());
		cg_ref_step(s, fed);
		ok = check_all(s, c, step);
		for (size_t i = 0; i < s->ninputs; i++)
			sc_batch_release(fed[i]);
		if (!ok)
			return false;
	}
	return true;
}

static void
run_seeds(uint64_t base, uint64_t count, const struct cg_opts *o, size_t work,
	  const char *test)
{
	uint64_t n = sc_prop_count(count);

	for (uint64_t k = 0; k < n; k++) {
		uint64_t seed = base + k;
		struct cg_spec *s = cg_generate(seed, o);
		struct sc_circuit *c = NULL;
		struct sc_rng r;
		bool ok;

		cr_assert_eq(sc_circuit_create(s->graph, &c), 0,
			     "seed %llu: %s", (unsigned long long)seed,
			     sc_errmsg());
		cr_assert_eq(sc_circuit_set_work(c, work), 0);
		sc_rng_seed(&r, seed ^ 0x5eedf00dULL);
		ok = run_steps(s, c, &r);
		sc_circuit_destroy(c);
		cg_free(s);
		SC_PROP_ASSERT(seed, "random_circuit", test, ok,
			       "random circuit of seed %llu disagrees with "
			       "the reference",
			       (unsigned long long)seed);
	}
}

Test(random_circuit, linear_dags_match_the_reference)
{
	struct cg_opts o;

	cg_opts_default(&o);
	o.stateful = false;
	o.loops = false;
	run_seeds(sc_prop_seed(1000), 150, &o, 256,
		  "linear_dags_match_the_reference");
}

Test(random_circuit, stateful_dags_match_the_reference)
{
	struct cg_opts o;

	cg_opts_default(&o);
	o.loops = false;
	run_seeds(sc_prop_seed(2000), 150, &o, 256,
		  "stateful_dags_match_the_reference");
}

Test(random_circuit, circuits_with_delay_loops_match_the_reference)
{
	struct cg_opts o;

	cg_opts_default(&o);
	run_seeds(sc_prop_seed(3000), 150, &o, 256,
		  "circuits_with_delay_loops_match_the_reference");
}

/* Merge work changes no result: with no per-step budget (traces merge
 * only through their safety net) and with a tiny one. */
Test(random_circuit, results_do_not_depend_on_the_merge_budget)
{
	struct cg_opts o;

	cg_opts_default(&o);
	run_seeds(sc_prop_seed(4000), 40, &o, 0,
		  "results_do_not_depend_on_the_merge_budget");
	run_seeds(sc_prop_seed(4000), 40, &o, 1,
		  "results_do_not_depend_on_the_merge_budget");
}

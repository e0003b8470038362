/*
 * test_workload_grid.c - the workloads `subcirc run/place/stress` drive.
 * The grid (bench/workloads/grid.h): its from-scratch reference is what the
 * single circuit computes, it is a function of its seed, and its stamp
 * reads back the last batch. The random circuits
 * (bench/workloads/random.h): a function of their seed, with outputs,
 * and every delta goes to one of their inputs.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/workloads/grid.h"
#include "bench/workloads/random.h"
#include "operators/circuit.h"
#include "tests/support/prop.h"

/* Feed `n` batches of `edits` to the single circuit, one step each; the
 * outputs' integrals must equal the reference after every step. */
static void
check_reference_equals_single(uint64_t seed, int64_t rows, int64_t cols,
			      size_t n, size_t edits)
{
	struct sc_grid_opts o = {.rows = rows, .cols = cols, .seed = seed};
	struct sc_grid *gr = NULL;
	struct sc_grid_nodes nd;
	struct sc_circuit *c = NULL;
	char replay[256];

	sc_prop_replay(replay, sizeof(replay), seed, "grid",
		       "reference_equals_the_single_circuit");
	cr_assert_eq(sc_grid_create(&o, &gr), 0);
	sc_grid_nodes(gr, &nd);
	cr_assert_eq(sc_circuit_create(sc_grid_graph(gr), &c), 0);
	for (size_t i = 0; i < n; i++) {
		struct sc_batch *b = NULL;
		const int outs[2] = {nd.out_grid, nd.out_totals};

		cr_assert_eq(sc_grid_next(gr, edits, &b), 0);
		cr_assert_eq(sc_circuit_feed(c, nd.cells, b), 0);
		cr_assert_eq(sc_circuit_step(c), 0);
		sc_batch_release(b);
		for (int k = 0; k < 2; k++) {
			struct sc_batch *got = NULL;

			cr_assert_eq(sc_circuit_integral(c, outs[k], &got), 0);
			cr_assert_eq(sc_grid_verify(gr, outs[k], got), 0,
				     "step %zu: %s; %s", i, sc_errmsg(),
				     replay);
			sc_batch_release(got);
		}
	}
	sc_circuit_destroy(c);
	cr_assert_eq(sc_grid_destroy(gr), 0);
}

Test(grid, reference_equals_the_single_circuit)
{
	uint64_t base = sc_prop_seed(7), count = sc_prop_count(8);

	for (uint64_t s = base; s < base + count; s++)
		check_reference_equals_single(s, 1 + (int64_t)(s % 9),
					      1 + (int64_t)((s / 3) % 9), 20,
					      1 + s % 17);
}

Test(grid, reference_of_a_larger_grid_equals_the_single_circuit)
{
	check_reference_equals_single(sc_prop_seed(42), 64, 48, 30, 500);
}

/* The batches of one seed, as one consolidated sum. */
static struct sc_batch *
batches_of(uint64_t seed, size_t n)
{
	struct sc_grid_opts o = {.rows = 10, .cols = 10, .seed = seed};
	struct sc_grid *gr = NULL;
	struct sc_batch *all = NULL;

	cr_assert_eq(sc_grid_create(&o, &gr), 0);
	cr_assert_eq(sc_batch_empty(3, &all), 0);
	for (size_t i = 0; i < n; i++) {
		struct sc_batch *b = NULL, *sum = NULL;

		cr_assert_eq(sc_grid_next(gr, 20, &b), 0);
		/* Scale by the position so that order matters too. */
		cr_assert_eq(sc_batch_scale(b, (int64_t)i + 1, &sum), 0);
		sc_batch_release(b);
		cr_assert_eq(sc_batch_add(all, sum, &b), 0);
		sc_batch_release(sum);
		sc_batch_release(all);
		all = b;
	}
	cr_assert_eq(sc_grid_destroy(gr), 0);
	return all;
}

Test(grid, same_seed_makes_the_same_batches_and_another_seed_does_not)
{
	struct sc_batch *a = batches_of(3, 10), *b = batches_of(3, 10);
	struct sc_batch *c = batches_of(4, 10);

	cr_assert(sc_batch_equal(a, b));
	cr_assert(!sc_batch_equal(a, c));
	sc_batch_release(a);
	sc_batch_release(b);
	sc_batch_release(c);
}

/* The stamp the totals' delta carries, read by a delta callback. */
struct stamp_seen {
	const struct sc_grid *gr;
	uint64_t seq;
};

static int
record_stamp(void *ctx, int node, const struct sc_batch *delta)
{
	struct stamp_seen *s = ctx;

	return sc_grid_stamp(s->gr, delta, &s->seq) == 0 ? 0 : SC_ESTATE;
}

Test(grid, stamp_of_the_totals_delta_is_the_last_batch)
{
	struct sc_grid_opts o = {.rows = 4, .cols = 4, .seed = 5};
	struct sc_grid *gr = NULL;
	struct sc_grid_nodes nd;
	struct sc_circuit *c = NULL;
	struct stamp_seen seen = {0};

	cr_assert_eq(sc_grid_create(&o, &gr), 0);
	seen.gr = gr;
	sc_grid_nodes(gr, &nd);
	cr_assert_eq(sc_circuit_create(sc_grid_graph(gr), &c), 0);
	cr_assert_eq(sc_circuit_on_delta(c, nd.out_totals, record_stamp, &seen),
		     0);
	for (uint64_t i = 1; i <= 5; i++) {
		struct sc_batch *b = NULL;

		cr_assert_eq(sc_grid_next(gr, 3, &b), 0);
		cr_assert_eq(sc_circuit_feed(c, nd.cells, b), 0);
		cr_assert_eq(sc_circuit_step(c), 0, "%s", sc_errmsg());
		sc_batch_release(b);
		cr_assert_eq(seen.seq, i);
		cr_assert_eq(sc_grid_seq(gr), i);
	}
	cr_assert_eq(sc_grid_edits(gr), 15);
	sc_circuit_destroy(c);
	cr_assert_eq(sc_grid_destroy(gr), 0);
}

Test(grid, verify_names_a_wrong_integral)
{
	struct sc_grid_opts o = {.rows = 3, .cols = 3, .seed = 9};
	struct sc_grid *gr = NULL;
	struct sc_grid_nodes nd;
	struct sc_batch *b = NULL, *ref = NULL, *wrong = NULL;

	cr_assert_eq(sc_grid_create(&o, &gr), 0);
	sc_grid_nodes(gr, &nd);
	cr_assert_eq(sc_grid_next(gr, 4, &b), 0);
	cr_assert_eq(sc_grid_reference(gr, nd.out_totals, &ref), 0);
	cr_assert_eq(sc_batch_scale(ref, 2, &wrong), 0);
	cr_assert_eq(sc_grid_verify(gr, nd.out_totals, ref), 0);
	cr_assert_eq(sc_grid_verify(gr, nd.out_totals, wrong), SC_ESTATE);
	cr_assert(strstr(sc_errmsg(), "first difference") != NULL, "%s",
		  sc_errmsg());
	sc_batch_release(b);
	sc_batch_release(ref);
	sc_batch_release(wrong);
	cr_assert_eq(sc_grid_destroy(gr), 0);
}

Test(grid, bad_sizes_and_rates_are_refused_by_name)
{
	struct sc_grid_opts o = {.rows = 0, .cols = 3};
	struct sc_grid *gr = NULL;

	cr_assert_eq(sc_grid_create(&o, &gr), SC_EINVAL);
	cr_assert(strstr(sc_errmsg(), "rows") != NULL);
	o.rows = 3;
	o.fault_rate = 1.5;
	cr_assert_eq(sc_grid_create(&o, &gr), SC_EINVAL);
	cr_assert(strstr(sc_errmsg(), "fault_rate") != NULL);
	cr_assert_null(gr);
}

/* Whichever graph call of the build fails (build_fail_at = k, as running
 * out of memory there would), sc_grid_create returns that error and no
 * grid; past the last call, the grid is built with every node and both
 * outputs. The output "grid" is read by no later node, so its failure
 * was once lost and a grid without that output returned. */
Test(grid, a_failure_of_any_graph_call_of_the_build_is_reported)
{
	int k, built = 0;

	for (k = 1; k <= 64 && !built; k++) {
		struct sc_grid_opts o = {
		    .rows = 2, .cols = 3, .seed = 1, .build_fail_at = k};
		struct sc_grid *gr = NULL;
		struct sc_grid_nodes nd;
		int rc = sc_grid_create(&o, &gr);

		if (rc == 0) {
			sc_grid_nodes(gr, &nd);
			cr_assert(nd.out_grid >= 0 && nd.out_totals >= 0 &&
				      nd.grid >= 0 && nd.cells >= 0,
				  "call %d: built without every node", k);
			cr_assert_eq(sc_graph_node_count(sc_grid_graph(gr)),
				     10);
			cr_assert_eq(sc_grid_destroy(gr), 0);
			built = k;
			continue;
		}
		cr_assert_eq(rc, SC_ENOMEM, "call %d: %s", k, sc_errmsg());
		cr_assert(strstr(sc_errmsg(), "injected") != NULL,
			  "call %d: %s", k, sc_errmsg());
		cr_assert_null(gr, "call %d", k);
	}
	/* Ten nodes and seven names: the grid needs 17 calls. */
	cr_assert_eq(built, 18, "first build that succeeded: %d", built);
}

Test(grid, full_fault_rate_fails_the_projection)
{
	struct sc_grid_opts o = {
	    .rows = 2, .cols = 2, .seed = 1, .fault_rate = 1.0};
	struct sc_grid *gr = NULL;
	struct sc_grid_nodes nd;
	struct sc_circuit *c = NULL;
	struct sc_batch *b = NULL;

	cr_assert_eq(sc_grid_create(&o, &gr), 0);
	sc_grid_nodes(gr, &nd);
	cr_assert_eq(sc_circuit_create(sc_grid_graph(gr), &c), 0);
	cr_assert_eq(sc_grid_next(gr, 2, &b), 0);
	cr_assert_eq(sc_circuit_feed(c, nd.cells, b), 0);
	cr_assert_eq(sc_circuit_step(c), SC_ECALLBACK);
	sc_batch_release(b);
	sc_circuit_destroy(c);
	cr_assert_eq(sc_grid_destroy(gr), 0);
}

/* The random circuit of a seed, fed its first n deltas: the outputs'
 * integrals, summed into one batch per output (written to out[]). */
static size_t
randc_run(uint64_t seed, size_t n, struct sc_batch **out)
{
	struct sc_randc *r = NULL;
	struct sc_circuit *c = NULL;
	int outs[SC_RANDC_MAX_IO];
	size_t nout;

	cr_assert_eq(sc_randc_create(seed, &r), 0);
	nout = sc_randc_outputs(r, outs, SC_RANDC_MAX_IO);
	cr_assert_eq(sc_circuit_create(sc_randc_graph(r), &c), 0);
	for (size_t i = 0; i < n; i++) {
		struct sc_batch *b = NULL;
		int in = -1;

		cr_assert_eq(sc_randc_next(r, &in, &b), 0);
		cr_assert_eq(sc_circuit_feed(c, in, b), 0);
		cr_assert_eq(sc_circuit_step(c), 0, "%s", sc_errmsg());
		sc_batch_release(b);
	}
	for (size_t i = 0; i < nout; i++)
		cr_assert_eq(sc_circuit_integral(c, outs[i], &out[i]), 0);
	sc_circuit_destroy(c);
	cr_assert_eq(sc_randc_destroy(r), 0);
	return nout;
}

Test(randc, same_seed_makes_the_same_circuit_and_deltas)
{
	uint64_t base = sc_prop_seed(11), count = sc_prop_count(20);

	for (uint64_t s = base; s < base + count; s++) {
		struct sc_batch *a[SC_RANDC_MAX_IO], *b[SC_RANDC_MAX_IO];
		size_t na = randc_run(s, 25, a), nb = randc_run(s, 25, b);

		cr_assert_gt(na, 0, "seed %llu has no output",
			     (unsigned long long)s);
		cr_assert_eq(na, nb);
		for (size_t i = 0; i < na; i++) {
			cr_assert(sc_batch_equal(a[i], b[i]), "seed %llu",
				  (unsigned long long)s);
			sc_batch_release(a[i]);
			sc_batch_release(b[i]);
		}
	}
}

Test(randc, inputs_are_the_input_nodes_and_every_delta_goes_to_one)
{
	uint64_t base = sc_prop_seed(31), count = sc_prop_count(20);

	for (uint64_t s = base; s < base + count; s++) {
		struct sc_randc *r = NULL;
		int ins[SC_RANDC_MAX_IO], one;
		size_t nin, inputs_seen = 0;

		cr_assert_eq(sc_randc_create(s, &r), 0);
		nin = sc_randc_inputs(r, ins, SC_RANDC_MAX_IO);
		cr_assert(nin >= 1 && nin <= 3, "seed %llu: %zu inputs",
			  (unsigned long long)s, nin);
		/* max bounds the writes, never the count */
		cr_assert_eq(sc_randc_inputs(r, &one, 1), nin);
		cr_assert_eq(one, ins[0]);
		for (size_t i = 0; i < sc_graph_node_count(sc_randc_graph(r));
		     i++) {
			struct sc_node_info ni;
			bool listed = false;

			cr_assert_eq(
			    sc_graph_node_info(sc_randc_graph(r), (int)i, &ni),
			    0);
			for (size_t k = 0; k < nin; k++)
				listed = listed || ins[k] == (int)i;
			cr_assert_eq(listed, ni.kind == SC_NODE_INPUT,
				     "seed %llu node %zu (%s)",
				     (unsigned long long)s, i, ni.name);
			inputs_seen += ni.kind == SC_NODE_INPUT;
		}
		cr_assert_eq(inputs_seen, nin);
		for (int d = 0; d < 40; d++) {
			struct sc_batch *b = NULL;
			bool listed = false;
			int in = -1;

			cr_assert_eq(sc_randc_next(r, &in, &b), 0);
			for (size_t k = 0; k < nin; k++)
				listed = listed || ins[k] == in;
			cr_assert(listed, "delta %d went to node %d", d, in);
			sc_batch_release(b);
		}
		cr_assert_eq(sc_randc_destroy(r), 0);
	}
}

Test(grid, staged_map_puts_the_aggregates_in_unit_0_and_the_rest_in_1)
{
	struct sc_grid_opts o = {.rows = 3, .cols = 3, .seed = 1};
	struct sc_grid *gr = NULL;
	struct sc_grid_nodes nd;
	int32_t map[32];
	size_t n;

	cr_assert_eq(sc_grid_create(&o, &gr), 0);
	sc_grid_nodes(gr, &nd);
	n = sc_graph_node_count(sc_grid_graph(gr));
	cr_assert_eq(sc_grid_staged(gr, map, n - 1), SC_EINVAL);
	cr_assert_eq(sc_grid_staged(gr, map, n), 0);
	cr_assert_eq(map[nd.cells], 0);
	cr_assert_eq(map[nd.agg_row], 0);
	cr_assert_eq(map[nd.by_col], 0);
	cr_assert_eq(map[nd.agg_col], 0);
	cr_assert_eq(map[nd.proj_row], 1);
	cr_assert_eq(map[nd.proj_col], 1);
	cr_assert_eq(map[nd.grid], 1);
	cr_assert_eq(map[nd.totals], 1);
	cr_assert_eq(map[nd.out_grid], 1);
	cr_assert_eq(map[nd.out_totals], 1);
	cr_assert_eq(sc_grid_destroy(gr), 0);
}

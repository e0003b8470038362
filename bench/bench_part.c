/*
 * bench_part.c - what one step of a part costs, next to the size of the
 * graph it was cut from.
 *
 * The graph: CHAINS chains of input -> map -> map -> map -> output, 5 nodes
 * each, 400 nodes in all. The part: the four computed nodes of chain 0
 * (three maps and the output), whose boundary input is chain 0's input,
 * fed through sc_circuit_feed by its id exactly as units/ feeds a part.
 *
 *  part of 4 in 400   ns per step of the part, fed a 1-row delta each step
 *                     and with nothing fed. A step should cost what the
 *                     part's four nodes cost, whatever the graph's size.
 *  part of 4 in 4     the same part cut from a graph of one chain: the
 *                     reference a part of 4 nodes should match.
 *  whole 400          ns per step of the circuit of the whole graph, one
 *                     input fed a 1-row delta (the other chains idle).
 *
 * Every figure is in ns per step, LOWER IS BETTER, the median of REPS runs
 * timed by the thread's CPU clock (the machine is shared with other jobs;
 * the work is single-threaded). --quick shrinks the step counts. Any
 * other argument runs only the cases whose name contains it (for counting
 * one case's instructions under callgrind).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/harness.h"
#include "operators/circuit.h"

#define REPS	  7
#define CHAIN_LEN 5  /* input, three maps, output */
#define CHAINS	  80 /* 400 nodes */

static void
fail(const char *what)
{
	(void)fprintf(stderr, "bench_part: %s: %s\n", what, sc_errmsg());
	exit(1);
}

static int
swap_inc(void *ctx, const uint64_t *row, uint64_t *out)
{
	(void)ctx;
	out[0] = row[1] + 1;
	out[1] = row[0];
	return 0;
}

/* A graph of `chains` chains; ids[k] are chain 0's nodes in chain order. */
static struct sc_graph *
make_graph(int chains, int ids[CHAIN_LEN])
{
	enum sc_type t[2] = {SC_TYPE_I64, SC_TYPE_I64};
	struct sc_schema s;
	struct sc_graph *g;

	if (sc_schema_init(&s, 2, t, NULL) || sc_graph_create(&g))
		fail("graph");
	for (int c = 0; c < chains; c++) {
		char in[16], out[16];
		int id, chain[CHAIN_LEN];

		(void)snprintf(in, sizeof(in), "in%d", c);
		(void)snprintf(out, sizeof(out), "out%d", c);
		id = sc_graph_input(g, in, &s);

		chain[0] = id;
		for (int k = 1; k < CHAIN_LEN - 1; k++)
			chain[k] = id = sc_graph_map(g, id, &s, swap_inc, NULL);
		chain[CHAIN_LEN - 1] = id = sc_graph_output(g, out, id);
		if (id < 0)
			fail("chain");
		if (c == 0)
			for (int k = 0; k < CHAIN_LEN; k++)
				ids[k] = chain[k];
	}
	return g;
}

/* ns per step of `steps` steps of c, feeding `delta` (or nothing) to
 * stream `in` before each. */
static double
time_steps(struct sc_circuit *c, int in, struct sc_batch *delta, int steps)
{
	uint64_t t0 = sc_bench_cpu_ns();

	for (int i = 0; i < steps; i++)
		if ((delta && sc_circuit_feed(c, in, delta)) ||
		    sc_circuit_step(c))
			fail("step");
	return (double)(sc_bench_cpu_ns() - t0) / steps;
}

/* The median over REPS fresh circuits: the part of chain 0, or the whole
 * graph. */
static double
bench_case(int chains, bool whole, struct sc_batch *delta, int steps)
{
	double ns[REPS];

	for (int r = 0; r < REPS; r++) {
		int ids[CHAIN_LEN];
		struct sc_graph *g = make_graph(chains, ids);
		struct sc_circuit *c;
		int rc = whole ? sc_circuit_create(g, &c)
			       : sc_circuit_create_part(g, ids + 1,
							CHAIN_LEN - 1, &c);

		if (rc)
			fail("circuit");
		/* Warm the caches and the builders before timing. */
		(void)time_steps(c, ids[0], delta, steps / 10 + 1);
		ns[r] = time_steps(c, ids[0], delta, steps);
		sc_circuit_destroy(c);
		sc_graph_destroy(g);
	}
	return sc_bench_median(ns, REPS);
}

static const char *only; /* run only the cases whose name has this */

static void
run(const char *kase, int chains, bool whole, struct sc_batch *delta, int steps)
{
	char name[96];

	(void)snprintf(name, sizeof(name), "%s, %s (lower is better)", kase,
		       delta ? "1-row delta" : "nothing fed");
	if (only && !strstr(name, only))
		return;
	sc_bench_emit("part", name, "ns/step",
		      bench_case(chains, whole, delta, steps), NULL, 0);
}

int
main(int argc, char **argv)
{
	bool quick = sc_bench_init(argc, argv);
	int steps = quick ? 2000 : 50000;
	uint64_t row[2] = {1, 2};
	struct sc_batch *one;

	for (int i = 1; i < argc; i++)
		if (argv[i][0] != '-')
			only = argv[i];
	if (sc_batch_from_records(2, row, NULL, 1, &one))
		fail("delta");
	for (int fed = 1; fed >= 0; fed--) {
		struct sc_batch *d = fed ? one : NULL;

		run("part of 4 in 400 nodes", CHAINS, false, d, steps);
		run("part of 4 in 5 nodes", 1, false, d, steps);
		run("whole 400 nodes", CHAINS, true, d, steps / 10);
	}
	sc_batch_release(one);
	return 0;
}

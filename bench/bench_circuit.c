/*
 * bench_circuit.c - the synchronous circuit's cost for stateless operators.
 *
 *  map chain L     a 1,000-row delta (2 i64 columns, random) through L map
 *                  nodes (each swaps the columns and adds 1, so each stage
 *                  really re-sorts), in rows of the delta per second; the
 *                  baseline runs the same callbacks through one reused batch
 *                  builder by hand (no graph, no circuit): the ratio is
 *                  what the circuit costs on top of the work itself.
 *  filter chain L  the same with L filters (each keeps another ~7/8 of the
 *                  rows).
 *  step overhead   ns per operator per step of a chain of N maps whose
 *                  deltas are empty (the fixed cost of a node in a tick),
 *                  and with a 1-row delta.
 *  part of 4 nodes in a graph of G
 *                  ns per step (LOWER IS BETTER) of a part: the graph is
 *                  G/5 chains of input -> map -> map -> map -> output, the
 *                  part is the four computed nodes of chain 0, its boundary
 *                  input (chain 0's input) fed through sc_circuit_feed by
 *                  its id as units/ feeds a part; fed a 1-row delta each
 *                  step, or nothing. A step should cost what the part's
 *                  nodes cost, whatever G: G = 400 next to G = 5.
 *  the whole graph of 400
 *                  ns per step (lower is better) of the whole 400-node
 *                  graph's circuit, one input fed a 1-row delta (or none).
 *
 * Each figure is the median of REPS repetitions (PART_REPS for the part
 * and whole-graph figures). --quick shrinks the step counts for a smoke
 * run. SC_BENCH_CPU=1 times with the thread's CPU clock instead of the
 * wall clock, for a machine shared with other jobs (the work is
 * single-threaded, so CPU time is the time it would take alone, less the
 * cache it shares); the part and whole-graph figures always use the CPU
 * clock. Any other argument runs only the cases whose name contains it (to
 * count one case's instructions under callgrind).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench/harness.h"
#include "operators/circuit.h"

#define REPS	  5
#define ROWS	  1000
#define PART_REPS 7
#define CHAIN_LEN 5 /* input, three maps, output */

static bool use_cpu_clock;
static const char *only; /* run only the cases whose name has this */

/* Should the case named kase run? */
static bool
wanted(const char *kase)
{
	return !only || strstr(kase, only);
}

/* Nanoseconds by the wall clock (the harness's) or the thread CPU clock. */
static uint64_t
now_ns(void)
{
	return use_cpu_clock ? sc_bench_cpu_ns() : sc_bench_now_ns();
}

static int
swap_inc(void *ctx, const uint64_t *row, uint64_t *out)
{
	(void)ctx;
	out[0] = row[1] + 1;
	out[1] = row[0];
	return 0;
}

/* Each stage drops a different ~1/8 of the rows (its ctx salts the test),
 * so no stage keeps everything and gets its input shared for free. */
static int
mostly(void *ctx, const uint64_t *row, bool *keep)
{
	uint64_t salt = *(const uint64_t *)ctx;

	*keep = ((row[0] ^ row[1]) * 0x9e3779b97f4a7c15ULL + salt) >> 61 != 0;
	return 0;
}

static uint64_t salts[64];

static struct sc_batch *
make_delta(size_t n, uint64_t seed)
{
	uint64_t *w = malloc(2 * n * sizeof(uint64_t));
	struct sc_batch *b = NULL;

	if (!w)
		sc_bench_fail("no memory");
	for (size_t i = 0; i < 2 * n; i++)
		w[i] = sc_splitmix_next(&seed);
	if (sc_batch_from_records(2, w, NULL, n, &b))
		sc_bench_fail("delta");
	free(w);
	return b;
}

/* A chain input -> L nodes (maps or filters); returns the last node. */
static int
make_chain(struct sc_graph *g, bool filter, int len, int *in)
{
	enum sc_type t[2] = {SC_TYPE_I64, SC_TYPE_I64};
	struct sc_schema s;
	int id;

	if (sc_schema_init(&s, 2, t, NULL))
		sc_bench_fail("schema");
	id = *in = sc_graph_input(g, "in", &s);
	for (int i = 0; i < len; i++)
		id = filter ? sc_graph_filter(g, id, mostly, &salts[i])
			    : sc_graph_map(g, id, &s, swap_inc, NULL);
	if (id < 0)
		sc_bench_fail("chain");
	return id;
}

/* Seconds for `steps` steps of the chain, each fed `delta`. */
static double
time_circuit(bool filter, int len, struct sc_batch *delta, int steps)
{
	struct sc_graph *g;
	struct sc_circuit *c;
	uint64_t t0;
	double sec;
	int in, last;

	if (sc_graph_create(&g))
		sc_bench_fail("graph");
	last = make_chain(g, filter, len, &in);
	if (sc_circuit_create(g, &c))
		sc_bench_fail("circuit");
	t0 = now_ns();
	for (int i = 0; i < steps; i++) {
		if ((delta && sc_circuit_feed(c, in, delta)) ||
		    sc_circuit_step(c))
			sc_bench_fail("step");
	}
	sec = (double)(now_ns() - t0) / 1e9;
	sc_bench_keep(&last);
	sc_circuit_destroy(c);
	sc_graph_destroy(g);
	return sec;
}

/* Called through pointers the compiler cannot see through, as the circuit
 * calls them, so the baseline does not win by inlining the callbacks. */
static int (*volatile map_fp)(void *, const uint64_t *, uint64_t *) = swap_inc;
static int (*volatile filter_fp)(void *, const uint64_t *, bool *) = mostly;

/* The same work by hand: one builder reused for every stage, the same
 * callbacks. */
static double
time_by_hand(bool filter, int len, struct sc_batch *delta, int steps)
{
	struct sc_batch_builder bld;
	uint64_t t0, out[2];
	double sec;

	if (sc_batch_builder_init(&bld, 2))
		sc_bench_fail("builder");
	t0 = now_ns();
	for (int i = 0; i < steps; i++) {
		struct sc_batch *cur = sc_batch_retain(delta), *next;

		for (int l = 0; l < len; l++) {
			if (sc_batch_builder_reserve(&bld, cur->count))
				sc_bench_fail("reserve");
			for (size_t r = 0; r < cur->count; r++) {
				const uint64_t *row = sc_batch_row(cur, r);
				bool keep = true;

				if (filter)
					filter_fp(&salts[l], row, &keep);
				else
					map_fp(NULL, row, out);
				if (keep && sc_batch_builder_push(
						&bld, filter ? row : out, 2,
						sc_batch_weight(cur, r)))
					sc_bench_fail("push");
			}
			if (sc_batch_builder_finish(&bld, &next))
				sc_bench_fail("finish");
			sc_batch_release(cur);
			cur = next;
		}
		sc_bench_keep(cur);
		sc_batch_release(cur);
	}
	sec = (double)(now_ns() - t0) / 1e9;
	sc_batch_builder_fini(&bld);
	return sec;
}

static void
bench_chain(bool filter, int len, struct sc_batch *delta, int steps)
{
	double ours[REPS], base[REPS];
	char kase[64];

	(void)snprintf(kase, sizeof(kase), "%s chain %d, 1000-row delta",
		       filter ? "filter" : "map", len);
	if (!wanted(kase))
		return;
	for (int r = 0; r < REPS; r++) {
		ours[r] = (double)ROWS * steps /
			  time_circuit(filter, len, delta, steps);
		base[r] = (double)ROWS * steps /
			  time_by_hand(filter, len, delta, steps);
	}
	sc_bench_emit("circuit", kase, "Mrows/s",
		      sc_bench_median(ours, REPS) / 1e6, "builders by hand",
		      sc_bench_median(base, REPS) / 1e6);
}

static void
bench_overhead(int nodes, struct sc_batch *delta, int steps)
{
	double ns[REPS];
	char kase[64];

	(void)snprintf(kase, sizeof(kase), "step overhead, %d maps, %s", nodes,
		       delta ? "1-row delta" : "empty delta");
	if (!wanted(kase))
		return;
	for (int r = 0; r < REPS; r++)
		ns[r] = time_circuit(false, nodes, delta, steps) * 1e9 /
			((double)steps * nodes);
	sc_bench_emit("circuit", kase, "ns/op/step", sc_bench_median(ns, REPS),
		      NULL, 0);
}

/* --- a part and the graph it is cut from ---------------------------------- */

/* A graph of `chains` chains; ids[k] are chain 0's nodes in chain order. */
static struct sc_graph *
make_chains(int chains, int ids[CHAIN_LEN])
{
	enum sc_type t[2] = {SC_TYPE_I64, SC_TYPE_I64};
	struct sc_schema s;
	struct sc_graph *g;

	if (sc_schema_init(&s, 2, t, NULL) || sc_graph_create(&g))
		sc_bench_fail("graph");
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
			sc_bench_fail("chain");
		if (c == 0)
			for (int k = 0; k < CHAIN_LEN; k++)
				ids[k] = chain[k];
	}
	return g;
}

/* CPU ns per step of `steps` steps of c, feeding `delta` (or nothing) to
 * stream `in` before each. */
static double
time_steps(struct sc_circuit *c, int in, struct sc_batch *delta, int steps)
{
	uint64_t t0 = sc_bench_cpu_ns();

	for (int i = 0; i < steps; i++)
		if ((delta && sc_circuit_feed(c, in, delta)) ||
		    sc_circuit_step(c))
			sc_bench_fail("step");
	return (double)(sc_bench_cpu_ns() - t0) / steps;
}

/* The median over PART_REPS fresh circuits of a graph of `nodes` nodes:
 * the part of chain 0, or the whole graph. */
static void
bench_part(const char *what, int nodes, bool whole, struct sc_batch *delta,
	   int steps)
{
	double ns[PART_REPS];
	char kase[96];

	(void)snprintf(kase, sizeof(kase),
		       "%s of %d nodes, %s (lower is better)", what, nodes,
		       delta ? "1-row delta" : "nothing fed");
	if (!wanted(kase))
		return;
	for (int r = 0; r < PART_REPS; r++) {
		int ids[CHAIN_LEN] = {0};
		struct sc_graph *g = make_chains(nodes / CHAIN_LEN, ids);
		struct sc_circuit *c;
		int rc = whole ? sc_circuit_create(g, &c)
			       : sc_circuit_create_part(g, ids + 1,
							CHAIN_LEN - 1, &c);

		if (rc)
			sc_bench_fail("circuit");
		/* Warm the caches and the builders before timing. */
		(void)time_steps(c, ids[0], delta, steps / 10 + 1);
		ns[r] = time_steps(c, ids[0], delta, steps);
		sc_circuit_destroy(c);
		sc_graph_destroy(g);
	}
	sc_bench_emit("circuit", kase, "ns/step",
		      sc_bench_median(ns, PART_REPS), NULL, 0);
}

int
main(int argc, char **argv)
{
	bool quick = sc_bench_init(argc, argv);
	const char *cpu =
	    getenv("SC_BENCH_CPU"); /* NOLINT(concurrency-mt-unsafe) */
	int steps = quick ? 20 : 400;
	struct sc_batch *delta = make_delta(ROWS, 42);
	struct sc_batch *one = make_delta(1, 7);
	static const int lens[] = {1, 4, 16};

	use_cpu_clock = cpu && cpu[0] == '1';
	for (int i = 1; i < argc; i++)
		if (argv[i][0] != '-')
			only = argv[i];
	for (int i = 0; i < 64; i++)
		salts[i] = (uint64_t)i * 0x2545f4914f6cdd1dULL;

	for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		bench_chain(false, lens[i], delta, steps);
		bench_chain(true, lens[i], delta, steps);
	}
	bench_overhead(100, NULL, quick ? 200 : 20000);
	bench_overhead(100, one, quick ? 200 : 20000);
	for (int fed = 1; fed >= 0; fed--) {
		struct sc_batch *d = fed ? one : NULL;
		int n = quick ? 2000 : 50000;

		bench_part("part of 4 nodes in a graph", 400, false, d, n);
		bench_part("part of 4 nodes in a graph", 5, false, d, n);
		bench_part("the whole graph", 400, true, d, n / 10);
	}
	sc_batch_release(delta);
	sc_batch_release(one);
	return 0;
}

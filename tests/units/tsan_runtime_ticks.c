/*
 * tsan_runtime_ticks.c - tick mode on a real pool as a plain program, for
 * the ThreadSanitizer pass (Criterion cannot run under TSan).
 *
 * The graph of test_runtime_ticks.c (integrate, delay, differentiate,
 * distinct), every strategy, a real pool of 1..4 workers behind the
 * watchdog guard, small edges that fill; the host submits random host
 * ticks (empty ones included) while the workers run. Every output's delta
 * at every tick must equal the single circuit's. Exit 0 is a pass; a
 * failure prints the seed, the strategy and what differed. SC_SEED /
 * SC_SEEDS_SCALE as for the property tests.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "operators/schema.h"
#include "tests/support/prop.h"
#include "tests/support/rt_watchdog.h"
#include "units/placement.h"
#include "units/runtime.h"

#define NTICKS 16
#define NOUT   4

struct tgraph {
	struct sc_graph *g;
	int in;
	int out[NOUT];
};

/* The recurrence of test_runtime_ticks.c: sum = in + delay(sum), a loop
 * that crosses units at the delay's output under per-node. */
static int
tgraph_loop(struct tgraph *t, const struct sc_schema *s)
{
	int fb = sc_graph_feedback(t->g, s), d = sc_graph_delay(t->g, fb);
	int sum = sc_graph_plus(t->g, t->in, d);

	if (sc_graph_bind(t->g, fb, sum) != 0)
		return -1;
	t->out[0] = sc_graph_output(t->g, "sum", sum);
	t->out[1] = sc_graph_output(t->g, "d", d);
	t->out[2] = sc_graph_output(t->g, "I", sc_graph_integrate(t->g, d));
	t->out[3] = sc_graph_output(t->g, "neg", sc_graph_negate(t->g, sum));
	for (int k = 0; k < NOUT; k++)
		if (t->out[k] < 0)
			return -1;
	return 0;
}

static int
tgraph_init(struct tgraph *t, bool loop)
{
	enum sc_type ty[2] = {SC_TYPE_I64, SC_TYPE_I64};
	struct sc_schema s;
	int i, d, p;

	if (sc_schema_init(&s, 2, ty, NULL) || sc_graph_create(&t->g))
		return -1;
	t->in = sc_graph_input(t->g, "in", &s);
	if (loop)
		return tgraph_loop(t, &s);
	i = sc_graph_integrate(t->g, t->in);
	d = sc_graph_delay(t->g, t->in);
	p = sc_graph_plus(t->g, i, d);
	t->out[0] = sc_graph_output(t->g, "I", i);
	t->out[1] = sc_graph_output(t->g, "D", d);
	t->out[2] = sc_graph_output(t->g, "Y", sc_graph_differentiate(t->g, p));
	t->out[3] = sc_graph_output(
	    t->g, "Z", sc_graph_distinct(t->g, sc_graph_plus(t->g, t->in, d)));
	for (int k = 0; k < NOUT; k++)
		if (t->out[k] < 0)
			return -1;
	return 0;
}

struct got {
	pthread_mutex_t mu;
	const struct tgraph *t;
	struct sc_batch *d[NOUT][NTICKS];
	bool bad;
};

static int
on_delta(void *ctx, int node, const struct sc_batch *delta)
{
	struct got *g = ctx;
	uint64_t tick = sc_runtime_delta_tick();
	struct sc_batch *sum = NULL;
	int k = 0;

	while (k < NOUT && g->t->out[k] != node)
		k++;
	pthread_mutex_lock(&g->mu);
	if (k < NOUT && tick < NTICKS && !g->d[k][tick])
		g->d[k][tick] = sc_batch_retain((struct sc_batch *)delta);
	else if (k < NOUT && tick < NTICKS &&
		 sc_batch_add(g->d[k][tick], delta, &sum) == 0) {
		sc_batch_release(g->d[k][tick]);
		g->d[k][tick] = sum;
	} else
		g->bad = true; /* outside a tick, or the sum failed */
	pthread_mutex_unlock(&g->mu);
	return 0;
}

/* Host tick t's batches: 0..2 (0: an empty tick) of 1..3 rows. */
static size_t
batches(struct sc_rng *r, struct sc_batch **b)
{
	size_t nb = sc_rng_below(r, 3);

	for (size_t k = 0; k < nb; k++) {
		uint64_t rows[6];
		int64_t w[3];
		size_t n = 1 + sc_rng_below(r, 3);

		for (size_t j = 0; j < n; j++) {
			rows[2 * j] = sc_enc_i64((int64_t)sc_rng_below(r, 5));
			rows[2 * j + 1] = sc_enc_i64(1);
			w[j] = sc_rng_below(r, 3) ? 1 : -1;
		}
		if (sc_batch_from_records(2, rows, w, n, &b[k]) != 0)
			abort();
	}
	return nb;
}

static bool
same(const struct sc_batch *a, const struct sc_batch *b)
{
	size_t na = a ? sc_batch_count(a) : 0, nb = b ? sc_batch_count(b) : 0;

	return na == 0 || nb == 0 ? na == nb : sc_batch_equal(a, b);
}

static int
one_case(const char *strategy, uint32_t workers, uint64_t seed)
{
	struct tgraph t, rt_g;
	struct sc_circuit *c = NULL;
	struct sc_placement *p = NULL;
	struct sc_runtime *rt = NULL;
	struct sc_runtime_opts o = {.ticks = true,
				    .workers = workers,
				    .edge_capacity = 1u << (seed % 3),
				    .budget = 1 + (uint32_t)(seed % 4)};
	struct sc_batch *ref[NOUT][NTICKS];
	struct sc_test_guard *guard;
	struct sc_rng r;
	struct got got;
	int fail = 0;

	memset(&got, 0, sizeof(got));
	memset(ref, 0, sizeof(ref));
	pthread_mutex_init(&got.mu, NULL);
	bool loop = strncmp(strategy, "loop/", 5) == 0;

	if (loop)
		strategy += 5;
	if (tgraph_init(&t, loop) || tgraph_init(&rt_g, loop) ||
	    sc_circuit_create(t.g, &c) ||
	    sc_placement_parse(rt_g.g, strategy, seed, &p))
		abort();
	got.t = &rt_g;
	if (sc_runtime_create(rt_g.g, p, &o, &rt) != 0) {
		/* A random placement may put units on a cycle. */
		fail = strstr(sc_errmsg(), "cycle of units") ? 0 : 1;
		if (fail)
			(void)fprintf(stderr, "%s: %s\n", strategy,
				      sc_errmsg());
		goto free_graphs;
	}
	for (int k = 0; k < NOUT; k++)
		if (sc_runtime_on_delta(rt, rt_g.out[k], on_delta, &got))
			abort();
	guard = sc_test_guard_begin(sc_runtime_exec(rt), "tsan_runtime_ticks",
				    20000);
	sc_rng_seed(&r, seed);
	for (size_t tk = 0; tk < NTICKS; tk++) {
		struct sc_batch *b[2];
		size_t nb = batches(&r, b);

		for (size_t k = 0; k < nb; k++) {
			if (sc_runtime_submit_wait(rt, rt_g.in, b[k], 0) ||
			    sc_circuit_feed(c, t.in, b[k]))
				abort();
			sc_batch_release(b[k]);
		}
		if (sc_runtime_tick(rt, 0, NULL) || sc_circuit_step(c))
			abort();
		for (int k = 0; k < NOUT; k++)
			if (sc_circuit_delta(c, t.out[k], &ref[k][tk]))
				abort();
	}
	if (sc_runtime_wait_idle(rt, 0, NULL) != 0)
		fail = 1;
	sc_test_guard_end(guard);
	fail |= got.bad;
	for (int k = 0; k < NOUT; k++)
		for (size_t tk = 0; tk < NTICKS; tk++) {
			if (!fail && !same(got.d[k][tk], ref[k][tk])) {
				(void)fprintf(stderr,
					      "%s: output %d tick %zu differs "
					      "from the single circuit\n",
					      strategy, k, tk);
				fail = 1;
			}
			sc_batch_release(got.d[k][tk]);
			sc_batch_release(ref[k][tk]);
		}
	if (sc_runtime_shutdown(rt, NULL) != 0)
		fail = 1;
	sc_runtime_destroy(rt);
free_graphs:
	sc_placement_destroy(p);
	sc_circuit_destroy(c);
	sc_graph_destroy(t.g);
	sc_graph_destroy(rt_g.g);
	pthread_mutex_destroy(&got.mu);
	return fail;
}

int
main(void)
{
	static const char *const strategies[] = {
	    "single",	 "per-node",	  "chains",	 "random:3",
	    "sharded:2", "loop/per-node", "loop/chains", "loop/random:3"};
	uint64_t base = sc_prop_seed(12300), n = sc_prop_count(2);

	for (uint64_t i = 0; i < n; i++)
		for (uint32_t w = 1; w <= 4; w++)
			for (size_t s = 0; s < 8; s++)
				if (one_case(strategies[s], w, base + i)) {
					(void)fprintf(stderr,
						      "tsan_runtime_ticks: "
						      "seed %llu, %s, %u "
						      "workers: failed\n",
						      (unsigned long long)base +
							  i,
						      strategies[s], w);
					return 1;
				}
	(void)printf("tsan_runtime_ticks: ok\n");
	return 0;
}

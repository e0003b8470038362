/*
 * test_runtime_ticks.c - tick mode (units/runtime.h, Modes and Host
 * ticks): a graph with integrate, differentiate and delay, placed every
 * way, gives at every tick the delta the single circuit gives for the
 * same host ticks, under a host-driven schedule, the seeded scheduler
 * (1 to 4 held units, budgets of 1 to 4) and a real pool of 1 to 4
 * workers behind the watchdog; host ticks of random sizes, empty ticks
 * included, on small edges that fill; the recurrence sum = in +
 * delay(sum) across three units (the loop crossing at the delay's
 * output); and random circuits (tests/support/circuit_gen.h: delay,
 * integrate, differentiate, loops through a delay, stateful operators)
 * under every placement. SC_THREADED.
 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "operators/schema.h"
#include "runtime/sim.h"
#include "tests/support/circuit_gen.h"
#include "tests/support/prop.h"
#include "tests/support/rt_watchdog.h"
#include "units/placement.h"
#include "units/runtime.h"

#define NTICKS_MAX   24
#define NOUT	     4
#define PER_TICK_MAX 3

/*
 * in -> I = integrate(in)                       -> out "I"
 * in -> D = delay(in)                           -> out "D"
 * plus(I, D) -> Y = differentiate               -> out "Y"
 * distinct(plus(in, D))                         -> out "Z"
 */
struct tgraph {
	struct sc_graph *g;
	int in;
	int out[NOUT];
	int plus, fb, d; /* the recurrence's nodes */
};

/*
 * The recurrence: sum = plus(in, delay(fb)), fb bound to sum: a running
 * total through a delay. Outputs "sum", "d" and "I" = integrate(d), so
 * that ticks without input still change something.
 */
static void
tgraph_loop(struct tgraph *t)
{
	enum sc_type ty[2] = {SC_TYPE_I64, SC_TYPE_I64};
	struct sc_schema s;

	cr_assert_eq(sc_schema_init(&s, 2, ty, NULL), 0);
	cr_assert_eq(sc_graph_create(&t->g), 0);
	t->in = sc_graph_input(t->g, "in", &s);
	t->fb = sc_graph_feedback(t->g, &s);
	t->d = sc_graph_delay(t->g, t->fb);
	t->plus = sc_graph_plus(t->g, t->in, t->d);
	cr_assert_eq(sc_graph_bind(t->g, t->fb, t->plus), 0, "%s", sc_errmsg());
	t->out[0] = sc_graph_output(t->g, "sum", t->plus);
	t->out[1] = sc_graph_output(t->g, "d", t->d);
	t->out[2] = sc_graph_output(t->g, "I", sc_graph_integrate(t->g, t->d));
	t->out[3] =
	    sc_graph_output(t->g, "negsum", sc_graph_negate(t->g, t->plus));
	for (int k = 0; k < NOUT; k++)
		cr_assert_geq(t->out[k], 0, "%s", sc_errmsg());
}

static void
tgraph_init(struct tgraph *t)
{
	enum sc_type ty[2] = {SC_TYPE_I64, SC_TYPE_I64};
	struct sc_schema s;
	int i, d, y, z, p;

	cr_assert_eq(sc_schema_init(&s, 2, ty, NULL), 0);
	cr_assert_eq(sc_graph_create(&t->g), 0);
	t->in = sc_graph_input(t->g, "in", &s);
	i = sc_graph_integrate(t->g, t->in);
	d = sc_graph_delay(t->g, t->in);
	p = sc_graph_plus(t->g, i, d);
	y = sc_graph_differentiate(t->g, p);
	z = sc_graph_distinct(t->g, sc_graph_plus(t->g, t->in, d));
	t->out[0] = sc_graph_output(t->g, "I", i);
	t->out[1] = sc_graph_output(t->g, "D", d);
	t->out[2] = sc_graph_output(t->g, "Y", y);
	t->out[3] = sc_graph_output(t->g, "Z", z);
	for (int k = 0; k < NOUT; k++)
		cr_assert_geq(t->out[k], 0, "%s", sc_errmsg());
}

/* The host's plan: per tick up to PER_TICK_MAX batches (0: an empty
 * tick) of 1..4 rows with keys 0..5 and weights +-1. */
struct plan {
	size_t nticks;
	size_t nb[NTICKS_MAX];
	struct sc_batch *b[NTICKS_MAX][PER_TICK_MAX];
};

static void
plan_make(struct plan *pl, uint64_t seed)
{
	struct sc_rng r;

	memset(pl, 0, sizeof(*pl));
	sc_rng_seed(&r, seed);
	pl->nticks = 4 + sc_rng_below(&r, NTICKS_MAX - 3);
	for (size_t t = 0; t < pl->nticks; t++) {
		pl->nb[t] = sc_rng_below(&r, PER_TICK_MAX + 1);
		for (size_t k = 0; k < pl->nb[t]; k++) {
			uint64_t rows[8];
			int64_t w[4];
			size_t n = 1 + sc_rng_below(&r, 4);

			for (size_t j = 0; j < n; j++) {
				rows[2 * j] =
				    sc_enc_i64((int64_t)sc_rng_below(&r, 6));
				rows[2 * j + 1] = sc_enc_i64(1);
				w[j] = sc_rng_below(&r, 3) ? 1 : -1;
			}
			cr_assert_eq(
			    sc_batch_from_records(2, rows, w, n, &pl->b[t][k]),
			    0, "%s", sc_errmsg());
		}
	}
}

static void
plan_free(struct plan *pl)
{
	for (size_t t = 0; t < pl->nticks; t++)
		for (size_t k = 0; k < pl->nb[t]; k++)
			sc_batch_release(pl->b[t][k]);
}

/* Per output and tick, the sum of the deltas reported (NULL: none). */
struct got {
	pthread_mutex_t mu;
	const struct tgraph *t;
	struct sc_batch *d[NOUT][NTICKS_MAX];
	bool bad; /* a delta outside tick mode's steps, or past the plan */
};

static int
on_delta(void *ctx, int node, const struct sc_batch *delta)
{
	struct got *g = ctx;
	uint64_t tick = sc_runtime_delta_tick();
	int k = 0;

	while (k < NOUT && g->t->out[k] != node)
		k++;
	pthread_mutex_lock(&g->mu);
	if (k == NOUT || tick >= NTICKS_MAX) {
		g->bad = true;
	} else {
		struct sc_batch *sum = NULL;

		if (!g->d[k][tick]) {
			g->d[k][tick] =
			    sc_batch_retain((struct sc_batch *)delta);
		} else if (sc_batch_add(g->d[k][tick], delta, &sum) == 0) {
			sc_batch_release(g->d[k][tick]);
			g->d[k][tick] = sum;
		} else {
			g->bad = true;
		}
	}
	pthread_mutex_unlock(&g->mu);
	return 0;
}

/* The single circuit's delta of every output at every tick of the plan. */
/* "loop/S": the recurrence placed by S; else the first graph. */
static const char *
graph_of(const char *strategy, struct tgraph *t)
{
	memset(t, 0, sizeof(*t));
	if (strncmp(strategy, "loop/", 5) == 0) {
		tgraph_loop(t);
		return strategy + 5;
	}
	tgraph_init(t);
	return strategy;
}

/* "three": the recurrence across three units, {in} {sum, outputs}
 * {fb, delay}: the loop crosses units twice, at the delay's output. */
static void
place(struct tgraph *t, const char *strategy, uint64_t seed,
      struct sc_placement **p)
{
	size_t n = sc_graph_node_count(t->g);
	int32_t unit_of[16];

	if (strcmp(strategy, "three") != 0) {
		cr_assert_eq(sc_placement_parse(t->g, strategy, seed, p), 0,
			     "%s", sc_errmsg());
		return;
	}
	cr_assert_leq(n, 16);
	for (size_t i = 0; i < n; i++)
		unit_of[i] = 1;
	unit_of[t->in] = 0;
	unit_of[t->fb] = 2;
	unit_of[t->d] = 2;
	cr_assert_eq(sc_placement_manual(t->g, unit_of, n, 3, p), 0, "%s",
		     sc_errmsg());
}

static void
reference(const char *strategy, const struct plan *pl,
	  struct sc_batch *ref[NOUT][NTICKS_MAX])
{
	struct tgraph t;
	struct sc_circuit *c = NULL;

	(void)graph_of(strategy, &t);
	cr_assert_eq(sc_circuit_create(t.g, &c), 0, "%s", sc_errmsg());
	for (size_t k = 0; k < pl->nticks; k++) {
		for (size_t j = 0; j < pl->nb[k]; j++)
			cr_assert_eq(sc_circuit_feed(c, t.in, pl->b[k][j]), 0);
		cr_assert_eq(sc_circuit_step(c), 0, "%s", sc_errmsg());
		for (int o = 0; o < NOUT; o++)
			cr_assert_eq(sc_circuit_delta(c, t.out[o], &ref[o][k]),
				     0);
	}
	sc_circuit_destroy(c);
	sc_graph_destroy(t.g);
}

static bool
same(const struct sc_batch *a, const struct sc_batch *b)
{
	size_t na = a ? sc_batch_count(a) : 0, nb = b ? sc_batch_count(b) : 0;

	if (na == 0 || nb == 0)
		return na == nb;
	return sc_batch_equal(a, b);
}

/* Host events refused for room over a test's runs: the full-edge path
 * was taken. */
static uint64_t total_efull;

enum drive { DRIVE_HOST, DRIVE_SIM, DRIVE_POOL };

struct run {
	struct sc_runtime *rt;
	const struct plan *pl;
	int in;
	size_t tick, next; /* the host's place in the plan */
	uint64_t efull;	   /* submits or closes refused for room */
	bool error;
};

/* One host event of the seeded scheduler: the next submit, or the
 * close of the tick; a full edge is retried at a later event. */
static bool
sim_host(void *ctx, struct sc_exec *ex, uint64_t rnd)
{
	struct run *r = ctx;
	int rc;

	(void)ex;
	(void)rnd;
	if (r->tick >= r->pl->nticks)
		return false;
	if (r->next < r->pl->nb[r->tick])
		rc =
		    sc_runtime_submit(r->rt, r->in, r->pl->b[r->tick][r->next]);
	else
		rc = sc_runtime_tick_try(r->rt, NULL);
	if (rc == SC_EFULL) {
		r->efull++;
		return true;
	}
	if (rc) {
		r->error = true;
		return false;
	}
	if (r->next < r->pl->nb[r->tick]) {
		r->next++;
	} else {
		r->tick++;
		r->next = 0;
	}
	return r->tick < r->pl->nticks;
}

/* The host on this thread: submit_wait and sc_runtime_tick, with a
 * wait_idle now and then between ticks. */
static void
host_feed(struct run *r, uint64_t seed)
{
	for (size_t t = 0; t < r->pl->nticks; t++) {
		uint64_t closed = UINT64_MAX;

		for (size_t k = 0; k < r->pl->nb[t]; k++)
			cr_assert_eq(sc_runtime_submit_wait(r->rt, r->in,
							    r->pl->b[t][k], 0),
				     0, "%s", sc_errmsg());
		cr_assert_eq(sc_runtime_tick(r->rt, 0, &closed), 0, "%s",
			     sc_errmsg());
		cr_assert_eq(closed, t);
		if ((seed >> (t % 60)) & 1 && t % 3 == 0)
			cr_assert_eq(sc_runtime_wait_idle(r->rt, 0, NULL), 0);
	}
}

/* One placement under one schedule: every output's delta at every tick
 * equals the reference's. */
static void
run_case(const char *strategy, enum drive how, uint32_t n, uint64_t seed,
	 const char *test)
{
	struct sc_batch *ref[NOUT][NTICKS_MAX];
	struct tgraph t;
	struct plan pl;
	struct got got;
	struct sc_placement *p = NULL;
	struct sc_runtime_opts o = {.ticks = true,
				    .edge_capacity = 1u << (seed % 3),
				    .budget = 1 + (uint32_t)(seed % 5),
				    .workers = how == DRIVE_POOL ? n : 0};
	struct run r = {0};
	struct sc_test_guard *guard = NULL;

	const char *placement;

	plan_make(&pl, seed);
	memset(ref, 0, sizeof(ref));
	reference(strategy, &pl, ref);
	placement = graph_of(strategy, &t);
	memset(&got, 0, sizeof(got));
	pthread_mutex_init(&got.mu, NULL);
	got.t = &t;
	place(&t, placement, seed, &p);
	if (sc_runtime_create(t.g, p, &o, &r.rt) != 0) {
		/* A random placement may put units on a cycle that crosses
		 * at no delay's output: tick mode refuses that by name
		 * (units/analysis.h, Ticks). */
		cr_assert(strncmp(placement, "random", 6) == 0 &&
			      strstr(sc_errmsg(), "cycle of units"),
			  "%s: %s", strategy, sc_errmsg());
		for (int k = 0; k < NOUT; k++)
			for (size_t tk = 0; tk < NTICKS_MAX; tk++)
				sc_batch_release(ref[k][tk]);
		sc_placement_destroy(p);
		sc_graph_destroy(t.g);
		pthread_mutex_destroy(&got.mu);
		plan_free(&pl);
		return;
	}
	for (int k = 0; k < NOUT; k++)
		cr_assert_eq(
		    sc_runtime_on_delta(r.rt, t.out[k], on_delta, &got), 0);
	r.pl = &pl;
	r.in = t.in;
	if (how == DRIVE_POOL)
		guard = sc_test_guard_begin(sc_runtime_exec(r.rt), test, 20000);
	if (how == DRIVE_SIM) {
		struct sc_sim_opts so = {.seed = seed,
					 .held_max = n,
					 .budget = 0,
					 .host = sim_host,
					 .host_ctx = &r};
		struct sc_sim_result res;
		int rc = sc_sim_run(sc_runtime_exec(r.rt), &so, &res);

		SC_PROP_ASSERT(seed, "runtime_ticks", test, rc == 0 && !r.error,
			       "%s sim: rc %d: %s", strategy, rc, res.why);
		cr_assert_eq(r.tick, pl.nticks);
		total_efull += r.efull;
	} else {
		host_feed(&r, seed);
	}
	cr_assert_eq(sc_runtime_wait_idle(r.rt, 0, NULL), 0, "%s", sc_errmsg());
	cr_assert_eq(sc_runtime_check_idle(r.rt), 0, "%s", sc_errmsg());
	sc_test_guard_end(guard);
	cr_assert(!got.bad, "a delta outside a tick");
	for (int k = 0; k < NOUT; k++)
		for (size_t tk = 0; tk < NTICKS_MAX; tk++) {
			SC_PROP_ASSERT(
			    seed, "runtime_ticks", test,
			    same(got.d[k][tk], ref[k][tk]),
			    "%s, drive %d x %u: output %d tick "
			    "%zu: %zu rows, the single circuit "
			    "%zu",
			    strategy, (int)how, n, k, tk,
			    got.d[k][tk] ? sc_batch_count(got.d[k][tk]) : 0,
			    ref[k][tk] ? sc_batch_count(ref[k][tk]) : 0);
			sc_batch_release(got.d[k][tk]);
			sc_batch_release(ref[k][tk]);
		}
	cr_assert_eq(sc_runtime_shutdown(r.rt, NULL), 0);
	sc_runtime_destroy(r.rt);
	sc_placement_destroy(p);
	sc_graph_destroy(t.g);
	pthread_mutex_destroy(&got.mu);
	plan_free(&pl);
}

static const char *const strategies[] = {
    "single",	   "per-node",	    "chains",	     "random:3",
    "sharded:2",   "loop/single",   "loop/per-node", "loop/three",
    "loop/chains", "loop/random:3",
};
#define NSTRAT (sizeof(strategies) / sizeof(strategies[0]))

Test(runtime_ticks, every_placement_gives_the_single_circuit_at_every_tick)
{
	uint64_t base = sc_prop_seed(12000), n = sc_prop_count(100);

	for (uint64_t i = 0; i < n; i++)
		for (size_t s = 0; s < NSTRAT; s++)
			run_case(strategies[s], DRIVE_HOST, 0, base + i,
				 "every_placement_gives_the_single_circuit_"
				 "at_every_tick");
}

Test(runtime_ticks, seeded_schedules_give_the_single_circuit_at_every_tick)
{
	uint64_t base = sc_prop_seed(12100), n = sc_prop_count(400);

	for (uint64_t i = 0; i < n; i++)
		for (size_t s = 0; s < NSTRAT; s++)
			run_case(strategies[s], DRIVE_SIM,
				 1 + (uint32_t)((base + i + s) % 4), base + i,
				 "seeded_schedules_give_the_single_circuit_"
				 "at_every_tick");
	cr_assert_gt(total_efull, 0, "the host never met a full input");
}

Test(runtime_ticks, a_real_pool_gives_the_single_circuit_at_every_tick,
     .timeout = 120)
{
	uint64_t base = sc_prop_seed(12200), n = sc_prop_count(10);

	for (uint64_t i = 0; i < n; i++)
		for (uint32_t w = 1; w <= 4; w++)
			for (size_t s = 0; s < NSTRAT; s++)
				run_case(strategies[s], DRIVE_POOL, w, base + i,
					 "a_real_pool_gives_the_single_"
					 "circuit_at_every_tick");
}

Test(runtime_ticks, tick_calls_are_refused_outside_tick_mode)
{
	struct sc_placement *p = NULL;
	struct sc_runtime *rt = NULL;
	enum sc_type ty[2] = {SC_TYPE_I64, SC_TYPE_I64};
	struct sc_schema s;
	struct sc_graph *g = NULL;
	int in;

	/* An integral-functional graph in the coalescing mode. */
	cr_assert_eq(sc_schema_init(&s, 2, ty, NULL), 0);
	cr_assert_eq(sc_graph_create(&g), 0);
	in = sc_graph_input(g, "in", &s);
	cr_assert_geq(sc_graph_output(g, "o", sc_graph_negate(g, in)), 0);
	cr_assert_eq(sc_placement_single(g, &p), 0);
	cr_assert_eq(sc_runtime_create(g, p, NULL, &rt), 0, "%s", sc_errmsg());
	cr_assert_eq(sc_runtime_tick(rt, 0, NULL), SC_ESTATE);
	cr_assert_eq(sc_runtime_tick_try(rt, NULL), SC_ESTATE);
	cr_assert_eq(sc_runtime_tick(NULL, 0, NULL), SC_EINVAL);
	cr_assert_eq(sc_runtime_delta_tick(), UINT64_MAX);
	sc_runtime_destroy(rt);
	rt = NULL;
	/* Tick mode refuses restart policies. */
	{
		struct sc_runtime_opts o = {
		    .ticks = true,
		    .restart = {.kind = SC_RESTART_BOUNDED, .max_restarts = 1}};

		cr_assert_eq(sc_runtime_create(g, p, &o, &rt), SC_EINVAL);
		cr_assert(strstr(sc_errmsg(), "not supported in tick mode"),
			  "%s", sc_errmsg());
		cr_assert_null(rt);
	}
	sc_placement_destroy(p);
	sc_graph_destroy(g);
}

Test(runtime_ticks, tick_mode_refuses_units_on_a_cycle_naming_them)
{
	enum sc_type ty[1] = {SC_TYPE_I64};
	struct sc_runtime_opts o = {.ticks = true};
	struct sc_placement *p = NULL;
	struct sc_runtime *rt = NULL;
	struct sc_graph *g = NULL;
	struct sc_schema s;
	int32_t unit_of[4];
	int in, a, b, out;

	/* in, a = negate(in), b = negate(a), out(b): units {in, b, out} and
	 * {a} read each other, with no loop of nodes. */
	cr_assert_eq(sc_schema_init(&s, 1, ty, NULL), 0);
	cr_assert_eq(sc_graph_create(&g), 0);
	in = sc_graph_input(g, "in", &s);
	a = sc_graph_negate(g, in);
	b = sc_graph_negate(g, a);
	out = sc_graph_output(g, "o", b);
	cr_assert_geq(out, 0);
	unit_of[in] = 0;
	unit_of[a] = 1;
	unit_of[b] = 0;
	unit_of[out] = 0;
	cr_assert_eq(sc_placement_manual(g, unit_of, 4, 2, &p), 0, "%s",
		     sc_errmsg());
	cr_assert_eq(sc_runtime_create(g, p, &o, &rt), SC_EINVAL);
	cr_assert(strstr(sc_errmsg(), "(units 0 and 1) lies on a cycle of "
				      "units"),
		  "%s", sc_errmsg());
	cr_assert_null(rt);
	/* The coalescing mode runs it (the graph is integral-functional). */
	cr_assert_eq(sc_runtime_create(g, p, NULL, &rt), 0, "%s", sc_errmsg());
	sc_runtime_destroy(rt);
	sc_placement_destroy(p);
	sc_graph_destroy(g);
}

Test(runtime_ticks,
     a_loop_that_crosses_units_not_at_a_delay_is_refused_naming_it)
{
	struct sc_runtime_opts o = {.ticks = true};
	struct sc_placement *p = NULL;
	struct sc_runtime *rt = NULL;
	int32_t unit_of[16];
	struct tgraph t;
	size_t n;

	/* {in, sum, delay, outputs} and {fb}: the loop leaves the first
	 * unit at sum and comes back through fb into the delay, so neither
	 * crossing is a delay's output. */
	tgraph_loop(&t);
	n = sc_graph_node_count(t.g);
	for (size_t i = 0; i < n; i++)
		unit_of[i] = 0;
	unit_of[t.fb] = 1;
	cr_assert_eq(sc_placement_manual(t.g, unit_of, n, 2, &p), 0, "%s",
		     sc_errmsg());
	cr_assert_eq(sc_runtime_create(t.g, p, &o, &rt), SC_EINVAL);
	cr_assert(strstr(sc_errmsg(), "lies on a cycle of units that no "
				      "delay's output crosses"),
		  "%s", sc_errmsg());
	cr_assert(strstr(sc_errmsg(), "'sum'") || strstr(sc_errmsg(), "->"),
		  "%s", sc_errmsg());
	cr_assert_null(rt);
	/* Crossing at the delay's output runs (the loop through per-node
	 * is tested above); in the coalescing mode any crossing loop is
	 * refused. */
	cr_assert_eq(sc_runtime_create(t.g, p, NULL, &rt), SC_EINVAL);
	cr_assert(strstr(sc_errmsg(), "crosses units"), "%s", sc_errmsg());
	sc_placement_destroy(p);
	sc_graph_destroy(t.g);
}

/* --- random circuits ------------------------------------------------------ */

#define RT_TICKS 10
#define RT_OUTS	 64

/* Per output of a generated circuit and tick, the deltas reported. */
struct rgot {
	pthread_mutex_t mu;
	int out[RT_OUTS];
	size_t nout;
	struct sc_batch *d[RT_OUTS][RT_TICKS];
	bool bad;
};

static int
rgot_delta(void *ctx, int node, const struct sc_batch *delta)
{
	struct rgot *g = ctx;
	uint64_t tick = sc_runtime_delta_tick();
	struct sc_batch *sum = NULL;
	size_t k = 0;

	while (k < g->nout && g->out[k] != node)
		k++;
	pthread_mutex_lock(&g->mu);
	if (k < g->nout && tick < RT_TICKS && !g->d[k][tick])
		g->d[k][tick] = sc_batch_retain((struct sc_batch *)delta);
	else if (k < g->nout && tick < RT_TICKS &&
		 sc_batch_add(g->d[k][tick], delta, &sum) == 0) {
		sc_batch_release(g->d[k][tick]);
		g->d[k][tick] = sum;
	} else
		g->bad = true; /* outside a tick, or the sum failed */
	pthread_mutex_unlock(&g->mu);
	return 0;
}

/* The host's submissions of a generated circuit: per tick and input, a
 * delta or NULL (nothing; a tick may get nothing at all). */
struct rplan {
	size_t ninputs;
	int inputs[8];
	struct sc_batch *b[RT_TICKS][8];
};

static void
rplan_free(struct rplan *pl)
{
	for (size_t t = 0; t < RT_TICKS; t++)
		for (size_t i = 0; i < pl->ninputs; i++)
			sc_batch_release(pl->b[t][i]);
}

/* One generated circuit, one placement, the host on this thread
 * (workers 0, or a pool of `workers` behind the watchdog): every output's
 * delta at every tick equals the single circuit's (the same graph, built
 * again from the seed). Returns whether the placement was refused (a
 * cycle of units crossing at no delay, possible under random:N). */
static bool
random_case(uint64_t seed, const char *strategy, uint32_t workers,
	    const char *test)
{
	struct cg_opts co;
	struct cg_spec *ref, *placed;
	struct sc_circuit *c = NULL;
	struct sc_batch *want[RT_OUTS][RT_TICKS];
	struct sc_placement *p = NULL;
	struct sc_runtime *rt = NULL;
	struct sc_runtime_opts o = {.ticks = true,
				    .workers = workers,
				    .edge_capacity = 1u << (seed % 3),
				    .budget = 1 + (uint32_t)(seed % 4)};
	struct sc_test_guard *guard = NULL;
	struct rplan pl;
	struct rgot got;
	struct sc_rng r;
	bool refused = false;

	cg_opts_default(&co);
	ref = cg_generate(seed, &co);
	placed = cg_generate(seed, &co);
	memset(&pl, 0, sizeof(pl));
	memset(&got, 0, sizeof(got));
	memset(want, 0, sizeof(want));
	pthread_mutex_init(&got.mu, NULL);
	pl.ninputs = ref->ninputs;
	memcpy(pl.inputs, ref->inputs, sizeof(pl.inputs));
	sc_rng_seed(&r, seed ^ 0x71c5ull);
	for (size_t t = 0; t < RT_TICKS; t++)
		for (size_t i = 0; i < pl.ninputs && sc_rng_below(&r, 4); i++)
			pl.b[t][i] = cg_gen_delta(ref, pl.inputs[i], &r);
	for (size_t i = 0; i < ref->n; i++)
		if (ref->nodes[i].op == CG_OUTPUT && got.nout < RT_OUTS)
			got.out[got.nout++] = (int)i;
	/* The single circuit. */
	cr_assert_eq(sc_circuit_create(ref->graph, &c), 0, "%s", sc_errmsg());
	for (size_t t = 0; t < RT_TICKS; t++) {
		for (size_t i = 0; i < pl.ninputs; i++)
			if (pl.b[t][i])
				cr_assert_eq(sc_circuit_feed(c, pl.inputs[i],
							     pl.b[t][i]),
					     0);
		cr_assert_eq(sc_circuit_step(c), 0, "%s", sc_errmsg());
		for (size_t k = 0; k < got.nout; k++)
			cr_assert_eq(
			    sc_circuit_delta(c, got.out[k], &want[k][t]), 0);
	}
	sc_circuit_destroy(c);
	/* The placed one. */
	cr_assert_eq(sc_placement_parse(placed->graph, strategy, seed, &p), 0,
		     "%s", sc_errmsg());
	if (sc_runtime_create(placed->graph, p, &o, &rt) != 0) {
		cr_assert(strstr(sc_errmsg(), "cycle of units"), "%s: %s",
			  strategy, sc_errmsg());
		refused = true;
		goto free_all;
	}
	for (size_t k = 0; k < got.nout; k++)
		cr_assert_eq(
		    sc_runtime_on_delta(rt, got.out[k], rgot_delta, &got), 0);
	if (workers)
		guard = sc_test_guard_begin(sc_runtime_exec(rt), test, 20000);
	for (size_t t = 0; t < RT_TICKS; t++) {
		for (size_t i = 0; i < pl.ninputs; i++)
			if (pl.b[t][i])
				cr_assert_eq(
				    sc_runtime_submit_wait(rt, pl.inputs[i],
							   pl.b[t][i], 0),
				    0, "%s", sc_errmsg());
		cr_assert_eq(sc_runtime_tick(rt, 0, NULL), 0, "%s",
			     sc_errmsg());
	}
	cr_assert_eq(sc_runtime_wait_idle(rt, 0, NULL), 0, "%s", sc_errmsg());
	sc_test_guard_end(guard);
	cr_assert(!got.bad, "a delta outside a tick");
	for (size_t k = 0; k < got.nout; k++)
		for (size_t t = 0; t < RT_TICKS; t++)
			SC_PROP_ASSERT(seed, "runtime_ticks", test,
				       same(got.d[k][t], want[k][t]),
				       "%s x %u workers: output node %d tick "
				       "%zu differs from the single circuit",
				       strategy, workers, got.out[k], t);
	cr_assert_eq(sc_runtime_shutdown(rt, NULL), 0);
	sc_runtime_destroy(rt);
free_all:
	for (size_t k = 0; k < got.nout; k++)
		for (size_t t = 0; t < RT_TICKS; t++) {
			sc_batch_release(got.d[k][t]);
			sc_batch_release(want[k][t]);
		}
	sc_placement_destroy(p);
	rplan_free(&pl);
	pthread_mutex_destroy(&got.mu);
	cg_free(placed);
	cg_free(ref);
	return refused;
}

Test(
    runtime_ticks,
    random_circuits_with_per_tick_ops_and_loops_give_the_single_circuit_at_every_tick,
    .timeout = 120)
{
	static const char *const strats[] = {"single",	 "per-node",
					     "chains",	 "random:2",
					     "random:4", "sharded:2"};
	uint64_t base = sc_prop_seed(12400), n = sc_prop_count(40);
	uint64_t ran = 0;

	for (uint64_t i = 0; i < n; i++)
		for (size_t s = 0; s < sizeof(strats) / sizeof(strats[0]); s++)
			ran += !random_case(
			    base + i, strats[s],
			    i % 4 == 0 ? 1 + (uint32_t)(i / 4 % 4) : 0,
			    "random_circuits_with_per_tick_ops_and_loops_"
			    "give_the_single_circuit_at_every_tick");
	cr_assert_gt(ran, n, "most placements ran");
}

/* --- deaths -------------------------------------------------------------- */

static int
fails_on_13(void *ctx, const uint64_t *row, uint64_t *out)
{
	(void)ctx;
	if (sc_dec_i64(row[0]) == 13)
		return SC_ECALLBACK;
	out[0] = row[0];
	out[1] = row[1];
	return 0;
}

Test(runtime_ticks, a_dead_unit_releases_its_consumers_frontiers)
{
	enum sc_type ty[2] = {SC_TYPE_I64, SC_TYPE_I64};
	struct sc_runtime_opts o = {.ticks = true};
	static const int64_t key[4] = {1, 13, 2, -1}; /* -1: an empty tick */
	struct sc_placement *p = NULL;
	struct sc_runtime *rt = NULL;
	struct tgraph t;
	struct sc_schema s;
	struct got got;
	int m, sum;

	/* out = plus(map(in), integrate(in)), per node: the map dies at
	 * tick 1, and the plus must go on with the integrate alone. */
	memset(&t, 0, sizeof(t));
	memset(&got, 0, sizeof(got));
	pthread_mutex_init(&got.mu, NULL);
	got.t = &t;
	cr_assert_eq(sc_schema_init(&s, 2, ty, NULL), 0);
	cr_assert_eq(sc_graph_create(&t.g), 0);
	t.in = sc_graph_input(t.g, "in", &s);
	m = sc_graph_map(t.g, t.in, &s, fails_on_13, NULL);
	sum = sc_graph_plus(t.g, m, sc_graph_integrate(t.g, t.in));
	for (int k = 0; k < NOUT; k++)
		t.out[k] = -2; /* none but out[0] */
	t.out[0] = sc_graph_output(t.g, "out", sum);
	cr_assert_geq(t.out[0], 0, "%s", sc_errmsg());
	cr_assert_eq(sc_placement_per_node(t.g, &p), 0);
	cr_assert_eq(sc_runtime_create(t.g, p, &o, &rt), 0, "%s", sc_errmsg());
	cr_assert_eq(sc_runtime_on_delta(rt, t.out[0], on_delta, &got), 0);
	for (int k = 0; k < 4; k++) {
		uint64_t row[2] = {sc_enc_i64(key[k]), sc_enc_i64(1)};
		struct sc_batch *b = NULL;

		if (key[k] >= 0) {
			cr_assert_eq(sc_batch_from_records(2, row, NULL, 1, &b),
				     0);
			cr_assert_eq(sc_runtime_submit_wait(rt, t.in, b, 0), 0);
			sc_batch_release(b);
		}
		cr_assert_eq(sc_runtime_tick(rt, 0, NULL), 0, "%s",
			     sc_errmsg());
	}
	cr_assert_eq(sc_runtime_wait_idle(rt, 0, NULL), SC_EPANIC);
	/* Ticks 2 and 3 were stepped: the integrate's (1, 1) + (13, 1) +
	 * (2, 1), 3 rows; the dead map's share is missing, and said so. */
	cr_assert(!got.bad);
	for (int tk = 2; tk < 4; tk++) {
		cr_assert_not_null(got.d[0][tk], "tick %d not stepped", tk);
		cr_assert_eq(sc_batch_count(got.d[0][tk]), 3, "tick %d", tk);
	}
	cr_assert_eq(sc_runtime_upstream_dead(rt, t.out[0], NULL), SC_EDEAD);
	(void)sc_runtime_shutdown(rt, NULL);
	sc_runtime_destroy(rt);
	for (int k = 0; k < NOUT; k++)
		for (size_t tk = 0; tk < NTICKS_MAX; tk++)
			sc_batch_release(got.d[k][tk]);
	sc_placement_destroy(p);
	sc_graph_destroy(t.g);
	pthread_mutex_destroy(&got.mu);
}

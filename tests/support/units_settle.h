/*
 * units_settle.h - one case of the settle property, for the Criterion
 * tests (tests/units/test_settle.c) and the ThreadSanitizer driver
 * (tests/units/tsan_runtime.c).
 *
 * A case: a graph (a random circuit of operators that are functions of
 * their input's integral, or the grid example), a workload (a seeded list
 * of (input, batch) submissions), a placement, and a schedule: either the
 * seeded scheduler (runtime/sim.h, `held` units held at once, submissions
 * arriving between any two events, budgets 1..4) or a real pool of
 * `workers` threads. The case settles and then checks that every edge
 * into a live unit is empty and every outbox flushed
 * (sc_runtime_check_idle), and that every output's integral EQUALS the
 * single circuit's after the same submissions. Pool cases run behind the
 * watchdog guard (tests/support/rt_watchdog.h). Failures are returned as a
 * message, never asserted here, so a plain driver can use it.
 *
 * Header-only (static functions).
 */
#ifndef SC_TEST_UNITS_SETTLE_H
#define SC_TEST_UNITS_SETTLE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "operators/circuit.h"
#include "runtime/sim.h"
#include "tests/support/circuit_gen.h"
#include "tests/support/prop.h"
#include "tests/support/rt_watchdog.h"
#include "tests/support/units_grid.h"
#include "units/placement.h"
#include "units/runtime.h"

/* --- random circuits whose outputs are functions of integrals ---------- */

/*
 * us_generate - cg_generate without integrate, differentiate, delay and
 * loops (their outputs are per tick, and units group deltas into steps as
 * their turns find them, so only the integral-functional operators
 * settle to the single circuit's values).
 */
static inline struct cg_spec *
us_generate(uint64_t seed)
{
	static const enum cg_op ops[] = {
	    CG_MAP,  CG_FILTER,	  CG_FLAT_MAP, CG_INDEX_BY,
	    CG_PLUS, CG_NEGATE,	  CG_MINUS,    CG_WINDOW,
	    CG_JOIN, CG_ANTIJOIN, CG_DISTINCT, CG_AGGREGATE,
	};
	struct cg_spec *s = calloc(1, sizeof(*s));
	struct cg_opts o;
	struct sc_rng r;
	uint32_t nin, nops;

	cg_opts_default(&o);
	o.loops = false;
	o.max_ops = 10;
	sc_rng_seed(&r, seed);
	if (!s)
		abort();
	s->seed = seed;
	nin = 1 + (uint32_t)sc_rng_below(&r, o.max_inputs);
	nops = 1 + (uint32_t)sc_rng_below(&r, o.max_ops);
	s->nodes = calloc(2 * (nin + nops) + 2, sizeof(struct cg_node));
	if (!s->nodes || sc_graph_create(&s->graph) != 0)
		abort();
	for (uint32_t i = 0; i < nin; i++) {
		struct cg_node *nd = cg_push(s, CG_INPUT);

		nd->ncols = 1 + (uint32_t)sc_rng_below(&r, o.max_cols);
		for (uint32_t c = 0; c < nd->ncols; c++)
			nd->types[c] = cg_rand_type(&r);
		cg_build_node(s, nd);
		s->inputs[s->ninputs++] = (int)(s->n - 1);
	}
	for (uint32_t i = 0; i < nops; i++) {
		struct cg_node tmp;

		do {
			memset(&tmp, 0, sizeof(tmp));
			tmp.bind = -1;
		} while (!cg_gen_op(s, &o, &tmp, &r, ops[sc_rng_below(&r, 12)],
				    -1, -1));
		*cg_push(s, tmp.op) = tmp;
		cg_build_node(s, &s->nodes[s->n - 1]);
	}
	cg_gen_outputs(s);
	cg_init_ref(s);
	return s;
}

/* --- workloads ---------------------------------------------------------- */

struct us_sub {
	int input;		/* input node */
	struct sc_batch *batch; /* owned */
};

struct us_work {
	struct sc_graph *g; /* borrowed */
	struct us_sub *subs;
	size_t n;
	int outputs[64]; /* output nodes */
	size_t nout;
	struct sc_batch *expect[64]; /* single circuit's integrals */
};

static inline void
us_find_outputs(struct us_work *w)
{
	w->nout = 0;
	for (size_t i = 0; i < sc_graph_node_count(w->g) && w->nout < 64; i++) {
		struct sc_node_info ni;

		if (sc_graph_node_info(w->g, (int)i, &ni) == 0 &&
		    ni.kind == SC_NODE_OUTPUT)
			w->outputs[w->nout++] = (int)i;
	}
}

/* The single circuit of the whole graph, fed every submission (one step
 * each): the expected integrals. */
static inline int
us_expect(struct us_work *w)
{
	struct sc_circuit *c = NULL;
	int rc = sc_circuit_create(w->g, &c);

	for (size_t i = 0; i < w->n && !rc; i++) {
		rc = sc_circuit_feed(c, w->subs[i].input, w->subs[i].batch);
		if (!rc)
			rc = sc_circuit_step(c);
	}
	us_find_outputs(w);
	for (size_t i = 0; i < w->nout && !rc; i++)
		rc = sc_circuit_integral(c, w->outputs[i], &w->expect[i]);
	sc_circuit_destroy(c);
	return rc;
}

/* A random circuit's workload: `n` submissions of random deltas. */
static inline int
us_work_random(struct us_work *w, struct cg_spec *s, uint64_t seed, size_t n)
{
	struct sc_rng r;

	memset(w, 0, sizeof(*w));
	w->g = s->graph;
	w->subs = calloc(n, sizeof(*w->subs));
	if (!w->subs)
		return SC_ENOMEM;
	sc_rng_seed(&r, seed ^ 0x5eedULL);
	while (w->n < n) {
		int id = s->inputs[sc_rng_below(&r, s->ninputs)];
		struct sc_batch *b = cg_gen_delta(s, id, &r);

		if (!b)
			continue;
		cz_add_batch(&s->nodes[id].st, b); /* the generator's view */
		w->subs[w->n].input = id;
		w->subs[w->n++].batch = b;
	}
	return us_expect(w);
}

/* The grid's workload: `n` batches of `edits` cell edits. */
static inline int
us_work_grid(struct us_work *w, struct ug_grid *gr, size_t n, size_t edits)
{
	memset(w, 0, sizeof(*w));
	w->g = gr->g;
	w->subs = calloc(n, sizeof(*w->subs));
	if (!w->subs)
		return SC_ENOMEM;
	for (size_t i = 0; i < n; i++) {
		w->subs[i].input = gr->cells;
		w->subs[i].batch = ug_grid_edits(gr, edits);
		if (!w->subs[i].batch)
			return SC_ENOMEM;
		w->n++;
	}
	return us_expect(w);
}

static inline void
us_work_fini(struct us_work *w)
{
	for (size_t i = 0; i < w->n; i++)
		sc_batch_release(w->subs[i].batch);
	for (size_t i = 0; i < w->nout; i++)
		sc_batch_release(w->expect[i]);
	free(w->subs);
	memset(w, 0, sizeof(*w));
}

/* The most host threads of a pool case. */
#define US_MAX_HOSTS 4

/* --- placements ------------------------------------------------------------
 */

/* The strategies every case runs (manual is the grid's staged map). */
static const char *const us_strategies[] = {
    "single",	"per-node",  "chains",	  "random:2",
    "random:5", "sharded:2", "sharded:3",
};
#define US_NSTRATEGIES (sizeof(us_strategies) / sizeof(us_strategies[0]))

/* --- one case ------------------------------------------------------------- */

struct us_case {
	uint64_t seed;	     /* the schedule's seed */
	uint32_t held;	     /* sim: units held at once; pool: threads */
	bool pool;	     /* a real pool instead of the sim */
	uint32_t capacity;   /* edge capacity */
	size_t outbox_bound; /* rows */
	uint32_t budget;     /* pool budget (the sim draws 1..4) */
	uint32_t hosts;	     /* pool: host threads submitting (0: 1) */
	uint64_t efull;	     /* sim: host submits refused as full */
	char why[600];	     /* on failure */
	struct sc_sim_result res;
};

/* The sim's host: submit the next batch or two (SC_EFULL: later). */
struct us_host {
	struct sc_runtime *rt;
	struct us_work *w;
	size_t next;
	uint64_t efull;
	int error;
};

static inline bool
us_host_step(void *ctx, struct sc_exec *ex, uint64_t rnd)
{
	struct us_host *h = ctx;
	uint64_t k = 1 + rnd % 2;

	(void)ex;
	while (k-- && h->next < h->w->n) {
		int rc = sc_runtime_submit(h->rt, h->w->subs[h->next].input,
					   h->w->subs[h->next].batch);

		if (rc == SC_EFULL) {
			h->efull++;
			break;
		}
		if (rc && !h->error)
			h->error = rc;
		h->next++;
	}
	return h->next < h->w->n;
}

static inline bool
us_check_outputs(struct sc_runtime *rt, struct us_work *w, struct us_case *k)
{
	int rc = sc_runtime_check_idle(rt);

	if (rc) {
		snprintf(k->why, sizeof(k->why), "check_idle: %s", sc_errmsg());
		return false;
	}
	for (size_t i = 0; i < w->nout; i++) {
		struct sc_batch *got = NULL;

		rc = sc_runtime_integral(rt, w->outputs[i], &got);
		if (rc || !sc_batch_equal(got, w->expect[i])) {
			snprintf(k->why, sizeof(k->why),
				 "output node %d: %s (%zu rows, expected %zu)",
				 w->outputs[i],
				 rc ? sc_errmsg() : "integral differs",
				 got ? sc_batch_count(got) : 0,
				 sc_batch_count(w->expect[i]));
			sc_batch_release(got);
			return false;
		}
		sc_batch_release(got);
	}
	return true;
}

/* Submit everything from this thread (blocking), then wait for idle. */
static inline int
us_drive_pool(struct sc_runtime *rt, struct us_work *w, struct us_case *k)
{
	for (size_t i = 0; i < w->n; i++) {
		int rc = sc_runtime_submit_wait(
		    rt, w->subs[i].input, w->subs[i].batch, 5000000000ull);

		if (rc) {
			snprintf(k->why, sizeof(k->why), "submit %zu: %s", i,
				 sc_errmsg());
			return rc;
		}
	}
	if (sc_runtime_wait_idle(rt, 5000000000ull, NULL) != 0) {
		snprintf(k->why, sizeof(k->why), "wait_idle: %s", sc_errmsg());
		return -1;
	}
	return 0;
}

/* Several host threads: thread t submits batches t, t + n, t + 2n, ...
 * (the integral does not depend on their order: deltas sum). */
struct us_submitter {
	pthread_t th;
	struct sc_runtime *rt;
	struct us_work *w;
	size_t first, step;
	int rc;
};

static inline void *
us_submitter_main(void *arg)
{
	struct us_submitter *u = arg;

	for (size_t i = u->first; i < u->w->n && !u->rc; i += u->step)
		u->rc =
		    sc_runtime_submit_wait(u->rt, u->w->subs[i].input,
					   u->w->subs[i].batch, 5000000000ull);
	return NULL;
}

static inline int
us_drive_hosts(struct sc_runtime *rt, struct us_work *w, struct us_case *k)
{
	struct us_submitter u[US_MAX_HOSTS];
	uint32_t n = k->hosts;
	int rc = 0;

	for (uint32_t t = 0; t < n; t++) {
		u[t] = (struct us_submitter){
		    .rt = rt, .w = w, .first = t, .step = n, .rc = 0};
		if (pthread_create(&u[t].th, NULL, us_submitter_main, &u[t]))
			abort();
	}
	for (uint32_t t = 0; t < n; t++) {
		pthread_join(u[t].th, NULL);
		if (u[t].rc && !rc) {
			rc = u[t].rc;
			snprintf(k->why, sizeof(k->why), "host %u: %s", t,
				 sc_errname(rc));
		}
	}
	if (!rc && sc_runtime_wait_idle(rt, 5000000000ull, NULL) != 0) {
		snprintf(k->why, sizeof(k->why), "wait_idle: %s", sc_errmsg());
		rc = -1;
	}
	return rc;
}

static inline int
us_drive_sim(struct sc_runtime *rt, struct us_work *w, struct us_case *k)
{
	struct us_host h = {.rt = rt, .w = w};
	struct sc_sim_opts so = {.seed = k->seed,
				 .held_max = k->held,
				 .budget = 0,
				 .max_steps = 2000000,
				 .host = us_host_step,
				 .host_ctx = &h};
	int rc = sc_sim_run(sc_runtime_exec(rt), &so, &k->res);

	k->efull = h.efull;

	if (rc || h.error) {
		snprintf(k->why, sizeof(k->why), "sim: %s; host: %s",
			 rc ? k->res.why : "ok",
			 h.error ? sc_errname(h.error) : "ok");
		return rc ? rc : h.error;
	}
	return 0;
}

/*
 * us_run - run workload w under placement p as case k says. Returns true
 * when it settled to the expected integrals with the idle invariant; else
 * false with k->why.
 */
static inline bool
us_run(struct us_work *w, const struct sc_placement *p, struct us_case *k)
{
	struct sc_runtime_opts o = {.workers = k->pool ? k->held : 0,
				    .budget = k->budget,
				    .edge_capacity = k->capacity,
				    .outbox_bound = k->outbox_bound};
	struct sc_runtime *rt = NULL;
	bool ok = false;
	int rc = sc_runtime_create(w->g, p, &o, &rt);

	k->why[0] = 0;
	if (rc) {
		snprintf(k->why, sizeof(k->why), "create: %s", sc_errmsg());
		return false;
	}
	if (k->pool) {
		/* A lost wake-up fails by name, with every unit's state. */
		struct sc_test_guard *guard =
		    sc_test_guard_begin(sc_runtime_exec(rt), "settle", 20000);

		rc = k->hosts > 1 ? us_drive_hosts(rt, w, k)
				  : us_drive_pool(rt, w, k);
		sc_test_guard_end(guard);
	} else {
		rc = us_drive_sim(rt, w, k);
	}
	if (!rc)
		ok = us_check_outputs(rt, w, k);
	if (sc_runtime_shutdown(rt, NULL) != 0 && ok) {
		snprintf(k->why, sizeof(k->why), "shutdown: %s", sc_errmsg());
		ok = false;
	}
	sc_runtime_destroy(rt);
	return ok;
}

/* Edge capacity and outbox bound for schedule seed s: small ones often,
 * so that edges fill and backpressure is exercised. */
static inline void
us_sizes(struct us_case *k, uint64_t s)
{
	static const uint32_t caps[] = {1, 2, 4, 64};
	static const size_t bounds[] = {1, 4, 64, 4096};

	k->capacity = caps[s % 4];
	k->outbox_bound = bounds[(s / 4) % 4];
}

#endif /* SC_TEST_UNITS_SETTLE_H */

/*
 * sweep.c - the placement sweep of a workload (sweep.h): the options'
 * checks, the calibration, the rounds, one case-run, the medians and the
 * rankings (units/rank.h's rules).
 *
 * Design. Every case-run builds everything it uses (instance, placement,
 * runtime) and destroys it before the next, so no case inherits another's
 * state: a warm cache of the previous case's graph is the only thing
 * shared, and the rounds spread that over the cases alike.
 */
#include "units/sweep.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "operators/base.h"
#include "operators/error.h"
#include "units/placement.h"
#include "units/runtime.h"

static const char fn[] = "sc_sweep_run";

/* --- the options ---------------------------------------------------------- */

static int
check_lists(const struct sc_sweep_opts *o)
{
	if (!o->placements || o->nplacements == 0)
		return sc__fail(SC_EINVAL, "%s: opts.placements: none", fn);
	for (size_t i = 0; i < o->nplacements; i++)
		if (!o->placements[i] || strlen(o->placements[i]) > 31)
			return sc__fail(SC_EINVAL,
					"%s: opts.placements[%zu]: %s", fn, i,
					!o->placements[i] ? "NULL"
							  : "longer than 31 "
							    "bytes");
	if (!o->workers || o->nworkers == 0)
		return sc__fail(SC_EINVAL, "%s: opts.workers: none", fn);
	for (size_t i = 0; i < o->nworkers; i++)
		if (o->workers[i] == 0 || o->workers[i] > SC_SWEEP_MAX_WORKERS)
			return sc__fail(SC_EINVAL,
					"%s: opts.workers[%zu]: %u (want "
					"1..%u)",
					fn, i, o->workers[i],
					SC_SWEEP_MAX_WORKERS);
	if (o->nbudgets && !o->budgets)
		return sc__fail(SC_EINVAL, "%s: opts.budgets: NULL", fn);
	for (size_t i = 0; i < o->nbudgets; i++)
		if (o->budgets[i] == 0)
			return sc__fail(SC_EINVAL,
					"%s: opts.budgets[%zu]: 0 (want >= 1)",
					fn, i);
	return 0;
}

static int
check_opts(const struct sc_sweep_opts *o)
{
	int rc = check_lists(o);

	if (rc)
		return rc;
	if (o->reps == 0 || o->reps > SC_SWEEP_MAX_REPS)
		return sc__fail(SC_EINVAL, "%s: opts.reps: %u (want 1..%u)", fn,
				o->reps, SC_SWEEP_MAX_REPS);
	if (!isfinite(o->seconds) || o->seconds < 0)
		return sc__fail(SC_EINVAL, "%s: opts.seconds: %g (want >= 0)",
				fn, o->seconds);
	if (!isfinite(o->warmup) || o->warmup < 0)
		return sc__fail(SC_EINVAL, "%s: opts.warmup: %g (want >= 0)",
				fn, o->warmup);
	if (o->edge_capacity & (o->edge_capacity - 1))
		return sc__fail(SC_EINVAL,
				"%s: opts.edge_capacity: %u (want a power of "
				"two, or 0)",
				fn, o->edge_capacity);
	return 0;
}

/* --- the cases ------------------------------------------------------------ */

static int
case_init(struct sc_sweep_case *c, const char *spec, uint32_t workers,
	  uint32_t budget, uint32_t reps)
{
	c->workers = workers;
	c->budget = budget;
	if (!strcmp(spec, "balanced"))
		(void)snprintf(c->placement, sizeof(c->placement),
			       "balanced:%u", workers);
	else
		(void)snprintf(c->placement, sizeof(c->placement), "%s", spec);
	(void)snprintf(c->label, sizeof(c->label), "%s x%u b%u", c->placement,
		       workers, budget);
	c->reps = calloc(reps, sizeof(*c->reps));
	c->eps = calloc(reps, sizeof(*c->eps));
	if (!c->reps || !c->eps)
		return sc__fail(SC_ENOMEM, "%s: case %s", fn, c->label);
	return 0;
}

/* Every placement x workers x budget into r->cases. */
static int
make_cases(const struct sc_sweep_opts *o, struct sc_sweep_result *r)
{
	static const uint32_t dflt_budget = 0;
	const uint32_t *budgets = o->nbudgets ? o->budgets : &dflt_budget;
	size_t nb = o->nbudgets ? o->nbudgets : 1;

	r->ncases = o->nplacements * o->nworkers * nb;
	r->cases = calloc(r->ncases ? r->ncases : 1, sizeof(*r->cases));
	if (!r->cases) {
		size_t n = r->ncases;
		r->ncases = 0;
		return sc__fail(SC_ENOMEM, "%s: %zu cases", fn, n);
	}
	size_t n = 0;
	for (size_t i = 0; i < o->nplacements; i++)
		for (size_t j = 0; j < o->nworkers; j++)
			for (size_t b = 0; b < nb; b++) {
				int rc = case_init(
				    &r->cases[n++], o->placements[i],
				    o->workers[j], budgets[b], o->reps);
				if (rc)
					return rc;
			}
	return 0;
}

/* Case c's placement of g: parsed, or balanced from the calibration. */
static int
case_placement(const struct sc_sweep_result *r, const struct sc_sweep_case *c,
	       const struct sc_graph *g, uint64_t seed,
	       struct sc_placement **out)
{
	if (strncmp(c->placement, "balanced:", 9) != 0 || !r->cost)
		return sc_placement_parse(g, c->placement, seed, out);
	unsigned long k = strtoul(c->placement + 9, NULL, 10);
	return sc_placement_balanced(g, (uint32_t)k, r->cost, r->ncost, out);
}

/* --- the first instance: specs checked, the calibration ------------------ */

static int
check_specs(const struct sc_sweep_opts *o, struct sc_graph *g)
{
	for (size_t i = 0; i < o->nplacements; i++) {
		struct sc_placement *p = NULL;
		const char *spec = o->placements[i];
		int rc = strcmp(spec, "balanced") != 0
			     ? sc_placement_parse(g, spec, o->seed, &p)
			     : 0;

		sc_placement_destroy(p);
		if (rc) {
			char m[512];
			(void)snprintf(m, sizeof(m), "%s", sc_errdetail());
			return sc__fail(SC_EINVAL,
					"%s: opts.placements[%zu] '%s': %s", fn,
					i, spec, m);
		}
	}
	return 0;
}

static bool
wants_cost(const struct sc_sweep_opts *o)
{
	for (size_t i = 0; i < o->nplacements; i++)
		if (!strncmp(o->placements[i], "balanced", 8))
			return true;
	return false;
}

/* How many submissions (at most SC_SWEEP_CALIBRATE_STEPS) the workload
 * has, counted on an instance of its own: the calibration feeds that many,
 * so a short workload is calibrated over the whole of it. */
static int
calibrate_steps(const struct sc_workload_def *def, struct sc_workload_env *env,
		size_t *n)
{
	struct sc_workload *w = NULL;
	int rc = sc_workload_create(def, env, &w);

	*n = 0;
	while (!rc && *n < SC_SWEEP_CALIBRATE_STEPS) {
		struct sc_settle_step st = {.input = -1, .batch = NULL};
		rc = sc_workload_next(w, &st);
		sc_batch_release(st.batch);
		*n += rc == 0;
	}
	sc_workload_destroy(w);
	if (rc == SC_EEMPTY)
		rc = *n ? 0
			: sc__fail(SC_EINVAL,
				   "%s: the workload gives no submission to "
				   "calibrate balanced with",
				   fn);
	return rc;
}

/* The node costs of g, from w's first submissions. */
static int
calibrate(const struct sc_workload_def *def, struct sc_workload_env *env,
	  struct sc_workload *w, struct sc_sweep_result *r)
{
	struct sc_graph *g = sc_workload_graph(w);
	size_t steps = 0;
	int rc = calibrate_steps(def, env, &steps);

	if (rc)
		return rc;
	r->ncost = sc_graph_node_count(g);
	r->cost = calloc(r->ncost ? r->ncost : 1, sizeof(*r->cost));
	if (!r->cost)
		return sc__fail(SC_ENOMEM, "%s: the costs", fn);
	rc = sc_placement_calibrate(g, sc_workload_gen, w, steps, r->cost,
				    r->ncost);
	if (rc) {
		char m[512];
		(void)snprintf(m, sizeof(m), "%s", sc_errdetail());
		return sc__fail(rc, "%s: the calibration of balanced: %s", fn,
				m);
	}
	return 0;
}

/* An instance: the specs checked on its graph, then (balanced) its first
 * submissions calibrate the costs. */
static int
prepare(const struct sc_workload_def *def, struct sc_workload_env *env,
	const struct sc_sweep_opts *o, struct sc_sweep_result *r)
{
	struct sc_workload *w = NULL;
	int rc = sc_workload_create(def, env, &w);

	if (rc)
		return sc__errwrap(rc, fn);
	rc = check_specs(o, sc_workload_graph(w));
	if (!rc && wants_cost(o))
		rc = calibrate(def, env, w, r);
	sc_workload_destroy(w);
	return rc;
}

/* --- one case-run --------------------------------------------------------- */

static double
cpu_seconds(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts))
		return 0.0;
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Submit the workload's steps to rt until the time, the count or the
 * end; the rows into rep. */
static int
feed(struct sc_workload *w, struct sc_runtime *rt, double seconds, uint64_t max,
     uint64_t t0, struct sc_sweep_rep *rep)
{
	uint64_t limit = seconds > 0 ? (uint64_t)(seconds * 1e9) : 0;

	for (;;) {
		if (limit && sc_clock_ns() - t0 >= limit)
			return 0;
		if (max && rep->submissions >= max)
			return 0;
		struct sc_settle_step st = {.input = -1, .batch = NULL};
		int rc = sc_workload_next(w, &st);
		if (rc == SC_EEMPTY)
			return 0;
		if (rc)
			return rc;
		if (st.input == SC_SETTLE_TICK && !st.batch) {
			rc = sc_runtime_tick(rt, 0, NULL);
		} else {
			rep->rows += sc_batch_count(st.batch);
			rc = sc_runtime_submit_wait(rt, st.input, st.batch, 0);
			sc_batch_release(st.batch);
		}
		if (rc)
			return rc;
		rep->submissions++;
	}
}

/* Run the placed graph of w, measured into rep. */
static int
measure(struct sc_workload *w, const struct sc_placement *p,
	const struct sc_runtime_opts *ro, double seconds, uint64_t max,
	struct sc_sweep_rep *rep)
{
	struct sc_runtime *rt = NULL;
	struct sc_runtime_stats st;
	int rc = sc_runtime_create(sc_workload_graph(w), p, ro, &rt);

	if (rc)
		return rc;
	uint64_t t0 = sc_clock_ns();
	double c0 = cpu_seconds();
	rc = feed(w, rt, seconds, max, t0, rep);
	int idle = sc_runtime_wait_idle(rt, 0, NULL);
	rc = rc ? rc : idle;
	rep->seconds = (double)(sc_clock_ns() - t0) / 1e9;
	rep->cpu_seconds = cpu_seconds() - c0;
	sc_runtime_stats(rt, &st);
	rep->turns = st.turns;
	rep->frames = st.frames;
	rep->units = st.units;
	rep->edges = st.edges;
	rep->events_per_s =
	    rep->seconds > 0 ? (double)rep->rows / rep->seconds : 0.0;
	rep->events_per_cpu_s =
	    rep->cpu_seconds > 0 ? (double)rep->rows / rep->cpu_seconds : 0.0;
	sc_runtime_destroy(rt);
	return rc;
}

/* One run of case c into *rep: a fresh instance, placement and runtime. */
static int
run_case(const struct sc_workload_def *def, struct sc_workload_env *env,
	 const struct sc_sweep_opts *o, const struct sc_sweep_result *r,
	 const struct sc_sweep_case *c, double seconds,
	 struct sc_sweep_rep *rep)
{
	struct sc_workload *w = NULL;
	struct sc_placement *p = NULL;
	struct sc_runtime_opts ro = {
	    .workers = c->workers,
	    .budget = c->budget,
	    .edge_capacity = o->edge_capacity,
	    .ticks = (def->flags & SC_WORKLOAD_TICKS) != 0,
	};
	int rc = sc_workload_create(def, env, &w);

	memset(rep, 0, sizeof(*rep));
	if (!rc)
		rc = case_placement(r, c, sc_workload_graph(w), o->seed, &p);
	if (!rc)
		rc = measure(w, p, &ro, seconds, o->submissions, rep);
	sc_placement_destroy(p);
	sc_workload_destroy(w);
	if (rc) {
		char m[512];
		(void)snprintf(m, sizeof(m), "%s", sc_errdetail());
		return sc__fail(rc, "%s: case %s: %s", fn, c->label, m);
	}
	return 0;
}

/* --- the rounds ----------------------------------------------------------- */

static bool
stopped(const struct sc_sweep_opts *o, struct sc_sweep_result *r)
{
	if (o->stop && o->stop(o->ctx))
		r->interrupted = true;
	return r->interrupted;
}

static int
rounds(const struct sc_workload_def *def, struct sc_workload_env *env,
       const struct sc_sweep_opts *o, struct sc_sweep_result *r)
{
	size_t total = r->ncases * o->reps, done = 0;
	struct sc_sweep_rep scratch;
	int rc;

	for (size_t i = 0; o->warmup > 0 && i < r->ncases; i++) {
		if (stopped(o, r))
			return 0;
		if (o->progress)
			o->progress(o->ctx, 0, i, 0, total);
		rc =
		    run_case(def, env, o, r, &r->cases[i], o->warmup, &scratch);
		if (rc)
			return rc;
	}
	for (uint32_t k = 0; k < o->reps; k++)
		for (size_t i = 0; i < r->ncases; i++, done++) {
			struct sc_sweep_case *c = &r->cases[i];

			if (stopped(o, r))
				return 0;
			if (o->progress)
				o->progress(o->ctx, k + 1, i, done, total);
			rc = run_case(def, env, o, r, c, o->seconds,
				      &c->reps[c->done]);
			if (rc)
				return rc;
			c->eps[c->done] = c->reps[c->done].events_per_s;
			c->done++;
		}
	return 0;
}

/* --- medians and rankings ------------------------------------------------- */

/* The median of the figure at byte offset `off` (a double, or a uint64_t
 * when `whole`) over c's repetitions. */
static double
median_at(const struct sc_sweep_case *c, size_t off, bool whole, double *tmp)
{
	struct sc_rank_summary s = {0, 0, 0};

	for (uint32_t i = 0; i < c->done; i++) {
		const char *p = (const char *)&c->reps[i] + off;
		uint64_t u;
		double d;

		if (whole) {
			memcpy(&u, p, sizeof(u));
			tmp[i] = (double)u;
		} else {
			memcpy(&d, p, sizeof(d));
			tmp[i] = d;
		}
	}
	(void)sc_rank_summarize(tmp, c->done, &s);
	return s.median;
}

static int
medians(struct sc_sweep_case *c)
{
	double *t = calloc(c->done ? c->done : 1, sizeof(*t));
	struct sc_sweep_rep *m = &c->median;

	if (!t)
		return sc__fail(SC_ENOMEM, "%s: the medians", fn);
	if (c->done) {
		(void)sc_rank_summarize(c->eps, c->done, &c->eps_summary);
		m->submissions = (uint64_t)median_at(
		    c, offsetof(struct sc_sweep_rep, submissions), true, t);
		m->rows = (uint64_t)median_at(
		    c, offsetof(struct sc_sweep_rep, rows), true, t);
		m->seconds = median_at(
		    c, offsetof(struct sc_sweep_rep, seconds), false, t);
		m->cpu_seconds = median_at(
		    c, offsetof(struct sc_sweep_rep, cpu_seconds), false, t);
		m->events_per_s = c->eps_summary.median;
		m->events_per_cpu_s = median_at(
		    c, offsetof(struct sc_sweep_rep, events_per_cpu_s), false,
		    t);
		m->turns = (uint64_t)median_at(
		    c, offsetof(struct sc_sweep_rep, turns), true, t);
		m->frames = (uint64_t)median_at(
		    c, offsetof(struct sc_sweep_rep, frames), true, t);
		m->units = c->reps[0].units;
		m->edges = c->reps[0].edges;
	}
	free(t);
	return 0;
}

/* The ranking of the cases with k->workers workers that ran. */
static int
rank_group(const struct sc_sweep_result *r, struct sc_sweep_ranking *k)
{
	k->cases = calloc(r->ncases, sizeof(*k->cases));
	k->index = calloc(r->ncases, sizeof(*k->index));
	k->order = calloc(r->ncases, sizeof(*k->order));
	if (!k->cases || !k->index || !k->order)
		return sc__fail(SC_ENOMEM, "%s: the ranking", fn);
	for (size_t i = 0; i < r->ncases; i++) {
		const struct sc_sweep_case *c = &r->cases[i];

		if (c->workers != k->workers || c->done == 0)
			continue;
		k->cases[k->n] = (struct sc_rank_case){
		    .name = c->label, .v = c->eps, .n = c->done};
		k->index[k->n++] = i;
	}
	return sc_rank_order(k->cases, k->n, k->order);
}

/* A ranking per worker count, in the order the counts first appear. */
static int
rank_all(struct sc_sweep_result *r)
{
	r->rankings = calloc(r->ncases ? r->ncases : 1, sizeof(*r->rankings));
	if (!r->rankings)
		return sc__fail(SC_ENOMEM, "%s: the rankings", fn);
	for (size_t i = 0; i < r->ncases; i++) {
		const struct sc_sweep_case *c = &r->cases[i];
		bool seen = c->done == 0;

		for (size_t j = 0; j < r->nrankings && !seen; j++)
			seen = r->rankings[j].workers == c->workers;
		if (seen)
			continue;
		struct sc_sweep_ranking *k = &r->rankings[r->nrankings++];
		k->workers = c->workers;
		int rc = rank_group(r, k);
		if (rc)
			return rc;
	}
	return 0;
}

/* --- the call ------------------------------------------------------------- */

int
sc_sweep_run(const struct sc_workload_def *def, struct sc_workload_env *env,
	     const struct sc_sweep_opts *opts, struct sc_sweep_result *result)
{
	if (!def || !env || !opts || !result)
		return sc__fail(SC_EINVAL, "%s: NULL %s", fn,
				!def	? "def"
				: !env	? "env"
				: !opts ? "opts"
					: "result");
	memset(result, 0, sizeof(*result));
	int rc = check_opts(opts);
	if (rc)
		return rc;
	uint64_t t0 = sc_clock_ns();
	rc = prepare(def, env, opts, result);
	if (!rc)
		rc = make_cases(opts, result);
	if (!rc)
		rc = rounds(def, env, opts, result);
	result->seconds = (double)(sc_clock_ns() - t0) / 1e9;
	/* What ran is summed up and ranked also after a failed case-run;
	 * the first error is what the call returns. */
	for (size_t i = 0; i < result->ncases; i++) {
		int m = medians(&result->cases[i]);
		rc = rc ? rc : m;
	}
	if (result->ncases) {
		int k = rank_all(result);
		rc = rc ? rc : k;
	}
	return rc;
}

void
sc_sweep_result_free(struct sc_sweep_result *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->ncases; i++) {
		free(r->cases[i].reps);
		free(r->cases[i].eps);
	}
	for (size_t i = 0; i < r->nrankings; i++) {
		free(r->rankings[i].cases);
		free(r->rankings[i].index);
		free(r->rankings[i].order);
	}
	free(r->cases);
	free(r->rankings);
	free(r->cost);
	memset(r, 0, sizeof(*r));
}

/*
 * test_sweep.c - the placement sweep as a library call (units/sweep.h), on
 * a workload defined here: pairs -> map (key mod 4, value x 2) -> sum per
 * key -> output, fed a fixed number of seeded batches. Bad options are
 * refused naming the field; a sweep runs and ranks every case; two sweeps
 * of the same options rank the same cases the same way in structure; a
 * workload that cannot be made is reported. The runtimes run real
 * threads: each test has a timeout, so a hang fails by name.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "operators/aggregate.h"
#include "operators/base.h"
#include "operators/error.h"
#include "operators/graph.h"
#include "units/sweep.h"

#define ROWS_PER_STEP 16

struct pairs {
	struct sc_graph *g;
	int in;
	uint64_t steps, seed;
};

static int
pairs_map(void *ctx, const uint64_t *row, uint64_t *out)
{
	(void)ctx;
	out[0] = row[0] % 4;
	out[1] = row[1] * 2;
	return 0;
}

static int
pairs_graph(struct pairs *p)
{
	struct sc_schema s = {.ncols = 2, .types = {SC_TYPE_I64, SC_TYPE_I64}};
	struct sc_aggregate_spec sum = {.ncols = 2,
					.k = 1,
					.kind = SC_AGG_SUM,
					.col = 1,
					.col_type = SC_TYPE_I64};
	int rc = sc_graph_create(&p->g);

	if (rc)
		return rc;
	p->in = sc_graph_input(p->g, "pairs", &s);
	int m = sc_graph_map(p->g, p->in, &s, pairs_map, NULL);
	int a = sc_graph_aggregate(p->g, m, &sum);
	int o = sc_graph_output(p->g, "sums", a);
	return p->in < 0 ? p->in : m < 0 ? m : a < 0 ? a : o < 0 ? o : 0;
}

static int
pairs_create(struct sc_workload_env *env, void **self)
{
	struct pairs *p = calloc(1, sizeof(*p));
	bool fail = false;
	int rc;

	if (!p)
		return SC_ENOMEM;
	rc = sc_workload_arg_u64(env, "steps", 20, 1, 1000, &p->steps);
	if (!rc)
		rc = sc_workload_arg_bool(env, "fail", false, &fail);
	if (!rc && fail)
		rc = sc_errorf(SC_EINVAL, "pairs: asked to fail");
	if (!rc)
		rc = pairs_graph(p);
	if (rc) {
		(void)sc_graph_destroy(p->g);
		free(p);
		return rc;
	}
	p->seed = env->seed;
	*self = p;
	return 0;
}

static void
pairs_destroy(void *self)
{
	struct pairs *p = self;

	(void)sc_graph_destroy(p->g);
	free(p);
}

static struct sc_graph *
pairs_get_graph(void *self)
{
	return ((struct pairs *)self)->g;
}

static int
pairs_next(void *self, size_t i, struct sc_settle_step *out)
{
	struct pairs *p = self;
	uint64_t rows[ROWS_PER_STEP * 2];
	uint64_t x = p->seed * 1000003u + i;

	if (i >= p->steps)
		return SC_EEMPTY;
	for (size_t k = 0; k < ROWS_PER_STEP; k++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		rows[2 * k] = (x >> 33) % 64;
		rows[2 * k + 1] = (x >> 17) % 100;
	}
	out->input = p->in;
	return sc_batch_from_records(2, rows, NULL, ROWS_PER_STEP, &out->batch);
}

static const struct sc_workload_def pairs_def = {
    .version = SC_WORKLOAD_VERSION,
    .name = "pairs",
    .about = "pairs -> map -> sum per key -> output",
    .create = pairs_create,
    .destroy = pairs_destroy,
    .graph = pairs_get_graph,
    .next = pairs_next,
};

static const char *const specs[] = {"single", "per-node", "chains", "balanced"};
static const uint32_t workers[] = {1, 2};
static const uint32_t budgets[] = {64};

/* Four placements x two worker counts x one budget, by submissions. */
static struct sc_sweep_opts
small_opts(void)
{
	return (struct sc_sweep_opts){.placements = specs,
				      .nplacements = 4,
				      .workers = workers,
				      .nworkers = 2,
				      .budgets = budgets,
				      .nbudgets = 1,
				      .reps = 2,
				      .seed = 7};
}

/* --- refusals ------------------------------------------------------------- */

struct bad_case {
	const char *what; /* the field the message must name */
	int change;	  /* which field is made bad */
};

static void
spoil(struct sc_sweep_opts *o, int change)
{
	static const char *const bad_spec[] = {"single", "no-such-placement"};
	static const uint32_t zero[] = {0};

	switch (change) {
	case 0:
		o->nplacements = 0;
		break;
	case 1:
		o->placements = bad_spec, o->nplacements = 2;
		break;
	case 2:
		o->reps = 0;
		break;
	default:
		o->workers = zero, o->nworkers = 1;
		break;
	}
}

Test(sweep, bad_opts_are_each_refused_naming_the_field, .timeout = 60)
{
	static const struct bad_case cases[] = {
	    {"opts.placements: none", 0},
	    {"opts.placements[1] 'no-such-placement'", 1},
	    {"opts.reps", 2},
	    {"opts.workers[0]", 3},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct sc_workload_env env = {.seed = 1};
		struct sc_sweep_opts o = small_opts();
		struct sc_sweep_result r;

		spoil(&o, cases[i].change);
		cr_assert_eq(sc_sweep_run(&pairs_def, &env, &o, &r), SC_EINVAL,
			     "%s", cases[i].what);
		cr_assert(strstr(sc_errmsg(), cases[i].what), "%s: got '%s'",
			  cases[i].what, sc_errmsg());
		cr_assert_eq(r.ncases, 0, "%s: nothing ran", cases[i].what);
		sc_sweep_result_free(&r);
	}
}

/* --- a sweep -------------------------------------------------------------- */

/* Every case ran every repetition with every row; a ranking per worker
 * count holding each of its cases once. */
static void
check_every_case_ranked(const struct sc_sweep_result *r, uint32_t reps)
{
	cr_assert_eq(r->ncases, 8);
	cr_assert_eq(r->nrankings, 2);
	cr_assert_not_null(r->cost, "balanced was calibrated");
	for (size_t i = 0; i < r->ncases; i++) {
		const struct sc_sweep_case *c = &r->cases[i];

		cr_assert_eq(c->done, reps, "%s", c->label);
		for (uint32_t k = 0; k < c->done; k++)
			cr_assert_eq(c->reps[k].rows,
				     (uint64_t)20 * ROWS_PER_STEP, "%s rep %u",
				     c->label, k);
		cr_assert_gt(c->median.events_per_s, 0, "%s", c->label);
		cr_assert_gt(c->median.turns, 0, "%s", c->label);
	}
	cr_assert_str_eq(r->cases[6].placement, "balanced:1");
	cr_assert_str_eq(r->cases[7].placement, "balanced:2");
	for (size_t k = 0; k < r->nrankings; k++) {
		const struct sc_sweep_ranking *g = &r->rankings[k];
		bool seen[8] = {false};

		cr_assert_eq(g->workers, workers[k]);
		cr_assert_eq(g->n, 4);
		cr_assert_not(g->order[0].tie, "the first ties with nothing");
		for (size_t j = 0; j < g->n; j++) {
			size_t ci = g->index[g->order[j].index];

			cr_assert_eq(r->cases[ci].workers, g->workers);
			cr_assert_not(seen[ci], "case %zu twice", ci);
			seen[ci] = true;
			if (j > 0)
				cr_assert_geq(g->order[j - 1].s.median,
					      g->order[j].s.median);
		}
	}
}

Test(sweep, a_sweep_ranks_every_case, .timeout = 120)
{
	struct sc_workload_env env = {.seed = 3};
	struct sc_sweep_opts o = small_opts();
	struct sc_sweep_result r;

	cr_assert_eq(sc_sweep_run(&pairs_def, &env, &o, &r), 0, "%s",
		     sc_errmsg());
	check_every_case_ranked(&r, o.reps);
	cr_assert_not(r.interrupted);
	sc_sweep_result_free(&r);
	cr_assert_null(r.cases);
}

Test(sweep, the_ranking_is_deterministic_in_its_structure, .timeout = 120)
{
	struct sc_workload_env env = {.seed = 5};
	struct sc_sweep_opts o = small_opts();
	struct sc_sweep_result a, b;

	cr_assert_eq(sc_sweep_run(&pairs_def, &env, &o, &a), 0, "%s",
		     sc_errmsg());
	cr_assert_eq(sc_sweep_run(&pairs_def, &env, &o, &b), 0, "%s",
		     sc_errmsg());
	cr_assert_eq(a.ncases, b.ncases);
	for (size_t i = 0; i < a.ncases; i++) {
		cr_assert_str_eq(a.cases[i].label, b.cases[i].label);
		cr_assert_eq(a.cases[i].median.rows, b.cases[i].median.rows);
		cr_assert_eq(a.cases[i].median.units, b.cases[i].median.units);
	}
	cr_assert_eq(a.ncost, b.ncost);
	for (size_t i = 0; i < a.ncost; i++)
		cr_assert_eq(a.cost[i], b.cost[i], "node %zu's cost", i);
	cr_assert_eq(a.nrankings, b.nrankings);
	for (size_t k = 0; k < a.nrankings; k++) {
		cr_assert_eq(a.rankings[k].workers, b.rankings[k].workers);
		cr_assert_eq(a.rankings[k].n, b.rankings[k].n);
		for (size_t j = 0; j < a.rankings[k].n; j++)
			cr_assert_eq(a.rankings[k].index[j],
				     b.rankings[k].index[j]);
	}
	sc_sweep_result_free(&a);
	sc_sweep_result_free(&b);
}

/* --- a workload that cannot be made --------------------------------------- */

Test(sweep, a_failing_workload_create_is_reported, .timeout = 60)
{
	const struct sc_workload_arg args[] = {{"fail", "true"}};
	struct sc_workload_env env = {.seed = 1, .args = args, .nargs = 1};
	struct sc_sweep_opts o = small_opts();
	struct sc_sweep_result r;

	cr_assert_eq(sc_sweep_run(&pairs_def, &env, &o, &r), SC_EINVAL);
	cr_assert(strstr(sc_errmsg(), "sc_sweep_run"), "%s", sc_errmsg());
	cr_assert(strstr(sc_errmsg(), "asked to fail"), "%s", sc_errmsg());
	cr_assert_eq(r.ncases, 0);
	cr_assert_eq(r.nrankings, 0);
	sc_sweep_result_free(&r);
}

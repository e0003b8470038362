/*
 * test_builtin.c - the built-in workloads through the workload interface
 * (bench/workloads/builtin.h, units/workload.h).
 *
 * Every built-in name is created, some of its submissions pulled through
 * sc_workload_gen into a settle work (units/settle.h) and run over a few
 * placements under the seeded scheduler: each must settle where the
 * single circuit does, and where the workload has a reference, the placed
 * integrals must pass it too. Then what the arguments say: where the
 * input ends, and that an argument no workload reads is refused by name.
 */
#include <criterion/criterion.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "bench/workloads/builtin.h"
#include "bench/workloads/nexmark_queries.h"
#include "operators/error.h"
#include "operators/graph.h"
#include "units/placement.h"
#include "units/settle.h"
#include "units/workload.h"

/* Arguments for each built-in (matched by the name's prefix) that keep
 * the work small. */
struct case_args {
	const char *prefix;
	const char *kv; /* "key=value", or NULL */
	size_t steps;	/* submissions settled */
};

static const struct case_args cases[] = {
    {"grid", "batch=16", 12},
    {"random-ticks", NULL, 14},
    {"random", NULL, 12},
    {"nexmark:", "batch=200", 12},
};

static const struct case_args *
case_of(const char *name)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		if (!strncmp(name, cases[i].prefix, strlen(cases[i].prefix)))
			return &cases[i];
	return NULL;
}

/* An instance of built-in `name` with the one argument kv (or none). */
static int
open_builtin(const char *name, const char *kv, uint64_t seed,
	     struct sc_workload **out)
{
	static char buf[256];
	static struct sc_workload_arg arg;
	struct sc_workload_env env = {.seed = seed};
	const struct sc_workload_def *def = sc_builtin_workload(name);

	cr_assert_not_null(def, "%s: no such built-in", name);
	if (kv) {
		cr_assert_eq(sc_workload_parse_arg(kv, buf, sizeof(buf), &arg),
			     0);
		env.args = &arg;
		env.nargs = 1;
	}
	return sc_workload_create(def, &env, out);
}

/* The settle run's extra check: the workload's reference, where it has
 * one, after every submission of the work. */
struct verify_ctx {
	struct sc_workload *w;
	size_t n;
	int checked;
};

static int
verify_reference(void *ctx, int output, const struct sc_batch *got)
{
	struct verify_ctx *v = ctx;
	int rc = sc_workload_verify(v->w, output, v->n, got);

	if (rc == SC_ENOENT && !sc_workload_def(v->w)->verify)
		return 0;
	v->checked += rc == 0;
	return rc;
}

static void
settle_builtin(const char *name)
{
	const struct case_args *c = case_of(name);
	struct sc_workload *w = NULL;
	struct sc_settle_work *work = NULL;
	unsigned flags;

	cr_assert_not_null(c, "%s: no case for this built-in", name);
	cr_assert_eq(open_builtin(name, c->kv, 7, &w), 0, "%s: %s", name,
		     sc_errmsg());
	flags =
	    sc_workload_def(w)->flags & SC_WORKLOAD_TICKS ? SC_SETTLE_TICKS : 0;
	cr_assert_eq(sc_settle_work_generate(sc_workload_graph(w),
					     sc_workload_gen, w, c->steps,
					     flags, &work),
		     0, "%s: %s", name, sc_errmsg());
	cr_assert_eq(sc_workload_count(w), c->steps, "%s", name);

	const char *suggested = sc_workload_placement(w, 2);
	const char *places[] = {"single", "chains", "per-node",
				suggested ? suggested : "sharded:2"};
	struct verify_ctx v = {.w = w, .n = c->steps};
	for (size_t pi = 0; pi < sizeof(places) / sizeof(places[0]); pi++) {
		struct sc_placement *p = NULL;
		cr_assert_eq(
		    sc_placement_parse(sc_workload_graph(w), places[pi], 3, &p),
		    0, "%s %s: %s", name, places[pi], sc_errmsg());
		struct sc_settle_opts so = {.mode = SC_SETTLE_SIM,
					    .seed = 11 + pi,
					    .units = 2,
					    .verify = verify_reference,
					    .verify_ctx = &v};
		struct sc_settle_result r;
		cr_assert_eq(sc_settle_run(work, p, &so, &r), 0, "%s %s: %s",
			     name, places[pi], r.why);
		cr_assert(r.ok, "%s %s: %s\n%s", name, places[pi], r.why,
			  r.replay);
		sc_settle_result_fini(&r);
		sc_placement_destroy(p);
	}
	if (sc_workload_def(w)->verify)
		cr_assert_gt(v.checked, 0, "%s: its reference never checked",
			     name);
	sc_settle_work_destroy(work);
	sc_workload_destroy(w);
}

Test(builtin, every_builtin_settles_over_placements)
{
	const char *names[64];
	size_t n = sc_builtin_workload_names(names, 64);

	cr_assert_gt(n, 0);
	for (size_t i = 0; i < n; i++)
		settle_builtin(names[i]);
}

Test(builtin, every_nexmark_query_is_a_builtin)
{
	const char *const *q;
	size_t n = sc_nexmark_query_names(&q);

	for (size_t i = 0; i < n; i++) {
		char name[64];
		(void)snprintf(name, sizeof(name), "nexmark:%s", q[i]);
		const struct sc_workload_def *def = sc_builtin_workload(name);
		cr_assert_not_null(def, "%s is not a built-in", name);
		cr_assert_str_eq(def->name, name);
	}
	cr_assert_null(sc_builtin_workload("nexmark:q24"));
	cr_assert_null(sc_builtin_workload("nexmark"));
	cr_assert_null(sc_builtin_workload(NULL));
}

/* Where each workload's input ends, as its arguments (or the events
 * hint) say: submissions, boundaries included, before SC_EEMPTY. */
struct end_case {
	const char *name;
	const char *kv[2];
	uint64_t events; /* the environment's hint */
	size_t submissions;
	uint64_t rows; /* rows in all the batches; 0: not counted */
};

static const struct end_case ends[] = {
    {"grid", {"edits=40", "batch=16"}, 0, 3, 0}, /* 16 + 16 + 8 edits */
    {"grid", {NULL, NULL}, 300, 2, 0},		 /* 256 + 44 */
    {"random", {"steps=5", NULL}, 0, 5, 0},
    {"random-ticks", {"steps=8", NULL}, 0, 8 + 2, 0},  /* a tick of 4 */
    {"nexmark:q0", {"events=2500", NULL}, 0, 3, 2300}, /* 46 bids in 50 */
    {"nexmark:q1", {NULL, NULL}, 300, 1, 276},
    {"nexmark:q2", {"events=2500", "release_texts=true"}, 0, 3, 0},
};

Test(builtin, input_ends_where_the_arguments_say)
{
	for (size_t i = 0; i < sizeof(ends) / sizeof(ends[0]); i++) {
		const struct end_case *e = &ends[i];
		struct sc_workload_arg a[2];
		char buf[2][64];
		struct sc_workload_env env = {
		    .seed = 3, .events = e->events, .args = a};
		struct sc_workload *w = NULL;
		struct sc_settle_step s;
		uint64_t rows = 0;
		int rc;
		for (size_t k = 0; k < 2 && e->kv[k]; k++)
			cr_assert_eq(sc_workload_parse_arg(e->kv[k], buf[k], 64,
							   &a[env.nargs++]),
				     0);
		cr_assert_eq(
		    sc_workload_create(sc_builtin_workload(e->name), &env, &w),
		    0, "%s: %s", e->name, sc_errmsg());
		while ((rc = sc_workload_next(w, &s)) == 0) {
			rows += s.batch ? sc_batch_count(s.batch) : 0;
			sc_batch_release(s.batch);
		}
		cr_assert_eq(rc, SC_EEMPTY, "%s: %s", e->name, sc_errmsg());
		cr_assert_eq(sc_workload_count(w), e->submissions,
			     "case %zu %s: %zu", i, e->name,
			     sc_workload_count(w));
		if (e->rows)
			cr_assert_eq(rows, e->rows, "%s: %llu rows", e->name,
				     (unsigned long long)rows);
		cr_assert_eq(sc_workload_next(w, &s), SC_EEMPTY, "%s: again",
			     e->name);
		sc_workload_destroy(w);
	}
}

/* An argument a workload does not take, and one out of range, are refused
 * naming the key. */
Test(builtin, bad_argument_is_refused_naming_it)
{
	const char *names[64];
	size_t n = sc_builtin_workload_names(names, 64);

	for (size_t i = 0; i < n; i++) {
		struct sc_workload *w = NULL;
		cr_assert_eq(open_builtin(names[i], "no_such_key=1", 1, &w),
			     SC_EINVAL, "%s", names[i]);
		cr_assert_null(w);
		cr_assert(strstr(sc_errmsg(), "no_such_key"), "%s: %s",
			  names[i], sc_errmsg());
	}
	struct sc_workload *w = NULL;
	cr_assert_eq(open_builtin("grid", "rows=0", 1, &w), SC_EINVAL);
	cr_assert(strstr(sc_errmsg(), "rows=0"), "%s", sc_errmsg());
	cr_assert_eq(open_builtin("nexmark:q4", "stream=maybe", 1, &w),
		     SC_EINVAL);
	cr_assert(strstr(sc_errmsg(), "stream=maybe"), "%s", sc_errmsg());
}

/* The Nexmark queries suggest their measured placement for 2 workers and
 * leave one worker to the host. */
Test(builtin, nexmark_suggests_its_placement_for_two_workers)
{
	struct sc_workload *w = NULL;

	cr_assert_eq(open_builtin("nexmark:q4", NULL, 1, &w), 0);
	cr_assert_str_eq(sc_workload_placement(w, 2), "sharded:2");
	cr_assert_null(sc_workload_placement(w, 1));
	sc_workload_destroy(w);
	cr_assert_eq(open_builtin("grid", NULL, 1, &w), 0);
	cr_assert_null(sc_workload_placement(w, 2));
	sc_workload_destroy(w);
}

/* Whether nexmark:q4's output is a stream (keeps no integral), created
 * under the host's promises `flags` and the argument kv (or none). */
static bool
nexmark_output_is_stream(uint32_t flags, const char *kv)
{
	char buf[64];
	struct sc_workload_arg arg;
	struct sc_workload_env env = {.seed = 1, .flags = flags};
	struct sc_workload *w = NULL;
	struct sc_node_info ni = {0};
	struct sc_graph *g;
	bool stream = false;

	if (kv) {
		cr_assert_eq(sc_workload_parse_arg(kv, buf, sizeof(buf), &arg),
			     0);
		env.args = &arg;
		env.nargs = 1;
	}
	cr_assert_eq(
	    sc_workload_create(sc_builtin_workload("nexmark:q4"), &env, &w), 0,
	    "%s", sc_errmsg());
	g = sc_workload_graph(w);
	for (size_t i = 0; i < sc_graph_node_count(g); i++) {
		cr_assert_eq(sc_graph_node_info(g, (int)i, &ni), 0);
		if (ni.kind == SC_NODE_OUTPUT)
			stream = ni.stream;
	}
	sc_workload_destroy(w);
	return stream;
}

/* nexmark:Q's output follows the host's STREAM promise by default, and an
 * explicit stream argument wins over it either way; an environment flag
 * the library does not know is refused. */
Test(builtin, nexmark_output_follows_the_hosts_stream_promise)
{
	struct sc_workload_env env = {.seed = 1, .flags = 0x80};
	struct sc_workload *w = NULL;

	cr_assert_not(nexmark_output_is_stream(0, NULL));
	cr_assert_not(nexmark_output_is_stream(SC_WORKLOAD_ENV_IN_ORDER, NULL));
	cr_assert(nexmark_output_is_stream(
	    SC_WORKLOAD_ENV_IN_ORDER | SC_WORKLOAD_ENV_STREAM, NULL));
	cr_assert_not(
	    nexmark_output_is_stream(SC_WORKLOAD_ENV_STREAM, "stream=false"));
	cr_assert(nexmark_output_is_stream(0, "stream=true"));
	cr_assert_eq(
	    sc_workload_create(sc_builtin_workload("nexmark:q4"), &env, &w),
	    SC_EINVAL);
	cr_assert_null(w);
	cr_assert(strstr(sc_errmsg(), "unknown flags 0x80"), "%s", sc_errmsg());
}

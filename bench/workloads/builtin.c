/*
 * builtin.c - the built-in workloads' definitions (builtin.h): a table of
 * names and the definitions that adapt each workload of bench/workloads/
 * to the workload interface.
 *
 * Design. Each adapter is a thin layer over the workload's own generator:
 * create reads the arguments and builds the workload, next hands out what
 * the generator makes and counts it against the end the arguments set.
 * The Nexmark queries share one set of callbacks; their definitions differ
 * only by name and by the create that names the query.
 */
#include "bench/workloads/builtin.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "bench/workloads/grid.h"
#include "bench/workloads/nexmark.h"
#include "bench/workloads/nexmark_queries.h"
#include "bench/workloads/random.h"
#include "operators/error.h"
#include "operators/symbol.h"

/* --- grid ----------------------------------------------------------------- */

struct bw_grid {
	struct sc_grid *gr;
	struct sc_grid_nodes n;
	uint64_t batch; /* cell edits per submission */
	uint64_t edits; /* edits in all; 0: no end */
	uint64_t made;	/* edits handed out */
};

static int
bw_grid_create(struct sc_workload_env *env, void **self)
{
	uint64_t rows, cols, batch, edits;
	int rc;

	if ((rc = sc_workload_arg_u64(env, "rows", 256, 1, 1 << 24, &rows)) ||
	    (rc = sc_workload_arg_u64(env, "cols", 256, 1, 1 << 24, &cols)) ||
	    (rc = sc_workload_arg_u64(env, "batch", 256, 1, 1 << 24, &batch)) ||
	    (rc = sc_workload_arg_u64(env, "edits", env->events, 0,
				      UINT64_MAX / 2, &edits)))
		return rc;
	if (rows * cols > (1ull << 28))
		return sc_errorf(SC_EINVAL,
				 "grid: rows x cols = %" PRIu64
				 " cells, more than 2^28",
				 rows * cols);
	struct bw_grid *w = calloc(1, sizeof(*w));
	if (!w)
		return sc_errorf(SC_ENOMEM, "grid: the instance");
	struct sc_grid_opts o = {
	    .rows = (int64_t)rows, .cols = (int64_t)cols, .seed = env->seed};
	if ((rc = sc_grid_create(&o, &w->gr)) != 0) {
		free(w);
		return rc;
	}
	sc_grid_nodes(w->gr, &w->n);
	w->batch = batch;
	w->edits = edits;
	*self = w;
	return 0;
}

static void
bw_grid_destroy(void *self)
{
	struct bw_grid *w = self;

	(void)sc_grid_destroy(w->gr);
	free(w);
}

static struct sc_graph *
bw_grid_graph(void *self)
{
	return sc_grid_graph(((struct bw_grid *)self)->gr);
}

static int
bw_grid_next(void *ctx, size_t i, struct sc_settle_step *out)
{
	struct bw_grid *w = ctx;
	uint64_t n = w->batch;
	int rc;

	(void)i; /* the grid's batches come in sequence */
	if (w->edits) {
		if (w->made >= w->edits)
			return SC_EEMPTY;
		if (w->edits - w->made < n)
			n = w->edits - w->made;
	}
	if ((rc = sc_grid_next(w->gr, (size_t)n, &out->batch)) != 0)
		return rc;
	out->input = w->n.cells;
	w->made += n;
	return 0;
}

/* The grid's reference is the host view after every edit made so far:
 * it can tell only for the integral after all of them. */
static int
bw_grid_verify(void *self, int output, size_t n,
	       const struct sc_batch *integral)
{
	struct bw_grid *w = self;

	if ((uint64_t)n != sc_grid_seq(w->gr))
		return sc_errorf(SC_ENOENT,
				 "grid: a reference after %zu submissions "
				 "only (asked after %zu)",
				 (size_t)sc_grid_seq(w->gr), n);
	int rc = sc_grid_verify(w->gr, output, integral);
	return rc == SC_ESTATE ? SC_ECALLBACK : rc;
}

static const struct sc_workload_def grid_def = {
    .version = SC_WORKLOAD_VERSION,
    .name = "grid",
    .about = "cell edits -> sums per row and column -> a grid and its row "
	     "totals (args rows, cols, batch, edits)",
    .create = bw_grid_create,
    .destroy = bw_grid_destroy,
    .graph = bw_grid_graph,
    .next = bw_grid_next,
    .verify = bw_grid_verify,
};

/* --- random circuits ------------------------------------------------------
 */

struct bw_random {
	struct sc_randc *rc;
	uint64_t steps; /* deltas in all; 0: no end */
	uint64_t tick;	/* tick workload: deltas per host tick */
	uint64_t made;	/* deltas handed out */
	uint64_t since; /* deltas since the last boundary */
};

static int
bw_random_make(struct sc_workload_env *env, bool ticks, void **self)
{
	struct bw_random *w = calloc(1, sizeof(*w));
	int rc;

	if (!w)
		return sc_errorf(SC_ENOMEM, "random: the instance");
	if ((rc = sc_workload_arg_u64(env, "steps", 1000, 0, UINT64_MAX / 2,
				      &w->steps)) ||
	    (ticks && (rc = sc_workload_arg_u64(env, "tick", 4, 1, 1 << 20,
						&w->tick))) ||
	    (rc = ticks ? sc_randc_create_ticks(env->seed, &w->rc)
			: sc_randc_create(env->seed, &w->rc))) {
		free(w);
		return rc;
	}
	*self = w;
	return 0;
}

static int
bw_random_create(struct sc_workload_env *env, void **self)
{
	return bw_random_make(env, false, self);
}

static int
bw_random_ticks_create(struct sc_workload_env *env, void **self)
{
	return bw_random_make(env, true, self);
}

static void
bw_random_destroy(void *self)
{
	struct bw_random *w = self;

	(void)sc_randc_destroy(w->rc);
	free(w);
}

static struct sc_graph *
bw_random_graph(void *self)
{
	return sc_randc_graph(((struct bw_random *)self)->rc);
}

static int
bw_random_next(void *ctx, size_t i, struct sc_settle_step *out)
{
	struct bw_random *w = ctx;

	(void)i; /* the deltas come in sequence */
	if (w->tick && w->since == w->tick) {
		w->since = 0;
		out->input = SC_SETTLE_TICK;
		out->batch = NULL;
		return 0;
	}
	if (w->steps && w->made >= w->steps)
		return SC_EEMPTY;
	int rc = sc_randc_next(w->rc, &out->input, &out->batch);
	if (rc)
		return rc;
	w->made++;
	w->since++;
	return 0;
}

static const struct sc_workload_def random_def = {
    .version = SC_WORKLOAD_VERSION,
    .name = "random",
    .about = "a seeded random circuit of Z-set operators fed small deltas "
	     "(arg steps)",
    .create = bw_random_create,
    .destroy = bw_random_destroy,
    .graph = bw_random_graph,
    .next = bw_random_next,
};

static const struct sc_workload_def random_ticks_def = {
    .version = SC_WORKLOAD_VERSION,
    .flags = SC_WORKLOAD_TICKS,
    .name = "random-ticks",
    .about = "a seeded random circuit with per-tick operators and loops "
	     "through a delay, run in host ticks (args steps, tick)",
    .create = bw_random_ticks_create,
    .destroy = bw_random_destroy,
    .graph = bw_random_graph,
    .next = bw_random_next,
};

/* --- Nexmark -------------------------------------------------------------- */

/* The standard suite's watermark delay on date_time (ms), the lateness
 * `subcirc run --workload nexmark` declares by default. */
#define BW_NX_STANDARD_LATENESS_MS 4000

struct bw_nexmark {
	struct sc_symtab *symbols;
	struct sc_nexmark *nx;
	struct sc_nexmark_query *q;
	uint64_t batch;	 /* events per chunk */
	uint64_t events; /* events in all; 0: no end */
	bool release;	 /* release_texts: the host feeds in order */
	uint64_t chunks; /* made: q12's processing time, chunk i at i s */
	struct sc_batch *ready[SC_NEXMARK_KINDS]; /* the chunk's, not yet out */
};

/* The generator's and the query's options from the arguments. */
static int
bw_nx_args(struct sc_workload_env *env, struct bw_nexmark *w,
	   struct sc_nexmark_opts *no, struct sc_nexmark_query_opts *qo)
{
	uint64_t pool, disorder, late;
	bool stream, admit, none;
	int rc;

	sc_nexmark_opts_default(no);
	sc_nexmark_query_opts_default(qo);
	if ((rc = sc_workload_arg_u64(env, "batch", 1000, 1, 1 << 20,
				      &w->batch)) ||
	    (rc = sc_workload_arg_u64(env, "events", env->events, 0,
				      UINT64_MAX / 2, &w->events)) ||
	    (rc =
		 sc_workload_arg_u64(env, "string_pool", 0, 0, 65536, &pool)) ||
	    (rc = sc_workload_arg_u64(env, "disorder", 0, 0, 1000000000000ull,
				      &disorder)) ||
	    (rc = sc_workload_arg_u64(env, "lateness",
				      disorder > BW_NX_STANDARD_LATENESS_MS
					  ? disorder
					  : BW_NX_STANDARD_LATENESS_MS,
				      0, 1000000000000ull, &late)) ||
	    (rc = sc_workload_arg_bool(env, "no_lateness", false, &none)) ||
	    (rc = sc_workload_arg_bool(env, "admit_late", false, &admit)) ||
	    (rc = sc_workload_arg_bool(
		 env, "stream", (env->flags & SC_WORKLOAD_ENV_STREAM) != 0,
		 &stream)) ||
	    (rc = sc_workload_arg_bool(
		 env, "release_texts",
		 (env->flags & SC_WORKLOAD_ENV_IN_ORDER) != 0, &w->release)))
		return rc;
	if (admit && none)
		return sc_errorf(SC_EINVAL,
				 "admit_late=true with no_lateness=true: "
				 "there is no lateness to admit past");
	no->seed = env->seed;
	no->string_pool = (uint32_t)pool;
	no->disorder_ms = disorder;
	qo->lateness_ms = none ? -1 : (int64_t)late;
	qo->flags = (stream ? SC_NEXMARK_QUERY_STREAM : 0) |
		    (admit ? SC_NEXMARK_QUERY_ADMIT : 0);
	return 0;
}

static void
bw_nx_destroy(void *self)
{
	struct bw_nexmark *w = self;

	for (int k = 0; k < SC_NEXMARK_KINDS; k++)
		sc_batch_release(w->ready[k]);
	(void)sc_nexmark_query_destroy(w->q);
	sc_nexmark_destroy(w->nx);
	sc_symtab_destroy(w->symbols);
	free(w);
}

/* An instance of query `query`. */
static int
bw_nx_create(struct sc_workload_env *env, const char *query, void **self)
{
	struct bw_nexmark *w = calloc(1, sizeof(*w));
	struct sc_nexmark_opts no;
	struct sc_nexmark_query_opts qo;
	int rc;

	if (!w)
		return sc_errorf(SC_ENOMEM, "nexmark: the instance");
	if ((rc = bw_nx_args(env, w, &no, &qo)) ||
	    (rc = sc_symtab_create(&w->symbols)) ||
	    (rc = sc_nexmark_create(&no, w->symbols, &w->nx)) ||
	    (rc =
		 sc_nexmark_query_create_opts(query, w->symbols, &qo, &w->q))) {
		bw_nx_destroy(w);
		return rc;
	}
	*self = w;
	return 0;
}

static struct sc_graph *
bw_nx_graph(void *self)
{
	return sc_nexmark_query_graph(((struct bw_nexmark *)self)->q);
}

/*
 * The chunk's batches one by one, the streams the query does not read
 * dropped; then the next chunk of at most `batch` events, up to `events`
 * in all.
 *
 * The generator holds a reference on every fresh text it makes, and a
 * row's text must be live when the row is fed (operators/symbol.h), so
 * unless the host promises to feed in order (SC_WORKLOAD_ENV_IN_ORDER)
 * those references are held until the instance is destroyed: a host may
 * take every submission before it feeds any (the settle check does).
 * With release_texts (by default under that promise, as `subcirc run`
 * and place give it), the texts of a chunk go when the next chunk is
 * made, as the direct Nexmark run does: what keeps a row then keeps its
 * texts, and memory does not grow with the events.
 */
static int
bw_nx_next(void *ctx, size_t i, struct sc_settle_step *out)
{
	struct bw_nexmark *w = ctx;
	int rc;

	(void)i; /* the chunks come in sequence */
	for (;;) {
		for (int k = 0; k < SC_NEXMARK_KINDS; k++) {
			int in = sc_nexmark_query_input(w->q, k);
			if (!w->ready[k])
				continue;
			if (in < 0) {
				sc_batch_release(w->ready[k]);
				w->ready[k] = NULL;
				continue;
			}
			out->input = in;
			out->batch = w->ready[k];
			w->ready[k] = NULL;
			return 0;
		}
		uint64_t made = sc_nexmark_count(w->nx);
		uint64_t n = w->batch;
		if (w->events && made >= w->events)
			return SC_EEMPTY;
		if (w->events && w->events - made < n)
			n = w->events - made;
		if (w->release)
			sc_nexmark_release_texts(w->nx);
		if ((rc = sc_nexmark_batches(w->nx, (size_t)n, w->ready)) !=
			0 ||
		    (rc = sc_nexmark_query_stamp(
			 w->q, w->ready, (int64_t)w->chunks++ * 1000)) != 0)
			return rc;
	}
}

/* The placement measured best for the query on 2 workers, for 2 or more;
 * the host's default on one. */
static const char *
bw_nx_placement(void *self, uint32_t workers)
{
	struct bw_nexmark *w = self;

	return workers >= 2 ? sc_nexmark_query_placement(w->q) : NULL;
}

/*
 * One definition per query, named "nexmark:Q". The environment does not
 * carry the definition, so each query has its own create that names it;
 * tests/workloads/test_builtin.c checks that every query of
 * sc_nexmark_query_names has its definition here.
 */
#define BW_NX_ABOUT                                                            \
	"a Nexmark query fed by the standard generator (args batch, "          \
	"events, disorder, lateness, no_lateness, admit_late, string_pool, "   \
	"stream, release_texts)"

#define BW_NX_DEF(q)                                                           \
	static int bw_nx_create_##q(struct sc_workload_env *env, void **self)  \
	{                                                                      \
		return bw_nx_create(env, #q, self);                            \
	}                                                                      \
	static const struct sc_workload_def nx_##q##_def = {                   \
	    .version = SC_WORKLOAD_VERSION,                                    \
	    .name = "nexmark:" #q,                                             \
	    .about = BW_NX_ABOUT,                                              \
	    .create = bw_nx_create_##q,                                        \
	    .destroy = bw_nx_destroy,                                          \
	    .graph = bw_nx_graph,                                              \
	    .next = bw_nx_next,                                                \
	    .placement = bw_nx_placement,                                      \
	}

BW_NX_DEF(q0);
BW_NX_DEF(q1);
BW_NX_DEF(q2);
BW_NX_DEF(q3);
BW_NX_DEF(q4);
BW_NX_DEF(q5);
BW_NX_DEF(q6);
BW_NX_DEF(q7);
BW_NX_DEF(q8);
BW_NX_DEF(q9);
BW_NX_DEF(q10);
BW_NX_DEF(q11);
BW_NX_DEF(q12);
BW_NX_DEF(q13);
BW_NX_DEF(q14);
BW_NX_DEF(q15);
BW_NX_DEF(q16);
BW_NX_DEF(q17);
BW_NX_DEF(q18);
BW_NX_DEF(q19);
BW_NX_DEF(q20);
BW_NX_DEF(q21);
BW_NX_DEF(q22);
BW_NX_DEF(q23);

/* --- the table ------------------------------------------------------------ */

struct builtin {
	const char *name;
	const struct sc_workload_def *def;
};

static const struct builtin builtins[] = {
    {"grid", &grid_def},
    {"random", &random_def},
    {"random-ticks", &random_ticks_def},
    {"nexmark:q0", &nx_q0_def},
    {"nexmark:q1", &nx_q1_def},
    {"nexmark:q2", &nx_q2_def},
    {"nexmark:q3", &nx_q3_def},
    {"nexmark:q4", &nx_q4_def},
    {"nexmark:q5", &nx_q5_def},
    {"nexmark:q6", &nx_q6_def},
    {"nexmark:q7", &nx_q7_def},
    {"nexmark:q8", &nx_q8_def},
    {"nexmark:q9", &nx_q9_def},
    {"nexmark:q10", &nx_q10_def},
    {"nexmark:q11", &nx_q11_def},
    {"nexmark:q12", &nx_q12_def},
    {"nexmark:q13", &nx_q13_def},
    {"nexmark:q14", &nx_q14_def},
    {"nexmark:q15", &nx_q15_def},
    {"nexmark:q16", &nx_q16_def},
    {"nexmark:q17", &nx_q17_def},
    {"nexmark:q18", &nx_q18_def},
    {"nexmark:q19", &nx_q19_def},
    {"nexmark:q20", &nx_q20_def},
    {"nexmark:q21", &nx_q21_def},
    {"nexmark:q22", &nx_q22_def},
    {"nexmark:q23", &nx_q23_def},
    {NULL, NULL},
};

const struct sc_workload_def *
sc_builtin_workload(const char *name)
{
	if (!name)
		return NULL;
	for (size_t i = 0; builtins[i].name; i++)
		if (!strcmp(builtins[i].name, name))
			return builtins[i].def;
	return NULL;
}

size_t
sc_builtin_workload_names(const char **names, size_t max)
{
	size_t n = 0;

	for (; builtins[n].name; n++)
		if (n < max)
			names[n] = builtins[n].name;
	return n;
}

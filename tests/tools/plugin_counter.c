/*
 * plugin_counter.c - a workload plugin for the CLI's tests of `subcirc run
 * --workload ./PATH.so` (tests/tools/workload.cmake): a shared object
 * that exports sc_workload_entry, as a user's would, and is built against
 * the tree's headers only (the CLI's executable exports the library).
 *
 * Submission i is `rows` keys (i * 7 + j) mod 97, j = 0 .. rows-1, each of
 * weight 1, into input "keys"; the outputs are "all_keys" (the keys with
 * their counts) and "distinct_keys". The input ends after `steps`
 * submissions (0: never). Its reference (verify) knows all_keys after n
 * submissions; with wrong=true it forgets the last one, so a check must
 * fail naming the output. fail_at=N makes submission N an error
 * (SC_ECALLBACK), for the run's error path.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "operators/batch.h"
#include "operators/error.h"
#include "operators/graph.h"
#include "operators/schema.h"
#include "units/workload.h"

#define PC_MOD 97

struct pc {
	struct sc_graph *g;
	int in, all;
	uint64_t rows, steps, fail_at;
	bool wrong;
	size_t next;
};

static void
pc_destroy(void *self)
{
	struct pc *w = self;

	(void)sc_graph_destroy(w->g);
	free(w);
}

static int
pc_build(struct pc *w, bool stream)
{
	enum sc_type t = SC_TYPE_I64;
	struct sc_schema s;
	int d, rc;

	if ((rc = sc_schema_init(&s, 1, &t, NULL)) != 0 ||
	    (rc = sc_graph_create(&w->g)) != 0)
		return rc;
	if ((w->in = sc_graph_input(w->g, "keys", &s)) < 0)
		return w->in;
	w->all = stream ? sc_graph_output_stream(w->g, "all_keys", w->in)
			: sc_graph_output(w->g, "all_keys", w->in);
	if (w->all < 0)
		return w->all;
	if ((d = sc_graph_distinct(w->g, w->in)) < 0)
		return d;
	rc = stream ? sc_graph_output_stream(w->g, "distinct_keys", d)
		    : sc_graph_output(w->g, "distinct_keys", d);
	return rc < 0 ? rc : 0;
}

static int
pc_create(struct sc_workload_env *env, void **self)
{
	struct pc *w = calloc(1, sizeof(*w));
	int rc;

	if (!w)
		return sc_errorf(SC_ENOMEM, "counter: the instance");
	if ((rc = sc_workload_arg_u64(env, "rows", 10, 1, 100000, &w->rows)) ||
	    (rc = sc_workload_arg_u64(env, "steps", 100, 0, UINT64_MAX,
				      &w->steps)) ||
	    (rc = sc_workload_arg_u64(env, "fail_at", 0, 0, UINT64_MAX,
				      &w->fail_at)) ||
	    (rc = sc_workload_arg_bool(env, "wrong", false, &w->wrong)) ||
	    (rc = pc_build(w, (env->flags & SC_WORKLOAD_ENV_STREAM) != 0))) {
		pc_destroy(w);
		return rc;
	}
	*self = w;
	return 0;
}

static struct sc_graph *
pc_graph(void *self)
{
	return ((struct pc *)self)->g;
}

/* Submissions [from, to) into one batch. */
static int
pc_batch(const struct pc *w, size_t from, size_t to, struct sc_batch **out)
{
	struct sc_batch_builder b;
	int rc = sc_batch_builder_init(&b, 1);

	for (size_t i = from; i < to && !rc; i++)
		for (uint64_t j = 0; j < w->rows && !rc; j++) {
			uint64_t key = sc_enc_i64(
			    (int64_t)(((uint64_t)i * 7 + j) % PC_MOD));
			rc = sc_batch_builder_push(&b, &key, 1, 1);
		}
	if (!rc)
		rc = sc_batch_builder_finish(&b, out);
	sc_batch_builder_fini(&b);
	return rc;
}

static int
pc_next(void *ctx, size_t i, struct sc_settle_step *out)
{
	struct pc *w = ctx;
	int rc;

	(void)i;
	if (w->steps && w->next >= w->steps)
		return SC_EEMPTY;
	if (w->fail_at && w->next == w->fail_at)
		return sc_errorf(SC_ECALLBACK, "counter: fail_at=%zu reached",
				 w->next);
	if ((rc = pc_batch(w, w->next, w->next + 1, &out->batch)) != 0)
		return rc;
	out->input = w->in;
	w->next++;
	return 0;
}

static int
pc_verify(void *self, int output, size_t n, const struct sc_batch *integral)
{
	struct pc *w = self;
	struct sc_batch *want = NULL;
	int rc;

	if (output != w->all)
		return 0; /* distinct_keys: the single circuit's check */
	if ((rc = pc_batch(w, 0, w->wrong && n ? n - 1 : n, &want)) != 0)
		return rc;
	rc = sc_batch_equal(integral, want)
		 ? 0
		 : sc_errorf(SC_ECALLBACK,
			     "counter: all_keys after %zu submissions is "
			     "not their sum (%zu rows, want %zu)",
			     n, sc_batch_count(integral), sc_batch_count(want));
	sc_batch_release(want);
	return rc;
}

static const struct sc_workload_def pc_def = {
    .version = SC_WORKLOAD_VERSION,
    .name = "counter",
    .about = "keys mod 97 with their counts and distinct (args rows, steps, "
	     "fail_at, wrong)",
    .create = pc_create,
    .destroy = pc_destroy,
    .graph = pc_graph,
    .next = pc_next,
    .verify = pc_verify,
};

const struct sc_workload_def *sc_workload_entry(void);

const struct sc_workload_def *
sc_workload_entry(void)
{
	return &pc_def;
}

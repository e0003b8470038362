/*
 * plugin_tiny.c - a workload plugin as a user writes one, against the
 * public headers only (units/workload.h), for the CLI's tests: built as a
 * MODULE library, loaded by `subcirc stress --workload PATH`, its
 * references to the library bound to the copy the executable exports.
 *
 * The circuit: input "in" of (key, value) rows -> map to (key mod 8,
 * value mod 16) -> distinct -> output "out". Each submission inserts
 * `rows` rows drawn from the seed, and every third one also retracts a
 * row an earlier one inserted, so distinct sees weights go to zero.
 *
 * Its reference (verify) recomputes the distinct set from every row
 * submitted so far. With the argument wrong=true the reference disagrees
 * on purpose, always: a host must then fail the case (a test that the
 * host's check can fail).
 *
 * Arguments: rows (inserted per submission, 1..64, default 4), steps
 * (submissions in all, default 0: never ends), wrong (false).
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "operators/batch.h"
#include "operators/error.h"
#include "operators/graph.h"
#include "operators/schema.h"
#include "units/workload.h"

/* One row submitted and its weight (+1 inserted, -1 retracted). */
struct tiny_rec {
	uint64_t key, value;
	int64_t weight;
	bool retracted; /* an inserted row a later one took back */
};

struct tiny {
	struct sc_graph *g;
	int in, out;
	uint64_t rng;
	uint64_t rows, steps;
	bool wrong;
	struct tiny_rec *recs;
	size_t nrecs, cap;
	size_t *ends; /* ends[i]: records after submission i */
	size_t made;
};

static uint64_t
tiny_next_u64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static int
tiny_map(void *ctx, const uint64_t *row, uint64_t *out)
{
	(void)ctx;
	out[0] = row[0] % 8;
	out[1] = row[1] % 16;
	return 0;
}

static void
tiny_destroy(void *self)
{
	struct tiny *t = self;

	if (!t)
		return;
	(void)sc_graph_destroy(t->g);
	free(t->recs);
	free(t->ends);
	free(t);
}

static int
tiny_graph_build(struct tiny *t)
{
	static const enum sc_type types[2] = {SC_TYPE_U64, SC_TYPE_U64};
	struct sc_schema s;
	int rc, m, d;

	if ((rc = sc_schema_init(&s, 2, types, NULL)) != 0 ||
	    (rc = sc_graph_create(&t->g)) != 0)
		return rc;
	if ((t->in = sc_graph_input(t->g, "in", &s)) < 0)
		return t->in;
	if ((m = sc_graph_map(t->g, t->in, &s, tiny_map, NULL)) < 0)
		return m;
	if ((d = sc_graph_distinct(t->g, m)) < 0)
		return d;
	if ((t->out = sc_graph_output(t->g, "out", d)) < 0)
		return t->out;
	return 0;
}

static int
tiny_create(struct sc_workload_env *env, void **self)
{
	struct tiny *t = calloc(1, sizeof(*t));
	int rc;

	if (!t)
		return sc_errorf(SC_ENOMEM, "plugin_tiny: its state");
	t->rng = env->seed ^ 0x7417ULL;
	if ((rc = sc_workload_arg_u64(env, "rows", 4, 1, 64, &t->rows)) ||
	    (rc =
		 sc_workload_arg_u64(env, "steps", 0, 0, 1000000, &t->steps)) ||
	    (rc = sc_workload_arg_bool(env, "wrong", false, &t->wrong)) ||
	    (rc = tiny_graph_build(t))) {
		tiny_destroy(t);
		return rc;
	}
	*self = t;
	return 0;
}

static struct sc_graph *
tiny_graph(void *self)
{
	return ((struct tiny *)self)->g;
}

static int
tiny_push(struct tiny *t, uint64_t key, uint64_t value, int64_t weight)
{
	if (t->nrecs == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 64;
		struct tiny_rec *r = realloc(t->recs, cap * sizeof(*r));

		if (!r)
			return sc_errorf(SC_ENOMEM, "plugin_tiny: %zu rows",
					 cap);
		t->recs = r;
		t->cap = cap;
	}
	t->recs[t->nrecs++] =
	    (struct tiny_rec){.key = key, .value = value, .weight = weight};
	return 0;
}

/* This submission's records, from record `from` on, as a batch. */
static int
tiny_batch(const struct tiny *t, size_t from, struct sc_batch **out)
{
	size_t n = t->nrecs - from, room = n ? n : 1; /* rows >= 1 */
	uint64_t *rows = malloc(2 * room * sizeof(*rows));
	int64_t *w = malloc(room * sizeof(*w));
	int rc = rows && w ? 0 : SC_ENOMEM;

	for (size_t i = 0; i < n && !rc; i++) {
		rows[2 * i] = t->recs[from + i].key;
		rows[2 * i + 1] = t->recs[from + i].value;
		w[i] = t->recs[from + i].weight;
	}
	if (!rc)
		rc = sc_batch_from_records(2, rows, w, n, out);
	free(rows);
	free(w);
	return rc;
}

static int
tiny_next(void *self, size_t i, struct sc_settle_step *out)
{
	struct tiny *t = self;
	size_t from = t->nrecs, *ends;
	int rc = 0;

	if (t->steps && i >= t->steps)
		return SC_EEMPTY;
	if (!(ends = realloc(t->ends, (i + 1) * sizeof(*ends))))
		return sc_errorf(SC_ENOMEM, "plugin_tiny: submission %zu", i);
	t->ends = ends;
	for (uint64_t r = 0; r < t->rows && !rc; r++)
		rc = tiny_push(t, tiny_next_u64(&t->rng) % 1000,
			       tiny_next_u64(&t->rng) % 1000, 1);
	/* Every third submission takes back a row an earlier one made. */
	if (!rc && i % 3 == 2 && from > 0) {
		size_t j = (size_t)(tiny_next_u64(&t->rng) % from);

		if (t->recs[j].weight > 0 && !t->recs[j].retracted) {
			t->recs[j].retracted = true;
			rc = tiny_push(t, t->recs[j].key, t->recs[j].value, -1);
		}
	}
	if (!rc)
		rc = tiny_batch(t, from, &out->batch);
	if (rc)
		return rc;
	out->input = t->in;
	t->ends[i] = t->nrecs;
	t->made = i + 1;
	return 0;
}

/* The weight of mapped row (k, v) over the first `end` records. */
static int64_t
tiny_weight(const struct tiny *t, size_t end, uint64_t k, uint64_t v)
{
	int64_t w = 0;

	for (size_t i = 0; i < end; i++)
		if (t->recs[i].key % 8 == k && t->recs[i].value % 16 == v)
			w += t->recs[i].weight;
	return w;
}

static int
tiny_verify(void *self, int output, size_t n, const struct sc_batch *got)
{
	struct tiny *t = self;
	size_t end = n ? t->ends[n - 1] : 0, want = 0;
	bool seen[8][16] = {{false}};

	if (output != t->out || n > t->made)
		return sc_errorf(SC_ENOENT,
				 "plugin_tiny: no reference for "
				 "node %d after %zu submissions",
				 output, n);
	if (t->wrong)
		return sc_errorf(SC_ECALLBACK,
				 "plugin_tiny: wrong=true: the "
				 "reference disagrees on purpose");
	for (size_t i = 0; i < end; i++) {
		uint64_t k = t->recs[i].key % 8, v = t->recs[i].value % 16;

		if (!seen[k][v] && tiny_weight(t, end, k, v) > 0)
			want++;
		seen[k][v] = true;
	}
	for (size_t i = 0; i < sc_batch_count(got); i++) {
		const uint64_t *row = sc_batch_row(got, i);

		if (sc_batch_weight(got, i) != 1 || row[0] >= 8 ||
		    row[1] >= 16 || tiny_weight(t, end, row[0], row[1]) <= 0)
			return sc_errorf(SC_ECALLBACK,
					 "plugin_tiny: row (%llu, %llu) "
					 "weight %lld is not in the distinct "
					 "set",
					 (unsigned long long)row[0],
					 (unsigned long long)row[1],
					 (long long)sc_batch_weight(got, i));
	}
	if (sc_batch_count(got) != want)
		return sc_errorf(SC_ECALLBACK,
				 "plugin_tiny: %zu distinct rows, want %zu",
				 sc_batch_count(got), want);
	return 0;
}

static const struct sc_workload_def tiny_def = {
    .version = SC_WORKLOAD_VERSION,
    .name = "plugin_tiny",
    .about = "(key, value) -> (key mod 8, value mod 16) -> distinct "
	     "(args rows, steps, wrong)",
    .create = tiny_create,
    .destroy = tiny_destroy,
    .graph = tiny_graph,
    .next = tiny_next,
    .verify = tiny_verify,
};

const struct sc_workload_def *sc_workload_entry(void);

const struct sc_workload_def *
sc_workload_entry(void)
{
	return &tiny_def;
}

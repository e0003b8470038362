/*
 * random.c - seeded random circuits (see random.h).
 */
#include "bench/workloads/random.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "operators/aggregate.h"
#include "operators/base.h"
#include "operators/schema.h"
#include "operators/window.h"

#define RANDC_MAX_STREAMS 64 /* inputs + operators + join projections */
#define RANDC_KEYS	  8  /* keys 0..7 */

enum randc_op {
	RC_MAP,
	RC_FILTER,
	RC_SWAP,
	RC_PLUS,
	RC_NEGATE,
	RC_MINUS,
	RC_JOIN,
	RC_ANTIJOIN,
	RC_DISTINCT,
	RC_AGGREGATE,
	RC_FLAT_MAP,
	RC_WINDOW,
	RC_OPS, /* the operators of a circuit for either mode */
	/* tick mode only (sc_randc_create_ticks): per-tick operators */
	RC_DELAY = RC_OPS,
	RC_INTEGRATE,
	RC_DIFFERENTIATE,
	RC_LOOP, /* s = a + delay(s), through a feedback node */
	RC_OPS_TICKS
};

struct sc_randc {
	struct sc_graph *g;		/* owned */
	struct sc_schema schema;	/* (key, value) i64 x 2 */
	int streams[RANDC_MAX_STREAMS]; /* the pool operators read from */
	bool read[RANDC_MAX_STREAMS];	/* read by an operator */
	size_t nstreams;
	int inputs[SC_RANDC_MAX_IO], outputs[SC_RANDC_MAX_IO];
	size_t ninputs, noutputs;
	uint64_t rng; /* splitmix64 state */
	bool ticks;   /* tick mode: per-tick operators drawn too */
};

static uint64_t
randc_below(struct sc_randc *rc, uint64_t n)
{
	return sc_splitmix_next(&rc->rng) % n;
}

/* (k, v) -> ((k + 1) mod 8, v): moves rows between keys. */
static int
randc_map(void *ctx, const uint64_t *row, uint64_t *out)
{
	out[0] = sc_enc_i64((sc_dec_i64(row[0]) + 1) & (RANDC_KEYS - 1));
	out[1] = row[1];
	return 0;
}

/* Keep the rows of even value. */
static int
randc_filter(void *ctx, const uint64_t *row, bool *keep)
{
	*keep = (sc_dec_i64(row[1]) & 1) == 0;
	return 0;
}

/* (k, v) -> (k, v) and, for an odd v, (v mod 8, k) too: a linear node
 * whose output has more rows than its input. */
static int
randc_flat(void *ctx, const uint64_t *row, struct sc_emitter *out)
{
	uint64_t swapped[2] = {
	    sc_enc_i64(sc_dec_i64(row[1]) & (RANDC_KEYS - 1)), row[0]};
	int rc = sc_emit(out, row);

	if (rc || (sc_dec_i64(row[1]) & 1) == 0)
		return rc;
	return sc_emit(out, swapped);
}

/* A pool index, remembered as read. */
static int
randc_pick(struct sc_randc *rc)
{
	size_t i = (size_t)randc_below(rc, rc->nstreams);

	rc->read[i] = true;
	return rc->streams[i];
}

static int
randc_sum(struct sc_graph *g, int from)
{
	struct sc_aggregate_spec sp;

	memset(&sp, 0, sizeof(sp));
	sp.ncols = 2;
	sp.k = 1;
	sp.kind = SC_AGG_SUM;
	sp.col = 1;
	sp.col_type = SC_TYPE_I64;
	return sc_graph_aggregate(g, from, &sp);
}

/* One operator of kind op on streams of the pool; its stream's id. */
static int
randc_op(struct sc_randc *rc, enum randc_op op)
{
	static const uint32_t swap[2] = {1, 0}, key_right[2] = {0, 2};
	struct sc_graph *g = rc->g;
	int a = randc_pick(rc);

	switch (op) {
	case RC_MAP:
		return sc_graph_map(g, a, &rc->schema, randc_map, NULL);
	case RC_FILTER:
		return sc_graph_filter(g, a, randc_filter, NULL);
	case RC_SWAP: /* (v, k): values become keys, still 0..7 mostly */
		return sc_graph_index_by(g, a, swap, 2);
	case RC_PLUS:
		return sc_graph_plus(g, a, randc_pick(rc));
	case RC_NEGATE:
		return sc_graph_negate(g, a);
	case RC_MINUS:
		return sc_graph_minus(g, a, randc_pick(rc));
	case RC_JOIN:
		return sc_graph_index_by(
		    g, sc_graph_join(g, a, randc_pick(rc), 1), key_right, 2);
	case RC_ANTIJOIN:
		return sc_graph_antijoin(g, a, randc_pick(rc), 1);
	case RC_DISTINCT:
		return sc_graph_distinct(g, a);
	case RC_FLAT_MAP:
		return sc_graph_flat_map(g, a, &rc->schema, randc_flat, NULL);
	case RC_WINDOW: /* (k, v, start of v's window of 4 every 2) -> (k,
			   start): two windows per row, keys kept */
		return sc_graph_index_by(g, sc_window_hopping(g, a, 1, 4, 2),
					 key_right, 2);
	case RC_DELAY:
		return sc_graph_delay(g, a);
	case RC_INTEGRATE:
		return sc_graph_integrate(g, a);
	case RC_DIFFERENTIATE:
		return sc_graph_differentiate(g, a);
	case RC_LOOP: {
		int fb = sc_graph_feedback(g, &rc->schema);
		int sum =
		    fb < 0 ? fb : sc_graph_plus(g, a, sc_graph_delay(g, fb));
		int err = sum < 0 ? sum : sc_graph_bind(g, fb, sum);

		return err < 0 ? err : sum;
	}
	default:
		return randc_sum(g, a);
	}
}

static int
randc_build(struct sc_randc *rc, uint64_t seed)
{
	size_t nin = 1 + (size_t)(seed % 3);
	size_t nops = 2 + (size_t)randc_below(rc, 10);
	char name[32];

	for (size_t i = 0; i < nin; i++) {
		int id;

		(void)snprintf(name, sizeof(name), "in%zu", i);
		if ((id = sc_graph_input(rc->g, name, &rc->schema)) < 0)
			return id;
		rc->inputs[rc->ninputs++] = id;
		rc->streams[rc->nstreams++] = id;
	}
	for (size_t i = 0; i < nops; i++) {
		/* the plain draw is below RC_OPS as before: a seed makes
		 * the same circuit */
		int id =
		    randc_op(rc, (enum randc_op)randc_below(
				     rc, rc->ticks ? RC_OPS_TICKS : RC_OPS));

		if (id < 0)
			return id;
		rc->streams[rc->nstreams++] = id;
	}
	/* Every operator's stream that nothing reads is an output, and the
	 * last one always is. */
	for (size_t i = nin; i < rc->nstreams; i++) {
		int id;

		if (rc->read[i] && i + 1 < rc->nstreams)
			continue;
		if (rc->noutputs == SC_RANDC_MAX_IO)
			break;
		(void)snprintf(name, sizeof(name), "out%zu", rc->noutputs);
		if ((id = sc_graph_output(rc->g, name, rc->streams[i])) < 0)
			return id;
		rc->outputs[rc->noutputs++] = id;
	}
	return 0;
}

static int
randc_create(uint64_t seed, bool ticks, struct sc_randc **out)
{
	static const enum sc_type t2[2] = {SC_TYPE_I64, SC_TYPE_I64};
	struct sc_randc *rc;
	int err;

	if (!out)
		return sc_errorf(SC_EINVAL, "sc_randc_create: NULL out");
	rc = calloc(1, sizeof(*rc));
	if (!rc)
		return SC_ENOMEM;
	rc->rng = seed;
	rc->ticks = ticks;
	if ((err = sc_schema_init(&rc->schema, 2, t2, NULL)) != 0 ||
	    (err = sc_graph_create(&rc->g)) != 0)
		goto fail_rc;
	if ((err = randc_build(rc, seed)) != 0)
		goto fail_graph;
	*out = rc;
	return 0;
fail_graph:
	sc_graph_destroy(rc->g);
fail_rc:
	free(rc);
	return err;
}

int
sc_randc_create(uint64_t seed, struct sc_randc **out)
{
	return randc_create(seed, false, out);
}

int
sc_randc_create_ticks(uint64_t seed, struct sc_randc **out)
{
	return randc_create(seed, true, out);
}

int
sc_randc_destroy(struct sc_randc *rc)
{
	int err;

	if (!rc)
		return 0;
	if ((err = sc_graph_destroy(rc->g)) != 0)
		return err;
	free(rc);
	return 0;
}

struct sc_graph *
sc_randc_graph(const struct sc_randc *rc)
{
	return rc->g;
}

size_t
sc_randc_inputs(const struct sc_randc *rc, int *ids, size_t max)
{
	for (size_t i = 0; i < rc->ninputs && i < max; i++)
		ids[i] = rc->inputs[i];
	return rc->ninputs;
}

size_t
sc_randc_outputs(const struct sc_randc *rc, int *ids, size_t max)
{
	for (size_t i = 0; i < rc->noutputs && i < max; i++)
		ids[i] = rc->outputs[i];
	return rc->noutputs;
}

int
sc_randc_next(struct sc_randc *rc, int *input, struct sc_batch **out)
{
	uint64_t rows[4 * 2];
	int64_t w[4];
	size_t n;
	int in, err;

	if (!rc || !input || !out)
		return sc_errorf(SC_EINVAL, "sc_randc_next: NULL argument");
	in = rc->inputs[randc_below(rc, rc->ninputs)];
	n = 1 + (size_t)randc_below(rc, 4);
	for (size_t i = 0; i < n; i++) {
		rows[2 * i] = sc_enc_i64((int64_t)randc_below(rc, RANDC_KEYS));
		rows[2 * i + 1] =
		    sc_enc_i64((int64_t)randc_below(rc, RANDC_KEYS));
		w[i] = randc_below(rc, 3) == 0 ? -1 : 1;
	}
	if ((err = sc_batch_from_records(2, rows, w, n, out)) != 0)
		return err;
	*input = in;
	return 0;
}

int
sc_randc_settle_step(void *ctx, size_t i, struct sc_settle_step *out)
{
	(void)i; /* the deltas come in sequence */
	if (!out)
		return sc_errorf(SC_EINVAL, "sc_randc_settle_step: NULL out");
	return sc_randc_next(ctx, &out->input, &out->batch);
}

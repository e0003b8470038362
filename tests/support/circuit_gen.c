/*
 * circuit_gen.c - seeded random circuits and their reference evaluator
 * (circuit_gen.h): the reference Z-set, the user callbacks, the generator,
 * the from-scratch reference operators and the random deltas.
 */
#include "tests/support/circuit_gen.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "operators/aggregate.h"
#include "operators/batch.h"
#include "operators/graph.h"
#include "operators/schema.h"
#include "operators/topk.h"
#include "operators/window.h"
#include "tests/support/prop.h"

/* --- the reference Z-set: rows and weights, linear search ----------------- */

void
cz_init(struct cz *z, uint32_t ncols)
{
	if (ncols == 0) /* rows have 1..SC_SCHEMA_MAX_COLS columns */
		abort();
	memset(z, 0, sizeof(*z));
	z->ncols = ncols;
}

void
cz_fini(struct cz *z)
{
	free(z->rows);
	free(z->w);
	z->rows = NULL;
	z->w = NULL;
	z->n = z->cap = 0;
}

static void
cz_clear(struct cz *z)
{
	z->n = 0;
}

static bool
cz_row_eq(const uint64_t *a, const uint64_t *b, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		if (a[i] != b[i])
			return false;
	return true;
}

static void
cz_add(struct cz *z, const uint64_t *row, int64_t w)
{
	if (w == 0)
		return;
	for (size_t i = 0; i < z->n; i++)
		if (cz_row_eq(z->rows + i * z->ncols, row, z->ncols)) {
			z->w[i] += w;
			return;
		}
	if (z->n == z->cap) {
		z->cap = z->cap ? 2 * z->cap : 16;
		z->rows =
		    realloc(z->rows, z->cap * z->ncols * sizeof(uint64_t));
		z->w = realloc(z->w, z->cap * sizeof(int64_t));
		if (!z->rows || !z->w)
			abort();
	}
	memcpy(z->rows + z->n * z->ncols, row, z->ncols * sizeof(uint64_t));
	z->w[z->n++] = w;
}

static int64_t
cz_weight(const struct cz *z, const uint64_t *row)
{
	for (size_t i = 0; i < z->n; i++)
		if (cz_row_eq(z->rows + i * z->ncols, row, z->ncols))
			return z->w[i];
	return 0;
}

/* dst += k * src */
static void
cz_add_z(struct cz *dst, const struct cz *src, int64_t k)
{
	for (size_t i = 0; i < src->n; i++)
		cz_add(dst, src->rows + i * src->ncols, k * src->w[i]);
}

void
cz_copy(struct cz *dst, const struct cz *src)
{
	cz_clear(dst);
	dst->ncols = src->ncols;
	cz_add_z(dst, src, 1);
}

static void
cz_add_batch(struct cz *z, const struct sc_batch *b)
{
	for (size_t i = 0; i < sc_batch_count(b); i++)
		cz_add(z, sc_batch_row(b, i), sc_batch_weight(b, i));
}

static size_t
cz_live(const struct cz *z)
{
	size_t n = 0;

	for (size_t i = 0; i < z->n; i++)
		n += z->w[i] != 0;
	return n;
}

bool
cz_equals_batch(const struct cz *z, const struct sc_batch *b)
{
	size_t n = b ? sc_batch_count(b) : 0;

	if (b && sc_batch_ncols(b) != z->ncols)
		return false;
	if (cz_live(z) != n)
		return false;
	for (size_t i = 0; i < n; i++) {
		const uint64_t *r = sc_batch_row(b, i);

		if (sc_batch_weight(b, i) == 0 ||
		    cz_weight(z, r) != sc_batch_weight(b, i))
			return false;
		if (i > 0) {
			const uint64_t *p = sc_batch_row(b, i - 1);
			uint32_t c = 0;

			while (c < z->ncols && p[c] == r[c])
				c++;
			if (c == z->ncols || p[c] > r[c])
				return false;
		}
	}
	return true;
}

static struct sc_batch *
cz_to_batch(const struct cz *z)
{
	struct sc_batch *b = NULL;

	if (sc_batch_from_records(z->ncols, z->rows, z->w, z->n, &b) != 0)
		abort();
	return b;
}

void
cz_fprint(FILE *f, const struct cz *z)
{
	(void)fprintf(f, "  ref (%zu live rows)\n", cz_live(z));
	for (size_t i = 0; i < z->n; i++) {
		if (!z->w[i])
			continue;
		(void)fprintf(f, "    (");
		for (uint32_t c = 0; c < z->ncols; c++)
			(void)fprintf(
			    f, "%s%llx", c ? ", " : "",
			    (unsigned long long)z->rows[i * z->ncols + c]);
		(void)fprintf(f, ") x %lld\n", (long long)z->w[i]);
	}
}

/* --- small values --------------------------------------------------------- */

static __int128
cg_dec(enum sc_type t, uint64_t w)
{
	return t == SC_TYPE_I64 ? (__int128)sc_dec_i64(w) : (__int128)w;
}

static uint64_t
cg_enc(enum sc_type t, __int128 v)
{
	return t == SC_TYPE_I64 ? sc_enc_i64((int64_t)v) : (uint64_t)v;
}

static __int128
cg_mod(__int128 x, int m)
{
	return ((x % m) + m) % m;
}

/* --- the user callbacks (shared by the circuit and the reference) --------- */

int
cg_map_fn(void *ctx, const uint64_t *row, uint64_t *out)
{
	const struct cg_map *m = ctx;

	if (m->fail_at >= 0 && cg_dec(m->itype[0], row[0]) == m->fail_at)
		return SC_ECALLBACK;
	for (uint32_t j = 0; j < m->nout; j++) {
		__int128 v = cg_dec(m->itype[m->src[j]], row[m->src[j]]);

		out[j] =
		    cg_enc(m->otype[j], cg_mod(v * m->mul[j] + m->add[j], 8));
	}
	return 0;
}

static int
cg_filter_fn(void *ctx, const uint64_t *row, bool *keep)
{
	const struct cg_filter *f = ctx;
	__int128 s = cg_dec(f->itype[f->i], row[f->i]) +
		     cg_dec(f->itype[f->j], row[f->j]);

	*keep = cg_mod(s, f->m) != f->r;
	return 0;
}

static int
cg_flat_fn(void *ctx, const uint64_t *row, struct sc_emitter *out)
{
	const struct cg_flat *f = ctx;
	uint64_t buf[CG_MAXC];
	__int128 n = cg_mod(cg_dec(f->itype[f->i], row[f->i]), 3);

	memcpy(buf, row, f->ncols * sizeof(uint64_t));
	for (__int128 e = 0; e < n; e++) {
		__int128 v = cg_dec(f->itype[f->c], row[f->c]);
		int rc;

		buf[f->c] = cg_enc(f->itype[f->c], cg_mod(v + e, 8));
		rc = sc_emit(out, buf);
		if (rc)
			return rc;
	}
	return 0;
}

/* --- the spec ------------------------------------------------------------- */

void
cg_opts_default(struct cg_opts *o)
{
	o->max_inputs = 3;
	o->max_ops = 14;
	o->max_cols = 3;
	o->stateful = true;
	o->loops = true;
}

static struct cg_node *
cg_push(struct cg_spec *s, enum cg_op op)
{
	struct cg_node *nd = &s->nodes[s->n++];

	memset(nd, 0, sizeof(*nd));
	nd->op = op;
	nd->bind = -1;
	return nd;
}

static void
cg_schema(const struct cg_node *nd, struct sc_schema *s)
{
	if (sc_schema_init(s, nd->ncols, nd->types, NULL) != 0)
		abort();
}

/* Add spec node nd (the last pushed) to the graph; abort on mismatch. */
static void
cg_build_node(struct cg_spec *s, struct cg_node *nd)
{
	struct sc_graph *g = s->graph;
	struct sc_schema sch;
	char name[32];
	int id = -1;

	cg_schema(nd, &sch);
	switch (nd->op) {
	case CG_INPUT:
		(void)snprintf(name, sizeof(name), "in%zu", s->n - 1);
		id = sc_graph_input(g, name, &sch);
		break;
	case CG_OUTPUT:
		(void)snprintf(name, sizeof(name), "out%zu", s->n - 1);
		id = sc_graph_output(g, name, nd->in[0]);
		break;
	case CG_MAP:
		id = sc_graph_map(g, nd->in[0], &sch, cg_map_fn, &nd->map);
		break;
	case CG_FILTER:
		id = sc_graph_filter(g, nd->in[0], cg_filter_fn, &nd->filter);
		break;
	case CG_FLAT_MAP:
		id = sc_graph_flat_map(g, nd->in[0], &sch, cg_flat_fn,
				       &nd->flat);
		break;
	case CG_INDEX_BY:
		id = sc_graph_index_by(g, nd->in[0], nd->cols, nd->ncols);
		break;
	case CG_PLUS:
		id = sc_graph_sum(g, nd->in, nd->nin);
		break;
	case CG_NEGATE:
		id = sc_graph_negate(g, nd->in[0]);
		break;
	case CG_MINUS:
		id = sc_graph_minus(g, nd->in[0], nd->in[1]);
		break;
	case CG_JOIN:
		id = sc_graph_join(g, nd->in[0], nd->in[1], nd->k);
		break;
	case CG_ANTIJOIN:
		id = sc_graph_antijoin(g, nd->in[0], nd->in[1], nd->k);
		break;
	case CG_DISTINCT:
		id = sc_graph_distinct(g, nd->in[0]);
		break;
	case CG_AGGREGATE:
		id = sc_graph_aggregate(g, nd->in[0], &nd->agg);
		break;
	case CG_TOPK:
		id = sc_graph_topk(g, nd->in[0], &nd->topk);
		break;
	case CG_MULTIAGG:
		id = sc_graph_multiagg(g, nd->in[0], &nd->magg);
		break;
	case CG_SESSION:
		id = sc_graph_session(g, nd->in[0], &nd->sess);
		break;
	case CG_INTEGRATE:
		id = sc_graph_integrate(g, nd->in[0]);
		break;
	case CG_DIFFERENTIATE:
		id = sc_graph_differentiate(g, nd->in[0]);
		break;
	case CG_DELAY:
		id = sc_graph_delay(g, nd->in[0]);
		break;
	case CG_WINDOW:
		id = sc_window_hopping(g, nd->in[0], nd->wcol, nd->width,
				       nd->hop);
		break;
	case CG_FEEDBACK:
		id = sc_graph_feedback(g, &sch);
		break;
	default:
		break;
	}
	if (id != (int)(s->n - 1)) {
		(void)fprintf(stderr,
			      "circuit_gen: node %zu (op %d) got id %d: %s\n",
			      s->n - 1, (int)nd->op, id, sc_errmsg());
		abort();
	}
	if (!sc_schema_equal(sc_graph_schema(g, id), &sch)) {
		(void)fprintf(stderr, "circuit_gen: node %d: schema differs\n",
			      id);
		abort();
	}
}

static enum sc_type
cg_rand_type(struct sc_rng *r)
{
	return sc_rng_below(r, 2) ? SC_TYPE_I64 : SC_TYPE_U64;
}

/* A random usable stream (not an output, not a feedback). */
static int
cg_pick(const struct cg_spec *s, struct sc_rng *r)
{
	for (;;) {
		/* Prefer recent nodes, so the graph gets deep. */
		size_t i = sc_rng_below(r, 2)
			       ? s->n - 1 - sc_rng_below(r, s->n < 4 ? s->n : 4)
			       : sc_rng_below(r, s->n);
		enum cg_op op = s->nodes[i].op;

		if (op != CG_OUTPUT && op != CG_FEEDBACK)
			return (int)i;
	}
}

static bool
cg_same_schema(const struct cg_node *a, const struct cg_node *b)
{
	if (a->ncols != b->ncols)
		return false;
	for (uint32_t i = 0; i < a->ncols; i++)
		if (a->types[i] != b->types[i])
			return false;
	return true;
}

/* A stream with the same schema as a (maybe a itself). */
static int
cg_pick_same(const struct cg_spec *s, struct sc_rng *r, int a)
{
	for (int tries = 0; tries < 16; tries++) {
		int b = cg_pick(s, r);

		if (cg_same_schema(&s->nodes[a], &s->nodes[b]))
			return b;
	}
	return a;
}

static void
cg_gen_map(struct cg_node *nd, const struct cg_node *a, struct sc_rng *r)
{
	nd->ncols = 1 + (uint32_t)sc_rng_below(r, 3);
	nd->map.nin = a->ncols;
	nd->map.nout = nd->ncols;
	nd->map.fail_at = -1;
	memcpy(nd->map.itype, a->types, sizeof(nd->map.itype));
	for (uint32_t j = 0; j < nd->ncols; j++) {
		nd->types[j] = cg_rand_type(r);
		nd->map.otype[j] = nd->types[j];
		nd->map.src[j] = (uint32_t)sc_rng_below(r, a->ncols);
		nd->map.mul[j] = (int)sc_rng_range(r, 1, 3);
		nd->map.add[j] = (int)sc_rng_range(r, 0, 7);
	}
}

static void
cg_same_as(struct cg_node *nd, const struct cg_node *a)
{
	nd->ncols = a->ncols;
	memcpy(nd->types, a->types, sizeof(nd->types));
}

/* The longest common type prefix of a and b, capped. */
static uint32_t
cg_key_room(const struct cg_node *a, const struct cg_node *b)
{
	uint32_t k = 0;

	while (k < a->ncols && k < b->ncols && a->types[k] == b->types[k])
		k++;
	return k;
}

/* Try to make a two-input keyed node (join/antijoin); false if none fits. */
static bool
cg_gen_keyed(struct cg_spec *s, struct cg_node *nd, struct sc_rng *r, int fa,
	     int fb)
{
	for (int tries = 0; tries < 16; tries++) {
		int a = tries == 0 ? fa : cg_pick(s, r);
		int b = fb >= 0 ? fb : cg_pick(s, r);
		const struct cg_node *na = &s->nodes[a], *nb = &s->nodes[b];
		uint32_t room = cg_key_room(na, nb), k;

		if (room == 0)
			continue;
		k = 1 + (uint32_t)sc_rng_below(r, room);
		if (nd->op == CG_JOIN && na->ncols + nb->ncols - k > CG_MAXC)
			continue;
		nd->nin = 2;
		nd->in[0] = a;
		nd->in[1] = b;
		nd->k = k;
		cg_same_as(nd, na);
		if (nd->op == CG_JOIN) {
			nd->ncols = na->ncols + nb->ncols - k;
			for (uint32_t i = k; i < nb->ncols; i++)
				nd->types[na->ncols + i - k] = nb->types[i];
		}
		return true;
	}
	return false;
}

static void
cg_gen_aggregate(struct cg_node *nd, const struct cg_node *a, struct sc_rng *r)
{
	static const enum sc_agg_kind kinds[] = {SC_AGG_COUNT, SC_AGG_SUM,
						 SC_AGG_MIN, SC_AGG_MAX};

	nd->agg.ncols = a->ncols;
	nd->agg.k = (uint32_t)sc_rng_below(r, a->ncols);
	nd->agg.kind = kinds[sc_rng_below(r, 4)];
	nd->agg.col = (uint32_t)sc_rng_below(r, a->ncols);
	nd->agg.col_type = a->types[nd->agg.col];
	nd->ncols = nd->agg.k + 1;
	memcpy(nd->types, a->types, sizeof(nd->types));
	if (nd->agg.kind == SC_AGG_COUNT || nd->agg.kind == SC_AGG_SUM)
		nd->types[nd->agg.k] = SC_TYPE_I64;
	else
		nd->types[nd->agg.k] = nd->agg.col_type;
}

/* A multi-aggregate over a: a random key, 1..3 terms (as many as the
 * row's width leaves) of every kind but AVG (its f64 output no other
 * generated op reads). No filter: a graph takes only bool filter columns
 * and the generator makes none (tests/operators/test_multiagg.c and the
 * Nexmark queries q15-q17 test the filters). */
static void
cg_gen_multiagg(struct cg_node *nd, const struct cg_node *a, struct sc_rng *r)
{
	static const enum sc_magg_kind kinds[] = {
	    SC_MAGG_COUNT, SC_MAGG_COUNT_DISTINCT, SC_MAGG_SUM, SC_MAGG_MIN,
	    SC_MAGG_MAX};
	struct sc_multiagg_spec *m = &nd->magg;
	uint32_t room;

	memset(m, 0, sizeof(*m));
	m->ncols = a->ncols;
	m->k = (uint32_t)sc_rng_below(r, a->ncols);
	room = CG_MAXC - m->k;
	m->nterms = 1 + (uint32_t)sc_rng_below(r, room < 3 ? room : 3);
	for (uint32_t t = 0; t < m->nterms; t++) {
		struct sc_magg_term *tm = &m->terms[t];

		tm->kind = kinds[sc_rng_below(r, 5)];
		tm->col = (uint32_t)sc_rng_below(r, a->ncols);
		tm->col_type = a->types[tm->col];
		tm->filter = SC_MAGG_ALL;
		if (tm->kind == SC_MAGG_SUM && tm->col_type != SC_TYPE_I64 &&
		    tm->col_type != SC_TYPE_U64)
			tm->kind = SC_MAGG_COUNT;
	}
	nd->ncols = m->k + m->nterms;
	memcpy(nd->types, a->types, sizeof(nd->types));
	for (uint32_t t = 0; t < m->nterms; t++)
		(void)sc_multiagg_out_type(m, t, &nd->types[m->k + t]);
}

/* Session windows over a: a random key, an i64 time column after it,
 * a gap of 1..3 (values are small, so sessions merge and split). False
 * when a has no i64 column after a key that leaves room. */
static bool
cg_gen_session(struct cg_node *nd, const struct cg_node *a, struct sc_rng *r)
{
	struct sc_session_spec *s = &nd->sess;
	uint32_t cand[CG_MAXC], n = 0;

	memset(s, 0, sizeof(*s));
	s->ncols = a->ncols;
	s->k = (uint32_t)sc_rng_below(r, a->ncols);
	if (s->k + 3 > CG_MAXC)
		s->k = CG_MAXC - 3;
	for (uint32_t c = s->k; c < a->ncols; c++)
		if (a->types[c] == SC_TYPE_I64)
			cand[n++] = c;
	if (n == 0)
		return false;
	s->time_col = cand[sc_rng_below(r, n)];
	s->gap = sc_rng_range(r, 1, 3);
	nd->ncols = s->k + 3;
	memcpy(nd->types, a->types, sizeof(nd->types));
	for (uint32_t i = 0; i < 3; i++)
		nd->types[s->k + i] = SC_TYPE_I64;
	return true;
}

/* A top-k over a: a random group key, 1.. order columns after it in a
 * random order and directions, limit 1..3 (small values tie often). */
static void
cg_gen_topk(struct cg_node *nd, const struct cg_node *a, struct sc_rng *r)
{
	struct sc_topk_spec *t = &nd->topk;
	uint32_t pool[SC_SCHEMA_MAX_COLS], npool;

	if (a->ncols == 0 || a->ncols > SC_SCHEMA_MAX_COLS)
		abort();
	memset(t, 0, sizeof(*t));
	t->ncols = a->ncols;
	t->key = (uint32_t)sc_rng_below(r, a->ncols);
	/* The columns key..ncols-1 are pool[0..npool), shuffled in part. */
	npool = a->ncols - t->key;
	for (uint32_t c = 0; c < SC_SCHEMA_MAX_COLS; c++)
		pool[c] = t->key + c;
	t->norder = 1 + (uint32_t)sc_rng_below(r, npool);
	for (uint32_t i = 0; i < t->norder; i++) {
		uint32_t j = i + (uint32_t)sc_rng_below(r, npool - i);
		uint32_t c = pool[j];

		pool[j] = pool[i];
		pool[i] = c;
		t->order[i] = c;
		t->desc[i] = sc_rng_below(r, 2) != 0;
	}
	t->limit = 1 + sc_rng_below(r, 3);
}

/* Fill one operator node's op, inputs and parameters: op `forced` (or a
 * random one if CG__OPS) reading `a` (or a random stream if < 0) and, for
 * binary ops, `b` (likewise). Returns false if the op could not be made
 * (the caller picks again). */
static bool
cg_gen_op(struct cg_spec *s, const struct cg_opts *o, struct cg_node *nd,
	  struct sc_rng *r, enum cg_op forced, int a, int b)
{
	static const enum cg_op ops[] = {
	    CG_MAP,	      CG_FILTER,   CG_FLAT_MAP, CG_INDEX_BY,
	    CG_PLUS,	      CG_NEGATE,   CG_MINUS,	CG_INTEGRATE,
	    CG_DIFFERENTIATE, CG_DELAY,	   CG_WINDOW,	CG_MAP,
	    CG_JOIN,	      CG_ANTIJOIN, CG_DISTINCT, CG_AGGREGATE,
	    CG_TOPK,	      CG_MULTIAGG, CG_SESSION,
	};
	size_t nops = o->stateful ? 19 : 12;
	const struct cg_node *na;

	if (a < 0)
		a = cg_pick(s, r);
	na = &s->nodes[a];
	nd->op = forced < CG__OPS ? forced : ops[sc_rng_below(r, nops)];
	nd->nin = 1;
	nd->in[0] = a;
	cg_same_as(nd, na);
	switch (nd->op) {
	case CG_MAP:
		cg_gen_map(nd, na, r);
		return true;
	case CG_FILTER:
		memcpy(nd->filter.itype, na->types, sizeof(nd->filter.itype));
		nd->filter.i = (uint32_t)sc_rng_below(r, na->ncols);
		nd->filter.j = (uint32_t)sc_rng_below(r, na->ncols);
		nd->filter.m = (int)sc_rng_range(r, 2, 3);
		nd->filter.r = (int)sc_rng_below(r, (uint64_t)nd->filter.m);
		return true;
	case CG_FLAT_MAP:
		nd->flat.ncols = na->ncols;
		memcpy(nd->flat.itype, na->types, sizeof(nd->flat.itype));
		nd->flat.i = (uint32_t)sc_rng_below(r, na->ncols);
		nd->flat.c = (uint32_t)sc_rng_below(r, na->ncols);
		return true;
	case CG_INDEX_BY:
		nd->ncols = 1 + (uint32_t)sc_rng_below(r, na->ncols + 1);
		if (nd->ncols > CG_MAXC)
			nd->ncols = CG_MAXC;
		for (uint32_t i = 0; i < nd->ncols; i++) {
			nd->cols[i] = (uint32_t)sc_rng_below(r, na->ncols);
			nd->types[i] = na->types[nd->cols[i]];
		}
		return true;
	case CG_PLUS:
		nd->nin = b >= 0 ? 2 : 2 + (uint32_t)sc_rng_below(r, 2);
		for (uint32_t i = 1; i < nd->nin; i++)
			nd->in[i] = b >= 0 ? b : cg_pick_same(s, r, a);
		return cg_same_schema(na, &s->nodes[nd->in[1]]);
	case CG_MINUS:
		nd->nin = 2;
		nd->in[1] = b >= 0 ? b : cg_pick_same(s, r, a);
		return cg_same_schema(na, &s->nodes[nd->in[1]]);
	case CG_WINDOW:
		if (na->ncols >= CG_MAXC)
			return false;
		nd->wcol = (uint32_t)sc_rng_below(r, na->ncols);
		nd->width = sc_rng_range(r, 1, 4);
		nd->hop = sc_rng_range(r, 1, nd->width);
		nd->types[nd->ncols++] = na->types[nd->wcol];
		return true;
	case CG_JOIN:
	case CG_ANTIJOIN:
		return cg_gen_keyed(s, nd, r, a, b);
	case CG_AGGREGATE:
		if (na->ncols < 2)
			return false;
		cg_gen_aggregate(nd, na, r);
		return true;
	case CG_TOPK:
		cg_gen_topk(nd, na, r);
		return true;
	case CG_MULTIAGG:
		cg_gen_multiagg(nd, na, r);
		return true;
	case CG_SESSION:
		return cg_gen_session(nd, na, r);
	default:
		return true; /* negate, distinct, integrate, differentiate,
				delay: same schema */
	}
}

/* A loop: fb = feedback(S); d = delay(fb); y = plus(x, d); z = filter(y);
 * bind(fb, z). */
static void
cg_gen_loop(struct cg_spec *s, struct sc_rng *r)
{
	int x = cg_pick(s, r);
	int fb = (int)s->n, d, y, z;
	struct cg_node *nd;

	nd = cg_push(s, CG_FEEDBACK);
	cg_same_as(nd, &s->nodes[x]);
	cg_build_node(s, nd);
	nd = cg_push(s, CG_DELAY);
	cg_same_as(nd, &s->nodes[x]);
	nd->nin = 1;
	nd->in[0] = fb;
	cg_build_node(s, nd);
	d = fb + 1;
	nd = cg_push(s, CG_PLUS);
	cg_same_as(nd, &s->nodes[x]);
	nd->nin = 2;
	nd->in[0] = x;
	nd->in[1] = d;
	cg_build_node(s, nd);
	y = d + 1;
	nd = cg_push(s, CG_FILTER);
	cg_same_as(nd, &s->nodes[x]);
	nd->nin = 1;
	nd->in[0] = y;
	memcpy(nd->filter.itype, nd->types, sizeof(nd->filter.itype));
	nd->filter.i = (uint32_t)sc_rng_below(r, nd->ncols);
	nd->filter.j = (uint32_t)sc_rng_below(r, nd->ncols);
	nd->filter.m = 2;
	nd->filter.r = (int)sc_rng_below(r, 2);
	cg_build_node(s, nd);
	z = y + 1;
	s->nodes[fb].bind = z;
	if (sc_graph_bind(s->graph, fb, z) != 0)
		abort();
}

/* Every node nobody reads gets an output. */
static void
cg_gen_outputs(struct cg_spec *s)
{
	size_t n = s->n;

	for (size_t i = 0; i < n; i++) {
		bool read = false;

		if (s->nodes[i].op == CG_FEEDBACK)
			continue;
		for (size_t j = 0; j < s->n && !read; j++)
			for (uint32_t p = 0; p < s->nodes[j].nin; p++)
				read |= s->nodes[j].in[p] == (int)i;
		if (!read) {
			struct cg_node *nd = cg_push(s, CG_OUTPUT);

			cg_same_as(nd, &s->nodes[i]);
			nd->nin = 1;
			nd->in[0] = (int)i;
			cg_build_node(s, nd);
		}
	}
}

static void
cg_init_ref(struct cg_spec *s)
{
	for (size_t i = 0; i < s->n; i++) {
		struct cg_node *nd = &s->nodes[i];

		cz_init(&nd->val, nd->ncols);
		cz_init(&nd->st, nd->ncols);
		cz_init(&nd->prev, nd->ncols);
		cz_init(&nd->ia, nd->nin ? s->nodes[nd->in[0]].ncols : 1);
		cz_init(&nd->ib, nd->nin > 1 ? s->nodes[nd->in[1]].ncols : 1);
	}
}

struct cg_spec *
cg_generate(uint64_t seed, const struct cg_opts *o)
{
	struct cg_spec *s = calloc(1, sizeof(*s));
	struct sc_rng r;
	uint32_t nin, nops;

	if (!s)
		abort();
	sc_rng_seed(&r, seed);
	s->seed = seed;
	nin = 1 + (uint32_t)sc_rng_below(&r, o->max_inputs);
	nops = 1 + (uint32_t)sc_rng_below(&r, o->max_ops);
	/* inputs + ops + a loop (4) + outputs (at most every node) */
	s->nodes = calloc(2 * (nin + nops + 4) + 2, sizeof(struct cg_node));
	if (!s->nodes || sc_graph_create(&s->graph) != 0)
		abort();
	for (uint32_t i = 0; i < nin; i++) {
		struct cg_node *nd = cg_push(s, CG_INPUT);

		nd->ncols = 1 + (uint32_t)sc_rng_below(&r, o->max_cols);
		for (uint32_t c = 0; c < nd->ncols; c++)
			nd->types[c] = cg_rand_type(&r);
		cg_build_node(s, nd);
		s->inputs[s->ninputs++] = (int)(s->n - 1);
	}
	for (uint32_t i = 0; i < nops; i++) {
		struct cg_node tmp;

		/* Made aside, then pushed: picks see only existing nodes. */
		do {
			memset(&tmp, 0, sizeof(tmp));
			tmp.bind = -1;
		} while (!cg_gen_op(s, o, &tmp, &r, CG__OPS, -1, -1));
		*cg_push(s, tmp.op) = tmp;
		cg_build_node(s, &s->nodes[s->n - 1]);
		if (o->loops && i == nops / 2 && sc_rng_below(&r, 2))
			cg_gen_loop(s, &r);
	}
	cg_gen_outputs(s);
	cg_init_ref(s);
	return s;
}

void
cg_free(struct cg_spec *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n; i++) {
		cz_fini(&s->nodes[i].val);
		cz_fini(&s->nodes[i].st);
		cz_fini(&s->nodes[i].prev);
		cz_fini(&s->nodes[i].ia);
		cz_fini(&s->nodes[i].ib);
	}
	if (sc_graph_destroy(s->graph) != 0)
		abort(); /* a circuit of it is still alive: a test bug */
	free(s->nodes);
	free(s);
}

/* --- the reference operators, from scratch -------------------------------- */

/* join of integrals a, b on k key columns */
static void
cg_ref_join(const struct cz *a, const struct cz *b, uint32_t k, struct cz *out)
{
	uint64_t row[2 * CG_MAXC];

	cz_clear(out);
	for (size_t i = 0; i < a->n; i++)
		for (size_t j = 0; j < b->n; j++) {
			const uint64_t *ra = a->rows + i * a->ncols;
			const uint64_t *rb = b->rows + j * b->ncols;

			if (!a->w[i] || !b->w[j] || !cz_row_eq(ra, rb, k))
				continue;
			memcpy(row, ra, a->ncols * sizeof(uint64_t));
			memcpy(row + a->ncols, rb + k,
			       (b->ncols - k) * sizeof(uint64_t));
			cz_add(out, row, a->w[i] * b->w[j]);
		}
}

static void
cg_ref_antijoin(const struct cz *a, const struct cz *b, uint32_t k,
		struct cz *out)
{
	cz_clear(out);
	for (size_t i = 0; i < a->n; i++) {
		const uint64_t *ra = a->rows + i * a->ncols;
		bool present = false;

		for (size_t j = 0; j < b->n && !present; j++)
			present = b->w[j] > 0 &&
				  cz_row_eq(ra, b->rows + j * b->ncols, k);
		if (!present)
			cz_add(out, ra, a->w[i]);
	}
}

static void
cg_ref_distinct(const struct cz *a, struct cz *out)
{
	cz_clear(out);
	for (size_t i = 0; i < a->n; i++)
		if (a->w[i] > 0)
			cz_add(out, a->rows + i * a->ncols, 1);
}

/* One group's value: count, sum, min or max over its rows of non-zero
 * weight. */
static uint64_t
cg_ref_group(const struct cz *a, const struct sc_aggregate_spec *sp,
	     const uint64_t *key)
{
	__int128 acc = 0;
	uint64_t best = 0;
	bool first = true;

	for (size_t i = 0; i < a->n; i++) {
		const uint64_t *r = a->rows + i * a->ncols;

		if (!a->w[i] || !cz_row_eq(r, key, sp->k))
			continue;
		if (sp->kind == SC_AGG_COUNT)
			acc += a->w[i];
		else if (sp->kind == SC_AGG_SUM)
			acc += (__int128)a->w[i] *
			       cg_dec(sp->col_type, r[sp->col]);
		else if (first || (sp->kind == SC_AGG_MIN ? r[sp->col] < best
							  : r[sp->col] > best))
			best = r[sp->col];
		first = false;
	}
	if (sp->kind == SC_AGG_COUNT || sp->kind == SC_AGG_SUM)
		return sc_enc_i64((int64_t)acc);
	return best;
}

/* Is row x strictly ahead of row y in the top-k order? (*tie: equal on
 * every order column.) */
static bool
cg_ref_ahead(const struct sc_topk_spec *t, const uint64_t *x, const uint64_t *y,
	     bool *tie)
{
	*tie = false;
	for (uint32_t i = 0; i < t->norder; i++) {
		uint64_t a = x[t->order[i]], b = y[t->order[i]];

		if (a != b)
			return t->desc[i] ? a > b : a < b;
	}
	*tie = true;
	return false;
}

/* Top-k from its definition (topk.h): each row of positive weight whose
 * group's positive rows strictly ahead of it weigh less than limit. */
static void
cg_ref_topk(const struct cz *a, const struct sc_topk_spec *t, struct cz *out)
{
	cz_clear(out);
	for (size_t i = 0; i < a->n; i++) {
		const uint64_t *r = a->rows + i * a->ncols;
		__int128 ahead = 0;
		bool tie;

		if (a->w[i] <= 0)
			continue;
		for (size_t j = 0; j < a->n; j++) {
			const uint64_t *q = a->rows + j * a->ncols;

			if (a->w[j] > 0 && cz_row_eq(q, r, t->key) &&
			    cg_ref_ahead(t, q, r, &tie))
				ahead += a->w[j];
		}
		if (ahead < (__int128)t->limit)
			cz_add(out, r, a->w[i]);
	}
}

static void
cg_ref_aggregate(const struct cz *a, const struct sc_aggregate_spec *sp,
		 struct cz *out)
{
	uint64_t row[CG_MAXC + 1];

	cz_clear(out);
	for (size_t i = 0; i < a->n; i++) {
		const uint64_t *r = a->rows + i * a->ncols;

		if (!a->w[i])
			continue;
		memcpy(row, r, sp->k * sizeof(uint64_t));
		row[sp->k] = cg_ref_group(a, sp, r);
		if (cz_weight(out, row) == 0) {
			/* one row per group: skip a group already added */
			bool seen = false;

			for (size_t j = 0; j < out->n && !seen; j++)
				seen = out->w[j] &&
				       cz_row_eq(out->rows + j * out->ncols, r,
						 sp->k);
			if (!seen)
				cz_add(out, row, 1);
		}
	}
}

/* One group's multi-aggregate row from its definition (multiagg.h) into
 * row[k..): false if the group has none (its total weight is not
 * positive, or a MIN/MAX finds no value of positive summed weight). */
static bool
cg_ref_magg_row(const struct cz *a, const struct sc_multiagg_spec *m,
		const uint64_t *key, uint64_t *row)
{
	__int128 total = 0;

	for (size_t i = 0; i < a->n; i++)
		if (a->w[i] && cz_row_eq(a->rows + i * a->ncols, key, m->k))
			total += a->w[i];
	if (total <= 0)
		return false;
	for (uint32_t t = 0; t < m->nterms; t++) {
		const struct sc_magg_term *tm = &m->terms[t];
		__int128 acc = 0;
		bool found = false;
		uint64_t best = 0;

		for (size_t i = 0; i < a->n; i++) {
			const uint64_t *r = a->rows + i * a->ncols;
			__int128 vw = 0;
			bool first = true;

			if (!a->w[i] || !cz_row_eq(r, key, m->k) ||
			    (tm->filter != SC_MAGG_ALL && r[tm->filter] == 0))
				continue;
			if (tm->kind == SC_MAGG_COUNT) {
				acc += a->w[i];
				continue;
			}
			if (tm->kind == SC_MAGG_SUM) {
				acc += (__int128)a->w[i] *
				       cg_dec(tm->col_type, r[tm->col]);
				continue;
			}
			/* v's summed weight over the group's passing rows,
			 * counted at v's first such row only */
			for (size_t j = 0; j < a->n; j++) {
				const uint64_t *q = a->rows + j * a->ncols;

				if (!a->w[j] || !cz_row_eq(q, key, m->k) ||
				    q[tm->col] != r[tm->col] ||
				    (tm->filter != SC_MAGG_ALL &&
				     q[tm->filter] == 0))
					continue;
				if (j < i)
					first = false;
				vw += a->w[j];
			}
			if (!first || vw <= 0)
				continue;
			if (tm->kind == SC_MAGG_COUNT_DISTINCT)
				acc++;
			else if (!found ||
				 (tm->kind == SC_MAGG_MIN ? r[tm->col] < best
							  : r[tm->col] > best))
				best = r[tm->col];
			found = true;
		}
		if (tm->kind == SC_MAGG_MIN || tm->kind == SC_MAGG_MAX) {
			if (!found)
				return false;
			row[m->k + t] = best;
		} else {
			row[m->k + t] = sc_enc_i64((int64_t)acc);
		}
	}
	return true;
}

static void
cg_ref_multiagg(const struct cz *a, const struct sc_multiagg_spec *m,
		struct cz *out)
{
	uint64_t row[CG_MAXC + 1];

	cz_clear(out);
	for (size_t i = 0; i < a->n; i++) {
		const uint64_t *r = a->rows + i * a->ncols;
		bool seen = false;

		if (!a->w[i])
			continue;
		for (size_t j = 0; j < i && !seen; j++)
			seen = a->w[j] &&
			       cz_row_eq(a->rows + j * a->ncols, r, m->k);
		memcpy(row, r, m->k * sizeof(uint64_t));
		if (!seen && cg_ref_magg_row(a, m, r, row))
			cz_add(out, row, 1);
	}
}

/* Session windows from their definition (session.h): per group, its
 * times of positive summed weight in order, cut where a time is `gap` or
 * more after the one before. */
static void
cg_ref_session(const struct cz *a, const struct sc_session_spec *s,
	       struct cz *out)
{
	uint64_t row[CG_MAXC + 1];
	int64_t *t = malloc((a->n + 1) * sizeof(*t));
	__int128 *m = malloc((a->n + 1) * sizeof(*m));

	if (!t || !m)
		abort();
	cz_clear(out);
	for (size_t i = 0; i < a->n; i++) {
		const uint64_t *r = a->rows + i * a->ncols;
		size_t n = 0;
		bool seen = false;

		if (!a->w[i])
			continue;
		for (size_t j = 0; j < i && !seen; j++)
			seen = a->w[j] &&
			       cz_row_eq(a->rows + j * a->ncols, r, s->k);
		if (seen)
			continue;
		/* the group's times and their summed weights, sorted */
		for (size_t j = 0; j < a->n; j++) {
			const uint64_t *q = a->rows + j * a->ncols;
			int64_t x = sc_dec_i64(q[s->time_col]);
			size_t p = 0;

			if (!a->w[j] || !cz_row_eq(q, r, s->k))
				continue;
			while (p < n && t[p] < x)
				p++;
			if (p < n && t[p] == x) {
				m[p] += a->w[j];
				continue;
			}
			memmove(t + p + 1, t + p, (n - p) * sizeof(*t));
			memmove(m + p + 1, m + p, (n - p) * sizeof(*m));
			t[p] = x;
			m[p] = a->w[j];
			n++;
		}
		memcpy(row, r, s->k * sizeof(uint64_t));
		for (size_t p = 0; p < n;) {
			size_t last;
			__int128 count = 0;

			if (m[p] <= 0) {
				p++;
				continue;
			}
			row[s->k] = sc_enc_i64(t[p]);
			last = p;
			for (size_t q = p; q < n; q++) {
				if (m[q] <= 0)
					continue;
				if ((__int128)t[q] - t[last] >= s->gap)
					break;
				count += m[q];
				last = q;
				p = q + 1;
			}
			row[s->k + 1] = sc_enc_i64(t[last] + s->gap);
			row[s->k + 2] = sc_enc_i64((int64_t)count);
			cz_add(out, row, 1);
		}
	}
	free(t);
	free(m);
}

/* The hopping window, from its definition: every start s = m * hop with
 * s <= t < s + width that the column's type can hold. */
static void
cg_ref_window(const struct cg_node *nd, const struct cz *in, struct cz *out)
{
	uint64_t row[CG_MAXC + 1];
	enum sc_type t = nd->types[nd->wcol];

	for (size_t i = 0; i < in->n; i++) {
		const uint64_t *r = in->rows + i * in->ncols;
		__int128 time = cg_dec(t, r[nd->wcol]);

		memcpy(row, r, in->ncols * sizeof(uint64_t));
		for (__int128 s = time - nd->width + 1; s <= time; s++) {
			if (cg_mod(s, (int)nd->hop) != 0)
				continue;
			if (t == SC_TYPE_U64 && s < 0)
				continue;
			row[in->ncols] = cg_enc(t, s);
			cz_add(out, row, in->w[i]);
		}
	}
}

/* Apply a row-wise user function to z into out. */
static void
cg_ref_map(const struct cg_node *nd, const struct cz *in, struct cz *out)
{
	uint64_t row[CG_MAXC + 1];

	for (size_t i = 0; i < in->n; i++) {
		const uint64_t *r = in->rows + i * in->ncols;

		if (!in->w[i])
			continue;
		for (uint32_t j = 0; j < nd->map.nout; j++) {
			__int128 v = cg_dec(nd->map.itype[nd->map.src[j]],
					    r[nd->map.src[j]]);

			row[j] = cg_enc(
			    nd->map.otype[j],
			    cg_mod(v * nd->map.mul[j] + nd->map.add[j], 8));
		}
		cz_add(out, row, in->w[i]);
	}
}

static void
cg_ref_filter(const struct cg_node *nd, const struct cz *in, struct cz *out)
{
	for (size_t i = 0; i < in->n; i++) {
		bool keep;

		cg_filter_fn((void *)&nd->filter, in->rows + i * in->ncols,
			     &keep);
		if (keep)
			cz_add(out, in->rows + i * in->ncols, in->w[i]);
	}
}

static void
cg_ref_flat(const struct cg_node *nd, const struct cz *in, struct cz *out)
{
	uint64_t row[CG_MAXC + 1];
	const struct cg_flat *f = &nd->flat;

	for (size_t i = 0; i < in->n; i++) {
		const uint64_t *r = in->rows + i * in->ncols;
		__int128 n = cg_mod(cg_dec(f->itype[f->i], r[f->i]), 3);

		memcpy(row, r, in->ncols * sizeof(uint64_t));
		for (__int128 e = 0; e < n; e++) {
			row[f->c] = cg_enc(
			    f->itype[f->c],
			    cg_mod(cg_dec(f->itype[f->c], r[f->c]) + e, 8));
			cz_add(out, row, in->w[i]);
		}
	}
}

static void
cg_ref_index_by(const struct cg_node *nd, const struct cz *in, struct cz *out)
{
	uint64_t row[CG_MAXC];

	for (size_t i = 0; i < in->n; i++) {
		for (uint32_t j = 0; j < nd->ncols; j++)
			row[j] = in->rows[i * in->ncols + nd->cols[j]];
		cz_add(out, row, in->w[i]);
	}
}

/* A stateful operator (join, antijoin, distinct, aggregate, topk) of node
 * nd recomputed from scratch on a (and, for join and antijoin, b); adds
 * the result to out. Aborts on any other op: the per-tick ops have no
 * from-scratch form. */
static void
cg_ref_scratch(const struct cg_node *nd, const struct cz *a, const struct cz *b,
	       struct cz *out)
{
	struct cz full;

	cz_init(&full, nd->ncols);
	if (nd->op == CG_JOIN)
		cg_ref_join(a, b, nd->k, &full);
	else if (nd->op == CG_ANTIJOIN)
		cg_ref_antijoin(a, b, nd->k, &full);
	else if (nd->op == CG_DISTINCT)
		cg_ref_distinct(a, &full);
	else if (nd->op == CG_AGGREGATE)
		cg_ref_aggregate(a, &nd->agg, &full);
	else if (nd->op == CG_TOPK)
		cg_ref_topk(a, &nd->topk, &full);
	else if (nd->op == CG_MULTIAGG)
		cg_ref_multiagg(a, &nd->magg, &full);
	else if (nd->op == CG_SESSION)
		cg_ref_session(a, &nd->sess, &full);
	else
		abort();
	cz_add_z(out, &full, 1);
	cz_fini(&full);
}

void
cg_ref_apply(const struct cg_node *nd, const struct cz *const *ins,
	     struct cz *out)
{
	const struct cz *a;

	/* ins[0..nin) are read; a binary op's second input is ins[1]. */
	if (nd->nin < 1 || nd->nin > 4 ||
	    ((nd->op == CG_MINUS || nd->op == CG_JOIN ||
	      nd->op == CG_ANTIJOIN) &&
	     nd->nin != 2))
		abort();
	a = ins[0];
	switch (nd->op) {
	case CG_OUTPUT:
		cz_add_z(out, a, 1);
		return;
	case CG_MAP:
		cg_ref_map(nd, a, out);
		return;
	case CG_FILTER:
		cg_ref_filter(nd, a, out);
		return;
	case CG_FLAT_MAP:
		cg_ref_flat(nd, a, out);
		return;
	case CG_INDEX_BY:
		cg_ref_index_by(nd, a, out);
		return;
	case CG_WINDOW:
		cg_ref_window(nd, a, out);
		return;
	case CG_PLUS:
		for (uint32_t p = 0; p < nd->nin; p++)
			cz_add_z(out, ins[p], 1);
		return;
	case CG_NEGATE:
		cz_add_z(out, a, -1);
		return;
	case CG_MINUS:
		cz_add_z(out, a, 1);
		cz_add_z(out, ins[1], -1);
		return;
	default:
		break;
	}
	cg_ref_scratch(nd, a, nd->nin > 1 ? ins[1] : NULL, out);
}

static bool
cg_is_stateful(enum cg_op op)
{
	return op == CG_JOIN || op == CG_ANTIJOIN || op == CG_DISTINCT ||
	       op == CG_AGGREGATE || op == CG_TOPK || op == CG_MULTIAGG ||
	       op == CG_SESSION;
}

/* A stateful node: add the inputs' values to their integrals, recompute
 * from scratch, emit the difference from last tick's result. */
static void
cg_ref_stateful(struct cg_spec *s, struct cg_node *nd)
{
	struct cz full;

	cz_add_z(&nd->ia, &s->nodes[nd->in[0]].val, 1);
	if (nd->nin > 1)
		cz_add_z(&nd->ib, &s->nodes[nd->in[1]].val, 1);
	cz_init(&full, nd->ncols);
	cg_ref_scratch(nd, &nd->ia, &nd->ib, &full);
	cz_add_z(&nd->val, &full, 1);
	cz_add_z(&nd->val, &nd->prev, -1);
	cz_copy(&nd->prev, &full);
	cz_fini(&full);
}

/* One node's value for this tick (not inputs, delays or feedbacks). */
static void
cg_ref_node(struct cg_spec *s, struct cg_node *nd)
{
	const struct cz *ins[4];
	const struct cz *a;

	if (nd->nin < 1 || nd->nin > 4) /* every node here reads 1..4 */
		abort();
	/* Every slot is set, so ins is whole; those past nin (input 0's value)
	 * are never read. */
	for (uint32_t p = 0; p < 4; p++)
		ins[p] = &s->nodes[nd->in[p < nd->nin ? p : 0]].val;
	a = ins[0];
	if (cg_is_stateful(nd->op)) {
		cg_ref_stateful(s, nd);
	} else if (nd->op == CG_INTEGRATE) {
		cz_add_z(&nd->st, a, 1);
		cz_add_z(&nd->val, &nd->st, 1);
	} else if (nd->op == CG_DIFFERENTIATE) {
		cz_add_z(&nd->val, a, 1);
		cz_add_z(&nd->val, &nd->st, -1);
		cz_copy(&nd->st, a);
	} else {
		cg_ref_apply(nd, ins, &nd->val);
		if (nd->op == CG_OUTPUT)
			cz_add_z(&nd->st, a, 1);
	}
}

struct cg_spec *
cg_generate_single(uint64_t seed, enum cg_op op)
{
	struct cg_spec *s = calloc(1, sizeof(*s));
	struct cg_opts o;
	struct sc_rng r;
	bool binary = op == CG_PLUS || op == CG_MINUS || op == CG_JOIN ||
		      op == CG_ANTIJOIN;
	struct cg_node *nd;

	if (!s)
		abort();
	cg_opts_default(&o);
	sc_rng_seed(&r, seed);
	s->seed = seed;
	s->nodes = calloc(8, sizeof(struct cg_node));
	if (!s->nodes || sc_graph_create(&s->graph) != 0)
		abort();
	nd = cg_push(s, CG_INPUT);
	nd->ncols = 2 + (uint32_t)sc_rng_below(&r, 2);
	for (uint32_t c = 0; c < nd->ncols; c++)
		nd->types[c] = cg_rand_type(&r);
	if (op == CG_SESSION) /* a time column after any key */
		nd->types[nd->ncols - 1] = SC_TYPE_I64;
	cg_build_node(s, nd);
	s->inputs[s->ninputs++] = 0;
	if (binary) {
		nd = cg_push(s, CG_INPUT);
		cg_same_as(nd, &s->nodes[0]);
		if (op == CG_JOIN || op == CG_ANTIJOIN) {
			nd->ncols = 1 + (uint32_t)sc_rng_below(&r, 3);
			for (uint32_t c = 1; c < nd->ncols; c++)
				nd->types[c] = cg_rand_type(&r);
		}
		cg_build_node(s, nd);
		s->inputs[s->ninputs++] = 1;
	}
	{
		struct cg_node tmp;

		memset(&tmp, 0, sizeof(tmp));
		tmp.bind = -1;
		if (!cg_gen_op(s, &o, &tmp, &r, op, 0, binary ? 1 : -1))
			abort();
		*cg_push(s, op) = tmp;
		cg_build_node(s, &s->nodes[s->n - 1]);
	}
	nd = cg_push(s, CG_OUTPUT);
	cg_same_as(nd, &s->nodes[s->n - 2]);
	nd->nin = 1;
	nd->in[0] = (int)s->n - 2;
	cg_build_node(s, nd);
	cg_init_ref(s);
	return s;
}

void
cg_ref_step(struct cg_spec *s, struct sc_batch *const *fed)
{
	for (size_t i = 0; i < s->n; i++) {
		struct cg_node *nd = &s->nodes[i];

		cz_clear(&nd->val);
		if (nd->op == CG_DELAY) {
			cz_copy(&nd->val, &nd->st);
			cz_clear(&nd->st);
		}
	}
	for (size_t i = 0; i < s->ninputs; i++) {
		struct cg_node *nd = &s->nodes[s->inputs[i]];

		if (fed[i])
			cz_add_batch(&nd->val, fed[i]);
		cz_add_z(&nd->st, &nd->val, 1);
	}
	for (size_t i = 0; i < s->n; i++) {
		enum cg_op op = s->nodes[i].op;

		if (op != CG_INPUT && op != CG_DELAY && op != CG_FEEDBACK)
			cg_ref_node(s, &s->nodes[i]);
	}
	for (size_t i = 0; i < s->n; i++)
		if (s->nodes[i].op == CG_FEEDBACK)
			cz_copy(&s->nodes[i].val,
				&s->nodes[s->nodes[i].bind].val);
	for (size_t i = 0; i < s->n; i++)
		if (s->nodes[i].op == CG_DELAY)
			cz_copy(&s->nodes[i].st,
				&s->nodes[s->nodes[i].in[0]].val);
}

/* --- random deltas -------------------------------------------------------- */

struct sc_batch *
cg_gen_delta(const struct cg_spec *s, int id, struct sc_rng *r)
{
	const struct cg_node *nd = &s->nodes[id];
	struct cz d;
	uint64_t row[CG_MAXC];
	struct sc_batch *b;
	uint64_t ins = sc_rng_below(r, 5), ret = sc_rng_below(r, 3),
		 ovw = sc_rng_below(r, 3);

	if (sc_rng_below(r, 8) == 0)
		return NULL;
	cz_init(&d, nd->ncols);
	for (uint64_t i = 0; i < ins; i++) {
		for (uint32_t c = 0; c < nd->ncols; c++)
			row[c] = cg_enc(nd->types[c], (int)sc_rng_below(r, 8));
		cz_add(&d, row, sc_rng_below(r, 4) ? 1 : 2);
	}
	for (uint64_t i = 0; i < ret + ovw && nd->st.n; i++) {
		size_t j = sc_rng_below(r, nd->st.n);
		const uint64_t *src = nd->st.rows + j * nd->ncols;
		int64_t w = nd->st.w[j];

		if (!w)
			continue;
		cz_add(&d, src, sc_rng_below(r, 2) ? -w : (w > 0 ? -1 : 1));
		if (i >= ret) { /* an overwrite: the row comes back changed */
			uint32_t c = (uint32_t)sc_rng_below(r, nd->ncols);

			memcpy(row, src, nd->ncols * sizeof(uint64_t));
			row[c] = cg_enc(nd->types[c], (int)sc_rng_below(r, 8));
			cz_add(&d, row, w > 0 ? 1 : -1);
		}
	}
	if (sc_rng_below(r, 10) == 0) {
		for (uint32_t c = 0; c < nd->ncols; c++)
			row[c] = cg_enc(nd->types[c], (int)sc_rng_below(r, 8));
		cz_add(&d, row, -1);
	}
	b = cz_to_batch(&d);
	cz_fini(&d);
	return b;
}

const char *
cg_op_name(enum cg_op op)
{
	static const char *const names[CG__OPS] = {
	    "input",	"output",   "map",	 "filter",    "flat_map",
	    "index_by", "plus",	    "negate",	 "minus",     "join",
	    "antijoin", "distinct", "aggregate", "integrate", "differentiate",
	    "delay",	"window",   "feedback",	 "topk",      "multiagg",
	    "session",
	};
	return (int)op >= 0 && op < CG__OPS ? names[op] : "?";
}

void
cg_fprint(FILE *f, const struct cg_spec *s)
{
	(void)fprintf(f, "circuit of seed %llu, %zu nodes:\n",
		      (unsigned long long)s->seed, s->n);
	for (size_t i = 0; i < s->n; i++) {
		const struct cg_node *nd = &s->nodes[i];

		(void)fprintf(f, "  %zu: %s(", i, cg_op_name(nd->op));
		for (uint32_t p = 0; p < nd->nin; p++)
			(void)fprintf(f, "%s%d", p ? ", " : "", nd->in[p]);
		if (nd->op == CG_FEEDBACK)
			(void)fprintf(f, "bound to %d", nd->bind);
		(void)fprintf(f, ") %u cols", nd->ncols);
		if (nd->op == CG_JOIN || nd->op == CG_ANTIJOIN)
			(void)fprintf(f, " k=%u", nd->k);
		if (nd->op == CG_AGGREGATE)
			(void)fprintf(f, " kind=%d k=%u col=%u",
				      (int)nd->agg.kind, nd->agg.k,
				      nd->agg.col);
		if (nd->op == CG_SESSION)
			(void)fprintf(f, " k=%u time=%u gap=%lld", nd->sess.k,
				      nd->sess.time_col,
				      (long long)nd->sess.gap);
		if (nd->op == CG_MULTIAGG) {
			(void)fprintf(f, " k=%u terms", nd->magg.k);
			for (uint32_t t = 0; t < nd->magg.nterms; t++)
				(void)fprintf(
				    f, " %d/%u/%d", (int)nd->magg.terms[t].kind,
				    nd->magg.terms[t].col,
				    nd->magg.terms[t].filter == SC_MAGG_ALL
					? -1
					: (int)nd->magg.terms[t].filter);
		}
		if (nd->op == CG_TOPK) {
			(void)fprintf(f, " key=%u limit=%llu order",
				      nd->topk.key,
				      (unsigned long long)nd->topk.limit);
			for (uint32_t o = 0; o < nd->topk.norder; o++)
				(void)fprintf(f, " %u%s", nd->topk.order[o],
					      nd->topk.desc[o] ? "d" : "a");
		}
		if (nd->op == CG_WINDOW)
			(void)fprintf(f, " col=%u width=%lld hop=%lld",
				      nd->wcol, (long long)nd->width,
				      (long long)nd->hop);
		(void)fprintf(f, "\n");
	}
}

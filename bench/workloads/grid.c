/*
 * grid.c - the grid workload (see grid.h).
 */
#include "bench/workloads/grid.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "operators/aggregate.h"
#include "operators/base.h"
#include "operators/schema.h"

#define GRID_MAX_SIDE  (1LL << 24)
#define GRID_MAX_CELLS (1LL << 28)
#define GRID_UNSET     (-1) /* a cell with no value yet */

struct sc_grid {
	struct sc_graph *g;	  /* owned */
	struct sc_grid_nodes n;	  /* node ids */
	int64_t h, w;		  /* cell rows and columns (stamp excluded) */
	int64_t *value;		  /* h * w host view; GRID_UNSET if none */
	uint64_t rng;		  /* splitmix64 state */
	uint64_t seq;		  /* batches made = the last stamp */
	uint64_t edits;		  /* cell edits made */
	uint64_t fault_below;	  /* a row fails when its hash is below */
	uint64_t fault_seed;	  /* mixed into that hash */
	int build_fail_at;	  /* the graph call that fails; 0 none */
	int build_calls;	  /* graph calls made by grid_build */
	struct sc_schema schema3; /* i64 x 3 */
};

/* Whether the projection of `row` (2 words) is one of the injected faults. */
static bool
grid_faulty(const struct sc_grid *gr, const uint64_t *row)
{
	uint64_t key[3] = {gr->fault_seed, row[0], row[1]};

	return gr->fault_below && sc_row_hash(key, 3) < gr->fault_below;
}

/* (r, sum) -> (r, W, sum) */
static int
grid_proj_row(void *ctx, const uint64_t *row, uint64_t *out)
{
	const struct sc_grid *gr = ctx;

	if (grid_faulty(gr, row))
		return SC_ECALLBACK;
	out[0] = row[0];
	out[1] = sc_enc_i64(gr->w + 1);
	out[2] = row[1];
	return 0;
}

/* (c, sum) -> (H, c, sum) */
static int
grid_proj_col(void *ctx, const uint64_t *row, uint64_t *out)
{
	const struct sc_grid *gr = ctx;

	if (grid_faulty(gr, row))
		return SC_ECALLBACK;
	out[0] = sc_enc_i64(gr->h + 1);
	out[1] = row[0];
	out[2] = row[1];
	return 0;
}

/* The result of a graph call of the build (a node id or an error), or
 * the injected SC_ENOMEM when it is call number build_fail_at. */
static int
grid_call(struct sc_grid *gr, int rc)
{
	if (++gr->build_calls == gr->build_fail_at)
		return sc_errorf(SC_ENOMEM,
				 "sc_grid_create: graph call %d failed "
				 "(injected)",
				 gr->build_calls);
	return rc;
}

/* sum(col 2) by the first column of a 3-column stream. */
static int
grid_sum_by_first(struct sc_grid *gr, int from)
{
	struct sc_aggregate_spec sp;

	memset(&sp, 0, sizeof(sp));
	sp.ncols = 3;
	sp.k = 1;
	sp.kind = SC_AGG_SUM;
	sp.col = 2;
	sp.col_type = SC_TYPE_I64;
	return grid_call(gr, sc_graph_aggregate(gr->g, from, &sp));
}

/* Name a node; an error id passes through. */
static int
grid_named(struct sc_grid *gr, int id, const char *name)
{
	int rc;

	if (id < 0)
		return id;
	rc = grid_call(gr, sc_graph_set_name(gr->g, id, name));
	return rc ? rc : id;
}

/* The first error among the node ids, in the order they were built: each
 * graph call passes a failed input's code on, so the first negative id is
 * the call that failed first; a node no later one reads (an output) is
 * checked as well as the last. 0 when all were built. */
static int
grid_check_nodes(const struct sc_grid_nodes *n)
{
	const int ids[] = {n->cells,	n->agg_row,   n->by_col, n->agg_col,
			   n->proj_row, n->proj_col,  n->grid,	 n->out_grid,
			   n->totals,	n->out_totals};

	for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++)
		if (ids[i] < 0)
			return ids[i];
	return 0;
}

static int
grid_build(struct sc_grid *gr)
{
	static const uint32_t by_col_cols[3] = {1, 0, 2};
	struct sc_graph *g = gr->g;
	struct sc_grid_nodes *n = &gr->n;

	n->cells = grid_call(gr, sc_graph_input(g, "cells", &gr->schema3));
	n->agg_row = grid_named(gr, grid_sum_by_first(gr, n->cells), "agg_row");
	n->by_col = grid_named(
	    gr, grid_call(gr, sc_graph_index_by(g, n->cells, by_col_cols, 3)),
	    "by_col");
	n->agg_col =
	    grid_named(gr, grid_sum_by_first(gr, n->by_col), "agg_col");
	n->proj_row =
	    grid_named(gr,
		       grid_call(gr, sc_graph_map(g, n->agg_row, &gr->schema3,
						  grid_proj_row, gr)),
		       "proj_row");
	n->proj_col =
	    grid_named(gr,
		       grid_call(gr, sc_graph_map(g, n->agg_col, &gr->schema3,
						  grid_proj_col, gr)),
		       "proj_col");
	n->grid = grid_named(
	    gr, grid_call(gr, sc_graph_plus(g, n->proj_row, n->proj_col)),
	    "grid_cells");
	n->out_grid = grid_call(gr, sc_graph_output(g, "grid", n->grid));
	n->totals =
	    grid_named(gr, grid_sum_by_first(gr, n->grid), "row_totals");
	n->out_totals = grid_call(gr, sc_graph_output(g, "totals", n->totals));
	return grid_check_nodes(n);
}

static int
grid_check_opts(const struct sc_grid_opts *o)
{
	if (o->rows < 1 || o->rows > GRID_MAX_SIDE)
		return sc_errorf(SC_EINVAL,
				 "sc_grid_create: rows %lld out of "
				 "1..%lld",
				 (long long)o->rows, GRID_MAX_SIDE);
	if (o->cols < 1 || o->cols > GRID_MAX_SIDE)
		return sc_errorf(SC_EINVAL,
				 "sc_grid_create: cols %lld out of "
				 "1..%lld",
				 (long long)o->cols, GRID_MAX_SIDE);
	if (o->rows * o->cols > GRID_MAX_CELLS)
		return sc_errorf(SC_EINVAL,
				 "sc_grid_create: %lld cells, more "
				 "than %lld",
				 (long long)o->rows * o->cols, GRID_MAX_CELLS);
	if (!(o->fault_rate >= 0.0 && o->fault_rate <= 1.0))
		return sc_errorf(SC_EINVAL,
				 "sc_grid_create: fault_rate %g out of 0..1",
				 o->fault_rate);
	return 0;
}

int
sc_grid_create(const struct sc_grid_opts *o, struct sc_grid **out)
{
	static const enum sc_type t3[3] = {SC_TYPE_I64, SC_TYPE_I64,
					   SC_TYPE_I64};
	struct sc_grid *gr;
	int rc;

	if (!o || !out)
		return sc_errorf(SC_EINVAL, "sc_grid_create: NULL argument");
	if ((rc = grid_check_opts(o)) != 0)
		return rc;
	gr = calloc(1, sizeof(*gr));
	if (!gr)
		return sc_errorf(SC_ENOMEM, "sc_grid_create: out of memory");
	gr->h = o->rows;
	gr->w = o->cols;
	gr->rng = o->seed;
	gr->fault_seed = o->fault_seed;
	gr->build_fail_at = o->build_fail_at;
	/* 2^64 * rate, saturating: rate 1 fails every row. */
	gr->fault_below =
	    o->fault_rate >= 1.0
		? UINT64_MAX
		: (uint64_t)(o->fault_rate * 18446744073709551616.0);
	gr->value = malloc((size_t)(gr->h * gr->w) * sizeof(int64_t));
	if (!gr->value) {
		rc = sc_errorf(SC_ENOMEM,
			       "sc_grid_create: out of memory for %lld cells",
			       (long long)gr->h * gr->w);
		goto fail_value;
	}
	for (int64_t i = 0; i < gr->h * gr->w; i++)
		gr->value[i] = GRID_UNSET;
	if ((rc = sc_schema_init(&gr->schema3, 3, t3, NULL)) != 0 ||
	    (rc = sc_graph_create(&gr->g)) != 0)
		goto fail_value;
	if ((rc = grid_build(gr)) != 0)
		goto fail_graph;
	*out = gr;
	return 0;
fail_graph:
	sc_graph_destroy(gr->g);
fail_value:
	free(gr->value);
	free(gr);
	return rc;
}

int
sc_grid_destroy(struct sc_grid *gr)
{
	int rc;

	if (!gr)
		return 0;
	if ((rc = sc_graph_destroy(gr->g)) != 0)
		return rc;
	free(gr->value);
	free(gr);
	return 0;
}

struct sc_graph *
sc_grid_graph(const struct sc_grid *gr)
{
	return gr->g;
}

void
sc_grid_nodes(const struct sc_grid *gr, struct sc_grid_nodes *out)
{
	*out = gr->n;
}

int
sc_grid_staged(const struct sc_grid *gr, int32_t *map, size_t n)
{
	if (!gr || !map || n != sc_graph_node_count(gr->g))
		return sc_errorf(SC_EINVAL,
				 "sc_grid_staged: NULL or a map of "
				 "%zu entries for %zu nodes",
				 n, gr ? sc_graph_node_count(gr->g) : 0);
	/* The first stage is every node built up to agg_col (grid_build's
	 * order): cells, agg_row, by_col, agg_col. */
	for (size_t i = 0; i < n; i++)
		map[i] = (int)i <= gr->n.agg_col ? 0 : 1;
	return 0;
}

int
sc_grid_settle_step(void *ctx, size_t i, struct sc_settle_step *out)
{
	struct sc_grid_feed *f = ctx;
	int rc;

	(void)i; /* the grid's batches come in sequence */
	if (!f || !out)
		return sc_errorf(SC_EINVAL, "sc_grid_settle_step: NULL");
	if ((rc = sc_grid_next(f->gr, f->edits, &out->batch)) != 0)
		return rc;
	out->input = f->gr->n.cells;
	return 0;
}

uint64_t
sc_grid_seq(const struct sc_grid *gr)
{
	return gr->seq;
}

uint64_t
sc_grid_edits(const struct sc_grid *gr)
{
	return gr->edits;
}

/* Append record (r, c, v) x w at rows[*k]. */
static void
grid_put(uint64_t *rows, int64_t *w, size_t *k, int64_t r, int64_t c, int64_t v,
	 int64_t weight)
{
	rows[*k * 3] = sc_enc_i64(r);
	rows[*k * 3 + 1] = sc_enc_i64(c);
	rows[*k * 3 + 2] = sc_enc_i64(v);
	w[(*k)++] = weight;
}

/* Undo the host view's changes of records[0..k): walking backwards, an
 * insertion leaves the cell unset and the retraction before it (the same
 * edit's) restores the old value. Stamp records are not cells. */
static void
grid_undo(struct sc_grid *gr, const uint64_t *rows, const int64_t *w, size_t k)
{
	for (size_t j = k; j-- > 0;) {
		int64_t r = sc_dec_i64(rows[j * 3]);
		int64_t c = sc_dec_i64(rows[j * 3 + 1]);

		if (r < gr->h)
			gr->value[r * gr->w + c] =
			    w[j] > 0 ? GRID_UNSET : sc_dec_i64(rows[j * 3 + 2]);
	}
}

int
sc_grid_next(struct sc_grid *gr, size_t edits, struct sc_batch **out)
{
	/* At most two records per edit and two for the stamp. */
	size_t cap = 2 * edits + 2, k = 0;
	uint64_t rng, *rows;
	int64_t *w;
	int rc = SC_ENOMEM;

	if (!gr || !out || edits == 0)
		return sc_errorf(SC_EINVAL, "sc_grid_next: NULL or 0 edits");
	rows = malloc(cap * 3 * sizeof(uint64_t));
	w = malloc(cap * sizeof(int64_t));
	if (!rows || !w) {
		rc = sc_errorf(SC_ENOMEM,
			       "sc_grid_next: out of memory for %zu edits",
			       edits);
		goto cleanup;
	}
	/* The generator runs on a copy and the host view is undone on a
	 * failure, so a failure leaves the workload as it was. */
	rng = gr->rng;

	for (size_t i = 0; i < edits; i++) {
		uint64_t x = sc_splitmix_next(&rng);
		int64_t r = (int64_t)(x % (uint64_t)gr->h);
		int64_t c = (int64_t)((x >> 24) % (uint64_t)gr->w);
		int64_t v = (int64_t)((x >> 48) % 100);
		int64_t *cell = &gr->value[r * gr->w + c];

		if (v == *cell)
			v = (v + 1) % 100; /* every edit is a change */
		if (*cell != GRID_UNSET)
			grid_put(rows, w, &k, r, c, *cell, -1);
		grid_put(rows, w, &k, r, c, v, 1);
		*cell = v;
	}
	if (gr->seq > 0)
		grid_put(rows, w, &k, gr->h, gr->w, (int64_t)gr->seq, -1);
	grid_put(rows, w, &k, gr->h, gr->w, (int64_t)gr->seq + 1, 1);
	if ((rc = sc_batch_from_records(3, rows, w, k, out)) != 0) {
		grid_undo(gr, rows, w, k);
		goto cleanup;
	}
	gr->rng = rng;
	gr->seq++;
	gr->edits += edits;
cleanup:
	free(rows);
	free(w);
	return rc;
}

int
sc_grid_stamp(const struct sc_grid *gr, const struct sc_batch *delta,
	      uint64_t *seq)
{
	uint64_t key = sc_enc_i64(gr->h);
	size_t lo, hi;

	if (sc_batch_ncols(delta) != 2 ||
	    sc_batch_key_range(delta, &key, 1, &lo, &hi) != 0)
		return SC_ENOENT;
	for (size_t i = lo; i < hi; i++) {
		if (sc_batch_weight(delta, i) > 0) {
			*seq = (uint64_t)sc_dec_i64(sc_batch_row(delta, i)[1]);
			return 0;
		}
	}
	return SC_ENOENT;
}

/* Row sums (h + 1 of them, the stamp's last) and column sums (w + 1), with
 * whether each has a live cell. */
struct grid_sums {
	int64_t *row, *col;
	bool *row_live, *col_live;
};

static void
grid_sums_fini(struct grid_sums *s)
{
	free(s->row);
	free(s->col);
	free(s->row_live);
	free(s->col_live);
}

static int
grid_sums_init(const struct sc_grid *gr, struct grid_sums *s)
{
	size_t nr = (size_t)gr->h + 1, nc = (size_t)gr->w + 1;

	s->row = calloc(nr, sizeof(*s->row));
	s->col = calloc(nc, sizeof(*s->col));
	s->row_live = calloc(nr, sizeof(*s->row_live));
	s->col_live = calloc(nc, sizeof(*s->col_live));
	if (!s->row || !s->col || !s->row_live || !s->col_live) {
		grid_sums_fini(s);
		/* The constant returned, not sc_errorf's result: the
		 * analyzer must see that a failed init never returns 0. */
		(void)sc_errorf(SC_ENOMEM,
				"sc_grid_reference: out of memory for the "
				"sums of %zu rows and %zu columns",
				nr, nc);
		return SC_ENOMEM;
	}
	for (int64_t r = 0; r < gr->h; r++) {
		for (int64_t c = 0; c < gr->w; c++) {
			int64_t v = gr->value[r * gr->w + c];

			if (v == GRID_UNSET)
				continue;
			s->row[r] += v;
			s->col[c] += v;
			s->row_live[r] = s->col_live[c] = true;
		}
	}
	if (gr->seq > 0) { /* the stamp cell, alone in its row and column */
		s->row[gr->h] = s->col[gr->w] = (int64_t)gr->seq;
		s->row_live[gr->h] = s->col_live[gr->w] = true;
	}
	return 0;
}

/* The grid output: (r, W, row sum) and (H, c, column sum). */
static int
grid_ref_grid(const struct sc_grid *gr, const struct grid_sums *s,
	      struct sc_batch_builder *b)
{
	uint64_t row[3];
	int rc = 0;

	for (int64_t r = 0; r <= gr->h && !rc; r++) {
		if (!s->row_live[r])
			continue;
		row[0] = sc_enc_i64(r);
		row[1] = sc_enc_i64(gr->w + 1);
		row[2] = sc_enc_i64(s->row[r]);
		rc = sc_batch_builder_push(
		    b, row, (uint32_t)(sizeof(row) / sizeof(row[0])), 1);
	}
	for (int64_t c = 0; c <= gr->w && !rc; c++) {
		if (!s->col_live[c])
			continue;
		row[0] = sc_enc_i64(gr->h + 1);
		row[1] = sc_enc_i64(c);
		row[2] = sc_enc_i64(s->col[c]);
		rc = sc_batch_builder_push(
		    b, row, (uint32_t)(sizeof(row) / sizeof(row[0])), 1);
	}
	return rc;
}

/* The totals output: (r, row sum) per live row, (H, sum of the column
 * sums) when a column is live. */
static int
grid_ref_totals(const struct sc_grid *gr, const struct grid_sums *s,
		struct sc_batch_builder *b)
{
	uint64_t row[2];
	int64_t all = 0;
	bool any = false;
	int rc = 0;

	for (int64_t r = 0; r <= gr->h && !rc; r++) {
		if (!s->row_live[r])
			continue;
		row[0] = sc_enc_i64(r);
		row[1] = sc_enc_i64(s->row[r]);
		rc = sc_batch_builder_push(
		    b, row, (uint32_t)(sizeof(row) / sizeof(row[0])), 1);
	}
	for (int64_t c = 0; c <= gr->w; c++) {
		all += s->col[c];
		any = any || s->col_live[c];
	}
	if (any && !rc) {
		row[0] = sc_enc_i64(gr->h + 1);
		row[1] = sc_enc_i64(all);
		rc = sc_batch_builder_push(
		    b, row, (uint32_t)(sizeof(row) / sizeof(row[0])), 1);
	}
	return rc;
}

int
sc_grid_reference(const struct sc_grid *gr, int output, struct sc_batch **out)
{
	struct sc_batch_builder b;
	struct grid_sums s = {0};
	bool is_grid;
	int rc;

	if (!gr || !out ||
	    (output != gr->n.out_grid && output != gr->n.out_totals))
		return sc_errorf(SC_EINVAL,
				 "sc_grid_reference: node %d is not "
				 "an output of the grid",
				 output);
	is_grid = output == gr->n.out_grid;
	if ((rc = grid_sums_init(gr, &s)) != 0)
		return rc;
	if ((rc = sc_batch_builder_init(&b, is_grid ? 3 : 2)) != 0)
		goto cleanup_sums;
	rc = is_grid ? grid_ref_grid(gr, &s, &b) : grid_ref_totals(gr, &s, &b);
	if (!rc)
		rc = sc_batch_builder_finish(&b, out);
	sc_batch_builder_fini(&b);
cleanup_sums:
	grid_sums_fini(&s);
	return rc;
}

/* Index of the first row where a and b differ (or the shorter count). */
static size_t
grid_first_difference(const struct sc_batch *a, const struct sc_batch *b)
{
	size_t n = sc_batch_count(a) < sc_batch_count(b) ? sc_batch_count(a)
							 : sc_batch_count(b);
	uint32_t nc = sc_batch_ncols(a);

	for (size_t i = 0; i < n; i++) {
		if (memcmp(sc_batch_row(a, i), sc_batch_row(b, i),
			   nc * sizeof(uint64_t)) != 0 ||
		    sc_batch_weight(a, i) != sc_batch_weight(b, i))
			return i;
	}
	return n;
}

int
sc_grid_verify(const struct sc_grid *gr, int output, const struct sc_batch *got)
{
	struct sc_batch *want = NULL;
	size_t i;
	int rc;

	if (!got)
		return sc_errorf(SC_EINVAL, "sc_grid_verify: NULL batch");
	if ((rc = sc_grid_reference(gr, output, &want)) != 0 || !want)
		return rc ? rc : SC_ENOMEM;
	if (sc_batch_ncols(got) == sc_batch_ncols(want) &&
	    sc_batch_equal(got, want)) {
		sc_batch_release(want);
		return 0;
	}
	if (sc_batch_ncols(got) != sc_batch_ncols(want)) {
		rc = sc_errorf(
		    SC_ESTATE, "grid output %d: %u columns, expected %u",
		    output, sc_batch_ncols(got), sc_batch_ncols(want));
	} else {
		i = grid_first_difference(got, want);
		rc = sc_errorf(
		    SC_ESTATE,
		    "grid output %d: %zu rows, expected %zu; first "
		    "difference at row %zu (key %lld)",
		    output, sc_batch_count(got), sc_batch_count(want), i,
		    i < sc_batch_count(want)
			? (long long)sc_dec_i64(sc_batch_row(want, i)[0])
			: -1LL);
	}
	sc_batch_release(want);
	return rc;
}

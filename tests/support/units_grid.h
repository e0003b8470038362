/*
 * units_grid.h - the staged grid example as a graph (the seeds' staged
 * example): cell edits -> the sum per row and per column -> a grid
 * projection (each group drawn in a cell of the border: row r's sum at
 * (r, W), column c's at (H, c)) with a total per row of the projection.
 *
 *   cells(row, col, val) --> agg_row: sum(val) by row ------\
 *          \--> by_col(col, row, val) --> agg_col: by col -> proj_r/proj_c
 *                      --> grid = proj_r + proj_c --> out "grid"
 *                      --> totals: sum(val) by grid row --> out "totals"
 *
 * An edit of a cell retracts its old value and inserts the new one
 * (ug_grid_edits). The "staged" placement is the seeds' PLACEMENT: unit 0
 * holds the cells and both aggregates, unit 1 the projection and totals.
 *
 * Header-only, with no dependency on the test libraries, so that the
 * benchmarks (bench/bench_shard.c) use the same workload.
 */
#ifndef SC_TEST_UNITS_GRID_H
#define SC_TEST_UNITS_GRID_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "operators/aggregate.h"
#include "operators/base.h"
#include "operators/batch.h"
#include "operators/graph.h"
#include "operators/schema.h"

struct ug_grid {
	struct sc_graph *g;
	int64_t h, w;		      /* grid size: rows, columns */
	int cells;		      /* input node */
	int agg_row, agg_col, totals; /* the keyed nodes */
	int out_grid, out_totals;     /* output nodes */
	int64_t *value;		      /* h * w current values (host side) */
	uint64_t rng;		      /* edit generator state */
};

/* (row, sum) -> (row, W, sum) */
static int
ug_proj_row(void *ctx, const uint64_t *row, uint64_t *out)
{
	const struct ug_grid *gr = ctx;

	out[0] = row[0];
	out[1] = sc_enc_i64(gr->w);
	out[2] = row[1];
	return 0;
}

/* (col, sum) -> (H, col, sum) */
static int
ug_proj_col(void *ctx, const uint64_t *row, uint64_t *out)
{
	const struct ug_grid *gr = ctx;

	out[0] = sc_enc_i64(gr->h);
	out[1] = row[0];
	out[2] = row[1];
	return 0;
}

static inline int
ug_sum_spec(struct sc_graph *g, int from, uint32_t ncols, uint32_t col)
{
	struct sc_aggregate_spec sp;

	memset(&sp, 0, sizeof(sp));
	sp.ncols = ncols;
	sp.k = 1;
	sp.kind = SC_AGG_SUM;
	sp.col = col;
	sp.col_type = SC_TYPE_I64;
	return sc_graph_aggregate(g, from, &sp);
}

/* Build the grid graph (h x w cells, none set); 0 or an error. */
static inline int
ug_grid_init(struct ug_grid *gr, int64_t h, int64_t w, uint64_t seed)
{
	enum sc_type t3[3] = {SC_TYPE_I64, SC_TYPE_I64, SC_TYPE_I64};
	uint32_t by_col_cols[3] = {1, 0, 2};
	struct sc_schema s3;
	int by_col, pr, pc, grid;
	int rc;

	memset(gr, 0, sizeof(*gr));
	gr->h = h;
	gr->w = w;
	gr->rng = seed;
	gr->value = malloc((size_t)(h * w) * sizeof(int64_t));
	if (!gr->value || (rc = sc_graph_create(&gr->g)) != 0)
		return SC_ENOMEM;
	for (int64_t i = 0; i < h * w; i++)
		gr->value[i] = -1; /* unset */
	if ((rc = sc_schema_init(&s3, 3, t3, NULL)) != 0)
		return rc;
	gr->cells = sc_graph_input(gr->g, "cells", &s3);
	gr->agg_row = ug_sum_spec(gr->g, gr->cells, 3, 2);
	by_col = sc_graph_index_by(gr->g, gr->cells, by_col_cols, 3);
	gr->agg_col = ug_sum_spec(gr->g, by_col, 3, 2);
	pr = sc_graph_map(gr->g, gr->agg_row, &s3, ug_proj_row, gr);
	pc = sc_graph_map(gr->g, gr->agg_col, &s3, ug_proj_col, gr);
	grid = sc_graph_plus(gr->g, pr, pc);
	gr->out_grid = sc_graph_output(gr->g, "grid", grid);
	gr->totals = ug_sum_spec(gr->g, grid, 3, 2);
	gr->out_totals = sc_graph_output(gr->g, "totals", gr->totals);
	if (gr->out_totals < 0)
		return gr->out_totals;
	sc_graph_set_name(gr->g, gr->agg_row, "agg_row");
	sc_graph_set_name(gr->g, by_col, "by_col");
	sc_graph_set_name(gr->g, gr->agg_col, "agg_col");
	sc_graph_set_name(gr->g, pr, "proj_row");
	sc_graph_set_name(gr->g, pc, "proj_col");
	sc_graph_set_name(gr->g, grid, "grid_cells");
	sc_graph_set_name(gr->g, gr->totals, "row_totals");
	return 0;
}

static inline void
ug_grid_fini(struct ug_grid *gr)
{
	sc_graph_destroy(gr->g);
	free(gr->value);
	memset(gr, 0, sizeof(*gr));
}

/* The staged placement map (unit of each node): 0 = cells and the
 * aggregates, 1 = the projection and totals. n = node count. */
static inline void
ug_grid_staged(const struct ug_grid *gr, int32_t *map, size_t n)
{
	for (size_t i = 0; i < n; i++)
		map[i] = (int)i <= gr->agg_col ? 0 : 1;
}

/*
 * ug_grid_edits - a batch of `n` random cell edits, each the retraction
 * of the cell's old value (if it had one) and the insertion of the new one
 * (0..99); two edits of one cell in a batch consolidate into one. The
 * host's view of the values moves on. Returns the batch or NULL.
 */
static inline struct sc_batch *
ug_grid_edits(struct ug_grid *gr, size_t n)
{
	uint64_t *rows = malloc(2 * n * 3 * sizeof(uint64_t));
	int64_t *w = malloc(2 * n * sizeof(int64_t));
	struct sc_batch *b = NULL;
	size_t k = 0;

	if (!rows || !w)
		goto out;
	for (size_t i = 0; i < n; i++) {
		uint64_t x = sc_splitmix_next(&gr->rng);
		int64_t r = (int64_t)(x % (uint64_t)gr->h);
		int64_t c = (int64_t)((x >> 20) % (uint64_t)gr->w);
		int64_t v = (int64_t)((x >> 40) % 100);
		int64_t *cell = &gr->value[r * gr->w + c];

		if (v == *cell)
			continue;
		if (*cell >= 0) { /* an edit of a cell already set */
			rows[k * 3] = sc_enc_i64(r);
			rows[k * 3 + 1] = sc_enc_i64(c);
			rows[k * 3 + 2] = sc_enc_i64(*cell);
			w[k++] = -1;
		}
		rows[k * 3] = sc_enc_i64(r);
		rows[k * 3 + 1] = sc_enc_i64(c);
		rows[k * 3 + 2] = sc_enc_i64(v);
		w[k++] = 1;
		*cell = v;
	}
	if (sc_batch_from_records(3, rows, w, k, &b) != 0)
		b = NULL;
out:
	free(rows);
	free(w);
	return b;
}

#endif /* SC_TEST_UNITS_GRID_H */

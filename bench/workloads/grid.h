/*
 * grid.h - the grid workload (the seeds' staged example), seeded
 * and deterministic, for `subcirc run/place/stress` and the benchmarks.
 *
 *   cells(row, col, val) --> agg_row: sum(val) by row -----------\
 *          \--> by_col(col, row, val) --> agg_col: sum by col --+
 *   proj_row: (r, sum) -> (r, W, sum)   proj_col: (c, sum) -> (H, c, sum)
 *   grid = proj_row + proj_col --> output "grid"
 *   row_totals: sum(val) of grid by grid row --> output "totals"
 *
 * A batch is a list of cell edits; an edit of a cell retracts its old
 * value (if it had one) and inserts the new one, which always differs, so
 * every edit is a real change. Values are 0..99.
 *
 * The stamp. Every batch also sets one cell of its own, (rows, cols), to
 * the batch's sequence number (1, 2, ...). It is the only cell of its row
 * and of its column, so the total of grid row `rows` in the "totals"
 * output is exactly the sequence number of the last batch that has come
 * through the whole pipeline: a callback on that output's deltas
 * (sc_grid_stamp) measures the latency from submit to output without
 * tagging rows. Deltas coalesce, so a stamp s says that every batch up to
 * s has come through (on the stamp's path; a sharded stage may still hold
 * other rows of the same batch). The grid is therefore (rows + 1) x
 * (cols + 1) cells, H = rows + 1 and W = cols + 1 the projection's border.
 *
 * The reference (sc_grid_reference) is each output's integral computed
 * from scratch from the host's view of the final cell values, with no
 * operator code at all, so a run can verify what the runtime settled to.
 *
 * Fault injection (for `subcirc stress --panic-rate`): with fault_rate > 0
 * a projection callback fails (SC_ECALLBACK) for a row whose seeded hash
 * falls under the rate, which makes the unit that runs it panic. The same
 * row always fails or never does, so a seeded schedule replays. For the
 * build's own error paths, build_fail_at = k makes the k-th graph call
 * of sc_grid_create (a node or a name) fail with SC_ENOMEM, as running
 * out of memory there would: every node id is checked, so whichever call
 * fails, sc_grid_create returns its error (and frees what it built).
 *
 * Threads: one host thread builds and generates; the graph's callbacks only
 * read constant fields, so any number of circuits may run them at once.
 */
#ifndef SC_BENCH_WORKLOADS_GRID_H
#define SC_BENCH_WORKLOADS_GRID_H

#include <stddef.h>
#include <stdint.h>

#include "operators/batch.h"
#include "operators/error.h"
#include "operators/graph.h"
#include "units/settle.h"

struct sc_grid;

struct sc_grid_opts {
	int64_t rows;	     /* cell rows, 1 .. 1<<24 */
	int64_t cols;	     /* cell columns, 1 .. 1<<24 (rows*cols <= 1<<28) */
	uint64_t seed;	     /* the edit generator's seed */
	double fault_rate;   /* 0..1: share of projection rows that fail */
	uint64_t fault_seed; /* which rows fail */
	int build_fail_at;   /* tests: graph-building call k (1..) of
				sc_grid_create fails with SC_ENOMEM; 0 none */
};

/* The grid's node ids (graph.h). */
struct sc_grid_nodes {
	int cells;	/* the input node: (row, col, val) i64 x 3 */
	int agg_row;	/* sum by row */
	int by_col;	/* re-key (col, row, val) */
	int agg_col;	/* sum by column */
	int proj_row;	/* (r, W, sum) */
	int proj_col;	/* (H, c, sum) */
	int grid;	/* proj_row + proj_col */
	int out_grid;	/* output "grid" */
	int totals;	/* sum by grid row */
	int out_totals; /* output "totals" */
};

/*
 * sc_grid_create - the graph and an empty host view (no cell set). Returns
 * 0 and *out; SC_EINVAL (NULL, sizes out of range, a rate outside 0..1,
 * naming it); SC_ENOMEM (also the one injected by build_fail_at); any
 * other error of a graph call that built a node. *out only on success.
 */
int sc_grid_create(const struct sc_grid_opts *o, struct sc_grid **out);

/*
 * sc_grid_destroy - free the workload and its graph. Returns 0, or
 * SC_EBUSY (nothing freed) while a circuit or runtime built from the graph
 * lives. NULL is allowed.
 */
int sc_grid_destroy(struct sc_grid *gr);

/* The graph (owned by the workload; frozen while circuits run it). */
struct sc_graph *sc_grid_graph(const struct sc_grid *gr);

/* The node ids. */
void sc_grid_nodes(const struct sc_grid *gr, struct sc_grid_nodes *out);

/*
 * sc_grid_staged - the "staged" manual placement (the seeds' PLACEMENT):
 * unit 0 holds the cells and both aggregates (and by_col), unit 1 the
 * projections, the grid, the totals and the outputs. Writes the unit of
 * every node into map[0..n) for sc_placement_manual(g, map, n, 2, ...).
 * Returns 0, or SC_EINVAL (NULL, or n not the graph's node count).
 */
int sc_grid_staged(const struct sc_grid *gr, int32_t *map, size_t n);

/*
 * sc_grid_next - the next batch of `edits` cell edits (>= 1) plus the
 * stamp, as a new batch for the "cells" input (*out, caller releases).
 * The same seed gives the same batches in the same order. The host view
 * moves on. Returns 0, SC_EINVAL, SC_ENOMEM (nothing changed then).
 */
int sc_grid_next(struct sc_grid *gr, size_t edits, struct sc_batch **out);

/*
 * The grid as a settle workload (units/settle.h): sc_grid_settle_step is
 * an sc_settle_gen_fn whose ctx is a struct sc_grid_feed; submission i is
 * sc_grid_next(gr, edits) to the "cells" input. Returns what
 * sc_grid_next does.
 */
struct sc_grid_feed {
	struct sc_grid *gr; /* borrowed */
	size_t edits;	    /* cell edits per batch, >= 1 */
};
int sc_grid_settle_step(void *ctx, size_t i, struct sc_settle_step *out);

/* sc_grid_seq - how many batches sc_grid_next has made (the last stamp). */
uint64_t sc_grid_seq(const struct sc_grid *gr);

/* sc_grid_edits - how many cell edits those batches held (stamps not
 * counted). */
uint64_t sc_grid_edits(const struct sc_grid *gr);

/*
 * sc_grid_stamp - from a delta of the "totals" output (or the totals
 * node): the stamp it inserts. Returns 0 and *seq, or SC_ENOENT when the
 * delta does not insert one. Any thread (reads only the delta and a
 * constant).
 */
int sc_grid_stamp(const struct sc_grid *gr, const struct sc_batch *delta,
		  uint64_t *seq);

/*
 * sc_grid_reference - the integral of output node `output` (out_grid or
 * out_totals) computed from scratch from the host view. Returns 0 and *out
 * (caller releases); SC_EINVAL (not one of the two outputs); SC_ENOMEM.
 */
int sc_grid_reference(const struct sc_grid *gr, int output,
		      struct sc_batch **out);

/*
 * sc_grid_verify - compare `got` (an integral of `output`) with the
 * reference. Returns 0 when equal; SC_ESTATE with a message naming the
 * first row that differs; errors of sc_grid_reference.
 */
int sc_grid_verify(const struct sc_grid *gr, int output,
		   const struct sc_batch *got);

#endif /* SC_BENCH_WORKLOADS_GRID_H */

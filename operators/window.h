/*
 * window.h - tumbling and hopping windows over a time column.
 *
 * A window assigns each row to the time intervals [start, start + width)
 * that contain its time t, where starts are the multiples of `hop` (the
 * epoch, time 0, is a window boundary). A tumbling window is the hopping
 * window whose hop equals its width: every row is in exactly one window.
 * With hop < width, windows overlap and a row is in ceil-ish(width / hop)
 * of them (exactly the starts s = k * hop with t - width < s <= t).
 *
 * Both are plain flat_map nodes (graph.h): the output row is the input row
 * followed by ONE NEW COLUMN, the window's start, of the time column's type,
 * with the input row's weight. Being a flat_map, a window is linear, so it
 * is incremental for free: a retraction of a row retracts it from each of
 * its windows. Group by the window (index_by to put the start first, then
 * aggregate) to get per-window results.
 *
 * Time columns are i64 or u64 (encoded, schema.h); start is computed with
 * floor division, so negative i64 times fall in the window below them. A
 * start that would fall below the type's range is skipped (such a window
 * cannot be represented); a row whose own window cannot be represented
 * fails the step with SC_EOVERFLOW.
 *
 * Waterlines (waterline.h). A window node is known to the graph as one:
 * its input's waterlines pass to the same columns, and a waterline W on
 * the time column gives the start column the smallest start s with
 * s + width > W (a row at t >= W lies only in windows that end after t),
 * so an aggregate grouped by the start can drop the windows below it.
 */
#ifndef SC_WINDOW_H
#define SC_WINDOW_H

#ifdef __cplusplus
extern "C" {
#endif

#include <stdint.h>

#include "operators/graph.h"

/* The most windows one row may fall into (width / hop), to keep a careless
 * hop from multiplying a stream a millionfold. */
#define SC_WINDOW_MAX_OVERLAP 1024

/*
 * sc_window_tumbling - add a node after `from` that appends the start of
 * the width-wide window containing column `time_col`. Returns the node id
 * or: SC_EINVAL (g NULL, width <= 0), SC_ESCHEMA (time_col out of range, or
 * no room for one more column), SC_ETYPE (time column neither i64 nor
 * u64), SC_ENOENT, SC_EBUSY, SC_ENOMEM, or a negative `from` as it is.
 */
int sc_window_tumbling(struct sc_graph *g, int from, uint32_t time_col,
		       int64_t width);

/*
 * sc_window_hopping - as tumbling, with windows of `width` starting every
 * `hop` (0 < hop <= width, width / hop <= SC_WINDOW_MAX_OVERLAP, else
 * SC_EINVAL); each row is emitted once per window containing it.
 */
int sc_window_hopping(struct sc_graph *g, int from, uint32_t time_col,
		      int64_t width, int64_t hop);

#ifdef __cplusplus
}
#endif

#endif /* SC_WINDOW_H */

/*
 * window.c - tumbling and hopping windows as flat_map nodes (see window.h).
 */
#include "operators/window.h"
#include "operators/graph_int.h"

#include <stdlib.h>
#include <string.h>

/* What the flat_map callback needs; owned by the graph. */
struct window {
	uint32_t ncols; /* input columns */
	uint32_t col;	/* the time column */
	bool is_signed; /* i64 (else u64) */
	__int128 width; /* window width, > 0 */
	__int128 hop;	/* distance between starts, 0 < hop <= width */
};

static __int128
time_of(const struct window *w, uint64_t word)
{
	return w->is_signed ? (__int128)sc_dec_i64(word)
			    : (__int128)sc_dec_u64(word);
}

static bool
representable(const struct window *w, __int128 s)
{
	if (w->is_signed)
		return s >= INT64_MIN && s <= INT64_MAX;
	return s >= 0 && s <= (__int128)UINT64_MAX;
}

static uint64_t
encode(const struct window *w, __int128 s)
{
	return w->is_signed ? sc_enc_i64((int64_t)s) : sc_enc_u64((uint64_t)s);
}

/* floor(t / hop) * hop, in 128 bits (cannot overflow there). */
static __int128
floor_start(__int128 t, __int128 hop)
{
	__int128 q = t / hop;

	if (t % hop != 0 && t < 0)
		q--;
	return q * hop;
}

static int
window_emit(void *ctx, const uint64_t *row, struct sc_emitter *out)
{
	const struct window *w = ctx;
	uint64_t buf[SC_SCHEMA_MAX_COLS];
	__int128 t = time_of(w, row[w->col]);
	__int128 s = floor_start(t, w->hop);
	int rc;

	if (!representable(w, s))
		return sc__fail(SC_EOVERFLOW,
				"window: the window of time %lld "
				"starts outside the column's range",
				(long long)t);
	memcpy(buf, row, w->ncols * sizeof(uint64_t));
	for (; s > t - w->width && representable(w, s); s -= w->hop) {
		buf[w->ncols] = encode(w, s);
		rc = sc_emit(out, buf);
		if (rc)
			return rc;
	}
	return 0;
}

static void
window_drop(void *ctx)
{
	free(ctx);
}

static int
window_hopping_body(struct sc_graph *g, int from, uint32_t time_col,
		    int64_t width, int64_t hop)
{
	const struct sc_schema *in;
	struct sc_schema out;
	struct window *w;
	int id;

	if (from < 0)
		return from;
	if (!g)
		return sc__fail(SC_EINVAL, "sc_window: graph is NULL");
	in = sc_graph_schema(g, from);
	if (!in)
		return sc__fail(SC_ENOENT, "sc_window: no node %d", from);
	if (width <= 0 || hop <= 0 || hop > width ||
	    width / hop > SC_WINDOW_MAX_OVERLAP)
		return sc__fail(SC_EINVAL,
				"sc_window: width %lld and hop %lld: want 0 < "
				"hop <= width, width / hop <= %d",
				(long long)width, (long long)hop,
				SC_WINDOW_MAX_OVERLAP);
	if (time_col >= in->ncols || in->ncols >= SC_SCHEMA_MAX_COLS)
		return sc__fail(SC_ESCHEMA,
				"sc_window: time column %u of a %u-column "
				"stream (and room for one more column)",
				time_col, in->ncols);
	if (in->types[time_col] != SC_TYPE_I64 &&
	    in->types[time_col] != SC_TYPE_U64)
		return sc__fail(SC_ETYPE,
				"sc_window: time column %u is %s, want i64 or "
				"u64",
				time_col, sc_type_name(in->types[time_col]));
	w = malloc(sizeof(*w));
	if (!w)
		return sc__fail(SC_ENOMEM, "sc_window: no memory");
	w->ncols = in->ncols;
	w->col = time_col;
	w->is_signed = in->types[time_col] == SC_TYPE_I64;
	w->width = width;
	w->hop = hop;
	out = *in;
	out.types[out.ncols++] = in->types[time_col];
	id = sc__graph_flat_map_owned(g, from, &out, window_emit, w,
				      window_drop);
	if (id >= 0) { /* for the waterline transfer (waterline.h) */
		g->nodes[id].window = true;
		g->nodes[id].win_col = time_col;
		g->nodes[id].win_width = width;
		g->nodes[id].win_hop = hop;
	}
	return id;
}

static int
window_tumbling_body(struct sc_graph *g, int from, uint32_t time_col,
		     int64_t width)
{
	return sc_window_hopping(g, from, time_col, width, width);
}

int
sc_window_hopping(struct sc_graph *g, int from, uint32_t time_col,
		  int64_t width, int64_t hop)
{
	return sc__errwrap(window_hopping_body(g, from, time_col, width, hop),
			   "sc_window_hopping");
}

int
sc_window_tumbling(struct sc_graph *g, int from, uint32_t time_col,
		   int64_t width)
{
	return sc__errwrap(window_tumbling_body(g, from, time_col, width),
			   "sc_window_tumbling");
}

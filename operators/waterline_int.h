/*
 * waterline_int.h - the inside of waterline.h: the waterlines of one
 * stream, their transfer through a node, and the horizon a kernel's
 * cleanup sweeps against. Internal to operators/.
 *
 * waterline.c and graph.c call each other, and only each other: the
 * transfer walks the graph in topological order (sc__graph_topo), and the
 * graph's cut asks which columns of each boundary stream carry a static
 * waterline (sc__wl_static). They are one module in two files.
 */
#ifndef SC_WATERLINE_INT_H
#define SC_WATERLINE_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "operators/schema.h"
#include "operators/waterline.h"

struct sc__node;
struct sc_join;
struct sc_antijoin;
struct sc_distinct;
struct sc_aggregate;
struct sc_topk;
struct sc_multiagg;

/* The waterlines of one stream: v[i] is valid for the columns of mask. */
struct sc__wl {
	uint32_t mask;		       /* bit i: column i carries one */
	int64_t v[SC_SCHEMA_MAX_COLS]; /* the values (waterline.h) */
};

/*
 * sc__wl_transfer - the waterlines of node nd's output from those of its
 * inputs (in[p] for port p; NULL: none known). The table of waterline.h.
 */
void sc__wl_transfer(const struct sc_graph *g, const struct sc__node *nd,
		     const struct sc__wl *const *in, struct sc__wl *out);

/*
 * sc__wl_static - the waterline columns of every node of g (masks[id], room
 * for g->n), in one pass in topological order. 0, or sc__graph_topo's
 * codes. A graph without lateness declared has none: all zero, no walk.
 */
int sc__wl_static(const struct sc_graph *g, uint32_t *masks, const char *who);

/* The value of an encoded time word of type t, u64 clamped to INT64_MAX. */
static inline int64_t
sc__wl_value(enum sc_type t, uint64_t word)
{
	if (t == SC_TYPE_I64)
		return sc_dec_i64(word);
	return word > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)word;
}

/* The smallest encoded word of type t whose value is >= v. */
static inline uint64_t
sc__wl_word(enum sc_type t, int64_t v)
{
	if (t == SC_TYPE_I64)
		return sc_enc_i64(v);
	return v < 0 ? 0 : (uint64_t)v;
}

/*
 * A horizon: a row is dead (no future delta can reach it) when, for some
 * i < n, its column col[i] is below min[i] (encoded words, compared as
 * unsigned integers, which is the order of i64 and u64, schema.h).
 */
struct sc__horizon {
	uint32_t n;			  /* conditions */
	uint32_t col[SC_SCHEMA_MAX_COLS]; /* row columns */
	uint64_t min[SC_SCHEMA_MAX_COLS]; /* lowest live word */
};

static inline bool
sc__horizon_dead(const struct sc__horizon *h, const uint64_t *row)
{
	for (uint32_t i = 0; i < h->n; i++)
		if (row[h->col[i]] < h->min[i])
			return true;
	return false;
}

/* Add the condition "column col below value v (type t) is dead", unless
 * v says nothing. */
static inline void
sc__horizon_add(struct sc__horizon *h, uint32_t col, enum sc_type t, int64_t v)
{
	if (v == SC_WATERLINE_NONE || (t == SC_TYPE_U64 && v <= 0))
		return;
	h->col[h->n] = col;
	h->min[h->n] = sc__wl_word(t, v);
	h->n++;
}

/*
 * The sweeps: each visits at most about `budget` rows of the kernel's state
 * and drops the dead ones (waterline.h, "Cleanup"). They never fail: short
 * of memory a sweep leaves its rows for a later one.
 */
struct sc_trace;
void sc__trace_sweep(struct sc_trace *t, const struct sc__horizon *h,
		     size_t budget);
void sc__trace_sweep_fini(struct sc_trace *t);

struct sc__rowhash;
/* Visit `budget` slots from *cursor; call drop(ctx, rec) on each dead
 * record, then remove it. */
void sc__rowhash_sweep(struct sc__rowhash *rh, const struct sc__horizon *h,
		       size_t *cursor, size_t budget,
		       void (*drop)(void *ctx, const uint64_t *rec), void *ctx);

/* ha: the horizon of a's rows (from b's waterlines), hb of b's. */
void sc__join_sweep(struct sc_join *j, const struct sc__horizon *ha,
		    const struct sc__horizon *hb, size_t budget);
void sc__antijoin_sweep(struct sc_antijoin *aj, const struct sc__horizon *ha,
			const struct sc__horizon *hb, size_t budget);
/* Set the time bounds of a join (sc_graph_join_within). */
void sc__join_set_within(struct sc_join *j, uint32_t lo, uint32_t hi,
			 uint32_t t);
void sc__distinct_sweep(struct sc_distinct *d, const struct sc__horizon *h,
			size_t budget);
/* h over the key columns (the input's first k). */
void sc__aggregate_sweep(struct sc_aggregate *agg, const struct sc__horizon *h,
			 size_t budget);
void sc__topk_sweep(struct sc_topk *tk, const struct sc__horizon *h,
		    size_t budget);
void sc__multiagg_sweep(struct sc_multiagg *m, const struct sc__horizon *h,
			size_t budget);

#endif /* SC_WATERLINE_INT_H */

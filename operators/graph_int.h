/*
 * graph_int.h - the inside of a graph, shared by graph.c, the circuit's
 * files and window.c, and the walk upstream that units/runtime.c shares
 * with circuit.c. Not a public header: users read a graph through
 * graph.h.
 */
#ifndef SC_GRAPH_INT_H
#define SC_GRAPH_INT_H

#include "operators/batch.h"
#include "operators/graph.h"
#include "operators/waterline.h"

/* One node. Every field is written when the node is added and never again
 * (except inputs[0] of a feedback, by sc_graph_bind, and name). */
struct sc__node {
	enum sc_node_kind kind;	 /* what it computes */
	char *name;		 /* unique, malloc'ed */
	bool named;		 /* name set by the user (not "<kind>#<id>") */
	struct sc_schema schema; /* of the output stream */
	uint32_t nin;		 /* ports */
	int *in;		 /* stream read at each port (malloc'ed) */
	uint32_t key;		 /* join/antijoin/aggregate/topk key columns */
	bool stream;		 /* output: a stream output, keeps nothing */
	uint32_t ncols_idx;	 /* index_by: columns in cols */
	uint32_t cols[SC_SCHEMA_MAX_COLS]; /* index_by: source columns */
	union {
		sc_map_fn map;
		sc_filter_fn filter;
		sc_flat_map_fn flat_map;
	} fn;			  /* the user callback, by kind */
	void *ctx;		  /* passed to fn */
	void (*drop)(void *ctx);  /* frees ctx with the graph, or NULL */
	void *spec;		  /* aggregate, topk: a malloc'ed copy of the
				   * spec */
	struct sc__mono *mono;	  /* map/flat_map: monotone columns declared
				   * (malloc'ed, waterline.h), or NULL */
	uint32_t nmono;		  /* entries in mono */
	bool window;		  /* flat_map made by window.c */
	uint32_t win_col;	  /* window: the time column */
	int64_t win_width;	  /* window: width */
	int64_t win_hop;	  /* window: hop */
	bool within;		  /* join: time-bounded (join_within) */
	uint32_t w_lo, w_hi, w_t; /* join_within: a.lo, a.hi, b.t */
};

/* A monotone column of a map or flat_map: out_col = fn(in_col), or
 * in_col + offset when fn is NULL (waterline.h). */
struct sc__mono {
	uint32_t out_col;  /* column of the node's output */
	uint32_t in_col;   /* column of its input */
	sc_monotone_fn fn; /* non-decreasing, or NULL */
	void *ctx;	   /* passed to fn */
	int64_t offset;	   /* when fn is NULL */
};

struct sc_graph {
	struct sc__node *nodes;	  /* n of them, by id */
	size_t n;		  /* nodes */
	size_t cap;		  /* room in nodes */
	size_t circuits;	  /* live circuits built from the graph */
	struct sc_lateness *late; /* lateness declarations (malloc'ed) */
	size_t nlate, late_cap;	  /* in use, room */
};

/* The references a flat_map step was handed (sc_emit_own): ids of the
 * output schema's table, let go when the step's delta is (circuit.c,
 * tick_begin) or the circuit goes. */
struct sc__owned {
	uint64_t *ids;
	size_t n, cap; /* how many, room */
};

/* The sink of a flat_map callback: the circuit's builder, the weight of
 * the row being mapped, and where the references it hands over go. */
struct sc_emitter {
	struct sc_batch_builder *bld; /* rows go here */
	uint32_t ncols;		      /* output columns */
	int64_t weight;		      /* of the input row */
	struct sc__owned *owned;      /* the node's (circuit_int.h) */
	struct sc_symtab *symbols;    /* the output schema's, or NULL */
};

/*
 * sc__graph_topo - order the nodes of a part (in_part[id] true) so that
 * every node comes after the producers it reads inside the part, ignoring
 * the edges into delay nodes (a delay's output is last tick's input, so it
 * depends on nothing this tick). Writes *norder ids into order (room for
 * g->n). Returns 0, SC_ECYCLE (with a message naming one cycle),
 * SC_ESTATE (unbound feedback), SC_ENOMEM. `who` prefixes messages.
 */
int sc__graph_topo(const struct sc_graph *g, const bool *in_part, int *order,
		   size_t *norder, const char *who);

/*
 * What sc__graph_walk_up asks of each vertex v it reaches: 0, with the
 * vertices v reads in *in[0 .. *nin) (negative entries are skipped; *nin
 * 0: none, or none to follow), to go on; or a nonzero code, which stops
 * the walk and is its result.
 */
typedef int (*sc__walk_fn)(void *ctx, int v, const int **in, uint32_t *nin);

/*
 * sc__graph_walk_up - visit vertex `from` of n (0 .. n-1) and every vertex
 * upstream of it, each once, depth first from the last input pushed, as
 * visit returns each one's inputs; feedback closes cycles, which the
 * walk's marks cut. The vertices are the caller's: a graph's node ids
 * (units/runtime.c, over sc_graph_node_info's inputs) or a circuit's
 * slots (sc_circuit_check, over its ports), so a walk over a part costs
 * O(part). O(n) memory, freed before it returns. Returns 0 (every vertex
 * reached was visited), visit's first nonzero code, or SC_ENOMEM (nothing
 * visited; the message is `who`).
 */
int sc__graph_walk_up(size_t n, int from, sc__walk_fn visit, void *ctx,
		      const char *who);

/* sc__graph_fprint_node - "id name kind [inputs] (types)", no newline. */
void sc__graph_fprint_node(FILE *f, const struct sc_graph *g, int id);

#endif /* SC_GRAPH_INT_H */

/*
 * circuit_int.h - the inside of a circuit (circuit.h), shared by its
 * files. Library internal.
 *
 * One idea per file:
 *
 *   circuit.c       build a part, feed and read its streams, run a tick
 *                   (the numbered steps of circuit.h), merge work, figures;
 *   circuit_ops.c   the step of one node: its operator or kernel, chosen
 *                   by kind (sc__circuit_node_run), and the kernels'
 *                   create, work, pending and state by kind;
 *   circuit_wide.c  the cold pass of a node whose delta left int64: its
 *                   delta again in 128 bits, emitted over steps;
 *   circuit_wl.c    waterlines after each step and the cleanup sweeps
 *                   they allow (waterline.h), and the calls that read and
 *                   raise them.
 *
 * Threads: none. A circuit belongs to one thread at a time (circuit.h);
 * every field below is that thread's.
 */
#ifndef SC_CIRCUIT_INT_H
#define SC_CIRCUIT_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "operators/batch_int.h"
#include "operators/circuit.h"
#include "operators/graph_int.h"
#include "operators/symbol_int.h"
#include "operators/trace.h"
#include "operators/waterline_int.h"

/* What a stream is to this circuit. */
enum sc__role {
	/* an input node or a boundary input: fed by the host */
	SC__ROLE_FED = 1,
	/* computed by an operator of the part */
	SC__ROLE_OP = 2
};

/*
 * The run-time state of one stream the circuit knows, in a slot of its
 * own. The slots are dense: first the part's nodes in the order a step runs
 * them, then the boundary inputs. So a step touches the part's slots and
 * nothing else, and costs O(part) whatever the size of the graph it was cut
 * from (with K units, each step would otherwise pay for all K parts).
 */
struct sc__node_rt {
	const struct sc__node *nd;  /* the graph's node (frozen) */
	const int *in;		    /* slot of the stream at each port */
	int id;			    /* the node's id in the graph */
	uint8_t role;		    /* enum sc__role */
	struct sc_batch *delta;	    /* this tick's delta; NULL = empty */
	struct sc_batch **frames;   /* fed since the last step, in order */
	size_t nframes, frames_cap; /* frames held, room */
	/* Frames a step summed into frames[0], which then takes no holds
	 * of its own: their holds cover it, since a sum names no id its
	 * parts do not (circuit.c, frames_cover). */
	struct sc_batch **cover;
	size_t ncover, cover_cap; /* how many, room */
	/* The same for this tick's delta: let go when it is (delta_let_go) */
	struct sc_batch **spent;
	size_t nspent, spent_cap;     /* how many, room */
	uint64_t fmass;		      /* sum of |w| over frames, saturating */
	struct sc_batch *state;	      /* integrate: the integral; differentiate:
				       * last input; delay: the latched input */
	struct sc_trace *trace;	      /* output: the integral of its deltas */
	void *kernel;		      /* join/antijoin/distinct/aggregate */
	struct sc_batch_builder *bld; /* map/filter/flat_map: the circuit's
				       * builder for its width (shared) */
	size_t inserted;	      /* rows absorbed by state this tick */
	uint64_t total;		      /* rows absorbed so far (bounds N) */
	struct sc_node_stats stats;   /* rows read and written */
	sc_delta_fn cb;		      /* delta callback, or NULL */
	void *cb_ctx;		      /* its context */
	struct sc__symcols sym;	      /* the symbol columns of its rows */
	bool held;		      /* its delta holds its symbols */
	struct sc_late *late;	      /* input: its lateness declarations
				       * (in c->late), or NULL */
	uint32_t nlate;		      /* how many */
	bool carrying;		      /* counted in c->carried */
	struct sc__wide *carry;	      /* weight this node still owes its
				       * output, for the next passes, or NULL */
	struct sc_batch *carry_hold;  /* carry's rows, holding symbols */
	struct sc__owned owned;	      /* flat_map: ids its delta owns */
};

struct sc_circuit {
	struct sc_graph *g;	/* frozen while the circuit lives */
	size_t n;		/* graph nodes (ids 0..n-1) */
	struct sc__node_rt *rt; /* nslots of them: the part, then cut.in */
	size_t norder;		/* nodes in the part (slots 0..norder-1) */
	size_t nslots;		/* norder + cut.nin */
	int *by_id;		/* the slots, sorted by node id (lookups) */
	int *ports;		/* every rt[].in, end to end */
	struct sc_cut cut;	/* the part's boundary */
	size_t work_min;	/* least merge work per trace per step */
	uint64_t steps;		/* ticks run */
	int failed;		/* 0, or the code of the step that failed */
	char why[256];		/* the message of that failure */
	uint64_t *row;		/* a scratch row of SC_SCHEMA_MAX_COLS words */
	/* One builder per row width, shared by the nodes that build batches
	 * of that width: nodes run one at a time and a builder is empty
	 * between uses, so sharing keeps one set of warm buffers in cache
	 * instead of one per node. */
	struct sc_batch_builder *bld[SC_SCHEMA_MAX_COLS + 1];
	/* Waterlines (waterline.h): NULL unless the graph declares a
	 * lateness, so a circuit without one pays a branch per step. */
	struct sc__wl *wl;    /* nslots of them: each stream's, after the
			       * last step */
	uint32_t *wl_cols;    /* nslots: the columns each carries */
	struct sc_late *late; /* the part's inputs' declarations */
	size_t nlate;	      /* how many */
	bool no_cleanup;      /* sc_circuit_set_cleanup(c, false) */
	bool sweeps;	      /* some node has a kernel: a cleanup sweep
			       * may drop the last hold on an id */
	size_t carried;	      /* nodes whose carry is not empty */
};

/* The graph's node `id` (frozen while the circuit lives). */
static inline const struct sc__node *
sc__circuit_node(const struct sc_circuit *c, int id)
{
	return &c->g->nodes[id];
}

/* Rows of a delta, NULL being the empty one. */
static inline size_t
sc__circuit_rows(const struct sc_batch *b)
{
	return b ? b->count : 0;
}

/* A user callback's code as the step reports it. */
static inline int
sc__circuit_user_code(int rc)
{
	return rc > 0 ? SC_ECALLBACK : rc;
}

/* --- circuit.c ------------------------------------------------------------ */

/* sc__circuit_known - the slot (>= 0) of stream `id` if c knows it, else a
 * negative code (SC_EINVAL for NULL c, SC_ENOENT) whose message starts
 * with `fn`. */
int sc__circuit_known(const struct sc_circuit *c, int id, const char *fn);

/* --- circuit_ops.c: one node's step, kernels by kind ---------------------- */

/* sc__circuit_node_run - run the operator of the node in slot r: set its
 * delta for this tick (NULL: empty) and count its rows. Returns 0, or the
 * operator's code (the step then fails). */
int sc__circuit_node_run(struct sc_circuit *c, struct sc__node_rt *r);

/* sc__circuit_kernel_create - the kernel of a stateful node (join,
 * antijoin, distinct, aggregate, topk) into *k; NULL for other kinds.
 * Returns 0 or the kernel's create error. */
int sc__circuit_kernel_create(const struct sc_circuit *c,
			      const struct sc__node *nd, void **k);

/* sc__circuit_kernel_symbols - point r's kernel at the symbol tables of
 * its inputs' schemas (symbol.h). */
void sc__circuit_kernel_symbols(const struct sc_circuit *c,
				const struct sc__node_rt *r);

/* sc__circuit_kernel_destroy - destroy kernel k of a node of `kind`. */
void sc__circuit_kernel_destroy(enum sc_node_kind kind, void *k);

/* sc__circuit_kernel_work - up to `budget` units of merge work on k.
 * Returns 0 or the kernel's error. */
int sc__circuit_kernel_work(enum sc_node_kind kind, void *k, size_t budget);

/* sc__circuit_kernel_pending - merge work k still owes. */
size_t sc__circuit_kernel_pending(enum sc_node_kind kind, const void *k);

/* sc__circuit_kernel_state - rows and bytes k holds, into *st. */
void sc__circuit_kernel_state(enum sc_node_kind kind, const void *k,
			      struct sc_node_state *st);

/* --- circuit_wide.c ------------------------------------------------------- */

/*
 * sc__circuit_node_wide - the node in slot r after its operator returned
 * rc with *out: on SC_EOVERFLOW its delta again into its carry, 128 bits
 * wide; then the next pass of the carry, clamped into int64, into *out.
 * Returns 0, or the code that fails the step. Cold.
 */
int sc__circuit_node_wide(struct sc_circuit *c, struct sc__node_rt *r,
			  struct sc_batch *a, struct sc_batch *b, int rc,
			  struct sc_batch **out);

/* --- circuit_wl.c --------------------------------------------------------- */

/* sc__circuit_wl_build - the waterline state of a circuit whose graph
 * declares lateness. Returns 0, SC_ENOMEM, or sc__wl_static's error. */
int sc__circuit_wl_build(struct sc_circuit *c);

/* sc__circuit_wl_step - after a step: every stream's waterlines, then a
 * bounded cleanup sweep of each kernel. Cannot fail. */
void sc__circuit_wl_step(struct sc_circuit *c);

#endif /* SC_CIRCUIT_INT_H */

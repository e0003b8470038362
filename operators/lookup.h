/*
 * lookup.h - a lookup join: each row of a stream joined with the rows of a
 * constant table that have its key.
 *
 * The table is given once, when the node is added (read from a file, say),
 * and never changes. The node is then the linear map
 *
 *   r  ->  { pick(r ++ t) : t in T, t's key = r's key }
 *
 * with r's weight, a flat_map (graph.h): a retraction of r retracts its
 * matches, a row with no match has no output, and the node keeps nothing
 * of the stream. That is what sets it apart from sc_graph_join of the
 * stream and an input fed the table once: a join must keep every row of
 * both sides (a row of either may meet one that comes later), so its state
 * grows with the stream; here the table is known to be complete, so the
 * state is the table alone, and any placement may split the stream
 * anyhow, each part reading the same table.
 *
 * The table is a bag: its first nkey columns are its key, a row given
 * twice matches twice (its output's weight doubles), and keys need not be
 * distinct. The node copies the rows, sorted by key (a probe is a binary
 * search), so the caller's array may go once the call returns.
 *
 * The output's columns are those out_cols picks from the concatenation of
 * the stream's row (columns 0 .. in.ncols - 1) and the table's row
 * (in.ncols ..), SQL's select list; with out_cols NULL, the stream's row
 * followed by the table's columns past its key.
 *
 * Symbols. The table's symbol columns hold ids of the stream's table
 * (the schema's `symbols`); the node holds one reference on each symbol
 * word of its rows until the graph is destroyed, so the ids it emits live
 * at least as long as it does, and the caller may release its own.
 */
#ifndef SC_LOOKUP_H
#define SC_LOOKUP_H

#ifdef __cplusplus
extern "C" {
#endif

#include <stddef.h>
#include <stdint.h>

#include "operators/graph.h"

/* What sc_graph_lookup joins with. Caller storage, read during the call. */
struct sc_lookup_spec {
	uint32_t nkey;		       /* key columns, >= 1 */
	const uint32_t *stream_key;    /* the stream's key columns, nkey */
	const struct sc_schema *table; /* its first nkey columns the key */
	const uint64_t *rows;	       /* n rows of table->ncols words */
	size_t n;		       /* rows; 0 is an empty table */
	const uint32_t *out_cols;      /* nout picks; NULL: the default */
	uint32_t nout;		       /* with out_cols: 1 .. max cols */
};

/*
 * sc_graph_lookup - add a node after `from` that joins each of its rows
 * with the table's rows of the same key (above). Returns the node id or:
 *   SC_EINVAL   g or spec NULL, nkey 0, rows NULL with n > 0, out_cols
 *               with nout 0, a word of a row that is no value of its
 *               column's type, or a symbol id that is not live
 *   SC_ESCHEMA  a key or picked column out of range, nkey above the
 *               table's columns, an output wider than SC_SCHEMA_MAX_COLS,
 *               or table symbols of another table than the stream's
 *   SC_ETYPE    a stream key column of another type than the table's
 *   SC_ENOENT   no node `from`
 *   SC_EBUSY    the graph is frozen (a circuit of it lives)
 *   SC_ENOMEM   nothing added, no reference kept
 * and a negative `from` as it is.
 */
int sc_graph_lookup(struct sc_graph *g, int from,
		    const struct sc_lookup_spec *spec);

#ifdef __cplusplus
}
#endif

#endif /* SC_LOOKUP_H */

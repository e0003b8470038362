/*
 * graph.c - building, checking, reading and cutting operator graphs (see
 * graph.h for the design).
 */
#include "operators/graph_int.h"
#include "operators/aggregate.h"
#include "operators/aggregate_int.h"
#include "operators/multiagg.h"
#include "operators/session.h"
#include "operators/topk.h"
#include "operators/waterline_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const kind_names[SC__NODE_KIND_COUNT] = {
    "input",	"output",   "map",	 "filter",    "flat_map",
    "index_by", "plus",	    "negate",	 "minus",     "join",
    "antijoin", "distinct", "aggregate", "integrate", "differentiate",
    "delay",	"feedback", "topk",	 "multiagg",  "session",
};

const char *
sc_node_kind_name(enum sc_node_kind kind)
{
	if ((int)kind < 0 || kind >= SC__NODE_KIND_COUNT)
		return "?";
	return kind_names[kind];
}

/* --- life ----------------------------------------------------------------- */

int
sc_graph_create(struct sc_graph **out)
{
	struct sc_graph *g;

	if (!out)
		return sc__fail(SC_EINVAL, "sc_graph_create: out is NULL");
	g = calloc(1, sizeof(*g));
	if (!g)
		return sc__fail(SC_ENOMEM, "sc_graph_create: no memory");
	*out = g;
	return 0;
}

/* Atomic, so that circuits of one frozen graph may be built and destroyed
 * on different threads (units/ builds one per unit). */
void
sc__graph_freeze(struct sc_graph *g)
{
	__atomic_fetch_add(&g->circuits, 1, __ATOMIC_ACQ_REL);
}

void
sc__graph_thaw(struct sc_graph *g)
{
	__atomic_fetch_sub(&g->circuits, 1, __ATOMIC_ACQ_REL);
}

static size_t
live_circuits(const struct sc_graph *g)
{
	return __atomic_load_n(&g->circuits, __ATOMIC_ACQUIRE);
}

static void
node_fini(struct sc__node *nd)
{
	free(nd->name);
	free(nd->in);
	free(nd->spec);
	free(nd->mono);
	if (nd->drop)
		nd->drop(nd->ctx);
}

int
sc_graph_destroy(struct sc_graph *g)
{
	if (!g)
		return 0;
	if (live_circuits(g))
		return sc__fail(SC_EBUSY,
				"sc_graph_destroy: %zu circuit(s) built from "
				"the graph are still alive",
				live_circuits(g));
	for (size_t i = 0; i < g->n; i++)
		node_fini(&g->nodes[i]);
	free(g->nodes);
	free(g->late);
	free(g);
	return 0;
}

/* --- helpers for adding nodes --------------------------------------------- */

static bool
valid_id(const struct sc_graph *g, int id)
{
	return id >= 0 && (size_t)id < g->n;
}

/* The usual preconditions of an add: graph present and not frozen. */
static int
check_mutable(const struct sc_graph *g, const char *fn)
{
	if (!g)
		return sc__fail(SC_EINVAL, "%s: graph is NULL", fn);
	if (live_circuits(g))
		return sc__fail(SC_EBUSY,
				"%s: the graph is frozen while %zu circuit(s) "
				"built from it are alive",
				fn, live_circuits(g));
	return 0;
}

/*
 * A negative stream id is an error passed through from a nested call: the
 * code is returned as it is, and the message names this call too, quoting
 * the inner call's (the last one raised on this thread), so sc_errmsg()
 * never shows an earlier call's words as this one's.
 */
static int
pass_through(int from, const char *fn)
{
	static const char from_words[] = ", passed through from: ";
	const char *first = sc_errmsg(), *at;
	char inner[256];

	/* Through several nested calls, only the first error is quoted. */
	while ((at = strstr(first, from_words)) != NULL)
		first = at + sizeof(from_words) - 1;
	(void)snprintf(inner, sizeof(inner), "%s", first);
	return sc__fail(from, "%s: input stream is %d (%s)%s%s", fn, from,
			sc_errname(from), inner[0] ? from_words : "", inner);
}

/* An input stream id: a negative one is an error passed through. */
static int
check_from(const struct sc_graph *g, int from, const char *fn)
{
	if (from < 0)
		return pass_through(from, fn);
	if (!valid_id(g, from))
		return sc__fail(SC_ENOENT, "%s: no node %d (graph has %zu)", fn,
				from, g->n);
	return 0;
}

static int
find_name(const struct sc_graph *g, const char *name)
{
	for (size_t i = 0; i < g->n; i++)
		if (strcmp(g->nodes[i].name, name) == 0)
			return (int)i;
	return -1;
}

static int
check_name(const struct sc_graph *g, const char *name, const char *fn)
{
	if (!name || !name[0])
		return sc__fail(SC_EINVAL, "%s: name is NULL or empty", fn);
	if (find_name(g, name) >= 0)
		return sc__fail(SC_EINVAL, "%s: a node is already named '%s'",
				fn, name);
	return 0;
}

static char *
dup_str(const char *s)
{
	size_t n = strlen(s) + 1;
	char *d = malloc(n);

	if (d)
		memcpy(d, s, n);
	return d;
}

/*
 * Append a node of `kind` with `schema` reading `in[0..nin)` (all checked
 * by the caller); `tmpl` (may be NULL) gives the kind-specific fields.
 * Returns its id or SC_ENOMEM. On failure nothing is added and nothing of
 * tmpl is taken over (the caller frees its spec/ctx).
 */
static int
node_add(struct sc_graph *g, enum sc_node_kind kind, const char *name,
	 const struct sc_schema *schema, const int *in, uint32_t nin,
	 const struct sc__node *tmpl)
{
	struct sc__node nd;
	/* schema often points into g->nodes, which the realloc may move */
	struct sc_schema sch = *schema;
	char buf[48];

	if (g->n == g->cap) {
		size_t cap = g->cap ? 2 * g->cap : 16;
		struct sc__node *p = realloc(g->nodes, cap * sizeof(*p));

		if (!p)
			return sc__fail(SC_ENOMEM, "sc_graph: no memory");
		g->nodes = p;
		g->cap = cap;
	}
	if (tmpl)
		nd = *tmpl;
	else
		memset(&nd, 0, sizeof(nd));
	nd.kind = kind;
	nd.schema = sch;
	nd.named = name != NULL;
	if (!name) {
		(void)snprintf(buf, sizeof(buf), "%s#%zu", kind_names[kind],
			       g->n);
		name = buf;
	}
	nd.name = dup_str(name);
	nd.nin = nin;
	nd.in = nin ? malloc(nin * sizeof(int)) : NULL;
	if (!nd.name || (nin && !nd.in)) {
		free(nd.name);
		free(nd.in);
		return sc__fail(SC_ENOMEM, "sc_graph: no memory");
	}
	if (nin)
		memcpy(nd.in, in, nin * sizeof(int));
	g->nodes[g->n] = nd;
	return (int)g->n++;
}

static const struct sc_schema *
schema_of(const struct sc_graph *g, int id)
{
	return &g->nodes[id].schema;
}

/* A node that reads one stream and keeps its schema. */
static int
add_unary_same(struct sc_graph *g, enum sc_node_kind kind, int a,
	       const char *fn)
{
	int rc = check_mutable(g, fn);

	if (rc == 0)
		rc = check_from(g, a, fn);
	if (rc)
		return rc;
	return node_add(g, kind, NULL, schema_of(g, a), &a, 1, NULL);
}

static bool
has_symbols(const struct sc_schema *s)
{
	for (uint32_t i = 0; i < s->ncols; i++)
		if (s->types[i] == SC_TYPE_SYMBOL)
			return true;
	return false;
}

/* Streams that meet in one node must take their symbols from one table:
 * the node's output names one, and a circuit holds every symbol of its
 * rows in that table (symbol.h), so ids of another table would count
 * against strings they do not name. */
static int
check_one_table(const struct sc_graph *g, int a, int b, const char *fn)
{
	const struct sc_schema *sa = schema_of(g, a), *sb = schema_of(g, b);

	if (sa->symbols && sb->symbols && sa->symbols != sb->symbols &&
	    has_symbols(sa) && has_symbols(sb))
		return sc__fail(SC_ESCHEMA,
				"%s: streams '%s' and '%s' take their symbols "
				"from two different tables",
				fn, g->nodes[a].name, g->nodes[b].name);
	return 0;
}

static int
check_same_schema(const struct sc_graph *g, int a, int b, const char *fn)
{
	if (!sc_schema_equal(schema_of(g, a), schema_of(g, b)))
		return sc__fail(SC_ESCHEMA,
				"%s: streams '%s' (%u columns) and '%s' (%u "
				"columns) have different schemas",
				fn, g->nodes[a].name, schema_of(g, a)->ncols,
				g->nodes[b].name, schema_of(g, b)->ncols);
	return check_one_table(g, a, b, fn);
}

static int
check_schema_arg(const struct sc_schema *s, const char *fn)
{
	if (!s)
		return sc__fail(SC_EINVAL, "%s: schema is NULL", fn);
	if (s->ncols < 1 || s->ncols > SC_SCHEMA_MAX_COLS)
		return sc__fail(SC_ESCHEMA, "%s: schema has %u columns", fn,
				s->ncols);
	for (uint32_t i = 0; i < s->ncols; i++)
		if ((int)s->types[i] < 0 || s->types[i] >= SC__TYPE_COUNT)
			return sc__fail(SC_ETYPE,
					"%s: column %u has unknown type %d", fn,
					i, (int)s->types[i]);
	return 0;
}

/* --- the node kinds ------------------------------------------------------- */

int
sc_graph_input(struct sc_graph *g, const char *name,
	       const struct sc_schema *schema)
{
	int rc = check_mutable(g, "sc_graph_input");

	if (rc == 0)
		rc = check_name(g, name, "sc_graph_input");
	if (rc == 0)
		rc = check_schema_arg(schema, "sc_graph_input");
	if (rc)
		return rc;
	return node_add(g, SC_NODE_INPUT, name, schema, NULL, 0, NULL);
}

static int
add_output(struct sc_graph *g, const char *name, int from, bool stream,
	   const char *fn)
{
	struct sc__node t;
	int rc = check_mutable(g, fn);

	if (rc == 0)
		rc = check_from(g, from, fn);
	if (rc == 0)
		rc = check_name(g, name, fn);
	if (rc)
		return rc;
	memset(&t, 0, sizeof(t));
	t.stream = stream;
	return node_add(g, SC_NODE_OUTPUT, name, schema_of(g, from), &from, 1,
			&t);
}

int
sc_graph_output(struct sc_graph *g, const char *name, int from)
{
	return add_output(g, name, from, false, "sc_graph_output");
}

int
sc_graph_output_stream(struct sc_graph *g, const char *name, int from)
{
	return add_output(g, name, from, true, "sc_graph_output_stream");
}

/* map, filter and flat_map: one input, a callback, a context. */
static int
add_callback_node(struct sc_graph *g, enum sc_node_kind kind, int from,
		  const struct sc_schema *out_schema, void *fn, void *ctx,
		  void (*drop)(void *), const char *who)
{
	struct sc__node t;
	int rc = check_mutable(g, who);

	if (rc == 0)
		rc = check_from(g, from, who);
	if (rc == 0 && !fn)
		rc = sc__fail(SC_EINVAL, "%s: callback is NULL", who);
	if (rc == 0 && kind != SC_NODE_FILTER)
		rc = check_schema_arg(out_schema, who);
	if (rc)
		return rc;
	memset(&t, 0, sizeof(t));
	if (kind == SC_NODE_MAP)
		t.fn.map = (sc_map_fn)fn;
	else if (kind == SC_NODE_FILTER)
		t.fn.filter = (sc_filter_fn)fn;
	else
		t.fn.flat_map = (sc_flat_map_fn)fn;
	t.ctx = ctx;
	t.drop = drop;
	return node_add(g, kind, NULL,
			kind == SC_NODE_FILTER ? schema_of(g, from)
					       : out_schema,
			&from, 1, &t);
}

int
sc_graph_map(struct sc_graph *g, int from, const struct sc_schema *out_schema,
	     sc_map_fn fn, void *ctx)
{
	return add_callback_node(g, SC_NODE_MAP, from, out_schema, (void *)fn,
				 ctx, NULL, "sc_graph_map");
}

int
sc_graph_filter(struct sc_graph *g, int from, sc_filter_fn fn, void *ctx)
{
	return add_callback_node(g, SC_NODE_FILTER, from, NULL, (void *)fn, ctx,
				 NULL, "sc_graph_filter");
}

int
sc_graph_flat_map(struct sc_graph *g, int from,
		  const struct sc_schema *out_schema, sc_flat_map_fn fn,
		  void *ctx)
{
	return add_callback_node(g, SC_NODE_FLAT_MAP, from, out_schema,
				 (void *)fn, ctx, NULL, "sc_graph_flat_map");
}

int
sc__graph_flat_map_owned(struct sc_graph *g, int from,
			 const struct sc_schema *out_schema, sc_flat_map_fn fn,
			 void *ctx, void (*drop)(void *ctx))
{
	int id = add_callback_node(g, SC_NODE_FLAT_MAP, from, out_schema,
				   (void *)fn, ctx, drop, "sc_graph_flat_map");

	if (id < 0 && drop)
		drop(ctx);
	return id;
}

int
sc_graph_index_by(struct sc_graph *g, int from, const uint32_t *cols,
		  uint32_t n)
{
	struct sc_schema s;
	struct sc__node t;
	const struct sc_schema *src;
	int rc = check_mutable(g, "sc_graph_index_by");

	if (rc == 0)
		rc = check_from(g, from, "sc_graph_index_by");
	if (rc)
		return rc;
	if (!cols)
		return sc__fail(SC_EINVAL, "sc_graph_index_by: cols is NULL");
	if (n < 1 || n > SC_SCHEMA_MAX_COLS)
		return sc__fail(SC_ESCHEMA,
				"sc_graph_index_by: %u columns, want 1..%d", n,
				SC_SCHEMA_MAX_COLS);
	src = schema_of(g, from);
	memset(&t, 0, sizeof(t));
	s = *src;
	s.ncols = n;
	for (uint32_t i = 0; i < n; i++) {
		if (cols[i] >= src->ncols)
			return sc__fail(SC_ESCHEMA,
					"sc_graph_index_by: column %u of '%s' "
					"does not exist (%u columns)",
					cols[i], g->nodes[from].name,
					src->ncols);
		s.types[i] = src->types[cols[i]];
		t.cols[i] = cols[i];
	}
	t.ncols_idx = n;
	return node_add(g, SC_NODE_INDEX_BY, NULL, &s, &from, 1, &t);
}

int
sc_graph_sum(struct sc_graph *g, const int *from, uint32_t n)
{
	int rc = check_mutable(g, "sc_graph_sum");

	if (rc == 0 && !from)
		rc = sc__fail(SC_EINVAL, "sc_graph_sum: from is NULL");
	if (rc == 0 && (n < 1 || n > SC_GRAPH_MAX_INPUTS))
		rc = sc__fail(SC_EINVAL, "sc_graph_sum: %u inputs, want 1..%d",
			      n, SC_GRAPH_MAX_INPUTS);
	for (uint32_t i = 0; rc == 0 && i < n; i++)
		rc = check_from(g, from[i], "sc_graph_sum");
	for (uint32_t i = 1; rc == 0 && i < n; i++)
		rc = check_same_schema(g, from[0], from[i], "sc_graph_sum");
	if (rc)
		return rc;
	return node_add(g, SC_NODE_PLUS, NULL, schema_of(g, from[0]), from, n,
			NULL);
}

static int
graph_plus_body(struct sc_graph *g, int a, int b)
{
	int in[2] = {a, b};

	if (a < 0)
		return pass_through(a, "sc_graph_plus");
	if (b < 0)
		return pass_through(b, "sc_graph_plus");
	return sc_graph_sum(g, in, 2);
}

int
sc_graph_negate(struct sc_graph *g, int a)
{
	return add_unary_same(g, SC_NODE_NEGATE, a, "sc_graph_negate");
}

int
sc_graph_minus(struct sc_graph *g, int a, int b)
{
	int in[2] = {a, b};
	int rc = check_mutable(g, "sc_graph_minus");

	if (rc == 0)
		rc = check_from(g, a, "sc_graph_minus");
	if (rc == 0)
		rc = check_from(g, b, "sc_graph_minus");
	if (rc == 0)
		rc = check_same_schema(g, a, b, "sc_graph_minus");
	if (rc)
		return rc;
	return node_add(g, SC_NODE_MINUS, NULL, schema_of(g, a), in, 2, NULL);
}

/* Join and antijoin: two inputs keyed on their first k columns. */
static int
check_keyed_pair(const struct sc_graph *g, int a, int b, uint32_t k,
		 const char *fn)
{
	const struct sc_schema *sa, *sb;
	int rc = check_mutable(g, fn);

	if (rc == 0)
		rc = check_from(g, a, fn);
	if (rc == 0)
		rc = check_from(g, b, fn);
	if (rc)
		return rc;
	sa = schema_of(g, a);
	sb = schema_of(g, b);
	if (k > sa->ncols || k > sb->ncols)
		return sc__fail(SC_ESCHEMA,
				"%s: key of %u columns, but '%s' has %u and "
				"'%s' has %u",
				fn, k, g->nodes[a].name, sa->ncols,
				g->nodes[b].name, sb->ncols);
	for (uint32_t i = 0; i < k; i++)
		if (sa->types[i] != sb->types[i])
			return sc__fail(
			    SC_ESCHEMA,
			    "%s: key column %u is %s in '%s' but "
			    "%s in '%s'",
			    fn, i, sc_type_name(sa->types[i]), g->nodes[a].name,
			    sc_type_name(sb->types[i]), g->nodes[b].name);
	return check_one_table(g, a, b, fn);
}

int
sc_graph_join(struct sc_graph *g, int a, int b, uint32_t k)
{
	struct sc_schema s;
	struct sc__node t;
	const struct sc_schema *sa, *sb;
	int in[2] = {a, b};
	int rc = check_keyed_pair(g, a, b, k, "sc_graph_join");

	if (rc)
		return rc;
	sa = schema_of(g, a);
	sb = schema_of(g, b);
	if (sa->ncols + sb->ncols - k > SC_SCHEMA_MAX_COLS)
		return sc__fail(SC_ESCHEMA,
				"sc_graph_join: output would have %u columns "
				"(at most %d)",
				sa->ncols + sb->ncols - k, SC_SCHEMA_MAX_COLS);
	s = *sa;
	s.ncols = sa->ncols + sb->ncols - k;
	for (uint32_t i = k; i < sb->ncols; i++)
		s.types[sa->ncols + i - k] = sb->types[i];
	memset(&t, 0, sizeof(t));
	t.key = k;
	return node_add(g, SC_NODE_JOIN, NULL, &s, in, 2, &t);
}

/* The three columns of a time-bounded join: past the key, one time type. */
static int
check_within(const struct sc_graph *g, int a, int b, uint32_t k, uint32_t lo,
	     uint32_t hi, uint32_t t)
{
	const struct sc_schema *sa = schema_of(g, a), *sb = schema_of(g, b);
	enum sc_type ty;

	if (lo < k || hi < k || t < k || lo >= sa->ncols || hi >= sa->ncols ||
	    t >= sb->ncols)
		return sc__fail(SC_ESCHEMA,
				"sc_graph_join_within: columns lo %u, hi %u "
				"of '%s' (%u columns) and t %u of '%s' (%u): "
				"each must exist and lie past the %u key "
				"columns",
				lo, hi, g->nodes[a].name, sa->ncols, t,
				g->nodes[b].name, sb->ncols, k);
	ty = sb->types[t];
	if ((ty != SC_TYPE_I64 && ty != SC_TYPE_U64) || sa->types[lo] != ty ||
	    sa->types[hi] != ty)
		return sc__fail(SC_ETYPE,
				"sc_graph_join_within: lo, hi and t are %s, "
				"%s and %s: want one type, i64 or u64",
				sc_type_name(sa->types[lo]),
				sc_type_name(sa->types[hi]), sc_type_name(ty));
	return 0;
}

int
sc_graph_join_within(struct sc_graph *g, int a, int b, uint32_t k,
		     uint32_t a_lo_col, uint32_t a_hi_col, uint32_t b_time_col)
{
	int rc = check_keyed_pair(g, a, b, k, "sc_graph_join_within");
	int id;

	if (rc == 0)
		rc = check_within(g, a, b, k, a_lo_col, a_hi_col, b_time_col);
	if (rc)
		return rc;
	id = sc_graph_join(g, a, b, k);
	if (id < 0)
		return id;
	g->nodes[id].within = true;
	g->nodes[id].w_lo = a_lo_col;
	g->nodes[id].w_hi = a_hi_col;
	g->nodes[id].w_t = b_time_col;
	return id;
}

int
sc_graph_antijoin(struct sc_graph *g, int a, int b, uint32_t k)
{
	struct sc__node t;
	int in[2] = {a, b};
	int rc = check_keyed_pair(g, a, b, k, "sc_graph_antijoin");

	if (rc)
		return rc;
	memset(&t, 0, sizeof(t));
	t.key = k;
	return node_add(g, SC_NODE_ANTIJOIN, NULL, schema_of(g, a), in, 2, &t);
}

int
sc_graph_distinct(struct sc_graph *g, int a)
{
	return add_unary_same(g, SC_NODE_DISTINCT, a, "sc_graph_distinct");
}

/* The output value type of an aggregate, as aggregate.h documents it. */
static int
agg_out_type(const struct sc_aggregate_spec *spec, enum sc_type *out)
{
	bool numeric = spec->col_type == SC_TYPE_I64 ||
		       spec->col_type == SC_TYPE_U64 ||
		       spec->col_type == SC_TYPE_F64;

	switch (spec->kind) {
	case SC_AGG_COUNT:
		*out = SC_TYPE_I64;
		return 0;
	case SC_AGG_SUM:
		if (!numeric)
			break;
		*out =
		    spec->col_type == SC_TYPE_F64 ? SC_TYPE_F64 : SC_TYPE_I64;
		return 0;
	case SC_AGG_AVG:
		if (!numeric)
			break;
		*out = SC_TYPE_F64;
		return 0;
	case SC_AGG_MIN:
	case SC_AGG_MAX:
		*out = spec->col_type;
		return 0;
	default:
		return sc__fail(SC_EINVAL,
				"sc_graph_aggregate: unknown kind "
				"%d",
				(int)spec->kind);
	}
	return sc__fail(SC_ETYPE,
			"sc_graph_aggregate: cannot sum or average "
			"a %s column",
			sc_type_name(spec->col_type));
}

/* The spec must describe the input stream it aggregates. */
static int
check_agg_spec(const struct sc_graph *g, int a,
	       const struct sc_aggregate_spec *spec, uint32_t flags)
{
	const struct sc_schema *s = schema_of(g, a);

	if (spec->ncols != s->ncols)
		return sc__fail(SC_ESCHEMA,
				"sc_graph_aggregate: spec says %u columns, "
				"'%s' has %u",
				spec->ncols, g->nodes[a].name, s->ncols);
	if (spec->k >= s->ncols)
		return sc__fail(SC_ESCHEMA,
				"sc_graph_aggregate: key of %u columns leaves "
				"no value column in '%s' (%u columns)",
				spec->k, g->nodes[a].name, s->ncols);
	if (flags & ~(uint32_t)SC_AGG_NONNEGATIVE)
		return sc__fail(SC_EINVAL,
				"sc_graph_aggregate: unknown flags 0x%x",
				flags & ~(uint32_t)SC_AGG_NONNEGATIVE);
	if ((flags & SC_AGG_NONNEGATIVE) &&
	    (spec->kind == SC_AGG_MIN || spec->kind == SC_AGG_MAX))
		return sc__fail(SC_EINVAL,
				"sc_graph_aggregate: SC_AGG_NONNEGATIVE is for "
				"COUNT, SUM and AVG");
	if (spec->kind == SC_AGG_COUNT)
		return 0;
	if (spec->col >= s->ncols || s->types[spec->col] != spec->col_type)
		return sc__fail(SC_ESCHEMA,
				"sc_graph_aggregate: value column %u of '%s' "
				"is not a %s column",
				spec->col, g->nodes[a].name,
				sc_type_name(spec->col_type));
	return 0;
}

int
sc_graph_aggregate(struct sc_graph *g, int a,
		   const struct sc_aggregate_spec *spec)
{
	return sc_graph_aggregate_flags(g, a, spec, 0);
}

static int
graph_aggregate_flags_body(struct sc_graph *g, int a,
			   const struct sc_aggregate_spec *spec, uint32_t flags)
{
	struct sc__aggregate_decl *decl;
	struct sc_schema s;
	struct sc__node t;
	enum sc_type vt = SC_TYPE_I64;
	int id, rc = check_mutable(g, "sc_graph_aggregate");

	if (rc == 0)
		rc = check_from(g, a, "sc_graph_aggregate");
	if (rc)
		return rc;
	if (!spec)
		return sc__fail(SC_EINVAL, "sc_graph_aggregate: spec is NULL");
	rc = check_agg_spec(g, a, spec, flags);
	if (rc == 0)
		rc = agg_out_type(spec, &vt);
	if (rc)
		return rc;
	s = *schema_of(g, a);
	s.ncols = spec->k + 1;
	s.types[spec->k] = vt;
	memset(&t, 0, sizeof(t));
	t.key = spec->k;
	decl = malloc(sizeof(*decl));
	if (!decl)
		return sc__fail(SC_ENOMEM, "sc_graph_aggregate: no memory");
	decl->spec = *spec;
	decl->flags = flags;
	t.spec = decl; /* circuit_ops.c: sc__aggregate_create_decl */
	id = node_add(g, SC_NODE_AGGREGATE, NULL, &s, &a, 1, &t);
	if (id < 0)
		free(t.spec);
	return id;
}

/* A keyed node that keeps a copy of its spec (`size` bytes): the node,
 * or its error (the copy freed). */
static int
add_with_spec(struct sc_graph *g, enum sc_node_kind kind, int a,
	      const struct sc_schema *s, uint32_t key, const void *spec,
	      size_t size, const char *fn)
{
	struct sc__node t;
	int id;

	memset(&t, 0, sizeof(t));
	t.key = key;
	t.spec = malloc(size);
	if (!t.spec)
		return sc__fail(SC_ENOMEM, "%s: no memory", fn);
	memcpy(t.spec, spec, size);
	id = node_add(g, kind, NULL, s, &a, 1, &t);
	if (id < 0)
		free(t.spec);
	return id;
}

/* The spec's width must be the input's. */
static int
check_spec_width(const struct sc_graph *g, int a, uint32_t ncols,
		 const char *fn)
{
	if (ncols == schema_of(g, a)->ncols)
		return 0;
	return sc__fail(SC_ESCHEMA, "%s: spec says %u columns, '%s' has %u", fn,
			ncols, g->nodes[a].name, schema_of(g, a)->ncols);
}

int
sc_graph_topk(struct sc_graph *g, int a, const struct sc_topk_spec *spec)
{
	int rc = check_mutable(g, "sc_graph_topk");

	if (rc == 0)
		rc = check_from(g, a, "sc_graph_topk");
	if (rc == 0)
		rc = sc_topk_spec_check(spec, "sc_graph_topk");
	if (rc == 0)
		rc = check_spec_width(g, a, spec->ncols, "sc_graph_topk");
	if (rc)
		return rc;
	return add_with_spec(g, SC_NODE_TOPK, a, schema_of(g, a), spec->key,
			     spec, sizeof(*spec), "sc_graph_topk");
}

static int
graph_multiagg_body(struct sc_graph *g, int a,
		    const struct sc_multiagg_spec *spec)
{
	const char *fn = "sc_graph_multiagg";
	const struct sc_schema *in;
	struct sc_schema s;
	int rc = check_mutable(g, fn);

	if (rc == 0)
		rc = check_from(g, a, fn);
	if (rc == 0)
		rc = sc_multiagg_spec_check(spec, fn);
	if (rc)
		return rc;
	if ((rc = check_spec_width(g, a, spec->ncols, fn)) != 0)
		return rc;
	in = schema_of(g, a);
	s = *in;
	s.ncols = spec->k + spec->nterms;
	for (uint32_t i = 0; i < spec->nterms; i++) {
		const struct sc_magg_term *tm = &spec->terms[i];

		if (tm->kind != SC_MAGG_COUNT &&
		    in->types[tm->col] != tm->col_type)
			return sc__fail(SC_ESCHEMA,
					"%s: term %u's column %u of '%s' is "
					"%s, not %s",
					fn, i, tm->col, g->nodes[a].name,
					sc_type_name(in->types[tm->col]),
					sc_type_name(tm->col_type));
		if (tm->filter != SC_MAGG_ALL &&
		    in->types[tm->filter] != SC_TYPE_BOOL)
			return sc__fail(
			    SC_ETYPE,
			    "%s: term %u's filter column %u of '%s' "
			    "is %s, not bool",
			    fn, i, tm->filter, g->nodes[a].name,
			    sc_type_name(in->types[tm->filter]));
		(void)sc_multiagg_out_type(spec, i, &s.types[spec->k + i]);
	}
	return add_with_spec(g, SC_NODE_MULTIAGG, a, &s, spec->k, spec,
			     sizeof(*spec), fn);
}

int
sc_graph_multiagg(struct sc_graph *g, int a,
		  const struct sc_multiagg_spec *spec)
{
	return sc__errwrap(graph_multiagg_body(g, a, spec),
			   "sc_graph_multiagg");
}

static int
graph_session_body(struct sc_graph *g, int a,
		   const struct sc_session_spec *spec)
{
	const char *fn = "sc_graph_session";
	const struct sc_schema *in;
	struct sc_schema s;
	int rc = check_mutable(g, fn);

	if (rc == 0)
		rc = check_from(g, a, fn);
	if (rc == 0)
		rc = sc_session_spec_check(spec, fn);
	if (rc)
		return rc;
	if ((rc = check_spec_width(g, a, spec->ncols, fn)) != 0)
		return rc;
	in = schema_of(g, a);
	if (in->types[spec->time_col] != SC_TYPE_I64)
		return sc__fail(SC_ETYPE,
				"%s: time column %u of '%s' is %s, not i64", fn,
				spec->time_col, g->nodes[a].name,
				sc_type_name(in->types[spec->time_col]));
	s = *in;
	s.ncols = spec->k + 3;
	for (uint32_t i = 0; i < 3; i++)
		s.types[spec->k + i] = SC_TYPE_I64;
	return add_with_spec(g, SC_NODE_SESSION, a, &s, spec->k, spec,
			     sizeof(*spec), fn);
}

int
sc_graph_session(struct sc_graph *g, int a, const struct sc_session_spec *spec)
{
	return sc__errwrap(graph_session_body(g, a, spec), "sc_graph_session");
}

int
sc_graph_integrate(struct sc_graph *g, int a)
{
	return add_unary_same(g, SC_NODE_INTEGRATE, a, "sc_graph_integrate");
}

int
sc_graph_differentiate(struct sc_graph *g, int a)
{
	return add_unary_same(g, SC_NODE_DIFFERENTIATE, a,
			      "sc_graph_differentiate");
}

int
sc_graph_delay(struct sc_graph *g, int a)
{
	return add_unary_same(g, SC_NODE_DELAY, a, "sc_graph_delay");
}

int
sc_graph_feedback(struct sc_graph *g, const struct sc_schema *schema)
{
	int unbound = -1;
	int rc = check_mutable(g, "sc_graph_feedback");

	if (rc == 0)
		rc = check_schema_arg(schema, "sc_graph_feedback");
	if (rc)
		return rc;
	return node_add(g, SC_NODE_FEEDBACK, NULL, schema, &unbound, 1, NULL);
}

int
sc_graph_bind(struct sc_graph *g, int fb, int from)
{
	struct sc__node *nd;
	int rc = check_mutable(g, "sc_graph_bind");

	if (rc == 0)
		rc = check_from(g, fb, "sc_graph_bind");
	if (rc == 0)
		rc = check_from(g, from, "sc_graph_bind");
	if (rc)
		return rc;
	nd = &g->nodes[fb];
	if (nd->kind != SC_NODE_FEEDBACK)
		return sc__fail(SC_EINVAL,
				"sc_graph_bind: '%s' is a %s node, not a "
				"feedback",
				nd->name, kind_names[nd->kind]);
	if (nd->in[0] >= 0)
		return sc__fail(SC_ESTATE,
				"sc_graph_bind: '%s' is already bound to '%s'",
				nd->name, g->nodes[nd->in[0]].name);
	rc = check_same_schema(g, fb, from, "sc_graph_bind");
	if (rc)
		return rc;
	nd->in[0] = from;
	return 0;
}

int
sc_graph_set_name(struct sc_graph *g, int id, const char *name)
{
	char *copy;
	int other;
	int rc = check_mutable(g, "sc_graph_set_name");

	if (rc == 0)
		rc = check_from(g, id, "sc_graph_set_name");
	if (rc)
		return rc;
	if (!name || !name[0])
		return sc__fail(SC_EINVAL,
				"sc_graph_set_name: name is NULL or empty");
	other = find_name(g, name);
	if (other >= 0 && other != id)
		return sc__fail(SC_EINVAL,
				"sc_graph_set_name: a node is already named "
				"'%s'",
				name);
	copy = dup_str(name);
	if (!copy)
		return sc__fail(SC_ENOMEM, "sc_graph_set_name: no memory");
	free(g->nodes[id].name);
	g->nodes[id].name = copy;
	g->nodes[id].named = true;
	return 0;
}

/* --- reading -------------------------------------------------------------- */

size_t
sc_graph_node_count(const struct sc_graph *g)
{
	return g ? g->n : 0;
}

int
sc_graph_node_info(const struct sc_graph *g, int id, struct sc_node_info *out)
{
	const struct sc__node *nd;

	if (!g || !out)
		return sc__fail(SC_EINVAL, "sc_graph_node_info: NULL argument");
	if (!valid_id(g, id))
		return sc__fail(SC_ENOENT, "sc_graph_node_info: no node %d",
				id);
	nd = &g->nodes[id];
	out->kind = nd->kind;
	out->name = nd->name;
	out->schema = &nd->schema;
	out->ninputs = nd->nin;
	out->inputs = nd->in;
	out->key = nd->key;
	out->stream = nd->stream;
	out->within = nd->within;
	return 0;
}

const struct sc_schema *
sc_graph_schema(const struct sc_graph *g, int id)
{
	if (!g || !valid_id(g, id))
		return NULL;
	return &g->nodes[id].schema;
}

int
sc_graph_find(const struct sc_graph *g, const char *name)
{
	int id;

	if (!g || !name)
		return sc__fail(SC_EINVAL, "sc_graph_find: NULL argument");
	id = find_name(g, name);
	if (id < 0)
		return sc__fail(SC_ENOENT, "sc_graph_find: no node named '%s'",
				name);
	return id;
}

size_t
sc_graph_edge_count(const struct sc_graph *g)
{
	size_t n = 0;

	if (!g)
		return 0;
	for (size_t i = 0; i < g->n; i++)
		for (uint32_t p = 0; p < g->nodes[i].nin; p++)
			n += g->nodes[i].in[p] >= 0;
	return n;
}

int
sc_graph_edge(const struct sc_graph *g, size_t i, struct sc_edge_info *out)
{
	if (!g || !out)
		return sc__fail(SC_EINVAL, "sc_graph_edge: NULL argument");
	for (size_t id = 0; id < g->n; id++)
		for (uint32_t p = 0; p < g->nodes[id].nin; p++) {
			if (g->nodes[id].in[p] < 0)
				continue;
			if (i-- == 0) {
				out->from = g->nodes[id].in[p];
				out->to = (int)id;
				out->port = p;
				return 0;
			}
		}
	return sc__fail(SC_ENOENT, "sc_graph_edge: no edge of that index");
}

/* --- order and cycles ----------------------------------------------------- */

/*
 * Name one cycle among the nodes left over by Kahn's algorithm (each has an
 * unresolved producer in the part): walk producers from `start` until a
 * node repeats, then print the loop in stream direction.
 */
static int
fail_cycle(const struct sc_graph *g, const bool *in_part, const bool *done,
	   int start, const char *who)
{
	char msg[512];
	int *seen_at = malloc(g->n * sizeof(int));
	int *path = calloc(g->n + 1, sizeof(int));
	size_t len = 0, off;
	int cur = start;

	if (!seen_at || !path) {
		free(seen_at);
		free(path);
		return sc__fail(SC_ECYCLE,
				"%s: cycle without a delay through "
				"'%s'",
				who, g->nodes[start].name);
	}
	for (size_t i = 0; i < g->n; i++)
		seen_at[i] = -1;
	while (seen_at[cur] < 0) {
		const struct sc__node *nd = &g->nodes[cur];
		int next = -1;

		seen_at[cur] = (int)len;
		path[len++] = cur;
		for (uint32_t p = 0; p < nd->nin && nd->kind != SC_NODE_DELAY;
		     p++) {
			int f = nd->in[p];

			if (f >= 0 && in_part[f] && !done[f]) {
				next = f;
				break;
			}
		}
		if (next < 0)
			break; /* cannot happen: every leftover has one */
		cur = next;
	}
	/* path[seen_at[cur]..len) walks against the streams: print reversed. */
	off = (size_t)snprintf(msg, sizeof(msg), "'%s'", g->nodes[cur].name);
	for (size_t i = len; i-- > (size_t)seen_at[cur] && off < sizeof(msg);)
		off += (size_t)snprintf(msg + off, sizeof(msg) - off,
					" -> '%s'", g->nodes[path[i]].name);
	free(seen_at);
	free(path);
	return sc__fail(SC_ECYCLE, "%s: cycle without a delay: %s", who, msg);
}

/* Unresolved producers of node id inside the part (delays have none). */
static uint32_t
pending_inputs(const struct sc_graph *g, const bool *in_part, int id)
{
	const struct sc__node *nd = &g->nodes[id];
	uint32_t n = 0;

	if (nd->kind == SC_NODE_DELAY)
		return 0;
	for (uint32_t p = 0; p < nd->nin; p++)
		n += nd->in[p] >= 0 && in_part[nd->in[p]];
	return n;
}

static int
check_bound(const struct sc_graph *g, const bool *in_part, const char *who)
{
	for (size_t i = 0; i < g->n; i++)
		if (in_part[i] && g->nodes[i].kind == SC_NODE_FEEDBACK &&
		    g->nodes[i].in[0] < 0)
			return sc__fail(SC_ESTATE,
					"%s: feedback '%s' was never bound",
					who, g->nodes[i].name);
	return 0;
}

/*
 * Kahn's algorithm. Consumers are found by scanning the nodes after each
 * resolution round rather than by building adjacency lists: graphs are
 * small (hundreds of nodes) and this runs once per circuit build, so the
 * O(n * rounds) scan is simpler and fast enough.
 */
int
sc__graph_topo(const struct sc_graph *g, const bool *in_part, int *order,
	       size_t *norder, const char *who)
{
	uint32_t *need;
	bool *done;
	size_t n = 0, total = 0, head = 0;
	int rc;

	rc = check_bound(g, in_part, who);
	if (rc)
		return rc;
	need = malloc((g->n + 1) * sizeof(*need));
	done = calloc(g->n + 1, sizeof(*done));
	if (!need || !done) {
		rc = sc__fail(SC_ENOMEM, "%s: no memory", who);
		goto out_free;
	}
	for (size_t i = 0; i < g->n; i++) {
		if (!in_part[i])
			continue;
		total++;
		need[i] = pending_inputs(g, in_part, (int)i);
		if (need[i] == 0) {
			order[n++] = (int)i;
			done[i] = true;
		}
	}
	while (head < n) {
		int u = order[head++];

		for (size_t v = 0; v < g->n; v++) {
			const struct sc__node *nd = &g->nodes[v];

			if (!in_part[v] || done[v] || nd->kind == SC_NODE_DELAY)
				continue;
			for (uint32_t p = 0; p < nd->nin; p++)
				if (nd->in[p] == u)
					need[v]--;
			if (need[v] == 0) {
				order[n++] = (int)v;
				done[v] = true;
			}
		}
	}
	rc = 0;
	if (n < total) {
		for (size_t i = 0; i < g->n; i++)
			if (in_part[i] && !done[i]) {
				rc = fail_cycle(g, in_part, done, (int)i, who);
				break;
			}
	} else {
		*norder = n;
	}
out_free:
	free(need);
	free(done);
	return rc;
}

int
sc_graph_check(const struct sc_graph *g)
{
	bool *all;
	int *order;
	size_t n;
	int rc;

	if (!g)
		return sc__fail(SC_EINVAL, "sc_graph_check: graph is NULL");
	all = malloc((g->n + 1) * sizeof(*all));
	order = malloc((g->n + 1) * sizeof(*order));
	if (!all || !order) {
		free(all);
		free(order);
		return sc__fail(SC_ENOMEM, "sc_graph_check: no memory");
	}
	for (size_t i = 0; i < g->n; i++)
		all[i] = true;
	rc = sc__graph_topo(g, all, order, &n, "sc_graph_check");
	free(all);
	free(order);
	return rc;
}

/* --- cutting -------------------------------------------------------------- */

void
sc_cut_fini(struct sc_cut *c)
{
	if (!c)
		return;
	free(c->in);
	free(c->out);
	free(c->in_wl);
	free(c->out_wl);
	memset(c, 0, sizeof(*c));
}

/* Mark the part; SC_ENOENT for an id that is not a node. */
static int
mark_part(const struct sc_graph *g, const int *nodes, size_t n, bool *in_part,
	  const char *who)
{
	for (size_t i = 0; i < n; i++) {
		if (!valid_id(g, nodes[i]))
			return sc__fail(SC_ENOENT,
					"%s: no node %d (graph has "
					"%zu)",
					who, nodes[i], g->n);
		in_part[nodes[i]] = true;
	}
	return 0;
}

/*
 * Fill flags: is_in[s] if stream s is produced outside and read inside;
 * is_out[s] if produced inside and read outside.
 */
static void
mark_boundary(const struct sc_graph *g, const bool *in_part, bool *is_in,
	      bool *is_out)
{
	for (size_t v = 0; v < g->n; v++) {
		const struct sc__node *nd = &g->nodes[v];

		for (uint32_t p = 0; p < nd->nin; p++) {
			int s = nd->in[p];

			if (s < 0 || in_part[s] == in_part[v])
				continue;
			if (in_part[v])
				is_in[s] = true;
			else
				is_out[s] = true;
		}
	}
}

static int *
collect(const bool *flag, size_t n, size_t *count)
{
	size_t k = 0;
	int *ids;

	for (size_t i = 0; i < n; i++)
		k += flag[i];
	ids = malloc((k + 1) * sizeof(int));
	if (!ids)
		return NULL;
	k = 0;
	for (size_t i = 0; i < n; i++)
		if (flag[i])
			ids[k++] = (int)i;
	*count = k;
	return ids;
}

/* The waterline columns of each boundary stream (waterline.h): those of
 * the whole graph, so a boundary input carries what its stream carries. */
static int
cut_waterlines(const struct sc_graph *g, struct sc_cut *c)
{
	uint32_t *masks = malloc((g->n + 1) * sizeof(*masks));
	int rc;

	c->in_wl = calloc(c->nin + 1, sizeof(uint32_t));
	c->out_wl = calloc(c->nout + 1, sizeof(uint32_t));
	if (!masks || !c->in_wl || !c->out_wl) {
		free(masks);
		return sc__fail(SC_ENOMEM, "sc_graph_cut: no memory");
	}
	rc = sc__wl_static(g, masks, "sc_graph_cut");
	for (size_t i = 0; rc == 0 && i < c->nin; i++)
		c->in_wl[i] = masks[c->in[i]];
	for (size_t i = 0; rc == 0 && i < c->nout; i++)
		c->out_wl[i] = masks[c->out[i]];
	free(masks);
	return rc;
}

int
sc_graph_cut(const struct sc_graph *g, const int *nodes, size_t n,
	     struct sc_cut *out)
{
	struct sc_cut c = {0};
	bool *flags;
	int rc;

	if (!g || !nodes || !out || n == 0)
		return sc__fail(SC_EINVAL, "sc_graph_cut: NULL argument or "
					   "empty part");
	flags = calloc(3 * (g->n + 1), sizeof(bool));
	if (!flags)
		return sc__fail(SC_ENOMEM, "sc_graph_cut: no memory");
	rc = mark_part(g, nodes, n, flags, "sc_graph_cut");
	if (rc == 0)
		rc = check_bound(g, flags, "sc_graph_cut");
	if (rc)
		goto out_flags;
	mark_boundary(g, flags, flags + g->n + 1, flags + 2 * (g->n + 1));
	c.in = collect(flags + g->n + 1, g->n, &c.nin);
	c.out = collect(flags + 2 * (g->n + 1), g->n, &c.nout);
	if (!c.in || !c.out) {
		sc_cut_fini(&c);
		rc = sc__fail(SC_ENOMEM, "sc_graph_cut: no memory");
		goto out_flags;
	}
	rc = cut_waterlines(g, &c);
	if (rc) {
		sc_cut_fini(&c);
		goto out_flags;
	}
	*out = c;
out_flags:
	free(flags);
	return rc;
}

/* --- printing ------------------------------------------------------------- */

/* "(i64, f64)" */
static void
fprint_types(FILE *f, const struct sc_schema *s)
{
	(void)fputc('(', f);
	for (uint32_t i = 0; i < s->ncols; i++)
		(void)fprintf(f, "%s%s", i ? ", " : "",
			      sc_type_name(s->types[i]));
	(void)fputc(')', f);
}

int
sc__graph_walk_up(size_t n, int from, sc__walk_fn visit, void *ctx,
		  const char *who)
{
	bool *seen = calloc(n, sizeof(*seen));
	int *stack = malloc(n * sizeof(*stack));
	size_t sp = 0;
	int rc = 0;

	if (!seen || !stack) {
		free(seen);
		free(stack);
		return sc__fail(SC_ENOMEM, "%s", who);
	}
	seen[from] = true;
	stack[sp++] = from;
	while (sp > 0 && !rc) {
		const int *in = NULL;
		uint32_t nin = 0;

		rc = visit(ctx, stack[--sp], &in, &nin);
		for (uint32_t q = 0; rc == 0 && q < nin; q++) {
			int w = in[q];

			if (w >= 0 && !seen[w]) {
				seen[w] = true;
				stack[sp++] = w;
			}
		}
	}
	free(seen);
	free(stack);
	return rc;
}

void
sc__graph_fprint_node(FILE *f, const struct sc_graph *g, int id)
{
	const struct sc__node *nd = &g->nodes[id];

	(void)fprintf(f, "%4d %-16s %-13s [", id, nd->name,
		      kind_names[nd->kind]);
	for (uint32_t p = 0; p < nd->nin; p++)
		(void)fprintf(f, "%s%d", p ? " " : "", nd->in[p]);
	(void)fprintf(f, "] ");
	fprint_types(f, &nd->schema);
	if (nd->stream)
		(void)fprintf(f, " stream");
}

void
sc_graph_fprint(FILE *f, const struct sc_graph *g)
{
	if (!f || !g)
		return;
	(void)fprintf(f, "graph of %zu nodes\n", g->n);
	for (size_t i = 0; i < g->n; i++) {
		sc__graph_fprint_node(f, g, (int)i);
		(void)fputc('\n', f);
	}
}

int
sc_graph_aggregate_flags(struct sc_graph *g, int a,
			 const struct sc_aggregate_spec *spec, uint32_t flags)
{
	return sc__errwrap(graph_aggregate_flags_body(g, a, spec, flags),
			   "sc_graph_aggregate_flags");
}

int
sc_graph_plus(struct sc_graph *g, int a, int b)
{
	return sc__errwrap(graph_plus_body(g, a, b), "sc_graph_plus");
}

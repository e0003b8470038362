/*
 * lookup.c - the lookup join as a flat_map node whose context, owned by
 * the graph, is the table sorted by key (see lookup.h).
 */
#include "operators/lookup.h"
#include "operators/graph_int.h"
#include "operators/symbol.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* The flat_map's context: read-only once built, so any number of
 * circuits and threads probe it at once. */
struct lookup {
	uint32_t in;			   /* the stream's columns */
	uint32_t tcols;			   /* the table's columns */
	uint32_t nkey;			   /* key columns */
	uint32_t nout;			   /* output columns */
	uint32_t skey[SC_SCHEMA_MAX_COLS]; /* the stream's key columns */
	uint32_t pick[SC_SCHEMA_MAX_COLS]; /* of stream row ++ table row */
	size_t n;			   /* table rows */
	uint64_t *rows;			   /* n * tcols words, by key */
	struct sc_symtab *symbols;	   /* where the held ids live */
	uint64_t *held;			   /* symbol ids held, nheld */
	size_t nheld;
};

/* The first table row whose key is not below `key`. */
static size_t
lower_bound(const struct lookup *l, const uint64_t *key)
{
	size_t lo = 0, hi = l->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (sc_row_cmp(l->rows + mid * l->tcols, key, l->nkey) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int
lookup_emit(void *ctx, const uint64_t *row, struct sc_emitter *out)
{
	const struct lookup *l = ctx;
	uint64_t key[SC_SCHEMA_MAX_COLS], cat[2 * SC_SCHEMA_MAX_COLS];
	uint64_t buf[SC_SCHEMA_MAX_COLS];
	size_t i;

	for (uint32_t c = 0; c < l->nkey; c++)
		key[c] = row[l->skey[c]];
	i = lower_bound(l, key);
	if (i == l->n || sc_row_cmp(l->rows + i * l->tcols, key, l->nkey))
		return 0;
	memcpy(cat, row, l->in * sizeof(uint64_t));
	for (; i < l->n && !sc_row_cmp(l->rows + i * l->tcols, key, l->nkey);
	     i++) {
		int rc;

		memcpy(cat + l->in, l->rows + i * l->tcols,
		       l->tcols * sizeof(uint64_t));
		for (uint32_t c = 0; c < l->nout; c++)
			buf[c] = cat[l->pick[c]];
		rc = sc_emit(out, buf);
		if (rc)
			return rc;
	}
	return 0;
}

static void
lookup_drop(void *ctx)
{
	struct lookup *l = ctx;

	if (l->nheld)
		(void)sc_symtab_release_ids(l->symbols, l->held, l->nheld);
	free(l->held);
	free(l->rows);
	free(l);
}

/* qsort's comparison wants its state in a global: sort indices by the
 * key of the rows they name through this one instead. */
struct keyed {
	const uint64_t *row;
	uint32_t nkey;
};

static int
keyed_cmp(const void *a, const void *b)
{
	const struct keyed *x = a, *y = b;
	int c = sc_row_cmp(x->row, y->row, x->nkey);

	/* Equal keys keep the caller's order, so the output's order among a
	 * key's matches does not depend on qsort's. */
	if (c)
		return c;
	return (x->row > y->row) - (x->row < y->row);
}

/* Every word a value of its column's type; every symbol live and held.
 * On failure nothing stays held. */
static int
hold_table(struct lookup *l, const struct sc_lookup_spec *spec)
{
	const struct sc_schema *t = spec->table;
	size_t nsym = 0;

	for (uint32_t c = 0; c < t->ncols; c++)
		nsym += t->types[c] == SC_TYPE_SYMBOL;
	if (nsym && spec->n) {
		l->held = malloc(nsym * spec->n * sizeof(uint64_t));
		if (!l->held)
			return sc__fail(SC_ENOMEM, "no memory");
	}
	for (size_t i = 0; i < spec->n; i++) {
		const uint64_t *r = spec->rows + i * t->ncols;

		for (uint32_t c = 0; c < t->ncols; c++) {
			uint64_t id;

			if (t->types[c] == SC_TYPE_BOOL && r[c] > 1)
				return sc__fail(SC_EINVAL,
						"table row %zu column %u: "
						"bool word %" PRIu64
						" is not 0 or 1",
						i, c, r[c]);
			if (t->types[c] != SC_TYPE_SYMBOL)
				continue;
			id = sc_dec_symbol(r[c]);
			if (sc_symtab_retain(l->symbols, id))
				return sc__fail(SC_EINVAL,
						"table row %zu column %u: "
						"symbol %" PRIu64
						" is not live",
						i, c, id);
			l->held[l->nheld++] = id;
		}
	}
	return 0;
}

/* The rows, sorted by key, into l->rows. */
static int
sort_table(struct lookup *l, const struct sc_lookup_spec *spec)
{
	struct keyed *ix;

	if (!spec->n)
		return 0;
	ix = malloc(spec->n * sizeof(*ix));
	l->rows = malloc(spec->n * l->tcols * sizeof(uint64_t));
	if (!ix || !l->rows) {
		free(ix);
		return sc__fail(SC_ENOMEM, "no memory");
	}
	for (size_t i = 0; i < spec->n; i++)
		ix[i] = (struct keyed){spec->rows + i * l->tcols, l->nkey};
	qsort(ix, spec->n, sizeof(*ix), keyed_cmp);
	for (size_t i = 0; i < spec->n; i++)
		memcpy(l->rows + i * l->tcols, ix[i].row,
		       l->tcols * sizeof(uint64_t));
	free(ix);
	return 0;
}

static int
check_spec(const struct sc_schema *in, const struct sc_lookup_spec *spec)
{
	const struct sc_schema *t = spec->table;
	uint32_t width = in->ncols + (t ? t->ncols : 0);

	if (!t)
		return sc__fail(SC_EINVAL, "spec->table is NULL");
	if (spec->nkey == 0 || !spec->stream_key)
		return sc__fail(SC_EINVAL, "no key columns (nkey %u)",
				spec->nkey);
	if (!spec->rows && spec->n)
		return sc__fail(SC_EINVAL, "rows is NULL with n = %zu",
				spec->n);
	if (spec->out_cols && spec->nout == 0)
		return sc__fail(SC_EINVAL, "out_cols with nout 0");
	if (t->ncols == 0 || t->ncols > SC_SCHEMA_MAX_COLS ||
	    spec->nkey > t->ncols)
		return sc__fail(SC_ESCHEMA,
				"%u key columns of a %u-column table",
				spec->nkey, t->ncols);
	for (uint32_t c = 0; c < spec->nkey; c++) {
		uint32_t s = spec->stream_key[c];

		if (s >= in->ncols)
			return sc__fail(SC_ESCHEMA,
					"key column %u of a %u-column stream",
					s, in->ncols);
		if (in->types[s] != t->types[c])
			return sc__fail(SC_ETYPE,
					"the stream's key column %u is %s, "
					"the table's column %u %s",
					s, sc_type_name(in->types[s]), c,
					sc_type_name(t->types[c]));
	}
	for (uint32_t c = 0; c < t->ncols; c++)
		if (t->types[c] == SC_TYPE_SYMBOL &&
		    (!in->symbols || t->symbols != in->symbols))
			return sc__fail(SC_ESCHEMA,
					"the table's symbol column %u names "
					"another symbol table than the "
					"stream's",
					c);
	if (!spec->out_cols && width - spec->nkey > SC_SCHEMA_MAX_COLS)
		return sc__fail(SC_ESCHEMA, "%u output columns, more than %d",
				width - spec->nkey, SC_SCHEMA_MAX_COLS);
	if (spec->out_cols && spec->nout > SC_SCHEMA_MAX_COLS)
		return sc__fail(SC_ESCHEMA, "%u output columns, more than %d",
				spec->nout, SC_SCHEMA_MAX_COLS);
	for (uint32_t c = 0; spec->out_cols && c < spec->nout; c++)
		if (spec->out_cols[c] >= width)
			return sc__fail(SC_ESCHEMA,
					"output column %u picks column %u of "
					"%u (stream and table)",
					c, spec->out_cols[c], width);
	return 0;
}

static int
lookup_body(struct sc_graph *g, int from, const struct sc_lookup_spec *spec)
{
	const struct sc_schema *in;
	struct sc_schema out;
	struct lookup *l;
	int rc;

	if (from < 0)
		return from;
	if (!g || !spec)
		return sc__fail(SC_EINVAL, "%s is NULL", g ? "spec" : "g");
	in = sc_graph_schema(g, from);
	if (!in)
		return sc__fail(SC_ENOENT, "no node %d", from);
	rc = check_spec(in, spec);
	if (rc)
		return rc;
	l = calloc(1, sizeof(*l));
	if (!l)
		return sc__fail(SC_ENOMEM, "no memory");
	l->in = in->ncols;
	l->tcols = spec->table->ncols;
	l->nkey = spec->nkey;
	l->n = spec->n;
	l->symbols = in->symbols;
	memcpy(l->skey, spec->stream_key, spec->nkey * sizeof(uint32_t));
	out = *in;
	if (spec->out_cols) {
		l->nout = spec->nout;
		memcpy(l->pick, spec->out_cols, spec->nout * sizeof(uint32_t));
	} else {
		l->nout = l->in + l->tcols - l->nkey;
		for (uint32_t c = 0; c < l->nout; c++)
			l->pick[c] = c < l->in ? c : c + l->nkey;
	}
	for (uint32_t c = 0; c < l->nout; c++)
		out.types[c] = l->pick[c] < l->in
				   ? in->types[l->pick[c]]
				   : spec->table->types[l->pick[c] - l->in];
	out.ncols = l->nout;
	rc = hold_table(l, spec);
	if (!rc)
		rc = sort_table(l, spec);
	if (rc) {
		lookup_drop(l);
		return rc;
	}
	return sc__graph_flat_map_owned(g, from, &out, lookup_emit, l,
					lookup_drop);
}

int
sc_graph_lookup(struct sc_graph *g, int from, const struct sc_lookup_spec *spec)
{
	return sc__errwrap(lookup_body(g, from, spec), "sc_graph_lookup");
}

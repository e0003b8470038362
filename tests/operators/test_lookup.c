/*
 * test_lookup.c - the lookup join (lookup.h) against a from-scratch
 * reference after every step of random deltas that insert and retract
 * stream rows, over random tables with repeated keys, repeated rows and
 * keys no row has, with the default output and random picks; tables of
 * symbols held for the graph's life; bad specs, each refused with its
 * code and a message naming the fault, adding nothing and holding nothing.
 *
 * The reference joins the naive Z-set of the input's integral (zset_gen.h)
 * with the table by two plain loops: it shares no code with lookup.c.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "operators/circuit.h"
#include "operators/lookup.h"
#include "operators/symbol.h"
#include "tests/support/op_gen.h"
#include "tests/support/prop.h"
#include "tests/support/zset_gen.h"

#define SUITE "lookup"
#define STEPS 12

#define I(x) sc_enc_i64(x)

/* The join of z (the stream's integral) with the table, picked. */
static void
reference(const struct zref *z, const struct sc_lookup_spec *sp, uint32_t nout,
	  const uint32_t *pick, struct zref *out)
{
	uint32_t in = z->ncols, tc = sp->table->ncols;
	uint64_t cat[2 * SC_SCHEMA_MAX_COLS], row[SC_SCHEMA_MAX_COLS];

	zref_init(out, nout);
	for (size_t i = 0; i < z->n; i++) {
		const uint64_t *r = z->rows + (size_t)i * in;

		if (z->w[i] == 0)
			continue;
		for (size_t j = 0; j < sp->n; j++) {
			const uint64_t *t = sp->rows + j * tc;
			bool match = true;

			for (uint32_t c = 0; c < sp->nkey; c++)
				match &= r[sp->stream_key[c]] == t[c];
			if (!match)
				continue;
			memcpy(cat, r, in * sizeof(uint64_t));
			memcpy(cat + in, t, tc * sizeof(uint64_t));
			for (uint32_t c = 0; c < nout; c++)
				row[c] = cat[pick[c]];
			zref_add(out, row, z->w[i]);
		}
	}
}

/* A graph input -> lookup -> output; *out the output node. */
static struct sc_graph *
lookup_graph(const struct sc_schema *s, const struct sc_lookup_spec *sp,
	     int *out)
{
	struct sc_graph *g = NULL;
	int in, id;

	cr_assert_eq(sc_graph_create(&g), 0);
	in = sc_graph_input(g, "in", s);
	id = sc_graph_lookup(g, in, sp);
	cr_assert_geq(id, 0, "%s", sc_errmsg());
	*out = sc_graph_output(g, "out", id);
	cr_assert_geq(*out, 0, "%s", sc_errmsg());
	return g;
}

struct small {
	int64_t vals; /* values in 0 .. vals - 1 */
};

static uint64_t
small_col(struct sc_rng *r, uint32_t col, void *ctx)
{
	const struct small *s = ctx;

	(void)col;
	return I((int64_t)sc_rng_below(r, (uint64_t)s->vals));
}

#define T_REF "output_integral_is_the_join_of_the_input_integral_with_the_table"
Test(lookup, output_integral_is_the_join_of_the_input_integral_with_the_table)
{
	uint64_t base = sc_prop_seed(8101);

	for (uint64_t c = 0; c < sc_prop_count(120); c++) {
		uint64_t seed = base + c;
		struct sc_rng r;
		struct sc_schema s, t;
		enum sc_type types[SC_SCHEMA_MAX_COLS];
		uint32_t skey[2], pick[SC_SCHEMA_MAX_COLS], nout;
		uint64_t rows[24 * 5]; /* t.ncols <= 5 */
		struct small sm;
		struct sc_lookup_spec sp = {0};
		struct zref z;
		struct sc_graph *g;
		struct sc_circuit *circ = NULL;
		int out;

		sc_rng_seed(&r, seed);
		sm.vals = 2 + (int64_t)sc_rng_below(&r, 5);
		for (uint32_t i = 0; i < SC_SCHEMA_MAX_COLS; i++)
			types[i] = SC_TYPE_I64;
		cr_assert_eq(sc_schema_init(&s,
					    2 + (uint32_t)sc_rng_below(&r, 3),
					    types, NULL),
			     0);
		sp.nkey = 1 + (uint32_t)sc_rng_below(&r, 2);
		for (uint32_t k = 0; k < sp.nkey; k++)
			skey[k] = (uint32_t)sc_rng_below(&r, s.ncols);
		types[sp.nkey] = SC_TYPE_BOOL; /* a value of another type */
		cr_assert_eq(
		    sc_schema_init(&t,
				   sp.nkey + 1 + (uint32_t)sc_rng_below(&r, 3),
				   types, NULL),
		    0);
		sp.stream_key = skey;
		sp.table = &t;
		sp.n = sc_rng_below(&r, 25);
		for (size_t i = 0; i < sp.n; i++)
			for (uint32_t k = 0; k < t.ncols; k++)
				rows[i * t.ncols + k] =
				    k == sp.nkey
					? sc_enc_bool(sc_rng_below(&r, 2))
					: small_col(&r, k, &sm);
		if (sp.n > 1 && sc_rng_below(&r, 2)) /* a repeated row */
			memcpy(rows + (sp.n - 1) * t.ncols, rows,
			       t.ncols * sizeof(uint64_t));
		sp.rows = rows;
		if (sc_rng_below(&r, 2)) { /* random picks */
			nout = 1 + (uint32_t)sc_rng_below(&r, 6);
			for (uint32_t k = 0; k < nout; k++)
				pick[k] = (uint32_t)sc_rng_below(
				    &r, s.ncols + t.ncols);
			sp.out_cols = pick;
			sp.nout = nout;
		} else {
			nout = s.ncols + t.ncols - sp.nkey;
			for (uint32_t k = 0; k < nout; k++)
				pick[k] = k < s.ncols ? k : k + sp.nkey;
		}
		g = lookup_graph(&s, &sp, &out);
		/* The spec's rows are copied: scribbling on them after the
		 * call changes nothing. */
		uint64_t kept[24 * 5];
		memcpy(kept, rows, sizeof(rows));
		memset(rows, 0xff, sizeof(rows));
		sp.rows = kept;
		cr_assert_eq(sc_circuit_create(g, &circ), 0, "%s", sc_errmsg());
		zref_init(&z, s.ncols);
		struct opgen og = {
		    .ncols = s.ncols, .k = 0, .col = small_col, .ctx = &sm};
		for (int step = 0; step < STEPS; step++) {
			struct sc_batch *d =
			    opgen_delta(&r, &og, &z, sc_rng_below(&r, 8));
			struct sc_batch *got = NULL;
			struct zref want;
			int rc;

			zref_add_batch(&z, d, 1);
			rc = sc_circuit_feed(circ, 0, d);
			SC_PROP_ASSERT(seed, SUITE, T_REF, rc == 0, "feed %d",
				       rc);
			sc_batch_release(d);
			rc = sc_circuit_step(circ);
			SC_PROP_ASSERT(seed, SUITE, T_REF, rc == 0,
				       "step %d: %s", rc, sc_errmsg());
			rc = sc_circuit_integral(circ, out, &got);
			SC_PROP_ASSERT(seed, SUITE, T_REF, rc == 0,
				       "integral %d", rc);
			reference(&z, &sp, nout, pick, &want);
			SC_PROP_ASSERT(
			    seed, SUITE, T_REF, zref_equals(&want, got),
			    "step %d: %zu rows, want %zu", step,
			    sc_batch_count(got), zref_nonzero(&want));
			zref_fini(&want);
			sc_batch_release(got);
		}
		zref_fini(&z);
		sc_circuit_destroy(circ);
		cr_assert_eq(sc_graph_destroy(g), 0);
	}
}

/* One stream row of key 1, weight w, through a fresh circuit; the
 * output's integral. */
static struct sc_batch *
join_one(const struct sc_lookup_spec *sp, const struct sc_schema *s,
	 const uint64_t *row, int64_t w)
{
	struct sc_graph *g;
	struct sc_circuit *c = NULL;
	struct sc_batch *b = NULL, *got = NULL;
	int out;

	g = lookup_graph(s, sp, &out);
	cr_assert_eq(sc_circuit_create(g, &c), 0);
	cr_assert_eq(sc_batch_from_records(s->ncols, row, &w, 1, &b), 0);
	cr_assert_eq(sc_circuit_feed(c, 0, b), 0);
	sc_batch_release(b);
	cr_assert_eq(sc_circuit_step(c), 0, "%s", sc_errmsg());
	cr_assert_eq(sc_circuit_integral(c, out, &got), 0);
	sc_circuit_destroy(c);
	cr_assert_eq(sc_graph_destroy(g), 0);
	return got;
}

static const enum sc_type II[2] = {SC_TYPE_I64, SC_TYPE_I64};

Test(lookup,
     a_repeated_table_row_doubles_the_weight_and_a_missing_key_emits_nothing)
{
	struct sc_schema s, t;
	uint32_t k0 = 0;
	uint64_t table[] = {I(1), I(10), I(1), I(10), I(2), I(20)};
	struct sc_lookup_spec sp = {
	    .nkey = 1, .stream_key = &k0, .table = &t, .rows = table, .n = 3};
	uint64_t one[] = {I(1), I(7)}, three[] = {I(3), I(7)};
	struct sc_batch *got;

	cr_assert_eq(sc_schema_init(&s, 2, II, NULL), 0);
	cr_assert_eq(sc_schema_init(&t, 2, II, NULL), 0);
	got = join_one(&sp, &s, one, -3);
	cr_assert_eq(sc_batch_count(got), 1);
	cr_assert_eq(sc_batch_ncols(got), 3);
	cr_assert_eq(sc_batch_row(got, 0)[2], I(10));
	cr_assert_eq(sc_batch_weight(got, 0), -6);
	sc_batch_release(got);
	got = join_one(&sp, &s, three, 1);
	cr_assert_eq(sc_batch_count(got), 0);
	sc_batch_release(got);
	sp.n = 0; /* the empty table */
	got = join_one(&sp, &s, one, 1);
	cr_assert_eq(sc_batch_count(got), 0);
	sc_batch_release(got);
}

Test(lookup, the_table_holds_its_symbols_for_the_graphs_life)
{
	struct sc_symtab *st = NULL;
	struct sc_schema s, t;
	enum sc_type is[2] = {SC_TYPE_I64, SC_TYPE_SYMBOL};
	uint64_t a, b, table[4];
	uint32_t k0 = 0, pick[2] = {3, 0};
	struct sc_lookup_spec sp = {.nkey = 1,
				    .stream_key = &k0,
				    .table = &t,
				    .rows = table,
				    .n = 2,
				    .out_cols = pick,
				    .nout = 2};
	struct sc_graph *g;
	struct sc_circuit *c = NULL;
	struct sc_batch *d = NULL, *got = NULL;
	uint64_t row[2] = {I(2), I(0)};
	const char *text;
	int out;

	cr_assert_eq(sc_symtab_create(&st), 0);
	cr_assert_eq(sc_symtab_intern_cstr(st, "one", &a), 0);
	cr_assert_eq(sc_symtab_intern_cstr(st, "two", &b), 0);
	table[0] = I(1), table[1] = sc_enc_symbol(a);
	table[2] = I(2), table[3] = sc_enc_symbol(b);
	cr_assert_eq(sc_schema_init(&s, 2, II, st), 0);
	cr_assert_eq(sc_schema_init(&t, 2, is, st), 0);
	g = lookup_graph(&s, &sp, &out);
	cr_assert_eq(sc_symtab_refs(st, a), 2);
	cr_assert_eq(sc_symtab_release(st, a), 0);
	cr_assert_eq(sc_symtab_release(st, b), 0);
	cr_assert_eq(sc_symtab_refs(st, b), 1, "the node's own reference");
	cr_assert_eq(sc_circuit_create(g, &c), 0);
	cr_assert_eq(sc_batch_from_records(2, row, NULL, 1, &d), 0);
	cr_assert_eq(sc_circuit_feed(c, 0, d), 0);
	sc_batch_release(d);
	cr_assert_eq(sc_circuit_step(c), 0, "%s", sc_errmsg());
	cr_assert_eq(sc_circuit_integral(c, out, &got), 0);
	cr_assert_eq(sc_batch_count(got), 1);
	cr_assert_eq(sc_batch_row(got, 0)[0], sc_enc_symbol(b));
	cr_assert_eq(sc_batch_row(got, 0)[1], I(2));
	cr_assert_eq(sc_symtab_lookup(st, b, &text, NULL), 0);
	cr_assert_str_eq(text, "two");
	sc_batch_release(got);
	sc_circuit_destroy(c);
	cr_assert_eq(sc_graph_destroy(g), 0);
	cr_assert_eq(sc_symtab_refs(st, a), 0, "released with the graph");
	cr_assert_eq(sc_symtab_refs(st, b), 0, "released with the graph");
	sc_symtab_destroy(st);
}

/* One refused spec: its code and a word the message must hold. */
struct bad {
	const char *what;
	int code;
	const char *says;
	void (*spoil)(struct sc_lookup_spec *sp, struct sc_schema *t,
		      uint64_t *rows);
};

static uint32_t k_far = 5, picks_far[1] = {9};
static const uint32_t *k_null;

static void
no_key(struct sc_lookup_spec *sp, struct sc_schema *t, uint64_t *rows)
{
	(void)t, (void)rows;
	sp->nkey = 0;
}
static void
null_key(struct sc_lookup_spec *sp, struct sc_schema *t, uint64_t *rows)
{
	(void)t, (void)rows;
	sp->stream_key = k_null;
}
static void
null_table(struct sc_lookup_spec *sp, struct sc_schema *t, uint64_t *rows)
{
	(void)t, (void)rows;
	sp->table = NULL;
}
static void
null_rows(struct sc_lookup_spec *sp, struct sc_schema *t, uint64_t *rows)
{
	(void)t, (void)rows;
	sp->rows = NULL;
}
static void
no_picks(struct sc_lookup_spec *sp, struct sc_schema *t, uint64_t *rows)
{
	(void)t, (void)rows;
	sp->out_cols = picks_far, sp->nout = 0;
}
static void
far_key(struct sc_lookup_spec *sp, struct sc_schema *t, uint64_t *rows)
{
	(void)t, (void)rows;
	sp->stream_key = &k_far;
}
static void
far_pick(struct sc_lookup_spec *sp, struct sc_schema *t, uint64_t *rows)
{
	(void)t, (void)rows;
	sp->out_cols = picks_far, sp->nout = 1;
}
static void
wide_key(struct sc_lookup_spec *sp, struct sc_schema *t, uint64_t *rows)
{
	static const uint32_t k3[3] = {0, 1, 0};

	(void)t, (void)rows;
	sp->stream_key = k3, sp->nkey = 3;
}
static void
other_type(struct sc_lookup_spec *sp, struct sc_schema *t, uint64_t *rows)
{
	(void)sp, (void)rows;
	t->types[0] = SC_TYPE_F64;
}
static void
bad_bool(struct sc_lookup_spec *sp, struct sc_schema *t, uint64_t *rows)
{
	(void)sp;
	t->types[1] = SC_TYPE_BOOL;
	rows[3] = 2; /* row 1, column 1 */
}
static void
dead_symbol(struct sc_lookup_spec *sp, struct sc_schema *t, uint64_t *rows)
{
	(void)sp;
	t->types[1] = SC_TYPE_SYMBOL;
	rows[3] = sc_enc_symbol(12345); /* row 0's is live (set below) */
}
static void
other_symbols(struct sc_lookup_spec *sp, struct sc_schema *t, uint64_t *rows)
{
	(void)sp, (void)rows;
	t->types[1] = SC_TYPE_SYMBOL;
	t->symbols = NULL;
}

static const struct bad bads[] = {
    {"nkey 0", SC_EINVAL, "no key columns", no_key},
    {"stream_key NULL", SC_EINVAL, "no key columns", null_key},
    {"table NULL", SC_EINVAL, "table is NULL", null_table},
    {"rows NULL, n 2", SC_EINVAL, "rows is NULL", null_rows},
    {"out_cols, nout 0", SC_EINVAL, "nout 0", no_picks},
    {"a key column past the stream", SC_ESCHEMA, "key column 5", far_key},
    {"a pick past both rows", SC_ESCHEMA, "picks column 9", far_pick},
    {"more key columns than the table", SC_ESCHEMA, "3 key columns", wide_key},
    {"key types differ", SC_ETYPE, "is i64", other_type},
    {"a bool word 2", SC_EINVAL, "is not 0 or 1", bad_bool},
    {"a dead symbol", SC_EINVAL, "is not live", dead_symbol},
    {"another symbol table", SC_ESCHEMA, "another symbol table", other_symbols},
};

Test(lookup, bad_specs_are_refused_with_their_code_and_hold_nothing)
{
	struct sc_symtab *st = NULL;
	uint64_t live;

	cr_assert_eq(sc_symtab_create(&st), 0);
	cr_assert_eq(sc_symtab_intern_cstr(st, "live", &live), 0);
	for (size_t i = 0; i < sizeof(bads) / sizeof(bads[0]); i++) {
		struct sc_schema s, t;
		uint64_t rows[4] = {I(1), sc_enc_symbol(live), I(2), I(0)};
		uint32_t k0 = 0;
		struct sc_lookup_spec sp = {.nkey = 1,
					    .stream_key = &k0,
					    .table = &t,
					    .rows = rows,
					    .n = 2};
		struct sc_graph *g = NULL;
		int in;

		cr_assert_eq(sc_schema_init(&s, 2, II, st), 0);
		cr_assert_eq(sc_schema_init(&t, 2, II, st), 0);
		bads[i].spoil(&sp, &t, rows);
		cr_assert_eq(sc_graph_create(&g), 0);
		in = sc_graph_input(g, "in", &s);
		cr_assert_eq(sc_graph_lookup(g, in, &sp), bads[i].code,
			     "%s: %s", bads[i].what, sc_errmsg());
		cr_assert(strstr(sc_errmsg(), "sc_graph_lookup: ") &&
			      strstr(sc_errmsg(), bads[i].says),
			  "%s: %s", bads[i].what, sc_errmsg());
		cr_assert_eq(sc_graph_node_count(g), 1, "%s", bads[i].what);
		cr_assert_eq(sc_symtab_refs(st, live), 1,
			     "%s: a reference kept", bads[i].what);
		cr_assert_eq(sc_graph_destroy(g), 0);
	}
	sc_symtab_destroy(st);
}

Test(lookup, null_and_missing_arguments_name_the_call)
{
	struct sc_graph *g = NULL;
	struct sc_schema s, t;
	uint32_t k0 = 0;
	struct sc_lookup_spec sp = {.nkey = 1, .stream_key = &k0, .table = &t};
	int in;

	cr_assert_eq(sc_schema_init(&s, 2, II, NULL), 0);
	cr_assert_eq(sc_schema_init(&t, 2, II, NULL), 0);
	cr_assert_eq(sc_graph_create(&g), 0);
	in = sc_graph_input(g, "in", &s);
	cr_assert_eq(sc_graph_lookup(NULL, in, &sp), SC_EINVAL);
	cr_assert(strstr(sc_errmsg(), "g is NULL"), "%s", sc_errmsg());
	cr_assert_eq(sc_graph_lookup(g, in, NULL), SC_EINVAL);
	cr_assert(strstr(sc_errmsg(), "spec is NULL"), "%s", sc_errmsg());
	cr_assert_eq(sc_graph_lookup(g, 7, &sp), SC_ENOENT);
	cr_assert(strstr(sc_errmsg(), "no node 7"), "%s", sc_errmsg());
	cr_assert_eq(sc_graph_lookup(g, SC_ESCHEMA, &sp), SC_ESCHEMA);
	cr_assert(strstr(sc_errmsg(), "sc_graph_lookup: "), "%s", sc_errmsg());
	cr_assert_eq(sc_graph_node_count(g), 1);
	cr_assert_eq(sc_graph_destroy(g), 0);
}

Test(lookup, a_frozen_graph_is_ebusy_and_keeps_no_reference)
{
	struct sc_symtab *st = NULL;
	struct sc_graph *g = NULL;
	struct sc_circuit *c = NULL;
	struct sc_schema s, t;
	enum sc_type is[2] = {SC_TYPE_I64, SC_TYPE_SYMBOL};
	uint64_t id, rows[2];
	uint32_t k0 = 0;
	struct sc_lookup_spec sp = {
	    .nkey = 1, .stream_key = &k0, .table = &t, .rows = rows, .n = 1};
	int in;

	cr_assert_eq(sc_symtab_create(&st), 0);
	cr_assert_eq(sc_symtab_intern_cstr(st, "x", &id), 0);
	rows[0] = I(1), rows[1] = sc_enc_symbol(id);
	cr_assert_eq(sc_schema_init(&s, 2, II, st), 0);
	cr_assert_eq(sc_schema_init(&t, 2, is, st), 0);
	cr_assert_eq(sc_graph_create(&g), 0);
	in = sc_graph_input(g, "in", &s);
	cr_assert_geq(sc_graph_output(g, "out", in), 0);
	cr_assert_eq(sc_circuit_create(g, &c), 0);
	cr_assert_eq(sc_graph_lookup(g, in, &sp), SC_EBUSY, "%s", sc_errmsg());
	cr_assert_eq(sc_symtab_refs(st, id), 1);
	sc_circuit_destroy(c);
	cr_assert_eq(sc_graph_destroy(g), 0);
	sc_symtab_destroy(st);
}

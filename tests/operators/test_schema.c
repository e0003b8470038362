/*
 * test_schema.c - the order-preserving encoding and schemas: the encoded
 * compare agrees with each type's own order (random values and the edge
 * cases), values round-trip, rows compare lexicographically, and bad
 * schemas and rows are refused without changing anything.
 */
#include <criterion/criterion.h>
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "operators/schema.h"
#include "operators/symbol.h"
#include "tests/support/prop.h"
#include "tests/support/zset_gen.h"

#define SUITE "schema"

static int
cmp_u(uint64_t a, uint64_t b)
{
	return (a > b) - (a < b);
}

/* The typed order of doubles that the encoding promises: numeric order,
 * -0 == +0, every NaN equal to every other and above +inf. */
static int
cmp_f64(double a, double b)
{
	bool na = isnan(a), nb = isnan(b);

	if (na || nb)
		return na - nb;
	return (a > b) - (a < b);
}

static int
cmp_i64(int64_t a, int64_t b)
{
	return (a > b) - (a < b);
}

Test(schema, i64_encoding_preserves_order)
{
	uint64_t seed = sc_prop_seed(11);
	struct sc_rng r;

	sc_rng_seed(&r, seed);
	for (uint64_t c = 0; c < sc_prop_count(20000); c++) {
		int64_t a = zgen_i64(&r), b = zgen_i64(&r);

		SC_PROP_ASSERT(seed, SUITE, "i64_encoding_preserves_order",
			       cmp_u(sc_enc_i64(a), sc_enc_i64(b)) ==
				   cmp_i64(a, b),
			       "%" PRId64 " vs %" PRId64, a, b);
	}
	cr_assert_eq(sc_enc_i64(INT64_MIN), 0);
	cr_assert_eq(sc_enc_i64(INT64_MAX), UINT64_MAX);
	cr_assert_lt(sc_enc_i64(-1), sc_enc_i64(0));
}

Test(schema, f64_encoding_preserves_the_total_order)
{
	uint64_t seed = sc_prop_seed(12);
	struct sc_rng r;
	size_t ne = sizeof(zgen_f64_edges) / sizeof(zgen_f64_edges[0]);

	/* Every pair of edge cases. */
	for (size_t i = 0; i < ne; i++)
		for (size_t j = 0; j < ne; j++) {
			double a = zgen_f64_edges[i], b = zgen_f64_edges[j];

			cr_assert_eq(cmp_u(sc_enc_f64(a), sc_enc_f64(b)),
				     cmp_f64(a, b), "%g vs %g", a, b);
		}
	sc_rng_seed(&r, seed);
	for (uint64_t c = 0; c < sc_prop_count(20000); c++) {
		double a = zgen_f64(&r), b = zgen_f64(&r);

		SC_PROP_ASSERT(
		    seed, SUITE, "f64_encoding_preserves_the_total_order",
		    cmp_u(sc_enc_f64(a), sc_enc_f64(b)) == cmp_f64(a, b),
		    "%a vs %a", a, b);
	}
}

Test(schema, f64_minus_zero_and_plus_zero_are_one_value)
{
	cr_assert_eq(sc_enc_f64(-0.0), sc_enc_f64(0.0));
	cr_assert_not(signbit(sc_dec_f64(sc_enc_f64(-0.0))));
}

Test(schema, every_nan_encodes_to_one_canonical_nan_above_infinity)
{
	uint64_t payloads[] = {0x7ff8000000000000ULL, 0x7ff0000000000001ULL,
			       0xfff8000000000000ULL, 0xffffffffffffffffULL,
			       0x7ff4000000000abcULL};
	uint64_t want = sc_enc_f64(NAN);

	for (size_t i = 0; i < sizeof(payloads) / sizeof(payloads[0]); i++) {
		double x;
		uint64_t back;

		memcpy(&x, &payloads[i], sizeof(x));
		cr_assert_eq(sc_enc_f64(x), want, "payload %" PRIx64,
			     payloads[i]);
		x = sc_dec_f64(sc_enc_f64(x));
		memcpy(&back, &x, sizeof(back));
		cr_assert_eq(back, SC_F64_CANONICAL_NAN_BITS);
	}
	cr_assert_gt(want, sc_enc_f64(INFINITY));
}

Test(schema, values_round_trip_through_their_encoding)
{
	uint64_t seed = sc_prop_seed(13);
	struct sc_rng r;

	sc_rng_seed(&r, seed);
	for (uint64_t c = 0; c < sc_prop_count(20000); c++) {
		int64_t i = zgen_i64(&r);
		uint64_t u = sc_rng_next(&r), xb, yb;
		double x = zgen_f64(&r), y;

		SC_PROP_ASSERT(
		    seed, SUITE, "values_round_trip_through_their_encoding",
		    sc_dec_i64(sc_enc_i64(i)) == i, "i64 %" PRId64, i);
		SC_PROP_ASSERT(seed, SUITE,
			       "values_round_trip_through_their_encoding",
			       sc_dec_u64(sc_enc_u64(u)) == u, "u64");
		y = sc_dec_f64(sc_enc_f64(x));
		memcpy(&xb, &x, 8);
		memcpy(&yb, &y, 8);
		/* Bit-exact, except the two documented folds. */
		SC_PROP_ASSERT(
		    seed, SUITE, "values_round_trip_through_their_encoding",
		    xb == yb || isnan(x) || x == 0.0, "f64 %a -> %a", x, y);
	}
	cr_assert(sc_dec_bool(sc_enc_bool(true)));
	cr_assert_not(sc_dec_bool(sc_enc_bool(false)));
	cr_assert_eq(sc_dec_symbol(sc_enc_symbol(42)), 42);
	cr_assert_eq(sc_dec_f64(sc_enc_f64(4.9e-324)), 4.9e-324);
	cr_assert_eq(sc_dec_f64(sc_enc_f64(-DBL_MAX)), -DBL_MAX);
}

Test(schema, typed_values_round_trip_through_encode_and_decode_row)
{
	enum sc_type t[5] = {SC_TYPE_I64, SC_TYPE_U64, SC_TYPE_F64,
			     SC_TYPE_BOOL, SC_TYPE_SYMBOL};
	struct sc_schema s;
	struct sc_value in[5] = {
	    {.type = SC_TYPE_I64, .v.i64 = -5},
	    {.type = SC_TYPE_U64, .v.u64 = 7},
	    {.type = SC_TYPE_F64, .v.f64 = -1.25},
	    {.type = SC_TYPE_BOOL, .v.b = true},
	    {.type = SC_TYPE_SYMBOL, .v.sym = 3},
	};
	struct sc_value out[5];
	uint64_t row[5];

	cr_assert_eq(sc_schema_init(&s, 5, t, NULL), 0);
	cr_assert_eq(sc_schema_encode_row(&s, in, 5, row), 0);
	cr_assert_eq(sc_schema_decode_row(&s, row, out, 5), 0);
	cr_assert_eq(out[0].v.i64, -5);
	cr_assert_eq(out[1].v.u64, 7);
	cr_assert_eq(out[2].v.f64, -1.25);
	cr_assert(out[3].v.b);
	cr_assert_eq(out[4].v.sym, 3);
	for (int i = 0; i < 5; i++)
		cr_assert_eq(out[i].type, t[i]);
}

/* Random rows of random schemas: the word compare is the lexicographic
 * order of the typed columns. */
Test(schema, row_compare_is_the_lexicographic_typed_order)
{
	uint64_t base = sc_prop_seed(14);

	for (uint64_t c = 0; c < sc_prop_count(3000); c++) {
		struct sc_rng r;
		struct sc_schema s;
		uint64_t a[SC_SCHEMA_MAX_COLS], b[SC_SCHEMA_MAX_COLS];
		int want = 0;

		sc_rng_seed(&r, base + c);
		zgen_schema(&r, 5, &s);
		zgen_row(&r, &s, 3, a);
		zgen_row(&r, &s, 3, b);
		for (uint32_t i = 0; i < s.ncols && want == 0; i++) {
			switch (s.types[i]) {
			case SC_TYPE_I64:
				want =
				    cmp_i64(sc_dec_i64(a[i]), sc_dec_i64(b[i]));
				break;
			case SC_TYPE_F64:
				want =
				    cmp_f64(sc_dec_f64(a[i]), sc_dec_f64(b[i]));
				break;
			default: /* u64, bool, symbol id */
				want = cmp_u(a[i], b[i]);
				break;
			}
		}
		SC_PROP_ASSERT(base + c, SUITE,
			       "row_compare_is_the_lexicographic_typed_order",
			       sc_row_cmp(a, b, s.ncols) == want,
			       "cmp %d, want %d", sc_row_cmp(a, b, s.ncols),
			       want);
		SC_PROP_ASSERT(base + c, SUITE,
			       "row_compare_is_the_lexicographic_typed_order",
			       want != 0 || sc_row_hash(a, s.ncols) ==
						sc_row_hash(b, s.ncols),
			       "equal rows hash apart");
	}
}

Test(schema, row_hash_spreads_distinct_rows)
{
	uint64_t row[2], seen_low = 0;

	/* 64 consecutive keys must reach many of 64 low-bit buckets. */
	for (uint64_t i = 0; i < 64; i++) {
		row[0] = i;
		row[1] = 0;
		seen_low |= 1ULL << (sc_row_hash(row, 2) & 63);
	}
	cr_assert_gt(__builtin_popcountll(seen_low), 30);
}

/* --- bad input -------------------------------------------------------------
 */

Test(schema, unknown_type_is_etype_and_changes_nothing)
{
	enum sc_type t[2] = {SC_TYPE_I64, (enum sc_type)9};
	struct sc_schema s = {.ncols = 123};

	cr_assert_eq(sc_schema_init(&s, 2, t, NULL), SC_ETYPE);
	cr_assert(strstr(sc_errmsg(), "column 1 has unknown type 9"),
		  "message: %s", sc_errmsg());
	cr_assert_eq(s.ncols, 123, "schema written on failure");
	t[1] = (enum sc_type) - 1;
	cr_assert_eq(sc_schema_init(&s, 2, t, NULL), SC_ETYPE);
	cr_assert_str_eq(sc_type_name((enum sc_type)9), "?");
}

Test(schema, bad_column_count_is_eschema)
{
	enum sc_type t[SC_SCHEMA_MAX_COLS + 1] = {0};
	struct sc_schema s = {.ncols = 5};

	cr_assert_eq(sc_schema_init(&s, 0, t, NULL), SC_ESCHEMA);
	cr_assert(strstr(sc_errmsg(), "0 columns"), "%s", sc_errmsg());
	cr_assert_eq(sc_schema_init(&s, SC_SCHEMA_MAX_COLS + 1, t, NULL),
		     SC_ESCHEMA);
	cr_assert_eq(s.ncols, 5);
}

Test(schema, encode_row_with_wrong_count_or_type_is_eschema)
{
	enum sc_type t[2] = {SC_TYPE_I64, SC_TYPE_BOOL};
	struct sc_schema s;
	struct sc_value v[3] = {{.type = SC_TYPE_I64, .v.i64 = 1},
				{.type = SC_TYPE_BOOL, .v.b = true},
				{.type = SC_TYPE_I64, .v.i64 = 2}};
	uint64_t row[3] = {77, 77, 77};

	cr_assert_eq(sc_schema_init(&s, 2, t, NULL), 0);
	cr_assert_eq(sc_schema_encode_row(&s, v, 3, row), SC_ESCHEMA);
	cr_assert(strstr(sc_errmsg(), "row has 3 columns, schema has 2"), "%s",
		  sc_errmsg());
	v[1].type = SC_TYPE_F64;
	cr_assert_eq(sc_schema_encode_row(&s, v, 2, row), SC_ESCHEMA);
	cr_assert(strstr(sc_errmsg(), "column 1 is bool, value is f64"), "%s",
		  sc_errmsg());
	cr_assert_eq(row[0], 77, "row written on failure");
	v[1].type = (enum sc_type)17;
	cr_assert_eq(sc_value_encode(&v[1], row), SC_ETYPE);
	cr_assert_eq(row[0], 77);
}

Test(schema, null_arguments_are_einval)
{
	enum sc_type t[1] = {SC_TYPE_U64};
	struct sc_schema s;
	struct sc_value v;
	uint64_t w = 5;

	cr_assert_eq(sc_schema_init(NULL, 1, t, NULL), SC_EINVAL);
	cr_assert(strstr(sc_errmsg(), "schema is NULL"), "%s", sc_errmsg());
	cr_assert_eq(sc_schema_init(&s, 1, NULL, NULL), SC_EINVAL);
	cr_assert(strstr(sc_errmsg(), "types is NULL"), "%s", sc_errmsg());
	cr_assert_eq(sc_value_encode(NULL, &w), SC_EINVAL);
	cr_assert_eq(sc_value_decode(SC_TYPE_I64, 0, NULL), SC_EINVAL);
	cr_assert_eq(sc_value_decode(SC_TYPE_BOOL, 2, &v), SC_EINVAL);
	cr_assert(strstr(sc_errmsg(), "bool word 2"), "%s", sc_errmsg());
	cr_assert_eq(sc_schema_encode_row(NULL, &v, 1, &w), SC_EINVAL);
	cr_assert_eq(w, 5);
}

Test(schema, format_row_prints_typed_values_and_symbols_by_text)
{
	enum sc_type t[4] = {SC_TYPE_I64, SC_TYPE_F64, SC_TYPE_SYMBOL,
			     SC_TYPE_SYMBOL};
	struct sc_symtab *tab;
	struct sc_schema s;
	uint64_t row[4], id;
	char buf[128];
	int n;

	cr_assert_eq(sc_symtab_create(&tab), 0);
	cr_assert_eq(sc_symtab_intern_cstr(tab, "abc", &id), 0);
	cr_assert_eq(sc_schema_init(&s, 4, t, tab), 0);
	row[0] = sc_enc_i64(-3);
	row[1] = sc_enc_f64(NAN);
	row[2] = sc_enc_symbol(id);
	row[3] = sc_enc_symbol(999);
	n = sc_schema_format_row(&s, row, buf, sizeof(buf));
	cr_assert_str_eq(buf, "(-3, nan, 'abc', #999)");
	cr_assert_eq(n, (int)strlen(buf));
	/* Truncation still reports the full length. */
	cr_assert_eq(sc_schema_format_row(&s, row, buf, 5), n);
	cr_assert_str_eq(buf, "(-3,");
	sc_symtab_destroy(tab);
}

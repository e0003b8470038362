/*
 * test_csv.c - CSV in and out (bench/workloads/csv.h): every error path by
 * name, with its file, line and column; a failed read keeps nothing (no
 * rows, no symbol references); what the writer writes reads back equal,
 * doubles bit for bit.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/workloads/csv.h"
#include "operators/symbol.h"
#include "tests/support/prop.h"

static const char *const cols3[] = {"id", "name", "price"};

/* A schema (i64, symbol, f64) over table *t. */
static struct sc_schema
schema3(struct sc_symtab *t)
{
	static const enum sc_type ty[3] = {SC_TYPE_I64, SC_TYPE_SYMBOL,
					   SC_TYPE_F64};
	struct sc_schema s;

	cr_assert_eq(sc_schema_init(&s, 3, ty, t), 0);
	return s;
}

/* Parse text; must fail with SC_EINVAL at line:column, its message
 * containing `what`, with nothing kept. */
static void
assert_refused(const char *text, uint64_t line, uint32_t col, const char *what)
{
	struct sc_symtab *t = NULL;
	struct sc_csv_rows r;
	struct sc_csv_error e;
	struct sc_schema s;
	char where[64];

	cr_assert_eq(sc_symtab_create(&t), 0);
	s = schema3(t);
	memset(&e, 0, sizeof(e));
	cr_assert_eq(
	    sc_csv_parse("bid.csv", text, strlen(text), &s, cols3, 64, &r, &e),
	    SC_EINVAL, "accepted: %s", text);
	cr_assert_str_eq(e.file, "bid.csv");
	cr_assert_eq(e.line, line, "line %llu, want %llu (%s)",
		     (unsigned long long)e.line, (unsigned long long)line,
		     e.what);
	cr_assert_eq(e.column, col, "column %u, want %u (%s)", e.column, col,
		     e.what);
	cr_assert(strstr(e.what, what), "'%s' lacks '%s'", e.what, what);
	(void)snprintf(where, sizeof(where),
		       "bid.csv:%llu:%u: ", (unsigned long long)line, col);
	cr_assert(strstr(sc_errmsg(), where), "%s", sc_errmsg());
	cr_assert_eq(r.n, 0, "a failed read keeps no row");
	cr_assert_eq(sc_symtab_count(t), 0,
		     "a failed read keeps no symbol reference");
	sc_symtab_destroy(t);
}

Test(csv, wrong_column_count_is_refused_with_line_and_column)
{
	assert_refused("id,name,price\n1,\"a\",2.5\n2,\"b\"\n", 3, 3,
		       "2 fields, expected 3");
	assert_refused("id,name,price\n1,\"a\",2.5,9\n", 2, 4,
		       "more than 3 fields");
}

Test(csv, non_number_in_a_number_column_is_refused)
{
	assert_refused("id,name,price\n1,\"a\",2.5\nx1,\"b\",3\n", 3, 1,
		       "'x1' is not an i64");
	assert_refused("id,name,price\n1,\"a\",2.5x\n", 2, 3,
		       "'2.5x' is not an f64");
	assert_refused("id,name,price\n1,\"a\",\n", 2, 3, "is not an f64");
	assert_refused("id,name,price\n99999999999999999999,\"a\",1\n", 2, 1,
		       "is not an i64");
	assert_refused("id,name,price\n 1,\"a\",1\n", 2, 1, "is not an i64");
	assert_refused("id,name,price\n+1,\"a\",1\n", 2, 1, "is not an i64");
}

Test(csv, unterminated_quote_is_refused_where_it_opened)
{
	assert_refused("id,name,price\n1,\"a\",2\n2,\"open,3\n4,x,5\n", 3, 2,
		       "never closed");
}

Test(csv, quote_inside_an_unquoted_field_is_refused)
{
	assert_refused("id,name,price\n1,a\"b,2\n", 2, 2,
		       "a quote inside an unquoted field");
	assert_refused("id,name,price\n1,\"a\"b,2\n", 2, 2,
		       "text after a closing quote");
}

Test(csv, line_over_the_limit_is_refused)
{
	char text[256];

	(void)snprintf(text, sizeof(text),
		       "id,name,price\n1,\"a\",2\n2,\"%070d\",3\n", 7);
	assert_refused(text, 3, 2, "line longer than 64 bytes");
	(void)snprintf(text, sizeof(text),
		       "id,name,price\n1,\"a\",2\n2,%070d,3\n", 7);
	assert_refused(text, 3, 2, "line longer than 64 bytes");
}

Test(csv, header_that_is_not_the_columns_is_refused)
{
	assert_refused("id,nom,price\n1,\"a\",2\n", 1, 2,
		       "header column 'nom', expected 'name'");
	assert_refused("id,name\n1,\"a\"\n", 1, 3, "lacks column 'price'");
	assert_refused("", 1, 1, "no header");
}

Test(csv, a_bad_last_record_keeps_none_of_the_good_ones)
{
	/* Many good records with fresh symbols, then one bad: no row and
	 * no reference is left (assert_refused checks both). */
	char *text = malloc(200000);
	size_t n = 0;

	n += (size_t)sprintf(text + n, "id,name,price\n");
	for (int i = 0; i < 5000; i++)
		n += (size_t)sprintf(text + n, "%d,\"s%d\",%d.5\n", i, i, i);
	(void)sprintf(text + n, "5000,\"last\",oops\n");
	assert_refused(text, 5002, 3, "'oops' is not an f64");
	free(text);
}

Test(csv, quoted_texts_keep_commas_quotes_and_line_breaks)
{
	const char *text = "id,name,price\r\n"
			   "1,\"a,b\",1\r\n"
			   "2,\"say \"\"hi\"\"\",2\n"
			   "3,\"two\nlines\",3\n"
			   "4,plain,-4e2\n"
			   "5,\"\",nan\n";
	const char *want[5] = {"a,b", "say \"hi\"", "two\nlines", "plain", ""};
	struct sc_symtab *t = NULL;
	struct sc_csv_rows r;
	struct sc_schema s;

	cr_assert_eq(sc_symtab_create(&t), 0);
	s = schema3(t);
	cr_assert_eq(
	    sc_csv_parse("x.csv", text, strlen(text), &s, cols3, 0, &r, NULL),
	    0, "%s", sc_errmsg());
	cr_assert_eq(r.n, 5);
	for (size_t i = 0; i < 5; i++) {
		const char *got = NULL;

		cr_assert_eq(sc_dec_i64(r.rows[i * 3]), (int64_t)i + 1);
		cr_assert_eq(sc_symtab_lookup(t, r.rows[i * 3 + 1], &got, NULL),
			     0);
		cr_assert_str_eq(got, want[i]);
	}
	cr_assert_eq(sc_dec_f64(r.rows[3 * 3 + 2]), -400.0);
	cr_assert(isnan(sc_dec_f64(r.rows[4 * 3 + 2])));
	sc_csv_rows_fini(&r);
	cr_assert_eq(sc_symtab_count(t), 0, "fini releases the symbols");
	sc_symtab_destroy(t);
}

/* The first quoted text of an input is empty: no scratch text has been
 * kept yet (the fuzzer's first finding: NULL + 0 under UBSan). */
Test(csv, empty_quoted_text_as_the_first_quoted_field_reads_empty)
{
	const char *text = "id,name,price\n1,\"\",2\n";
	struct sc_symtab *t = NULL;
	struct sc_csv_rows r;
	struct sc_schema s;
	const char *got = NULL;
	size_t len = 1;

	cr_assert_eq(sc_symtab_create(&t), 0);
	s = schema3(t);
	cr_assert_eq(
	    sc_csv_parse("x.csv", text, strlen(text), &s, cols3, 0, &r, NULL),
	    0, "%s", sc_errmsg());
	cr_assert_eq(r.n, 1);
	cr_assert_eq(sc_symtab_lookup(t, r.rows[1], &got, &len), 0);
	cr_assert_eq(len, 0);
	sc_csv_rows_fini(&r);
	sc_symtab_destroy(t);
}

/* Random rows written and read back are the same rows: doubles bit for
 * bit (the shortest round-tripping digits), texts with quotes and commas. */
Test(csv, written_rows_read_back_equal)
{
	struct sc_rng rng;
	struct sc_symtab *t = NULL;
	struct sc_schema s;
	struct sc_csv_rows r;
	uint64_t rows[300 * 3];
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	sc_rng_seed(&rng, sc_prop_seed(3));
	cr_assert_eq(sc_symtab_create(&t), 0);
	s = schema3(t);
	for (size_t i = 0; i < 300; i++) {
		char text[32];
		uint64_t bits = sc_rng_next(&rng);
		double d;

		(void)snprintf(text, sizeof(text), "t\"%zu,\n%llu", i,
			       (unsigned long long)(bits % 97));
		memcpy(&d, &bits, sizeof(d));
		if (i % 3 == 0)
			d = sc_rng_unit(&rng) * 1e6;
		rows[i * 3] = sc_enc_i64((int64_t)sc_rng_next(&rng));
		cr_assert_eq(sc_symtab_intern_cstr(t, text, &rows[i * 3 + 1]),
			     0);
		rows[i * 3 + 2] = sc_enc_f64(d);
	}
	f = open_memstream(&buf, &len);
	cr_assert_eq(sc_csv_write_header(f, cols3, 3, false), 0);
	for (size_t i = 0; i < 300; i++)
		cr_assert_eq(sc_csv_write_row(f, &s, rows + i * 3, NULL), 0);
	cr_assert_eq(fclose(f), 0);
	cr_assert_eq(sc_csv_parse("rt.csv", buf, len, &s, cols3, 0, &r, NULL),
		     0, "%s", sc_errmsg());
	cr_assert_eq(r.n, 300);
	cr_assert(!memcmp(r.rows, rows, sizeof(rows)),
		  "the rows read back differ");
	sc_csv_rows_fini(&r);
	free(buf);
	sc_symtab_destroy(t);
}

/* Integers at their ends and texts with quotes at theirs, written as the
 * format says: decimal digits, a '-' for a negative, quotes doubled. */
Test(csv, integers_and_texts_at_their_edges_are_written_exactly)
{
	static const enum sc_type types[3] = {SC_TYPE_I64, SC_TYPE_U64,
					      SC_TYPE_SYMBOL};
	static const struct {
		int64_t i;
		uint64_t u;
		const char *text;
		int64_t w;
		const char *line;
	} cases[] = {
	    {INT64_MIN, UINT64_MAX, "\"a\"", INT64_MIN,
	     "-9223372036854775808,18446744073709551615,\"\"\"a\"\"\","
	     "-9223372036854775808\n"},
	    {INT64_MAX, 0, "", INT64_MAX,
	     "9223372036854775807,0,\"\",9223372036854775807\n"},
	    {0, 10, "\"\"", -1, "0,10,\"\"\"\"\"\",-1\n"},
	    {-10, 9, "x,y", 1, "-10,9,\"x,y\",1\n"},
	};
	struct sc_symtab *t = NULL;
	struct sc_schema s;

	cr_assert_eq(sc_symtab_create(&t), 0);
	cr_assert_eq(sc_schema_init(&s, 3, types, t), 0);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint64_t row[3] = {sc_enc_i64(cases[i].i),
				   sc_enc_u64(cases[i].u), 0};
		char *buf = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&buf, &len);

		cr_assert_eq(sc_symtab_intern_cstr(t, cases[i].text, &row[2]),
			     0);
		cr_assert_eq(sc_csv_write_row(f, &s, row, &cases[i].w), 0);
		cr_assert_eq(fclose(f), 0);
		cr_assert_str_eq(buf, cases[i].line, "case %zu", i);
		free(buf);
		sc_symtab_release(t, row[2]);
	}
	sc_symtab_destroy(t);
}

Test(csv, unreadable_file_is_an_io_error_naming_it)
{
	struct sc_csv_rows r;
	struct sc_schema s = schema3(NULL);

	cr_assert_eq(
	    sc_csv_read_file("/nonexistent/bid.csv", &s, cols3, 0, &r, NULL),
	    SC_EIO);
	cr_assert(strstr(sc_errmsg(), "/nonexistent/bid.csv"), "%s",
		  sc_errmsg());
}

Test(csv, write_to_a_failing_stream_is_an_io_error)
{
	FILE *f = fopen("/dev/full", "w");
	int rc = 0;

	cr_assert_not_null(f);
	(void)setvbuf(f, NULL, _IONBF, 0);
	rc = sc_csv_write_header(f, cols3, 3, true);
	cr_assert_eq(rc, SC_EIO);
	(void)fclose(f);
}

/* --- reading over threads -------------------------------------------------
 */

/*
 * A CSV text of `n` records of (id, name, price) past 1 MiB a thread, its
 * names with commas, doubled quotes and line breaks inside quotes, some
 * lines ending in CRLF; `bad_at` (n or more: none) is a record with a
 * letter in its price.
 */
static char *
big_csv(size_t n, size_t bad_at, size_t *len)
{
	char *buf = NULL;
	size_t cap = 0;
	FILE *f = open_memstream(&buf, &cap);

	cr_assert(f);
	(void)fputs("id,name,price\n", f);
	for (size_t i = 0; i < n; i++) {
		const char *end = i % 7 == 0 ? "\r\n" : "\n";

		if (i % 5 == 0)
			(void)fprintf(
			    f, "%zu,\"n%zu, \"\"q\"\"\nline %zu\",%zu.5%s", i,
			    i % 1000, i, i, end);
		else
			(void)fprintf(f, "%zu,name %zu,%s%s", i, i % 3000,
				      i == bad_at ? "12x" : "3.25", end);
	}
	cr_assert_eq(fclose(f), 0);
	*len = cap;
	return buf;
}

Test(csv, threads_read_what_one_reader_reads)
{
	static const unsigned threads[] = {2, 3, 4, 8};
	struct sc_symtab *t = NULL;
	struct sc_csv_rows one, many;
	struct sc_schema s;
	size_t len;
	char *text = big_csv(200000, SIZE_MAX, &len);

	cr_assert_gt(len, 4u << 20, "the input spans several ranges");
	cr_assert_eq(sc_symtab_create(&t), 0);
	s = schema3(t);
	cr_assert_eq(
	    sc_csv_parse("big.csv", text, len, &s, cols3, 0, &one, NULL), 0,
	    "%s", sc_errmsg());
	cr_assert_eq(one.n, 200000);
	for (size_t k = 0; k < sizeof(threads) / sizeof(threads[0]); k++) {
		/* The texts are live (one holds them): the same ids. */
		cr_assert_eq(sc_csv_parse_threads("big.csv", text, len, &s,
						  cols3, 0, threads[k], &many,
						  NULL),
			     0, "%u threads: %s", threads[k], sc_errmsg());
		cr_assert_eq(many.n, one.n, "%u threads: %zu rows", threads[k],
			     many.n);
		cr_assert(!memcmp(many.rows, one.rows, one.n * 3 * 8),
			  "%u threads: the rows differ", threads[k]);
		sc_csv_rows_fini(&many);
	}
	sc_csv_rows_fini(&one);
	cr_assert_eq(sc_symtab_count(t), 0, "fini releases every range's");
	sc_symtab_destroy(t);
	free(text);
}

/* A bad record early, in the middle and last: over threads the same code,
 * file, line, column and words as one reader, and nothing kept. */
Test(csv, threads_refuse_what_one_reader_refuses_where_it_does)
{
	static const size_t bad[] = {3, 100001, 199999};
	struct sc_symtab *t = NULL;
	struct sc_schema s;

	cr_assert_eq(sc_symtab_create(&t), 0);
	s = schema3(t);
	for (size_t b = 0; b < sizeof(bad) / sizeof(bad[0]); b++) {
		struct sc_csv_error e1, e4;
		struct sc_csv_rows r1, r4;
		char m1[512];
		size_t len;
		char *text = big_csv(200000, bad[b], &len);
		int rc1, rc4;

		memset(&e1, 0, sizeof(e1));
		memset(&e4, 0, sizeof(e4));
		rc1 =
		    sc_csv_parse("bad.csv", text, len, &s, cols3, 0, &r1, &e1);
		(void)snprintf(m1, sizeof(m1), "%s", sc_errmsg());
		rc4 = sc_csv_parse_threads("bad.csv", text, len, &s, cols3, 0,
					   4, &r4, &e4);
		cr_assert_eq(rc1, SC_EINVAL);
		cr_assert_eq(rc4, rc1, "record %zu: %d", bad[b], rc4);
		cr_assert_eq(e4.line, e1.line,
			     "record %zu: line %llu, want %llu", bad[b],
			     (unsigned long long)e4.line,
			     (unsigned long long)e1.line);
		cr_assert_eq(e4.column, e1.column);
		cr_assert_str_eq(e4.what, e1.what);
		cr_assert_str_eq(sc_errmsg(), m1);
		cr_assert_eq(r4.n, 0);
		cr_assert_eq(sc_symtab_count(t), 0,
			     "record %zu: a failed read keeps no symbol",
			     bad[b]);
		free(text);
	}
	sc_symtab_destroy(t);
}

/* A quote opened and never closed late in a long input: the last range
 * runs to the end, and the error names where it opened, as one reader. */
Test(csv, threads_find_an_open_quote_where_it_opened)
{
	struct sc_symtab *t = NULL;
	struct sc_csv_error e1, e3;
	struct sc_csv_rows r1, r3;
	struct sc_schema s;
	size_t len;
	char *text = big_csv(150000, SIZE_MAX, &len);
	char *open_one = malloc(len + 32);

	memcpy(open_one, text, len);
	memcpy(open_one + len, "7,\"never closed,1\n8,x,2\n", 25);
	cr_assert_eq(sc_symtab_create(&t), 0);
	s = schema3(t);
	cr_assert_eq(
	    sc_csv_parse("q.csv", open_one, len + 24, &s, cols3, 0, &r1, &e1),
	    SC_EINVAL);
	cr_assert_eq(sc_csv_parse_threads("q.csv", open_one, len + 24, &s,
					  cols3, 0, 3, &r3, &e3),
		     SC_EINVAL);
	cr_assert_eq(e3.line, e1.line);
	cr_assert_eq(e3.column, e1.column);
	cr_assert_str_eq(e3.what, e1.what);
	cr_assert_eq(sc_symtab_count(t), 0);
	sc_symtab_destroy(t);
	free(open_one);
	free(text);
}

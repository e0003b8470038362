/*
 * tsan_csv_threads.c - CSV read over threads (bench/workloads/csv.h,
 * sc_csv_parse_threads) as a plain program for the ThreadSanitizer pass
 * (Criterion cannot run under TSan): some 5 MB of records with quoted texts,
 * read by one reader and by 4 threads interning into one table, the rows
 * compared; then a bad record in the third range, refused the same way.
 * Exits 0 on success. alarm() is the watchdog: a hang dies by SIGALRM.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench/workloads/csv.h"
#include "operators/error.h"
#include "operators/symbol.h"

static const char *const cols[] = {"id", "name", "price"};

static int
fail(const char *what)
{
	(void)fprintf(stderr, "tsan_csv_threads: %s (%s)\n", what, sc_errmsg());
	return 1;
}

static char *
text_of(size_t n, size_t bad_at, size_t *len)
{
	char *buf = NULL;
	size_t cap = 0;
	FILE *f = open_memstream(&buf, &cap);

	if (!f)
		return NULL;
	(void)fputs("id,name,price\n", f);
	for (size_t i = 0; i < n; i++)
		(void)fprintf(f, "%zu,\"t%zu,\n\"\"x\"\"\",%s\n", i, i % 5000,
			      i == bad_at ? "1y" : "2.5");
	if (fclose(f) != 0)
		return NULL;
	*len = cap;
	return buf;
}

int
main(void)
{
	static const enum sc_type ty[3] = {SC_TYPE_I64, SC_TYPE_SYMBOL,
					   SC_TYPE_F64};
	struct sc_symtab *t;
	struct sc_schema s;
	struct sc_csv_rows one, many;
	struct sc_csv_error e1, e4;
	size_t len;
	char *text;

	alarm(120);
	if (sc_symtab_create(&t) || sc_schema_init(&s, 3, ty, t))
		return fail("set-up");
	if (!(text = text_of(200000, SIZE_MAX, &len)) || len < (4u << 20))
		return fail("the input");
	if (sc_csv_parse("a.csv", text, len, &s, cols, 0, &one, NULL))
		return fail("one reader");
	if (sc_csv_parse_threads("a.csv", text, len, &s, cols, 0, 4, &many,
				 NULL))
		return fail("4 threads");
	if (many.n != one.n || memcmp(many.rows, one.rows, one.n * 3 * 8) != 0)
		return fail("the rows differ");
	sc_csv_rows_fini(&many);
	sc_csv_rows_fini(&one);
	free(text);
	if (!(text = text_of(200000, 130000, &len)))
		return fail("the bad input");
	memset(&e1, 0, sizeof(e1));
	memset(&e4, 0, sizeof(e4));
	if (sc_csv_parse("b.csv", text, len, &s, cols, 0, &one, &e1) !=
		SC_EINVAL ||
	    sc_csv_parse_threads("b.csv", text, len, &s, cols, 0, 4, &many,
				 &e4) != SC_EINVAL)
		return fail("a bad record read");
	if (e1.line != e4.line || e1.column != e4.column ||
	    strcmp(e1.what, e4.what) != 0)
		return fail("the errors differ");
	free(text);
	if (sc_symtab_count(t) != 0)
		return fail("ids live after every read is gone");
	sc_symtab_destroy(t);
	(void)printf("tsan_csv_threads: ok\n");
	return 0;
}

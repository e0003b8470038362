/*
 * fuzz_csv.c - a libFuzzer target for the CSV reader of the workloads'
 * input (bench/workloads/csv.h: `subcirc run --workload nexmark --from`).
 *
 * The first byte of an input picks a schema (Nexmark's person, auction or
 * bid, or one column of every type), the rest is the file's text, read
 * with a line limit of 64 bytes so the long-line path is reached. What the
 * reader promises, checked here:
 *   - a refusal is SC_EINVAL naming the file, a line and a column from 1
 *     ("fuzz.csv:L:C: ..."), and keeps nothing: no row, and the symbol
 *     table is back to empty;
 *   - a file it takes reads back the same: its rows, written by the
 *     writer and read again, are the same words (doubles bit for bit,
 *     texts with quotes, commas and line breaks), and releasing them
 *     empties the table.
 * A broken promise aborts, which libFuzzer reports with the input.
 *
 * Built by tools/fuzz (clang, libFuzzer, ASan+UBSan) over
 * tests/fuzz/corpus/csv/.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/workloads/csv.h"
#include "bench/workloads/nexmark.h"
#include "operators/symbol.h"

#define LINE_LIMIT 64

static const char *const mixed_cols[5] = {"a", "b", "c", "d", "e"};

static void __attribute__((noreturn)) broken(const char *what)
{
	(void)fprintf(stderr, "fuzz_csv: %s (%s)\n", what, sc_errmsg());
	abort();
}

/* The schema and column names input byte b picks. */
static void
pick(uint8_t b, struct sc_symtab *t, struct sc_schema *s,
     const char *const **cols)
{
	static const enum sc_type mixed[5] = {SC_TYPE_I64, SC_TYPE_U64,
					      SC_TYPE_F64, SC_TYPE_BOOL,
					      SC_TYPE_SYMBOL};

	if (b % 4 < 3) {
		(void)sc_nexmark_schema(b % 4, t, s);
		*cols = sc_nexmark_columns(b % 4);
		return;
	}
	(void)sc_schema_init(s, 5, mixed, t);
	*cols = mixed_cols;
}

/* Rows r written and read back must be the same words. */
static void
check_round_trip(const struct sc_schema *s, const char *const *cols,
		 const struct sc_csv_rows *r)
{
	struct sc_csv_rows again;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return; /* no memory: nothing to check */
	if (sc_csv_write_header(f, cols, s->ncols, false) != 0)
		broken("header not written");
	for (size_t i = 0; i < r->n; i++)
		if (sc_csv_write_row(f, s, r->rows + i * s->ncols, NULL) != 0)
			broken("row not written");
	if (fclose(f) != 0)
		broken("memstream");
	/* Written lines may be longer than the input's limit (quotes
	 * doubled): read them back without one. */
	if (sc_csv_parse("again.csv", buf, len, s, cols, 1u << 20, &again,
			 NULL) != 0)
		broken("what the writer wrote is refused");
	if (again.n != r->n ||
	    (r->n && memcmp(again.rows, r->rows,
			    r->n * s->ncols * sizeof(uint64_t)) != 0))
		broken("rows read back differ");
	sc_csv_rows_fini(&again);
	free(buf);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *const *cols;
	struct sc_symtab *t = NULL;
	struct sc_csv_rows r;
	struct sc_csv_error e;
	struct sc_schema s;
	char where[64];
	int rc;

	if (size < 1 || sc_symtab_create(&t) != 0)
		return 0;
	pick(data[0], t, &s, &cols);
	memset(&e, 0, sizeof(e));
	rc = sc_csv_parse("fuzz.csv", (const char *)data + 1, size - 1, &s,
			  cols, LINE_LIMIT, &r, &e);
	if (rc == SC_EINVAL) {
		(void)snprintf(where, sizeof(where),
			       "fuzz.csv:%llu:%u: ", (unsigned long long)e.line,
			       e.column);
		if (e.line < 1 || e.column < 1 || !strstr(sc_errmsg(), where))
			broken("a refusal without its line and column");
		if (r.n != 0 || sc_symtab_count(t) != 0)
			broken("a refusal kept rows or symbols");
	} else if (rc == 0) {
		check_round_trip(&s, cols, &r);
		sc_csv_rows_fini(&r);
		if (sc_symtab_count(t) != 0)
			broken("fini left symbols");
	} else if (rc != SC_ENOMEM) {
		broken("an error that is neither a refusal nor no memory");
	}
	sc_symtab_destroy(t);
	return 0;
}

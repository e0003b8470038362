/*
 * csv.h - typed rows in and out as CSV, with errors that name the file,
 * the line and the column.
 *
 * The format (RFC 4180, as spreadsheets and engines read it): one record a
 * line, fields separated by commas, a header row of column names first. A
 * field may be quoted with '"'; inside quotes a comma or a line break is
 * text and '""' is one quote. The writer quotes every string (so an empty
 * string and a missing one cannot be confused) and nothing else; the
 * reader takes a string quoted or not. Lines end in LF or CRLF.
 *
 * Values by column type (schema.h): i64 and u64 as decimal digits (a '-'
 * for a negative i64; no '+', no spaces, nothing past the digits); f64 as
 * the shortest of %.17g that round-trips (so every double reads back bit
 * for bit), and "nan", "inf", "-inf"; bool as true or false; a symbol as
 * its text, interned into the schema's table on reading.
 *
 * Reading parses a whole buffer before it returns anything: a file with
 * one bad record gives no rows at all, so a caller that submits only after
 * a successful read submits nothing from a bad file. The errors, each with
 * the file's name, the line (from 1) and the column (from 1) in
 * sc_errmsg() and in a struct sc_csv_error:
 *
 *   a header that is not the expected column names (the first that
 *   differs), a record with more or fewer fields than the header, a field
 *   of a number column that is not a number in range, a quote left open
 *   at the end of the input (the line and column where it opened), a
 *   quote in the middle of an unquoted field or text after a closing
 *   quote, and a line longer than the limit (the column where the limit
 *   is passed).
 *
 * Symbols. Every symbol word of the rows read holds one reference the
 * table (struct sc_csv_rows) owns, released by sc_csv_rows_fini; a read
 * that fails releases the references it took.
 *
 * Threads: one thread per call; the symbol table may be shared.
 */
#ifndef SC_BENCH_WORKLOADS_CSV_H
#define SC_BENCH_WORKLOADS_CSV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "operators/batch.h"
#include "operators/error.h"
#include "operators/schema.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The default longest line (bytes, the line break excluded). */
#define SC_CSV_MAX_LINE (1u << 16)

/* Where and why a read failed. */
struct sc_csv_error {
	char file[256];	 /* the name given to the reader */
	uint64_t line;	 /* from 1 */
	uint32_t column; /* field number, from 1 */
	char what[256];	 /* what is wrong there */
};

/* Rows read, in the order of the input. Caller storage; fini frees. */
struct sc_csv_rows {
	uint32_t ncols;		   /* words per row */
	size_t n;		   /* rows */
	size_t cap;		   /* rows room */
	uint64_t *rows;		   /* n * ncols words, encoded (schema.h) */
	struct sc_symtab *symbols; /* where the rows' symbols are held */
	uint32_t nsym;		   /* symbol columns */
	uint32_t sym_cols[32];	   /* their indices */
};

/*
 * sc_csv_parse - read `len` bytes at `buf` (named `name` in messages) as
 * a header row equal to cols[0..s->ncols) and records of s's types, into
 * *out (initialised here). Symbols are interned into s->symbols, which
 * must be set when s has a symbol column. max_line 0 means
 * SC_CSV_MAX_LINE. Returns:
 *   0            *out holds every record (release with sc_csv_rows_fini)
 *   SC_EINVAL    the input is not such CSV: *err (if not NULL) and
 *                sc_errmsg() say "name:line:column: what"; *out is empty
 *   SC_ENOMEM, SC_EOVERFLOW (a symbol's count), nothing kept
 */
int sc_csv_parse(const char *name, const char *buf, size_t len,
		 const struct sc_schema *s, const char *const *cols,
		 size_t max_line, struct sc_csv_rows *out,
		 struct sc_csv_error *err);

/*
 * sc_csv_read_file - sc_csv_parse of the whole file at `path` (named by
 * its path). SC_EIO (with the system's reason) when it cannot be read.
 */
int sc_csv_read_file(const char *path, const struct sc_schema *s,
		     const char *const *cols, size_t max_line,
		     struct sc_csv_rows *out, struct sc_csv_error *err);

/* sc_csv_rows_fini - release the rows' symbols and free them. NULL and a
 * zeroed struct are allowed. */
void sc_csv_rows_fini(struct sc_csv_rows *r);

/*
 * sc_csv_write_header - the names cols[0..n), then ",weight" if `weight`.
 * sc_csv_write_row - one row of s, then its weight if `weight` is not
 * NULL. A symbol is written as its text (s->symbols must know it: else
 * SC_ENOENT). Both return 0, SC_EINVAL, SC_ENOENT, or SC_EIO when the
 * stream reports an error.
 */
int sc_csv_write_header(FILE *f, const char *const *cols, size_t n,
			bool weight);
int sc_csv_write_row(FILE *f, const struct sc_schema *s, const uint64_t *row,
		     const int64_t *weight);

/* sc_csv_write_batch - the header, then every row of b with its weight. */
int sc_csv_write_batch(FILE *f, const struct sc_schema *s,
		       const char *const *cols, const struct sc_batch *b);

#ifdef __cplusplus
}
#endif

#endif /* SC_BENCH_WORKLOADS_CSV_H */

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

/*
 * sc_csv_parse_threads, sc_csv_read_file_threads - the same over up to
 * `threads` threads (0 or 1: this one alone): the records after the header
 * are cut at line breaks outside quotes into one range per thread (a range
 * of at least 1 MiB: a smaller input is read by this thread), each range
 * read on its own thread, the rows joined in the input's order. The rows,
 * the error (the first in the input's order, with its file, line and
 * column) and what a failure keeps (nothing) are those of one reader;
 * only the symbols' ids may differ, as they follow the order of
 * interning. SC_ENOMEM also when no memory was left for the ranges.
 */
int sc_csv_parse_threads(const char *name, const char *buf, size_t len,
			 const struct sc_schema *s, const char *const *cols,
			 size_t max_line, unsigned threads,
			 struct sc_csv_rows *out, struct sc_csv_error *err);
int sc_csv_read_file_threads(const char *path, const struct sc_schema *s,
			     const char *const *cols, size_t max_line,
			     unsigned threads, struct sc_csv_rows *out,
			     struct sc_csv_error *err);

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

/*
 * sc_csv_row_text - the line sc_csv_write_row would write (its '\n' last,
 * no NUL) into buf[0..cap) as far as it fits; *len is its whole length,
 * so a caller whose cap < *len makes room and calls again. Returns 0,
 * SC_EINVAL (NULL s, row or len; NULL buf with cap > 0), SC_ENOENT (as
 * sc_csv_write_row).
 */
int sc_csv_row_text(const struct sc_schema *s, const uint64_t *row,
		    const int64_t *weight, char *buf, size_t cap, size_t *len);

/* sc_csv_write_batch - the header, then every row of b with its weight. */
int sc_csv_write_batch(FILE *f, const struct sc_schema *s,
		       const char *const *cols, const struct sc_batch *b);

/* --- the stream reader ----------------------------------------------------
 *
 * A live source. sc_csv_parse wants the whole input; a pipe (a producer
 * that writes rows as they happen, standard input) has no whole input
 * until it closes, and a reader that waits for the end hands out nothing
 * while the producer runs. The stream reader reads what the descriptor
 * has (read(2) after poll(2)), cuts it into records, and hands out the
 * rows read so far in batches bounded two ways:
 *
 *   by size     at most batch_rows rows (default 1024) a batch, so one
 *               submission stays small whatever the input's rate;
 *   by time     a batch with at least one row is handed out once its
 *               first row has waited linger_ms (default 10) for more,
 *               so a slow producer's rows come out about as they arrive
 *               rather than once batch_rows have gathered.
 *
 * The format is csv.h's (quoting, line ends, values), with three
 * differences a live, typed source asks for:
 *
 *   The header. Graph schemas have no column names, so the header's
 *   names are not compared: what is checked is its width, the schema's
 *   (every row then has weight 1), or the schema's plus one whose last
 *   name is `weight` (each row's last field is then its weight, a
 *   non-zero i64: -1 retracts a row). A first line whose every number
 *   column reads as a value is refused as data, not a header, so a file
 *   without one does not lose its first row silently.
 *
 *   Timestamps. An i64 or u64 column also takes an RFC 3339 UTC time,
 *   2026-12-06T10:00:00Z or with a fraction of up to three digits
 *   (2026-12-06T10:00:00.250Z), read as milliseconds since the epoch,
 *   the unit of Nexmark's date_time (nexmark.h). Only 'Z': an offset
 *   would make the same text mean two instants to two readers.
 *
 *   The last line ends in a line break. A source that stops in the
 *   middle of a line (a writer killed, a copy cut short) cannot be told
 *   from a whole last line otherwise: "1,2,3,4" may be "1,2,3,45" cut.
 *   So a last line without one is refused, naming it.
 *
 * Errors come after the rows before them. A bad record stops the
 * reading; the rows read before it are handed out first (in one or more
 * batches), and only the call after the last of them returns the error,
 * with "name:line:column: what" in sc_errmsg() and the position in
 * sc_csv_stream_error. So a host that submits every batch it is given
 * has submitted exactly the rows before the bad line. The error then
 * stays: every later call returns it again.
 *
 * Symbols. Each symbol word of a batch handed out holds one reference,
 * which the stream keeps until its next call of sc_csv_stream_next (or
 * destroy): submit a batch before asking for the next one (a runtime
 * takes its own holds at submit, symbol.h "Who holds an id").
 *
 * Threads: one thread at a time per stream.
 */

/* The defaults of struct sc_csv_stream_opts. */
#define SC_CSV_BATCH_ROWS 1024u
#define SC_CSV_LINGER_MS  10u

/* How a stream hands out rows. Zeroed fields take the defaults. */
struct sc_csv_stream_opts {
	uint32_t batch_rows; /* most rows a batch; 0: SC_CSV_BATCH_ROWS */
	uint32_t linger_ms;  /* longest wait of a batch's first row;
				0: SC_CSV_LINGER_MS */
	size_t max_line;     /* longest line; 0: SC_CSV_MAX_LINE */
};

/* Rows handed out by sc_csv_stream_next, borrowed from the stream until
 * its next call. */
struct sc_csv_batch {
	const uint64_t *rows;	/* n * ncols words, encoded (schema.h) */
	const int64_t *weights; /* n weights; NULL: every weight 1 (no
				   weight column) */
	size_t n;		/* rows, >= 1 */
	uint64_t first_line;	/* the line of the first row */
};

struct sc_csv_stream;

/*
 * sc_csv_stream_open - a stream over the file at `path` (named by it in
 * messages), rows of schema s (copied; a symbol column needs
 * s->symbols, which must outlive the stream). A FIFO is opened without
 * waiting for its writer. Returns:
 *   0            *out
 *   SC_EINVAL    NULL path, s or out; a schema of no column or a symbol
 *                column and no table; o->batch_rows above 2^24; `path`
 *                is a directory (named)
 *   SC_EIO       `path` cannot be opened (named, with the system's
 *                reason: no such file, permission denied)
 *   SC_ENOMEM
 * Nothing is left on failure.
 */
int sc_csv_stream_open(const char *path, const struct sc_schema *s,
		       const struct sc_csv_stream_opts *o,
		       struct sc_csv_stream **out);

/*
 * sc_csv_stream_create - a stream over the open descriptor fd (borrowed:
 * not closed by destroy; standard input is 0), named `name` in messages.
 * Errors as sc_csv_stream_open (a descriptor of a directory, fd < 0:
 * SC_EINVAL).
 */
int sc_csv_stream_create(int fd, const char *name, const struct sc_schema *s,
			 const struct sc_csv_stream_opts *o,
			 struct sc_csv_stream **out);

/*
 * sc_csv_stream_next - the next batch into *out, waiting for input at
 * most timeout_ms (-1: until a batch is ready; 0: only what can be read
 * without waiting). It reads while the descriptor has bytes ready, so a
 * regular file's batches are full ones. Returns:
 *   0             *out holds 1..batch_rows rows: batch_rows of them, or
 *                 fewer whose first waited linger_ms, or the rows before
 *                 the end or before a bad record
 *   SC_ETIMEDOUT  no batch is ready within timeout_ms (rows read may be
 *                 waiting for more): call again; also when a signal
 *                 interrupted the wait, so a host can look at it
 *   SC_EEMPTY     the input ended and every row was handed out
 *   SC_EINVAL     a bad record, after every row before it was handed
 *                 out: "name:line:column: what" (sc_csv_stream_error);
 *                 also NULL arguments
 *   SC_EIO        read(2) failed (the path and the system's reason)
 *   SC_ENOMEM, SC_EOVERFLOW (a symbol's count)
 * SC_EINVAL, SC_EIO and SC_EEMPTY stay: later calls return them again.
 */
int sc_csv_stream_next(struct sc_csv_stream *st, int timeout_ms,
		       struct sc_csv_batch *out);

/* The position of the bad record once next returned SC_EINVAL for one,
 * else NULL. Borrowed from the stream. */
const struct sc_csv_error *sc_csv_stream_error(const struct sc_csv_stream *st);

/* Whether the header named a weight column (false before it was read). */
bool sc_csv_stream_weighted(const struct sc_csv_stream *st);

/* The descriptor read (for a host that polls several streams), or -1. */
int sc_csv_stream_fd(const struct sc_csv_stream *st);

/* sc_csv_stream_destroy - release the held symbols, close a file the
 * stream opened and free it. NULL is allowed. */
void sc_csv_stream_destroy(struct sc_csv_stream *st);

/*
 * sc_csv_timestamp - an RFC 3339 UTC time of `len` bytes at s
 * ("YYYY-MM-DDTHH:MM:SS[.f{1,3}]Z", 'T' and 'Z' in either case, years
 * 0000..9999) as milliseconds since the epoch into *ms: true, or false
 * (and *ms untouched) when s is not one.
 */
bool sc_csv_timestamp(const char *s, size_t len, int64_t *ms);

#ifdef __cplusplus
}
#endif

#endif /* SC_BENCH_WORKLOADS_CSV_H */

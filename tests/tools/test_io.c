/*
 * test_io.c - CSV in and out of a circuit: the stream reader
 * (bench/workloads/csv.h, sc_csv_stream) over files, FIFOs and pipes, and
 * the CLI's module over it (tools/cli_io.c) on a small graph driven by a
 * real runtime. SC_THREADED: a writer thread feeds the pipes, the runtime
 * runs a worker.
 */
#include <criterion/criterion.h>
#include <criterion/redirect.h>
#include <errno.h>
#include <stdint.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bench/workloads/csv.h"
#include "operators/graph.h"
#include "operators/symbol.h"
#include "tests/support/prop.h"
#include "tests/support/rt_watchdog.h"
#include "tools/cli_io.h"
#include "units/placement.h"
#include "units/runtime.h"

/* --- helpers ------------------------------------------------------------- */

static struct sc_schema
schema_i64(uint32_t n)
{
	enum sc_type t[SC_SCHEMA_MAX_COLS];
	struct sc_schema s;

	for (uint32_t i = 0; i < n; i++)
		t[i] = SC_TYPE_I64;
	cr_assert_eq(sc_schema_init(&s, n, t, NULL), 0);
	return s;
}

/* A temporary file holding text; its path in path (room for 64). */
static void
file_of(char *path, const char *text)
{
	int fd;

	(void)snprintf(path, 64, "/tmp/sc_test_io_XXXXXX");
	fd = mkstemp(path);
	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	cr_assert_eq(close(fd), 0);
}

static struct sc_csv_stream *
stream_of(const char *path, const struct sc_schema *s, uint32_t batch_rows)
{
	struct sc_csv_stream_opts o = {.batch_rows = batch_rows};
	struct sc_csv_stream *st = NULL;

	cr_assert_eq(sc_csv_stream_open(path, s, &o, &st), 0, "%s",
		     sc_errmsg());
	return st;
}

/* Read every batch until an error: the rows (ncols words each) into
 * rows, their weights into w, their count into *n; returns the error. */
static int
drain(struct sc_csv_stream *st, uint32_t ncols, uint64_t *rows, int64_t *w,
      size_t max, size_t *n)
{
	struct sc_csv_batch b;
	int rc;

	*n = 0;
	while ((rc = sc_csv_stream_next(st, 1000, &b)) == 0) {
		cr_assert_leq(*n + b.n, max);
		memcpy(rows + *n * ncols, b.rows, b.n * ncols * sizeof(*rows));
		for (size_t i = 0; i < b.n; i++)
			w[*n + i] = b.weights ? b.weights[i] : 1;
		*n += b.n;
	}
	return rc;
}

/* The text `what` is refused with the message `why` (a substring). */
static void
refused(const char *text, uint32_t ncols, const char *why)
{
	struct sc_schema s = schema_i64(ncols);
	char path[64];
	uint64_t rows[64];
	int64_t w[16];
	size_t n;
	struct sc_csv_stream *st;

	file_of(path, text);
	st = stream_of(path, &s, 0);
	cr_assert_eq(drain(st, ncols, rows, w, 16, &n), SC_EINVAL,
		     "accepted: %s", text);
	cr_assert(strstr(sc_errmsg(), path), "no path in '%s'", sc_errmsg());
	cr_assert(strstr(sc_errmsg(), why), "'%s' lacks '%s'", sc_errmsg(),
		  why);
	sc_csv_stream_destroy(st);
	(void)unlink(path);
}

/* --- the stream reader -------------------------------------------------- */

Test(csv_stream, a_bad_field_is_refused_by_file_line_and_column)
{
	refused("a,b,c\n1,2,3\n4,x5,6\n", 3, ":3:2: 'x5' is not an i64");
}

Test(csv_stream, integers_read_to_their_types_bounds_and_not_past)
{
	enum sc_type t[2] = {SC_TYPE_I64, SC_TYPE_U64};
	struct sc_schema s;
	struct sc_csv_stream *st;
	struct sc_csv_batch b;
	char path[64];

	cr_assert_eq(sc_schema_init(&s, 2, t, NULL), 0);
	file_of(path, "i,u\n-9223372036854775808,18446744073709551615\n"
		      "9223372036854775807,0\n-0,007\n");
	st = stream_of(path, &s, 0);
	cr_assert_eq(sc_csv_stream_next(st, 1000, &b), 0, "%s", sc_errmsg());
	cr_assert_eq(b.n, 3);
	cr_assert_eq(sc_dec_i64(b.rows[0]), INT64_MIN);
	cr_assert_eq(sc_dec_u64(b.rows[1]), UINT64_MAX);
	cr_assert_eq(sc_dec_i64(b.rows[2]), INT64_MAX);
	cr_assert_eq(sc_dec_i64(b.rows[4]), 0);
	cr_assert_eq(sc_dec_u64(b.rows[5]), 7);
	sc_csv_stream_destroy(st);
	(void)unlink(path);
	file_of(path, "i,u\n1,-1\n");
	st = stream_of(path, &s, 0);
	cr_assert_eq(sc_csv_stream_next(st, 1000, &b), SC_EINVAL);
	cr_assert(strstr(sc_errmsg(), ":2:2: '-1' is not an u64"), "%s",
		  sc_errmsg());
	sc_csv_stream_destroy(st);
	(void)unlink(path);
	/* refused() reads both columns as i64 */
	refused("i,u\n9223372036854775808,1\n", 2, ":2:1:");
	refused("i,u\n-9223372036854775809,1\n", 2, ":2:1:");
	refused("i,u\n1,18446744073709551616\n", 2, ":2:2:");
	refused("i,u\n-,1\n", 2, ":2:1: '-' is not an i64");
	refused("i,u\n+1,1\n", 2, ":2:1: '+1' is not an i64");
	refused("i,u\n 1,1\n", 2, ":2:1:");
}

Test(csv_stream, a_short_line_is_refused_naming_its_field_count)
{
	refused("a,b,c\n1,2,3\n4,5\n", 3, ":3:3: 2 fields, expected 3");
}

Test(csv_stream, a_long_line_of_too_many_fields_is_refused_at_the_first_extra)
{
	refused("a,b\n1,2\n3,4,5\n", 2, ":3:3: more than 2 fields");
}

Test(csv_stream, crlf_lines_and_quoted_line_breaks_read_as_in_rfc_4180)
{
	enum sc_type t[2] = {SC_TYPE_I64, SC_TYPE_SYMBOL};
	struct sc_symtab *tab = NULL;
	struct sc_schema s;
	struct sc_csv_stream *st;
	struct sc_csv_batch b;
	const char *text;
	size_t len;
	char path[64];

	cr_assert_eq(sc_symtab_create(&tab), 0);
	cr_assert_eq(sc_schema_init(&s, 2, t, tab), 0);
	file_of(path, "n,s\r\n1,plain\r\n2,\"two\r\nlines, \"\"q\"\"\"\r\n"
		      "3,x\r\n4,bad\"\r\n");
	st = stream_of(path, &s, 0);
	cr_assert_eq(sc_csv_stream_next(st, 1000, &b), 0, "%s", sc_errmsg());
	cr_assert_eq(b.n, 3);
	cr_assert_eq(sc_symtab_lookup(tab, b.rows[3], &text, &len), 0);
	cr_assert_eq(len, 15);
	cr_assert(!memcmp(text, "two\r\nlines, \"q\"", 15));
	cr_assert_eq(sc_dec_i64(b.rows[4]), 3);
	cr_assert_eq(sc_csv_stream_next(st, 1000, &b), SC_EINVAL);
	/* the quoted field spans two lines: the row after it is line 5 */
	cr_assert(strstr(sc_errmsg(), ":6:2: a quote inside an unquoted field"),
		  "%s", sc_errmsg());
	sc_csv_stream_destroy(st);
	sc_symtab_destroy(tab);
	(void)unlink(path);
}

Test(csv_stream, a_line_longer_than_the_limit_is_refused)
{
	struct sc_schema s = schema_i64(1);
	struct sc_csv_stream_opts o = {.max_line = 16};
	struct sc_csv_stream *st = NULL;
	struct sc_csv_batch b;
	char path[64];

	file_of(path, "a\n1\n123456789012345678901234567890\n");
	cr_assert_eq(sc_csv_stream_open(path, &s, &o, &st), 0);
	cr_assert_eq(sc_csv_stream_next(st, 1000, &b), 0);
	cr_assert_eq(b.n, 1);
	cr_assert_eq(sc_csv_stream_next(st, 1000, &b), SC_EINVAL);
	cr_assert(strstr(sc_errmsg(), ":3:1: line longer than 16 bytes"), "%s",
		  sc_errmsg());
	sc_csv_stream_destroy(st);
	(void)unlink(path);
}

Test(csv_stream, a_weight_column_gives_each_row_its_weight)
{
	struct sc_schema s = schema_i64(2);
	uint64_t rows[16];
	int64_t w[8];
	size_t n;
	char path[64];
	struct sc_csv_stream *st;

	file_of(path, "k,v,weight\n1,10,1\n2,20,-3\n1,10,2\n");
	st = stream_of(path, &s, 0);
	cr_assert_eq(drain(st, 2, rows, w, 8, &n), SC_EEMPTY, "%s",
		     sc_errmsg());
	cr_assert(sc_csv_stream_weighted(st));
	cr_assert_eq(n, 3);
	cr_assert_eq(sc_dec_i64(rows[2]), 2);
	cr_assert_eq(w[0], 1);
	cr_assert_eq(w[1], -3);
	cr_assert_eq(w[2], 2);
	sc_csv_stream_destroy(st);
	(void)unlink(path);
}

Test(csv_stream, a_zero_weight_is_refused)
{
	refused("k,weight\n1,1\n2,0\n", 1,
		":3:2: weight '0' is not a non-zero");
}

Test(csv_stream, a_header_of_another_width_is_refused)
{
	refused("a,b,c,d\n1,2,3,4\n", 2, ":1:3: the header has 4 fields");
}

Test(csv_stream, a_first_line_of_values_is_refused_as_no_header)
{
	refused("1,2\n3,4\n", 2, ":1:1: a row of values where the header");
}

Test(csv_stream, timestamps_read_as_milliseconds_since_the_epoch)
{
	struct sc_schema s = schema_i64(2);
	uint64_t rows[16];
	int64_t w[8];
	size_t n;
	char path[64];
	struct sc_csv_stream *st;

	file_of(path, "id,t\n1,1970-01-01T00:00:01Z\n"
		      "2,2026-12-06T10:00:00.25Z\n3,1969-12-31T23:59:59.999z\n"
		      "4,2024-02-29t00:00:00Z\n");
	st = stream_of(path, &s, 0);
	cr_assert_eq(drain(st, 2, rows, w, 8, &n), SC_EEMPTY, "%s",
		     sc_errmsg());
	cr_assert_eq(n, 4);
	cr_assert_eq(sc_dec_i64(rows[1]), 1000);
	cr_assert_eq(sc_dec_i64(rows[3]), 1796551200250LL);
	cr_assert_eq(sc_dec_i64(rows[5]), -1);
	cr_assert_eq(sc_dec_i64(rows[7]), 1709164800000LL);
	sc_csv_stream_destroy(st);
	(void)unlink(path);
}

Test(csv_stream, a_timestamp_with_an_offset_or_a_bad_day_is_refused)
{
	refused("id,t\n1,2026-12-06T10:00:00+01:00\n", 2,
		":2:2: '2026-12-06T10:00:00+01:00' is not an i64 or an RFC "
		"3339 UTC time");
	refused("id,t\n1,2025-02-29T10:00:00Z\n", 2, ":2:2:");
	refused("id,t\n1,2025-01-01T10:00:00.1234Z\n", 2, ":2:2:");
}

Test(csv_stream, a_missing_file_is_eio_naming_the_path)
{
	struct sc_schema s = schema_i64(1);
	struct sc_csv_stream *st = NULL;

	cr_assert_eq(
	    sc_csv_stream_open("/nonexistent-dir/in.csv", &s, NULL, &st),
	    SC_EIO);
	cr_assert_null(st);
	cr_assert(strstr(sc_errmsg(), "cannot read '/nonexistent-dir/in.csv': "
				      "No such file"),
		  "%s", sc_errmsg());
}

Test(csv_stream, a_directory_is_einval_naming_the_path)
{
	struct sc_schema s = schema_i64(1);
	struct sc_csv_stream *st = NULL;

	cr_assert_eq(sc_csv_stream_open("/tmp", &s, NULL, &st), SC_EINVAL);
	cr_assert_null(st);
	cr_assert(strstr(sc_errmsg(), "'/tmp' is a directory"), "%s",
		  sc_errmsg());
}

Test(csv_stream, rows_before_a_bad_row_are_handed_out_before_the_error)
{
	struct sc_schema s = schema_i64(2);
	uint64_t rows[32];
	int64_t w[16];
	size_t n;
	char path[64];
	struct sc_csv_stream *st;
	const struct sc_csv_error *e;

	file_of(path, "a,b\n1,1\n2,2\n3,3\n4,4\n5,5\n6,oops\n7,7\n");
	st = stream_of(path, &s, 2); /* batches of 2: 2, 2, 1, error */
	cr_assert_eq(drain(st, 2, rows, w, 16, &n), SC_EINVAL);
	cr_assert_eq(n, 5, "%zu rows before the bad one", n);
	cr_assert_eq(sc_dec_i64(rows[8]), 5);
	e = sc_csv_stream_error(st);
	cr_assert_not_null(e);
	cr_assert_eq(e->line, 7);
	cr_assert_eq(e->column, 2);
	/* and it stays */
	struct sc_csv_batch b;
	cr_assert_eq(sc_csv_stream_next(st, 0, &b), SC_EINVAL);
	cr_assert(strstr(sc_errmsg(), ":7:2:"), "%s", sc_errmsg());
	sc_csv_stream_destroy(st);
	(void)unlink(path);
}

Test(csv_stream, batch_rows_bounds_every_batch)
{
	struct sc_schema s = schema_i64(1);
	char path[64], text[4096] = "x\n";
	struct sc_csv_stream *st;
	struct sc_csv_batch b;
	size_t total = 0;
	int rc;

	for (int i = 0; i < 100; i++)
		(void)snprintf(text + strlen(text), sizeof(text) - strlen(text),
			       "%d\n", i);
	file_of(path, text);
	st = stream_of(path, &s, 7);
	while ((rc = sc_csv_stream_next(st, 1000, &b)) == 0) {
		cr_assert_leq(b.n, 7);
		cr_assert_eq(b.first_line, total + 2);
		total += b.n;
	}
	cr_assert_eq(rc, SC_EEMPTY);
	cr_assert_eq(total, 100);
	sc_csv_stream_destroy(st);
	(void)unlink(path);
}

Test(csv_stream, symbols_are_held_until_the_next_call_and_then_released)
{
	enum sc_type t[2] = {SC_TYPE_SYMBOL, SC_TYPE_I64};
	struct sc_symtab *tab = NULL;
	struct sc_schema s;
	struct sc_csv_stream *st;
	struct sc_csv_batch b;
	const char *text;
	size_t len;
	char path[64];

	cr_assert_eq(sc_symtab_create(&tab), 0);
	cr_assert_eq(sc_schema_init(&s, 2, t, tab), 0);
	file_of(path, "name,n\nalice,1\n\"bob, jr\",2\n");
	st = stream_of(path, &s, 0);
	cr_assert_eq(sc_csv_stream_next(st, 1000, &b), 0, "%s", sc_errmsg());
	cr_assert_eq(b.n, 2);
	cr_assert_eq(sc_symtab_lookup(tab, b.rows[2], &text, &len), 0);
	cr_assert_eq(len, 7);
	cr_assert(!memcmp(text, "bob, jr", 7));
	cr_assert_eq(sc_symtab_count(tab), 2);
	cr_assert_eq(sc_csv_stream_next(st, 1000, &b), SC_EEMPTY);
	cr_assert_eq(sc_symtab_count(tab), 0, "the ids were not released");
	sc_csv_stream_destroy(st);
	sc_symtab_destroy(tab);
	(void)unlink(path);
}

/* A FIFO's writer: the text, then close (the thread's argument). */
struct writer {
	const char *path; /* a FIFO to open, or NULL: fd */
	int fd;
	const char *parts[4]; /* written in turn */
	int gap_ms;	      /* between parts */
	atomic_bool closed;
	atomic_bool go_on; /* set by the reader: the next part may go */
	bool hold_close;   /* wait for the reader's word to close too */
};

static void
sleep_ms(int ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};

	(void)nanosleep(&ts, NULL);
}

static void *
writer_run(void *arg)
{
	struct writer *w = arg;
	int fd = w->path ? open(w->path, O_WRONLY) : w->fd;

	for (int i = 0; i < 4 && w->parts[i]; i++) {
		/* After the first part, wait for the reader's word (at
		 * most 5 s: a reader that never says it frees us anyway,
		 * and its test then fails on `closed`). */
		for (int k = 0; i > 0 && k < 5000 && !atomic_load(&w->go_on);
		     k++)
			sleep_ms(1);
		atomic_store(&w->go_on, false);
		sleep_ms(w->gap_ms);
		if (write(fd, w->parts[i], strlen(w->parts[i])) < 0)
			break;
	}
	for (int k = 0; w->hold_close && k < 5000 && !atomic_load(&w->go_on);
	     k++)
		sleep_ms(1);
	atomic_store(&w->closed, true);
	(void)close(fd);
	return NULL;
}

Test(csv_stream, a_fifo_whose_writer_stops_mid_line_is_refused_naming_it,
     .timeout = 20)
{
	struct sc_schema s = schema_i64(2);
	struct writer w = {.parts = {"a,b\n1,2\n3,4\n5,6"}};
	char path[64] = "/tmp/sc_test_io_fifo_XXXXXX";
	uint64_t rows[16];
	int64_t wt[8];
	size_t n;
	pthread_t th;
	struct sc_csv_stream *st;

	cr_assert_neq(mkdtemp(path), NULL);
	strcat(path, "/f");
	cr_assert_eq(mkfifo(path, 0600), 0);
	w.path = path;
	st = stream_of(path, &s, 0); /* opens before the writer does */
	cr_assert_eq(pthread_create(&th, NULL, writer_run, &w), 0);
	cr_assert_eq(drain(st, 2, rows, wt, 8, &n), SC_EINVAL, "%s",
		     sc_errmsg());
	cr_assert_eq(n, 2);
	cr_assert(strstr(sc_errmsg(), ":4:2: the input ends inside this line"),
		  "%s", sc_errmsg());
	cr_assert_eq(pthread_join(th, NULL), 0);
	sc_csv_stream_destroy(st);
	(void)unlink(path);
	*strrchr(path, '/') = '\0';
	(void)rmdir(path);
}

Test(csv_stream, a_slow_pipe_has_its_rows_handed_out_as_they_arrive,
     .timeout = 20)
{
	struct sc_schema s = schema_i64(1);
	struct writer w = {.parts = {"n\n1\n", "2\n", "3\n"},
			   .gap_ms = 20,
			   .hold_close = true};
	struct sc_csv_stream_opts o = {.linger_ms = 5};
	struct sc_csv_stream *st = NULL;
	struct sc_csv_batch b;
	pthread_t th;
	int p[2], rc;

	cr_assert_eq(pipe(p), 0);
	w.fd = p[1];
	cr_assert_eq(sc_csv_stream_create(p[0], "pipe", &s, &o, &st), 0);
	cr_assert_eq(pthread_create(&th, NULL, writer_run, &w), 0);
	for (int64_t want = 1; want <= 3; want++) {
		while ((rc = sc_csv_stream_next(st, 100, &b)) == SC_ETIMEDOUT)
			;
		cr_assert_eq(rc, 0, "%s", sc_errmsg());
		cr_assert_eq(b.n, 1);
		cr_assert_eq(sc_dec_i64(b.rows[0]), want);
		cr_assert(!atomic_load(&w.closed),
			  "row %lld came only once the writer closed",
			  (long long)want);
		atomic_store(&w.go_on, true);
	}
	while ((rc = sc_csv_stream_next(st, 100, &b)) == SC_ETIMEDOUT)
		;
	cr_assert_eq(rc, SC_EEMPTY, "%s", sc_errmsg());
	cr_assert_eq(pthread_join(th, NULL), 0);
	sc_csv_stream_destroy(st);
	(void)close(p[0]);
}

Test(csv_stream, rows_waiting_for_their_linger_survive_calls_that_time_out,
     .timeout = 20)
{
	struct sc_schema s = schema_i64(1);
	struct sc_csv_stream_opts o = {.linger_ms = 50};
	struct sc_csv_stream *st = NULL;
	struct sc_csv_batch b;
	int p[2], rc, timeouts = 0;

	cr_assert_eq(pipe(p), 0);
	cr_assert_eq(write(p[1], "n\n7\n", 4), 4);
	cr_assert_eq(sc_csv_stream_create(p[0], "pipe", &s, &o, &st), 0);
	while ((rc = sc_csv_stream_next(st, 0, &b)) == SC_ETIMEDOUT)
		timeouts++;
	cr_assert_eq(rc, 0, "%s", sc_errmsg());
	cr_assert_gt(timeouts, 0, "the row did not wait for its linger");
	cr_assert_eq(b.n, 1);
	cr_assert_eq(sc_dec_i64(b.rows[0]), 7);
	sc_csv_stream_destroy(st);
	(void)close(p[0]);
	(void)close(p[1]);
}

/* One random field: mostly good values of column c's type (i64, symbol,
 * u64), sometimes text that is not, quotes of every kind, or nothing. */
static void
random_field(struct sc_rng *g, uint32_t c, char *buf, size_t *len)
{
	static const char *odd[] = {"",		  "x",
				    "\"a,b\"",	  "\"two\nlines\"",
				    "\"q\"\"q\"", "a\"b",
				    "\"a\"b",	  "-",
				    "1\r2",	  "99999999999999999999",
				    "-5",	  "\"unclosed"};
	char v[64];

	if (sc_rng_below(g, 8) == 0) {
		(void)snprintf(
		    v, sizeof(v), "%s",
		    odd[sc_rng_below(g, sizeof(odd) / sizeof(*odd))]);
	} else if (c == 1) {
		(void)snprintf(v, sizeof(v), "w%llu",
			       (unsigned long long)sc_rng_below(g, 50));
	} else {
		(void)snprintf(v, sizeof(v), "%lld",
			       (long long)sc_rng_range(g, c ? 0 : -1000, 1000));
	}
	*len += (size_t)snprintf(buf + *len, 8192 - *len, "%s", v);
}

/* A random input of mostly good rows of (i64, symbol, u64), each line
 * ended, so the stream and the whole-buffer parser must agree on it. */
static size_t
random_input(struct sc_rng *g, char *buf)
{
	size_t len = (size_t)snprintf(buf, 8192, "a,b,c\n");
	uint64_t rows = sc_rng_below(g, 12);

	for (uint64_t r = 0; r < rows; r++) {
		uint32_t n =
		    sc_rng_below(g, 10) == 0 ? (uint32_t)sc_rng_below(g, 5) : 3;

		for (uint32_t c = 0; c < n; c++) {
			if (c)
				buf[len++] = ',';
			random_field(g, c, buf, &len);
		}
		len += (size_t)snprintf(buf + len, 8192 - len, "%s",
					sc_rng_below(g, 6) ? "\n" : "\r\n");
	}
	return len;
}

Test(csv_stream, agrees_with_the_whole_buffer_parser_on_random_inputs)
{
	enum sc_type t[3] = {SC_TYPE_I64, SC_TYPE_SYMBOL, SC_TYPE_U64};
	const char *cols[3] = {"a", "b", "c"};
	uint64_t seed = sc_prop_seed(20261206), n = sc_prop_count(300);
	struct sc_symtab *tab = NULL;
	struct sc_schema s;
	char replay[256];

	cr_assert_eq(sc_symtab_create(&tab), 0);
	cr_assert_eq(sc_schema_init(&s, 3, t, tab), 0);
	for (uint64_t k = 0; k < n; k++) {
		struct sc_rng g;
		struct sc_csv_rows whole;
		struct sc_csv_error we = {0};
		static char buf[8192];
		uint64_t rows[3 * 64];
		int64_t w[64];
		size_t len, got;
		char path[64];
		struct sc_csv_stream *st;
		int rc, src;

		sc_rng_seed(&g, seed + k);
		(void)sc_prop_replay(replay, sizeof(replay), seed + k,
				     "csv_stream",
				     "agrees_with_the_whole_buffer_parser_on_"
				     "random_inputs");
		len = random_input(&g, buf);
		rc = sc_csv_parse("in", buf, len, &s, cols, 0, &whole, &we);
		buf[len] = '\0';
		file_of(path, buf);
		st = stream_of(path, &s, (uint32_t)sc_rng_range(&g, 1, 5));
		src = drain(st, 3, rows, w, 64, &got);
		if (rc == 0) {
			cr_assert_eq(src, SC_EEMPTY, "%s: '%s': %s", replay,
				     buf, sc_errmsg());
			cr_assert_eq(got, whole.n, "%s", replay);
			/* whole.rows is NULL when there are none: memcmp must
			 * not see it */
			cr_assert(got == 0 || !memcmp(rows, whole.rows,
						      got * 3 * sizeof(*rows)),
				  "%s: other rows", replay);
		} else {
			const struct sc_csv_error *e = sc_csv_stream_error(st);

			cr_assert_eq(src, SC_EINVAL, "%s: '%s' accepted",
				     replay, buf);
			cr_assert_not_null(e, "%s", replay);
			cr_assert(e->line == we.line && e->column == we.column,
				  "%s: '%s': at %llu:%u, not %llu:%u (%s)",
				  replay, buf, (unsigned long long)e->line,
				  e->column, (unsigned long long)we.line,
				  we.column, we.what);
		}
		sc_csv_stream_destroy(st);
		sc_csv_rows_fini(&whole);
		(void)unlink(path);
	}
	cr_assert_eq(sc_symtab_count(tab), 0, "ids left held");
	sc_symtab_destroy(tab);
}

/* --- the CLI's module on a runtime -------------------------------------- */

/* A graph: input "in" (i64, i64), a stream output "changes" and a
 * materialized output "state" of it. */
struct small {
	struct sc_graph *g;
	struct sc_schema s;
	int in, changes, state;
	struct sc_placement *p;
	struct sc_runtime *rt;
	struct sc_test_guard *guard;
};

static void
small_init(struct small *c)
{
	c->s = schema_i64(2);
	cr_assert_eq(sc_graph_create(&c->g), 0);
	c->in = sc_graph_input(c->g, "in", &c->s);
	c->changes = sc_graph_output_stream(c->g, "changes", c->in);
	c->state = sc_graph_output(c->g, "state", c->in);
	cr_assert_geq(c->state, 0, "%s", sc_errmsg());
}

static void
small_start(struct small *c)
{
	struct sc_runtime_opts o = {.workers = 1};

	cr_assert_eq(sc_placement_single(c->g, &c->p), 0);
	cr_assert_eq(sc_runtime_create(c->g, c->p, &o, &c->rt), 0, "%s",
		     sc_errmsg());
	c->guard = sc_test_guard_begin(sc_runtime_exec(c->rt), "io", 10000);
}

static void
small_fini(struct small *c)
{
	sc_test_guard_end(c->guard);
	sc_runtime_destroy(c->rt);
	sc_placement_destroy(c->p);
	sc_graph_destroy(c->g);
}

/* Feed every step of io to c's runtime; the last cli_io_next code. */
static int
feed(struct small *c, struct cli_io *io)
{
	struct sc_settle_step step;
	int rc;

	while ((rc = cli_io_next(io, &step)) == 0 || rc == SC_ETIMEDOUT) {
		if (rc)
			continue;
		cr_assert_eq(
		    sc_runtime_submit_wait(c->rt, step.input, step.batch, 0), 0,
		    "%s", sc_errmsg());
		sc_batch_release(step.batch);
		cr_assert_eq(sc_runtime_wait_idle(c->rt, 0, NULL), 0);
	}
	cr_assert_eq(sc_runtime_wait_idle(c->rt, 0, NULL), 0);
	return rc;
}

static void
opts_of(struct cli_io_opts *o, const char *const *argv, int argc)
{
	struct cli_args a = {.cmd = "run", .argc = argc, .argv = (char **)argv};

	cli_io_opts_init(o);
	while (a.i < argc)
		cr_assert(cli_io_parse_opt(&a, o), "not an io option: %s",
			  argv[a.i]);
}

static char *
slurp(const char *path)
{
	static char buf[4096];
	FILE *f = fopen(path, "r");
	size_t n;

	cr_assert_not_null(f, "%s", path);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	(void)fclose(f);
	return buf;
}

Test(io, an_unknown_input_name_is_refused_listing_the_graphs_inputs)
{
	struct small c;
	struct cli_io_opts o;
	struct cli_io *io = NULL;
	char path[64], err[512] = "";
	const char *argv[] = {"--input", NULL};
	char spec[128];

	cr_redirect_stderr();
	small_init(&c);
	file_of(path, "a,b\n1,2\n");
	(void)snprintf(spec, sizeof(spec), "bids=%s", path);
	argv[1] = spec;
	opts_of(&o, argv, 2);
	cr_assert_eq(cli_io_open("run", &o, c.g, &io), CLI_EXIT_USAGE);
	cr_assert_null(io);
	(void)fflush(stderr);
	size_t n = fread(err, 1, sizeof(err) - 1, cr_get_redirected_stderr());
	err[n] = '\0';
	cr_assert(strstr(err, "--input bids: the graph has no input named "
			      "'bids' (its inputs: in)"),
		  "%s", err);
	sc_graph_destroy(c.g);
	(void)unlink(path);
}

Test(io, the_stream_mode_writes_each_steps_change_with_its_weight,
     .timeout = 30)
{
	struct small c;
	struct cli_io_opts o;
	struct cli_io *io = NULL;
	char in[64], out[80], ispec[128], ospec[128];
	const char *argv[] = {"--input", ispec,		 "--output",
			      ospec,	 "--batch-rows", "2"};

	small_init(&c);
	file_of(in, "k,v,weight\n1,10,1\n2,20,1\n1,10,-1\n");
	(void)snprintf(out, sizeof(out), "%s.out", in);
	(void)snprintf(ispec, sizeof(ispec), "in=%s", in);
	(void)snprintf(ospec, sizeof(ospec), "changes=%s", out);
	opts_of(&o, argv, 6);
	cr_assert_eq(cli_io_open("run", &o, c.g, &io), 0);
	cr_assert(cli_io_has_input(io));
	small_start(&c);
	cr_assert_eq(cli_io_attach(io, c.rt), 0);
	cr_assert_eq(feed(&c, io), SC_EEMPTY, "%s", sc_errmsg());
	cr_assert_eq(cli_io_finish(io, c.rt), 0);
	/* two steps: {+(1,10), +(2,20)}, then {-(1,10)} */
	cr_assert_str_eq(slurp(out), "c1,c2,weight\n1,10,1\n2,20,1\n1,10,-1\n");
	cli_io_destroy(io);
	small_fini(&c);
	(void)unlink(in);
	(void)unlink(out);
}

Test(io, the_integral_mode_writes_the_final_state, .timeout = 30)
{
	struct small c;
	struct cli_io_opts o;
	struct cli_io *io = NULL;
	char in[64], out[80], ispec[128], ospec[128];
	const char *argv[] = {"--input", ispec,	       "--output",
			      ospec,	 "--integral", "--batch-rows=1"};

	small_init(&c);
	file_of(in, "k,v,weight\n1,10,1\n2,20,3\n1,10,-1\n3,30,1\n");
	(void)snprintf(out, sizeof(out), "%s.out", in);
	(void)snprintf(ispec, sizeof(ispec), "in=%s", in);
	(void)snprintf(ospec, sizeof(ospec), "state=%s", out);
	opts_of(&o, argv, 6);
	cr_assert_eq(cli_io_open("run", &o, c.g, &io), 0);
	small_start(&c);
	cr_assert_eq(cli_io_attach(io, c.rt), 0);
	cr_assert_eq(feed(&c, io), SC_EEMPTY, "%s", sc_errmsg());
	cr_assert_eq(cli_io_finish(io, c.rt), 0);
	cr_assert_str_eq(slurp(out), "c1,c2,weight\n2,20,3\n3,30,1\n");
	cli_io_destroy(io);
	small_fini(&c);
	(void)unlink(in);
	(void)unlink(out);
}

Test(io, a_bad_row_stops_the_input_after_the_rows_before_it_ran, .timeout = 30)
{
	struct small c;
	struct cli_io_opts o;
	struct cli_io *io = NULL;
	char in[64], out[80], ispec[128], ospec[128];
	const char *argv[] = {"--input", ispec, "--output", ospec};

	small_init(&c);
	file_of(in, "k,v\n1,10\n2,20\n3,x\n4,40\n");
	(void)snprintf(out, sizeof(out), "%s.out", in);
	(void)snprintf(ispec, sizeof(ispec), "in=%s", in);
	(void)snprintf(ospec, sizeof(ospec), "changes=%s", out);
	opts_of(&o, argv, 4);
	cr_assert_eq(cli_io_open("run", &o, c.g, &io), 0);
	small_start(&c);
	cr_assert_eq(cli_io_attach(io, c.rt), 0);
	cr_assert_eq(feed(&c, io), SC_EINVAL);
	cr_assert(strstr(sc_errmsg(), ":4:2: 'x' is not an i64"), "%s",
		  sc_errmsg());
	cr_assert_eq(cli_io_finish(io, c.rt), 0);
	cr_assert_str_eq(slurp(out), "c1,c2,weight\n1,10,1\n2,20,1\n");
	cli_io_destroy(io);
	small_fini(&c);
	(void)unlink(in);
	(void)unlink(out);
}

/* Read from fd (non-blocking) until buf holds want, for at most 5 s. */
static bool
read_until(int fd, char *buf, size_t size, const char *want)
{
	size_t have = strlen(buf);

	for (int k = 0; k < 5000 && !strstr(buf, want); k++) {
		ssize_t n = read(fd, buf + have, size - 1 - have);

		if (n > 0) {
			have += (size_t)n;
			buf[have] = '\0';
		} else {
			sleep_ms(1);
		}
	}
	return strstr(buf, want) != NULL;
}

Test(io, a_pipe_fed_slowly_has_its_changes_written_before_the_writer_closes,
     .timeout = 30)
{
	struct small c;
	struct cli_io_opts o;
	struct cli_io *io = NULL;
	struct writer w = {.parts = {"k,v\n1,10\n", "2,20\n"},
			   .hold_close = true};
	char dir[64] = "/tmp/sc_test_io_XXXXXX", in[80], out[80];
	char ispec[128], ospec[128], got[512] = "";
	const char *argv[] = {"--input", ispec,		"--output",
			      ospec,	 "--linger-ms", "2"};
	const char *after[] = {"c1,c2,weight\n1,10,1\n", "2,20,1\n"};
	struct sc_settle_step step;
	pthread_t th;
	int ofd, rc;

	cr_assert_neq(mkdtemp(dir), NULL);
	(void)snprintf(in, sizeof(in), "%s/in", dir);
	(void)snprintf(out, sizeof(out), "%s/out", dir);
	cr_assert_eq(mkfifo(in, 0600), 0);
	cr_assert_eq(mkfifo(out, 0600), 0);
	/* The output FIFO's reader first, so that its writer opens. */
	ofd = open(out, O_RDONLY | O_NONBLOCK);
	cr_assert_geq(ofd, 0);
	(void)snprintf(ispec, sizeof(ispec), "in=%s", in);
	(void)snprintf(ospec, sizeof(ospec), "changes=%s", out);
	opts_of(&o, argv, 6);
	small_init(&c);
	cr_assert_eq(cli_io_open("run", &o, c.g, &io), 0);
	small_start(&c);
	cr_assert_eq(cli_io_attach(io, c.rt), 0);
	w.path = in;
	cr_assert_eq(pthread_create(&th, NULL, writer_run, &w), 0);
	for (int i = 0; i < 2; i++) {
		while ((rc = cli_io_next(io, &step)) == SC_ETIMEDOUT)
			;
		cr_assert_eq(rc, 0, "%s", sc_errmsg());
		cr_assert_eq(
		    sc_runtime_submit_wait(c.rt, step.input, step.batch, 0), 0);
		sc_batch_release(step.batch);
		cr_assert_eq(sc_runtime_wait_idle(c.rt, 0, NULL), 0);
		cr_assert(read_until(ofd, got, sizeof(got), after[i]),
			  "step %d: the output holds '%s'", i, got);
		cr_assert(!atomic_load(&w.closed),
			  "step %d was written only once the writer closed", i);
		atomic_store(&w.go_on, true);
	}
	while ((rc = cli_io_next(io, &step)) == SC_ETIMEDOUT)
		;
	cr_assert_eq(rc, SC_EEMPTY, "%s", sc_errmsg());
	cr_assert_eq(cli_io_finish(io, c.rt), 0);
	cr_assert_eq(pthread_join(th, NULL), 0);
	cr_assert_str_eq(got, "c1,c2,weight\n1,10,1\n2,20,1\n");
	cli_io_destroy(io);
	small_fini(&c);
	(void)close(ofd);
	(void)unlink(in);
	(void)unlink(out);
	(void)rmdir(dir);
}

Test(io, stdin_is_read_for_an_input_of_dash, .timeout = 30)
{
	struct small c;
	struct cli_io_opts o;
	struct cli_io *io = NULL;
	const char *argv[] = {"--input", "in=-", "--output", NULL,
			      "--integral"};
	char in[64], out[80], ospec[128];
	int fd;

	file_of(in, "k,v\n5,50\n6,60\n");
	(void)snprintf(out, sizeof(out), "%s.out", in);
	(void)snprintf(ospec, sizeof(ospec), "state=%s", out);
	argv[3] = ospec;
	fd = open(in, O_RDONLY);
	cr_assert_geq(fd, 0);
	cr_assert_eq(dup2(fd, 0), 0); /* each test runs in its own process */
	(void)close(fd);
	opts_of(&o, argv, 5);
	small_init(&c);
	cr_assert_eq(cli_io_open("run", &o, c.g, &io), 0);
	small_start(&c);
	cr_assert_eq(cli_io_attach(io, c.rt), 0);
	cr_assert_eq(feed(&c, io), SC_EEMPTY, "%s", sc_errmsg());
	cr_assert_eq(cli_io_finish(io, c.rt), 0);
	cr_assert_str_eq(slurp(out), "c1,c2,weight\n5,50,1\n6,60,1\n");
	cli_io_destroy(io);
	small_fini(&c);
	(void)unlink(in);
	(void)unlink(out);
}

/*
 * bench_csv.c - the CSV stream reader (bench/workloads/csv.h,
 * sc_csv_stream) against a hand-written line splitter.
 *
 * Data: ROWS rows of four i64 columns (ids up to 10^6, prices up to
 * 10^8, signed offsets, millisecond times: 60 bytes a line or so),
 * generated once in memory, the same bytes for both sides.
 *
 *  file  the bytes in a file in the page cache, read with read(2)
 *  pipe  the bytes written into a pipe by a second thread
 *
 * Subject: sc_csv_stream_next until the end, default batches (1024 rows),
 * every field checked (digits, range, field count, quotes, line length).
 * Baseline: the strongest fair one, the same reads into a buffer, each
 * line found with memchr and its four fields read with strtoll, no check
 * of anything. Both sum the rows so neither can skip work. The figure
 * is rows per CPU-second of the reading thread (sc_bench_cpu_ns: the
 * pipe's writer is not counted on either side), median of REPS runs.
 *
 * --quick shrinks the input for a smoke run.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench/harness.h"
#include "bench/workloads/csv.h"

#define REPS  5
#define COLS  4
#define CHUNK (1u << 20)

struct input {
	char *text;
	size_t len;
	size_t rows;
};

static void
make_input(struct input *in, size_t rows)
{
	size_t cap = 16 + rows * 80;
	uint64_t seed = 42;

	in->text = malloc(cap);
	if (!in->text)
		sc_bench_fail("out of memory");
	in->len = (size_t)snprintf(in->text, cap, "id,price,offset,time\n");
	for (size_t i = 0; i < rows; i++) {
		uint64_t r = sc_splitmix_next(&seed);

		in->len += (size_t)snprintf(
		    in->text + in->len, cap - in->len, "%llu,%llu,%lld,%llu\n",
		    (unsigned long long)(r % 1000000),
		    (unsigned long long)(r >> 20) % 100000000,
		    (long long)(r % 2001) - 1000, 1796551200000ull + i * 7);
	}
	in->rows = rows;
}

/* A source of the bytes: a file's descriptor (rewound), or a pipe fed by
 * a thread. */
struct source {
	const struct input *in;
	int fd;	 /* what the reader reads */
	int wfd; /* the pipe's write end, or -1 */
	pthread_t th;
};

static void *
feed(void *arg)
{
	struct source *s = arg;
	size_t at = 0;

	while (at < s->in->len) {
		ssize_t n = write(s->wfd, s->in->text + at, s->in->len - at);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		at += (size_t)n;
	}
	(void)close(s->wfd);
	return NULL;
}

static void
source_open(struct source *s, const struct input *in, bool pipe_, int file)
{
	int p[2];

	s->in = in;
	s->wfd = -1;
	if (!pipe_) {
		s->fd = file;
		if (lseek(file, 0, SEEK_SET) != 0)
			sc_bench_fail("lseek");
		return;
	}
	if (pipe(p) != 0)
		sc_bench_fail("pipe");
	s->fd = p[0];
	s->wfd = p[1];
	if (pthread_create(&s->th, NULL, feed, s) != 0)
		sc_bench_fail("pthread_create");
}

static void
source_close(struct source *s)
{
	if (s->wfd < 0)
		return;
	(void)pthread_join(s->th, NULL);
	(void)close(s->fd);
}

/* Rows per CPU-second of the stream reader over s. */
static double
run_stream(struct source *s, const struct sc_schema *schema, uint64_t *sum)
{
	struct sc_csv_stream *st = NULL;
	struct sc_csv_batch b;
	size_t rows = 0;
	uint64_t t0 = sc_bench_cpu_ns(), dt;
	int rc;

	if (sc_csv_stream_create(s->fd, "bench", schema, NULL, &st) != 0)
		sc_bench_fail("sc_csv_stream_create");
	while ((rc = sc_csv_stream_next(st, -1, &b)) == 0) {
		for (size_t i = 0; i < b.n * COLS; i++)
			*sum += (uint64_t)sc_dec_i64(b.rows[i]);
		rows += b.n;
	}
	dt = sc_bench_cpu_ns() - t0;
	if (rc != SC_EEMPTY || rows != s->in->rows)
		sc_bench_fail("the stream read short");
	sc_csv_stream_destroy(st);
	return (double)rows / ((double)dt / 1e9);
}

/* A decimal at *q (an optional '-', digits), *q moved past it: no
 * check of anything, the fastest reading of a well-formed field. */
static int64_t
digits(char **q)
{
	const char *p = *q;
	bool neg = *p == '-';
	uint64_t v = 0;

	for (p += neg; (unsigned)(*p - '0') < 10; p++)
		v = v * 10 + (uint64_t)(*p - '0');
	*q = (char *)p;
	return neg ? -(int64_t)v : (int64_t)v;
}

/* Which field reader the baseline uses: strtoll, or digits. */
static bool use_digits;

/* The lines of buf[0, len) with four fields each, summed; returns the
 * bytes used (up to the last line break). */
static size_t
split_lines(const char *buf, size_t len, size_t *rows, bool *header,
	    uint64_t *sum)
{
	const char *p = buf, *end = buf + len, *nl;

	while ((nl = memchr(p, '\n', (size_t)(end - p))) != NULL) {
		if (*header) {
			*header = false;
		} else {
			char *q = (char *)p;

			for (int c = 0; c < COLS; c++) {
				*sum +=
				    (uint64_t)(use_digits ? digits(&q)
							  : strtoll(q, &q, 10));
				q++;
			}
			(*rows)++;
		}
		p = nl + 1;
	}
	return (size_t)(p - buf);
}

/* Rows per CPU-second of the baseline over s. */
static double
run_baseline(struct source *s, uint64_t *sum)
{
	char *buf = malloc(CHUNK);
	size_t have = 0, rows = 0;
	bool header = true;
	uint64_t t0 = sc_bench_cpu_ns(), dt;

	if (!buf)
		sc_bench_fail("out of memory");
	for (;;) {
		ssize_t n = read(s->fd, buf + have, CHUNK - have);
		size_t used;

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		have += (size_t)n;
		used = split_lines(buf, have, &rows, &header, sum);
		memmove(buf, buf + used, have - used);
		have -= used;
	}
	dt = sc_bench_cpu_ns() - t0;
	free(buf);
	if (rows != s->in->rows)
		sc_bench_fail("the baseline read short");
	return (double)rows / ((double)dt / 1e9);
}

static void
bench_case(const char *name, const struct input *in, bool pipe_, int file,
	   const struct sc_schema *schema)
{
	double ours[REPS], base[REPS], fast[REPS], m;
	uint64_t a = 0, b = 0, c = 0;

	for (int r = 0; r < REPS; r++) {
		struct source s;

		source_open(&s, in, pipe_, file);
		ours[r] = run_stream(&s, schema, &a) / 1e6;
		source_close(&s);
		use_digits = false;
		source_open(&s, in, pipe_, file);
		base[r] = run_baseline(&s, &b) / 1e6;
		source_close(&s);
		use_digits = true;
		source_open(&s, in, pipe_, file);
		fast[r] = run_baseline(&s, &c) / 1e6;
		source_close(&s);
	}
	if (a != b || a != c)
		sc_bench_fail("the stream and the baselines read other rows");
	m = sc_bench_median(ours, REPS);
	sc_bench_emit("csv", name, "Mrow/s", m, "memchr+strtoll, unchecked",
		      sc_bench_median(base, REPS));
	sc_bench_emit("csv", name, "Mrow/s", m, "memchr+digit loop, unchecked",
		      sc_bench_median(fast, REPS));
}

int
main(int argc, char **argv)
{
	bool quick = sc_bench_init(argc, argv);
	enum sc_type t[COLS] = {SC_TYPE_I64, SC_TYPE_I64, SC_TYPE_I64,
				SC_TYPE_I64};
	struct sc_schema schema;
	struct input in;
	char path[] = "/tmp/sc_bench_csv_XXXXXX";
	char name[64];
	int file;

	if (sc_schema_init(&schema, COLS, t, NULL) != 0)
		sc_bench_fail("sc_schema_init");
	make_input(&in, quick ? 100000 : 2000000);
	if ((file = mkstemp(path)) < 0)
		sc_bench_fail("mkstemp");
	(void)unlink(path);
	if (write(file, in.text, in.len) != (ssize_t)in.len)
		sc_bench_fail("write");
	(void)snprintf(name, sizeof(name), "%zuK rows i64x4, file",
		       in.rows / 1000);
	bench_case(name, &in, false, file, &schema);
	(void)snprintf(name, sizeof(name), "%zuK rows i64x4, pipe",
		       in.rows / 1000);
	bench_case(name, &in, true, file, &schema);
	(void)close(file);
	free(in.text);
	return 0;
}

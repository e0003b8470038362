/*
 * csv.c - typed rows in and out as CSV (see csv.h).
 *
 * The reader is one pass over the buffer: a record is cut into fields
 * (quotes undone into a scratch buffer), its field count checked, then
 * each field converted by its column's type. Every error is raised where
 * it is seen, with the line and the field number, and undoes the symbol
 * references taken so far.
 */
#include "bench/workloads/csv.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench/harness.h"
#include "operators/symbol.h"

/* One field of the record being read: its text in the input or in the
 * scratch buffer. */
struct field {
	const char *p;
	size_t len;
};

/* The reader's state. */
struct reader {
	const char *name;
	const char *p, *end;	/* the next byte, the end of the input */
	const char *line_start; /* where the current line began */
	uint64_t line;		/* from 1 */
	size_t max_line;
	struct field *f; /* ncols + 1 fields */
	uint32_t nf;	 /* fields in the current record */
	char *scratch;	 /* unquoted texts of the record */
	size_t scratch_len, scratch_cap;
	struct sc_csv_error *err;
	bool timestamps; /* i64 and u64 columns take RFC 3339 times */
};

static int csv_fail(struct reader *r, uint64_t line, uint32_t col,
		    const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static int
csv_fail(struct reader *r, uint64_t line, uint32_t col, const char *fmt, ...)
{
	char what[256];
	va_list ap;

	va_start(ap, fmt);
	(void)vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	if (r->err) {
		(void)snprintf(r->err->file, sizeof(r->err->file), "%s",
			       r->name);
		r->err->line = line;
		r->err->column = col;
		(void)snprintf(r->err->what, sizeof(r->err->what), "%s", what);
	}
	return sc_errorf(SC_EINVAL, "%s:%" PRIu64 ":%u: %s", r->name, line, col,
			 what);
}

/* Whether the current line is past the limit at byte p. */
static bool
csv_too_long(const struct reader *r, const char *p)
{
	return (size_t)(p - r->line_start) > r->max_line;
}

static int
csv_scratch_put(struct reader *r, char c)
{
	if (r->scratch_len == r->scratch_cap) {
		size_t cap = r->scratch_cap ? 2 * r->scratch_cap : 256;
		char *s = realloc(r->scratch, cap);

		if (!s)
			return sc_errorf(SC_ENOMEM, "csv: out of memory");
		r->scratch = s;
		r->scratch_cap = cap;
	}
	r->scratch[r->scratch_len++] = c;
	return 0;
}

/* A quoted field from r->p (at the opening quote) into the scratch
 * buffer; *off and *len say where. */
static int
csv_quoted(struct reader *r, uint32_t col, size_t *off, size_t *len)
{
	uint64_t open_line = r->line;
	int rc;

	*off = r->scratch_len;
	r->p++;
	for (;;) {
		char c;

		if (r->p == r->end)
			return csv_fail(r, open_line, col,
					"a quote opened here is never closed");
		if (csv_too_long(r, r->p))
			return csv_fail(r, r->line, col,
					"line longer than %zu bytes",
					r->max_line);
		c = *r->p++;
		if (c == '"') {
			if (r->p < r->end && *r->p == '"') {
				r->p++;
			} else {
				break;
			}
		} else if (c == '\n') {
			r->line++;
			r->line_start = r->p;
		}
		if ((rc = csv_scratch_put(r, c)) != 0)
			return rc;
	}
	*len = r->scratch_len - *off;
	if (r->p < r->end && *r->p != ',' && *r->p != '\n' && *r->p != '\r')
		return csv_fail(r, r->line, col, "text after a closing quote");
	return 0;
}

/* An unquoted field from r->p. */
static int
csv_plain(struct reader *r, uint32_t col, struct field *f)
{
	f->p = r->p;
	while (r->p < r->end && *r->p != ',' && *r->p != '\n' &&
	       *r->p != '\r') {
		if (*r->p == '"')
			return csv_fail(r, r->line, col,
					"a quote inside an unquoted field");
		if (csv_too_long(r, r->p + 1))
			return csv_fail(r, r->line, col,
					"line longer than %zu bytes",
					r->max_line);
		r->p++;
	}
	f->len = (size_t)(r->p - f->p);
	return 0;
}

/* The end of a record: LF, CRLF or the end of the input. */
static int
csv_end_record(struct reader *r, uint32_t col)
{
	if (r->p < r->end && *r->p == '\r') {
		if (r->p + 1 >= r->end || r->p[1] != '\n')
			return csv_fail(r, r->line, col,
					"a carriage return not followed by a "
					"line feed");
		r->p++;
	}
	if (r->p < r->end) { /* the line feed */
		r->p++;
		r->line++;
		r->line_start = r->p;
	}
	return 0;
}

/*
 * Cut the record at r->p into fields (at most `want`, the columns): sets
 * r->nf. The record's first line is *first.
 */
static int
csv_record(struct reader *r, uint32_t want, uint64_t *first)
{
	size_t offs[SC_SCHEMA_MAX_COLS + 1] = {0};
	bool quoted[SC_SCHEMA_MAX_COLS + 1] = {false};
	int rc;

	*first = r->line;
	r->nf = 0;
	r->scratch_len = 0;
	for (;;) {
		struct field *f = &r->f[r->nf];
		uint32_t col = r->nf + 1;

		if (r->nf == want)
			return csv_fail(r, r->line, col,
					"more than %u fields (the header has "
					"%u)",
					want, want);
		quoted[r->nf] = r->p < r->end && *r->p == '"';
		if (quoted[r->nf])
			rc = csv_quoted(r, col, &offs[r->nf], &f->len);
		else
			rc = csv_plain(r, col, f);
		if (rc)
			return rc;
		r->nf++;
		if (r->p < r->end && *r->p == ',') {
			r->p++;
			continue;
		}
		if ((rc = csv_end_record(r, col)) != 0)
			return rc;
		break;
	}
	/* Quoted texts point into scratch, which may have moved, or is
	 * still NULL when every quoted text of the input so far was empty
	 * (NULL + 0 is undefined: the fuzzer found it). */
	for (uint32_t i = 0; i < r->nf; i++)
		if (quoted[i])
			r->f[i].p = r->scratch ? r->scratch + offs[i] : "";
	return 0;
}

/* --- values ------------------------------------------------------------- */

/* A field as a NUL-terminated number text in buf (at most 63 bytes):
 * false when too long or holding a byte no number has. */
static bool
csv_number_text(const struct field *f, const char *allowed, char *buf)
{
	if (f->len == 0 || f->len > 63)
		return false;
	memcpy(buf, f->p, f->len);
	buf[f->len] = 0;
	return strspn(buf, allowed) == f->len;
}

/* The digits of [p, end) as a value of at most `max`: false for no digit,
 * another byte, or a value past max. A loop rather than strtoull: no copy,
 * no locale, and the reader's rows are mostly numbers. */
static bool
csv_digits(const char *p, const char *end, uint64_t max, uint64_t *out)
{
	uint64_t v = 0;

	if (p == end)
		return false;
	for (; p < end; p++) {
		unsigned d = (unsigned)(unsigned char)*p - '0';

		if (d > 9 || v > (max - d) / 10)
			return false;
		v = v * 10 + d;
	}
	*out = v;
	return true;
}

static bool
csv_i64(const struct field *f, uint64_t *w)
{
	bool neg = f->len > 0 && f->p[0] == '-';
	uint64_t v;

	if (!csv_digits(f->p + neg, f->p + f->len,
			neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX,
			&v))
		return false;
	/* Two's complement: the negation of v as a u64 is -v's bits. */
	*w = (neg ? 0 - v : v) ^ 0x8000000000000000ULL;
	return true;
}

static bool
csv_u64(const struct field *f, uint64_t *w)
{
	uint64_t v;

	if (!csv_digits(f->p, f->p + f->len, UINT64_MAX, &v))
		return false;
	*w = sc_enc_u64(v);
	return true;
}

static bool
csv_f64(const struct field *f, uint64_t *w)
{
	char buf[64], *endp;
	double v;

	if (f->len == 3 && !memcmp(f->p, "nan", 3)) {
		*w = sc_enc_f64(NAN);
		return true;
	}
	if ((f->len == 3 && !memcmp(f->p, "inf", 3)) ||
	    (f->len == 4 && !memcmp(f->p, "-inf", 4))) {
		*w = sc_enc_f64(f->p[0] == '-' ? -INFINITY : INFINITY);
		return true;
	}
	if (!csv_number_text(f, "-+.0123456789eE", buf))
		return false;
	errno = 0;
	v = strtod(buf, &endp);
	/* ERANGE on underflow still gives the nearest double (a denormal
	 * or 0), which is what the text means; an overflow is refused. */
	if (*endp || (errno == ERANGE && (v == HUGE_VAL || v == -HUGE_VAL)))
		return false;
	*w = sc_enc_f64(v);
	return true;
}

static bool
csv_bool(const struct field *f, uint64_t *w)
{
	if (f->len == 4 && !memcmp(f->p, "true", 4))
		*w = sc_enc_bool(true);
	else if (f->len == 5 && !memcmp(f->p, "false", 5))
		*w = sc_enc_bool(false);
	else
		return false;
	return true;
}

/* --- timestamps ---------------------------------------------------------- */

/* Days from 1970-01-01 to y-m-d of the proleptic Gregorian calendar
 * (H. Hinnant, "chrono-Compatible Low-Level Date Algorithms",
 * days_from_civil). */
static int64_t
csv_days(int64_t y, unsigned m, unsigned d)
{
	int64_t era;
	unsigned yoe, doy, doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = (unsigned)(y - era * 400);
	doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + (int64_t)doe - 719468;
}

/* n digits at s as a number in lo..hi. */
static bool
csv_fixed(const char *s, unsigned n, unsigned lo, unsigned hi, unsigned *out)
{
	unsigned v = 0;

	for (unsigned i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		v = v * 10 + (unsigned)(s[i] - '0');
	}
	*out = v;
	return v >= lo && v <= hi;
}

bool
sc_csv_timestamp(const char *s, size_t len, int64_t *ms)
{
	static const unsigned mdays[12] = {31, 29, 31, 30, 31, 30,
					   31, 31, 30, 31, 30, 31};
	unsigned y, mo, d, h, mi, sec, frac = 0, nfrac = 0;
	size_t i = 19;

	if (!s || !ms || len < 20 || s[4] != '-' || s[7] != '-' ||
	    (s[10] != 'T' && s[10] != 't') || s[13] != ':' || s[16] != ':' ||
	    !csv_fixed(s, 4, 0, 9999, &y) || !csv_fixed(s + 5, 2, 1, 12, &mo) ||
	    !csv_fixed(s + 8, 2, 1, mdays[mo - 1], &d) ||
	    !csv_fixed(s + 11, 2, 0, 23, &h) ||
	    !csv_fixed(s + 14, 2, 0, 59, &mi) ||
	    !csv_fixed(s + 17, 2, 0, 59, &sec))
		return false;
	if (mo == 2 && d == 29 && (y % 4 || (y % 100 == 0 && y % 400)))
		return false;
	if (s[i] == '.') {
		for (i++; i < len && s[i] >= '0' && s[i] <= '9'; i++, nfrac++)
			if (nfrac < 3)
				frac = frac * 10 + (unsigned)(s[i] - '0');
		if (nfrac == 0 || nfrac > 3)
			return false;
		for (; nfrac < 3; nfrac++)
			frac *= 10;
	}
	if (i + 1 != len || (s[i] != 'Z' && s[i] != 'z'))
		return false;
	*ms = ((csv_days(y, mo, d) * 24 + h) * 60 + mi) * 60000 +
	      (int64_t)sec * 1000 + frac;
	return true;
}

static bool
csv_time_i64(const struct field *f, uint64_t *w)
{
	int64_t ms;

	if (!sc_csv_timestamp(f->p, f->len, &ms))
		return false;
	*w = sc_enc_i64(ms);
	return true;
}

static bool
csv_time_u64(const struct field *f, uint64_t *w)
{
	int64_t ms;

	if (!sc_csv_timestamp(f->p, f->len, &ms) || ms < 0)
		return false;
	*w = sc_enc_u64((uint64_t)ms);
	return true;
}

/* Release the symbols of row[0..upto) of r. */
static void
csv_release_row(const struct sc_csv_rows *t, const uint64_t *row, uint32_t upto)
{
	for (uint32_t i = 0; i < t->nsym; i++)
		if (t->sym_cols[i] < upto)
			(void)sc_symtab_release(t->symbols,
						row[t->sym_cols[i]]);
}

/* Convert the record's fields into row (s's types). */
static int
csv_convert(struct reader *r, const struct sc_schema *s,
	    const struct sc_csv_rows *t, uint64_t line, uint64_t *row)
{
	for (uint32_t c = 0; c < s->ncols; c++) {
		const struct field *f = &r->f[c];
		bool ok = true;
		int rc;

		switch (s->types[c]) {
		case SC_TYPE_I64:
			ok = csv_i64(f, &row[c]) ||
			     (r->timestamps && csv_time_i64(f, &row[c]));
			break;
		case SC_TYPE_U64:
			ok = csv_u64(f, &row[c]) ||
			     (r->timestamps && csv_time_u64(f, &row[c]));
			break;
		case SC_TYPE_F64:
			ok = csv_f64(f, &row[c]);
			break;
		case SC_TYPE_BOOL:
			ok = csv_bool(f, &row[c]);
			break;
		default:
			rc =
			    sc_symtab_intern(s->symbols, f->p, f->len, &row[c]);
			if (rc) {
				csv_release_row(t, row, c);
				return rc;
			}
		}
		if (!ok) {
			csv_release_row(t, row, c);
			return csv_fail(
			    r, line, c + 1, "'%.*s' is not %s %s%s",
			    f->len > 40 ? 40 : (int)f->len, f->p,
			    s->types[c] == SC_TYPE_BOOL ? "a" : "an",
			    s->types[c] == SC_TYPE_BOOL
				? "bool (true or false)"
				: sc_type_name(s->types[c]),
			    r->timestamps && (s->types[c] == SC_TYPE_I64 ||
					      s->types[c] == SC_TYPE_U64)
				? " or an RFC 3339 UTC time"
				: "");
		}
	}
	return 0;
}

static int
csv_header(struct reader *r, const struct sc_schema *s, const char *const *cols)
{
	uint64_t line;
	int rc;

	if (r->p == r->end)
		return csv_fail(r, 1, 1, "empty: no header row");
	if ((rc = csv_record(r, s->ncols, &line)) != 0)
		return rc;
	for (uint32_t c = 0; c < s->ncols; c++) {
		const struct field *f = &r->f[c];

		if (c >= r->nf)
			return csv_fail(r, line, c + 1,
					"the header lacks column '%s'",
					cols[c]);
		if (f->len != strlen(cols[c]) ||
		    memcmp(f->p, cols[c], f->len) != 0)
			return csv_fail(r, line, c + 1,
					"header column '%.*s', expected '%s'",
					f->len > 40 ? 40 : (int)f->len, f->p,
					cols[c]);
	}
	return 0;
}

static int
csv_rows_push(struct sc_csv_rows *t, uint64_t **slot)
{
	if (t->n == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 1024;
		size_t words = cap * (t->ncols ? t->ncols : 1);
		uint64_t *rows = realloc(t->rows, words * sizeof(uint64_t));

		if (!rows) {
			/* The constant returned, not sc_errorf's result: the
			 * analyzer must see that a failure never returns 0. */
			(void)sc_errorf(SC_ENOMEM,
					"csv: out of memory for %zu rows", cap);
			return SC_ENOMEM;
		}
		t->rows = rows;
		t->cap = cap;
	}
	*slot = t->rows + t->n * t->ncols;
	return 0;
}

static int
csv_body(struct reader *r, const struct sc_schema *s, struct sc_csv_rows *t)
{
	while (r->p < r->end) {
		uint64_t line, *row = NULL;
		int rc;

		if ((rc = csv_record(r, s->ncols, &line)) != 0)
			return rc;
		if (r->nf != s->ncols)
			return csv_fail(r, line, r->nf + 1,
					"%u fields, expected %u", r->nf,
					s->ncols);
		if ((rc = csv_rows_push(t, &row)) != 0 ||
		    (rc = csv_convert(r, s, t, line, row)) != 0)
			return rc;
		t->n++;
	}
	return 0;
}

/* The rows table of schema s, empty. */
static int
csv_rows_init(const struct sc_schema *s, struct sc_csv_rows *out)
{
	memset(out, 0, sizeof(*out));
	out->ncols = s->ncols;
	out->symbols = s->symbols;
	for (uint32_t c = 0; c < s->ncols; c++)
		if (s->types[c] == SC_TYPE_SYMBOL)
			out->sym_cols[out->nsym++] = c;
	if (out->nsym && !s->symbols)
		return sc_errorf(SC_EINVAL,
				 "sc_csv_parse: a symbol column and no table");
	return 0;
}

static void
csv_reader_init(struct reader *r, const char *name, const char *p,
		const char *end, uint64_t line, size_t max_line,
		struct field *fields, struct sc_csv_error *err)
{
	memset(r, 0, sizeof(*r));
	r->name = name;
	r->p = r->line_start = p;
	r->end = end;
	r->line = line;
	r->max_line = max_line ? max_line : SC_CSV_MAX_LINE;
	r->f = fields;
	r->err = err;
}

/*
 * Parallel parsing. The body after the header is cut into one range per
 * thread at line breaks outside quotes: one pass over the bytes keeps the
 * quote state (a '"' toggles it; the escaped '""' toggles it twice) and
 * the line count, so each range starts on a record's first byte with its
 * line number, exactly where one reader would be. Each thread reads its
 * range into rows of its own (interning into the shared table); the rows
 * are then joined in order. The first range that fails (in the input's
 * order) is the error, as one reader would have met it first; every
 * range's rows are then released.
 */
#define CSV_PAR_MIN (1u << 20) /* bytes a thread is worth */
#define CSV_PAR_MAX 64

struct csv_range {
	const struct sc_schema *s;
	const char *name;
	const char *p, *end;
	uint64_t line;
	size_t max_line;
	struct sc_csv_rows rows;
	struct sc_csv_error err;
	int rc;
	char msg[512]; /* sc_errmsg() of the thread, when rc */
};

static void *
csv_range_main(void *arg)
{
	struct csv_range *g = arg;
	struct field fields[SC_SCHEMA_MAX_COLS + 1];
	struct reader r;

	csv_reader_init(&r, g->name, g->p, g->end, g->line, g->max_line, fields,
			&g->err);
	g->rc = csv_rows_init(g->s, &g->rows);
	if (!g->rc)
		g->rc = csv_body(&r, g->s, &g->rows);
	if (g->rc)
		(void)snprintf(g->msg, sizeof(g->msg), "%s", sc_errdetail());
	free(r.scratch);
	return NULL;
}

/* Cut [p, end) into at most n ranges at line breaks outside quotes; their
 * starts into at[] and lines[] (at[0] = p, lines[0] = line). Returns how
 * many. */
static unsigned
csv_cut(const char *p, const char *end, uint64_t line, unsigned n,
	const char **at, uint64_t *lines)
{
	size_t len = (size_t)(end - p), step = len / n;
	const char *q = p;
	bool quoted = false;
	unsigned k = 1;

	at[0] = p;
	lines[0] = line;
	for (; q < end && k < n; q++) {
		if (*q == '"')
			quoted = !quoted;
		else if (*q == '\n') {
			line++;
			if (!quoted && (size_t)(q + 1 - p) >= k * step &&
			    q + 1 < end) {
				at[k] = q + 1;
				lines[k++] = line;
			}
		}
	}
	return k;
}

/* Join the ranges' rows into out, in order (their references move with
 * them). SC_ENOMEM: nothing moved. */
static int
csv_join(struct csv_range *g, unsigned n, struct sc_csv_rows *out)
{
	size_t total = 0, at = 0;
	uint64_t *rows;

	for (unsigned i = 0; i < n; i++)
		total += g[i].rows.n;
	rows = malloc((total ? total : 1) * out->ncols * sizeof(uint64_t));
	if (!rows)
		return sc_errorf(SC_ENOMEM, "csv: out of memory for %zu rows",
				 total);
	for (unsigned i = 0; i < n; i++) {
		if (g[i].rows.n)
			memcpy(rows + at * out->ncols, g[i].rows.rows,
			       g[i].rows.n * out->ncols * sizeof(uint64_t));
		at += g[i].rows.n;
		free(g[i].rows.rows);
		g[i].rows.rows = NULL;
		g[i].rows.n = g[i].rows.cap = 0;
	}
	out->rows = rows;
	out->n = out->cap = total;
	return 0;
}

/* The body of r's input over up to `threads` threads (r past the header). */
static int
csv_body_threads(struct reader *r, const struct sc_schema *s, unsigned threads,
		 struct sc_csv_rows *out)
{
	const char *at[CSV_PAR_MAX];
	uint64_t lines[CSV_PAR_MAX];
	struct csv_range *g;
	pthread_t tid[CSV_PAR_MAX];
	bool started[CSV_PAR_MAX] = {false};
	size_t len = (size_t)(r->end - r->p);
	unsigned n = threads, first_bad = CSV_PAR_MAX;
	int rc = 0;

	if (n > CSV_PAR_MAX)
		n = CSV_PAR_MAX;
	if (n > len / CSV_PAR_MIN)
		n = (unsigned)(len / CSV_PAR_MIN);
	if (n <= 1)
		return csv_body(r, s, out);
	n = csv_cut(r->p, r->end, r->line, n, at, lines);
	if (!(g = calloc(n, sizeof(*g))))
		return sc_errorf(SC_ENOMEM, "csv: out of memory");
	for (unsigned i = 0; i < n; i++) {
		g[i] = (struct csv_range){.s = s,
					  .name = r->name,
					  .p = at[i],
					  .end = i + 1 < n ? at[i + 1] : r->end,
					  .line = lines[i],
					  .max_line = r->max_line};
		/* The last range runs on this thread; a thread that cannot
		 * be started leaves its range to this thread too. */
		if (i + 1 < n &&
		    pthread_create(&tid[i], NULL, csv_range_main, &g[i]) == 0)
			started[i] = true;
	}
	for (unsigned i = n; i-- > 0;)
		if (!started[i])
			(void)csv_range_main(&g[i]);
	for (unsigned i = 0; i < n; i++) {
		if (started[i])
			pthread_join(tid[i], NULL);
		if (g[i].rc && first_bad == CSV_PAR_MAX)
			first_bad = i;
	}
	if (first_bad != CSV_PAR_MAX) {
		if (r->err)
			*r->err = g[first_bad].err;
		rc = sc_errorf(g[first_bad].rc, "%s", g[first_bad].msg);
	} else {
		rc = csv_join(g, n, out);
	}
	for (unsigned i = 0; i < n; i++)
		sc_csv_rows_fini(&g[i].rows);
	free(g);
	return rc;
}

static int
csv_parse(const char *name, const char *buf, size_t len,
	  const struct sc_schema *s, const char *const *cols, size_t max_line,
	  unsigned threads, struct sc_csv_rows *out, struct sc_csv_error *err)
{
	struct field fields[SC_SCHEMA_MAX_COLS + 1];
	struct reader r;
	int rc;

	if (!name || (!buf && len) || !s || !cols || !out || !s->ncols ||
	    s->ncols > SC_SCHEMA_MAX_COLS)
		return sc_errorf(SC_EINVAL, "sc_csv_parse: NULL argument or "
					    "a schema of no column");
	if ((rc = csv_rows_init(s, out)) != 0)
		return rc;
	csv_reader_init(&r, name, buf, buf + len, 1, max_line, fields, err);
	if ((rc = csv_header(&r, s, cols)) == 0)
		rc = threads > 1 ? csv_body_threads(&r, s, threads, out)
				 : csv_body(&r, s, out);
	free(r.scratch);
	if (rc)
		sc_csv_rows_fini(out);
	return rc;
}

int
sc_csv_parse(const char *name, const char *buf, size_t len,
	     const struct sc_schema *s, const char *const *cols,
	     size_t max_line, struct sc_csv_rows *out, struct sc_csv_error *err)
{
	return csv_parse(name, buf, len, s, cols, max_line, 1, out, err);
}

int
sc_csv_parse_threads(const char *name, const char *buf, size_t len,
		     const struct sc_schema *s, const char *const *cols,
		     size_t max_line, unsigned threads, struct sc_csv_rows *out,
		     struct sc_csv_error *err)
{
	return csv_parse(name, buf, len, s, cols, max_line, threads, out, err);
}

int
sc_csv_read_file(const char *path, const struct sc_schema *s,
		 const char *const *cols, size_t max_line,
		 struct sc_csv_rows *out, struct sc_csv_error *err)
{
	return sc_csv_read_file_threads(path, s, cols, max_line, 1, out, err);
}

int
sc_csv_read_file_threads(const char *path, const struct sc_schema *s,
			 const char *const *cols, size_t max_line,
			 unsigned threads, struct sc_csv_rows *out,
			 struct sc_csv_error *err)
{
	FILE *f;
	char *buf = NULL, msg[128] = "";
	size_t len = 0, cap = 0, got;
	int rc, e = 0;

	if (!path)
		return sc_errorf(SC_EINVAL, "sc_csv_read_file: NULL path");
	if (!(f = fopen(path, "rb"))) {
		e = errno;
		(void)strerror_r(e, msg, sizeof(msg));
		return sc_errorf(SC_EIO, "cannot read '%s': %s", path, msg);
	}
	{
		/* A regular file's size, known up front, is one buffer read
		 * into once (one more byte to see the end): doubling a large
		 * file's buffer copied it and faulted its pages in again. */
		struct stat st;

		if (fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode) &&
		    st.st_size > 0 && (uint64_t)st.st_size < SIZE_MAX / 2)
			cap = (size_t)st.st_size + 1;
		if (cap && !(buf = malloc(cap))) {
			(void)fclose(f);
			return sc_errorf(SC_ENOMEM,
					 "reading '%s': out of memory", path);
		}
	}
	do {
		if (len == cap) {
			char *nb;

			cap = cap ? 2 * cap : 1 << 16;
			if (!(nb = realloc(buf, cap))) {
				free(buf);
				(void)fclose(f);
				return sc_errorf(SC_ENOMEM,
						 "reading '%s': out of memory",
						 path);
			}
			buf = nb;
		}
		got = fread(buf + len, 1, cap - len, f);
		len += got;
	} while (got > 0);
	if (ferror(f))
		e = errno ? errno : EIO;
	(void)fclose(f);
	if (e) {
		free(buf);
		(void)strerror_r(e, msg, sizeof(msg));
		return sc_errorf(SC_EIO, "cannot read '%s': %s", path, msg);
	}
	rc = csv_parse(path, buf, len, s, cols, max_line, threads, out, err);
	free(buf);
	return rc;
}

void
sc_csv_rows_fini(struct sc_csv_rows *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->n; i++)
		csv_release_row(r, r->rows + i * r->ncols, r->ncols);
	free(r->rows);
	r->rows = NULL;
	r->n = r->cap = 0;
}

/* --- writing -------------------------------------------------------------- */

int
sc_csv_write_header(FILE *f, const char *const *cols, size_t n, bool weight)
{
	if (!f || !cols)
		return sc_errorf(SC_EINVAL, "sc_csv_write_header: NULL");
	for (size_t i = 0; i < n; i++)
		(void)fprintf(f, "%s%s", i ? "," : "", cols[i]);
	(void)fputs(weight ? ",weight\n" : "\n", f);
	return ferror(f) ? sc_errorf(SC_EIO, "csv: write failed") : 0;
}

/* A row is made in a line buffer and written in one call (a stdio call
 * a field, or a character, costs a lock each); a text longer than the
 * buffer goes straight through after what precedes it. With no stream
 * (sc_csv_row_text) the row goes to the caller's out[0..cap) as far as
 * it fits, and `total` counts it whole. */
struct csv_line {
	FILE *f;
	char *out;
	size_t cap, total;
	size_t n;
	char buf[1024];
};

static void
line_flush(struct csv_line *l)
{
	if (l->n && l->f)
		(void)fwrite(l->buf, 1, l->n, l->f);
	l->n = 0;
}

static void
line_put(struct csv_line *l, const char *p, size_t len)
{
	if (!l->f) {
		if (l->total < l->cap)
			memcpy(l->out + l->total, p,
			       len < l->cap - l->total ? len
						       : l->cap - l->total);
		l->total += len;
		return;
	}
	if (l->n + len > sizeof(l->buf)) {
		line_flush(l);
		if (len > sizeof(l->buf)) {
			(void)fwrite(p, 1, len, l->f);
			return;
		}
	}
	memcpy(l->buf + l->n, p, len);
	l->n += len;
}

static void
line_putc(struct csv_line *l, char c)
{
	line_put(l, &c, 1);
}

/* The shortest %.*g of v that reads back as v. */
static void
csv_put_f64(struct csv_line *l, double v)
{
	char buf[40];

	if (v != v) {
		line_put(l, "nan", 3);
		return;
	}
	if (v == INFINITY || v == -INFINITY) {
		line_put(l, v > 0 ? "inf" : "-inf", v > 0 ? 3 : 4);
		return;
	}
	for (int prec = 15; prec <= 17; prec++) {
		(void)snprintf(buf, sizeof(buf), "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			break;
	}
	line_put(l, buf, strlen(buf));
}

static int
csv_put_symbol(struct csv_line *l, const struct sc_schema *s, uint64_t id)
{
	const char *t;
	size_t len;

	if (!s->symbols || sc_symtab_lookup(s->symbols, id, &t, &len) != 0)
		return sc_errorf(SC_ENOENT,
				 "csv: symbol #%" PRIu64 " is not in the table",
				 id);
	/* the runs between quotes, each quote doubled */
	line_putc(l, '"');
	while (len) {
		const char *q = memchr(t, '"', len);
		size_t run = q ? (size_t)(q - t) + 1 : len;

		line_put(l, t, run);
		if (q)
			line_putc(l, '"');
		t += run;
		len -= run;
	}
	line_putc(l, '"');
	return 0;
}

/* v in decimal (fprintf's parsing of its format is most of what an
 * integer column would cost). */
static void
csv_put_u64(struct csv_line *l, uint64_t v, bool minus)
{
	char buf[24];
	char *p = buf + sizeof(buf);

	do {
		*--p = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	if (minus)
		*--p = '-';
	line_put(l, p, (size_t)(buf + sizeof(buf) - p));
}

static void
csv_put_i64(struct csv_line *l, int64_t v)
{
	/* the magnitude as unsigned: -INT64_MIN does not fit an int64 */
	csv_put_u64(l, v < 0 ? 0 - (uint64_t)v : (uint64_t)v, v < 0);
}

/* Row into l (a stream's line buffer or the caller's memory). */
static int
csv_row(struct csv_line *l, const struct sc_schema *s, const uint64_t *row,
	const int64_t *weight)
{
	int rc;

	for (uint32_t c = 0; c < s->ncols; c++) {
		if (c)
			line_putc(l, ',');
		switch (s->types[c]) {
		case SC_TYPE_I64:
			csv_put_i64(l, sc_dec_i64(row[c]));
			break;
		case SC_TYPE_U64:
			csv_put_u64(l, sc_dec_u64(row[c]), false);
			break;
		case SC_TYPE_F64:
			csv_put_f64(l, sc_dec_f64(row[c]));
			break;
		case SC_TYPE_BOOL:
			if (sc_dec_bool(row[c]))
				line_put(l, "true", 4);
			else
				line_put(l, "false", 5);
			break;
		default:
			/* the buffer is dropped, so a row with a symbol
			 * the table does not know is not written, unless
			 * a text before it was longer than the buffer */
			if ((rc = csv_put_symbol(l, s, row[c])) != 0)
				return rc;
		}
	}
	if (weight) {
		line_putc(l, ',');
		csv_put_i64(l, *weight);
	}
	line_putc(l, '\n');
	return 0;
}

int
sc_csv_write_row(FILE *f, const struct sc_schema *s, const uint64_t *row,
		 const int64_t *weight)
{
	struct csv_line l;
	int rc;

	if (!f || !s || !row)
		return sc_errorf(SC_EINVAL, "sc_csv_write_row: NULL");
	l.f = f;
	l.n = 0;
	if ((rc = csv_row(&l, s, row, weight)) != 0)
		return rc;
	line_flush(&l);
	return ferror(f) ? sc_errorf(SC_EIO, "csv: write failed") : 0;
}

int
sc_csv_row_text(const struct sc_schema *s, const uint64_t *row,
		const int64_t *weight, char *buf, size_t cap, size_t *len)
{
	struct csv_line l;
	int rc;

	if (!s || !row || !len || (!buf && cap))
		return sc_errorf(SC_EINVAL, "sc_csv_row_text: NULL");
	l.f = NULL;
	l.out = buf;
	l.cap = cap;
	l.total = 0;
	l.n = 0;
	if ((rc = csv_row(&l, s, row, weight)) != 0)
		return rc;
	*len = l.total;
	return 0;
}

int
sc_csv_write_batch(FILE *f, const struct sc_schema *s, const char *const *cols,
		   const struct sc_batch *b)
{
	int rc;

	if (!b || !s || sc_batch_ncols(b) != s->ncols)
		return sc_errorf(SC_EINVAL, "sc_csv_write_batch: NULL or a "
					    "batch of another width");
	if ((rc = sc_csv_write_header(f, cols, s->ncols, true)) != 0)
		return rc;
	for (size_t i = 0; i < sc_batch_count(b); i++) {
		int64_t w = sc_batch_weight(b, i);

		if ((rc = sc_csv_write_row(f, s, sc_batch_row(b, i), &w)) != 0)
			return rc;
	}
	return 0;
}

/* --- the stream reader ------------------------------------------------------
 *
 * The bytes read and not yet cut into records are buf[off, len); a record
 * is cut only once it is whole (its line break, outside quotes, is in the
 * buffer), so the record parser above runs unchanged on it, with r.end at
 * the record's end. The buffer moves only between records, when room is
 * needed for the next read.
 */

/* The longest record of several lines (quoted line breaks), in lines of
 * the limit: past it a record is refused rather than buffered for ever. */
#define CSV_RECORD_LINES 16

struct sc_csv_stream {
	char name[256];
	int fd;
	bool own_fd; /* opened by sc_csv_stream_open: closed */
	struct sc_schema s;
	uint32_t batch_rows;
	uint64_t linger_ns;
	size_t max_line;
	bool header;	  /* read */
	bool weighted;	  /* the header's last column is `weight` */
	bool eof;	  /* read(2) said so */
	int err;	  /* the error that stays, once raised (0: none) */
	char errmsg[512]; /* its message, raised again by later calls */
	struct sc_csv_error errpos;
	char *buf; /* bytes read */
	size_t off, len, cap;
	uint64_t line;		 /* the line of buf[off] */
	struct sc_csv_rows rows; /* rows waiting (symbols held) */
	int64_t *weights;	 /* their weights, when weighted */
	size_t handed;		 /* rows[0..handed) were handed out last call */
	uint64_t first_ns;	 /* when rows' first waiting row was read */
	uint64_t first_line;	 /* and its line */
	struct field f[SC_SCHEMA_MAX_COLS + 2];
};

/* Record rc (raised with its message) as the error that stays. */
static int
csv_stream_keep(struct sc_csv_stream *st, int rc)
{
	st->err = rc;
	(void)snprintf(st->errmsg, sizeof(st->errmsg), "%s", sc_errdetail());
	return rc;
}

/* The reader over buf[off, end) at the stream's line. */
static void
csv_stream_reader(struct sc_csv_stream *st, struct reader *r, size_t end)
{
	memset(r, 0, sizeof(*r));
	r->name = st->name;
	r->p = r->line_start = st->buf + st->off;
	r->end = st->buf + end;
	r->line = st->line;
	r->max_line = st->max_line;
	r->f = st->f;
	r->err = &st->errpos;
	r->timestamps = true;
}

/*
 * Where the record at buf[off] ends (past its line break): true and *end,
 * or false when the buffer holds only part of it. Unquoted records, the
 * common case, cost two memchr; a quote makes it walk the quotes' parity.
 */
static bool
csv_stream_whole(const struct sc_csv_stream *st, size_t *end)
{
	const char *p = st->buf + st->off, *e = st->buf + st->len;
	const char *nl = memchr(p, '\n', (size_t)(e - p));
	bool quoted = false;

	if (!nl)
		return false;
	if (!memchr(p, '"', (size_t)(nl - p))) {
		*end = (size_t)(nl + 1 - st->buf);
		return true;
	}
	for (; p < e; p++) {
		if (*p == '"')
			quoted = !quoted;
		else if (*p == '\n' && !quoted) {
			*end = (size_t)(p + 1 - st->buf);
			return true;
		}
	}
	return false;
}

/* Whether every number and bool column of the record just cut reads as
 * a value (a row of data where the header should be). */
static bool
csv_stream_looks_like_data(struct sc_csv_stream *st, struct reader *r)
{
	bool any = false;

	for (uint32_t c = 0; c < st->s.ncols; c++) {
		const struct field *f = &r->f[c];
		uint64_t w;
		bool ok;

		switch (st->s.types[c]) {
		case SC_TYPE_I64:
			ok = csv_i64(f, &w) || csv_time_i64(f, &w);
			break;
		case SC_TYPE_U64:
			ok = csv_u64(f, &w) || csv_time_u64(f, &w);
			break;
		case SC_TYPE_F64:
			ok = csv_f64(f, &w);
			break;
		case SC_TYPE_BOOL:
			ok = csv_bool(f, &w);
			break;
		default:
			continue;
		}
		if (!ok)
			return false;
		any = true;
	}
	return any;
}

/* The header, cut at r: its width says whether rows carry a weight. */
static int
csv_stream_header(struct sc_csv_stream *st, struct reader *r, uint64_t line)
{
	uint32_t n = st->s.ncols;
	const struct field *last = &r->f[r->nf - 1];

	if (r->nf == n + 1 && last->len == 6 && !memcmp(last->p, "weight", 6))
		st->weighted = true;
	else if (r->nf != n)
		return csv_fail(r, line, r->nf < n ? r->nf : n + 1,
				"the header has %u fields: the input has %u "
				"columns (and may add one named 'weight')",
				r->nf, n);
	if (csv_stream_looks_like_data(st, r))
		return csv_fail(r, line, 1,
				"a row of values where the header should be "
				"(the first line names the columns)");
	st->header = true;
	return 0;
}

static int
csv_stream_weight(struct sc_csv_stream *st, struct reader *r, uint64_t line)
{
	const struct field *f = &r->f[st->s.ncols];
	uint64_t w;
	int64_t v;

	if (!csv_i64(f, &w) || (v = sc_dec_i64(w)) == 0)
		return csv_fail(r, line, st->s.ncols + 1,
				"weight '%.*s' is not a non-zero i64",
				f->len > 40 ? 40 : (int)f->len, f->p);
	st->weights[st->rows.n] = v;
	return 0;
}

/* One data record, cut at r, into the rows waiting. */
static int
csv_stream_row(struct sc_csv_stream *st, struct reader *r, uint64_t line)
{
	uint32_t want = st->s.ncols + st->weighted;
	uint64_t *row = NULL;
	int rc;

	if (r->nf != want)
		return csv_fail(r, line, r->nf + 1, "%u fields, expected %u",
				r->nf, want);
	if ((rc = csv_rows_push(&st->rows, &row)) != 0)
		return rc;
	if (st->weighted && (rc = csv_stream_weight(st, r, line)) != 0)
		return rc;
	if ((rc = csv_convert(r, &st->s, &st->rows, line, row)) != 0)
		return rc;
	if (st->rows.n++ == 0) {
		st->first_ns = sc_bench_now_ns();
		st->first_line = line;
	}
	return 0;
}

/*
 * The fields of a plain record at [p, nl) (nl its line feed): no quote,
 * no carriage return but one before the line feed, no longer than the
 * limit, at most `want` fields. Cut at the commas in one pass, without a
 * copy: most records of a live source are such. False for any other,
 * which the record parser then cuts (and says what is wrong with it).
 */
static bool
csv_split_plain(struct reader *r, const char *p, const char *nl, uint32_t want)
{
	const char *e = nl > p && nl[-1] == '\r' ? nl - 1 : nl;

	if ((size_t)(e - p) > r->max_line)
		return false;
	r->nf = 0;
	r->f[0].p = p;
	for (const char *q = p; q < e; q++) {
		if (*q == '"' || *q == '\r')
			return false;
		if (*q != ',')
			continue;
		if (r->nf + 1 == want)
			return false;
		r->f[r->nf].len = (size_t)(q - r->f[r->nf].p);
		r->f[++r->nf].p = q + 1;
	}
	r->f[r->nf].len = (size_t)(e - r->f[r->nf].p);
	r->nf++;
	return true;
}

/* The record of r, cut, as the header or a row; then past it, to end. */
static int
csv_stream_use(struct sc_csv_stream *st, struct reader *r, uint64_t line,
	       size_t end)
{
	int rc = st->header ? csv_stream_row(st, r, line)
			    : csv_stream_header(st, r, line);

	free(r->scratch);
	if (rc == 0) {
		st->off = end;
		st->line = r->line;
	}
	return rc;
}

/*
 * The record at buf[off], if the buffer holds it whole: 0 and taken (or
 * an error), SC_EEMPTY when only part of it is there. A plain record
 * (csv_split_plain) ends at the first line feed; one with quotes is
 * found with csv_stream_whole and cut by the record parser.
 */
static int
csv_stream_take(struct sc_csv_stream *st)
{
	uint32_t want =
	    st->header ? st->s.ncols + st->weighted : SC_SCHEMA_MAX_COLS + 1;
	const char *p, *nl;
	struct reader r;
	uint64_t line = st->line;
	size_t end;
	int rc;

	/* Nothing buffered (buf may be NULL then, which memchr must not
	 * see): no record yet. */
	if (st->off == st->len)
		return SC_EEMPTY;
	p = st->buf + st->off;
	if (!(nl = memchr(p, '\n', st->len - st->off)))
		return SC_EEMPTY;
	csv_stream_reader(st, &r, (size_t)(nl + 1 - st->buf));
	if (csv_split_plain(&r, p, nl, want)) {
		r.line = line + 1;
		return csv_stream_use(st, &r, line, (size_t)(nl + 1 - st->buf));
	}
	if (!csv_stream_whole(st, &end))
		return SC_EEMPTY;
	csv_stream_reader(st, &r, end);
	if ((rc = csv_record(&r, want, &line)) != 0) {
		free(r.scratch);
		return rc;
	}
	return csv_stream_use(st, &r, line, end);
}

/*
 * The part of a record at buf[off, len) that the input ends in, or that
 * is past the limits: refused, naming the line (the record parser's own
 * error when it has one, e.g. a quote never closed).
 */
static int
csv_stream_partial(struct sc_csv_stream *st, bool at_end)
{
	struct reader r;
	uint64_t line;
	int rc;

	csv_stream_reader(st, &r, st->len);
	rc = csv_record(&r, SC_SCHEMA_MAX_COLS + 1, &line);
	free(r.scratch);
	if (rc)
		return rc;
	if (at_end)
		return csv_fail(&r, st->line, r.nf,
				"the input ends inside this line (no line "
				"break after it): a writer that stopped "
				"early?");
	return csv_fail(&r, st->line, r.nf, "a record longer than %zu bytes",
			CSV_RECORD_LINES * st->max_line);
}

/* Whether the unfinished record at buf[off, len) is past the limits: its
 * last line longer than max_line, or the record CSV_RECORD_LINES lines. */
static bool
csv_stream_too_long(const struct sc_csv_stream *st)
{
	const char *p = st->buf + st->off, *e = st->buf + st->len, *q = e;

	if ((size_t)(e - p) > CSV_RECORD_LINES * st->max_line)
		return true;
	while (q > p && q[-1] != '\n')
		q--;
	return (size_t)(e - q) > st->max_line;
}

/* Cut the whole records the buffer holds, up to a full batch. */
static int
csv_stream_cut(struct sc_csv_stream *st)
{
	int rc = 0;

	while (st->rows.n < st->batch_rows && (rc = csv_stream_take(st)) == 0)
		;
	if (rc && rc != SC_EEMPTY)
		return rc;
	if (st->rows.n < st->batch_rows && st->off < st->len &&
	    (st->eof || csv_stream_too_long(st)))
		return csv_stream_partial(st, st->eof);
	if (st->eof && !st->header && st->off == st->len) {
		struct reader r;

		csv_stream_reader(st, &r, st->len);
		return csv_fail(&r, 1, 1, "empty: no header row");
	}
	return 0;
}

/* Read what the descriptor has into the buffer (room made first). */
static int
csv_stream_read(struct sc_csv_stream *st)
{
	size_t want = st->max_line + 2;
	ssize_t got;

	if (st->off) {
		memmove(st->buf, st->buf + st->off, st->len - st->off);
		st->len -= st->off;
		st->off = 0;
	}
	if (st->cap - st->len < want / 4 + 1) {
		size_t cap =
		    st->cap * 2 > st->len + want ? st->cap * 2 : st->len + want;
		char *b = realloc(st->buf, cap);

		if (!b)
			return sc_errorf(SC_ENOMEM, "%s: out of memory",
					 st->name);
		st->buf = b;
		st->cap = cap;
	}
	got = read(st->fd, st->buf + st->len, st->cap - st->len);
	if (got < 0) {
		char msg[128] = "";

		if (errno == EINTR || errno == EAGAIN)
			return SC_ETIMEDOUT;
		(void)strerror_r(errno, msg, sizeof(msg));
		return sc_errorf(SC_EIO, "cannot read '%s': %s", st->name, msg);
	}
	if (got == 0)
		st->eof = true;
	st->len += (size_t)got;
	return 0;
}

/* Release the rows handed out by the last call (a batch hands out every
 * row waiting, so none is left); rows still waiting stay. */
static void
csv_stream_forget(struct sc_csv_stream *st)
{
	if (!st->handed)
		return;
	for (size_t i = 0; i < st->handed; i++)
		csv_release_row(&st->rows, st->rows.rows + i * st->rows.ncols,
				st->rows.ncols);
	st->rows.n = 0;
	st->handed = 0;
}

/* Hand out every row waiting. */
static int
csv_stream_hand(struct sc_csv_stream *st, struct sc_csv_batch *out)
{
	out->rows = st->rows.rows;
	out->weights = st->weighted ? st->weights : NULL;
	out->n = st->rows.n;
	out->first_line = st->first_line;
	st->handed = st->rows.n;
	return 0;
}

/* Wait up to ms (-1: for ever) for bytes: 1 ready, 0 not, or an error. */
static int
csv_stream_wait(struct sc_csv_stream *st, int ms)
{
	struct pollfd pfd = {.fd = st->fd, .events = POLLIN};
	int n = poll(&pfd, 1, ms);

	if (n < 0) {
		char msg[128] = "";

		if (errno == EINTR)
			return SC_ETIMEDOUT;
		(void)strerror_r(errno, msg, sizeof(msg));
		return sc_errorf(SC_EIO, "cannot wait for '%s': %s", st->name,
				 msg);
	}
	return n > 0;
}

/* How long to wait now, in ms, for the deadline (UINT64_MAX: none) and
 * the waiting rows' linger. */
static int
csv_stream_wait_ms(const struct sc_csv_stream *st, uint64_t now,
		   uint64_t deadline)
{
	uint64_t until = deadline;

	if (st->rows.n && st->first_ns + st->linger_ns < until)
		until = st->first_ns + st->linger_ns;
	if (until == UINT64_MAX)
		return -1;
	if (until <= now)
		return 0;
	return (int)((until - now + 999999) / 1000000);
}

int
sc_csv_stream_next(struct sc_csv_stream *st, int timeout_ms,
		   struct sc_csv_batch *out)
{
	uint64_t deadline, now;
	int rc;

	if (!st || !out)
		return sc_errorf(SC_EINVAL, "sc_csv_stream_next: NULL");
	csv_stream_forget(st);
	if (st->err)
		return sc_errorf(st->err, "%s", st->errmsg);
	now = sc_bench_now_ns();
	deadline =
	    timeout_ms < 0 ? UINT64_MAX : now + (uint64_t)timeout_ms * 1000000u;
	for (;;) {
		int ready, ms;

		if ((rc = csv_stream_cut(st)) != 0) {
			(void)csv_stream_keep(st, rc);
			if (st->rows.n)
				return csv_stream_hand(st, out);
			return rc;
		}
		if (st->rows.n >= st->batch_rows || (st->eof && st->rows.n))
			return csv_stream_hand(st, out);
		if (st->eof)
			return csv_stream_keep(
			    st,
			    sc_errorf(SC_EEMPTY, "%s: at its end", st->name));
		now = sc_bench_now_ns();
		if (st->rows.n && now >= st->first_ns + st->linger_ns)
			return csv_stream_hand(st, out);
		ms = csv_stream_wait_ms(st, now, deadline);
		if ((ready = csv_stream_wait(st, ms)) < 0)
			return ready == SC_ETIMEDOUT
				   ? ready
				   : csv_stream_keep(st, ready);
		if (!ready) {
			if (st->rows.n &&
			    sc_bench_now_ns() >= st->first_ns + st->linger_ns)
				return csv_stream_hand(st, out);
			if (sc_bench_now_ns() >= deadline)
				return SC_ETIMEDOUT;
			continue;
		}
		if ((rc = csv_stream_read(st)) == SC_ETIMEDOUT)
			return rc;
		if (rc)
			return csv_stream_keep(st, rc);
	}
}

static int
csv_stream_new(int fd, bool own, const char *name, const struct sc_schema *s,
	       const struct sc_csv_stream_opts *o, struct sc_csv_stream **out)
{
	struct sc_csv_stream *st = calloc(1, sizeof(*st));

	if (!st)
		return sc_errorf(SC_ENOMEM, "%s: out of memory", name);
	(void)snprintf(st->name, sizeof(st->name), "%s", name);
	st->fd = fd;
	st->own_fd = own;
	st->s = *s;
	st->batch_rows = o && o->batch_rows ? o->batch_rows : SC_CSV_BATCH_ROWS;
	st->linger_ns =
	    (uint64_t)(o && o->linger_ms ? o->linger_ms : SC_CSV_LINGER_MS) *
	    1000000u;
	st->max_line = o && o->max_line ? o->max_line : SC_CSV_MAX_LINE;
	st->line = 1;
	st->rows.ncols = s->ncols;
	st->rows.symbols = s->symbols;
	for (uint32_t c = 0; c < s->ncols; c++)
		if (s->types[c] == SC_TYPE_SYMBOL)
			st->rows.sym_cols[st->rows.nsym++] = c;
	/* Every row of a batch has its room from the start: a batch is
	 * at most batch_rows, and the weights follow the rows' index. */
	st->rows.rows = malloc((size_t)st->batch_rows *
			       (s->ncols ? s->ncols : 1) * sizeof(uint64_t));
	st->rows.cap = st->batch_rows;
	st->weights = malloc((size_t)st->batch_rows * sizeof(int64_t));
	if (!st->rows.rows || !st->weights) {
		free(st->rows.rows);
		free(st->weights);
		free(st);
		return sc_errorf(SC_ENOMEM, "%s: out of memory", name);
	}
	*out = st;
	return 0;
}

/* The checks open and create share. */
static int
csv_stream_check(const char *what, const char *name, const struct sc_schema *s,
		 const struct sc_csv_stream_opts *o, struct sc_csv_stream **out)
{
	if (!name || !s || !out)
		return sc_errorf(SC_EINVAL, "%s: NULL argument", what);
	if (!s->ncols || s->ncols > SC_SCHEMA_MAX_COLS)
		return sc_errorf(SC_EINVAL, "%s: a schema of %u columns", what,
				 s->ncols);
	for (uint32_t c = 0; c < s->ncols; c++)
		if (s->types[c] == SC_TYPE_SYMBOL && !s->symbols)
			return sc_errorf(SC_EINVAL,
					 "%s: '%s': a symbol column and no "
					 "table",
					 what, name);
	if (o && o->batch_rows > (1u << 24))
		return sc_errorf(SC_EINVAL, "%s: batch_rows %u above %u", what,
				 o->batch_rows, 1u << 24);
	return 0;
}

static int
csv_stream_not_dir(const char *what, int fd, const char *name)
{
	struct stat sb;
	char msg[128] = "";

	if (fstat(fd, &sb) != 0) {
		(void)strerror_r(errno, msg, sizeof(msg));
		return sc_errorf(SC_EINVAL, "%s: '%s': %s", what, name, msg);
	}
	if (S_ISDIR(sb.st_mode))
		return sc_errorf(SC_EINVAL, "%s: '%s' is a directory", what,
				 name);
	return 0;
}

int
sc_csv_stream_create(int fd, const char *name, const struct sc_schema *s,
		     const struct sc_csv_stream_opts *o,
		     struct sc_csv_stream **out)
{
	int rc;

	if ((rc = csv_stream_check("sc_csv_stream_create", name, s, o, out)))
		return rc;
	if (fd < 0)
		return sc_errorf(SC_EINVAL, "sc_csv_stream_create: fd %d", fd);
	if ((rc = csv_stream_not_dir("sc_csv_stream_create", fd, name)) != 0)
		return rc;
	return csv_stream_new(fd, false, name, s, o, out);
}

int
sc_csv_stream_open(const char *path, const struct sc_schema *s,
		   const struct sc_csv_stream_opts *o,
		   struct sc_csv_stream **out)
{
	char msg[128] = "";
	int fd, rc, fl;

	if ((rc = csv_stream_check("sc_csv_stream_open", path, s, o, out)))
		return rc;
	/* O_NONBLOCK so that a FIFO opens before its writer does (the
	 * reads then wait in poll, where a host can look at signals);
	 * cleared after, so that read(2) behaves as on any descriptor. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		(void)strerror_r(errno, msg, sizeof(msg));
		return errno == EISDIR
			   ? sc_errorf(SC_EINVAL, "'%s' is a directory", path)
			   : sc_errorf(SC_EIO, "cannot read '%s': %s", path,
				       msg);
	}
	if ((rc = csv_stream_not_dir("cannot read", fd, path)) != 0 ||
	    (rc = ((fl = fcntl(fd, F_GETFL)) < 0 ||
		   fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0)
		      ? sc_errorf(SC_EIO, "cannot read '%s': fcntl", path)
		      : 0) != 0 ||
	    (rc = csv_stream_new(fd, true, path, s, o, out)) != 0) {
		(void)close(fd);
		return rc;
	}
	return 0;
}

const struct sc_csv_error *
sc_csv_stream_error(const struct sc_csv_stream *st)
{
	return st && st->err == SC_EINVAL && st->errpos.line ? &st->errpos
							     : NULL;
}

bool
sc_csv_stream_weighted(const struct sc_csv_stream *st)
{
	return st && st->weighted;
}

int
sc_csv_stream_fd(const struct sc_csv_stream *st)
{
	return st ? st->fd : -1;
}

void
sc_csv_stream_destroy(struct sc_csv_stream *st)
{
	if (!st)
		return;
	st->handed = st->rows.n;
	csv_stream_forget(st);
	if (st->own_fd)
		(void)close(st->fd);
	free(st->rows.rows);
	free(st->weights);
	free(st->buf);
	free(st);
}

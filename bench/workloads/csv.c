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
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

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

static bool
csv_i64(const struct field *f, uint64_t *w)
{
	char buf[64], *endp;
	long long v;

	if (!csv_number_text(f, "-0123456789", buf) || strchr(buf + 1, '-') ||
	    !strcmp(buf, "-"))
		return false;
	errno = 0;
	v = strtoll(buf, &endp, 10);
	if (errno || *endp)
		return false;
	*w = sc_enc_i64(v);
	return true;
}

static bool
csv_u64(const struct field *f, uint64_t *w)
{
	char buf[64], *endp;
	unsigned long long v;

	if (!csv_number_text(f, "0123456789", buf))
		return false;
	errno = 0;
	v = strtoull(buf, &endp, 10);
	if (errno || *endp)
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
			ok = csv_i64(f, &row[c]);
			break;
		case SC_TYPE_U64:
			ok = csv_u64(f, &row[c]);
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
			return csv_fail(r, line, c + 1, "'%.*s' is not %s %s",
					f->len > 40 ? 40 : (int)f->len, f->p,
					s->types[c] == SC_TYPE_BOOL ? "a"
								    : "an",
					s->types[c] == SC_TYPE_BOOL
					    ? "bool (true or false)"
					    : sc_type_name(s->types[c]));
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

int
sc_csv_parse(const char *name, const char *buf, size_t len,
	     const struct sc_schema *s, const char *const *cols,
	     size_t max_line, struct sc_csv_rows *out, struct sc_csv_error *err)
{
	struct field fields[SC_SCHEMA_MAX_COLS + 1];
	struct reader r;
	int rc;

	if (!name || (!buf && len) || !s || !cols || !out || !s->ncols ||
	    s->ncols > SC_SCHEMA_MAX_COLS)
		return sc_errorf(SC_EINVAL, "sc_csv_parse: NULL argument or "
					    "a schema of no column");
	memset(out, 0, sizeof(*out));
	out->ncols = s->ncols;
	out->symbols = s->symbols;
	for (uint32_t c = 0; c < s->ncols; c++)
		if (s->types[c] == SC_TYPE_SYMBOL)
			out->sym_cols[out->nsym++] = c;
	if (out->nsym && !s->symbols)
		return sc_errorf(SC_EINVAL,
				 "sc_csv_parse: a symbol column and no table");
	memset(&r, 0, sizeof(r));
	r.name = name;
	r.p = r.line_start = buf;
	r.end = buf + len;
	r.line = 1;
	r.max_line = max_line ? max_line : SC_CSV_MAX_LINE;
	r.f = fields;
	r.err = err;
	if ((rc = csv_header(&r, s, cols)) == 0)
		rc = csv_body(&r, s, out);
	free(r.scratch);
	if (rc)
		sc_csv_rows_fini(out);
	return rc;
}

int
sc_csv_read_file(const char *path, const struct sc_schema *s,
		 const char *const *cols, size_t max_line,
		 struct sc_csv_rows *out, struct sc_csv_error *err)
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
	rc = sc_csv_parse(path, buf, len, s, cols, max_line, out, err);
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

/* The shortest %.*g of v that reads back as v. */
static void
csv_put_f64(FILE *f, double v)
{
	char buf[40];

	if (v != v) {
		(void)fputs("nan", f);
		return;
	}
	if (v == INFINITY || v == -INFINITY) {
		(void)fputs(v > 0 ? "inf" : "-inf", f);
		return;
	}
	for (int prec = 15; prec <= 17; prec++) {
		(void)snprintf(buf, sizeof(buf), "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			break;
	}
	(void)fputs(buf, f);
}

static int
csv_put_symbol(FILE *f, const struct sc_schema *s, uint64_t id)
{
	const char *t;
	size_t len;

	if (!s->symbols || sc_symtab_lookup(s->symbols, id, &t, &len) != 0)
		return sc_errorf(SC_ENOENT,
				 "csv: symbol #%" PRIu64 " is not in the table",
				 id);
	(void)fputc('"', f);
	for (size_t i = 0; i < len; i++) {
		if (t[i] == '"')
			(void)fputc('"', f);
		(void)fputc(t[i], f);
	}
	(void)fputc('"', f);
	return 0;
}

int
sc_csv_write_row(FILE *f, const struct sc_schema *s, const uint64_t *row,
		 const int64_t *weight)
{
	int rc;

	if (!f || !s || !row)
		return sc_errorf(SC_EINVAL, "sc_csv_write_row: NULL");
	for (uint32_t c = 0; c < s->ncols; c++) {
		if (c)
			(void)fputc(',', f);
		switch (s->types[c]) {
		case SC_TYPE_I64:
			(void)fprintf(f, "%" PRId64, sc_dec_i64(row[c]));
			break;
		case SC_TYPE_U64:
			(void)fprintf(f, "%" PRIu64, sc_dec_u64(row[c]));
			break;
		case SC_TYPE_F64:
			csv_put_f64(f, sc_dec_f64(row[c]));
			break;
		case SC_TYPE_BOOL:
			(void)fputs(sc_dec_bool(row[c]) ? "true" : "false", f);
			break;
		default:
			if ((rc = csv_put_symbol(f, s, row[c])) != 0)
				return rc;
		}
	}
	if (weight)
		(void)fprintf(f, ",%" PRId64, *weight);
	(void)fputc('\n', f);
	return ferror(f) ? sc_errorf(SC_EIO, "csv: write failed") : 0;
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

/*
 * partsink.c - the partitioned CSV sink (partsink.h).
 *
 * Open partitions live in an array sorted by key (a row's partition is
 * found by binary search, the last one used first: a delta's rows mostly
 * share one); each holds the CSV text of its rows not yet in its temporary
 * file. Closed partitions keep only their key and the next file number,
 * where a partition opened again starts looking for a free name.
 */
/* POSIX 2008 (the build's _POSIX_C_SOURCE): the XSI strerror_r, which
 * fills its buffer. */
#include "bench/workloads/partsink.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bench/workloads/csv.h"
#include "operators/error.h"
#include "operators/waterline.h"

#define PS_PATH_MAX 4096

struct ps_part {
	int64_t key;   /* floor(t / width) */
	uint32_t file; /* this file's number: part-<file>.csv */
	bool spilled;  /* its temporary file exists */
	char *buf;     /* CSV text not yet in the temporary file */
	size_t len, cap;
};

/* A closed partition: the files committed for it. */
struct ps_closed {
	int64_t key;
	uint32_t files;
};

/* A delta's rows as text, made outside the lock: each source's own (a
 * source writes one delta at a time), kept for its next delta. */
struct ps_scratch {
	char *text;
	size_t len, cap;
	int64_t *keys; /* each row's partition */
	size_t *ends;  /* each row's end in text */
	size_t cap_rows;
};

struct ps_source {
	const void *id;
	int64_t waterline;
	struct ps_scratch *scratch; /* its own allocation: src may move */
};

struct sc_partsink {
	pthread_mutex_t lock;
	char *dir, *format;
	const struct sc_schema *schema;
	const char *const *cols;
	uint32_t time_col, nsources;
	int64_t width;
	struct ps_part *open; /* by key */
	size_t nopen, cap_open, last;
	struct ps_closed *closed; /* by key */
	size_t nclosed, cap_closed;
	struct ps_source *src;
	size_t nsrc, cap_src;
	struct sc_partsink_stats st;
};

/* --- paths ---------------------------------------------------------------- */

/* floor(t / w) for w > 0. */
static int64_t
ps_key(int64_t t, int64_t w)
{
	return t / w - (t % w < 0);
}

/* Partition `key`'s folder into out[PS_PATH_MAX] (rel: without the root).
 * Returns 0 or SC_EINVAL (a start outside time_t's calendar, or a path
 * too long). */
static int
ps_folder(const struct sc_partsink *s, int64_t key, char *out, bool rel)
{
	int64_t ms;
	time_t t;
	struct tm tm;
	char name[PS_PATH_MAX];
	int w;

	if (__builtin_mul_overflow(key, s->width, &ms))
		return sc__fail(SC_EINVAL,
				"partsink: partition %lld of "
				"width %lld ms is outside time",
				(long long)key, (long long)s->width);
	t = (time_t)ps_key(ms, 1000);
	if (!gmtime_r(&t, &tm) ||
	    strftime(name, sizeof(name), s->format, &tm) == 0)
		return sc__fail(SC_EINVAL,
				"partsink: format '%s' gives no folder for "
				"the partition at %lld ms",
				s->format, (long long)ms);
	w = rel ? snprintf(out, PS_PATH_MAX, "%s", name)
		: snprintf(out, PS_PATH_MAX, "%s/%s", s->dir, name);
	if (w < 0 || w >= PS_PATH_MAX)
		return sc__fail(SC_EINVAL,
				"partsink: the folder of the "
				"partition at %lld ms is too long",
				(long long)ms);
	return 0;
}

static int
ps_io(const char *what, const char *path, int err)
{
	char msg[128] = "";

	(void)strerror_r(err, msg, sizeof(msg));
	return sc__fail(SC_EIO, "partsink: %s '%s': %s", what, path, msg);
}

/* mkdir -p path. */
static int
ps_mkdirs(const char *path)
{
	char p[PS_PATH_MAX];
	size_t n = strlen(path);

	if (n >= sizeof(p))
		return sc__fail(SC_EINVAL, "partsink: path too long");
	memcpy(p, path, n + 1);
	for (size_t i = 1; i <= n; i++) {
		if (p[i] != '/' && p[i] != '\0')
			continue;
		p[i] = '\0';
		if (mkdir(p, 0777) != 0 && errno != EEXIST)
			return ps_io("cannot make the folder", p, errno);
		p[i] = path[i];
	}
	return 0;
}

/* In p's folder (ps_folder), the temporary path of its file (tmp; named
 * by its key, as partitions may share a folder), or its final path as
 * file number n. */
static int
ps_file(const char *folder, const struct ps_part *p, bool tmp, uint32_t n,
	char *out)
{
	int w = tmp ? snprintf(out, PS_PATH_MAX, "%s/.part-k%lld.csv.tmp",
			       folder, (long long)p->key)
		    : snprintf(out, PS_PATH_MAX, "%s/part-%u.csv", folder, n);
	if (w < 0 || w >= PS_PATH_MAX)
		return sc__fail(SC_EINVAL,
				"partsink: path too long under "
				"'%s'",
				folder);
	return 0;
}

/* --- partitions ----------------------------------------------------------- */

/* The first index of a (by key) whose key >= key. */
#define PS_LOWER(arr, n, k)                                                    \
	__extension__({                                                        \
		size_t lo_ = 0, hi_ = (n);                                     \
		while (lo_ < hi_) {                                            \
			size_t mid_ = lo_ + (hi_ - lo_) / 2;                   \
			if ((arr)[mid_].key < (k))                             \
				lo_ = mid_ + 1;                                \
			else                                                   \
				hi_ = mid_;                                    \
		}                                                              \
		lo_;                                                           \
	})

static int
ps_grow(void **arr, size_t *cap, size_t n, size_t size)
{
	size_t c;
	void *p;

	if (n < *cap)
		return 0;
	c = *cap ? 2 * *cap : 16;
	if (!(p = realloc(*arr, c * size)))
		return sc__fail(SC_ENOMEM, "partsink: out of memory");
	*arr = p;
	*cap = c;
	return 0;
}

/* The open partition of key, opened if it is not (the next file after
 * those a closed one committed). Returns its index or a negative code. */
static long
ps_part(struct sc_partsink *s, int64_t key)
{
	size_t i, c;
	struct ps_part *p;

	if (s->last < s->nopen && s->open[s->last].key == key)
		return (long)s->last;
	i = PS_LOWER(s->open, s->nopen, key);
	if (i < s->nopen && s->open[i].key == key)
		return (long)(s->last = i);
	if (ps_grow((void **)&s->open, &s->cap_open, s->nopen, sizeof(*p)))
		return SC_ENOMEM;
	memmove(&s->open[i + 1], &s->open[i], (s->nopen - i) * sizeof(*p));
	s->nopen++;
	p = &s->open[i];
	memset(p, 0, sizeof(*p));
	p->key = key;
	c = PS_LOWER(s->closed, s->nclosed, key);
	if (c < s->nclosed && s->closed[c].key == key) {
		p->file = s->closed[c].files;
		s->st.reopened++;
	}
	s->st.open = s->nopen;
	return (long)(s->last = i);
}

/* Room in p's memory for `more` bytes. */
static int
ps_reserve(struct ps_part *p, size_t more)
{
	size_t c = p->cap ? p->cap : 4096;
	char *b;

	if (p->len + more <= p->cap)
		return 0;
	while (c < p->len + more)
		c *= 2;
	if (!(b = realloc(p->buf, c)))
		return sc__fail(SC_ENOMEM, "partsink: out of memory");
	p->buf = b;
	p->cap = c;
	return 0;
}

/* p's memory to its temporary file (made with the header if new); on
 * success the memory is empty. */
static int
ps_spill(struct sc_partsink *s, struct ps_part *p)
{
	char path[PS_PATH_MAX], folder[PS_PATH_MAX];
	int rc, fd;
	FILE *f;

	if (!p->len && p->spilled)
		return 0;
	if ((rc = ps_folder(s, p->key, folder, false)) != 0 ||
	    (rc = ps_mkdirs(folder)) != 0 ||
	    (rc = ps_file(folder, p, true, 0, path)) != 0)
		return rc;
	fd = open(path,
		  O_WRONLY | O_CREAT | O_CLOEXEC |
		      (p->spilled ? O_APPEND : O_TRUNC),
		  0666);
	if (fd < 0)
		return ps_io("cannot open", path, errno);
	if (!(f = fdopen(fd, "a"))) {
		rc = ps_io("cannot open", path, errno);
		(void)close(fd);
		return rc;
	}
	if (!p->spilled &&
	    (rc = sc_csv_write_header(f, s->cols, s->schema->ncols, true)) != 0)
		rc = ps_io("cannot write", path, EIO);
	if (!rc && p->len && fwrite(p->buf, 1, p->len, f) != p->len)
		rc = ps_io("cannot write", path, errno ? errno : EIO);
	if (fclose(f) != 0 && !rc)
		rc = ps_io("cannot write", path, errno);
	if (rc)
		return rc;
	p->spilled = true;
	p->len = 0;
	return 0;
}

/* Commit open partition i: the rest of its rows to the temporary file,
 * which is synced and given the first free final name (a link, which
 * never replaces a file, then the temporary name goes); then it is
 * closed. */
static int
ps_commit(struct sc_partsink *s, size_t i)
{
	struct ps_part *p = &s->open[i];
	char folder[PS_PATH_MAX], tmp[PS_PATH_MAX], fin[PS_PATH_MAX];
	size_t c;
	int rc, fd;

	if ((rc = ps_spill(s, p)) != 0 ||
	    (rc = ps_folder(s, p->key, folder, false)) != 0 ||
	    (rc = ps_file(folder, p, true, 0, tmp)) != 0 ||
	    (rc = ps_grow((void **)&s->closed, &s->cap_closed, s->nclosed,
			  sizeof(*s->closed))))
		return rc;
	if ((fd = open(tmp, O_RDONLY | O_CLOEXEC)) < 0)
		return ps_io("cannot open", tmp, errno);
	if (fsync(fd) != 0) {
		rc = ps_io("cannot sync", tmp, errno);
		(void)close(fd);
		return rc;
	}
	(void)close(fd);
	for (;; p->file++) {
		if ((rc = ps_file(folder, p, false, p->file, fin)) != 0)
			return rc;
		if (link(tmp, fin) == 0)
			break;
		if (errno != EEXIST || p->file == UINT32_MAX)
			return ps_io("cannot commit", fin, errno);
	}
	(void)unlink(tmp);
	c = PS_LOWER(s->closed, s->nclosed, p->key);
	if (c < s->nclosed && s->closed[c].key == p->key) {
		s->closed[c].files = p->file + 1;
	} else {
		memmove(&s->closed[c + 1], &s->closed[c],
			(s->nclosed - c) * sizeof(*s->closed));
		s->nclosed++;
		s->closed[c] = (struct ps_closed){p->key, p->file + 1};
	}
	free(p->buf);
	memmove(&s->open[i], &s->open[i + 1], (s->nopen - i - 1) * sizeof(*p));
	s->nopen--;
	s->last = 0;
	s->st.committed++;
	s->st.open = s->nopen;
	return 0;
}

/* The least waterline of the sources, once all have reported. */
static int64_t
ps_waterline(const struct sc_partsink *s)
{
	int64_t w = INT64_MAX;

	if (s->nsrc < s->nsources)
		return SC_WATERLINE_NONE;
	for (size_t i = 0; i < s->nsrc; i++)
		if (s->src[i].waterline < w)
			w = s->src[i].waterline;
	return w;
}

/* Commit the open partitions whose end is at or below the waterline (the
 * array is by key, so they lead it). */
static int
ps_close_passed(struct sc_partsink *s)
{
	int64_t w = ps_waterline(s);

	s->st.waterline = w;
	while (s->nopen && w != SC_WATERLINE_NONE) {
		int64_t end;
		int rc;

		if (__builtin_add_overflow(s->open[0].key, 1, &end) ||
		    __builtin_mul_overflow(end, s->width, &end) || end > w)
			break;
		if ((rc = ps_commit(s, 0)) != 0)
			return rc;
	}
	return 0;
}

/* --- the calls ------------------------------------------------------------ */

int
sc_partsink_create(const struct sc_partsink_opts *o, struct sc_partsink **out)
{
	struct sc_partsink *s;
	int rc;

	if (!out)
		return sc__fail(SC_EINVAL, "sc_partsink_create: out is NULL");
	*out = NULL;
	if (!o || !o->dir || !o->schema || !o->cols || !o->format)
		return sc__fail(SC_EINVAL, "sc_partsink_create: NULL options, "
					   "dir, schema, cols or format");
	if (o->time_col >= o->schema->ncols ||
	    o->schema->types[o->time_col] != SC_TYPE_I64)
		return sc__fail(SC_EINVAL,
				"sc_partsink_create: time column %u is not an "
				"i64 column of the schema",
				o->time_col);
	if (o->width_ms <= 0)
		return sc__fail(SC_EINVAL,
				"sc_partsink_create: width %lld ms is not > 0",
				(long long)o->width_ms);
	if (!o->sources)
		return sc__fail(SC_EINVAL, "sc_partsink_create: sources is 0");
	if (!o->format[0] || o->format[0] == '/' || strstr(o->format, ".."))
		return sc__fail(SC_EINVAL,
				"sc_partsink_create: format '%s' is not a "
				"relative folder without '..'",
				o->format);
	if (!(s = calloc(1, sizeof(*s))) || !(s->dir = strdup(o->dir)) ||
	    !(s->format = strdup(o->format))) {
		if (s)
			free(s->dir);
		free(s);
		return sc__fail(SC_ENOMEM, "sc_partsink_create: out of memory");
	}
	s->schema = o->schema;
	s->cols = o->cols;
	s->time_col = o->time_col;
	s->width = o->width_ms;
	s->nsources = o->sources;
	s->st.waterline = SC_WATERLINE_NONE;
	(void)pthread_mutex_init(&s->lock, NULL);
	{
		char probe[PS_PATH_MAX];

		if ((rc = ps_folder(s, 0, probe, true)) != 0 ||
		    (rc = ps_mkdirs(s->dir)) != 0) {
			sc_partsink_destroy(s);
			return rc;
		}
	}
	*out = s;
	return 0;
}

/* The rows of d as CSV text into x (all or nothing), with each row's
 * partition key and end offset. */
static int
ps_format(const struct sc_partsink *s, const struct sc_batch *d,
	  struct ps_scratch *x)
{
	size_t n = sc_batch_count(d);

	x->len = 0;
	if (n > x->cap_rows) {
		int64_t *k = realloc(x->keys, n * sizeof(*k));
		size_t *e;

		if (k)
			x->keys = k;
		if (!k || !(e = realloc(x->ends, n * sizeof(*e))))
			return sc__fail(SC_ENOMEM, "partsink: out of memory");
		x->ends = e;
		x->cap_rows = n;
	}
	for (size_t i = 0; i < n; i++) {
		const uint64_t *row = sc_batch_row(d, i);
		int64_t w = sc_batch_weight(d, i);
		size_t len;
		int rc;

		x->keys[i] = ps_key(sc_dec_i64(row[s->time_col]), s->width);
		if ((rc = sc_csv_row_text(s->schema, row, &w, x->text + x->len,
					  x->cap - x->len, &len)) != 0)
			return rc;
		if (len > x->cap - x->len) {
			size_t c = x->cap ? x->cap : 65536;
			char *t;

			while (c < x->len + len)
				c *= 2;
			if (!(t = realloc(x->text, c)))
				return sc__fail(SC_ENOMEM,
						"partsink: out of memory");
			x->text = t;
			x->cap = c;
			(void)sc_csv_row_text(s->schema, row, &w,
					      x->text + x->len, x->cap - x->len,
					      &len);
		}
		x->len += len;
		x->ends[i] = x->len;
	}
	return 0;
}

/* The scratch of `source`, registering it (lock held). */
static int
ps_source(struct sc_partsink *s, const void *source, size_t *at)
{
	size_t k;

	for (k = 0; k < s->nsrc && s->src[k].id != source; k++)
		;
	if (k == s->nsrc) {
		struct ps_scratch *x;

		if (ps_grow((void **)&s->src, &s->cap_src, s->nsrc,
			    sizeof(*s->src)) ||
		    !(x = calloc(1, sizeof(*x))))
			return sc__fail(SC_ENOMEM, "partsink: out of memory");
		s->src[s->nsrc++] =
		    (struct ps_source){source, SC_WATERLINE_NONE, x};
	}
	*at = k;
	return 0;
}

/* The n formatted rows into their partitions: every partition opened
 * and its room made first, so that nothing is taken unless all is. */
static int
ps_take(struct sc_partsink *s, size_t n, const int64_t *keys,
	const size_t *ends, const char *text)
{
	size_t *need = NULL, at = 0;
	int rc = 0;

	for (size_t i = 0; i < n; i++) {
		long p = ps_part(s, keys[i]);

		if (p < 0)
			return (int)p;
	}
	if (n && !(need = calloc(s->nopen, sizeof(*need))))
		return sc__fail(SC_ENOMEM, "partsink: out of memory");
	for (size_t i = 0; i < n; i++) {
		need[ps_part(s, keys[i])] += ends[i] - at;
		at = ends[i];
	}
	for (size_t i = 0; i < s->nopen && !rc && n; i++)
		rc = ps_reserve(&s->open[i], need[i]);
	free(need);
	at = 0;
	for (size_t i = 0; i < n && !rc; i++) {
		struct ps_part *p = &s->open[ps_part(s, keys[i])];

		memcpy(p->buf + p->len, text + at, ends[i] - at);
		p->len += ends[i] - at;
		at = ends[i];
	}
	return rc;
}

int
sc_partsink_write(struct sc_partsink *s, const struct sc_batch *delta,
		  const void *source, int64_t waterline)
{
	size_t n = delta ? sc_batch_count(delta) : 0, k;
	struct ps_scratch *x;
	int rc;

	if (!s || !source)
		return sc__fail(SC_EINVAL,
				"sc_partsink_write: NULL sink or source");
	if (n && sc_batch_ncols(delta) != s->schema->ncols)
		return sc__fail(SC_EINVAL,
				"sc_partsink_write: rows of %u columns, the "
				"sink's have %u",
				sc_batch_ncols(delta), s->schema->ncols);
	pthread_mutex_lock(&s->lock);
	rc = ps_source(s, source, &k);
	x = rc ? NULL : s->src[k].scratch;
	pthread_mutex_unlock(&s->lock);
	/* the text is made outside the lock: replicas format at once */
	if (rc || (n && (rc = ps_format(s, delta, x)) != 0))
		return rc;
	pthread_mutex_lock(&s->lock);
	rc = ps_take(s, n, x->keys, x->ends, x->text);
	if (!rc) {
		s->st.rows += n;
		for (k = 0; s->src[k].id != source; k++)
			;
		if (waterline > s->src[k].waterline)
			s->src[k].waterline = waterline;
		for (size_t i = 0; i < s->nopen && !rc; i++)
			if (s->open[i].len >= SC_PARTSINK_FLUSH)
				rc = ps_spill(s, &s->open[i]);
		if (!rc)
			rc = ps_close_passed(s);
	}
	pthread_mutex_unlock(&s->lock);
	return rc;
}

int
sc_partsink_finish(struct sc_partsink *s)
{
	int rc = 0;

	if (!s)
		return sc__fail(SC_EINVAL, "sc_partsink_finish: sink is NULL");
	pthread_mutex_lock(&s->lock);
	while (s->nopen && !rc)
		rc = ps_commit(s, 0);
	pthread_mutex_unlock(&s->lock);
	return rc;
}

void
sc_partsink_stats(struct sc_partsink *s, struct sc_partsink_stats *out)
{
	if (!out)
		return;
	memset(out, 0, sizeof(*out));
	if (!s)
		return;
	pthread_mutex_lock(&s->lock);
	*out = s->st;
	pthread_mutex_unlock(&s->lock);
}

void
sc_partsink_destroy(struct sc_partsink *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->nopen; i++) {
		char folder[PS_PATH_MAX], tmp[PS_PATH_MAX];

		if (s->open[i].spilled &&
		    ps_folder(s, s->open[i].key, folder, false) == 0 &&
		    ps_file(folder, &s->open[i], true, 0, tmp) == 0)
			(void)unlink(tmp);
		free(s->open[i].buf);
	}
	free(s->open);
	free(s->closed);
	for (size_t i = 0; i < s->nsrc; i++) {
		free(s->src[i].scratch->text);
		free(s->src[i].scratch->keys);
		free(s->src[i].scratch->ends);
		free(s->src[i].scratch);
	}
	free(s->src);
	free(s->dir);
	free(s->format);
	(void)pthread_mutex_destroy(&s->lock);
	free(s);
}

/*
 * test_partsink.c - the partitioned CSV sink (bench/workloads/partsink.h).
 *
 * A seeded property test writes random deltas from several sources, each
 * under a waterline that only rises, and checks after every write that
 * exactly the partitions every source has passed are committed, each
 * holding its rows, and at the end that every row is in its partition's
 * files and no temporary file is left. The other tests: a partition opened
 * again by a late row, a partition spilled to its temporary file and
 * dropped by destroy, partitions that share a folder, a table of bad
 * options, and disk errors that lose no row.
 */
#define _GNU_SOURCE /* nftw, mkdtemp */
#include <criterion/criterion.h>
#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bench/workloads/partsink.h"
#include "operators/error.h"
#include "operators/symbol.h"
#include "operators/waterline.h"
#include "tests/support/prop.h"

/* The rows: (t, v, s), t the time, s a text with a comma (quoted). */
static const char *const cols[3] = {"t", "v", "s"};

struct fx {
	char root[64];
	struct sc_symtab *sym;
	uint64_t text; /* "a,b" */
	struct sc_schema schema;
};

static void
fx_init(struct fx *f)
{
	static const enum sc_type t[3] = {SC_TYPE_I64, SC_TYPE_I64,
					  SC_TYPE_SYMBOL};

	(void)snprintf(f->root, sizeof(f->root), "/tmp/partsink-XXXXXX");
	cr_assert_not_null(mkdtemp(f->root));
	cr_assert_eq(sc_symtab_create(&f->sym), 0);
	cr_assert_eq(sc_symtab_intern_cstr(f->sym, "a,b", &f->text), 0);
	cr_assert_eq(sc_schema_init(&f->schema, 3, t, f->sym), 0);
}

static int
rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static void
fx_fini(struct fx *f)
{
	(void)nftw(f->root, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	sc_symtab_release(f->sym, f->text);
	sc_symtab_destroy(f->sym);
}

static struct sc_partsink_opts
opts(struct fx *f, const char *dir, int64_t width, const char *format,
     uint32_t sources)
{
	struct sc_partsink_opts o = {.dir = dir,
				     .schema = &f->schema,
				     .cols = cols,
				     .time_col = 0,
				     .width_ms = width,
				     .format = format,
				     .sources = sources};

	return o;
}

/* A batch of n rows (t[i], v[i], "a,b") of weights w[i]. */
static struct sc_batch *
rows(const struct fx *f, const int64_t *t, const int64_t *v, const int64_t *w,
     size_t n)
{
	uint64_t words[3 * 256];
	struct sc_batch *b = NULL;

	cr_assert_leq(n, 256);
	for (size_t i = 0; i < n; i++) {
		words[3 * i] = sc_enc_i64(t[i]);
		words[3 * i + 1] = sc_enc_i64(v[i]);
		words[3 * i + 2] = sc_enc_symbol(f->text);
	}
	cr_assert_eq(sc_batch_from_records(3, words, w, n, &b), 0, "%s",
		     sc_errmsg());
	return b;
}

/* The text of a file (NULL: none), which the caller frees. */
static char *
slurp(const char *path)
{
	FILE *fp = fopen(path, "r");
	char *buf = NULL;
	size_t cap = 0, len = 0, got;

	if (!fp)
		return NULL;
	do {
		if (len + 4096 > cap) {
			cap = cap ? 2 * cap : 8192;
			buf = realloc(buf, cap);
			cr_assert_not_null(buf);
		}
		got = fread(buf + len, 1, cap - len - 1, fp);
		len += got;
	} while (got);
	buf[len] = '\0';
	(void)fclose(fp);
	return buf;
}

/* How many files under root have a name starting with `prefix`. */
static size_t count_prefix;
static const char *count_what;

static int
count_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	if (flag == FTW_F &&
	    !strncmp(path + ftw->base, count_what, strlen(count_what)))
		count_prefix++;
	return 0;
}

static size_t
count_files(const char *root, const char *prefix)
{
	count_prefix = 0;
	count_what = prefix;
	cr_assert_eq(nftw(root, count_one, 16, FTW_PHYS), 0);
	return count_prefix;
}

/* --- the property --------------------------------------------------------- */

#define P_KEYS 64 /* partitions the model tracks: keys -8 .. 55 */
#define P_KEY0 (-8)

/* The model: per partition the CSV lines of its rows, their count, and
 * whether it should be committed. */
struct model {
	char *lines[P_KEYS]; /* the expected CSV lines, '\n'-joined */
	size_t len[P_KEYS], n[P_KEYS];
	bool committed[P_KEYS];
};

static int64_t
floor_div(int64_t a, int64_t b)
{
	return a / b - (a % b < 0);
}

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorted lines of text (the header dropped), '\n'-joined, for comparing
 * bags of lines. */
static char *
sorted_lines(const char *text, bool drop_header)
{
	char *copy = strdup(text), *save = NULL, *line, *out;
	char **v = NULL;
	size_t n = 0, cap = 0, total = 1;

	cr_assert_not_null(copy);
	for (line = strtok_r(copy, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		if (drop_header) {
			drop_header = false;
			continue;
		}
		if (n == cap) {
			cap = cap ? 2 * cap : 64;
			v = realloc(v, cap * sizeof(*v));
			cr_assert_not_null(v);
		}
		v[n++] = line;
		total += strlen(line) + 1;
	}
	if (n)
		qsort(v, n, sizeof(*v), cmp_str);
	out = calloc(1, total);
	cr_assert_not_null(out);
	for (size_t i = 0; i < n; i++) {
		strcat(out, v[i]);
		strcat(out, "\n");
	}
	free(v);
	free(copy);
	return out;
}

/* Check partition key k's file against the model. */
static void
check_partition(const struct fx *f, const struct model *m, int64_t k,
		int64_t width, uint64_t seed)
{
	size_t i = (size_t)(k - P_KEY0);
	char path[512], *got, *g, *want;
	int64_t ms = k * width;
	time_t t = (time_t)floor_div(ms, 1000);
	struct tm tm;
	char folder[64];

	cr_assert_not_null(gmtime_r(&t, &tm));
	(void)strftime(folder, sizeof(folder), "%Y/%m%d-%H%M%S", &tm);
	(void)snprintf(path, sizeof(path), "%s/%s/part-0.csv", f->root, folder);
	got = slurp(path);
	SC_PROP_ASSERT(seed, "partsink",
		       "committed_partitions_are_those_every_source_passed",
		       (got != NULL) == m->committed[i],
		       "partition %lld: committed %d, file %s", (long long)k,
		       m->committed[i], got ? "exists" : "absent");
	if (!got)
		return;
	SC_PROP_ASSERT(seed, "partsink",
		       "committed_partitions_are_those_every_source_passed",
		       !strncmp(got, "t,v,s,weight\n", 13), "header: %.40s",
		       got);
	g = sorted_lines(got, true);
	want = sorted_lines(m->lines[i] ? m->lines[i] : "", false);
	SC_PROP_ASSERT(seed, "partsink",
		       "committed_partitions_are_those_every_source_passed",
		       !strcmp(g, want), "partition %lld:\n%s\nwant\n%s",
		       (long long)k, g, want);
	free(g);
	free(want);
	free(got);
}

Test(partsink, committed_partitions_are_those_every_source_passed)
{
	uint64_t base = sc_prop_seed(0x9a27), cases = sc_prop_count(12);

	for (uint64_t c = 0; c < cases; c++) {
		uint64_t seed = base + c;
		struct sc_rng r;
		struct fx f;
		struct model m;
		struct sc_partsink *s = NULL;
		struct sc_partsink_opts o;
		struct sc_partsink_stats st;
		uint32_t nsrc;
		int64_t width, wl[3], low = SC_WATERLINE_NONE, next_v = 0;
		bool reported[3] = {false, false, false};
		uint64_t parts = 0, total = 0;

		sc_rng_seed(&r, seed);
		fx_init(&f);
		memset(&m, 0, sizeof(m));
		nsrc = 1 + (uint32_t)sc_rng_below(&r, 3);
		width = 1000 * sc_rng_range(&r, 1, 3);
		o = opts(&f, f.root, width, "%Y/%m%d-%H%M%S", nsrc);
		cr_assert_eq(sc_partsink_create(&o, &s), 0, "%s", sc_errmsg());
		for (uint32_t i = 0; i < nsrc; i++)
			wl[i] = P_KEY0 * width + sc_rng_range(&r, 0, 3000);
		for (int step = 0; step < 40; step++) {
			uint32_t src = (uint32_t)sc_rng_below(&r, nsrc);
			size_t n = (size_t)sc_rng_below(&r, 30), k = 0;
			int64_t t[32], v[32], w[32];
			struct sc_batch *b;

			/* distinct rows at or above the source's waterline,
			 * which then rises (or stays) */
			for (size_t i = 0; i < n; i++) {
				int64_t tt =
				    wl[src] + sc_rng_range(&r, 0, 4000);
				int64_t key = floor_div(tt, width);
				size_t at;
				char line[96];
				int len;

				if (key >= P_KEY0 + P_KEYS)
					continue;
				t[k] = tt;
				v[k] = next_v++;
				w[k] = sc_rng_range(&r, 1, 3) *
				       (sc_rng_below(&r, 4) ? 1 : -1);
				at = (size_t)(key - P_KEY0);
				len = snprintf(line, sizeof(line),
					       "%lld,%lld,\"a,b\",%lld\n",
					       (long long)t[k], (long long)v[k],
					       (long long)w[k]);
				m.lines[at] = realloc(
				    m.lines[at], m.len[at] + (size_t)len + 1);
				cr_assert_not_null(m.lines[at]);
				memcpy(m.lines[at] + m.len[at], line,
				       (size_t)len + 1);
				m.len[at] += (size_t)len;
				parts += m.n[at]++ == 0;
				k++;
			}
			total += k;
			b = k ? rows(&f, t, v, w, k) : NULL;
			wl[src] += sc_rng_range(&r, 0, 2500);
			reported[src] = true;
			cr_assert_eq(sc_partsink_write(s, b, &wl[src], wl[src]),
				     0, "%s", sc_errmsg());
			sc_batch_release(b);
			low = INT64_MAX;
			for (uint32_t i = 0;
			     i < nsrc && low != SC_WATERLINE_NONE; i++)
				low = !reported[i]  ? SC_WATERLINE_NONE
				      : wl[i] < low ? wl[i]
						    : low;
			for (int64_t key = P_KEY0; key < P_KEY0 + P_KEYS;
			     key++) {
				size_t at = (size_t)(key - P_KEY0);

				m.committed[at] = m.n[at] &&
						  low != SC_WATERLINE_NONE &&
						  (key + 1) * width <= low;
				check_partition(&f, &m, key, width, seed);
			}
		}
		sc_partsink_stats(s, &st);
		SC_PROP_ASSERT(seed, "partsink",
			       "committed_partitions_are_those_every_source_"
			       "passed",
			       st.waterline == low && st.rows == total,
			       "stats: waterline %lld (want %lld), rows %llu "
			       "(want %llu)",
			       (long long)st.waterline, (long long)low,
			       (unsigned long long)st.rows,
			       (unsigned long long)total);
		cr_assert_eq(sc_partsink_finish(s), 0, "%s", sc_errmsg());
		for (int64_t key = P_KEY0; key < P_KEY0 + P_KEYS; key++) {
			m.committed[key - P_KEY0] = m.n[key - P_KEY0] > 0;
			check_partition(&f, &m, key, width, seed);
		}
		cr_assert_eq(count_files(f.root, ".part-"), 0,
			     "no temporary file is left");
		cr_assert_eq(count_files(f.root, "part-"), parts);
		sc_partsink_stats(s, &st);
		cr_assert_eq(st.committed, parts);
		cr_assert_eq(st.open, 0);
		sc_partsink_destroy(s);
		for (size_t i = 0; i < P_KEYS; i++)
			free(m.lines[i]);
		fx_fini(&f);
	}
}

/* --- one behaviour each ----------------------------------------------------
 */

/* A row for a committed partition (a late row admitted) opens it again,
 * committed as the next file: the first is never touched. */
Test(partsink, a_late_row_opens_its_partition_again_as_the_next_file)
{
	struct fx f;
	struct sc_partsink *s = NULL;
	struct sc_partsink_opts o;
	struct sc_partsink_stats st;
	int64_t t1[] = {5000, 6000}, v1[] = {1, 2}, t2[] = {7000}, v2[] = {3};
	struct sc_batch *b1, *b2;
	char path[256], *first, *again;
	int src;

	fx_init(&f);
	o = opts(&f, f.root, 10000, "p%H%M%S", 1);
	cr_assert_eq(sc_partsink_create(&o, &s), 0, "%s", sc_errmsg());
	b1 = rows(&f, t1, v1, NULL, 2);
	b2 = rows(&f, t2, v2, NULL, 1);
	cr_assert_eq(sc_partsink_write(s, b1, &src, 20000), 0);
	(void)snprintf(path, sizeof(path), "%s/p000000/part-0.csv", f.root);
	first = slurp(path);
	cr_assert_not_null(first, "committed: its end 10000 <= 20000");
	cr_assert_str_eq(first, "t,v,s,weight\n5000,1,\"a,b\",1\n"
				"6000,2,\"a,b\",1\n");
	cr_assert_eq(sc_partsink_write(s, b2, &src, 20000), 0);
	sc_partsink_stats(s, &st);
	cr_assert_eq(st.reopened, 1);
	cr_assert_eq(st.open, 0, "closed again at once: still passed");
	cr_assert_eq(sc_partsink_finish(s), 0, "%s", sc_errmsg());
	again = slurp(path);
	cr_assert_str_eq(again, first, "a committed file never changes");
	(void)snprintf(path, sizeof(path), "%s/p000000/part-1.csv", f.root);
	free(again);
	again = slurp(path);
	cr_assert_not_null(again);
	cr_assert_str_eq(again, "t,v,s,weight\n7000,3,\"a,b\",1\n");
	sc_partsink_stats(s, &st);
	cr_assert_eq(st.committed, 2);
	free(first);
	free(again);
	sc_batch_release(b1);
	sc_batch_release(b2);
	sc_partsink_destroy(s);
	fx_fini(&f);
}

/* Partitions whose folder is the same (a format coarser than the width)
 * each get a file of their own, and an earlier run's file stays. */
Test(partsink, partitions_sharing_a_folder_never_replace_a_file)
{
	struct fx f;
	struct sc_partsink *s = NULL;
	struct sc_partsink_opts o;
	int64_t t[] = {1000, 2000, 3000}, v[] = {1, 2, 3};
	struct sc_batch *b;
	char path[256], *text;
	FILE *old;
	int src;

	fx_init(&f);
	(void)snprintf(path, sizeof(path), "%s/1970", f.root);
	cr_assert_eq(mkdir(path, 0777), 0);
	(void)snprintf(path, sizeof(path), "%s/1970/part-0.csv", f.root);
	cr_assert_not_null(old = fopen(path, "w"));
	(void)fputs("an earlier run's\n", old);
	cr_assert_eq(fclose(old), 0);
	o = opts(&f, f.root, 1000, "%Y", 1);
	cr_assert_eq(sc_partsink_create(&o, &s), 0, "%s", sc_errmsg());
	b = rows(&f, t, v, NULL, 3);
	cr_assert_eq(sc_partsink_write(s, b, &src, SC_WATERLINE_NONE), 0);
	cr_assert_eq(sc_partsink_finish(s), 0, "%s", sc_errmsg());
	cr_assert_eq(count_files(f.root, "part-"), 4);
	text = slurp(path);
	cr_assert_str_eq(text, "an earlier run's\n");
	free(text);
	for (int i = 1; i <= 3; i++) {
		char want[64];

		(void)snprintf(path, sizeof(path), "%s/1970/part-%d.csv",
			       f.root, i);
		(void)snprintf(want, sizeof(want),
			       "t,v,s,weight\n%d000,%d,\"a,b\",1\n", i, i);
		text = slurp(path);
		cr_assert_not_null(text, "%s", path);
		cr_assert_str_eq(text, want);
		free(text);
	}
	sc_batch_release(b);
	sc_partsink_destroy(s);
	fx_fini(&f);
}

/* Past SC_PARTSINK_FLUSH bytes a partition goes to its temporary file;
 * destroy without finish commits nothing and leaves no temporary file. */
Test(partsink, a_spilled_partition_not_finished_leaves_nothing)
{
	struct fx f;
	struct sc_partsink *s = NULL;
	struct sc_partsink_opts o;
	int64_t t[256], v[256];
	int src;

	fx_init(&f);
	o = opts(&f, f.root, 60000, "%H%M", 1);
	cr_assert_eq(sc_partsink_create(&o, &s), 0, "%s", sc_errmsg());
	for (int round = 0; round < 20; round++) {
		struct sc_batch *b;

		for (int i = 0; i < 256; i++) {
			t[i] = i;
			v[i] = round * 256 + i;
		}
		b = rows(&f, t, v, NULL, 256);
		cr_assert_eq(sc_partsink_write(s, b, &src, SC_WATERLINE_NONE),
			     0);
		sc_batch_release(b);
	}
	cr_assert_eq(count_files(f.root, ".part-"), 1, "spilled");
	cr_assert_eq(count_files(f.root, "part-"), 0, "not committed");
	sc_partsink_destroy(s);
	cr_assert_eq(count_files(f.root, ".part-"), 0, "removed");
	fx_fini(&f);
}

/* Every bad option: SC_EINVAL, a message that names it, no sink. */
Test(partsink, bad_options_are_refused_by_name)
{
	struct fx f;
	struct {
		const char *why;
		int what; /* which field is bad */
		const char *msg;
	} cases[] = {
	    {"NULL options", 0, "NULL options"},
	    {"NULL dir", 1, "NULL options, dir"},
	    {"NULL schema", 2, "NULL options, dir, schema"},
	    {"NULL cols", 3, "cols"},
	    {"NULL format", 4, "format"},
	    {"time column past the schema", 5, "time column 3"},
	    {"time column of text", 6, "time column 2 is not an i64"},
	    {"width 0", 7, "width 0 ms"},
	    {"width < 0", 8, "width -1000 ms"},
	    {"no source", 9, "sources is 0"},
	    {"empty format", 10, "format ''"},
	    {"absolute format", 11, "format '/x'"},
	    {"format with ..", 12, "format 'a/../b'"},
	};

	fx_init(&f);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct sc_partsink_opts o = opts(&f, f.root, 1000, "%Y", 1);
		struct sc_partsink *s = (struct sc_partsink *)&o;

		switch (cases[i].what) {
		case 1:
			o.dir = NULL;
			break;
		case 2:
			o.schema = NULL;
			break;
		case 3:
			o.cols = NULL;
			break;
		case 4:
			o.format = NULL;
			break;
		case 5:
			o.time_col = 3;
			break;
		case 6:
			o.time_col = 2;
			break;
		case 7:
			o.width_ms = 0;
			break;
		case 8:
			o.width_ms = -1000;
			break;
		case 9:
			o.sources = 0;
			break;
		case 10:
			o.format = "";
			break;
		case 11:
			o.format = "/x";
			break;
		case 12:
			o.format = "a/../b";
			break;
		default:
			break;
		}
		cr_assert_eq(sc_partsink_create(cases[i].what ? &o : NULL, &s),
			     SC_EINVAL, "%s", cases[i].why);
		cr_assert_null(s, "%s: no sink", cases[i].why);
		cr_assert(strstr(sc_errmsg(), cases[i].msg), "%s: %s",
			  cases[i].why, sc_errmsg());
	}
	cr_assert_eq(sc_partsink_create(NULL, NULL), SC_EINVAL);
	fx_fini(&f);
}

/* A write with a bad argument takes nothing. */
Test(partsink, a_bad_write_takes_nothing)
{
	struct fx f;
	struct sc_partsink *s = NULL;
	struct sc_partsink_opts o;
	struct sc_partsink_stats st;
	int64_t t[] = {1}, v[] = {1};
	uint64_t narrow[2] = {sc_enc_i64(1), sc_enc_i64(2)};
	struct sc_batch *b, *b2 = NULL;
	int src;

	fx_init(&f);
	o = opts(&f, f.root, 1000, "%Y", 1);
	cr_assert_eq(sc_partsink_create(&o, &s), 0);
	b = rows(&f, t, v, NULL, 1);
	cr_assert_eq(sc_batch_from_records(2, narrow, NULL, 1, &b2), 0);
	cr_assert_eq(sc_partsink_write(NULL, b, &src, 0), SC_EINVAL);
	cr_assert_eq(sc_partsink_write(s, b, NULL, 0), SC_EINVAL);
	cr_assert(strstr(sc_errmsg(), "NULL sink or source"), "%s",
		  sc_errmsg());
	cr_assert_eq(sc_partsink_write(s, b2, &src, 0), SC_EINVAL);
	cr_assert(strstr(sc_errmsg(), "rows of 2 columns, the sink's have 3"),
		  "%s", sc_errmsg());
	sc_partsink_stats(s, &st);
	cr_assert_eq(st.rows, 0);
	cr_assert_eq(st.open, 0);
	cr_assert_eq(sc_partsink_finish(NULL), SC_EINVAL);
	sc_partsink_stats(NULL, &st);
	cr_assert_eq(st.rows, 0);
	sc_batch_release(b);
	sc_batch_release(b2);
	sc_partsink_destroy(s);
	sc_partsink_destroy(NULL);
	fx_fini(&f);
}

/* A root that cannot be made is SC_EIO naming it; a partition folder that
 * cannot be made fails the commit with SC_EIO naming it, keeping the
 * rows, which a later finish commits once the way is clear. */
Test(partsink, disk_errors_are_named_and_lose_no_row)
{
	struct fx f;
	struct sc_partsink *s = NULL;
	struct sc_partsink_opts o;
	struct sc_partsink_stats st;
	int64_t t[] = {1000, 2000}, v[] = {1, 2};
	struct sc_batch *b;
	char file[256], dir[300], *text;
	FILE *fp;
	int src;

	fx_init(&f);
	(void)snprintf(file, sizeof(file), "%s/1970", f.root);
	cr_assert_not_null(fp = fopen(file, "w"));
	cr_assert_eq(fclose(fp), 0);
	(void)snprintf(dir, sizeof(dir), "%s/sub", file);
	o = opts(&f, dir, 1000, "%Y", 1);
	cr_assert_eq(sc_partsink_create(&o, &s), SC_EIO);
	cr_assert_null(s);
	cr_assert(strstr(sc_errmsg(), "cannot make the folder") &&
		      strstr(sc_errmsg(), file),
		  "%s", sc_errmsg());
	o = opts(&f, f.root, 1000, "%Y/%H%M%S", 1);
	cr_assert_eq(sc_partsink_create(&o, &s), 0, "%s", sc_errmsg());
	b = rows(&f, t, v, NULL, 2);
	cr_assert_eq(sc_partsink_write(s, b, &src, SC_WATERLINE_NONE), 0);
	cr_assert_eq(sc_partsink_finish(s), SC_EIO);
	cr_assert(strstr(sc_errmsg(), file), "%s", sc_errmsg());
	sc_partsink_stats(s, &st);
	cr_assert_eq(st.open, 2, "kept");
	cr_assert_eq(unlink(file), 0);
	cr_assert_eq(sc_partsink_finish(s), 0, "%s", sc_errmsg());
	(void)snprintf(dir, sizeof(dir), "%s/1970/000002/part-0.csv", f.root);
	text = slurp(dir);
	cr_assert_not_null(text);
	cr_assert_str_eq(text, "t,v,s,weight\n2000,2,\"a,b\",1\n");
	free(text);
	sc_partsink_stats(s, &st);
	cr_assert_eq(st.committed, 2);
	cr_assert_eq(st.rows, 2);
	sc_batch_release(b);
	sc_partsink_destroy(s);
	fx_fini(&f);
}

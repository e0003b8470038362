/*
 * test_timeline.c - the timeline (runtime/timeline.h): what is recorded is
 * what is written, as JSON in the trace event format, one track per
 * recording thread, slices on a track never overlapping; a full track and
 * a thread beyond the tracks drop and count; off records nothing; bad
 * arguments are refused by name. Threaded cases run under Criterion's
 * timeout (no executor to watch) and as tests/runtime/tsan_timeline.c.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "operators/base.h"
#include "operators/error.h"
#include "runtime/timeline.h"
#include "tests/support/rt_json.h"

/* Write tl to a temporary file and parse it back. */
static struct tj *
written(const struct sc_timeline *tl)
{
	char path[] = "/tmp/sc_timeline_XXXXXX", err[200];
	int fd = mkstemp(path);
	FILE *f;
	struct tj *v;

	cr_assert_geq(fd, 0);
	f = fdopen(fd, "w");
	cr_assert_not_null(f);
	cr_assert_eq(sc_timeline_write(tl, f), 0, "%s", sc_errmsg());
	cr_assert_eq(fclose(f), 0);
	v = tj_parse_file(path, err, sizeof(err));
	cr_assert_not_null(v, "the trace is not JSON: %s", err);
	(void)remove(path);
	return v;
}

static const struct tj *
events(const struct tj *doc)
{
	const struct tj *ev = tj_get(doc, "traceEvents");

	cr_assert_not_null(ev);
	cr_assert_eq(ev->kind, TJ_ARR);
	return ev;
}

static const char *
str_of(const struct tj *o, const char *key)
{
	const struct tj *v = tj_get(o, key);

	return v && v->kind == TJ_STR ? v->str : "";
}

static double
num_of(const struct tj *o, const char *key)
{
	const struct tj *v = tj_get(o, key);

	cr_assert(v && v->kind == TJ_NUM, "no number '%s'", key);
	return v->num;
}

static size_t
count_ph(const struct tj *ev, const char *ph)
{
	size_t n = 0;

	for (size_t i = 0; i < ev->n; i++)
		n += !strcmp(str_of(&ev->items[i], "ph"), ph);
	return n;
}

Test(timeline, slices_and_samples_are_written_as_trace_events)
{
	struct sc_timeline *tl;
	struct sc_timeline_info info;
	struct sc_timeline_slice s = {0};
	const struct tj *ev, *x = NULL, *c = NULL;
	struct tj *doc;
	uint64_t t0;

	cr_assert_eq(sc_timeline_create(NULL, &tl), 0, "%s", sc_errmsg());
	cr_assert_eq(sc_timeline_name(tl, SC_TIMELINE_UNIT, 3, "u3 \"agg\""),
		     0);
	cr_assert_eq(sc_timeline_name(tl, SC_TIMELINE_COUNTER, 0, "edge fill"),
		     0);
	cr_assert_eq(sc_timeline_start(tl), 0);
	t0 = sc_clock_ns();
	s = (struct sc_timeline_slice){t0 + 1000, t0 + 3500, 3, 2, 1, 40,
				       7,	  NULL,	     0, 0, 0};
	sc_timeline_slice(tl, &s);
	sc_timeline_sample(tl, 0, t0 + 2000, -5);
	cr_assert_eq(sc_timeline_info(tl, &info), 0);
	cr_assert_eq(info.slices, 1);
	cr_assert_eq(info.samples, 1);
	cr_assert_eq(info.tracks_used, 1);
	cr_assert_eq(info.dropped, 0);
	doc = written(tl);
	ev = events(doc);
	for (size_t i = 0; i < ev->n; i++) {
		if (!strcmp(str_of(&ev->items[i], "ph"), "X"))
			x = &ev->items[i];
		if (!strcmp(str_of(&ev->items[i], "ph"), "C"))
			c = &ev->items[i];
	}
	cr_assert_not_null(x, "a complete event per slice");
	cr_assert_str_eq(str_of(x, "name"), "u3 \"agg\"",
			 "named after its unit");
	cr_assert_float_eq(num_of(x, "dur"), 2.5, 1e-9, "2500 ns is 2.5 us");
	cr_assert_eq(num_of(tj_get(x, "args"), "frames_in"), 2);
	cr_assert_eq(num_of(tj_get(x, "args"), "rows_in"), 40);
	cr_assert_eq(num_of(tj_get(x, "args"), "frames_out"), 1);
	cr_assert_eq(num_of(tj_get(x, "args"), "rows_out"), 7);
	cr_assert_not_null(c, "a counter event per sample");
	cr_assert_str_eq(str_of(c, "name"), "edge fill");
	cr_assert_eq(num_of(tj_get(c, "args"), "value"), -5);
	cr_assert_geq(num_of(c, "ts"), 0);
	cr_assert_eq(count_ph(ev, "M"), 2, "process and one thread name");
	tj_free(doc);
	free(doc);
	sc_timeline_destroy(tl);
}

Test(timeline, records_nothing_while_off)
{
	struct sc_timeline *tl;
	struct sc_timeline_info info;
	struct sc_timeline_slice s = {1, 2, 0, 0, 0, 0, 0, NULL, 0, 0, 0};

	cr_assert_eq(sc_timeline_create(NULL, &tl), 0);
	sc_timeline_slice(tl, &s);
	cr_assert_eq(sc_timeline_start(tl), 0);
	cr_assert(sc_timeline_on(tl));
	sc_timeline_slice(tl, &s);
	cr_assert_eq(sc_timeline_stop(tl), 0);
	sc_timeline_slice(tl, &s);
	sc_timeline_sample(tl, 0, 5, 5);
	cr_assert_eq(sc_timeline_info(tl, &info), 0);
	cr_assert_eq(info.slices, 1, "only the slice made while on");
	cr_assert_eq(info.samples, 0);
	cr_assert_eq(info.dropped, 0, "off is not dropped");
	cr_assert(!info.on);
	sc_timeline_destroy(tl);
}

Test(timeline, a_full_track_drops_and_counts)
{
	struct sc_timeline_opts o = {.tracks = 1, .records_per_track = 4};
	struct sc_timeline *tl;
	struct sc_timeline_info info;
	struct sc_timeline_slice s = {1, 2, 0, 0, 0, 0, 0, NULL, 0, 0, 0};
	struct tj *doc;

	cr_assert_eq(sc_timeline_create(&o, &tl), 0);
	cr_assert_eq(sc_timeline_start(tl), 0);
	for (int i = 0; i < 10; i++)
		sc_timeline_slice(tl, &s);
	cr_assert_eq(sc_timeline_info(tl, &info), 0);
	cr_assert_eq(info.slices, 4);
	cr_assert_eq(info.dropped, 6);
	doc = written(tl);
	cr_assert_eq(count_ph(events(doc), "X"), 4);
	cr_assert_eq(num_of(tj_get(doc, "otherData"), "dropped"), 6,
		     "the trace says what it lost");
	tj_free(doc);
	free(doc);
	sc_timeline_destroy(tl);
}

struct worker {
	struct sc_timeline *tl;
	uint32_t unit;
	int n;
	char name[16];
};

static void *
record_turns(void *arg)
{
	struct worker *w = arg;

	(void)pthread_setname_np(pthread_self(), w->name);
	for (int i = 0; i < w->n; i++) {
		struct sc_timeline_slice s = {0};

		s.start_ns = sc_clock_ns();
		s.unit = w->unit;
		s.rows_in = (uint64_t)i;
		s.end_ns = sc_clock_ns();
		sc_timeline_slice(w->tl, &s);
		if (i % 16 == 0)
			sc_timeline_sample(w->tl, w->unit, s.end_ns, i);
	}
	return NULL;
}

/* Slices of each tid in the order written: each starts at or after the
 * previous one's end (ts + dur), compared in ns to dodge rounding. */
static void
check_tracks(const struct tj *ev, size_t want_tracks, size_t want_slices)
{
	double last_end[64];
	bool named[64] = {false};
	size_t tracks = 0, slices = 0;

	for (size_t i = 0; i < 64; i++)
		last_end[i] = -1;
	for (size_t i = 0; i < ev->n; i++) {
		const struct tj *e = &ev->items[i];
		const char *ph = str_of(e, "ph");
		int tid;

		if (strcmp(ph, "X") != 0 && strcmp(ph, "M") != 0)
			continue;
		if (!tj_get(e, "tid"))
			continue; /* the process name */
		tid = (int)num_of(e, "tid");
		cr_assert(tid >= 0 && tid < 64);
		if (!strcmp(ph, "M")) {
			cr_assert(!named[tid], "tid %d named twice", tid);
			named[tid] = true;
			tracks++;
			continue;
		}
		cr_assert(named[tid], "slice on an unnamed tid %d", tid);
		cr_assert_geq(num_of(e, "ts") * 1000 + 0.5, last_end[tid],
			      "slices overlap on tid %d", tid);
		last_end[tid] = (num_of(e, "ts") + num_of(e, "dur")) * 1000;
		slices++;
	}
	cr_assert_eq(tracks, want_tracks);
	cr_assert_eq(slices, want_slices);
}

Test(timeline, each_thread_gets_a_track_and_its_slices_never_overlap,
     .timeout = 30)
{
	struct sc_timeline *tl;
	struct worker w[4];
	pthread_t th[4];
	struct sc_timeline_info info;
	struct tj *doc;
	const struct tj *ev;
	bool seen_name = false;

	cr_assert_eq(sc_timeline_create(NULL, &tl), 0);
	cr_assert_eq(sc_timeline_start(tl), 0);
	for (int i = 0; i < 4; i++) {
		w[i] = (struct worker){tl, (uint32_t)i, 5000, ""};
		(void)snprintf(w[i].name, sizeof(w[i].name), "sc-test-%d", i);
		cr_assert_eq(pthread_create(&th[i], NULL, record_turns, &w[i]),
			     0);
	}
	/* Written while the threads record: every record seen is whole. */
	doc = written(tl);
	tj_free(doc);
	free(doc);
	for (int i = 0; i < 4; i++)
		cr_assert_eq(pthread_join(th[i], NULL), 0);
	cr_assert_eq(sc_timeline_info(tl, &info), 0);
	cr_assert_eq(info.slices, 20000);
	cr_assert_eq(info.tracks_used, 4);
	doc = written(tl);
	ev = events(doc);
	check_tracks(ev, 4, 20000);
	for (size_t i = 0; i < ev->n; i++) {
		const struct tj *a = tj_get(&ev->items[i], "args");

		if (!strcmp(str_of(&ev->items[i], "name"), "thread_name") &&
		    !strncmp(str_of(a, "name"), "sc-test-", 8))
			seen_name = true;
	}
	cr_assert(seen_name, "tracks are named after their threads");
	tj_free(doc);
	free(doc);
	sc_timeline_destroy(tl);
}

Test(timeline, a_thread_beyond_the_tracks_drops_and_counts, .timeout = 30)
{
	struct sc_timeline_opts o = {.tracks = 1};
	struct sc_timeline *tl;
	struct worker w = {NULL, 1, 10, "sc-extra"};
	struct sc_timeline_slice s = {1, 2, 0, 0, 0, 0, 0, NULL, 0, 0, 0};
	struct sc_timeline_info info;
	pthread_t th;

	cr_assert_eq(sc_timeline_create(&o, &tl), 0);
	cr_assert_eq(sc_timeline_start(tl), 0);
	sc_timeline_slice(tl, &s); /* this thread takes the one track */
	w.tl = tl;
	cr_assert_eq(pthread_create(&th, NULL, record_turns, &w), 0);
	cr_assert_eq(pthread_join(th, NULL), 0);
	cr_assert_eq(sc_timeline_info(tl, &info), 0);
	cr_assert_eq(info.slices, 1);
	cr_assert_eq(info.tracks_used, 1);
	cr_assert_eq(info.dropped, 11, "10 slices and 1 sample");
	sc_timeline_destroy(tl);
}

Test(timeline, a_new_timeline_never_reuses_a_stale_track)
{
	struct sc_timeline *a, *b;
	struct sc_timeline_slice s = {1, 2, 0, 0, 0, 0, 0, NULL, 0, 0, 0};
	struct sc_timeline_info info;

	cr_assert_eq(sc_timeline_create(NULL, &a), 0);
	cr_assert_eq(sc_timeline_start(a), 0);
	sc_timeline_slice(a, &s);
	sc_timeline_destroy(a);
	cr_assert_eq(sc_timeline_create(NULL, &b), 0);
	cr_assert_eq(sc_timeline_start(b), 0);
	sc_timeline_slice(b, &s);
	cr_assert_eq(sc_timeline_info(b, &info), 0);
	cr_assert_eq(info.slices, 1);
	cr_assert_eq(info.tracks_used, 1);
	sc_timeline_destroy(b);
}

Test(timeline, bad_arguments_are_refused_by_name)
{
	struct sc_timeline_opts big = {.records_per_track = (size_t)1 << 29};
	struct sc_timeline *tl;
	struct sc_timeline_info info;

	cr_assert_eq(sc_timeline_create(NULL, NULL), SC_EINVAL);
	cr_assert_eq(sc_timeline_create(&big, &tl), SC_EINVAL);
	cr_assert(strstr(sc_errmsg(), "records") != NULL, "%s", sc_errmsg());
	cr_assert_eq(sc_timeline_create(NULL, &tl), 0);
	cr_assert_eq(sc_timeline_name(tl, SC_TIMELINE_UNIT, 1024, "x"),
		     SC_EINVAL);
	cr_assert(strstr(sc_errmsg(), "unit 1024") != NULL, "%s", sc_errmsg());
	cr_assert_eq(sc_timeline_name(tl, (enum sc_timeline_kind)7, 0, "x"),
		     SC_EINVAL);
	cr_assert_eq(sc_timeline_name(tl, SC_TIMELINE_UNIT, 0, NULL),
		     SC_EINVAL);
	cr_assert_eq(sc_timeline_write(tl, NULL), SC_EINVAL);
	cr_assert_eq(sc_timeline_info(NULL, &info), SC_EINVAL);
	cr_assert_eq(sc_timeline_start(NULL), SC_EINVAL);
	cr_assert(!sc_timeline_on(NULL));
	sc_timeline_slice(NULL, NULL); /* no-ops, no crash */
	sc_timeline_slice(tl, NULL);
	sc_timeline_destroy(NULL);
	sc_timeline_destroy(tl);
}

Test(timeline, a_failed_write_is_eio)
{
	struct sc_timeline *tl;
	struct sc_timeline_slice s = {1, 2, 0, 0, 0, 0, 0, NULL, 0, 0, 0};
	/* A stream opened for reading refuses every write: a failed write
	 * on any machine, with no device file needed. */
	FILE *f = fopen("/dev/null", "r");

	cr_assert_not_null(f);
	cr_assert_eq(sc_timeline_create(NULL, &tl), 0);
	cr_assert_eq(sc_timeline_start(tl), 0);
	sc_timeline_slice(tl, &s);
	cr_assert_eq(sc_timeline_write(tl, f), SC_EIO);
	cr_assert(strstr(sc_errmsg(), "sc_timeline_write") != NULL);
	(void)fclose(f);
	sc_timeline_destroy(tl);
}

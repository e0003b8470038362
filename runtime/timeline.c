/*
 * timeline.c - per-thread record buffers and the trace event writer
 * (timeline.h says what and why).
 */
#define _GNU_SOURCE
#include "runtime/timeline.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "operators/base.h"
#include "operators/error.h"

#define NAME_MAX_LEN 64

enum rec_kind { REC_SLICE = 1, REC_SAMPLE = 2 };

/* One record: a slice, or a sample (unit = counter id, rows_in = value). */
struct rec {
	uint8_t kind;
	struct sc_timeline_slice s;
};

struct track {
	_Atomic size_t n;	  /* records published (release by the owner) */
	_Atomic uint64_t dropped; /* records that found the track full */
	struct rec *recs;	  /* records_per_track of them */
	char name[NAME_MAX_LEN];  /* the owner thread's name when claimed */
};

struct sc_timeline {
	uint64_t gen; /* tells a thread's cache which timeline */
	atomic_bool on;
	_Atomic uint64_t origin;  /* sc_clock_ns of the first start; 0: none */
	_Atomic uint32_t claimed; /* tracks handed out (may pass ntracks) */
	_Atomic uint64_t lost;	  /* records of threads beyond ntracks */
	uint32_t ntracks;
	size_t cap; /* records per track */
	struct track *tracks;
	uint32_t nunits, ncounters, nops;
	char (*unit_names)[NAME_MAX_LEN];
	char (*counter_names)[NAME_MAX_LEN];
	char (*op_names)[NAME_MAX_LEN];
	char *other_key, *other_json; /* sc_timeline_other, or NULL */
};

/* Each timeline gets a generation, so a thread's cached track can never
 * be mistaken for one of a later timeline made at the same address. */
static _Atomic uint64_t generations = 1;

static _Thread_local struct {
	uint64_t gen;	/* of the timeline the track is in; 0: none */
	uint32_t track; /* its index, or UINT32_MAX: beyond the tracks */
} me;

int
sc_timeline_create(const struct sc_timeline_opts *opts,
		   struct sc_timeline **out)
{
	struct sc_timeline_opts o = opts ? *opts : (struct sc_timeline_opts){0};
	struct sc_timeline *tl;

	if (!out)
		return sc__fail(SC_EINVAL, "sc_timeline_create: out is NULL");
	*out = NULL;
	o.tracks = o.tracks ? o.tracks : 64;
	o.records_per_track = o.records_per_track ? o.records_per_track : 65536;
	o.units = o.units ? o.units : 1024;
	o.counters = o.counters ? o.counters : 64;
	o.ops = o.ops ? o.ops : 4096;
	if (o.tracks > (1u << 20) || o.records_per_track > ((size_t)1 << 28) ||
	    o.units > (1u << 24) || o.counters > (1u << 24) ||
	    o.ops > (1u << 24))
		return sc__fail(SC_EINVAL,
				"sc_timeline_create: %u tracks of %zu records, "
				"%u units, %u counters, %u ops: above the "
				"limits (2^20, 2^28, 2^24, 2^24, 2^24)",
				o.tracks, o.records_per_track, o.units,
				o.counters, o.ops);
	tl = calloc(1, sizeof(*tl));
	if (!tl)
		return sc__fail(SC_ENOMEM, "sc_timeline_create");
	tl->gen = atomic_fetch_add(&generations, 1);
	tl->ntracks = o.tracks;
	tl->cap = o.records_per_track;
	tl->nunits = o.units;
	tl->ncounters = o.counters;
	tl->nops = o.ops;
	tl->tracks = calloc(o.tracks, sizeof(*tl->tracks));
	tl->unit_names = calloc(o.units, sizeof(*tl->unit_names));
	tl->counter_names = calloc(o.counters, sizeof(*tl->counter_names));
	tl->op_names = calloc(o.ops, sizeof(*tl->op_names));
	if (!tl->tracks || !tl->unit_names || !tl->counter_names ||
	    !tl->op_names)
		goto nomem;
	for (uint32_t i = 0; i < o.tracks; i++) {
		/* Untouched pages cost nothing until a thread records. */
		tl->tracks[i].recs =
		    malloc(o.records_per_track * sizeof(*tl->tracks[i].recs));
		if (!tl->tracks[i].recs)
			goto nomem;
	}
	*out = tl;
	return 0;
nomem:
	sc_timeline_destroy(tl);
	return sc__fail(SC_ENOMEM,
			"sc_timeline_create: %u tracks of %zu records",
			o.tracks, o.records_per_track);
}

void
sc_timeline_destroy(struct sc_timeline *tl)
{
	if (!tl)
		return;
	if (tl->tracks)
		for (uint32_t i = 0; i < tl->ntracks; i++)
			free(tl->tracks[i].recs);
	free(tl->tracks);
	free(tl->unit_names);
	free(tl->counter_names);
	free(tl->op_names);
	free(tl->other_key);
	free(tl->other_json);
	free(tl);
}

int
sc_timeline_other(struct sc_timeline *tl, const char *key, const char *json)
{
	char *k, *v;

	if (!tl || !key || !json)
		return sc__fail(SC_EINVAL, "sc_timeline_other: NULL");
	k = strdup(key);
	v = strdup(json);
	if (!k || !v) {
		free(k);
		free(v);
		return sc__fail(SC_ENOMEM, "sc_timeline_other: no memory");
	}
	free(tl->other_key);
	free(tl->other_json);
	tl->other_key = k;
	tl->other_json = v;
	return 0;
}

int
sc_timeline_name(struct sc_timeline *tl, enum sc_timeline_kind kind,
		 uint32_t id, const char *name)
{
	static const char *const what[] = {"unit", "counter", "op"};
	char(*names)[NAME_MAX_LEN];
	uint32_t n;

	if (!tl || !name)
		return sc__fail(SC_EINVAL, "sc_timeline_name: NULL");
	if (kind == SC_TIMELINE_UNIT) {
		names = tl->unit_names;
		n = tl->nunits;
	} else if (kind == SC_TIMELINE_COUNTER) {
		names = tl->counter_names;
		n = tl->ncounters;
	} else if (kind == SC_TIMELINE_OP) {
		names = tl->op_names;
		n = tl->nops;
	} else {
		return sc__fail(SC_EINVAL, "sc_timeline_name: kind %d unknown",
				(int)kind);
	}
	if (id >= n)
		return sc__fail(SC_EINVAL,
				"sc_timeline_name: %s %u, but the timeline "
				"names ids below %u",
				what[kind], id, n);
	(void)snprintf(names[id], NAME_MAX_LEN, "%s", name);
	return 0;
}

int
sc_timeline_start(struct sc_timeline *tl)
{
	uint64_t zero = 0;

	if (!tl)
		return sc__fail(SC_EINVAL, "sc_timeline_start: NULL");
	(void)atomic_compare_exchange_strong(&tl->origin, &zero, sc_clock_ns());
	atomic_store_explicit(&tl->on, true, memory_order_release);
	return 0;
}

int
sc_timeline_stop(struct sc_timeline *tl)
{
	if (!tl)
		return sc__fail(SC_EINVAL, "sc_timeline_stop: NULL");
	atomic_store_explicit(&tl->on, false, memory_order_release);
	return 0;
}

bool
sc_timeline_on(const struct sc_timeline *tl)
{
	return tl && atomic_load_explicit(&tl->on, memory_order_relaxed);
}

/* The calling thread's track, claimed on first use; NULL beyond them. */
static struct track *
my_track(struct sc_timeline *tl)
{
	uint32_t i;

	if (me.gen == tl->gen)
		return me.track == UINT32_MAX ? NULL : &tl->tracks[me.track];
	i = atomic_fetch_add(&tl->claimed, 1);
	me.gen = tl->gen;
	me.track = i < tl->ntracks ? i : UINT32_MAX;
	if (me.track == UINT32_MAX)
		return NULL;
	if (pthread_getname_np(pthread_self(), tl->tracks[i].name,
			       NAME_MAX_LEN) != 0 ||
	    !tl->tracks[i].name[0])
		(void)snprintf(tl->tracks[i].name, NAME_MAX_LEN, "thread %u",
			       i);
	return &tl->tracks[i];
}

static void
record(struct sc_timeline *tl, uint8_t kind, const struct sc_timeline_slice *s)
{
	struct track *t;
	size_t n;

	if (!atomic_load_explicit(&tl->on, memory_order_relaxed))
		return;
	t = my_track(tl);
	if (!t) {
		atomic_fetch_add_explicit(&tl->lost, 1, memory_order_relaxed);
		return;
	}
	n = atomic_load_explicit(&t->n, memory_order_relaxed);
	if (n == tl->cap) {
		atomic_fetch_add_explicit(&t->dropped, 1, memory_order_relaxed);
		return;
	}
	t->recs[n].kind = kind;
	t->recs[n].s = *s;
	/* Publish: a writer that sees n + 1 sees the record whole. */
	atomic_store_explicit(&t->n, n + 1, memory_order_release);
}

void
sc_timeline_slice(struct sc_timeline *tl, const struct sc_timeline_slice *s)
{
	if (tl && s)
		record(tl, REC_SLICE, s);
}

void
sc_timeline_sample(struct sc_timeline *tl, uint32_t counter, uint64_t t_ns,
		   int64_t value)
{
	struct sc_timeline_slice s = {.start_ns = t_ns,
				      .end_ns = t_ns,
				      .unit = counter,
				      .rows_in = (uint64_t)value};

	if (tl)
		record(tl, REC_SAMPLE, &s);
}

int
sc_timeline_info(const struct sc_timeline *tl, struct sc_timeline_info *out)
{
	uint32_t used;

	if (!tl || !out)
		return sc__fail(SC_EINVAL, "sc_timeline_info: NULL");
	memset(out, 0, sizeof(*out));
	used = atomic_load(&tl->claimed);
	out->tracks_used = used < tl->ntracks ? used : tl->ntracks;
	out->dropped = atomic_load(&tl->lost);
	for (uint32_t i = 0; i < out->tracks_used; i++) {
		const struct track *t = &tl->tracks[i];
		size_t n = atomic_load_explicit(&t->n, memory_order_acquire);

		out->dropped += atomic_load(&t->dropped);
		for (size_t k = 0; k < n; k++) {
			if (t->recs[k].kind == REC_SLICE)
				out->slices++;
			else
				out->samples++;
		}
	}
	out->on = sc_timeline_on(tl);
	return 0;
}

/* --- the writer ---------------------------------------------------------- */

/* A JSON string: quotes, backslashes and control bytes escaped. */
static void
put_str(FILE *f, const char *s)
{
	(void)fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			(void)fprintf(f, "\\%c", c);
		else if (c < 0x20)
			(void)fprintf(f, "\\u%04x", c);
		else
			(void)fputc(c, f);
	}
	(void)fputc('"', f);
}

/* t_ns relative to the origin, in microseconds with ns digits; a time
 * before the origin (a slice started just before the start) is 0. */
static void
put_us(FILE *f, uint64_t t_ns, uint64_t origin)
{
	uint64_t d = t_ns > origin ? t_ns - origin : 0;

	(void)fprintf(f, "%llu.%03llu", (unsigned long long)(d / 1000),
		      (unsigned long long)(d % 1000));
}

static void
put_name(FILE *f, const char (*names)[NAME_MAX_LEN], uint32_t n, uint32_t id,
	 const char *what)
{
	char buf[NAME_MAX_LEN + 16];

	if (id < n && names[id][0]) {
		put_str(f, names[id]);
		return;
	}
	(void)snprintf(buf, sizeof(buf), "%s %u", what, id);
	put_str(f, buf);
}

/* A long turn's longest phase, as more args of its slice. */
static void
put_phase(FILE *f, const struct sc_timeline *tl,
	  const struct sc_timeline_slice *s)
{
	(void)fputs(",\"op\":", f);
	if (s->op < 0)
		put_str(f, "(the unit)");
	else
		put_name(f, (const char(*)[NAME_MAX_LEN])tl->op_names, tl->nops,
			 (uint32_t)s->op, "op");
	(void)fputs(",\"doing\":", f);
	put_str(f, s->doing);
	(void)fprintf(f, ",\"op_ms\":%.3f,\"cpu_ms\":%.3f",
		      (double)s->op_ns / 1e6, (double)s->cpu_ns / 1e6);
}

static void
put_record(FILE *f, const struct sc_timeline *tl, uint32_t tid,
	   const struct rec *r, uint64_t origin)
{
	const struct sc_timeline_slice *s = &r->s;

	if (r->kind == REC_SLICE) {
		(void)fputs(",\n{\"ph\":\"X\",\"pid\":1,\"tid\":", f);
		(void)fprintf(f, "%u,\"name\":", tid);
		put_name(f, (const char(*)[NAME_MAX_LEN])tl->unit_names,
			 tl->nunits, s->unit, "unit");
		(void)fputs(",\"ts\":", f);
		put_us(f, s->start_ns, origin);
		(void)fputs(",\"dur\":", f);
		put_us(f, s->end_ns, s->start_ns);
		(void)fprintf(f,
			      ",\"args\":{\"unit\":%u,\"frames_in\":%u,"
			      "\"rows_in\":%llu,\"frames_out\":%u,"
			      "\"rows_out\":%llu",
			      s->unit, s->frames_in,
			      (unsigned long long)s->rows_in, s->frames_out,
			      (unsigned long long)s->rows_out);
		if (s->doing)
			put_phase(f, tl, s);
		(void)fputs("}}", f);
		return;
	}
	(void)fputs(",\n{\"ph\":\"C\",\"pid\":1,\"name\":", f);
	put_name(f, (const char(*)[NAME_MAX_LEN])tl->counter_names,
		 tl->ncounters, s->unit, "counter");
	(void)fputs(",\"ts\":", f);
	put_us(f, s->start_ns, origin);
	(void)fprintf(f, ",\"args\":{\"value\":%lld}}",
		      (long long)(int64_t)s->rows_in);
}

int
sc_timeline_write(const struct sc_timeline *tl, FILE *f)
{
	struct sc_timeline_info info;
	uint64_t origin;

	if (!tl || !f)
		return sc__fail(SC_EINVAL, "sc_timeline_write: NULL");
	(void)sc_timeline_info(tl, &info);
	origin = atomic_load(&tl->origin);
	errno = 0;
	(void)fputs("{\"displayTimeUnit\":\"ns\",\"otherData\":{", f);
	(void)fprintf(f,
		      "\"writer\":\"subcirc\",\"slices\":%llu,\"samples\":%llu,"
		      "\"dropped\":%llu",
		      (unsigned long long)info.slices,
		      (unsigned long long)info.samples,
		      (unsigned long long)info.dropped);
	if (tl->other_key) {
		(void)fputc(',', f);
		put_str(f, tl->other_key);
		(void)fprintf(f, ":%s", tl->other_json);
	}
	(void)fputs("},\n\"traceEvents\":[\n", f);
	(void)fputs("{\"ph\":\"M\",\"pid\":1,\"name\":\"process_name\","
		    "\"args\":{\"name\":\"subcirc\"}}",
		    f);
	for (uint32_t i = 0; i < info.tracks_used; i++) {
		const struct track *t = &tl->tracks[i];
		size_t n = atomic_load_explicit(&t->n, memory_order_acquire);

		/* The owner wrote the name before publishing its first
		 * record: a track with none may still be naming itself. */
		if (n == 0)
			continue;
		(void)fprintf(f,
			      ",\n{\"ph\":\"M\",\"pid\":1,\"tid\":%u,"
			      "\"name\":\"thread_name\",\"args\":{\"name\":",
			      i);
		put_str(f, t->name);
		(void)fputs("}}", f);
		for (size_t k = 0; k < n; k++)
			put_record(f, tl, i, &t->recs[k], origin);
	}
	(void)fputs("\n]}\n", f);
	if (fflush(f) != 0 || ferror(f)) {
		char buf[128];
		/* GNU strerror_r (_GNU_SOURCE): it may not use buf. */
		const char *why =
		    strerror_r(errno ? errno : EIO, buf, sizeof(buf));

		return sc__fail(SC_EIO, "sc_timeline_write: %s", why);
	}
	return 0;
}

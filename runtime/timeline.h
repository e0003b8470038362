/*
 * timeline.h - a record of where the time of a live run went: one slice
 * per turn, on the track of the thread that ran it, and counters sampled
 * over time (an edge's fill, the host's submit rate), written in the
 * Chrome trace event format that Perfetto (ui.perfetto.dev) and
 * chrome://tracing open.
 *
 * The hot path. Recording a slice takes no lock and allocates nothing:
 * every thread that records owns one track, a buffer made at create, and
 * appends to it alone. A thread finds its track through a thread-local
 * cache, claimed on its first record by one atomic increment (so tracks
 * need not be assigned up front, and host threads get one as workers do);
 * the track is named after the thread (pthread_getname_np) when claimed.
 * A record costs a branch on the on/off flag, the cached lookup and a
 * store of a few words. A full track, or a thread beyond the tracks made,
 * drops the record and counts it (sc_timeline_info.dropped): the trace
 * then says so rather than growing without bound.
 *
 * Reading. Each track's count is published with a release store after
 * its record is written, so sc_timeline_write may run while threads still
 * record: it writes every record published when it looks, each one whole.
 *
 * Times are sc_clock_ns (monotonic), written relative to the first start
 * in microseconds with nanosecond digits. Names of units and counters are
 * set before the run (sc_timeline_name); a record with an id that has no
 * name is written as "unit N" or "counter N".
 */
#ifndef SC_RUNTIME_TIMELINE_H
#define SC_RUNTIME_TIMELINE_H

#ifdef __cplusplus
extern "C" {
#endif

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct sc_timeline;

struct sc_timeline_opts {
	uint32_t tracks;	  /* threads that may record; 0: 64 */
	size_t records_per_track; /* room per track; 0: 65536 */
	uint32_t units;		  /* unit ids that may be named; 0: 1024 */
	uint32_t counters;	  /* counter ids that may be named; 0: 64 */
	uint32_t ops;		  /* operator ids that may be named; 0: 4096 */
};

/* One turn: what a unit did between start_ns and end_ns. */
struct sc_timeline_slice {
	uint64_t start_ns, end_ns; /* sc_clock_ns; end_ns >= start_ns */
	uint32_t unit;	     /* the unit's id (a name via sc_timeline_name) */
	uint32_t frames_in;  /* frames taken from its input edges */
	uint32_t frames_out; /* frames sent on its output edges */
	uint64_t rows_in, rows_out; /* rows in those frames */
	/* What took the time of a long turn (its longest phase), written as
	 * args of its slice; doing NULL: nothing to say (the default). */
	const char *doing; /* what the phase did ("grow"): static storage */
	int32_t op;	   /* the operator: an id named by sc_timeline_name
			      (SC_TIMELINE_OP); -1 for none (the unit's own
			      work) */
	uint64_t op_ns;	   /* how long the phase lasted */
	uint64_t cpu_ns;   /* the turn's CPU time on its thread (with doing):
			      far below end - start, the thread waited or
			      was descheduled rather than worked */
};

/* What a timeline holds (sc_timeline_info). */
struct sc_timeline_info {
	uint64_t slices;  /* slices recorded */
	uint64_t samples; /* counter samples recorded */
	uint64_t dropped; /* records lost to a full track or no free track */
	uint32_t tracks_used; /* threads that have recorded */
	bool on;	      /* recording now */
};

enum sc_timeline_kind {
	SC_TIMELINE_UNIT = 0,	 /* a unit id: names slices */
	SC_TIMELINE_COUNTER = 1, /* a counter id: names a counter track */
	SC_TIMELINE_OP = 2	 /* an operator id: names a slice's op */
};

/*
 * sc_timeline_create - make a timeline (off: sc_timeline_start turns it
 * on). opts may be NULL (every default). Returns
 *   0           and *out
 *   SC_EINVAL   out is NULL, or a size above 2^20 tracks, 2^28 records per
 *               track, or 2^24 names
 *   SC_ENOMEM   no room for the buffers
 */
int sc_timeline_create(const struct sc_timeline_opts *opts,
		       struct sc_timeline **out);

/* sc_timeline_destroy - free it. No thread may record in it any more.
 * NULL is allowed. */
void sc_timeline_destroy(struct sc_timeline *tl);

/*
 * sc_timeline_name - name unit, counter or operator `id` (copied, at most
 * 63 bytes kept). Before the run: it is not safe against a concurrent
 * sc_timeline_write. Returns
 *   0           named
 *   SC_EINVAL   tl or name is NULL, kind unknown, or id not below
 *               opts.units (opts.counters, opts.ops)
 */
int sc_timeline_name(struct sc_timeline *tl, enum sc_timeline_kind kind,
		     uint32_t id, const char *name);

/*
 * sc_timeline_other - one more member of the trace's "otherData" object
 * (the trace event format keeps it for the writer's own facts): `key`
 * with `json`, a JSON value's text written as given (the caller's to
 * make valid), both copied; a second call replaces the first. Not safe
 * against a concurrent sc_timeline_write. Returns
 *   0           kept
 *   SC_EINVAL   tl, key or json is NULL
 *   SC_ENOMEM   no room for the copies
 */
int sc_timeline_other(struct sc_timeline *tl, const char *key,
		      const char *json);

/*
 * sc_timeline_start / sc_timeline_stop - turn recording on or off (from
 * any thread; records made while off are not kept and not counted).
 * The first start sets the time origin. Return 0, or SC_EINVAL (NULL).
 */
int sc_timeline_start(struct sc_timeline *tl);
int sc_timeline_stop(struct sc_timeline *tl);

/* sc_timeline_on - whether it records now (false for NULL): callers skip
 * reading clocks when it does not. */
bool sc_timeline_on(const struct sc_timeline *tl);

/*
 * sc_timeline_slice - record one turn on the calling thread's track. No
 * lock, no allocation; a NULL tl or s, or a timeline that is off, is a
 * no-op; a full track counts the slice as dropped.
 */
void sc_timeline_slice(struct sc_timeline *tl,
		       const struct sc_timeline_slice *s);

/*
 * sc_timeline_sample - record counter `counter`'s value at t_ns (on the
 * calling thread's track; same rules as sc_timeline_slice).
 */
void sc_timeline_sample(struct sc_timeline *tl, uint32_t counter, uint64_t t_ns,
			int64_t value);

/* sc_timeline_info - what it holds now. Returns 0, SC_EINVAL (NULL). */
int sc_timeline_info(const struct sc_timeline *tl,
		     struct sc_timeline_info *out);

/*
 * sc_timeline_write - write the trace as one JSON object in the trace
 * event format: a thread_name record per track, an "X" (complete) event
 * per slice on its track's tid, named after its unit, with frames and
 * rows in args (and, for a slice with `doing`, the operator, the activity
 * the phase's length and the turn's CPU time in ms: "op", "doing",
 * "op_ms", "cpu_ms"), and a "C"
 * (counter) event per sample. Safe while threads
 * record (see the top). Returns
 *   0           written (and flushed)
 *   SC_EINVAL   tl or f is NULL
 *   SC_EIO      a write failed (the message says which errno)
 */
int sc_timeline_write(const struct sc_timeline *tl, FILE *f);

#ifdef __cplusplus
}
#endif

#endif /* SC_RUNTIME_TIMELINE_H */

/*
 * session.h - session windows per group: runs of rows whose times lie
 * closer than a gap, merging as rows arrive and splitting as they leave.
 *
 * What it computes. The input's rows are grouped by their first k
 * columns. In a group, a time t is PRESENT when the rows of that group
 * and time have a positive summed integrated weight m(t) (its
 * multiplicity; set semantics as distinct.h reads weights). The group's
 * present times, in order, fall into sessions: maximal runs in which each
 * time is less than `gap` after the one before. For every session the
 * output holds one row of weight 1:
 *
 *     (key[0..k), start, end, count)
 *
 * start the session's first time, end its last time + gap (SQL's
 * SESSION_END; INT64_MAX if that overflows), count the sum of m(t) over
 * its times (how many rows: SQL's COUNT(*)), all i64. So Nexmark's q11,
 * the bids per bidder in sessions with a gap of 10 s, is this operator
 * over (bidder, date_time) with k = 1 and a gap of 10,000 ms.
 *
 * Incremental: the integral of the output is always the sessions of the
 * integral of the input, however the input was cut into steps. A row
 * that lands between two sessions closer than 2 gaps merges them (the two
 * rows retracted, one emitted); a retraction that opens a gap splits one.
 * A session whose count leaves int64, or one of whose rows has an
 * integrated weight of INT64_MAX or more in size (held exactly by the
 * trace, read clamped into int64: its time's multiplicity sums the rows
 * so read), has no row while it does; sc_session_check reports it. Both
 * are functions of the integral, so no schedule changes them.
 *
 * State: the integral in a trace (trace.h), its rows laid out (key, t,
 * the other columns): whole rows, so that no two rows of one time add
 * their weights (in int64) before the trace holds them. A step of d rows
 * touching keys with earliest changed times tmin reads, per touched key,
 * its present times from the last one back to the first boundary below
 * tmin that no change can cross (two present times a < b < tmin with
 * b - a >= gap: no time at tmin or later can join a's session), once
 * before and once after the step (probe_int.h, from the back of the
 * key's range), and emits the difference. On a stream whose times
 * advance, that is the key's last session and the new rows: the walk
 * does not grow with the key's history. A row retracted deep in a key's
 * past walks back to it. The trace's merge work is spread by
 * sc_session_work.
 *
 * Cleanup: none. A declared lateness does not shrink this state: a row
 * below the waterline may still be inside a session that is open, and
 * the walk must see a session whole, so the trace keeps every row of
 * non-zero weight (dropping the rows of closed sessions only is what
 * bounding it would take).
 *
 * Errors: a failing step leaves the state as it was and writes no output.
 * Single-threaded, like everything in operators/.
 */
#ifndef SC_SESSION_H
#define SC_SESSION_H

#ifdef __cplusplus
extern "C" {
#endif

#include <stddef.h>
#include <stdint.h>

#include "operators/batch.h"
#include "operators/error.h"
#include "operators/schema.h"

struct sc_session_spec {
	uint32_t ncols;	   /* input row width, 1..SC_SCHEMA_MAX_COLS */
	uint32_t k;	   /* group by the first k columns, k < ncols,
			    * k + 3 <= SC_SCHEMA_MAX_COLS */
	uint32_t time_col; /* an i64 column (>= k, < ncols) */
	int64_t gap;	   /* > 0: times closer than this chain */
};

struct sc_session;

/*
 * sc_session_spec_check - whether `spec` describes session windows;
 * `who` names the caller in the message (NULL: this function). Returns
 *   0            it does
 *   SC_EINVAL    spec is NULL, or gap <= 0
 *   SC_ESCHEMA   ncols, k or time_col out of range
 */
int sc_session_spec_check(const struct sc_session_spec *spec, const char *who);

/*
 * sc_session_create - session windows as `spec` says (copied), empty.
 * Returns 0 and *out, SC_EINVAL (a NULL argument), sc_session_spec_check's
 * codes, or SC_ENOMEM.
 */
int sc_session_create(const struct sc_session_spec *spec,
		      struct sc_session **out);

/* sc_session_destroy - frees everything; NULL is a no-op. */
void sc_session_destroy(struct sc_session *s);

/*
 * sc_session_step - absorb `delta` (ncols wide; NULL or empty: nothing)
 * and write the change of the output to *out (k + 3 wide, sorted and
 * consolidated). Returns
 *   0            done
 *   SC_EINVAL    s or out is NULL
 *   SC_ESCHEMA   delta is not ncols wide
 *   SC_ENOMEM    no memory; nothing changed, *out untouched
 */
int sc_session_step(struct sc_session *s, const struct sc_batch *delta,
		    struct sc_batch **out);

/*
 * sc_session_work - up to about `budget` units of the trace's merge work.
 * Returns 0, SC_EINVAL (s NULL) or SC_ENOMEM.
 */
int sc_session_work(struct sc_session *s, size_t budget);

/* Merge work owed, rows held (the input's, in the trace), bytes held. 0
 * for NULL. */
size_t sc_session_pending(const struct sc_session *s);
size_t sc_session_rows(const struct sc_session *s);
size_t sc_session_bytes(const struct sc_session *s);

/*
 * sc_session_check - a read of the current integral: 0 while no session
 * is withheld (see above), SC_EOVERFLOW naming how many are, SC_EINVAL
 * for NULL.
 */
int sc_session_check(const struct sc_session *s);

#ifdef __cplusplus
}
#endif

#endif /* SC_SESSION_H */

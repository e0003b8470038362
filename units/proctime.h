/*
 * proctime.h - a processing-time clock: the time the system takes a row
 * (SQL's PROCTIME()), read by the host and stamped on what it submits.
 *
 * Why the host reads it. A stream's processing time is input, not
 * something an operator reads: the host reads the clock once per
 * submission and writes the value into a column of the rows it submits,
 * so every placement of a circuit, every replica of a unit and the single
 * circuit that checks them see the same values, and the settle property
 * (units/README.md, "The settle property") holds for a query over processing
 * time as for any other column. An operator that read a clock itself
 * would give each placement its own answer.
 *
 * Two kinds. A wall clock (SC_PROCTIME_WALL) is the live one:
 * milliseconds since the epoch from CLOCK_REALTIME. A stepped clock
 * (SC_PROCTIME_STEPPED) makes results checkable: its reading i (from 0)
 * is start_ms + i * step_ms, whatever the real time, so a test or a
 * replay knows every stamp in advance. A clock given as text (an option
 * of a program) is "wall" or "step:MS" (sc_proctime_parse).
 *
 * Monotone. Every reading is at least the one before it. A stepped clock
 * is so by construction (step_ms >= 0). The wall clock may be stepped
 * back (NTP, an operator's `date`); a wall reading below the last one
 * reads as the last one until the real time passes it again, so a window
 * over processing time never sees time go backwards.
 *
 * Range. Readings are in int64 ms; a stepped clock starts at start_ms >=
 * 0 (processing time is never before the epoch). A stepped reading that
 * would pass INT64_MAX is refused (SC_EOVERFLOW) and changes nothing, so
 * the next read is refused the same way. Before the first reading
 * last_ms is INT64_MIN, which no reading of a stepped clock can be.
 *
 * Storage and threads. The clock is caller storage (no allocation, no
 * destroy); its fields are private, to be set only by the init calls and
 * sc_proctime_parse. One thread at a time uses a clock (the host's);
 * clocks on different threads are independent.
 */
#ifndef SC_UNITS_PROCTIME_H
#define SC_UNITS_PROCTIME_H

#include <stdint.h>

#include "operators/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The kinds of clock. */
enum sc_proctime_kind {
	SC_PROCTIME_WALL = 0,	 /* CLOCK_REALTIME, ms since the epoch */
	SC_PROCTIME_STEPPED = 1, /* start_ms + i * step_ms at reading i */
};

/* A clock: caller storage, set by the calls below. Fields private. */
struct sc_proctime {
	enum sc_proctime_kind kind;
	int64_t start_ms; /* stepped: the first reading, >= 0 */
	int64_t step_ms;  /* stepped: added per reading, >= 0 */
	int64_t last_ms;  /* the last reading; INT64_MIN before the first */
	uint64_t reads;	  /* readings so far */
};

/*
 * sc_proctime_init_wall - *c becomes a wall clock: milliseconds since the
 * epoch (CLOCK_REALTIME), never below an earlier reading (a clock stepped
 * back reads as the last reading until it passes it again). Returns:
 *   0          *c is the clock, with no reading yet
 *   SC_EINVAL  NULL c
 */
int sc_proctime_init_wall(struct sc_proctime *c);

/*
 * sc_proctime_init_stepped - *c becomes a stepped clock: reading i (from
 * 0) is start_ms + i * step_ms. Returns:
 *   0          *c is the clock, with no reading yet
 *   SC_EINVAL  NULL c, start_ms < 0 or step_ms < 0 (the message names
 *              which); *c is left as it was
 */
int sc_proctime_init_stepped(struct sc_proctime *c, int64_t start_ms,
			     int64_t step_ms);

/*
 * sc_proctime_read - the clock's next reading into *ms: never below the
 * previous one. Returns:
 *   0             *ms is the reading, and the clock has counted it
 *   SC_EINVAL     NULL c or ms, or *c set by none of the calls here
 *                 (an unknown kind)
 *   SC_EOVERFLOW  the reading would pass INT64_MAX (a stepped clock run
 *                 past its range, or a wall clock past year 292 million):
 *                 nothing read, *ms and the clock unchanged
 *   SC_EIO        clock_gettime failed (the message says its errno):
 *                 nothing read, the clock unchanged
 */
int sc_proctime_read(struct sc_proctime *c, int64_t *ms);

/*
 * sc_proctime_parse - the clock that `text` names into *c, with no
 * reading yet:
 *   "wall"       the wall clock (sc_proctime_init_wall)
 *   "step:MS"    a stepped clock from 0, MS ms a reading
 *                (sc_proctime_init_stepped(c, 0, MS)); MS is decimal
 *                digits only (no sign, no blanks), in int64
 * Lowercase, the whole text. Returns:
 *   0          *c is the clock
 *   SC_EINVAL  NULL text or c, or a text that names no clock (the message
 *              quotes it and says what is accepted); *c is left as it was
 */
int sc_proctime_parse(const char *text, struct sc_proctime *c);

#ifdef __cplusplus
}
#endif

#endif /* SC_UNITS_PROCTIME_H */

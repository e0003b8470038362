/*
 * proctime.c - the processing-time clock (proctime.h): the two kinds'
 * readings and the text that names a clock.
 *
 * A stepped clock keeps no multiplication: reading i + 1 is reading i plus
 * step_ms, checked against INT64_MAX before anything is written, so a
 * refused reading leaves the clock exactly as it was.
 */
#include "units/proctime.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "operators/error.h"

/* What sc_proctime_parse accepts, for its messages. */
#define SC__PROCTIME_MAX_TEXT "9223372036854775807"
#define SC__PROCTIME_TEXTS                                                     \
	"want \"wall\" or \"step:MS\", MS a reading's ms in decimal digits "   \
	"only, 0.." SC__PROCTIME_MAX_TEXT

/* How much of a bad text a message quotes. */
#define SC__PROCTIME_QUOTE 64

int
sc_proctime_init_wall(struct sc_proctime *c)
{
	if (!c)
		return sc__fail(SC_EINVAL, "sc_proctime_init_wall: NULL c");
	*c = (struct sc_proctime){.kind = SC_PROCTIME_WALL,
				  .last_ms = INT64_MIN};
	return 0;
}

int
sc_proctime_init_stepped(struct sc_proctime *c, int64_t start_ms,
			 int64_t step_ms)
{
	const char *fn = "sc_proctime_init_stepped";

	if (!c)
		return sc__fail(SC_EINVAL, "%s: NULL c", fn);
	if (start_ms < 0)
		return sc__fail(SC_EINVAL,
				"%s: start_ms %" PRId64 " (want >= 0: ms "
				"since the epoch)",
				fn, start_ms);
	if (step_ms < 0)
		return sc__fail(SC_EINVAL,
				"%s: step_ms %" PRId64 " (want >= 0: a "
				"clock never goes back)",
				fn, step_ms);
	*c = (struct sc_proctime){.kind = SC_PROCTIME_STEPPED,
				  .start_ms = start_ms,
				  .step_ms = step_ms,
				  .last_ms = INT64_MIN};
	return 0;
}

/* The stepped clock's next reading into *ms, or SC_EOVERFLOW. */
static int
read_stepped(const struct sc_proctime *c, int64_t *ms)
{
	if (!c->reads) {
		*ms = c->start_ms;
		return 0;
	}
	if (c->last_ms > INT64_MAX - c->step_ms)
		return sc__fail(SC_EOVERFLOW,
				"sc_proctime_read: reading %" PRIu64
				" of the clock stepped by %" PRId64
				" ms would pass INT64_MAX (the last was "
				"%" PRId64 ")",
				c->reads, c->step_ms, c->last_ms);
	*ms = c->last_ms + c->step_ms;
	return 0;
}

/* CLOCK_REALTIME in ms (floored), raised to the last reading. */
static int
read_wall(const struct sc_proctime *c, int64_t *ms)
{
	struct timespec ts;
	int64_t now;

	if (clock_gettime(CLOCK_REALTIME, &ts) != 0)
		return sc__fail(
		    SC_EIO,
		    "sc_proctime_read: clock_gettime(CLOCK_REALTIME) "
		    "failed (errno %d)",
		    errno);
	/* tv_nsec is in [0, 1e9), so this floors for a time before the
	 * epoch too. */
	if (ts.tv_sec > INT64_MAX / 1000 - 1 ||
	    ts.tv_sec < INT64_MIN / 1000 + 1)
		return sc__fail(SC_EOVERFLOW,
				"sc_proctime_read: the wall clock's %lld s "
				"are out of int64 ms",
				(long long)ts.tv_sec);
	now = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
	*ms = now > c->last_ms ? now : c->last_ms;
	return 0;
}

int
sc_proctime_read(struct sc_proctime *c, int64_t *ms)
{
	int64_t v;
	int rc;

	if (!c)
		return sc__fail(SC_EINVAL, "sc_proctime_read: NULL c");
	if (!ms)
		return sc__fail(SC_EINVAL, "sc_proctime_read: NULL ms");
	if (c->kind == SC_PROCTIME_STEPPED)
		rc = read_stepped(c, &v);
	else if (c->kind == SC_PROCTIME_WALL)
		rc = read_wall(c, &v);
	else
		return sc__fail(SC_EINVAL,
				"sc_proctime_read: c has kind %d, neither "
				"wall nor stepped (set it with "
				"sc_proctime_init_* or sc_proctime_parse)",
				(int)c->kind);
	if (rc)
		return rc;
	c->last_ms = v;
	c->reads++;
	*ms = v;
	return 0;
}

/* MS of "step:MS": decimal digits only, in int64. Returns false, with
 * *why saying what is wrong, for anything else. */
static bool
parse_ms(const char *s, int64_t *out, const char **why)
{
	int64_t v = 0;

	if (!*s) {
		*why = "MS is empty";
		return false;
	}
	for (; *s; s++) {
		if (*s < '0' || *s > '9') {
			*why = "MS has a character that is not a digit";
			return false;
		}
		if (v > (INT64_MAX - (*s - '0')) / 10) {
			*why = "MS is past int64";
			return false;
		}
		v = v * 10 + (*s - '0');
	}
	*out = v;
	return true;
}

int
sc_proctime_parse(const char *text, struct sc_proctime *c)
{
	const char *fn = "sc_proctime_parse";
	const char *why = "it names no clock";
	int64_t step;

	if (!text)
		return sc__fail(SC_EINVAL, "%s: NULL text", fn);
	if (!c)
		return sc__fail(SC_EINVAL, "%s: NULL c", fn);
	if (!strcmp(text, "wall"))
		return sc_proctime_init_wall(c);
	if (!strncmp(text, "step:", 5) && parse_ms(text + 5, &step, &why))
		return sc_proctime_init_stepped(c, 0, step);
	return sc__fail(SC_EINVAL, "%s: '%.*s%s': %s; " SC__PROCTIME_TEXTS, fn,
			SC__PROCTIME_QUOTE, text,
			strlen(text) > SC__PROCTIME_QUOTE ? "..." : "", why);
}

/*
 * error.c - codes, words and the per-thread detail message.
 */
#include "operators/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* One message per thread: errors are read right after the call that raised
 * them, on the thread that made it, so no locking is needed. */
static _Thread_local char sc_last_msg[512];
static _Thread_local size_t sc_last_name_len; /* the "SC_E...: " prefix */

static const struct {
	const char *name;
	const char *words;
} sc_errors[] = {
    [0] = {"SC_OK", "success"},
    [1] = {"SC_EINVAL", "invalid argument"},
    [2] = {"SC_ENOMEM", "out of memory"},
    [3] = {"SC_EOVERFLOW", "weight or count overflow"},
    [4] = {"SC_ESCHEMA", "row or batch does not match the schema"},
    [5] = {"SC_ETYPE", "unknown type"},
    [6] = {"SC_EFULL", "queue or edge is full"},
    [7] = {"SC_EEMPTY", "nothing to take"},
    [8] = {"SC_ENOENT", "no such object"},
    [9] = {"SC_ESTATE", "object is in the wrong state for this call"},
    [10] = {"SC_ECYCLE", "cycle without a delay"},
    [11] = {"SC_EPANIC", "a unit panicked"},
    [12] = {"SC_ESHUTDOWN", "shut down"},
    [13] = {"SC_ETIMEDOUT", "timed out"},
    [14] = {"SC_ECALLBACK", "a user callback failed"},
    [15] = {"SC_EDEAD", "unit is dead"},
    [16] = {"SC_EBUSY", "object is still in use"},
    [17] = {"SC_EIO", "a write to a stream or file failed"},
    [18] = {"SC_ELATE", "rows arrived below their waterline"},
    [19] = {"SC_EAGAIN", "nothing ready yet: try again"},
};

const char *
sc_strerror(int code)
{
	if (code > 0 || code < SC__ELAST)
		return "unknown error";
	return sc_errors[-code].words;
}

const char *
sc_errname(int code)
{
	if (code > 0 || code < SC__ELAST)
		return "SC_E?";
	return sc_errors[-code].name;
}

const char *
sc_errmsg(void)
{
	return sc_last_msg;
}

const char *
sc_errdetail(void)
{
	return sc_last_msg + sc_last_name_len;
}

void
sc_error_clear(void)
{
	sc_last_msg[0] = '\0';
	sc_last_name_len = 0;
}

int
sc_errorf(int code, const char *fmt, ...)
{
	va_list ap;
	int n;

	sc_last_name_len = 0;
	n = snprintf(sc_last_msg, sizeof(sc_last_msg),
		     "%s: ", sc_errname(code));
	if (n < 0 || (size_t)n >= sizeof(sc_last_msg))
		return code;
	sc_last_name_len = (size_t)n;
	va_start(ap, fmt);
	(void)vsnprintf(sc_last_msg + n, sizeof(sc_last_msg) - (size_t)n, fmt,
			ap);
	va_end(ap);
	return code;
}

int
sc__errwrap(int code, const char *fn)
{
	char inner[sizeof(sc_last_msg)];

	if (code >= 0 || strstr(sc_last_msg, fn))
		return code;
	(void)snprintf(inner, sizeof(inner), "%s",
		       sc_last_msg + sc_last_name_len);
	return sc_errorf(code, "%s: %s", fn,
			 inner[0] ? inner : sc_strerror(code));
}

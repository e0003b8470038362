/*
 * error.h - the one error convention of subcirc.
 *
 * Every call that can fail returns an int: 0 on success, or one of the
 * negative SC_E* codes below. sc_strerror() gives the words for a code.
 * Bad input never crashes and never changes state: a call that refuses its
 * input leaves every object as it was and its out-parameters unwritten.
 *
 * A code says what kind of thing went wrong; the detail (which column, which
 * node, which unit) goes into a per-thread message that the failing call
 * sets and sc_errmsg() reads, so a test or a user sees e.g.
 * "sc_batch_builder_push: row has 3 columns, schema has 2".
 *
 * This header is the lowest layer (the sc_base library, see base.h):
 * runtime/ and units/ use it too, which is why it knows nothing of Z-sets.
 */
#ifndef SC_ERROR_H
#define SC_ERROR_H

#ifdef __cplusplus
extern "C" {
#endif

enum sc_error {
	SC_OK = 0,
	SC_EINVAL = -1,	   /* an argument is NULL, out of range or malformed */
	SC_ENOMEM = -2,	   /* an allocation failed; nothing was changed */
	SC_EOVERFLOW = -3, /* a weight or count would wrap around */
	SC_ESCHEMA = -4,   /* a row or batch does not match the schema */
	SC_ETYPE = -5,	   /* an unknown column or aggregate type */
	SC_EFULL = -6,	   /* a bounded queue or edge is full: try later */
	SC_EEMPTY = -7,	   /* nothing to take */
	SC_ENOENT = -8,	   /* no such unit, node, key or symbol */
	SC_ESTATE = -9,	   /* the object is in a state that refuses this call */
	SC_ECYCLE = -10,   /* a cycle without a delay */
	SC_EPANIC = -11, /* a unit panicked; see the executor's panic record */
	SC_ESHUTDOWN = -12, /* the executor or runtime has shut down */
	SC_ETIMEDOUT = -13, /* a wait ran past its deadline */
	SC_ECALLBACK = -14, /* a user callback reported an error */
	SC_EDEAD = -15,	 /* the unit is dead; frames to it are undeliverable */
	SC_EBUSY = -16,	 /* the object still has live children or users */
	SC_EIO = -17,	 /* a write to a stream or file failed */
	SC_ELATE = -18,	 /* rows below their input's waterline (waterline.h) */
	SC_EAGAIN = -19, /* nothing ready yet (a source of input): ask again */
	SC__ELAST = -19
};

/*
 * sc_strerror - the words for an SC_E* code.
 * Returns a static string; an unknown code gives "unknown error".
 * Any thread may call it.
 */
const char *sc_strerror(int code);

/*
 * sc_errname - the symbolic name of a code ("SC_EFULL"), for logs and tests.
 */
const char *sc_errname(int code);

/*
 * sc_errmsg - the detail of the last error raised on this thread, or "" if
 * none. The string is per thread and valid until the next failing call on
 * the same thread.
 */
const char *sc_errmsg(void);

/*
 * sc_errdetail - sc_errmsg without its leading "SC_E...: " (the code's
 * name), for a message that quotes an inner error after naming the code
 * itself, so the name is not said twice. "" if none; same lifetime.
 */
const char *sc_errdetail(void);

/*
 * sc_error_clear - forget this thread's last message.
 */
void sc_error_clear(void);

/*
 * sc_errorf - record a formatted detail for `code` on this thread (what
 * sc_errmsg then reads, prefixed with the code's name) and return `code`,
 * so a failing path reads `return sc_errorf(SC_EINVAL, "...", ...)`. For
 * code built on subcirc (workloads, tools, a unit's callbacks) that reports
 * its failures in subcirc's convention. Any thread may call it.
 */
int sc_errorf(int code, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/*
 * sc__fail - the library's own spelling of sc_errorf, used by its failing
 * paths; code outside the library calls sc_errorf. It is a macro that
 * yields `code` itself, evaluated once, so that the static analyser (which
 * cannot see into sc_errorf from another file) knows that a failing path
 * returns its code, never 0.
 */
#define sc__fail(code, ...)                                                    \
	__extension__({                                                        \
		int sc_code_ = (code);                                         \
		(void)sc_errorf(sc_code_, __VA_ARGS__);                        \
		sc_code_;                                                      \
	})

/*
 * sc__errwrap - for a public function that returns what another call
 * returned: `code` as it is, and, when it is an error whose message does
 * not name `fn`, the message made "<fn>: <the inner detail>", so that
 * sc_errmsg() names the function the caller called.
 */
int sc__errwrap(int code, const char *fn);

#ifdef __cplusplus
}
#endif

#endif /* SC_ERROR_H */

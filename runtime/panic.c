/*
 * panic.c - guards, sc_panic, the assertion and sc_xmalloc (see panic.h).
 * The signal side (hard faults) is platform code: runtime/fault_posix.c.
 */
#include "runtime/panic.h"
#include "runtime/panic_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "operators/base_int.h"
#include "operators/doing_int.h"
#include "operators/error.h"

/* The innermost guard of this thread. initial-exec so that the fault
 * handler reads it without calling into the dynamic TLS machinery. */
__attribute__((
    tls_model("initial-exec"))) _Thread_local struct sc__guard *sc__guard_top;

static _Thread_local int sc_xmalloc_countdown = -1;

static _Noreturn void
panic_jump(const char *fmt, va_list ap)
{
	struct sc__guard *g = sc__guard_top;

	/* Under a lock of subcirc the jump would leave it held for ever
	 * (operators/base_int.h): nobody can take this panic. */
	if (!g || sc__lock_depth() > 0) {
		char msg[SC_PANIC_MSG_MAX];

		(void)vsnprintf(msg, sizeof(msg), fmt, ap);
		(void)fprintf(stderr, "subcirc: panic %s: %s\n",
			      g ? "inside subcirc while holding a lock: "
				  "cannot recover"
				: "outside any unit",
			      msg);
		abort();
	}
	(void)vsnprintf(g->rec->message, sizeof(g->rec->message), fmt, ap);
	g->rec->signo = 0;
	sc__guard_top = g->outer;
	/* The turn never reaches its end: forget its activity word, which
	 * may belong to a unit about to die (operators/doing_int.h). */
	sc__doing_drop();
	siglongjmp(g->env, 1);
}

void
sc_panic(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	panic_jump(fmt, ap);
}

void
sc__assert_fail(const char *cond, const char *file, int line, const char *fmt,
		...)
{
	char what[SC_PANIC_MSG_MAX];
	va_list ap;

	va_start(ap, fmt);
	(void)vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	sc_panic("assertion failed: %s (%s:%d): %s", cond, file, line, what);
}

void *
sc_xmalloc(size_t size)
{
	void *p;

	if (sc_xmalloc_countdown == 0) {
		sc_xmalloc_countdown = -1;
		p = NULL;
	} else {
		if (sc_xmalloc_countdown > 0)
			sc_xmalloc_countdown--;
		p = malloc(size ? size : 1);
	}
	if (!p)
		sc_panic("out of memory (%zu bytes)", size);
	return p;
}

void
sc__xmalloc_fail_after(int n)
{
	sc_xmalloc_countdown = n < 0 ? -1 : n;
}

int
sc_panic_guard(void (*fn)(void *arg), void *arg, struct sc_panic_record *rec)
{
	struct sc__guard g;

	if (!fn || !rec)
		return sc__fail(SC_EINVAL, "sc_panic_guard: %s is NULL",
				!fn ? "fn" : "rec");
	g.rec = rec;
	g.outer = sc__guard_top;
	g.owner = NULL;
	/* savemask 0: no system call per turn (see panic.h). */
	if (sigsetjmp(g.env, 0) != 0)
		return SC_EPANIC; /* the panic already popped g */
	sc__guard_top = &g;
	fn(arg);
	sc__guard_top = g.outer;
	return 0;
}

bool
sc_panic_guarded(void)
{
	return sc__guard_top != NULL;
}

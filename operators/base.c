/*
 * base.c - the failing side of SC_ASSERT (see base.h), and the count of
 * locks a thread holds (base_int.h).
 */
#include "operators/base.h"
#include "operators/base_int.h"

#include <stdio.h>
#include <stdlib.h>

void
sc_assert_fail(const char *file, int line, const char *cond)
{
	/* Nothing to do if stderr is gone: the abort says enough. */
	(void)fprintf(stderr, "%s:%d: assertion failed: %s\n", file, line,
		      cond);
	abort();
}

__attribute__((
    tls_model("initial-exec"))) _Thread_local volatile int sc__locks_held;

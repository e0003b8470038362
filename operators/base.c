/*
 * base.c - the failing side of SC_ASSERT (see base.h).
 */
#include "operators/base.h"

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

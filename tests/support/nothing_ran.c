/*
 * nothing_ran.c - a Criterion program whose --filter matches no test fails.
 *
 * Criterion exits 0 when its --filter selects nothing, so a renamed or
 * mistyped test would "pass" by running nothing. Every Criterion suite links
 * this hook: after the run, if no test passed, failed or crashed, the
 * program says so and exits 2. ctest's registration (cmake/sc_helpers.cmake)
 * additionally fails on "Tested: 0", which covers runs where the hook itself
 * cannot (a runner killed before its report).
 */
#include <criterion/criterion.h>
#include <criterion/hooks.h>
#include <stdio.h>
#include <unistd.h>

ReportHook(POST_ALL)(struct criterion_global_stats *stats)
{
	size_t ran =
	    stats->tests_passed + stats->tests_failed + stats->tests_crashed;

	if (ran == 0) {
		(void)fprintf(stderr, "no test matched the filter: nothing ran "
				      "(list the tests with --list)\n");
		/* _exit, not exit: the runner's nanomsg threads may still run,
		 * and exit's teardown under them is not thread-safe. */
		(void)fflush(stdout);
		_exit(2);
	}
}

/*
 * tsan_runtime_races.c - host threads racing the runtime's host calls
 * (tests/support/units_races.h) as a plain program, for the
 * ThreadSanitizer pass (Criterion cannot run under TSan, issue #274).
 * Exit 0 is a pass; a failure prints the scenario and what was lost.
 */
#include <stdio.h>

#include "tests/support/units_races.h"

int
main(void)
{
	char why[256] = "";
	int failures = 0;

	if (!ur_submit_during_shutdown(2, 3, 10, 20, why, sizeof(why)) ||
	    !ur_submit_during_shutdown(0, 2, 5, 20, why, sizeof(why))) {
		(void)fprintf(stderr, "tsan_runtime_races: shutdown: %s\n",
			      why);
		failures++;
	}
	for (uint32_t workers = 0; workers <= 2; workers += 2) {
		uint64_t answered = 0;

		if (!ur_reads_during_submits(workers, 2, 300, &answered, why,
					     sizeof(why))) {
			(void)fprintf(
			    stderr,
			    "tsan_runtime_races: reads, %u workers: %s\n",
			    workers, why);
			failures++;
		}
		printf("tsan_runtime_races: reads, %u workers: %llu answered\n",
		       workers, (unsigned long long)answered);
	}
	if (failures)
		return 1;
	printf("tsan_runtime_races: ok\n");
	return 0;
}

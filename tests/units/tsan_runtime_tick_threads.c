/*
 * tsan_runtime_tick_threads.c - the threaded tick-mode scenarios of
 * tests/support/units_ticks.h as a plain program, for the ThreadSanitizer
 * pass (Criterion cannot run under TSan): the watchdog's FRONTIER check
 * reading what the units publish while they run, and host threads
 * submitting while another closes ticks. Exit 0 is a pass; a failure
 * prints the scenario and what went wrong.
 */
#include <stdio.h>
#include <string.h>

#include "tests/support/units_ticks.h"

int
main(void)
{
	struct ut_frontier_seen s;
	char why[256] = "";
	uint64_t ticks = 0, exact = 0;
	int failures = 0;

	memset(&s, 0, sizeof(s));
	if (!ut_frontier_run(true, 100, &s, why, sizeof(why)) ||
	    s.reports < 1 || s.unit != 1 ||
	    strcmp(s.edge, "u0.0 -> u1.0") != 0) {
		(void)fprintf(stderr,
			      "tsan_runtime_tick_threads: frontier: %s (%llu "
			      "reports, unit %u, edge '%s')\n",
			      why, (unsigned long long)s.reports, s.unit,
			      s.edge);
		failures++;
	}
	for (uint32_t hosts = 2; hosts <= 3; hosts++)
		if (!ut_hosts_run("per-node", hosts, 2, &ticks, &exact, why,
				  sizeof(why))) {
			(void)fprintf(
			    stderr, "tsan_runtime_tick_threads: %u hosts: %s\n",
			    hosts, why);
			failures++;
		}
	if (failures)
		return 1;
	printf("tsan_runtime_tick_threads: ok (%llu ticks, %llu rows in a "
	       "one-tick bracket)\n",
	       (unsigned long long)ticks, (unsigned long long)exact);
	return 0;
}

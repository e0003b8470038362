/*
 * clock_linux.c - the executor's clock: CLOCK_MONOTONIC_COARSE, a few ns
 * per read through the vDSO (CLOCK_MONOTONIC costs ~20 ns, twice per turn
 * would be half the turn's overhead). Its resolution is the kernel tick
 * (1-4 ms), plenty for a watchdog whose deadlines are tens of ms.
 */
#include "runtime/clock_int.h"

#include <time.h>

uint64_t
sc__clock_coarse_ns(void)
{
	struct timespec ts;

	(void)clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

uint64_t
sc__clock_ns(void)
{
	struct timespec ts;

	(void)clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

void
sc__clock_deadline(struct timespec *ts, uint64_t after_ns)
{
	uint64_t t = sc__clock_ns() + after_ns;

	ts->tv_sec = (time_t)(t / 1000000000ULL);
	ts->tv_nsec = (long)(t % 1000000000ULL);
}

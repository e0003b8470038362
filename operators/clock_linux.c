/*
 * clock_linux.c - the base's clocks and timed waits (see base.h and
 * base_int.h). CLOCK_MONOTONIC_COARSE is Linux's; the rest is POSIX.
 */
#include "operators/base_int.h"

#include <pthread.h>
#include <time.h>

#define NS_PER_S 1000000000ULL

static uint64_t
read_ns(clockid_t id)
{
	struct timespec ts;

	/* Cannot fail for a clock the kernel has; on a kernel without it
	 * the zeroed timespec reads as time 0, not as garbage. */
	ts.tv_sec = 0;
	ts.tv_nsec = 0;
	(void)clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * NS_PER_S + (uint64_t)ts.tv_nsec;
}

uint64_t
sc_clock_ns(void)
{
	return read_ns(CLOCK_MONOTONIC);
}

uint64_t
sc_clock_coarse_ns(void)
{
	return read_ns(CLOCK_MONOTONIC_COARSE);
}

uint64_t
sc__clock_thread_ns(void)
{
	return read_ns(CLOCK_THREAD_CPUTIME_ID);
}

void
sc__clock_deadline(struct timespec *ts, uint64_t after_ns)
{
	uint64_t t = sc__deadline_add(sc_clock_ns(), after_ns);

	ts->tv_sec = (time_t)(t / NS_PER_S);
	ts->tv_nsec = (long)(t % NS_PER_S);
}

int
sc__cond_init(pthread_cond_t *cv)
{
	pthread_condattr_t ca;
	int rc = SC_ENOMEM;

	if (pthread_condattr_init(&ca) != 0)
		return rc;
	if (pthread_condattr_setclock(&ca, CLOCK_MONOTONIC) == 0 &&
	    pthread_cond_init(cv, &ca) == 0)
		rc = 0;
	(void)pthread_condattr_destroy(&ca);
	return rc;
}

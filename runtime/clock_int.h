/*
 * clock_int.h - monotonic clocks for runtime/ (clock_linux.c). Internal.
 */
#ifndef SC_RUNTIME_CLOCK_INT_H
#define SC_RUNTIME_CLOCK_INT_H

#include <stdint.h>
#include <time.h>

/* Coarse monotonic time in ns (kernel tick resolution, cheap). */
uint64_t sc__clock_coarse_ns(void);

/* Precise monotonic time in ns. */
uint64_t sc__clock_ns(void);

/* *ts = CLOCK_MONOTONIC now + after_ns (for a condvar set to that clock). */
void sc__clock_deadline(struct timespec *ts, uint64_t after_ns);

#endif /* SC_RUNTIME_CLOCK_INT_H */

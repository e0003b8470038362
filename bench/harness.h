/*
 * harness.h - the small harness every benchmark shares.
 *
 * A benchmark measures its subject and its baseline (or peer) in the same
 * run, takes the median of several repetitions of each, and prints one JSON
 * object per line:
 *
 *   {"bench": "consolidate", "case": "1M u64x2", "unit": "Mrec/s",
 *    "better": "higher", "value": 31.2, "baseline": "qsort+compact",
 *    "baseline_value": 9.8, "ratio": 3.18}
 *
 * ratio = value / baseline_value, so whether a ratio above 1 is good
 * depends on "better": "higher" for rates (a unit ending in "/s"),
 * "lower" for times, sizes and counts of work (a unit starting with ns,
 * us, ms, s, bytes, Ir or instructions); sc_bench_better says which. `--quick`
 * (or SC_BENCH_QUICK=1) asks for smaller sizes and fewer repetitions, for smoke
 * runs in tools/run.
 */
#ifndef SC_BENCH_HARNESS_H
#define SC_BENCH_HARNESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "operators/base.h" /* sc_clock_ns, sc_splitmix_next */

/* Monotonic time in nanoseconds (sc_clock_ns; kept for the tools). */
uint64_t sc_bench_now_ns(void);

/*
 * This thread's CPU time in nanoseconds. On a shared machine it leaves out
 * the time the scheduler gave to other processes, which wall time charges
 * to whichever side of a comparison happened to be running.
 */
uint64_t sc_bench_cpu_ns(void);

/* Every thread's CPU time in nanoseconds (a pool's, summed). */
uint64_t sc_bench_process_cpu_ns(void);

/* Parse the common flags (--quick) from argv; returns true in quick mode. */
bool sc_bench_init(int argc, char **argv);

/*
 * sc_bench_fail - print "<program>: <what> (<sc_errmsg()>)" on stderr and
 * end the program with status 1, from any thread: for a step a benchmark
 * cannot go on without. It ends with _Exit, not exit: the at-exit
 * handlers would race with the threads still running, and a failed
 * benchmark has nothing to save (each result line was flushed when
 * printed).
 */
void sc_bench_fail(const char *what) __attribute__((noreturn));

/* True once sc_bench_init saw --quick or SC_BENCH_QUICK=1. */
bool sc_bench_quick(void);

/* The median of n doubles (sorts the array in place). */
double sc_bench_median(double *v, size_t n);

/* Sort n u64 samples (ns, counts) in place, ascending. */
void sc_bench_sort_u64(uint64_t *v, size_t n);

/* The p50 and p99 of n >= 1 samples in ns (sorted in place), in us: the
 * samples at ranks n / 2 and n * 99 / 100, rounded down. */
void sc_bench_percentiles_us(uint64_t *ns, size_t n, double *p50, double *p99);

/*
 * sc_bench_better - "higher" or "lower", whichever is better for a figure
 * in `unit` (see the top), or NULL when the unit says neither.
 */
const char *sc_bench_better(const char *unit);

/*
 * sc_bench_emit - print one result line, with its "better" field. `baseline`
 * may be NULL when a figure has no peer (then baseline_value and ratio are
 * printed as null).
 */
void sc_bench_emit(const char *bench, const char *kase, const char *unit,
		   double value, const char *baseline, double baseline_value);

/* Keep the optimiser from deleting a computation whose result is unused. */
static inline void
sc_bench_keep(const void *p)
{
	__asm__ volatile("" : : "g"(p) : "memory");
}

#endif /* SC_BENCH_HARNESS_H */

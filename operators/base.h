/*
 * base.h - the base every layer stands on: asserts, clocks, a seeded RNG
 * and the CPU's spin hint (with error.h, the error convention).
 *
 * These are the pieces every layer needs once and must never grow a second
 * copy of: the monotonic clock behind every deadline and timing, the
 * generator behind every seeded choice (the simulator's schedule, a random
 * placement, the workloads, the benchmarks' data), and the debug asserts
 * that state each module's invariants. They live in their own small
 * library, sc_base (operators/base.c, operators/clock_linux.c,
 * operators/error.c), at the bottom of the layering and below the Z-set
 * core: runtime/ links sc_base and not sc_operators, so the threads layer
 * stays free of Z-sets (as Concurrency Kit's ck_cc.h and ck_pr.h sit below
 * every ck structure).
 *
 * Internals (the clock-correct condition variable, the saturating
 * deadline, the sanitizer annotations) are in base_int.h.
 *
 * Threads: every call here may be made from any thread.
 */
#ifndef SC_BASE_H
#define SC_BASE_H

#include <stdint.h>

#include "operators/error.h"

/* --- asserts --------------------------------------------------------------
 *
 * SC_ASSERT(cond) states an invariant a comment would otherwise state in
 * prose ("the caller holds the mutex", "producer end only"). It is checked
 * when SC_DEBUG_ASSERTS is defined, which the build does for Debug builds
 * and for every sanitizer build (SC_SANITIZE), so the test passes under
 * ASan and TSan run with it on; in RelWithDebInfo and Release builds it
 * compiles to nothing and `cond` is not evaluated, so a condition must have
 * no side effect. A failing assert prints "file:line: assertion failed:
 * cond" on stderr and aborts.
 */
#if defined(SC_DEBUG_ASSERTS)
#define SC_ASSERT(cond)                                                        \
	((cond) ? (void)0 : sc_assert_fail(__FILE__, __LINE__, #cond))
#else
#define SC_ASSERT(cond) ((void)0)
#endif

/* True in a build where SC_ASSERT checks (for a test that needs to know). */
#if defined(SC_DEBUG_ASSERTS)
#define SC_ASSERTS_ON 1
#else
#define SC_ASSERTS_ON 0
#endif

/*
 * sc_assert_fail - what a failing SC_ASSERT calls: print "file:line:
 * assertion failed: cond" on stderr, then abort(). Never returns.
 */
void sc_assert_fail(const char *file, int line, const char *cond)
    __attribute__((noreturn));

/* --- clocks ----------------------------------------------------------- */

/*
 * sc_clock_ns - CLOCK_MONOTONIC in nanoseconds: never steps back, never
 * jumps with the wall clock. About 20 ns through the vDSO. For timings and
 * deadlines.
 */
uint64_t sc_clock_ns(void);

/*
 * sc_clock_coarse_ns - CLOCK_MONOTONIC_COARSE in nanoseconds: a few ns per
 * read, at the kernel tick's resolution (1-4 ms). For the executor's
 * per-turn timestamps, which a watchdog compares with deadlines of tens of
 * milliseconds.
 */
uint64_t sc_clock_coarse_ns(void);

/* --- the seeded generator -------------------------------------------------
 *
 * splitmix64 (Steele, Lea and Flood, "Fast splittable pseudorandom number
 * generators", OOPSLA 2014; the constants of Vigna's public-domain
 * version): one word of state, any seed valid (0 too), the same sequence on
 * every machine, and equidistributed enough for schedules, placements and
 * benchmark data. Not for cryptography.
 */

/*
 * sc_splitmix_next - advance *state and return the next 64 random bits of
 * its sequence. The caller owns the state; no locking.
 */
static inline uint64_t
sc_splitmix_next(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/*
 * sc_splitmix_mix - splitmix64's output function applied to `x` alone: a
 * stateless 64-bit mix (a hash of a counter or key). Equal to
 * sc_splitmix_next on a state of x.
 */
static inline uint64_t
sc_splitmix_mix(uint64_t x)
{
	return sc_splitmix_next(&x);
}

/* --- the spin hint ---------------------------------------------------- */

/*
 * sc_cpu_relax - tell the CPU this thread is spinning (x86's `pause`: it
 * saves power and stops the spin loop from starving its hyperthread
 * sibling). Elsewhere only a compiler barrier, so a spin loop still
 * re-reads what it waits on.
 */
#if defined(__x86_64__) || defined(__i386__)
static inline void
sc_cpu_relax(void)
{
	__builtin_ia32_pause();
}
#else
static inline void
sc_cpu_relax(void)
{
	__asm__ volatile("" : : : "memory");
}
#endif

#endif /* SC_BASE_H */

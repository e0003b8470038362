/*
 * failalloc.h - fail the Nth allocation of a program, for the allocation
 * fault sweeps (tests/stress/test_alloc.c) and `subcirc stress --faults
 * alloc` (tools/cli_alloc.c).
 *
 * How. A program that links failalloc.c is linked with ld's --wrap for
 * every allocator in SC_ALLOC_WRAPPED (the top CMakeLists.txt: malloc,
 * calloc, realloc, aligned_alloc, posix_memalign, strdup, the ones the
 * library calls; tests/stress/wrap_covers.sh checks that list). The
 * library's objects are linked statically, so each of their calls lands
 * in a __wrap_* here, which calls the real allocator (jemalloc, glibc's,
 * or a sanitizer's) unless it is the one to fail. Shared objects (libc,
 * jemalloc, Criterion) are untouched. Not under TSan, whose runtime owns
 * the allocator's symbols.
 *
 * Counting. While armed, every allocation of any thread is counted; the
 * Nth fails (errno ENOMEM), and with `persist` every one after it too
 * (SQLite's fault tests do both). Disarmed, an allocation costs one
 * acquire load and a branch. Arm and disarm from one thread at a time.
 */
#ifndef SC_BENCH_FAILALLOC_H
#define SC_BENCH_FAILALLOC_H

#include <stdbool.h>
#include <stdint.h>

/* Arm: allocation `nth` (1-based) from now fails, and every later one if
 * `persist`; the counts start at 0. */
void sc_failalloc_arm(uint64_t nth, bool persist);

/* Arm again for the same point, counting on from where it stopped. */
void sc_failalloc_resume(void);

/* Disarm: no allocation fails until the next arm. */
void sc_failalloc_disarm(void);

/* Allocations counted, and failed, since the last arm. */
uint64_t sc_failalloc_seen(void);
uint64_t sc_failalloc_failed(void);

#endif /* SC_BENCH_FAILALLOC_H */

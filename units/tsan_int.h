/*
 * tsan_int.h - ThreadSanitizer annotations for hand-offs TSan cannot see.
 *
 * Concurrency Kit reads and writes its ring indices with inline assembly,
 * which ThreadSanitizer does not instrument: to TSan, the producer's write
 * of a ring slot and the consumer's read of it are unordered, and so are
 * the writes into the batch behind it. edge.c orders both ends through its
 * own C11 counters, which TSan does see; these annotations state the same
 * hand-off at the slot itself, so a TSan report is never a false race on
 * ck's account:
 *
 *   producer: sc__tsan_acquire(slot) once the slot is known free (the
 *             consumer released it), then sc__tsan_release(slot) before
 *             the enqueue that publishes it;
 *   consumer: sc__tsan_acquire(slot) once the slot is known full, then
 *             sc__tsan_release(slot) after the dequeue that read it.
 *
 * In a build without TSan they are empty inline functions. This header is
 * the only place that tests for the sanitizer (STYLE.md rule 11: no #ifdef
 * inside function bodies). Internal to units/.
 */
#ifndef SC_UNITS_TSAN_INT_H
#define SC_UNITS_TSAN_INT_H

#if defined(__SANITIZE_THREAD__)
#define SC__TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define SC__TSAN 1
#endif
#endif

#if defined(SC__TSAN)
#include <sanitizer/tsan_interface.h>

static inline void
sc__tsan_acquire(void *addr)
{
	__tsan_acquire(addr);
}

static inline void
sc__tsan_release(void *addr)
{
	__tsan_release(addr);
}

#else

static inline void
sc__tsan_acquire(void *addr)
{
	(void)addr;
}

static inline void
sc__tsan_release(void *addr)
{
	(void)addr;
}

#endif

#endif /* SC_UNITS_TSAN_INT_H */

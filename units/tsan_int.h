/*
 * tsan_int.h - ThreadSanitizer annotations for hand-offs TSan cannot see.
 *
 * Concurrency Kit reads and writes its ring indices with inline assembly,
 * which ThreadSanitizer does not instrument: to TSan, the producer's write
 * of a ring slot and the consumer's read of it are unordered, and so are
 * the writes into the batch behind it. These annotations state the
 * hand-off at the slot itself (edge.c):
 *
 *   producer: reserve the slot (ck), sc__tsan_acquire(slot) (the
 *             consumer's read of it, one lap ago), write it,
 *             sc__tsan_release(slot), then commit (ck publishes it);
 *   consumer: sc__tsan_acquire(slot) once ck says it is full, dequeue,
 *             then sc__tsan_release(slot) before the popped counter that
 *             lets the producer reuse it.
 *
 * The release sits after the write and before the publishing store, and
 * the acquire after the consumer saw that store, so the annotations claim
 * no ordering the hardware does not give.
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

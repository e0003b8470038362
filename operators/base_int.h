/*
 * base_int.h - the base's internals (see base.h): a condition variable on
 * the monotonic clock, a deadline that cannot wrap, and the
 * ThreadSanitizer annotations. Internal to subcirc: runtime/ and units/
 * include it, nothing outside the library does.
 */
#ifndef SC_BASE_INT_H
#define SC_BASE_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "operators/base.h"

/* --- timed waits ------------------------------------------------------------
 *
 * pthread_cond_timedwait measures its deadline on the condvar's clock,
 * CLOCK_REALTIME unless set otherwise: a deadline computed from the
 * monotonic clock against a realtime condvar is off by the time since the
 * epoch, and a realtime one moves when the wall clock is set. So every
 * timed condvar of subcirc is made by sc__cond_init, and every deadline by
 * sc__clock_deadline, both on CLOCK_MONOTONIC.
 */

/*
 * sc__cond_init - pthread_cond_init with a CLOCK_MONOTONIC clock.
 *   0          the condvar is ready; pthread_cond_destroy it
 *   SC_ENOMEM  pthread refused (no memory or no such clock); *cv unset
 * No message is recorded: the caller names what it was making.
 */
int sc__cond_init(pthread_cond_t *cv);

/*
 * sc__clock_deadline - *ts = CLOCK_MONOTONIC now + after_ns, for a timed
 * wait on a condvar from sc__cond_init. A sum past 2^64 - 1 ns saturates
 * there (about 584 years from boot) instead of wrapping into the past, so
 * a huge timeout (UINT64_MAX: "no deadline") waits, never times out at
 * once.
 */
void sc__clock_deadline(struct timespec *ts, uint64_t after_ns);

/*
 * sc__deadline_add - now_ns + after_ns, saturated at UINT64_MAX (the
 * arithmetic of sc__clock_deadline, exposed for its tests).
 */
static inline uint64_t
sc__deadline_add(uint64_t now_ns, uint64_t after_ns)
{
	return after_ns > UINT64_MAX - now_ns ? UINT64_MAX : now_ns + after_ns;
}

/* --- lock-held checks ----------------------------------------------------- */

/*
 * sc__mutex_locked - whether *mu is locked, by some thread: for
 * SC_ASSERT(sc__mutex_locked(&x->mu)) where a comment says "the caller
 * holds x->mu". A trylock cannot tell the owner from another thread, so
 * the check catches a caller that holds nothing (the usual slip), not one
 * whose lock another thread happens to hold; on a default (non-recursive)
 * mutex it never fires when the caller does hold it. If the lock was free
 * it is taken and given back at once, so the check changes nothing.
 */
static inline bool
sc__mutex_locked(pthread_mutex_t *mu)
{
	if (pthread_mutex_trylock(mu) != 0)
		return true;
	(void)pthread_mutex_unlock(mu);
	return false;
}

/* --- ThreadSanitizer annotations
 * ----------------------------------------------
 *
 * Concurrency Kit reads and writes its ring indices with inline assembly,
 * which ThreadSanitizer does not instrument: to TSan, the producer's write
 * of a ring slot and the consumer's read of it are unordered, and so are
 * the writes into the batch behind it. These annotations state such a
 * hand-off at the slot itself (units/edge.c):
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
 * the only place that tests for the sanitizer (no #ifdef inside function
 * bodies).
 */
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

#endif /* SC_BASE_INT_H */

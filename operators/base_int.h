/*
 * base_int.h - the base's internals (see base.h): a condition variable on
 * the monotonic clock, a deadline that cannot wrap, the count of locks a
 * thread holds, and the ThreadSanitizer annotations. Internal to subcirc:
 * runtime/ and units/ include it, nothing outside the library does.
 */
#ifndef SC_BASE_INT_H
#define SC_BASE_INT_H

#include <pthread.h>
#include <stdatomic.h>
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
 * sc__clock_thread_ns - the calling thread's CPU time in nanoseconds
 * (CLOCK_THREAD_CPUTIME_ID): a system call, not a vDSO read, so for what
 * is measured rarely (a traced turn), never per row.
 */
uint64_t sc__clock_thread_ns(void);

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

/* --- locks held by this thread ------------------------------------------
 *
 * A hard fault inside a guarded turn becomes a panic of that unit
 * (runtime/panic.h), which is sound only when the jump out leaves nothing
 * shared half changed. A lock of subcirc held at the fault would stay held
 * for ever, and every later taker would hang; so a lock that a turn can
 * reach is taken through sc__mutex_lock (or counted with sc__lock_enter
 * and sc__lock_leave), which counts the locks this thread holds, and the
 * fault handler refuses to recover (the process dies by the signal, with a
 * message) while the count is not zero. The symbol table's mutex is
 * counted; other modules' locks are not yet, and should be where a turn
 * can take them. Code under these locks never touches caller memory, so
 * such a fault is a bug of subcirc itself, not of a unit.
 *
 * The count is this thread's own and the fault handler reads it on the
 * same thread: volatile (the handler may run between any two
 * instructions), no atomics needed; initial-exec so that the handler reads
 * it without calling into the dynamic TLS machinery.
 */
extern __attribute__((
    tls_model("initial-exec"))) _Thread_local volatile int sc__locks_held;

/* sc__lock_depth - how many subcirc locks this thread holds now.
 * Async-signal-safe. */
static inline int
sc__lock_depth(void)
{
	return sc__locks_held;
}

/* sc__lock_enter, sc__lock_leave - count a lock taken or given back by
 * other means than sc__mutex_lock (a spinlock, a lock of another module):
 * call enter before taking it and leave after giving it back. */
static inline void
sc__lock_enter(void)
{
	sc__locks_held = sc__locks_held + 1;
}

static inline void
sc__lock_leave(void)
{
	sc__locks_held = sc__locks_held - 1;
}

/*
 * sc__mutex_lock, sc__mutex_unlock - pthread_mutex_lock/unlock, counted
 * in sc__lock_depth. The count rises before the lock is tried, so a fault
 * inside pthread_mutex_lock itself is not recovered either, and falls only
 * once it is given back.
 */
static inline void
sc__mutex_lock(pthread_mutex_t *mu)
{
	sc__lock_enter();
	(void)pthread_mutex_lock(mu);
}

static inline void
sc__mutex_unlock(pthread_mutex_t *mu)
{
	(void)pthread_mutex_unlock(mu);
	sc__lock_leave();
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

/* sc__fence_seq_cst - a full fence (the store-load order of a Dekker
 * handshake: "I published, now I look at yours"). gcc refuses
 * atomic_thread_fence under TSan (-Wtsan: it cannot model fences), so
 * there a seq_cst read-modify-write stands in: on x86 a locked
 * instruction is a full barrier too, and TSan sees an atomic. */
static inline void
sc__fence_seq_cst(void)
{
	static _Atomic unsigned sc__fence_word;

	atomic_fetch_add_explicit(&sc__fence_word, 1, memory_order_seq_cst);
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

static inline void
sc__fence_seq_cst(void)
{
	atomic_thread_fence(memory_order_seq_cst);
}

#endif

#endif /* SC_BASE_INT_H */

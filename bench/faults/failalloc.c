/*
 * failalloc.c - the __wrap_* allocators of failalloc.h.
 */
#include "bench/faults/failalloc.h"

#include <errno.h>
#include <stdatomic.h>
#include <stddef.h>

void *__real_malloc(size_t size);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t size);
void *__real_aligned_alloc(size_t align, size_t size);
int __real_posix_memalign(void **p, size_t align, size_t size);
char *__real_strdup(const char *s);
void *__wrap_malloc(size_t size);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t size);
void *__wrap_aligned_alloc(size_t align, size_t size);
int __wrap_posix_memalign(void **p, size_t align, size_t size);
char *__wrap_strdup(const char *s);

/* fault_at and fault_persist are written only while disarmed; arming is a
 * release store, so a thread that sees it armed sees them too. */
static atomic_bool fault_armed;
static atomic_uint_fast64_t fault_seen;	  /* allocations while armed */
static atomic_uint_fast64_t fault_failed; /* of which failed */
static uint64_t fault_at;		  /* the allocation to fail, 1-based */
static bool fault_persist;		  /* and every one after it */

static inline bool
fault_hit(void)
{
	uint64_t k;

	if (__builtin_expect(
		!atomic_load_explicit(&fault_armed, memory_order_acquire), 1))
		return false;
	k = atomic_fetch_add_explicit(&fault_seen, 1, memory_order_relaxed) + 1;
	if (k != fault_at && !(fault_persist && k > fault_at))
		return false;
	atomic_fetch_add_explicit(&fault_failed, 1, memory_order_relaxed);
	errno = ENOMEM;
	return true;
}

void *
__wrap_malloc(size_t size)
{
	return fault_hit() ? NULL : __real_malloc(size);
}

void *
__wrap_calloc(size_t n, size_t size)
{
	return fault_hit() ? NULL : __real_calloc(n, size);
}

/* A failed realloc leaves the block as it was, as the real one does. */
void *
__wrap_realloc(void *p, size_t size)
{
	return fault_hit() ? NULL : __real_realloc(p, size);
}

void *
__wrap_aligned_alloc(size_t align, size_t size)
{
	return fault_hit() ? NULL : __real_aligned_alloc(align, size);
}

int
__wrap_posix_memalign(void **p, size_t align, size_t size)
{
	return fault_hit() ? ENOMEM : __real_posix_memalign(p, align, size);
}

char *
__wrap_strdup(const char *s)
{
	return fault_hit() ? NULL : __real_strdup(s);
}

void
sc_failalloc_arm(uint64_t nth, bool persist)
{
	fault_at = nth;
	fault_persist = persist;
	atomic_store(&fault_seen, 0);
	atomic_store(&fault_failed, 0);
	atomic_store_explicit(&fault_armed, true, memory_order_release);
}

void
sc_failalloc_resume(void)
{
	atomic_store_explicit(&fault_armed, true, memory_order_release);
}

void
sc_failalloc_disarm(void)
{
	atomic_store(&fault_armed, false);
}

uint64_t
sc_failalloc_seen(void)
{
	return atomic_load(&fault_seen);
}

uint64_t
sc_failalloc_failed(void)
{
	return atomic_load(&fault_failed);
}

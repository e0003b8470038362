/*
 * subcirc_alloc.c - the CLI's allocation hook: `subcirc stress --faults
 * alloc` fails the Nth allocation of a run in-process.
 *
 * How. The CLI is linked with ld --wrap for malloc, calloc, realloc,
 * aligned_alloc, posix_memalign and strdup (tools/CMakeLists.txt), the
 * allocators the library calls (tests/stress/wrap_covers.sh checks that
 * list for the library). The library's objects are linked into the CLI
 * statically, so each of their calls, and the CLI's, lands in a __wrap_*
 * below, which calls the real one (jemalloc, or ASan's) unless it is the
 * one to fail. Shared objects (libc itself, jemalloc) are untouched.
 *
 * The countdown. Armed (sc_settle_alloc_hook.arm), `left` is N: each
 * allocation, of any thread, takes one off, and the one that takes the
 * last fails and records it. A compare-and-swap takes it, so two threads
 * never both see 1, nor does one wrap it below 0. Disarmed (`left` 0),
 * an allocation costs one relaxed load and a branch.
 *
 * Not under TSan (which owns the allocator's symbols): the CLI is built
 * without the wrap there (SC_CLI_ALLOC_WRAP unset), installs no hook,
 * and the library refuses alloc by name.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tools/subcirc.h"
#include "units/settle.h"

#ifdef SC_CLI_ALLOC_WRAP

static _Atomic uint64_t left;	 /* allocations to the failing one; 0: off */
static atomic_bool failed_since; /* one failed since the last arm */

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

/* Whether this allocation is the one to fail. */
static inline bool
alloc_fails(void)
{
	uint64_t v = atomic_load_explicit(&left, memory_order_relaxed);

	if (__builtin_expect(v == 0, 1))
		return false;
	while (v && !atomic_compare_exchange_weak_explicit(
			&left, &v, v - 1, memory_order_relaxed,
			memory_order_relaxed))
		;
	if (v != 1)
		return false;
	atomic_store(&failed_since, true);
	return true;
}

void *
__wrap_malloc(size_t size)
{
	return alloc_fails() ? NULL : __real_malloc(size);
}

void *
__wrap_calloc(size_t n, size_t size)
{
	return alloc_fails() ? NULL : __real_calloc(n, size);
}

void *
__wrap_realloc(void *p, size_t size)
{
	/* A failed realloc leaves p as it was, as the real one does. */
	return alloc_fails() ? NULL : __real_realloc(p, size);
}

void *
__wrap_aligned_alloc(size_t align, size_t size)
{
	return alloc_fails() ? NULL : __real_aligned_alloc(align, size);
}

int
__wrap_posix_memalign(void **p, size_t align, size_t size)
{
	return alloc_fails() ? ENOMEM : __real_posix_memalign(p, align, size);
}

char *
__wrap_strdup(const char *s)
{
	return alloc_fails() ? NULL : __real_strdup(s);
}

static void
hook_arm(void *ctx, uint64_t nth)
{
	(void)ctx;
	atomic_store(&failed_since, false);
	atomic_store(&left, nth ? nth : 1);
}

static bool
hook_disarm(void *ctx)
{
	(void)ctx;
	atomic_store(&left, 0);
	return atomic_load(&failed_since);
}

void
cli_alloc_hook_install(void)
{
	struct sc_settle_alloc_hook h = {.arm = hook_arm,
					 .disarm = hook_disarm};

	sc_settle_alloc_hook_set(&h);
}

#else

void
cli_alloc_hook_install(void)
{
	/* Built without the wrap: no allocation can be failed in-process,
	 * so no hook, and sc_settle_fault_parse refuses alloc by name. */
}

#endif

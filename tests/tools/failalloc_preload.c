/*
 * failalloc_preload.c - a test preload, not part of the command line: with
 * LD_PRELOAD=libsubcirc_failalloc.so, allocation number N of the process
 * (malloc, calloc, realloc, aligned_alloc and posix_memalign counted
 * together, from 1) fails as if memory ran out, once, where
 * SC_FAILALLOC_NTH=N; every other call goes to the allocator the program
 * would have used (found with dlsym(RTLD_NEXT), so jemalloc in the normal
 * build). With SC_FAILALLOC_REPORT set, the count is written to stderr at
 * exit ("failalloc: N allocations"), so a test can sweep every N of a run,
 * as SQLite's fault tests fail the Nth allocation for every N.
 *
 * The CLI's tests (tools/CMakeLists.txt) use it to check that running out
 * of memory anywhere ends `subcirc run` with a library error (exit 3) and
 * never with a usage error or a false "differs from the reference". Not
 * for sanitizer builds: ASan and TSan must own malloc themselves.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The allocator underneath, resolved once. */
static void *(*real_malloc)(size_t);
static void *(*real_calloc)(size_t, size_t);
static void *(*real_realloc)(void *, size_t);
static void (*real_free)(void *);
static void *(*real_aligned_alloc)(size_t, size_t);
static int (*real_posix_memalign)(void **, size_t, size_t);

static _Atomic uint64_t calls; /* allocations so far */
static uint64_t nth;	       /* the one that fails; 0: none */
static atomic_int state;       /* 0 unresolved, 1 resolving, 2 ready */

/* What dlsym may allocate while the real functions are looked up: served
 * from here and never freed to the real allocator. */
static _Alignas(64) unsigned char boot[8192];
static _Atomic size_t boot_used;

static void *
boot_alloc(size_t n)
{
	size_t at = atomic_fetch_add(&boot_used, (n + 63) & ~(size_t)63);

	if (at + n > sizeof(boot))
		return NULL;
	return boot + at;
}

static bool
from_boot(const void *p)
{
	return (const unsigned char *)p >= boot &&
	       (const unsigned char *)p < boot + sizeof(boot);
}

static void
resolve(void)
{
	int expect = 0;
	const char *s;

	if (!atomic_compare_exchange_strong(&state, &expect, 1))
		return;
	real_malloc = (void *(*)(size_t))dlsym(RTLD_NEXT, "malloc");
	real_calloc = (void *(*)(size_t, size_t))dlsym(RTLD_NEXT, "calloc");
	real_realloc = (void *(*)(void *, size_t))dlsym(RTLD_NEXT, "realloc");
	real_free = (void (*)(void *))dlsym(RTLD_NEXT, "free");
	real_aligned_alloc =
	    (void *(*)(size_t, size_t))dlsym(RTLD_NEXT, "aligned_alloc");
	real_posix_memalign = (int (*)(void **, size_t, size_t))dlsym(
	    RTLD_NEXT, "posix_memalign");
	s = getenv("SC_FAILALLOC_NTH");
	nth = s ? strtoull(s, NULL, 10) : 0;
	atomic_store(&state, 2);
}

/* Whether this allocation is the one to fail (counts it). */
static bool
fail_now(void)
{
	uint64_t k = atomic_fetch_add(&calls, 1) + 1;

	return nth != 0 && k == nth;
}

static bool
ready(void)
{
	if (atomic_load(&state) != 2)
		resolve();
	return atomic_load(&state) == 2;
}

void *
malloc(size_t n)
{
	if (!ready())
		return boot_alloc(n);
	if (fail_now()) {
		errno = ENOMEM;
		return NULL;
	}
	return real_malloc(n);
}

void *
calloc(size_t k, size_t n)
{
	if (!ready()) {
		if (n && k > SIZE_MAX / n)
			return NULL;
		/* boot is zeroed static storage, never reused. */
		return boot_alloc(k * n);
	}
	if (fail_now()) {
		errno = ENOMEM;
		return NULL;
	}
	return real_calloc(k, n);
}

void *
realloc(void *p, size_t n)
{
	void *q;

	if (from_boot(p)) {
		/* Rare: a boot block grows. Its size is not kept; copy what
		 * it may hold, up to the end of boot. */
		size_t left =
		    (size_t)(boot + sizeof(boot) - (unsigned char *)p);

		if ((q = malloc(n)) != NULL)
			memcpy(q, p, n < left ? n : left);
		return q;
	}
	if (!ready())
		return p ? NULL : boot_alloc(n);
	if (fail_now()) {
		errno = ENOMEM;
		return NULL;
	}
	return real_realloc(p, n);
}

void
free(void *p)
{
	if (!p || from_boot(p))
		return;
	if (ready())
		real_free(p);
}

void *
aligned_alloc(size_t align, size_t n)
{
	if (!ready())
		return NULL;
	if (fail_now()) {
		errno = ENOMEM;
		return NULL;
	}
	return real_aligned_alloc(align, n);
}

int
posix_memalign(void **out, size_t align, size_t n)
{
	if (!ready())
		return ENOMEM;
	if (fail_now())
		return ENOMEM;
	return real_posix_memalign(out, align, n);
}

__attribute__((destructor)) static void
failalloc_report(void)
{
	char line[64];
	int len;

	if (!getenv("SC_FAILALLOC_REPORT"))
		return;
	len = snprintf(line, sizeof(line), "failalloc: %llu allocations\n",
		       (unsigned long long)atomic_load(&calls));
	if (len > 0 && write(STDERR_FILENO, line, (size_t)len) < 0)
		return; /* nothing to do about it at exit */
}

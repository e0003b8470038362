/*
 * mem_linux.c - huge-page hints and the large-buffer cache (see
 * mem_int.h), with Linux's madvise and glibc/jemalloc's
 * malloc_usable_size.
 */
#define _GNU_SOURCE /* MADV_HUGEPAGE, malloc_usable_size */
#include "operators/mem_int.h"

#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>

#define HUGE_PAGE ((uintptr_t)2 << 20)

struct cached {
	void *p;      /* a freed large buffer, or NULL */
	size_t bytes; /* its usable size */
};

static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static struct cached cache[SC__MEM_CACHE_SLOTS]; /* under cache_lock */
static size_t cache_total;			 /* under cache_lock */

void
sc__mem_hint_huge(void *p, size_t len)
{
	uintptr_t lo = ((uintptr_t)p + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
	uintptr_t hi = ((uintptr_t)p + len) & ~(HUGE_PAGE - 1);

	if (!p || len < SC__MEM_BIG || hi <= lo)
		return;
	/* A hint: THP may be off, or the range already populated. */
	(void)madvise((void *)lo, hi - lo, MADV_HUGEPAGE);
}

/* The best cached buffer for `bytes` (smallest that fits, at most half
 * as large again, so little is wasted), taken out of the cache; NULL if
 * none. */
static void *
cache_take(size_t bytes)
{
	size_t best = SC__MEM_CACHE_SLOTS;
	void *p = NULL;

	pthread_mutex_lock(&cache_lock);
	for (size_t i = 0; i < SC__MEM_CACHE_SLOTS; i++) {
		if (!cache[i].p || cache[i].bytes < bytes ||
		    cache[i].bytes - bytes > bytes / 2)
			continue;
		if (best == SC__MEM_CACHE_SLOTS ||
		    cache[i].bytes < cache[best].bytes)
			best = i;
	}
	if (best < SC__MEM_CACHE_SLOTS) {
		p = cache[best].p;
		cache_total -= cache[best].bytes;
		cache[best].p = NULL;
	}
	pthread_mutex_unlock(&cache_lock);
	return p;
}

void *
sc__mem_alloc(size_t bytes)
{
	void *p;

	if (bytes < SC__MEM_BIG)
		return malloc(bytes);
	p = cache_take(bytes);
	if (p)
		return p;
	p = malloc(bytes);
	sc__mem_hint_huge(p, bytes);
	return p;
}

void
sc__mem_free(void *p)
{
	size_t bytes;

	if (!p)
		return;
	bytes = malloc_usable_size(p);
	if (bytes >= SC__MEM_BIG) {
		pthread_mutex_lock(&cache_lock);
		for (size_t i = 0; i < SC__MEM_CACHE_SLOTS; i++) {
			if (cache[i].p ||
			    cache_total + bytes > SC__MEM_CACHE_BYTES)
				continue;
			cache[i] = (struct cached){.p = p, .bytes = bytes};
			cache_total += bytes;
			p = NULL;
			break;
		}
		pthread_mutex_unlock(&cache_lock);
	}
	free(p);
}

void
sc__mem_cache_trim(void)
{
	struct cached out[SC__MEM_CACHE_SLOTS];

	pthread_mutex_lock(&cache_lock);
	for (size_t i = 0; i < SC__MEM_CACHE_SLOTS; i++) {
		out[i] = cache[i];
		cache[i].p = NULL;
	}
	cache_total = 0;
	pthread_mutex_unlock(&cache_lock);
	for (size_t i = 0; i < SC__MEM_CACHE_SLOTS; i++)
		free(out[i].p);
}

size_t
sc__mem_cache_bytes(void)
{
	size_t n;

	pthread_mutex_lock(&cache_lock);
	n = cache_total;
	pthread_mutex_unlock(&cache_lock);
	return n;
}

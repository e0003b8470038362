/*
 * mem_int.h - the large buffers of batches, builders and merges. Internal
 * to operators/. The platform code is in mem_linux.c.
 *
 * Two measures, both for buffers of SC__MEM_BIG bytes or more:
 *
 *   - A huge-page hint before a fresh buffer is first written. A fresh
 *     24 MB buffer costs ~6000 page faults with 4 KB pages (about 20 ms on
 *     a VM), against ~12 with 2 MB pages.
 *   - A small cache of freed large buffers, handed out again by the next
 *     large allocation. jemalloc returns allocations above its
 *     oversize_threshold (8 MB) to the kernel on free, so without the cache
 *     every large batch, merge output or trace level is written into pages
 *     the kernel must fault in and zero first: a third of the time of a
 *     1M + 1M merge was clear_page in the kernel. The cache holds at most
 *     SC__MEM_CACHE_SLOTS buffers and SC__MEM_CACHE_BYTES in all, is shared
 *     by all threads (a mutex; batches are released on any thread), and
 *     sc_batch_cache_trim() empties it.
 */
#ifndef SC_MEM_INT_H
#define SC_MEM_INT_H

#include <stddef.h>

/* Buffers at least this large get the hint and go through the cache. */
#define SC__MEM_BIG ((size_t)4 << 20)

/* The cache's bounds. */
#define SC__MEM_CACHE_SLOTS 8
#define SC__MEM_CACHE_BYTES ((size_t)256 << 20)

/*
 * sc__mem_alloc - `bytes` of memory, like malloc. A large request is served
 * from the cache when a cached buffer fits (at least `bytes`, at most half
 * as large again), else by malloc with the huge-page hint. NULL on failure.
 */
void *sc__mem_alloc(size_t bytes);

/*
 * sc__mem_free - free memory from sc__mem_alloc, malloc or realloc. A large
 * buffer is kept in the cache if there is room. NULL is allowed.
 */
void sc__mem_free(void *p);

/* sc__mem_hint_huge - the huge-page hint alone, for a buffer obtained by
 * realloc. A hint: failure is ignored. */
void sc__mem_hint_huge(void *p, size_t len);

/* sc__mem_cache_trim - free every cached buffer. Any thread. */
void sc__mem_cache_trim(void);

/* sc__mem_cache_bytes - bytes held in the cache now. Any thread. */
size_t sc__mem_cache_bytes(void);

#endif /* SC_MEM_INT_H */

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

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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

/*
 * sc__mem_prefault - ask for [p, p + len) to be faulted in for writing by
 * a background thread (madvise MADV_POPULATE_WRITE, in 2 MB pieces), so
 * that the owner's first writes later find their pages present: the
 * kernel's work of a fresh array (zeroing, and under THP's
 * defrag=madvise a synchronous compaction per huge page: milliseconds
 * on a loaded VM) leaves the thread that runs a step. A hint: it returns
 * at once and may do nothing (a full queue, a kernel without
 * MADV_POPULATE_WRITE, no thread). Each populated page is then read once
 * from the thread (where the machine maps a process's pages lazily, the
 * first touch from user mode costs microseconds even of a present page).
 * Populating and reading change no byte, so the memory may be written
 * meanwhile; but it must stay mapped, so the owner frees it with
 * sc__mem_prefault_free, never free. The thread starts at the first
 * call, blocks every signal, and lives until the process exits. Returns
 * the request's ticket (> 0), for sc__mem_prefault_over, or 0 when
 * nothing was queued. Any thread.
 */
uint64_t sc__mem_prefault(void *p, size_t len);

/*
 * sc__mem_prefault_free - free p, from malloc, once the prefault of
 * `ticket` (0: none) is over: at once if it is, else by the background
 * thread after it (or, its queue full, after waiting for it here). NULL
 * is allowed. Any thread.
 */
void sc__mem_prefault_free(void *p, uint64_t ticket);

/* sc__mem_prefault_over - whether the request of `ticket` is over
 * (populated, or given up: the caller's own writes fault what is left).
 * Any thread. */
bool sc__mem_prefault_over(uint64_t ticket);

/* sc__mem_prefault_done - 4 KB pages populated by the background thread
 * so far, for tests. Any thread. */
size_t sc__mem_prefault_done(void);

/* sc__mem_cache_trim - free every cached buffer. Any thread. */
void sc__mem_cache_trim(void);

/* sc__mem_cache_bytes - bytes held in the cache now. Any thread. */
size_t sc__mem_cache_bytes(void);

#endif /* SC_MEM_INT_H */

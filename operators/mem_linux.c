/*
 * mem_linux.c - huge-page hints, the background prefault and the
 * large-buffer cache (see mem_int.h), with Linux's madvise
 * (MADV_HUGEPAGE, MADV_POPULATE_WRITE) and glibc/jemalloc's
 * malloc_usable_size.
 */
#define _GNU_SOURCE /* the madvise advice above, malloc_usable_size */
#include "operators/mem_int.h"

#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
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

/* --- the prefault thread ---------------------------------------------------
 */

#define PREFAULT_QUEUE 16

struct prefault_req {
	uintptr_t lo, hi;
	uint64_t ticket;
	void *free; /* a free request: the block to free, else NULL */
};

static pthread_mutex_t pf_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t pf_cv = PTHREAD_COND_INITIALIZER;
static struct prefault_req pf_q[PREFAULT_QUEUE]; /* under pf_lock */
static unsigned pf_head, pf_len;		 /* under pf_lock */
static bool pf_started, pf_broken;		 /* under pf_lock */
static uint64_t pf_seq;				 /* under pf_lock */
static atomic_uint_least64_t pf_over; /* the last ticket dealt with */
static atomic_size_t pf_done;
static pthread_cond_t pf_over_cv = PTHREAD_COND_INITIALIZER; /* pf_over rose */

/*
 * Read a word of every 4 KB page of [a, a + n) from user mode. The
 * populate has made the pages present, but where the machine maps a
 * process's pages lazily (a VM with shadow page tables: measured at 5-7
 * us a page on this project's machine, against 0.03 once any thread of
 * the process has touched the page) the owner's first touch would still
 * pay that; a read here pays it off the owner's thread. The memory is
 * mapped: its owner frees it only through sc__mem_prefault_free. The
 * owner may write the bytes meanwhile: what is read is thrown away, so
 * ThreadSanitizer is told not to watch these reads.
 */
__attribute__((no_sanitize("thread"))) static void
touch_pages(uintptr_t a, size_t n)
{
	for (uintptr_t q = a; q < a + n; q += 4096)
		(void)*(volatile const unsigned char *)q;
}

/* Let the waiters of sc__mem_prefault_free know that `ticket` is over. */
static void
mark_over(uint64_t ticket)
{
	pthread_mutex_lock(&pf_lock);
	atomic_store_explicit(&pf_over, ticket, memory_order_release);
	pthread_cond_broadcast(&pf_over_cv);
	pthread_mutex_unlock(&pf_lock);
}

static void *
prefault_main(void *arg)
{
	(void)arg;
	for (;;) {
		struct prefault_req r;

		pthread_mutex_lock(&pf_lock);
		while (pf_len == 0)
			pthread_cond_wait(&pf_cv, &pf_lock);
		r = pf_q[pf_head];
		pf_head = (pf_head + 1) % PREFAULT_QUEUE;
		pf_len--;
		pthread_mutex_unlock(&pf_lock);
		if (r.free) { /* after the requests before it, in order */
			free(r.free);
			continue;
		}
		/* In 2 MB pieces: each madvise holds the address space's
		 * lock only as long as one piece takes. */
		for (uintptr_t a = r.lo; a < r.hi; a += HUGE_PAGE) {
			size_t n = r.hi - a < HUGE_PAGE ? r.hi - a : HUGE_PAGE;

			if (madvise((void *)a, n, MADV_POPULATE_WRITE) != 0) {
				if (errno == EINVAL) { /* an older kernel */
					pthread_mutex_lock(&pf_lock);
					pf_broken = true;
					pthread_mutex_unlock(&pf_lock);
				}
				break; /* no memory */
			}
			touch_pages(a, n);
			atomic_fetch_add_explicit(&pf_done, n / 4096,
						  memory_order_relaxed);
		}
		/* Requests are dealt with in order: one number says which. */
		mark_over(r.ticket);
	}
	return NULL;
}

/* Start the thread with every signal blocked (a process's signals are
 * its other threads' business). Under pf_lock. */
static void
prefault_start(void)
{
	sigset_t all, was;
	pthread_attr_t at;
	pthread_t t;

	pf_started = true;
	if (pthread_attr_init(&at) != 0) {
		pf_broken = true;
		return;
	}
	(void)pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
	(void)sigfillset(&all);
	(void)pthread_sigmask(SIG_SETMASK, &all, &was);
	if (pthread_create(&t, &at, prefault_main, NULL) != 0)
		pf_broken = true;
	(void)pthread_sigmask(SIG_SETMASK, &was, NULL);
	(void)pthread_attr_destroy(&at);
}

uint64_t
sc__mem_prefault(void *p, size_t len)
{
	uintptr_t lo = ((uintptr_t)p + 4095) & ~(uintptr_t)4095;
	uintptr_t hi = ((uintptr_t)p + len) & ~(uintptr_t)4095;
	uint64_t ticket = 0;

	if (!p || hi <= lo)
		return 0;
	pthread_mutex_lock(&pf_lock);
	if (!pf_started)
		prefault_start();
	if (!pf_broken && pf_len < PREFAULT_QUEUE) {
		ticket = ++pf_seq;
		pf_q[(pf_head + pf_len) % PREFAULT_QUEUE] =
		    (struct prefault_req){lo, hi, ticket, NULL};
		pf_len++;
		pthread_cond_signal(&pf_cv);
	}
	pthread_mutex_unlock(&pf_lock);
	return ticket;
}

bool
sc__mem_prefault_over(uint64_t ticket)
{
	return atomic_load_explicit(&pf_over, memory_order_acquire) >= ticket;
}

void
sc__mem_prefault_free(void *p, uint64_t ticket)
{
	if (!p)
		return;
	if (ticket == 0 || sc__mem_prefault_over(ticket)) {
		free(p);
		return;
	}
	pthread_mutex_lock(&pf_lock);
	if (atomic_load_explicit(&pf_over, memory_order_acquire) < ticket &&
	    pf_len < PREFAULT_QUEUE) {
		/* Behind the request: the thread frees it once past that. */
		pf_q[(pf_head + pf_len) % PREFAULT_QUEUE] =
		    (struct prefault_req){0, 0, 0, p};
		pf_len++;
		pthread_cond_signal(&pf_cv);
		p = NULL;
	}
	while (p && atomic_load_explicit(&pf_over, memory_order_acquire) <
			ticket) /* a full queue: wait for the request */
		pthread_cond_wait(&pf_over_cv, &pf_lock);
	pthread_mutex_unlock(&pf_lock);
	free(p);
}

size_t
sc__mem_prefault_done(void)
{
	return atomic_load_explicit(&pf_done, memory_order_relaxed);
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

/*
 * test_mem.c - the background prefault of operators/mem_int.h: a fresh
 * buffer handed to it is resident once its ticket is over, without the
 * caller touching it; a buffer freed through sc__mem_prefault_free is
 * freed after its prefault; a request for nothing is refused with 0.
 */
#define _GNU_SOURCE /* MADV_POPULATE_WRITE, mincore */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>

#include "operators/base.h"
#include "operators/mem_int.h"

#define LEN  ((size_t)8 << 20)
#define PAGE 4096

/* Pages of [p, p + len) resident now. */
static size_t
resident(void *p, size_t len)
{
	unsigned char *v = malloc(len / PAGE);
	size_t n = 0;

	cr_assert_not_null(v);
	cr_assert_eq(mincore(p, len, v), 0);
	for (size_t i = 0; i < len / PAGE; i++)
		n += v[i] & 1;
	free(v);
	return n;
}

/* Wait (at most 10 s) for the request of ticket to be over. */
static bool
wait_over(uint64_t ticket)
{
	uint64_t t0 = sc_clock_ns();
	struct timespec ms = {0, 1000000};

	while (!sc__mem_prefault_over(ticket)) {
		if (sc_clock_ns() - t0 > 10000000000ull)
			return false;
		(void)nanosleep(&ms, NULL);
	}
	return true;
}

/* Whether this kernel populates at all (MADV_POPULATE_WRITE: Linux 5.14). */
static bool
kernel_populates(void)
{
	void *p = mmap(NULL, PAGE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	bool ok;

	cr_assert_neq(p, MAP_FAILED);
	ok = madvise(p, PAGE, MADV_POPULATE_WRITE) == 0;
	(void)munmap(p, PAGE);
	return ok;
}

Test(mem, prefault_makes_a_fresh_buffer_resident_in_the_background)
{
	void *p;
	size_t before = sc__mem_prefault_done();
	uint64_t ticket;

	if (!kernel_populates())
		cr_skip_test("this kernel has no MADV_POPULATE_WRITE");
	p = mmap(NULL, LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		 -1, 0);
	cr_assert_neq(p, MAP_FAILED);
	cr_assert_eq(resident(p, LEN), 0, "a fresh mapping has no pages");
	ticket = sc__mem_prefault(p, LEN);
	cr_assert_gt(ticket, 0, "the request was queued");
	cr_assert(wait_over(ticket), "the prefault never ended");
	cr_assert_eq(resident(p, LEN), LEN / PAGE,
		     "every page is resident, none touched by this thread");
	cr_assert_geq(sc__mem_prefault_done() - before, LEN / PAGE);
	/* Populated, still zero: the prefault writes no byte. */
	for (size_t i = 0; i < LEN; i += PAGE)
		cr_assert_eq(((unsigned char *)p)[i], 0);
	cr_assert_eq(munmap(p, LEN), 0);
}

/*
 * Buffers freed through sc__mem_prefault_free while their prefaults are
 * queued or running are freed after them, never under them: the thread
 * reads every page it populates, which ASan reports as a use after free
 * (and the normal build as a crash, were the memory unmapped) if a free
 * came first. More requests than the queue holds: a free that finds it
 * full waits for its prefault instead.
 */
Test(mem, a_buffer_freed_while_its_prefault_runs_is_freed_after_it)
{
	uint64_t last = 0;
	size_t before = sc__mem_prefault_done();

	if (!kernel_populates())
		cr_skip_test("this kernel has no MADV_POPULATE_WRITE");
	for (int i = 0; i < 24; i++) {
		void *p = malloc(LEN);
		uint64_t t;

		cr_assert_not_null(p);
		t = sc__mem_prefault(p, LEN);
		sc__mem_prefault_free(p, t);
		if (t)
			last = t;
	}
	cr_assert_gt(last, 0, "a request was queued");
	cr_assert(wait_over(last), "the prefault never ended");
	cr_assert_gt(sc__mem_prefault_done() - before, 0,
		     "some pages were populated before their frees");
	sc__mem_prefault_free(NULL, last); /* nothing */
}

Test(mem, prefault_of_nothing_queues_nothing)
{
	char c;

	cr_assert_eq(sc__mem_prefault(NULL, LEN), 0);
	cr_assert_eq(sc__mem_prefault(&c, 1), 0, "no whole page in it");
}

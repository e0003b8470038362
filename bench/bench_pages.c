/*
 * bench_pages.c - what the first write of a page costs the thread that
 * makes it, by how the page was readied by another thread first: the
 * figures behind the background prefault (operators/mem_int.h), which
 * populates a growing row table's next array and then reads a word of
 * each page, so that the thread that steps meets present, touched pages.
 *
 * Cases, each on a fresh 64 MB anonymous mapping, microseconds of this
 * thread's CPU per 4 KB page written (lower is better), against a page
 * this thread has written before (the floor):
 *   - fresh: nothing readied it (the kernel zeroes it on the write);
 *   - populated: another thread ran madvise(MADV_POPULATE_WRITE) on it
 *     (the kernel's part done: what the prefault did alone);
 *   - populated and read: that thread then read a word of each page from
 *     user mode as well (what the prefault does).
 * On a machine that maps a process's pages lazily (a VM with shadow page
 * tables) the second case still costs microseconds a page; on one that
 * does not, the second and third cost the same.
 *
 * Each figure is the median of 5 repetitions (3 with --quick). A kernel
 * without MADV_POPULATE_WRITE (before Linux 5.14) prints the fresh case
 * only.
 */
#define _GNU_SOURCE /* MADV_POPULATE_WRITE */
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>

#include "bench/harness.h"

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

#define LEN  ((size_t)64 << 20)
#define PAGE ((size_t)4096)

enum ready { FRESH, POPULATED, POPULATED_READ };

struct job {
	unsigned char *p;
	enum ready how;
	bool ok;
};

/* The other thread: populate, and read a word a page if asked. */
static void *
ready_main(void *arg)
{
	struct job *j = arg;

	j->ok = madvise(j->p, LEN, MADV_POPULATE_WRITE) == 0;
	if (j->ok && j->how == POPULATED_READ)
		for (size_t i = 0; i < LEN; i += PAGE)
			(void)*(volatile const unsigned char *)(j->p + i);
	return NULL;
}

/* One repetition: ready a fresh mapping as `how` says, then write a byte
 * of every page here; us per page of the write, and of writing again
 * (*again). 1 done, 0 when the kernel cannot populate, -1 when no
 * mapping or thread could be had. */
static int
once(enum ready how, double *us, double *again)
{
	struct job j = {.how = how, .ok = true};
	pthread_t t;
	uint64_t t0, t1, t2;

	j.p = mmap(NULL, LEN, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (j.p == MAP_FAILED)
		return -1;
	if (how != FRESH) {
		if (pthread_create(&t, NULL, ready_main, &j) != 0) {
			(void)munmap(j.p, LEN);
			return -1;
		}
		(void)pthread_join(t, NULL);
	}
	if (j.ok) {
		t0 = sc_bench_cpu_ns();
		for (size_t i = 0; i < LEN; i += PAGE)
			j.p[i] = 1;
		t1 = sc_bench_cpu_ns();
		for (size_t i = 0; i < LEN; i += PAGE)
			j.p[i] = 2;
		t2 = sc_bench_cpu_ns();
		*us = (double)(t1 - t0) / 1e3 / ((double)LEN / (double)PAGE);
		*again = (double)(t2 - t1) / 1e3 / ((double)LEN / (double)PAGE);
	}
	(void)munmap(j.p, LEN);
	return j.ok ? 1 : 0;
}

int
main(int argc, char **argv)
{
	static const char *name[] = {
	    "first write of a fresh page",
	    "first write of a page another thread populated",
	    "first write of a page another thread populated and read"};
	int reps = sc_bench_init(argc, argv) ? 3 : 5;

	for (int how = FRESH; how <= POPULATED_READ; how++) {
		double us[5], again[5];
		int r, rc = 1;

		for (r = 0; r < reps && rc == 1; r++)
			rc = once((enum ready)how, &us[r], &again[r]);
		if (rc < 0) {
			(void)fprintf(stderr, "bench_pages: no memory or "
					      "thread for a 64 MB mapping\n");
			return 1;
		}
		if (rc == 0) {
			(void)fprintf(stderr, "bench_pages: no "
					      "MADV_POPULATE_WRITE here; the "
					      "populated cases skipped\n");
			break;
		}
		sc_bench_emit("pages", name[how], "us/page",
			      sc_bench_median(us, (size_t)reps),
			      "a page this thread wrote before",
			      sc_bench_median(again, (size_t)reps));
	}
	return 0;
}

/*
 * mem_linux.c - memory hints on Linux (see mem_int.h).
 */
#define _GNU_SOURCE /* MADV_HUGEPAGE */
#include "operators/mem_int.h"

#include <stdint.h>
#include <sys/mman.h>

#define HUGE_PAGE ((uintptr_t)2 << 20)

void
sc__mem_hint_huge(void *p, size_t len)
{
	uintptr_t lo = ((uintptr_t)p + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
	uintptr_t hi = ((uintptr_t)p + len) & ~(HUGE_PAGE - 1);

	if (len < SC__MEM_HUGE_MIN || hi <= lo)
		return;
	/* A hint: THP may be off, or the range already populated. */
	(void)madvise((void *)lo, hi - lo, MADV_HUGEPAGE);
}

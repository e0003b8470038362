/*
 * mem_int.h - memory hints for the large buffers of batches and builders.
 * Internal to operators/. The platform code is in mem_linux.c.
 */
#ifndef SC_MEM_INT_H
#define SC_MEM_INT_H

#include <stddef.h>

/* Buffers at least this large are worth a huge-page hint. */
#define SC__MEM_HUGE_MIN ((size_t)4 << 20)

/*
 * sc__mem_hint_huge - advise the kernel to back [p, p + len) with huge
 * pages where it can, before the buffer is first written. A fresh 24 MB
 * buffer costs ~6000 page faults with 4 KB pages (about 20 ms on a VM),
 * against ~12 with 2 MB pages, and the first write of a new batch is on the
 * consolidation's critical path. Only the 2 MB-aligned middle of the range
 * is advised. A hint: failure is ignored.
 */
void sc__mem_hint_huge(void *p, size_t len);

#endif /* SC_MEM_INT_H */

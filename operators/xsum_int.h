/*
 * xsum_int.h - internals of the exact accumulator, for its tests only.
 */
#ifndef SC_XSUM_INT_H
#define SC_XSUM_INT_H

#include <stddef.h>

/*
 * sc__xsum_set_calloc - route the extension's allocation through fn (NULL
 * restores calloc), so a test can fail a growth and check that nothing
 * changed. Process-wide and unsynchronised: set it only from a
 * single-threaded test.
 */
void sc__xsum_set_calloc(void *(*fn)(size_t, size_t));

#endif /* SC_XSUM_INT_H */

/*
 * words_int.h - integers wider than 128 bits as arrays of words (two's
 * complement, low word first), for the group states that keep a count or
 * a sum exactly whatever a partial integral reaches (aggregate.c,
 * multiagg.c). Internal.
 */
#ifndef SC_WORDS_INT_H
#define SC_WORDS_INT_H

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "operators/schema.h"

/* w (n words) += p. The callers' bounds (groups_int.h) rule out an
 * overflow: fewer than 2^64 products, each below 2^127. */
static inline void
sc__words_add(uint64_t *w, size_t n, __int128 p)
{
	unsigned __int128 u = (unsigned __int128)p, t;
	uint64_t ext = p < 0 ? UINT64_MAX : 0, carry = 0, add;

	for (size_t i = 0; i < n; i++) {
		add = i == 0 ? (uint64_t)u : i == 1 ? (uint64_t)(u >> 64) : ext;
		t = (unsigned __int128)w[i] + add + carry;
		w[i] = (uint64_t)t;
		carry = (uint64_t)(t >> 64);
	}
}

/* Whether w (n words) is an int64; if so *out is its value. */
static inline bool
sc__words_i64(const uint64_t *w, size_t n, int64_t *out)
{
	uint64_t ext = w[0] >> 63 ? UINT64_MAX : 0;

	for (size_t i = 1; i < n; i++)
		if (w[i] != ext)
			return false;
	*out = (int64_t)w[0];
	return true;
}

/* The sign of w (n words): -1, 0 or 1. */
static inline int
sc__words_sign(const uint64_t *w, size_t n)
{
	if (w[n - 1] >> 63)
		return -1;
	for (size_t i = 0; i < n; i++)
		if (w[i])
			return 1;
	return 0;
}

/* w (n >= 2 words) as a double: rounded once while it fits 128 bits,
 * else from its top 128 bits. */
static inline double
sc__words_double(const uint64_t *w, size_t n)
{
	uint64_t ext = w[1] >> 63 ? UINT64_MAX : 0;
	size_t top = n - 1;

	while (top >= 2 && w[top] == ext)
		top--;
	if (top < 2)
		return (double)(__int128)(((unsigned __int128)w[1] << 64) |
					  w[0]);
	return ldexp(
	    (double)(__int128)(((unsigned __int128)w[top] << 64) | w[top - 1]),
	    (int)(64 * (top - 1)));
}

/* w * v for an integer column's word v, exactly. */
static inline __int128
sc__words_product(enum sc_type t, uint64_t v, int64_t w)
{
	if (t == SC_TYPE_I64)
		return (__int128)sc_dec_i64(v) * w;
	return (__int128)v * w;
}

#endif /* SC_WORDS_INT_H */

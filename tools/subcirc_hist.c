/*
 * subcirc_hist.c - the latency histogram (subcirc.h): log-linear buckets,
 * 16 per power of two, so that a percentile is within about 6% and an add
 * is one relaxed atomic increment on the worker that saw the latency.
 */
#include <stdatomic.h>

#include "tools/subcirc.h"

static unsigned
hist_bucket(uint64_t v)
{
	unsigned e;

	if (v < HIST_SUB)
		return (unsigned)v;
	e = 63u - (unsigned)__builtin_clzll(v); /* >= 4 */
	return (e - 3) * HIST_SUB + (unsigned)((v >> (e - 4)) & (HIST_SUB - 1));
}

/* The smallest value of bucket i. */
static uint64_t
hist_floor(unsigned i)
{
	unsigned e;

	if (i < 2 * HIST_SUB)
		return i < HIST_SUB ? i : HIST_SUB + (i - HIST_SUB);
	e = i / HIST_SUB + 3;
	return ((uint64_t)(HIST_SUB + i % HIST_SUB)) << (e - 4);
}

void
hist_add(struct hist *h, uint64_t v)
{
	atomic_fetch_add_explicit(&h->b[hist_bucket(v)], 1,
				  memory_order_relaxed);
}

uint64_t
hist_take(struct hist *h, uint64_t *out, bool reset)
{
	uint64_t n = 0;

	for (unsigned i = 0; i < HIST_BUCKETS; i++) {
		out[i] = reset ? atomic_exchange_explicit(&h->b[i], 0,
							  memory_order_relaxed)
			       : atomic_load_explicit(&h->b[i],
						      memory_order_relaxed);
		n += out[i];
	}
	return n;
}

double
hist_quantile_us(const uint64_t *c, uint64_t n, double q)
{
	uint64_t rank = (uint64_t)(q * (double)n), seen = 0;

	if (n == 0)
		return 0.0;
	if (rank >= n)
		rank = n - 1;
	for (unsigned i = 0; i < HIST_BUCKETS; i++) {
		seen += c[i];
		if (seen > rank) {
			uint64_t lo = hist_floor(i);
			uint64_t hi =
			    i + 1 < HIST_BUCKETS ? hist_floor(i + 1) : lo;

			return ((double)lo + (double)hi) / 2.0 / 1000.0;
		}
	}
	return 0.0;
}

/*
 * cli_hist.c - the latency histogram (cli.h): log-linear buckets,
 * 16 per power of two (the layout of HdrHistogram with one significant
 * hex digit), so that an add is one relaxed atomic increment on the
 * worker that saw the latency, and a percentile is within 1/32 of the
 * sample it stands for.
 *
 * Why 1/32: a value v >= 32 falls in a bucket [lo, lo + w) with
 * w = 2^(e-4) <= lo / 16 (lo >= 16 * 2^(e-4)); the percentile reports
 * the bucket's midpoint, at most w / 2 <= lo / 32 <= v / 32 from v.
 * Values below 32 have buckets of width 1 and are reported exactly.
 *
 * cli_hist_add_linear adds the n values of an arithmetic sequence in one call
 * (a batch whose events arrived evenly spread over its interval), with as
 * many increments as the sequence crosses buckets, not n.
 */
#include <math.h>
#include <stdatomic.h>

#include "tools/cli.h"

static unsigned
hist_bucket(uint64_t v)
{
	unsigned e;

	if (v < CLI_HIST_SUB)
		return (unsigned)v;
	e = 63u - (unsigned)__builtin_clzll(v); /* >= 4 */
	return (e - 3) * CLI_HIST_SUB +
	       (unsigned)((v >> (e - 4)) & (CLI_HIST_SUB - 1));
}

/* The smallest value of bucket i; past the last bucket, UINT64_MAX (so
 * that hist_floor(i + 1) is bucket i's end, saturated). */
static uint64_t
hist_floor(unsigned i)
{
	unsigned e;

	if (i < 2 * CLI_HIST_SUB)
		return i;
	if (i > CLI_HIST_BUCKETS - 1)
		return UINT64_MAX;
	e = i / CLI_HIST_SUB + 3;
	return ((uint64_t)(CLI_HIST_SUB + i % CLI_HIST_SUB)) << (e - 4);
}

static void
hist_max(struct cli_hist *h, uint64_t v)
{
	uint64_t m = atomic_load_explicit(&h->max, memory_order_relaxed);

	while (v > m &&
	       !atomic_compare_exchange_weak_explicit(
		   &h->max, &m, v, memory_order_relaxed, memory_order_relaxed))
		;
}

void
cli_hist_add_n(struct cli_hist *h, uint64_t v, uint64_t n)
{
	if (n == 0)
		return;
	atomic_fetch_add_explicit(&h->b[hist_bucket(v)], n,
				  memory_order_relaxed);
	hist_max(h, v);
}

void
cli_hist_add(struct cli_hist *h, uint64_t v)
{
	cli_hist_add_n(h, v, 1);
}

void
cli_hist_add_linear(struct cli_hist *h, uint64_t first, double step, uint64_t n)
{
	uint64_t j = 0;

	if (n == 0)
		return;
	if (!(step > 0)) {
		cli_hist_add_n(h, first, n);
		return;
	}
	/* Value j is first + floor(j * step); the values of one bucket are
	 * a run of j, found from the bucket's end: the first j at or past
	 * it is ceil((end - first) / step), checked against the floor so
	 * that a rounding of the division never puts a value in the wrong
	 * bucket. */
	while (j < n) {
		uint64_t v = first + (uint64_t)((double)j * step);
		unsigned b = hist_bucket(v);
		uint64_t end = hist_floor(b + 1), k;

		if (end == UINT64_MAX) {
			k = n;
		} else {
			double x = ceil((double)(end - first) / step);

			k = x >= (double)n ? n : (uint64_t)x;
			while (k > j + 1 &&
			       first + (uint64_t)((double)(k - 1) * step) >=
				   end)
				k--;
			while (k < n &&
			       first + (uint64_t)((double)k * step) < end)
				k++;
		}
		if (k <= j)
			k = j + 1;
		atomic_fetch_add_explicit(&h->b[b], k - j,
					  memory_order_relaxed);
		j = k;
	}
	hist_max(h, first + (uint64_t)((double)(n - 1) * step));
}

uint64_t
cli_hist_take(struct cli_hist *h, struct cli_hist_counts *out, bool reset)
{
	uint64_t n = 0;

	for (unsigned i = 0; i < CLI_HIST_BUCKETS; i++) {
		out->b[i] =
		    reset
			? atomic_exchange_explicit(&h->b[i], 0,
						   memory_order_relaxed)
			: atomic_load_explicit(&h->b[i], memory_order_relaxed);
		n += out->b[i];
	}
	out->max =
	    reset ? atomic_exchange_explicit(&h->max, 0, memory_order_relaxed)
		  : atomic_load_explicit(&h->max, memory_order_relaxed);
	out->n = n;
	return n;
}

/* The 1-based nearest rank of quantile q among n: ceil(q * n), with a
 * product that is an integer up to rounding (0.99 * 100) taken as that
 * integer; at least 1, at most n. */
static uint64_t
hist_rank(double q, uint64_t n)
{
	double x = q * (double)n, r = nearbyint(x);
	uint64_t k;

	k = fabs(x - r) <= 1e-9 * (x > 1 ? x : 1) ? (uint64_t)r
						  : (uint64_t)ceil(x);
	if (k < 1)
		k = 1;
	return k > n ? n : k;
}

double
cli_hist_quantile_ns(const struct cli_hist_counts *c, double q)
{
	uint64_t rank, seen = 0;

	if (c->n == 0)
		return 0.0;
	rank = hist_rank(q, c->n);
	if (rank == c->n)
		return (double)c->max;
	for (unsigned i = 0; i < CLI_HIST_BUCKETS; i++) {
		seen += c->b[i];
		if (seen >= rank) {
			uint64_t lo = hist_floor(i), hi = hist_floor(i + 1);
			double mid = hi - lo <= 1
					 ? (double)lo
					 : ((double)lo + (double)hi) / 2;

			/* The max's bucket: never past the max itself. */
			return mid > (double)c->max && c->max >= lo
				   ? (double)c->max
				   : mid;
		}
	}
	return (double)c->max;
}

double
cli_hist_quantile_us(const struct cli_hist_counts *c, double q)
{
	return cli_hist_quantile_ns(c, q) / 1000.0;
}

uint64_t
cli_hist_bucket_floor_ns(unsigned i)
{
	return hist_floor(i);
}

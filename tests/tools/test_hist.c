/*
 * test_hist.c - the CLI's latency histogram (tools/cli_hist.c):
 * percentiles by nearest rank against known samples, with the exact
 * values the buckets give and the stated bound (within 1/32 of the sample
 * at the rank), and cli_hist_add_linear against one add per value.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tests/support/prop.h"
#include "tools/cli.h"

#define SUITE "hist"

static struct cli_hist h;
static struct cli_hist_counts c;

static void
reset(void)
{
	memset(&h, 0, sizeof(h));
}

static double
q_ns(double q)
{
	(void)cli_hist_take(&h, &c, false);
	return cli_hist_quantile_ns(&c, q);
}

Test(hist, empty_histogram_has_every_percentile_zero)
{
	reset();
	cr_assert_eq(q_ns(0.5), 0.0);
	cr_assert_eq(q_ns(1.0), 0.0);
	cr_assert_eq(c.n, 0);
}

/* 1..100 ns once each: nearest rank gives the 50th, 90th, 99th and 100th
 * values; the buckets are [50, 52), [88, 92), [96, 100) and [100, 104),
 * whose midpoints are reported, except that no percentile passes the max. */
Test(hist, percentiles_of_1_to_100_ns_are_the_bucket_midpoints_at_the_ranks)
{
	reset();
	for (uint64_t v = 1; v <= 100; v++)
		cli_hist_add(&h, v);
	cr_assert_eq(q_ns(0.50), 51.0);
	cr_assert_eq(q_ns(0.90), 90.0);
	cr_assert_eq(q_ns(0.99), 98.0);
	cr_assert_eq(q_ns(0.999), 100.0);
	cr_assert_eq(q_ns(1.0), 100.0);
	cr_assert_eq(c.n, 100);
	cr_assert_eq(c.max, 100);
}

/* Below 32 ns every bucket is one value wide: percentiles are exact. */
Test(hist, values_below_32_ns_are_exact)
{
	reset();
	for (uint64_t v = 0; v < 32; v++)
		cli_hist_add(&h, v);
	cr_assert_eq(q_ns(0.50), 15.0); /* rank 16 of 0..31 */
	cr_assert_eq(q_ns(0.25), 7.0);
	cr_assert_eq(q_ns(1.0), 31.0);
}

/* 999 samples of 1 us and one of 1 ms: p99 is 1 us (its bucket
 * [992, 1024) ns, midpoint 1008), p99.9 is the 999th sample (still 1 us),
 * and only the max is the outlier, exactly. */
Test(hist, one_outlier_in_1000_shows_only_in_the_max)
{
	reset();
	cli_hist_add_n(&h, 1000, 999);
	cli_hist_add(&h, 1000000);
	cr_assert_eq(q_ns(0.99), 1008.0);
	cr_assert_eq(q_ns(0.999), 1008.0);
	cr_assert_eq(q_ns(1.0), 1000000.0);
	cr_assert_eq(cli_hist_quantile_us(&c, 1.0), 1000.0);
}

/* The rank is ceil(q * n) even where q * n is an integer only up to
 * rounding (0.99 * 100 is 99.00000000000001 in doubles): the 99th of 100,
 * not the 100th. */
Test(hist, rank_of_an_integral_product_is_not_rounded_up)
{
	reset();
	cli_hist_add_n(&h, 10, 99);
	cli_hist_add(&h, 20);
	cr_assert_eq(q_ns(0.99), 10.0);
	cr_assert_eq(q_ns(0.991), 20.0);
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* Log-uniform samples from 1 ns to 10 s: every percentile is within 1/32
 * of the sorted sample at its nearest rank. */
Test(hist, percentile_is_within_1_32_of_the_sample_at_its_rank)
{
	static const double qs[] = {0.1, 0.5, 0.9, 0.99, 0.999, 1.0};
	uint64_t base = sc_prop_seed(0x4157), cases = sc_prop_count(20);
	static uint64_t v[5000];

	for (uint64_t k = 0; k < cases; k++) {
		uint64_t seed = base + k;
		struct sc_rng r;
		size_t n = 1 + (size_t)(seed % 5000);

		sc_rng_seed(&r, seed);
		reset();
		for (size_t i = 0; i < n; i++) {
			v[i] = (uint64_t)exp(sc_rng_unit(&r) * log(1e10));
			cli_hist_add(&h, v[i]);
		}
		qsort(v, n, sizeof(v[0]), cmp_u64);
		for (size_t i = 0; i < sizeof(qs) / sizeof(qs[0]); i++) {
			size_t rank = (size_t)ceil(qs[i] * (double)n - 1e-9);
			double want = (double)v[rank ? rank - 1 : 0];
			double got = q_ns(qs[i]);

			SC_PROP_ASSERT(seed, SUITE,
				       "percentile_is_within_1_32_of_the_"
				       "sample_at_its_rank",
				       fabs(got - want) <= want / 32.0,
				       "q %g of %zu: %g, sample %g", qs[i], n,
				       got, want);
		}
	}
}

/* A batch's events spread evenly: one call gives the counts of one add
 * per value, bucket by bucket, and the same max. */
Test(hist, add_linear_counts_as_one_add_per_value)
{
	static struct cli_hist one;
	static struct cli_hist_counts a, b;
	uint64_t base = sc_prop_seed(0x11ae), cases = sc_prop_count(200);

	for (uint64_t k = 0; k < cases; k++) {
		uint64_t seed = base + k;
		struct sc_rng r;
		uint64_t first, n;
		double step;

		sc_rng_seed(&r, seed);
		first = sc_rng_below(&r, 4) == 0
			    ? sc_rng_below(&r, 64)
			    : (uint64_t)exp(sc_rng_unit(&r) * log(1e9));
		step = sc_rng_below(&r, 8) == 0
			   ? 0.0
			   : exp(sc_rng_unit(&r) * log(1e5)) / 7.0;
		n = 1 + sc_rng_below(&r, 2000);
		reset();
		memset(&one, 0, sizeof(one));
		cli_hist_add_linear(&h, first, step, n);
		for (uint64_t j = 0; j < n; j++)
			cli_hist_add(&one,
				     first + (uint64_t)((double)j * step));
		(void)cli_hist_take(&h, &a, false);
		(void)cli_hist_take(&one, &b, false);
		SC_PROP_ASSERT(
		    seed, SUITE, "add_linear_counts_as_one_add_per_value",
		    memcmp(a.b, b.b, sizeof(a.b)) == 0 && a.n == b.n &&
			a.max == b.max,
		    "first %llu step %g n %llu: n %llu/%llu max "
		    "%llu/%llu",
		    (unsigned long long)first, step, (unsigned long long)n,
		    (unsigned long long)a.n, (unsigned long long)b.n,
		    (unsigned long long)a.max, (unsigned long long)b.max);
	}
}

Test(hist, take_with_reset_leaves_it_empty)
{
	reset();
	cli_hist_add_n(&h, 5000, 3);
	cr_assert_eq(cli_hist_take(&h, &c, true), 3);
	cr_assert_eq(c.max, 5000);
	cr_assert_eq(cli_hist_take(&h, &c, false), 0);
	cr_assert_eq(c.max, 0);
}

/* The largest values keep their own buckets (2^63 opens the last power of
 * two, 2^64 - 1 closes it), and the max says the largest exactly. */
Test(hist, largest_value_is_counted_in_the_last_bucket)
{
	reset();
	cli_hist_add(&h, UINT64_MAX);
	cli_hist_add(&h, (uint64_t)1 << 63);
	(void)cli_hist_take(&h, &c, false);
	cr_assert_eq(c.n, 2);
	cr_assert_eq(c.b[CLI_HIST_BUCKETS - CLI_HIST_SUB], 1);
	cr_assert_eq(c.b[CLI_HIST_BUCKETS - 1], 1);
	cr_assert_eq(cli_hist_quantile_ns(&c, 1.0), (double)UINT64_MAX);
}

/*
 * test_xsum.c - the exact accumulator against an exact reference.
 *
 * The reference below is written for this test and shares nothing with
 * operators/xsum.c: a sign-magnitude big integer counting units of 2^-1075
 * (one bit finer than the smallest subnormal, so that every midpoint
 * between two doubles is an integer), built from frexp/ldexp, rounded by
 * truncating to the double grid and comparing the remainder with half an
 * ulp, and a mean chosen among neighbouring candidates by comparing
 * |S - d * q| exactly.
 */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "operators/xsum.h"
#include "operators/xsum_int.h"
#include "tests/support/prop.h"

/* ---- the reference: big integers over the 2^-1075 grid ------------------ */

#define RW 84 /* 32-bit words: 2688 bits, room for sum * 2^63 */

struct ref {
	int neg;	/* 1 when negative (never for zero) */
	uint32_t w[RW]; /* magnitude, lowest word first */
};

static void
ref_zero(struct ref *a)
{
	memset(a, 0, sizeof(*a));
}

static bool
ref_is_zero(const struct ref *a)
{
	for (int i = 0; i < RW; i++)
		if (a->w[i])
			return false;
	return true;
}

static int
mag_cmp(const uint32_t *a, const uint32_t *b)
{
	for (int i = RW - 1; i >= 0; i--)
		if (a[i] != b[i])
			return a[i] < b[i] ? -1 : 1;
	return 0;
}

static void
mag_add(uint32_t *a, const uint32_t *b)
{
	uint64_t c = 0;

	for (int i = 0; i < RW; i++) {
		c += (uint64_t)a[i] + b[i];
		a[i] = (uint32_t)c;
		c >>= 32;
	}
	if (c)
		cr_assert_fail("reference overflow");
}

/* a -= b, where a >= b */
static void
mag_sub(uint32_t *a, const uint32_t *b)
{
	int64_t br = 0;

	for (int i = 0; i < RW; i++) {
		int64_t t = (int64_t)a[i] - b[i] - br;

		br = t < 0;
		a[i] = (uint32_t)(t + (br << 32));
	}
}

/* a += b (signed) */
static void
ref_add(struct ref *a, const struct ref *b)
{
	if (a->neg == b->neg) {
		mag_add(a->w, b->w);
	} else if (mag_cmp(a->w, b->w) >= 0) {
		mag_sub(a->w, b->w);
	} else {
		uint32_t t[RW];

		memcpy(t, b->w, sizeof(t));
		mag_sub(t, a->w);
		memcpy(a->w, t, sizeof(t));
		a->neg = b->neg;
	}
	if (ref_is_zero(a))
		a->neg = 0;
}

static void
mag_mul_small(uint32_t *a, uint32_t m)
{
	uint64_t c = 0;

	for (int i = 0; i < RW; i++) {
		c += (uint64_t)a[i] * m;
		a[i] = (uint32_t)c;
		c >>= 32;
	}
	if (c)
		cr_assert_fail("reference overflow");
}

static void
mag_shl(uint32_t *a, int s)
{
	int words = s / 32, bits = s % 32;

	for (int i = RW - words; i < RW; i++)
		if (a[i])
			cr_assert_fail("reference overflow");
	if (bits && (uint64_t)a[RW - 1 - words] >> (32 - bits))
		cr_assert_fail("reference overflow");
	for (int i = RW - 1; i >= 0; i--) {
		uint64_t lo = i - words >= 0 ? a[i - words] : 0;
		uint64_t below = i - words - 1 >= 0 ? a[i - words - 1] : 0;

		a[i] = (uint32_t)((lo << bits) | (below >> (32 - bits)));
	}
}

/* a *= |q| (q up to 2^64 - 1 in magnitude), sign flipped if neg. */
static void
ref_mul(struct ref *a, uint64_t q, bool neg)
{
	uint32_t hi[RW];

	memcpy(hi, a->w, sizeof(hi));
	if (q != 1)
		mag_mul_small(a->w, (uint32_t)q);
	if (q >> 32) {
		mag_mul_small(hi, (uint32_t)(q >> 32));
		mag_shl(hi, 32);
		mag_add(a->w, hi);
	}
	a->neg ^= neg;
	if (ref_is_zero(a))
		a->neg = 0;
}

/* The exact value of a finite double. */
static void
ref_from_double(struct ref *a, double v)
{
	int e;
	double f = frexp(fabs(v), &e);
	uint64_t m = (uint64_t)ldexp(f, 53); /* exact: f has 53 bits */
	int s = e - 53 + 1075;		     /* units of 2^-1075 */

	ref_zero(a);
	if (v == 0)
		return;
	for (; s < 0; s++) {
		cr_assert_eq(m & 1, 0);
		m >>= 1;
	}
	a->w[0] = (uint32_t)m;
	a->w[1] = (uint32_t)(m >> 32);
	mag_shl(a->w, s);
	a->neg = v < 0;
}

static int
ref_top_bit(const struct ref *a)
{
	for (int i = RW - 1; i >= 0; i--)
		if (a->w[i])
			return 32 * i + 31 - __builtin_clz(a->w[i]);
	return -1;
}

static int
ref_bit(const struct ref *a, int i)
{
	return i >= 0 && (a->w[i / 32] >> (i % 32)) & 1;
}

/* The double nearest to a, ties to even; >= DBL_MAX + ulp/2 is inf. */
static double
ref_round(const struct ref *a)
{
	int h = ref_top_bit(a), l;
	uint64_t mant = 0;
	struct ref t, half;
	double d;
	int c;

	if (h < 0)
		return 0.0;
	if (h - 1075 >= 1024)
		return a->neg ? -INFINITY : INFINITY;
	l = h - 52 > 1 ? h - 52 : 1; /* the double grid stops at 2^-1074 */
	for (int i = h; i >= l; i--)
		mant = (mant << 1) | (uint64_t)ref_bit(a, i);
	d = ldexp((double)mant, l - 1075);
	/* remainder below the last kept bit, against half a unit of it */
	ref_zero(&t);
	memcpy(t.w, a->w, (size_t)(l / 32) * sizeof(t.w[0]));
	if (l % 32)
		t.w[l / 32] = a->w[l / 32] & ((UINT32_C(1) << (l % 32)) - 1);
	ref_zero(&half);
	half.w[(l - 1) / 32] = UINT32_C(1) << ((l - 1) % 32);
	c = mag_cmp(t.w, half.w);
	if (c > 0 || (c == 0 && (mant & 1)))
		d = nextafter(d, INFINITY);
	return a->neg ? -d : d;
}

/* |s - d * q| compared with |s - e * q| */
static int
ref_cmp_err(const struct ref *s, double d, double e, uint64_t q, bool qneg)
{
	struct ref x, y;

	ref_from_double(&x, d);
	ref_mul(&x, q, qneg);
	x.neg = !x.neg && !ref_is_zero(&x);
	ref_add(&x, s);
	ref_from_double(&y, e);
	ref_mul(&y, q, qneg);
	y.neg = !y.neg && !ref_is_zero(&y);
	ref_add(&y, s);
	return mag_cmp(x.w, y.w);
}

static bool
even_mant(double d)
{
	uint64_t b;

	memcpy(&b, &d, sizeof(b));
	return (b & 1) == 0;
}

/* s / count rounded to nearest, ties to even; for finite quotients. */
static double
ref_mean(const struct ref *s, int64_t count)
{
	uint64_t q = count < 0 ? -(uint64_t)count : (uint64_t)count;
	double guess = ref_round(s) / (double)count, best;

	if (!isfinite(guess)) {
		/* a sum beyond DBL_MAX: guess from s / 2^64 instead */
		struct ref t = *s;

		memmove(t.w, t.w + 2, sizeof(t.w) - 2 * sizeof(t.w[0]));
		t.w[RW - 1] = t.w[RW - 2] = 0;
		guess = ldexp(ref_round(&t) / (double)count, 64);
	}
	cr_assert(isfinite(guess), "ref_mean needs a finite quotient");
	best = guess;
	double c = guess;
	for (int i = 0; i < 4; i++)
		c = nextafter(c, -INFINITY);
	for (int i = 0; i < 9; i++, c = nextafter(c, INFINITY)) {
		int r = ref_cmp_err(s, c, best, q, count < 0);

		if (r < 0 || (r == 0 && even_mant(c) && !even_mant(best)))
			best = c;
	}
	return best == 0 ? 0.0 : best;
}

/* ---- helpers ---------------------------------------------------------------
 */

/* Bit-exact equality (so -0.0 differs from 0.0); any NaN equals any NaN. */
static bool
same_bits(double a, double b)
{
	uint64_t ua, ub;

	if (isnan(a) && isnan(b))
		return true;
	memcpy(&ua, &a, sizeof(ua));
	memcpy(&ub, &b, sizeof(ub));
	return ua == ub;
}

static double
read_of(const struct sc_xsum *x)
{
	double d = -1234.5;

	cr_assert_eq(sc_xsum_read(x, &d), 0);
	return d;
}

static double
from_bits(uint64_t b)
{
	double d;

	memcpy(&d, &b, sizeof(d));
	return d;
}

/* A finite double from one of several families that stress the sum. */
static double
gen_value(struct sc_rng *r)
{
	uint64_t sign = sc_rng_next(r) & (UINT64_C(1) << 63);
	uint64_t mant = sc_rng_next(r) & ((UINT64_C(1) << 52) - 1);
	uint64_t e;

	switch (sc_rng_below(r, 8)) {
	case 0: /* any finite exponent */
		e = sc_rng_below(r, 2047);
		break;
	case 1: /* subnormal */
		e = 0;
		break;
	case 2: /* near DBL_MAX */
		e = 2046 - sc_rng_below(r, 3);
		break;
	case 3: /* near the smallest normals */
		e = 1 + sc_rng_below(r, 3);
		break;
	case 4: /* a power of two */
		e = sc_rng_below(r, 2047);
		mant = 0;
		break;
	case 5: /* few significant bits, so sums are often exact ties */
		e = 1000 + sc_rng_below(r, 60);
		mant &= ~((UINT64_C(1) << 45) - 1);
		break;
	default: /* data-like magnitudes: 2^-30 .. 2^40 */
		e = 1023 - 30 + sc_rng_below(r, 71);
		break;
	}
	return from_bits(sign | (e << 52) | mant);
}

static int64_t
gen_weight(struct sc_rng *r)
{
	switch (sc_rng_below(r, 10)) {
	case 0:
		return sc_rng_range(r, -1000, 1000);
	case 1:
		return (int64_t)sc_rng_next(r); /* any int64, INT64_MIN too */
	case 2:
		return -1;
	default:
		return 1;
	}
}

/* ours and the reference both get w * v */
static void
both_add(struct sc_xsum *x, struct ref *s, double v, int64_t w)
{
	struct ref t;

	ref_from_double(&t, v);
	ref_mul(&t, w < 0 ? -(uint64_t)w : (uint64_t)w, w < 0);
	ref_add(s, &t);
	cr_assert_eq(sc_xsum_add_weighted(x, v, w), 0);
}

/* ---- properties -------------------------------------------------------------
 */

/*
 * One random case: a few families of additions (mixed, cancelling, ties),
 * read and compared bit for bit after each phase.
 */
static void
random_case(uint64_t seed, const char *test)
{
	struct sc_rng r;
	struct sc_xsum x;
	struct ref s;
	double vals[40];
	int64_t ws[40];
	int n;

	sc_rng_seed(&r, seed);
	sc_xsum_init(&x);
	ref_zero(&s);
	n = 1 + (int)sc_rng_below(&r, 40);
	for (int i = 0; i < n; i++) {
		vals[i] = gen_value(&r);
		ws[i] = sc_rng_below(&r, 4) ? (sc_rng_below(&r, 2) ? 1 : -1)
					    : gen_weight(&r);
		both_add(&x, &s, vals[i], ws[i]);
	}
	double want = ref_round(&s), got = read_of(&x);
	SC_PROP_ASSERT(seed, "xsum", test, same_bits(got, want),
		       "mixed sum: got %a want %a", got, want);

	/* heavy cancellation: take back all but a few, plus a tiny one */
	for (int i = 0; i < n; i++)
		if (sc_rng_below(&r, 4))
			both_add(&x, &s, vals[i],
				 ws[i] == INT64_MIN ? INT64_MAX : -ws[i]);
	both_add(&x, &s, ldexp(1.0, -1074 + (int)sc_rng_below(&r, 200)), 1);
	want = ref_round(&s);
	got = read_of(&x);
	SC_PROP_ASSERT(seed, "xsum", test, same_bits(got, want),
		       "after cancellation: got %a want %a", got, want);

	/* an exact tie: a normal d plus half its ulp (toward either side) */
	double d = gen_value(&r);
	double up = nextafter(d, d < 0 ? -INFINITY : INFINITY);
	if (isfinite(up) && fabs(d) >= ldexp(1.0, -1000)) {
		sc_xsum_clear(&x);
		ref_zero(&s);
		both_add(&x, &s, d, 1);
		both_add(&x, &s, (up - d) / 2, 1);
		both_add(&x, &s, 1e300, 1); /* disturb, then take back */
		both_add(&x, &s, 1e300, -1);
		want = ref_round(&s);
		got = read_of(&x);
		SC_PROP_ASSERT(seed, "xsum", test, same_bits(got, want),
			       "tie %a + ulp/2: got %a want %a", d, got, want);
	}
	sc_xsum_fini(&x);
}

Test(xsum, random_sums_round_like_the_exact_reference, .timeout = 60)
{
	uint64_t base = sc_prop_seed(0x5eed0001), n = sc_prop_count(20000);

	for (uint64_t i = 0; i < n; i++)
		random_case(base + i,
			    "random_sums_round_like_the_exact_reference");
}

/*
 * Long random sequences, across many normalisations, window moves and
 * growth: inline adds and retracts of data-like values with outliers,
 * weighted adds, streams, merges and negations, checked at checkpoints.
 */
Test(xsum, long_mixed_sequences_match_the_reference, .timeout = 60)
{
	uint64_t base = sc_prop_seed(0x5eed0005), n = sc_prop_count(30);
	const char *t = "long_mixed_sequences_match_the_reference";
	static double arr[300];

	for (uint64_t c = 0; c < n; c++) {
		struct sc_rng r;
		struct sc_xsum x, y;
		struct ref s, sy;

		sc_rng_seed(&r, base + c);
		sc_xsum_init(&x);
		sc_xsum_init(&y);
		ref_zero(&s);
		ref_zero(&sy);
		for (int op = 0; op < 2500; op++) {
			uint64_t k = sc_rng_below(&r, 1000);
			double v = sc_rng_below(&r, 30)
				       ? sc_rng_unit(&r) * 2e6 - 1e6
				       : gen_value(&r);

			if (k < 700) {
				both_add(&x, &s, v,
					 sc_rng_below(&r, 3) ? 1 : -1);
			} else if (k < 900) {
				both_add(&y, &sy, v, gen_weight(&r));
			} else if (k < 990) {
				int m = (int)sc_rng_below(&r, 300);
				struct ref tv;

				for (int i = 0; i < m; i++) {
					arr[i] = sc_rng_below(&r, 50)
						     ? sc_rng_unit(&r) * 1e3
						     : gen_value(&r);
					ref_from_double(&tv, arr[i]);
					ref_add(&s, &tv);
				}
				cr_assert_eq(
				    sc_xsum_add_array(&x, arr, (size_t)m, NULL),
				    0);
			} else if (k < 995) {
				cr_assert_eq(sc_xsum_merge(&x, &y), 0);
				ref_add(&s, &sy);
			} else {
				cr_assert_eq(sc_xsum_negate(&x), 0);
				s.neg = !s.neg && !ref_is_zero(&s);
			}
			if (op % 500 == 499) {
				double want = ref_round(&s), got = read_of(&x);

				SC_PROP_ASSERT(
				    base + c, "xsum", t, same_bits(got, want),
				    "op %d: got %a want %a", op, got, want);
			}
		}
		sc_xsum_fini(&x);
		sc_xsum_fini(&y);
	}
}

/* Sums that stay compact (the read path that looks at three digits):
 * values within 2^120 of each other, cancellations and exact ties. */
Test(xsum, compact_reads_round_like_the_exact_reference, .timeout = 60)
{
	uint64_t base = sc_prop_seed(0x5eed0006), n = sc_prop_count(5000);
	const char *t = "compact_reads_round_like_the_exact_reference";

	for (uint64_t c = 0; c < n; c++) {
		struct sc_rng r;
		struct sc_xsum x;
		struct ref s;
		uint64_t lo;
		double vals[30];
		int64_t ws[30];
		int m;

		sc_rng_seed(&r, base + c);
		sc_xsum_init(&x);
		ref_zero(&s);
		lo = 40 + sc_rng_below(&r, 1900); /* exponent field */
		m = 1 + (int)sc_rng_below(&r, 30);
		for (int i = 0; i < m; i++) {
			uint64_t e = lo + sc_rng_below(&r, 70);
			uint64_t bits =
			    (sc_rng_next(&r) & (UINT64_C(1) << 63)) |
			    (e << 52) |
			    (sc_rng_next(&r) & ((UINT64_C(1) << 52) - 1));

			vals[i] = from_bits(bits);
			ws[i] = sc_rng_below(&r, 4) ? 1 : -1;
			both_add(&x, &s, vals[i], ws[i]);
		}
		double d = ref_round(&s);
		double up = nextafter(d, d < 0 ? -INFINITY : INFINITY);
		double half = (up - d) / 2;
		uint64_t mode = sc_rng_below(&r, 4);

		if (mode > 0 && d != 0 && isfinite(up) && fabs(d) > 0x1p-900) {
			if (mode != 2) /* exactly d + ulp/2: take all back */
				for (int i = 0; i < m; i++)
					both_add(&x, &s, vals[i], -ws[i]);
			else /* near the midpoint, by S - d */
				both_add(&x, &s, d, -1);
			both_add(&x, &s, d, 1);
			both_add(&x, &s, half, 1);
			if (mode == 3) /* a tie broken far below the top */
				both_add(&x, &s,
					 (sc_rng_below(&r, 2) ? half : -half) *
					     ldexp(1.0, -20 - (int)sc_rng_below(
								  &r, 30)),
					 1);
		}
		double want = ref_round(&s), got = read_of(&x);
		SC_PROP_ASSERT(base + c, "xsum", t,
			       sc_xsum_is_compact(&x) && same_bits(got, want),
			       "compact %d: got %a want %a",
			       sc_xsum_is_compact(&x), got, want);
		sc_xsum_fini(&x);
	}
}

Test(xsum, exact_ties_round_to_even)
{
	struct sc_xsum x;

	sc_xsum_init(&x);
	/* 2^53 + 1 is halfway between 2^53 and 2^53 + 2: the even is 2^53 */
	sc_xsum_add(&x, 0x1p53);
	sc_xsum_add(&x, 1.0);
	cr_assert(same_bits(read_of(&x), 0x1p53));
	/* 2^53 + 3 is halfway between 2^53 + 2 and 2^53 + 4: 2^53 + 4 */
	sc_xsum_add(&x, 2.0);
	cr_assert(same_bits(read_of(&x), 0x1p53 + 4));
	/* the same tie, negative */
	sc_xsum_negate(&x);
	cr_assert(same_bits(read_of(&x), -0x1p53 - 4));
	/* a hair past the tie rounds up */
	sc_xsum_clear(&x);
	sc_xsum_add(&x, 0x1p53);
	sc_xsum_add(&x, 1.0);
	sc_xsum_add(&x, 0x1p-1074);
	cr_assert(same_bits(read_of(&x), 0x1p53 + 2));
	sc_xsum_fini(&x);
}

/* Balanced digits 1, -2^31, 0 over a negative rest: the top three digits
 * are exactly 2^63 and the rest pulls the value just below a power of 2. */
Test(xsum, just_below_a_digit_boundary_reads_right)
{
	struct sc_xsum x;
	struct ref s, t;

	sc_xsum_init(&x);
	sc_xsum_add(&x, 0x1p44);
	sc_xsum_add(&x, -0x1p-29);
	ref_from_double(&s, 0x1p44);
	ref_from_double(&t, -0x1p-29);
	ref_add(&s, &t);
	cr_assert(sc_xsum_is_compact(&x));
	cr_assert(same_bits(read_of(&x), ref_round(&s)), "%a", read_of(&x));
	/* the same in the grown form */
	sc_xsum_add(&x, 0x1p-1000);
	sc_xsum_retract(&x, 0x1p-1000);
	cr_assert(!sc_xsum_is_compact(&x));
	cr_assert(same_bits(read_of(&x), ref_round(&s)), "%a", read_of(&x));
	sc_xsum_fini(&x);
}

Test(xsum, subnormal_sums_are_exact)
{
	struct sc_xsum x;

	sc_xsum_init(&x);
	sc_xsum_add(&x, 0x1p-1074);
	sc_xsum_add(&x, 0x1p-1074);
	cr_assert(same_bits(read_of(&x), 0x1p-1073));
	sc_xsum_add(&x, DBL_MIN);
	sc_xsum_retract(&x, 0x1p-1073);
	cr_assert(same_bits(read_of(&x), DBL_MIN));
	sc_xsum_retract(&x, 2 * DBL_MIN);
	cr_assert(same_bits(read_of(&x), -DBL_MIN));
	sc_xsum_fini(&x);
}

Test(xsum, beyond_dbl_max_reads_inf_and_comes_back)
{
	struct sc_xsum x;
	double m;

	sc_xsum_init(&x);
	sc_xsum_add(&x, DBL_MAX);
	sc_xsum_add(&x, DBL_MAX);
	cr_assert(same_bits(read_of(&x), INFINITY));
	cr_assert_eq(sc_xsum_mean(&x, 2, &m), 0);
	cr_assert(same_bits(m, DBL_MAX), "mean %a", m);
	sc_xsum_retract(&x, DBL_MAX);
	cr_assert(same_bits(read_of(&x), DBL_MAX));
	sc_xsum_negate(&x);
	sc_xsum_add(&x, -DBL_MAX);
	cr_assert(same_bits(read_of(&x), -INFINITY));
	sc_xsum_fini(&x);
}

Test(xsum, zero_reads_positive_zero)
{
	struct sc_xsum x;

	sc_xsum_init(&x);
	cr_assert(same_bits(read_of(&x), 0.0));
	sc_xsum_add(&x, -0.0);
	sc_xsum_add(&x, -5.5);
	sc_xsum_add(&x, 5.5);
	cr_assert(same_bits(read_of(&x), 0.0));
	sc_xsum_fini(&x);
}

/*
 * The point of the module: 1M retract/add cycles over a 1000-value group,
 * values spread over 15 decimal orders so that a plain double drifts.
 */
Test(xsum, million_retract_add_cycles_stay_bit_equal_to_a_fresh_sum,
     .timeout = 60)
{
	enum { N = 1000, CYCLES = 1000000 };
	static double vals[N];
	struct sc_rng r;
	struct sc_xsum run, fresh;
	double plain = 0, plain_fresh = 0;
	uint64_t seed = sc_prop_seed(0x5eed0002);

	sc_rng_seed(&r, seed);
	sc_xsum_init(&run);
	for (int i = 0; i < N; i++) {
		vals[i] = (sc_rng_below(&r, 2) ? 1 : -1) *
			  pow(10.0, sc_rng_unit(&r) * 15 - 6);
		cr_assert_eq(sc_xsum_add(&run, vals[i]), 0);
		plain += vals[i];
	}
	for (int c = 0; c < CYCLES; c++) {
		int i = (int)sc_rng_below(&r, N);
		double nv = (sc_rng_below(&r, 2) ? 1 : -1) *
			    pow(10.0, sc_rng_unit(&r) * 15 - 6);

		cr_assert_eq(sc_xsum_retract(&run, vals[i]), 0);
		cr_assert_eq(sc_xsum_add(&run, nv), 0);
		plain -= vals[i];
		plain += nv;
		vals[i] = nv;
	}
	sc_xsum_init(&fresh);
	for (int i = 0; i < N; i++) {
		sc_xsum_add(&fresh, vals[i]);
		plain_fresh += vals[i];
	}
	double exact = read_of(&fresh), ours = read_of(&run);
	cr_log_info("after %d cycles: exact %.17g, ours %.17g, "
		    "plain running double %.17g (drift %.3g), "
		    "plain fresh double %.17g",
		    CYCLES, exact, ours, plain, plain - exact, plain_fresh);
	SC_PROP_ASSERT(
	    seed, "xsum",
	    "million_retract_add_cycles_stay_bit_equal_to_a_fresh_sum",
	    plain != exact, "the plain double did not drift");
	SC_PROP_ASSERT(
	    seed, "xsum",
	    "million_retract_add_cycles_stay_bit_equal_to_a_fresh_sum",
	    same_bits(ours, exact) && sc_xsum_equal(&run, &fresh),
	    "ours %a drifted from %a", ours, exact);
	sc_xsum_fini(&run);
	sc_xsum_fini(&fresh);
}

Test(xsum, inf_and_nan_counts_retract)
{
	struct sc_xsum x, fresh;

	sc_xsum_init(&x);
	sc_xsum_init(&fresh);
	sc_xsum_add(&x, 0.1);
	sc_xsum_add(&x, 0.2);
	sc_xsum_add(&fresh, 0.2);
	sc_xsum_add(&fresh, 0.1);
	cr_assert_eq(sc_xsum_add(&x, INFINITY), 0);
	cr_assert(same_bits(read_of(&x), INFINITY));
	cr_assert_eq(sc_xsum_add(&x, NAN), 0);
	cr_assert(isnan(read_of(&x)));
	cr_assert_eq(sc_xsum_retract(&x, INFINITY), 0);
	cr_assert(isnan(read_of(&x)));
	cr_assert_eq(sc_xsum_retract(&x, NAN), 0);
	cr_assert(same_bits(read_of(&x), read_of(&fresh)));
	cr_assert(sc_xsum_equal(&x, &fresh));
	sc_xsum_fini(&x);
	sc_xsum_fini(&fresh);
}

Test(xsum, infinities_combine_like_ieee_addition)
{
	struct sc_xsum x;

	sc_xsum_init(&x);
	sc_xsum_add(&x, 1.0);
	sc_xsum_add(&x, -INFINITY);
	cr_assert(same_bits(read_of(&x), -INFINITY));
	sc_xsum_add(&x, INFINITY);
	cr_assert(isnan(read_of(&x)));
	sc_xsum_retract(&x, -INFINITY);
	cr_assert(same_bits(read_of(&x), INFINITY));
	/* twice retracted +inf: a count of -1, which contributes -inf */
	sc_xsum_retract(&x, INFINITY);
	sc_xsum_retract(&x, INFINITY);
	cr_assert(same_bits(read_of(&x), -INFINITY));
	sc_xsum_add_weighted(&x, INFINITY, 1);
	cr_assert(same_bits(read_of(&x), 1.0));
	sc_xsum_fini(&x);
}

/* Counts are 128 bits (xsum.h, "Special values"): past int64 is no
 * error, but doubling by merges reaches the limit, and there a count that
 * would wrap is refused with x unchanged. */
Test(xsum, special_count_that_would_wrap_is_refused)
{
	struct sc_xsum x, one;
	int i;

	sc_xsum_init(&x);
	sc_xsum_init(&one);
	cr_assert_eq(sc_xsum_add_weighted(&x, INFINITY, INT64_MAX), 0);
	cr_assert_eq(sc_xsum_add(&x, INFINITY), 0, "2^63 fits in 128 bits");
	cr_assert_eq(sc_xsum_add_weighted(&x, NAN, INT64_MIN), 0);
	/* +inf: 2^63 -> 2^126 after 63 doublings; NaN: -2^63 -> -2^126. */
	for (i = 0; i < 63; i++)
		cr_assert_eq(sc_xsum_merge(&x, &x), 0, "doubling %d", i);
	cr_assert_eq(sc_xsum_merge(&x, &x), SC_EOVERFLOW,
		     "+inf's 2^127 would wrap");
	cr_assert(strstr(sc_errmsg(), "sc_xsum_merge") != NULL);
	/* A NaN count of -2^127 is reached from the other side... */
	cr_assert_eq(sc_xsum_add_weighted(&one, NAN, -1), 0);
	cr_assert_eq(sc_xsum_add_weighted(&x, INFINITY, -1), 0);
	for (i = 0; i < 126; i++)
		cr_assert_eq(sc_xsum_merge(&one, &one), 0);
	cr_assert_eq(sc_xsum_merge(&x, &one), 0); /* NaN: -2^127 */
	/* ... and has no negation. */
	cr_assert_eq(sc_xsum_negate(&x), SC_EOVERFLOW);
	cr_assert(strstr(sc_errmsg(), "sc_xsum_negate") != NULL);
	sc_xsum_fini(&x);
	sc_xsum_fini(&one);
}

Test(xsum, weighted_add_is_w_times_v_exactly)
{
	struct sc_xsum x, y;
	struct ref s;

	sc_xsum_init(&x);
	sc_xsum_init(&y);
	ref_zero(&s);
	both_add(&x, &s, 0.1, 3);
	for (int i = 0; i < 3; i++)
		sc_xsum_add(&y, 0.1);
	cr_assert(sc_xsum_equal(&x, &y));
	both_add(&x, &s, DBL_MAX, INT64_MIN);
	both_add(&x, &s, 0x1p-1074, INT64_MAX);
	both_add(&x, &s, -3.75, 0);
	cr_assert(same_bits(read_of(&x), ref_round(&s)));
	double m;
	cr_assert_eq(sc_xsum_mean(&x, INT64_MIN, &m), 0);
	cr_assert(same_bits(m, ref_mean(&s, INT64_MIN)), "mean %a", m);
	sc_xsum_fini(&x);
	sc_xsum_fini(&y);
}

static void
mean_case(uint64_t seed, const char *test)
{
	struct sc_rng r;
	struct sc_xsum x;
	struct ref s;
	int n;
	int64_t count;
	double got, want;

	sc_rng_seed(&r, seed);
	sc_xsum_init(&x);
	ref_zero(&s);
	n = 1 + (int)sc_rng_below(&r, 12);
	for (int i = 0; i < n; i++) {
		double v = gen_value(&r);

		if (fabs(v) > 0x1p1000) /* keep the rounded sum finite */
			v = ldexp(v, -100);
		both_add(&x, &s, v, sc_rng_below(&r, 3) ? 1 : -1);
	}
	switch (sc_rng_below(&r, 3)) {
	case 0:
		count = sc_rng_range(&r, -10, 10);
		break;
	case 1:
		count = sc_rng_range(&r, -1000000, 1000000);
		break;
	default:
		count = (int64_t)(sc_rng_next(&r) >> sc_rng_below(&r, 64));
		break;
	}
	if (count == 0)
		count = 3;
	cr_assert_eq(sc_xsum_mean(&x, count, &got), 0);
	want = ref_mean(&s, count);
	SC_PROP_ASSERT(seed, "xsum", test, same_bits(got, want),
		       "mean of %d values / %lld: got %a want %a", n,
		       (long long)count, got, want);
	sc_xsum_fini(&x);
}

Test(xsum, mean_rounds_once_like_the_exact_reference, .timeout = 60)
{
	uint64_t base = sc_prop_seed(0x5eed0003), n = sc_prop_count(10000);

	for (uint64_t i = 0; i < n; i++)
		mean_case(base + i,
			  "mean_rounds_once_like_the_exact_reference");
}

Test(xsum, mean_is_not_the_rounded_sum_divided)
{
	struct sc_xsum x;
	double m;

	/* (2^53 + 1) / 2: the rounded sum 2^53 / 2 is off by half */
	sc_xsum_init(&x);
	sc_xsum_add(&x, 0x1p53);
	sc_xsum_add(&x, 1.0);
	cr_assert_eq(sc_xsum_mean(&x, 2, &m), 0);
	cr_assert(same_bits(m, 0x1p52 + 0.5), "mean %a", m);
	cr_assert_eq(sc_xsum_mean(&x, -2, &m), 0);
	cr_assert(same_bits(m, -0x1p52 - 0.5), "mean %a", m);
	sc_xsum_add(&x, INFINITY);
	cr_assert_eq(sc_xsum_mean(&x, -2, &m), 0);
	cr_assert(same_bits(m, -INFINITY));
	sc_xsum_fini(&x);
}

/* A random accumulator: values from all families, some specials. */
static void
random_acc(struct sc_rng *r, struct sc_xsum *x, bool specials)
{
	int n = (int)sc_rng_below(r, 20);

	sc_xsum_init(x);
	for (int i = 0; i < n; i++)
		cr_assert_eq(sc_xsum_add_weighted(x, gen_value(r),
						  sc_rng_below(r, 2) ? 1 : -7),
			     0);
	if (specials && sc_rng_below(r, 4) == 0)
		sc_xsum_add(x, sc_rng_below(r, 2) ? INFINITY : NAN);
}

Test(xsum, merge_and_negate_obey_the_group_laws)
{
	uint64_t base = sc_prop_seed(0x5eed0004), n = sc_prop_count(1000);
	const char *t = "merge_and_negate_obey_the_group_laws";

	for (uint64_t i = 0; i < n; i++) {
		struct sc_rng r;
		struct sc_xsum a, b, c, ab, ba, ab_c, a_bc, bc, z, fresh;

		sc_rng_seed(&r, base + i);
		random_acc(&r, &a, true);
		random_acc(&r, &b, true);
		random_acc(&r, &c, true);
		sc_xsum_init(&ab);
		sc_xsum_merge(&ab, &a);
		sc_xsum_merge(&ab, &b);
		sc_xsum_init(&ba);
		sc_xsum_merge(&ba, &b);
		sc_xsum_merge(&ba, &a);
		SC_PROP_ASSERT(base + i, "xsum", t, sc_xsum_equal(&ab, &ba),
			       "a + b != b + a");
		sc_xsum_init(&ab_c);
		sc_xsum_merge(&ab_c, &ab);
		sc_xsum_merge(&ab_c, &c);
		sc_xsum_init(&bc);
		sc_xsum_merge(&bc, &b);
		sc_xsum_merge(&bc, &c);
		sc_xsum_init(&a_bc);
		sc_xsum_merge(&a_bc, &a);
		sc_xsum_merge(&a_bc, &bc);
		SC_PROP_ASSERT(base + i, "xsum", t, sc_xsum_equal(&ab_c, &a_bc),
			       "(a + b) + c != a + (b + c)");
		/* a + (-a) is the empty sum */
		sc_xsum_init(&z);
		sc_xsum_merge(&z, &a);
		sc_xsum_negate(&z);
		sc_xsum_merge(&z, &a);
		sc_xsum_init(&fresh);
		SC_PROP_ASSERT(base + i, "xsum", t, sc_xsum_equal(&z, &fresh),
			       "a + (-a) != 0");
		/* -(-a) = a, and read(-a) = -read(a) */
		double ra = read_of(&a);
		sc_xsum_negate(&a);
		double rn = read_of(&a);
		SC_PROP_ASSERT(base + i, "xsum", t,
			       isnan(ra) ? isnan(rn) : same_bits(rn, -ra + 0.0),
			       "read(-a) %a, read(a) %a", rn, ra);
		sc_xsum_negate(&a);
		SC_PROP_ASSERT(base + i, "xsum", t, same_bits(read_of(&a), ra),
			       "-(-a) != a");
		/* a + a = 2a, through aliasing */
		sc_xsum_clear(&z);
		sc_xsum_merge(&z, &a);
		sc_xsum_merge(&z, &z);
		sc_xsum_merge(&a, &a);
		SC_PROP_ASSERT(base + i, "xsum", t, sc_xsum_equal(&z, &a),
			       "a + a via alias differs");
		sc_xsum_fini(&a);
		sc_xsum_fini(&b);
		sc_xsum_fini(&c);
		sc_xsum_fini(&ab);
		sc_xsum_fini(&ba);
		sc_xsum_fini(&ab_c);
		sc_xsum_fini(&bc);
		sc_xsum_fini(&a_bc);
		sc_xsum_fini(&z);
		sc_xsum_fini(&fresh);
	}
}

Test(xsum, data_like_values_stay_in_one_cache_line)
{
	struct sc_xsum x;
	struct sc_rng r;

	cr_assert_eq(sizeof(struct sc_xsum), 64);
	sc_rng_seed(&r, 7);
	sc_xsum_init(&x);
	for (int i = 0; i < 100000; i++)
		sc_xsum_add(&x, (double)sc_rng_range(&r, -100000, 10000000) /
				    100.0);
	cr_assert(sc_xsum_is_compact(&x));
	cr_assert_eq(sc_xsum_bytes(&x), 64);
	sc_xsum_fini(&x);
}

Test(xsum, window_moves_for_a_lone_far_value)
{
	struct sc_xsum x;

	sc_xsum_init(&x);
	sc_xsum_add(&x, 1e200);
	sc_xsum_add(&x, 3e200);
	cr_assert(sc_xsum_is_compact(&x));
	cr_assert(same_bits(read_of(&x), 1e200 + 3e200));
	sc_xsum_retract(&x, 1e200);
	sc_xsum_retract(&x, 3e200);
	sc_xsum_add(&x, 1e-300);
	cr_assert(sc_xsum_is_compact(&x));
	cr_assert(same_bits(read_of(&x), 1e-300));
	sc_xsum_fini(&x);
}

Test(xsum, compact_form_grows_and_stays_exact)
{
	struct sc_xsum x, fresh;
	struct ref s;

	sc_xsum_init(&x);
	ref_zero(&s);
	both_add(&x, &s, 1.5, 1);
	cr_assert(sc_xsum_is_compact(&x));
	both_add(&x, &s, 1e300, 1);
	both_add(&x, &s, 1e-300, 1);
	both_add(&x, &s, 0x1p-1074, 1);
	cr_assert(!sc_xsum_is_compact(&x));
	cr_assert_gt(sc_xsum_bytes(&x), 64);
	cr_assert(same_bits(read_of(&x), ref_round(&s)));
	both_add(&x, &s, 1e300, -1);
	cr_assert(same_bits(read_of(&x), ref_round(&s)));
	/* many adds in the grown form, in and out of the window */
	for (int i = 0; i < 5000; i++) {
		both_add(&x, &s, i * 1e-290, 1);
		both_add(&x, &s, i * 0.25, 1);
	}
	cr_assert(same_bits(read_of(&x), ref_round(&s)));
	for (int i = 0; i < 5000; i++) {
		both_add(&x, &s, i * 1e-290, -1);
		both_add(&x, &s, i * 0.25, -1);
	}
	both_add(&x, &s, 1e-300, -1);
	both_add(&x, &s, 0x1p-1074, -1);
	sc_xsum_init(&fresh);
	sc_xsum_add(&fresh, 1.5);
	cr_assert(sc_xsum_equal(&x, &fresh));
	cr_assert(same_bits(read_of(&x), 1.5));
	cr_assert_eq(sc_xsum_clear(&x), 0);
	cr_assert(sc_xsum_is_compact(&x));
	cr_assert_eq(sc_xsum_bytes(&x), 64);
	sc_xsum_fini(&x);
	sc_xsum_fini(&fresh);
}

Test(xsum, long_runs_carry_past_the_window_top)
{
	struct sc_xsum x;
	struct ref s;
	const double v = 0x1.fffffffffffffp+96;

	/* 2^22 adds of a value whose high piece lands in the window's top
	 * limb: the sum, near 2^119, outgrows it and the window moves up. */
	sc_xsum_init(&x);
	for (int i = 0; i < (1 << 22); i++)
		cr_assert_eq(sc_xsum_add(&x, v), 0);
	ref_from_double(&s, v);
	ref_mul(&s, 1 << 22, false);
	cr_assert(same_bits(read_of(&x), ref_round(&s)));
	cr_assert(sc_xsum_is_compact(&x));
	/* the same through the streaming form */
	static double arr[1 << 16];
	struct sc_xsum y;
	for (int i = 0; i < (1 << 16); i++)
		arr[i] = v;
	sc_xsum_init(&y);
	for (int k = 0; k < (1 << 6); k++)
		cr_assert_eq(sc_xsum_add_array(&y, arr, 1 << 16, NULL), 0);
	cr_assert(sc_xsum_equal(&x, &y));
	sc_xsum_fini(&x);
	sc_xsum_fini(&y);
}

Test(xsum, add_array_equals_one_add_per_value)
{
	enum { N = 10000 };
	static double v[N];
	struct sc_xsum a, b;
	struct sc_rng r;
	size_t done = 0;

	sc_rng_seed(&r, 11);
	for (int i = 0; i < N; i++)
		v[i] = sc_rng_below(&r, 50) ? sc_rng_unit(&r) * 1e4 - 5e3
					    : gen_value(&r);
	v[17] = INFINITY;
	v[5000] = NAN;
	sc_xsum_init(&a);
	sc_xsum_init(&b);
	cr_assert_eq(sc_xsum_add_array(&a, v, N, &done), 0);
	cr_assert_eq(done, N);
	for (int i = 0; i < N; i++)
		cr_assert_eq(sc_xsum_add(&b, v[i]), 0);
	cr_assert(sc_xsum_equal(&a, &b));
	/* without the outliers, a long stream stays compact and exact */
	sc_xsum_clear(&a);
	sc_xsum_clear(&b);
	for (int i = 0; i < N; i++)
		v[i] = sc_rng_unit(&r) * 1e4 - 5e3;
	for (int k = 0; k < 30; k++)
		cr_assert_eq(sc_xsum_add_array(&a, v, N, NULL), 0);
	for (int k = 0; k < 30; k++)
		for (int i = 0; i < N; i++)
			sc_xsum_add(&b, v[i]);
	cr_assert(sc_xsum_is_compact(&a));
	cr_assert(sc_xsum_equal(&a, &b));
	cr_assert(same_bits(read_of(&a), read_of(&b)));
	sc_xsum_fini(&a);
	sc_xsum_fini(&b);
}

static void *
failing_calloc(size_t n, size_t size)
{
	(void)n;
	(void)size;
	return NULL;
}

Test(xsum, failed_growth_changes_nothing)
{
	struct sc_xsum x, copy;

	sc_xsum_init(&x);
	sc_xsum_add(&x, 1.25);
	sc_xsum_add(&x, 1e-10);
	sc_xsum_init(&copy);
	sc_xsum_merge(&copy, &x);
	sc__xsum_set_calloc(failing_calloc);
	cr_assert_eq(sc_xsum_add(&x, 1e300), SC_ENOMEM);
	cr_assert_eq(sc_xsum_add(&x, INFINITY), SC_ENOMEM);
	cr_assert_eq(sc_xsum_retract(&x, NAN), SC_ENOMEM);
	sc__xsum_set_calloc(NULL);
	cr_assert(strstr(sc_errmsg(), "SC_ENOMEM") != NULL);
	cr_assert(sc_xsum_is_compact(&x));
	cr_assert(sc_xsum_equal(&x, &copy));
	cr_assert(same_bits(read_of(&x), 1.25 + 1e-10));
	/* an array stops at the value that needed memory */
	double arr[4] = {1.0, 2.0, 1e300, 4.0};
	size_t done = 99;
	sc__xsum_set_calloc(failing_calloc);
	cr_assert_eq(sc_xsum_add_array(&x, arr, 4, &done), SC_ENOMEM);
	sc__xsum_set_calloc(NULL);
	cr_assert_eq(done, 2);
	sc_xsum_retract(&x, 1.0);
	sc_xsum_retract(&x, 2.0);
	cr_assert(sc_xsum_equal(&x, &copy));
	/* and with memory, the same call succeeds */
	cr_assert_eq(sc_xsum_add(&x, 1e300), 0);
	cr_assert(same_bits(read_of(&x), 1e300));
	sc_xsum_fini(&x);
	sc_xsum_fini(&copy);
}

Test(xsum, failed_growth_in_merge_changes_nothing)
{
	struct sc_xsum a, b, copy;

	sc_xsum_init(&a);
	sc_xsum_init(&b);
	sc_xsum_init(&copy);
	sc_xsum_add(&a, 2.0);
	sc_xsum_add(&copy, 2.0);
	sc_xsum_add(&b, 1e300);
	sc__xsum_set_calloc(failing_calloc);
	cr_assert_eq(sc_xsum_merge(&a, &b), SC_ENOMEM);
	sc__xsum_set_calloc(NULL);
	cr_assert(sc_xsum_equal(&a, &copy));
	sc_xsum_fini(&a);
	sc_xsum_fini(&b);
	sc_xsum_fini(&copy);
}

Test(xsum, null_arguments_are_refused_by_name)
{
	struct sc_xsum x;
	double d = 7.0;

	sc_xsum_init(&x);
	cr_assert_eq(sc_xsum_init(NULL), SC_EINVAL);
	cr_assert(strstr(sc_errmsg(), "sc_xsum_init") != NULL);
	cr_assert_eq(sc_xsum_add(NULL, 1.0), SC_EINVAL);
	cr_assert(strstr(sc_errmsg(), "sc_xsum_add") != NULL);
	cr_assert_eq(sc_xsum_retract(NULL, 1.0), SC_EINVAL);
	cr_assert_eq(sc_xsum_add_weighted(NULL, 1.0, 5), SC_EINVAL);
	cr_assert_eq(sc_xsum_merge(NULL, &x), SC_EINVAL);
	cr_assert_eq(sc_xsum_merge(&x, NULL), SC_EINVAL);
	cr_assert(strstr(sc_errmsg(), "sc_xsum_merge") != NULL);
	cr_assert_eq(sc_xsum_negate(NULL), SC_EINVAL);
	cr_assert_eq(sc_xsum_add_array(NULL, &d, 1, NULL), SC_EINVAL);
	cr_assert_eq(sc_xsum_add_array(&x, NULL, 1, NULL), SC_EINVAL);
	cr_assert(strstr(sc_errmsg(), "sc_xsum_add_array") != NULL);
	cr_assert_eq(sc_xsum_add_array(&x, NULL, 0, NULL), 0);
	cr_assert_eq(sc_xsum_clear(NULL), SC_EINVAL);
	cr_assert_eq(sc_xsum_read(NULL, &d), SC_EINVAL);
	cr_assert_eq(sc_xsum_read(&x, NULL), SC_EINVAL);
	cr_assert(strstr(sc_errmsg(), "sc_xsum_read") != NULL);
	cr_assert_eq(sc_xsum_mean(&x, 0, &d), SC_EINVAL);
	cr_assert(strstr(sc_errmsg(), "count is 0") != NULL);
	cr_assert_eq(sc_xsum_mean(NULL, 1, &d), SC_EINVAL);
	cr_assert_eq(d, 7.0, "an out-parameter was written on failure");
	cr_assert(!sc_xsum_equal(&x, NULL));
	cr_assert(sc_xsum_equal(NULL, NULL));
	cr_assert_eq(sc_xsum_bytes(NULL), 0);
	sc_xsum_fini(NULL);
	sc_xsum_fini(&x);
}

/*
 * xsum.h - exact sums of doubles: a group under retraction.
 *
 * Sum and Avg aggregates see every row of a Z-set with a weight, and a
 * retraction is a row of weight -1. A plain double sum maintained by +v/-v
 * drifts, because each add rounds. An sc_xsum instead keeps the exact value
 * of sum(w * v) over every finite double it was given, plus signed counts of
 * NaN, +inf and -inf, so adding +v and then retracting it returns it to
 * exactly the earlier state, whatever happened in between, and a read rounds
 * the exact value once, correctly (round half to even). The mean is the
 * exact sum divided by the count, also rounded once.
 *
 * Representation. The idea is Kulisch's long accumulator (a fixed-point
 * number wide enough for every double) in the "small superaccumulator" form
 * of R. M. Neal, "Fast exact summation using small and large
 * superaccumulators" (arXiv:1505.05571, 2015); the code is our own. The
 * fixed-point number is cut into chunks of 32 bits, each held in a SIGNED
 * 64-bit limb. Chunk k weighs 2^(32k - 1075): the grid unit is half the
 * smallest subnormal, so that a double with biased exponent field e >= 1 is
 * m * 2^(e - 1075) and e itself is the grid position of its last bit (a
 * subnormal sits at position 1). Chunks 0..65 hold every finite double; the
 * full width is SC__XSUM_CHUNKS = 72 chunks, so that the carries of ~2^170
 * operations of weight 2^63 still fit (the top limb is never split, so the
 * exact value cannot overflow in any run that could ever finish).
 *
 * Carries. Adding +-m * 2^(e - 1075) (m the 53-bit significand) adds the
 * two pieces of +-m * 2^(e % 32), split at 32 bits and each under 2^52 in
 * magnitude, to limbs e/32 and e/32 + 1. No carry is propagated then: a
 * limb is a redundant signed digit with 11 bits of headroom, so up to
 * SC__XSUM_BUDGET (1024) adds can land before the limbs are *normalised*:
 * carries are propagated from the lowest limb up, leaving every limb but
 * the top one in [-2^31, 2^31) (balanced digits, so a small negative value
 * stays a few small digits instead of a long run of 0xffffffff). The top
 * limb keeps whatever carry reaches it and is kept under 2^61, so that
 * another budget of adds cannot overflow it. With balanced digits the sign
 * of the value is the sign of its highest non-zero digit, and two
 * normalised images of one value are equal digit for digit, which is how
 * equality is decided (whatever the forms and pending carries).
 *
 * The compact form. A full-width accumulator is 72 limbs (576 bytes), which
 * would make a table of 100K group sums 58 MB, mostly zeros: real data lives
 * in a modest range of exponents. So an sc_xsum is one cache line (64
 * bytes): a *window* of SC_XSUM_WINDOW (6) limbs starting at chunk `base`,
 * the budget, a `gate`, and a pointer to an extension that is NULL in the
 * compact form. A value whose two chunks fall in the window (160 exponents:
 * with the initial base, |v| from 2^-63 to 2^97) takes the inline path
 * below: about 25 instructions, one compare against the gate (which also
 * turns away zeros, subnormals, |v| >= 2^993, infinities and NaN, and is
 * shut while the window must move) and a budget decrement. Any other value
 * takes the slow path, which moves the window (when the exact value, with
 * the new one, still spans at most 6 chunks) or *grows* the accumulator:
 * the extension is allocated (624 bytes), holding the full-width limbs and
 * the 128-bit counts of NaN, +inf and -inf. The window stays as a cache of
 * the hot range; the exact value is then window + full. Growth is an
 * allocation and can fail with SC_ENOMEM, and then nothing has changed.
 * sc_xsum_clear frees the extension again. Bytes per accumulator: 64 for
 * data in a modest range (prices, counts, measurements), 688 at worst.
 *
 * Streams. sc_xsum_add_array first sums a run of up to 512 values into a
 * private table with one slot per exponent (Neal's *large*
 * superaccumulator, restricted to the window's exponents): slot[e] += +-m,
 * no shift, no split. It folds the table into the window at the end of the
 * run, which makes it about a third cheaper per value than sc_xsum_add.
 *
 * Special values. Each of NaN, +inf and -inf has a count, changed by the
 * weight of the row, so a retracted +inf is gone. A count is 128 bits
 * wide: it is a partial integral of row weights, which may leave int64
 * between steps (+MAX NaN rows, then +1, then -1) and come back, and how
 * a schedule groups rows into steps must not decide whether an add fails.
 * No sequence of fewer than 2^64 adds can wrap one;
 * only merges doubling a count some 64 times can (SC_EOVERFLOW). A read follows
 * IEEE addition: any NaN count != 0 reads NaN; otherwise +inf counted c > 0
 * times contributes +inf, c < 0 times -inf (w * v with w < 0), and likewise for
 * -inf; infinities of both signs read NaN, of one sign that infinity.
 * A finite exact value beyond the double range reads as +-inf, which is what
 * round-to-nearest gives for a value >= DBL_MAX + ulp/2; the exact value is
 * kept, so retracting brings the read back into range. An exact zero reads
 * +0.0 (subcirc folds -0.0 into +0.0 everywhere).
 *
 * Cost (bench/bench_xsum.c on a shared, busy 2-core AMD EPYC VM: medians
 * of 5 runs, range in brackets; each ratio is against a baseline measured
 * in the same run). sc_xsum_add in a streaming loop: 3.4x [1.9-3.6] a
 * plain `s += v` loop; its limbs and budget live in memory, so consecutive
 * adds to one accumulator wait on store forwarding. sc_xsum_add_array:
 * 2.2x [1.3-3.0]. One add to a random group of 1000: 2.4x [2.2-3.4] a
 * double read-modify-write, 2.1x a double in a 64-byte record. With 100K
 * groups (6.4 MB of accumulators against 0.8 MB of doubles: 19x a double
 * array) an add waits on memory, and its ~25 instructions let fewer misses
 * overlap than a plain double's: 4.1x [3.8-5.3] a double in a 64-byte
 * record, 1.7x [1.5-2.0] when the caller prefetches the group 16 rows
 * ahead (sc_xsum_prefetch). A read costs ~75 ns compact (30-90), ~720 ns
 * grown; a mean ~160 ns.
 *
 * Threads: an sc_xsum is a plain value; calls on distinct accumulators may
 * run in parallel, calls on one must be serialised by the caller.
 */
#ifndef SC_XSUM_H
#define SC_XSUM_H

#ifdef __cplusplus
extern "C" {
#endif

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "operators/error.h"

/* Limbs in the inline window of the compact form. */
#define SC_XSUM_WINDOW 6
/* Chunks (limbs) of the full-width form; chunk k weighs 2^(32k - 1075). */
#define SC__XSUM_CHUNKS 72
/* Adds allowed between two normalisations (each adds < 2^52 to a limb). */
#define SC__XSUM_BUDGET 1024
/* A gate that no exponent passes: every add takes the slow path. */
#define SC__XSUM_SHUT 0xffff

struct sc__xsum_ext;

/*
 * An exact accumulator. Caller storage: sc_xsum_init before use,
 * sc_xsum_fini after. Fields are internal; they are visible only so that
 * the add can be inlined. 64 bytes: place it on a 64-byte boundary to keep
 * it in one cache line. It may be MOVED with memcpy (a table growing; the
 * old bytes are then forgotten, not finalised) but not duplicated, since a
 * grown one owns its extension: copy with sc_xsum_init + sc_xsum_merge.
 */
struct sc_xsum {
	int64_t limb[SC_XSUM_WINDOW]; /* the window: limb[j] is chunk base+j */
	uint16_t gate;		      /* base while the inline add may run,
					 else SC__XSUM_SHUT */
	uint16_t base;		      /* chunk of limb[0]; <= CHUNKS - WINDOW */
	int16_t budget;		      /* adds left before a normalisation */
	uint16_t spare;		      /* zero; keeps the layout explicit */
	struct sc__xsum_ext *ext;     /* NULL in the compact form */
};

/*
 * sc__xsum_add_slow - everything the inline add does not: NULL, zeros,
 * subnormals, NaN and infinities, values outside the window, a window in
 * need of moving, weights other than +-1. `bits` is the IEEE pattern of
 * the value, `w` its weight. Internal; call sc_xsum_add / _retract /
 * _add_weighted.
 */
int sc__xsum_add_slow(struct sc_xsum *x, uint64_t bits, int64_t w);

/*
 * sc__xsum_tick - the budget ran out after an inline add: propagate the
 * carries. Cannot fail; a window whose top outgrew its headroom is shut
 * so that the next add moves it (where a failure can be reported).
 */
void sc__xsum_tick(struct sc_xsum *x);

/*
 * sc__xsum_add_bits - the hot path: add v (flip = 0) or -v (flip = the
 * sign bit) when its two chunks fall in the window, else the slow path.
 * The gate is the window's base only when the window lies in chunks
 * 1..62, so zeros and subnormals (exponent field 0, chunk 0), huge values,
 * infinities and NaN (exponent field >= 2016, chunk 63) never pass it, and
 * one compare decides. The significand m, made signed, is split at the
 * 32-bit chunk boundary: lo = (m << s) mod 2^32 >= 0, hi = m >> (32 - s)
 * (arithmetic, |hi| < 2^52), so lo + 2^32 hi = m * 2^s exactly.
 */
static inline int
sc__xsum_add_bits(struct sc_xsum *x, uint64_t b, uint64_t flip)
{
	uint32_t e;
	uint64_t i; /* 64-bit, so that limb[i + 1] is limb[i]'s neighbour */
	int64_t neg, m;

	if (__builtin_expect(x == NULL, 0))
		return sc__xsum_add_slow(x, b, flip ? -1 : 1);
	e = (uint32_t)(b >> 52) & 0x7ff;
	i = (uint64_t)(e >> 5) - x->gate;
	if (__builtin_expect(i > SC_XSUM_WINDOW - 2, 0))
		return sc__xsum_add_slow(x, b, flip ? -1 : 1);
	neg = (int64_t)(b ^ flip) >> 63; /* 0 or -1 */
	m = (int64_t)((b & ((UINT64_C(1) << 52) - 1)) | (UINT64_C(1) << 52));
	m = (m ^ neg) - neg;
	/* a 32-bit shift takes its count mod 32: no mask needed for lo */
	x->limb[i] += (int64_t)(uint32_t)((uint32_t)m << (e & 31));
	x->limb[i + 1] += m >> (32 - (e & 31));
	if (__builtin_expect(--x->budget == 0, 0))
		sc__xsum_tick(x);
	return 0;
}

static inline uint64_t
sc__xsum_bits(double v)
{
	uint64_t b;

	memcpy(&b, &v, sizeof(b));
	return b;
}

/*
 * sc_xsum_init - make *x the empty sum (0, no specials), compact.
 * Returns 0, or SC_EINVAL if x is NULL. Allocates nothing.
 */
int sc_xsum_init(struct sc_xsum *x);

/*
 * sc_xsum_fini - release what x holds (the extension, if it grew). x must
 * be initialised again before reuse. NULL is ignored.
 */
void sc_xsum_fini(struct sc_xsum *x);

/*
 * sc_xsum_clear - make x the empty sum again and free its extension, as a
 * fresh init would. Returns 0, or SC_EINVAL if x is NULL.
 */
int sc_xsum_clear(struct sc_xsum *x);

/*
 * sc_xsum_add - x += v, exactly. Returns 0; SC_ENOMEM if x had to grow (v
 * outside the window's reach, or the first NaN or infinity) and could not,
 * with x unchanged; SC_EOVERFLOW if a special count would leave int128
 * (never within 2^64 adds, see "Special values"); SC_EINVAL
 * if x is NULL. Inline: the common case is about 25 instructions.
 */
static inline int
sc_xsum_add(struct sc_xsum *x, double v)
{
	return sc__xsum_add_bits(x, sc__xsum_bits(v), 0);
}

/*
 * sc_xsum_retract - x -= v, exactly: the row v with weight -1. A retracted
 * NaN or infinity decrements its count (it does not add -inf). Returns as
 * sc_xsum_add.
 */
static inline int
sc_xsum_retract(struct sc_xsum *x, double v)
{
	return sc__xsum_add_bits(x, sc__xsum_bits(v), UINT64_C(1) << 63);
}

/*
 * sc_xsum_add_weighted - x += w * v exactly (a Z-set row v of weight w;
 * w * v is never rounded: the 117-bit product is added as it is). w = 0
 * changes nothing. Returns as sc_xsum_add.
 */
static inline int
sc_xsum_add_weighted(struct sc_xsum *x, double v, int64_t w)
{
	if (w == 1 || w == -1)
		return sc__xsum_add_bits(x, sc__xsum_bits(v),
					 w < 0 ? UINT64_C(1) << 63 : 0);
	return sc__xsum_add_slow(x, sc__xsum_bits(v), w);
}

/*
 * sc_xsum_prefetch - hint that x will be added to soon. With many groups
 * the accumulators do not fit in cache, and an add waits on memory; its
 * ~25 instructions let fewer misses overlap than a plain double's would,
 * so a caller walking a batch should prefetch the group of a row some
 * 8-16 rows ahead. Never fails; x may be any address, even NULL.
 */
static inline void
sc_xsum_prefetch(const struct sc_xsum *x)
{
	__builtin_prefetch(x, 1);
}

/*
 * sc_xsum_add_array - x += v[0] + ... + v[n-1], exactly: the streaming
 * form of sc_xsum_add. Runs of values near the window go through a
 * private table with a slot per exponent (no shifts, no carries: about
 * half the work of sc_xsum_add per value), folded in every 512 values.
 * Returns 0 with
 * *done = n; on a failure (as sc_xsum_add) the values before v[*done]
 * were added and the rest were not. done may be NULL; v may be NULL only
 * when n is 0. SC_EINVAL if x is NULL.
 */
int sc_xsum_add_array(struct sc_xsum *x, const double *v, size_t n,
		      size_t *done);

/*
 * sc_xsum_merge - a += b, exactly, counts included (a == b doubles a).
 * b is not changed. Returns 0; SC_ENOMEM (a unchanged) if a had to grow and
 * could not; SC_EOVERFLOW (a unchanged) if a count would leave int128;
 * SC_EINVAL if either is NULL.
 */
int sc_xsum_merge(struct sc_xsum *a, const struct sc_xsum *b);

/*
 * sc_xsum_negate - x = -x: the exact value and every count negated, so
 * that merge(a, negate(a)) is the empty sum. Returns 0; SC_EOVERFLOW (x
 * unchanged) if a count is -2^127; SC_EINVAL if x is NULL.
 */
int sc_xsum_negate(struct sc_xsum *x);

/*
 * sc_xsum_equal - true when a and b hold the same exact value and the same
 * three counts, whatever their forms (compact or grown, window position,
 * pending carries). Two NULLs are equal; NULL and non-NULL are not.
 */
bool sc_xsum_equal(const struct sc_xsum *a, const struct sc_xsum *b);

/*
 * sc_xsum_read - *out = the exact sum rounded once to the nearest double,
 * ties to even (specials as in the note above; beyond DBL_MAX reads +-inf;
 * zero reads +0.0). Returns 0, or SC_EINVAL if x or out is NULL.
 * Costs a normalisation of a copy: tens of ns in the compact form.
 */
int sc_xsum_read(const struct sc_xsum *x, double *out);

/*
 * sc_xsum_mean - *out = (exact sum) / count rounded once to the nearest
 * double, ties to even (not the rounded sum divided by count). count may be
 * negative (a group with net negative weight). Specials read as in
 * sc_xsum_read, with the sign of an infinity flipped for a negative count.
 * A quotient beyond DBL_MAX reads +-inf; one below the subnormals rounds
 * to 0 or the smallest subnormal as IEEE would. Returns 0, or SC_EINVAL if
 * x or out is NULL or count is 0.
 */
int sc_xsum_mean(const struct sc_xsum *x, int64_t count, double *out);

/*
 * sc_xsum_is_compact - true while x has not grown (no extension).
 */
bool sc_xsum_is_compact(const struct sc_xsum *x);

/*
 * sc_xsum_bytes - memory x uses: sizeof(struct sc_xsum) plus its extension
 * if it grew (not counting the allocator's own overhead). 0 for NULL.
 */
size_t sc_xsum_bytes(const struct sc_xsum *x);

#ifdef __cplusplus
}
#endif

#endif /* SC_XSUM_H */

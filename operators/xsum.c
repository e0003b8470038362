/*
 * xsum.c - exact sums of doubles (see xsum.h for the representation).
 *
 * Everything here is the cold side of the accumulator: the inline add in
 * xsum.h handles a value whose chunks fall in the window; this file handles
 * the rest, normalises, moves the window, grows, and rounds.
 *
 * Digits. A "wide" image is SC__XSUM_CHUNKS signed limbs, limb k weighing
 * 2^(32k - 1075) (a grid one bit finer than the smallest subnormal, so that
 * the biased exponent field is directly a bit position). carry_balanced()
 * turns limbs into balanced digits in [-2^31, 2^31), the last limb keeping
 * the carry that reaches it. Reading turns balanced digits into a sign and
 * unsigned 32-bit digits, and round_mag() rounds an unsigned digit string
 * times a power of two to the nearest double, ties to even, with a sticky
 * bit for a division remainder.
 */
#include "operators/xsum.h"

#include <math.h>
#include <stdlib.h>

#include "operators/xsum_int.h"

#define K   SC_XSUM_WINDOW
#define NCH SC__XSUM_CHUNKS
/* The window's top limb is kept under this after a normalisation, so a
 * whole budget of adds (< 2^52 each) cannot overflow it. */
#define TOPMAX (INT64_C(1) << 61)
/* Initial window: chunks 30..35, so values with exponent fields 960..1119
 * (|v| from 2^-63 to 2^97) take the inline path. */
#define DEFAULT_BASE 30
/* Chunk k weighs 2^(32k - GRID). */
#define GRID 1075
/* The gate opens only on windows in chunks 1..62 (see xsum.h). */
#define GATE_MAX (63 - (K - 1))
#define MASK32	 UINT64_C(0xffffffff)
/* Digits of a weighted contribution: 117 bits shifted by up to 31. */
#define MAXDIG 5
/* Digits of a wide image plus the split of its top limb. */
#define NREAD (NCH + 2)

/*
 * A special count: 128 bits, since a count is a partial integral of row
 * weights that may leave int64 between steps and come back; fewer than 2^64
 * adds of |w| <= 2^63 cannot leave int128, so only merges that double a count
 * 64 times can wrap one (then SC_EOVERFLOW).
 */
typedef __int128 count_t;
#define COUNT_MIN ((count_t)((unsigned __int128)1 << 127))

/*
 * The extension of a grown accumulator: the full-width limbs (added to the
 * window for the exact value) and the signed counts of the specials.
 */
struct sc__xsum_ext {
	count_t nan;	   /* net weight of NaN rows */
	count_t pinf;	   /* net weight of +inf rows */
	count_t ninf;	   /* net weight of -inf rows */
	int64_t full[NCH]; /* chunk k weighs 2^(32k - 1075) */
};

static void *(*xsum_calloc)(size_t, size_t) = calloc;

void
sc__xsum_set_calloc(void *(*fn)(size_t, size_t))
{
	xsum_calloc = fn ? fn : calloc;
}

static double
from_bits(uint64_t b)
{
	double d;

	memcpy(&d, &b, sizeof(d));
	return d;
}

/* ---- digits -------------------------------------------------------------- */

/*
 * Propagate carries through d[0..n-2] so that each is a balanced digit in
 * [-2^31, 2^31); the carry out lands in d[n-1]. Every limb must be under
 * 2^62.6 in magnitude (which the budget guarantees), so no step overflows.
 * The carry is floor((t + 2^31) / 2^32): gcc shifts signed values
 * arithmetically, and the chain from one limb to the next is one add and
 * one shift.
 */
static void
carry_balanced(int64_t *d, int n)
{
	int64_t c = 0;

	for (int k = 0; k < n - 1; k++) {
		int64_t t = d[k] + c;

		c = (t + (INT64_C(1) << 31)) >> 32;
		d[k] = t - (int64_t)((uint64_t)c << 32);
	}
	d[n - 1] += c;
}

/* The exact value of x as a normalised wide image (a copy; x unchanged). */
static void
export_wide(const struct sc_xsum *x, int64_t *w)
{
	int64_t win[K];

	if (x->ext) {
		memcpy(w, x->ext->full, sizeof(x->ext->full));
		carry_balanced(w, NCH);
	} else {
		memset(w, 0, NCH * sizeof(*w));
	}
	memcpy(win, x->limb, sizeof(win));
	carry_balanced(win, K);
	for (int j = 0; j < K; j++)
		w[x->base + j] += win[j];
	carry_balanced(w, NCH);
}

/* Clamp a wanted window start into [0, NCH - K]. */
static uint32_t
clamp_base(int64_t b)
{
	if (b < 0)
		return 0;
	if (b > NCH - K)
		return NCH - K;
	return (uint32_t)b;
}

/*
 * Where a window over the normalised image w would go: the non-zero digits
 * (and, if they fit too, the chunks hint and hint+1 of the latest value)
 * centred in K limbs. Returns false when the non-zero digits span more than
 * K chunks, or the top one is too large for the window's top limb.
 */
static bool
window_place(const int64_t *w, uint32_t hint, uint32_t *base)
{
	int a = -1, b = -1;

	for (int k = 0; k < NCH; k++) {
		if (w[k] != 0) {
			if (a < 0)
				a = k;
			b = k;
		}
	}
	if (a < 0) {
		*base = clamp_base((int64_t)hint - (K - 2) / 2);
		return true;
	}
	if (w[b] > TOPMAX || w[b] < -TOPMAX || b - a + 1 > K)
		return false;
	int lo = a < (int)hint ? a : (int)hint;
	int hi = b > (int)hint + 1 ? b : (int)hint + 1;
	if (hi - lo + 1 <= K) {
		a = lo;
		b = hi;
	}
	*base = clamp_base(a - (K - (b - a + 1)) / 2);
	return true;
}

/* Open the gate for the inline add when the window allows it. */
static void
gate_update(struct sc_xsum *x)
{
	bool open = x->base >= 1 && x->base <= GATE_MAX && x->budget > 0;

	x->gate = open ? x->base : SC__XSUM_SHUT;
}

/* x's extension, allocated if x is compact; NULL (and the message set)
 * when the allocation fails, x unchanged. */
static struct sc__xsum_ext *
grow(struct sc_xsum *x)
{
	struct sc__xsum_ext *e;

	if (x->ext)
		return x->ext;
	e = xsum_calloc(1, sizeof(*e));
	if (e == NULL) {
		(void)sc__fail(SC_ENOMEM, "sc_xsum: cannot grow to %zu bytes",
			       sizeof(*e));
		return NULL;
	}
	x->ext = e;
	return e;
}

/*
 * Make x hold the normalised image w (counts untouched): in the window if
 * it fits, else in a full-width extension (allocated if x is compact, or
 * if need_ext). On SC_ENOMEM x is unchanged.
 */
static int
settle(struct sc_xsum *x, const int64_t *w, uint32_t hint, bool need_ext)
{
	uint32_t base;
	bool fits = window_place(w, hint, &base);

	if ((!fits || need_ext) && grow(x) == NULL)
		return SC_ENOMEM;
	if (fits) {
		x->base = (uint16_t)base;
		memcpy(x->limb, w + base, sizeof(x->limb));
		if (x->ext)
			memset(x->ext->full, 0, sizeof(x->ext->full));
	} else {
		x->base = (uint16_t)clamp_base((int64_t)hint - (K - 2) / 2);
		memset(x->limb, 0, sizeof(x->limb));
		memcpy(x->ext->full, w, sizeof(x->ext->full));
	}
	x->budget = SC__XSUM_BUDGET;
	gate_update(x);
	return 0;
}

/*
 * Propagate the carries of x in place and renew its budget. A window whose
 * top limb outgrew TOPMAX moves up, or spills into the extension (folded
 * there if x has grown, else x grows: SC_ENOMEM leaves the value as it was).
 */
static int
normalise(struct sc_xsum *x, uint32_t hint)
{
	int64_t w[NCH];
	int64_t top;

	carry_balanced(x->limb, K);
	if (x->ext)
		carry_balanced(x->ext->full, NCH);
	top = x->limb[K - 1];
	if (top > TOPMAX || top < -TOPMAX) {
		export_wide(x, w);
		return settle(x, w, hint, false);
	}
	x->budget = SC__XSUM_BUDGET;
	gate_update(x);
	return 0;
}

void
sc__xsum_tick(struct sc_xsum *x)
{
	carry_balanced(x->limb, K);
	if (x->ext)
		carry_balanced(x->ext->full, NCH);
	if (x->limb[K - 1] > TOPMAX || x->limb[K - 1] < -TOPMAX) {
		/* Spend the budget: the next add normalises and moves the
		 * window, in the slow path, where it can fail cleanly. */
		x->budget = 0;
		x->gate = SC__XSUM_SHUT;
		return;
	}
	x->budget = SC__XSUM_BUDGET;
	gate_update(x);
}

/* ---- adding -------------------------------------------------------------- */

/*
 * The signed 32-bit digits of w * m * 2^s, lowest first; returns how many
 * (at most MAXDIG). m < 2^53, s < 32.
 */
static int
contribution_digits(uint64_t m, unsigned s, int64_t w, bool neg, int64_t *dig)
{
	uint64_t aw = w < 0 ? -(uint64_t)w : (uint64_t)w;
	unsigned __int128 prod = (unsigned __int128)m * aw;
	uint64_t pd[MAXDIG]; /* digits of prod, then of prod << s */
	int n = 0;

	for (int j = 0; j < MAXDIG - 1; j++)
		pd[j] = (uint64_t)(prod >> (32 * j)) & MASK32;
	pd[MAXDIG - 1] = 0;
	for (int j = MAXDIG - 1; j >= 0; j--) {
		uint64_t below = j > 0 ? pd[j - 1] : 0;
		uint64_t v = ((pd[j] << s) | (below >> (32 - s))) & MASK32;

		dig[j] = neg ? -(int64_t)v : (int64_t)v;
		if (v != 0 && n == 0)
			n = j + 1;
	}
	return n;
}

/* Add digits dig[0..n-1] at chunks chunk.. to x. */
static int
place(struct sc_xsum *x, uint32_t chunk, const int64_t *dig, int n)
{
	int64_t w[NCH];
	int64_t i;
	int rc;

	if (x->budget <= 0) {
		rc = normalise(x, chunk);
		if (rc)
			return rc;
	}
	i = (int64_t)chunk - x->base;
	if (i >= 0 && i + n <= K) {
		for (int j = 0; j < n; j++)
			x->limb[i + j] += dig[j];
		x->budget--;
		gate_update(x);
		return 0;
	}
	if (x->ext) {
		for (int j = 0; j < n; j++) {
			if (i + j >= 0 && i + j < K)
				x->limb[i + j] += dig[j];
			else
				x->ext->full[chunk + j] += dig[j];
		}
		x->budget--;
		gate_update(x);
		return 0;
	}
	export_wide(x, w);
	for (int j = 0; j < n; j++)
		w[chunk + j] += dig[j];
	carry_balanced(w, NCH);
	return settle(x, w, chunk, false);
}

/* The count that the special value with these bits changes. */
static count_t *
special_count(struct sc__xsum_ext *e, uint64_t bits)
{
	if (bits & ((UINT64_C(1) << 52) - 1))
		return &e->nan;
	return (bits >> 63) ? &e->ninf : &e->pinf;
}

static int
add_special(struct sc_xsum *x, uint64_t bits, int64_t w)
{
	count_t cur = x->ext ? *special_count(x->ext, bits) : 0, next;
	struct sc__xsum_ext *e;

	if (__builtin_add_overflow(cur, (count_t)w, &next))
		return sc__fail(SC_EOVERFLOW,
				"sc_xsum_add: count of %g would leave int128",
				from_bits(bits));
	e = grow(x);
	if (e == NULL)
		return SC_ENOMEM;
	*special_count(e, bits) = next;
	return 0;
}

int
sc__xsum_add_slow(struct sc_xsum *x, uint64_t bits, int64_t w)
{
	uint64_t e, p, m;
	int64_t dig[MAXDIG];
	int n;

	if (x == NULL)
		return sc__fail(SC_EINVAL, "sc_xsum_add: accumulator is NULL");
	if (w == 0)
		return 0;
	e = (bits >> 52) & 0x7ff;
	if (e == 0x7ff)
		return add_special(x, bits, w);
	m = (bits & ((UINT64_C(1) << 52) - 1)) | ((uint64_t)(e != 0) << 52);
	if (m == 0)
		return 0;
	p = e + (e == 0); /* subnormals share the scale of e = 1 */
	n = contribution_digits(m, (unsigned)(p & 31), w,
				((bits >> 63) != 0) != (w < 0), dig);
	return place(x, (uint32_t)(p >> 5), dig, n);
}

/* ---- streams ------------------------------------------------------------- */

/*
 * sc_xsum_add_array sums a run of values first into a table with one
 * signed slot per exponent (the idea of Neal's *large* superaccumulator),
 * which needs no shift and no split per value: slot[e - lo] += +-m. The
 * table covers the 128 exponents of the window's chunks base..base+3, and
 * a run is at most 512 values, so a slot stays under 512 * 2^53 = 2^62.
 * At the end of a run each non-zero slot, m_sum * 2^(e - 1075), is added
 * to the window as three 32-bit digits, and the window is normalised.
 */
#define TAB_EXPS 128
#define TAB_RUN	 512
/* After a run cut short by a value outside the table, the next values go
 * one by one, so that data living outside it does not pay for a table
 * per value. */
#define TAB_PAUSE 64

/* Fold the table (slot d is exponent 32 * base + d) into x's window. */
static void
fold_table(struct sc_xsum *x, const int64_t *tab)
{
	carry_balanced(x->limb, K);
	for (int d = 0; d < TAB_EXPS; d++) {
		int64_t t = tab[d];

		if (t == 0)
			continue;
		/* |t| < 2^62 shifted by < 32: three digits, the top signed */
		__int128 p = (__int128)t * ((int64_t)1 << (d & 31));
		int j = d >> 5;

		x->limb[j] += (int64_t)((uint64_t)p & MASK32);
		x->limb[j + 1] += (int64_t)((uint64_t)(p >> 32) & MASK32);
		x->limb[j + 2] += (int64_t)(p >> 64);
	}
	x->budget = 1; /* the tick renews it after normalising */
	sc__xsum_tick(x);
}

/*
 * Add values of v (at most TAB_RUN) through the table while they fall in
 * it; returns how many were added.
 */
static size_t
add_run(struct sc_xsum *x, const double *v, size_t n)
{
	int64_t tab[TAB_EXPS];
	uint32_t lo = 32u * x->gate;
	size_t i;

	memset(tab, 0, sizeof(tab));
	if (n > TAB_RUN)
		n = TAB_RUN;
	for (i = 0; i < n; i++) {
		uint64_t b = sc__xsum_bits(v[i]);
		uint32_t d = ((uint32_t)(b >> 52) & 0x7ff) - lo;
		int64_t neg = (int64_t)b >> 63;
		int64_t m = (int64_t)((b & ((UINT64_C(1) << 52) - 1)) |
				      (UINT64_C(1) << 52));

		if (d >= TAB_EXPS)
			break;
		tab[d] += (m ^ neg) - neg;
	}
	fold_table(x, tab);
	return i;
}

int
sc_xsum_add_array(struct sc_xsum *x, const double *v, size_t n, size_t *done)
{
	size_t i = 0, pause = 0;
	int rc = 0;

	if (x == NULL || (v == NULL && n > 0))
		return sc__fail(SC_EINVAL, "sc_xsum_add_array: %s is NULL",
				x == NULL ? "accumulator" : "v");
	while (i < n) {
		if (pause == 0 && x->gate != SC__XSUM_SHUT) {
			size_t want = n - i < TAB_RUN ? n - i : TAB_RUN;
			size_t k = add_run(x, v + i, want);

			i += k;
			if (k == want)
				continue;
			pause = TAB_PAUSE;
		}
		/* v[i] is outside the table: the window or the slow path. */
		rc = sc__xsum_add_bits(x, sc__xsum_bits(v[i]), 0);
		if (rc)
			break;
		i++;
		if (pause > 0)
			pause--;
	}
	if (done)
		*done = i;
	return rc;
}

/* ---- life cycle ---------------------------------------------------------- */

int
sc_xsum_init(struct sc_xsum *x)
{
	if (x == NULL)
		return sc__fail(SC_EINVAL, "sc_xsum_init: accumulator is NULL");
	memset(x->limb, 0, sizeof(x->limb));
	x->base = DEFAULT_BASE;
	x->budget = SC__XSUM_BUDGET;
	x->spare = 0;
	x->ext = NULL;
	gate_update(x);
	return 0;
}

void
sc_xsum_fini(struct sc_xsum *x)
{
	if (x == NULL)
		return;
	free(x->ext);
	x->ext = NULL;
}

int
sc_xsum_clear(struct sc_xsum *x)
{
	if (x == NULL)
		return sc__fail(SC_EINVAL,
				"sc_xsum_clear: accumulator is NULL");
	sc_xsum_fini(x);
	return sc_xsum_init(x);
}

bool
sc_xsum_is_compact(const struct sc_xsum *x)
{
	return x != NULL && x->ext == NULL;
}

size_t
sc_xsum_bytes(const struct sc_xsum *x)
{
	if (x == NULL)
		return 0;
	return sizeof(*x) + (x->ext ? sizeof(*x->ext) : 0);
}

/* ---- group operations ---------------------------------------------------- */

static void
counts_of(const struct sc_xsum *x, count_t c[3])
{
	c[0] = x->ext ? x->ext->nan : 0;
	c[1] = x->ext ? x->ext->pinf : 0;
	c[2] = x->ext ? x->ext->ninf : 0;
}

/* Both compact in the same window with small tops: add limb by limb. */
static bool
merge_same_window(struct sc_xsum *a, const struct sc_xsum *b)
{
	int64_t wb[K];

	if (a->ext || b->ext || a->base != b->base)
		return false;
	memcpy(wb, b->limb, sizeof(wb));
	carry_balanced(wb, K);
	carry_balanced(a->limb, K);
	if (llabs(a->limb[K - 1]) > TOPMAX / 2 ||
	    llabs(wb[K - 1]) > TOPMAX / 2) {
		/* the general path re-windows; a stays normalised */
		return false;
	}
	for (int j = 0; j < K; j++)
		a->limb[j] += wb[j];
	a->budget = SC__XSUM_BUDGET;
	gate_update(a);
	return true;
}

int
sc_xsum_merge(struct sc_xsum *a, const struct sc_xsum *b)
{
	int64_t wa[NCH], wb[NCH];
	count_t ca[3], cb[3], cs[3];
	bool specials = false;
	int rc;

	if (a == NULL || b == NULL)
		return sc__fail(SC_EINVAL, "sc_xsum_merge: %s is NULL",
				a == NULL ? "a" : "b");
	counts_of(a, ca);
	counts_of(b, cb);
	for (int j = 0; j < 3; j++) {
		if (__builtin_add_overflow(ca[j], cb[j], &cs[j]))
			return sc__fail(
			    SC_EOVERFLOW,
			    "sc_xsum_merge: special count %d would wrap", j);
		specials |= cs[j] != 0;
	}
	if (a != b && merge_same_window(a, b))
		return 0;
	export_wide(b, wb);
	export_wide(a, wa);
	for (int k = 0; k < NCH; k++)
		wa[k] += wb[k];
	carry_balanced(wa, NCH);
	rc = settle(a, wa, a->base + (K - 2) / 2, specials);
	if (rc)
		return rc;
	if (a->ext) {
		a->ext->nan = cs[0];
		a->ext->pinf = cs[1];
		a->ext->ninf = cs[2];
	}
	return 0;
}

int
sc_xsum_negate(struct sc_xsum *x)
{
	if (x == NULL)
		return sc__fail(SC_EINVAL,
				"sc_xsum_negate: accumulator is NULL");
	if (x->ext) {
		struct sc__xsum_ext *e = x->ext;

		if (e->nan == COUNT_MIN || e->pinf == COUNT_MIN ||
		    e->ninf == COUNT_MIN)
			return sc__fail(
			    SC_EOVERFLOW,
			    "sc_xsum_negate: a special count is -2^127");
		e->nan = -e->nan;
		e->pinf = -e->pinf;
		e->ninf = -e->ninf;
		for (int k = 0; k < NCH; k++)
			e->full[k] = -e->full[k];
	}
	/* Limbs stay under 2^63 in magnitude, so negation cannot wrap. */
	for (int j = 0; j < K; j++)
		x->limb[j] = -x->limb[j];
	return 0;
}

bool
sc_xsum_equal(const struct sc_xsum *a, const struct sc_xsum *b)
{
	int64_t wa[NCH], wb[NCH];
	count_t ca[3], cb[3];

	if (a == NULL || b == NULL)
		return a == b;
	counts_of(a, ca);
	counts_of(b, cb);
	if (memcmp(ca, cb, sizeof(ca)) != 0)
		return false;
	if (!a->ext && !b->ext && a->base == b->base) {
		/* Same window: balanced digits are unique per value. */
		memcpy(wa, a->limb, K * sizeof(*wa));
		memcpy(wb, b->limb, K * sizeof(*wb));
		carry_balanced(wa, K);
		carry_balanced(wb, K);
		return memcmp(wa, wb, K * sizeof(*wa)) == 0;
	}
	export_wide(a, wa);
	export_wide(b, wb);
	return memcmp(wa, wb, sizeof(wa)) == 0;
}

/* ---- rounding ------------------------------------------------------------ */

/* Bits [pos, pos + 64) of the unsigned digit string u[0..n-1]. */
static uint64_t
bits_at(const uint32_t *u, int n, int64_t pos)
{
	int64_t k = pos / 32;
	unsigned r = (unsigned)(pos % 32);
	uint64_t d[3];

	for (int j = 0; j < 3; j++)
		d[j] = k + j < n ? u[k + j] : 0;
	uint64_t lo = d[0] | (d[1] << 32);
	return r ? (lo >> r) | (d[2] << (64 - r)) : lo;
}

/* Whether any bit below pos is set in u. */
static bool
any_below(const uint32_t *u, int64_t pos)
{
	int64_t k = pos / 32;

	for (int64_t j = 0; j < k; j++)
		if (u[j])
			return true;
	return (pos % 32) && (u[k] & ((UINT32_C(1) << (pos % 32)) - 1));
}

/*
 * The double nearest to U * 2^e0 (U the digits u[0..n-1], lowest first),
 * ties to even, where `sticky` says a non-zero fraction below U's last bit
 * was dropped (a division remainder; the caller keeps at least two quotient
 * bits below the double's last bit, so a tie is never misjudged). Values
 * from DBL_MAX + ulp/2 up round to +inf.
 */
static double
round_mag(const uint32_t *u, int n, int64_t e0, bool sticky)
{
	int t = n - 1;
	int64_t h, lsb, shift;
	uint64_t mant, bits;
	double out;

	while (t >= 0 && u[t] == 0)
		t--;
	if (t < 0)
		return 0.0;
	h = 32 * (int64_t)t + 31 - __builtin_clz(u[t]);
	if (h + e0 >= 1024)
		return INFINITY;
	lsb = h + e0 - 52;
	if (lsb < -1074)
		lsb = -1074;
	shift = lsb - e0;
	if (shift <= 0) {
		/* Exact: every bit of U fits above the double's last bit. */
		mant = bits_at(u, n, 0) << -shift;
	} else {
		bool half = (bits_at(u, n, shift - 1) & 1) != 0;
		bool rest = sticky || any_below(u, shift - 1);

		mant = bits_at(u, n, shift) & ((UINT64_C(1) << 53) - 1);
		if (half && (rest || (mant & 1)))
			mant++;
	}
	/* mant * 2^lsb; a carry to 2^53 moves into the exponent field by
	 * itself, and past the largest exponent gives the bits of +inf. */
	bits = ((uint64_t)(lsb + 1074) << 52) + mant;
	if (bits >= UINT64_C(0x7ff0000000000000))
		return INFINITY;
	memcpy(&out, &bits, sizeof(out));
	return out;
}

/*
 * The exact value of x as sign and unsigned digits: *nd digits u, lowest
 * weighing 2^(32 * *chunk0 - 1075). Returns false for zero.
 */
static bool
magnitude_of(const struct sc_xsum *x, uint32_t *u, int *nd, uint32_t *chunk0,
	     bool *neg)
{
	int64_t d[NREAD];
	int n, t;
	int64_t c = 0;

	if (x->ext) {
		export_wide(x, d);
		n = NREAD;
		*chunk0 = 0;
	} else {
		memcpy(d, x->limb, sizeof(x->limb));
		n = K + 2;
		*chunk0 = x->base;
	}
	d[n - 2] = 0;
	d[n - 1] = 0;
	carry_balanced(d, n);
	for (t = n - 1; t >= 0 && d[t] == 0; t--)
		;
	if (t < 0)
		return false;
	*neg = d[t] < 0;
	for (int k = 0; k <= t; k++) {
		int64_t v = (*neg ? -d[k] : d[k]) + c;

		u[k] = (uint32_t)((uint64_t)v & MASK32);
		c = (v - (int64_t)u[k]) >> 32;
	}
	/* A balanced top digit of 1 over a negative next digit becomes 0. */
	while (u[t] == 0)
		t--;
	*nd = t + 1;
	return true;
}

/* NaN, +inf or -inf when x has a non-zero special count. */
static bool
special_value(const struct sc_xsum *x, double *out)
{
	const struct sc__xsum_ext *e = x->ext;
	bool pos, negv;

	if (e == NULL || (e->nan == 0 && e->pinf == 0 && e->ninf == 0))
		return false;
	if (e->nan != 0) {
		*out = NAN;
		return true;
	}
	/* A count c of +inf contributes c * +inf: -inf when c < 0. */
	pos = e->pinf > 0 || e->ninf < 0;
	negv = e->pinf < 0 || e->ninf > 0;
	*out = pos && negv ? NAN : pos ? INFINITY : -INFINITY;
	return true;
}

/*
 * The nearest double to the balanced digits d[0..n-1] (d[0] weighing
 * 2^(32 * chunk0 - 1075)) from the top three digits, when they decide it:
 * V = T * 2^(32(t-2)) + R where T is the top three digits (|T| >= 2^63)
 * and |R| < 2^(32(t-2)). Rounding drops at least 10 bits of T, so every
 * value strictly between T - 1 and T + 1 other than T rounds as T -+ 1/2
 * does: 2T + sign(R), one bit finer, carries all that R can change.
 * Returns false (for the general path) when fewer than three digits are in
 * use or the result could be subnormal.
 */
static bool
read_digits_fast(const int64_t *d, int n, int64_t chunk0, double *out)
{
	int t, f = 0;
	int64_t e0, h, lsb;
	uint64_t mant, bits;
	unsigned shift;

	for (t = n - 1; t >= 0 && d[t] == 0; t--)
		;
	if (t < 2)
		return false;
	for (int k = t - 3; k >= 0 && f == 0; k--)
		f = (d[k] > 0) - (d[k] < 0);
	__int128 tt = ((__int128)d[t] * ((__int128)1 << 64)) +
		      ((__int128)d[t - 1] * ((__int128)1 << 32)) + d[t - 2];
	__int128 t2 = 2 * tt + f;
	unsigned __int128 u = (unsigned __int128)(t2 < 0 ? -t2 : t2);
	uint64_t hi = (uint64_t)(u >> 64);

	/* 2^64 - 1 <= u < 2^96 (u = 2^64 - 1 when T = 2^63, R < 0) */
	h = hi ? 64 + 63 - __builtin_clzll(hi) : 63;
	e0 = 32 * (chunk0 + t - 2) - GRID - 1;
	if (h + e0 < -1000)
		return false;
	if (h + e0 >= 1024) {
		*out = t2 < 0 ? -INFINITY : INFINITY;
		return true;
	}
	shift = (unsigned)(h - 52);
	lsb = e0 + shift;
	mant = (uint64_t)(u >> shift);
	unsigned __int128 rem = u & (((unsigned __int128)1 << shift) - 1);
	unsigned __int128 half = (unsigned __int128)1 << (shift - 1);
	if (rem > half || (rem == half && (mant & 1)))
		mant++;
	bits = ((uint64_t)(lsb + 1074) << 52) + mant;
	if (bits >= UINT64_C(0x7ff0000000000000))
		*out = INFINITY;
	else
		memcpy(out, &bits, sizeof(bits));
	if (t2 < 0)
		*out = -*out;
	return true;
}

/* read_digits_fast over x's exact value, compact or grown. */
static bool
read_fast(const struct sc_xsum *x, double *out)
{
	int64_t d[NREAD];
	int n;
	int64_t chunk0;

	if (x->ext) {
		export_wide(x, d);
		n = NREAD;
		chunk0 = 0;
	} else {
		memcpy(d, x->limb, sizeof(x->limb));
		n = K + 2;
		chunk0 = x->base;
	}
	d[n - 2] = 0;
	d[n - 1] = 0;
	carry_balanced(d, n);
	return read_digits_fast(d, n, chunk0, out);
}

int
sc_xsum_read(const struct sc_xsum *x, double *out)
{
	uint32_t u[NREAD], chunk0;
	int n;
	bool neg;
	double r;

	if (x == NULL || out == NULL)
		return sc__fail(SC_EINVAL, "sc_xsum_read: %s is NULL",
				x == NULL ? "accumulator" : "out");
	if (special_value(x, out))
		return 0;
	if (read_fast(x, out))
		return 0;
	if (!magnitude_of(x, u, &n, &chunk0, &neg)) {
		*out = 0.0;
		return 0;
	}
	r = round_mag(u, n, 32 * (int64_t)chunk0 - GRID, false);
	*out = neg ? -r : r;
	return 0;
}

/*
 * Q = floor(U * 2^k / q) into qd (n + 5 digits; k < 128), returning whether
 * the remainder is non-zero.
 */
static bool
divide_shifted(const uint32_t *u, int n, int k, uint64_t q, uint32_t *qd,
	       int *nq)
{
	uint32_t v[NREAD + 5];
	int words = k / 32, r = k % 32, nv = n + words + 1;
	unsigned __int128 rem = 0;

	memset(v, 0, sizeof(v));
	for (int j = 0; j < n; j++) {
		uint64_t s = (uint64_t)u[j] << r;

		v[j + words] |= (uint32_t)(s & MASK32);
		v[j + words + 1] |= (uint32_t)(s >> 32);
	}
	for (int j = nv - 1; j >= 0; j--) {
		unsigned __int128 cur = (rem << 32) | v[j];

		qd[j] = (uint32_t)(cur / q);
		rem = cur % q;
	}
	*nq = nv;
	return rem != 0;
}

int
sc_xsum_mean(const struct sc_xsum *x, int64_t count, double *out)
{
	uint32_t u[NREAD], qd[NREAD + 5], chunk0;
	uint64_t q;
	int n, nq, h, k;
	bool neg, sticky;
	double r;

	if (x == NULL || out == NULL)
		return sc__fail(SC_EINVAL, "sc_xsum_mean: %s is NULL",
				x == NULL ? "accumulator" : "out");
	if (count == 0)
		return sc__fail(SC_EINVAL, "sc_xsum_mean: count is 0");
	if (special_value(x, &r)) {
		*out = count < 0 ? -r : r;
		return 0;
	}
	if (!magnitude_of(x, u, &n, &chunk0, &neg)) {
		*out = 0.0;
		return 0;
	}
	q = count < 0 ? -(uint64_t)count : (uint64_t)count;
	h = 32 * (n - 1) + 31 - __builtin_clz(u[n - 1]);
	/* Shift so the quotient has >= 56 bits: two below the round bit. */
	k = 56 + (64 - __builtin_clzll(q)) - (h + 1);
	if (k < 2)
		k = 2;
	sticky = divide_shifted(u, n, k, q, qd, &nq);
	r = round_mag(qd, nq, 32 * (int64_t)chunk0 - GRID - k, sticky);
	/* A quotient that underflows to zero reads +0.0, as zero does. */
	*out = neg != (count < 0) && r != 0 ? -r : r;
	return 0;
}

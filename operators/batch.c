/*
 * batch.c - consolidated Z-sets: builder, radix sort, merge, group ops,
 * keys and printing (see batch.h for the design).
 */
#include "operators/batch_int.h"
#include "operators/mem_int.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define SC_INLINE static inline __attribute__((always_inline))

/* --- records ------------------------------------------------------------- */

/* Records never overlap. memcpy of a constant size (the fixed strides
 * below) becomes a few moves; a loop here may instead be turned into a call
 * to memmove by gcc's loop-pattern recognition, which costs more than the
 * copy. */
SC_INLINE void
rec_copy(uint64_t *dst, const uint64_t *src, uint32_t stride)
{
	memcpy(dst, src, (size_t)stride * sizeof(uint64_t));
}

static bool
ncols_valid(uint32_t ncols)
{
	return ncols >= 1 && ncols <= SC_SCHEMA_MAX_COLS;
}

static int
bad_ncols(const char *fn, uint32_t ncols)
{
	return sc__fail(SC_ESCHEMA, "%s: %u columns, want 1..%d", fn, ncols,
			SC_SCHEMA_MAX_COLS);
}

/* n records of `stride` words, or NULL on overflow of the byte count. */
static uint64_t *
rec_alloc(size_t n, uint32_t stride)
{
	uint64_t *p;

	if (n == 0)
		n = 1;
	if (n > SIZE_MAX / 8 / stride)
		return NULL;
	p = sc__mem_alloc(n * stride * sizeof(uint64_t));
	return p;
}

/* --- life ---------------------------------------------------------------- */

/* A small batch's records live in the same allocation as its header, right
 * after it (see small_finish); release must not free them apart. */
static bool
batch_data_inline(const struct sc_batch *b)
{
	return b->data == (const uint64_t *)(b + 1);
}

int
sc__batch_adopt(uint32_t ncols, uint64_t *data, size_t count, size_t cap,
		struct sc_batch **out)
{
	struct sc_batch *b = malloc(sizeof(*b));

	if (!b) {
		sc__mem_free(data);
		return sc__fail(SC_ENOMEM, "batch: out of memory");
	}
	if (count == 0) {
		sc__mem_free(data);
		data = NULL;
	} else if (count < cap - cap / 4) {
		/* Give back a consolidation's slack when it is worth a copy. */
		uint64_t *d = realloc(data, count * (ncols + 1) * 8);

		if (d)
			data = d;
	}
	b->refs = 1;
	b->ncols = ncols;
	b->stride = ncols + 1;
	b->count = count;
	b->data = data;
	*out = b;
	return 0;
}

int
sc_batch_empty(uint32_t ncols, struct sc_batch **out)
{
	if (!out)
		return sc__fail(SC_EINVAL, "sc_batch_empty: out is NULL");
	if (!ncols_valid(ncols))
		return bad_ncols("sc_batch_empty", ncols);
	return sc__batch_adopt(ncols, NULL, 0, 0, out);
}

struct sc_batch *
sc_batch_retain(struct sc_batch *b)
{
	if (b)
		__atomic_fetch_add(&b->refs, 1, __ATOMIC_RELAXED);
	return b;
}

void
sc_batch_release(struct sc_batch *b)
{
	if (!b)
		return;
	/* acq_rel: the freeing thread must see every other holder's reads
	 * finished before it frees. */
	if (__atomic_fetch_sub(&b->refs, 1, __ATOMIC_ACQ_REL) == 1) {
		if (!batch_data_inline(b))
			sc__mem_free(b->data);
		free(b);
	}
}

void
sc_batch_cache_trim(void)
{
	sc__mem_cache_trim();
}

size_t
sc_batch_cache_bytes(void)
{
	return sc__mem_cache_bytes();
}

size_t
sc_batch_bytes(const struct sc_batch *b)
{
	if (!b)
		return 0;
	return sizeof(*b) + b->count * b->stride * sizeof(uint64_t);
}

/* --- the builder ------------------------------------------------------------
 */

int
sc_batch_builder_init(struct sc_batch_builder *b, uint32_t ncols)
{
	if (!b)
		return sc__fail(SC_EINVAL, "sc_batch_builder_init: b is NULL");
	if (!ncols_valid(ncols))
		return bad_ncols("sc_batch_builder_init", ncols);
	*b = (struct sc_batch_builder){.ncols = ncols, .stride = ncols + 1};
	return 0;
}

void
sc_batch_builder_fini(struct sc_batch_builder *b)
{
	if (!b)
		return;
	sc__mem_free(b->data);
	sc__mem_free(b->scratch);
	b->data = b->scratch = NULL;
	b->count = b->cap = b->scratch_cap = 0;
}

void
sc_batch_builder_clear(struct sc_batch_builder *b)
{
	if (b)
		b->count = 0;
}

int
sc_batch_builder_reserve(struct sc_batch_builder *b, size_t n)
{
	size_t cap;
	uint64_t *d;

	if (!b)
		return sc__fail(SC_EINVAL,
				"sc_batch_builder_reserve: b is NULL");
	if (n <= b->cap - b->count)
		return 0;
	if (n > SIZE_MAX / 16 / b->stride - b->count)
		return sc__fail(SC_ENOMEM,
				"sc_batch_builder_reserve: %zu records is too "
				"many",
				n);
	cap = b->cap ? b->cap : 64;
	while (cap < b->count + n)
		cap *= 2;
	d = realloc(b->data, cap * b->stride * sizeof(uint64_t));
	if (!d)
		return sc__fail(SC_ENOMEM,
				"sc_batch_builder_reserve: out of memory for "
				"%zu records",
				cap);
	sc__mem_hint_huge(d, cap * b->stride * sizeof(uint64_t));
	b->data = d;
	b->cap = cap;
	return 0;
}

int
sc__batch_builder_push_slow(struct sc_batch_builder *b, const uint64_t *row,
			    uint32_t ncols, int64_t weight)
{
	uint64_t *rec;
	int rc;

	if (!b || !row)
		return sc__fail(SC_EINVAL, "sc_batch_builder_push: %s is NULL",
				!b ? "builder" : "row");
	if (ncols != b->ncols)
		return sc__fail(SC_ESCHEMA,
				"sc_batch_builder_push: row has %u columns, "
				"builder has %u",
				ncols, b->ncols);
	if (weight == 0)
		return 0;
	if (b->count == b->cap) {
		rc = sc_batch_builder_reserve(b, 1);
		if (rc)
			return rc;
	}
	rec = b->data + b->count * b->stride;
	memcpy(rec, row, ncols * sizeof(uint64_t));
	rec[ncols] = (uint64_t)weight;
	b->count++;
	return 0;
}

int
sc_batch_builder_push_batch(struct sc_batch_builder *b,
			    const struct sc_batch *src, int64_t scale)
{
	uint64_t *dst;
	int rc;

	if (!b || !src)
		return sc__fail(SC_EINVAL,
				"sc_batch_builder_push_batch: %s is NULL",
				!b ? "builder" : "batch");
	if (src->ncols != b->ncols)
		return sc__fail(SC_ESCHEMA,
				"sc_batch_builder_push_batch: batch has %u "
				"columns, builder has %u",
				src->ncols, b->ncols);
	if (scale == 0 || src->count == 0)
		return 0;
	for (size_t i = 0; i < src->count; i++) {
		int64_t p;

		if (__builtin_mul_overflow(sc_batch_weight(src, i), scale, &p))
			return sc__fail(SC_EOVERFLOW,
					"sc_batch_builder_push_batch: weight "
					"%" PRId64 " x %" PRId64
					" leaves int64",
					sc_batch_weight(src, i), scale);
	}
	rc = sc_batch_builder_reserve(b, src->count);
	if (rc)
		return rc;
	dst = b->data + b->count * b->stride;
	memcpy(dst, src->data, src->count * src->stride * sizeof(uint64_t));
	for (size_t i = 0; i < src->count; i++) {
		uint64_t *w = dst + i * b->stride + b->ncols;

		*w = (uint64_t)((int64_t)*w * scale);
	}
	b->count += src->count;
	return 0;
}

/* --- sorting ---------------------------------------------------------------
 */

/*
 * The digit of `w` bits at bit `bit` of a record's key, bit 0 being the
 * top bit of word 0. A digit never crosses a word (w <= 64 - bit % 64).
 */
SC_INLINE unsigned
digit(const uint64_t *rec, unsigned bit, unsigned w)
{
	return (unsigned)((rec[bit >> 6] << (bit & 63)) >> (64 - w));
}

SC_INLINE int
rec_cmp(const uint64_t *a, const uint64_t *b, uint32_t ncols)
{
	/* The common narrow rows compare in one or two instructions. */
	if (ncols == 1)
		return (a[0] > b[0]) - (a[0] < b[0]);
	if (ncols == 2) {
		unsigned __int128 x = ((unsigned __int128)a[0] << 64) | a[1];
		unsigned __int128 y = ((unsigned __int128)b[0] << 64) | b[1];

		return (x > y) - (x < y);
	}
	return sc_row_cmp(a, b, ncols);
}

/* a > b, and a == b: cheaper than a three-way compare where only one
 * answer is wanted (the small path's insertion sort and runs). */
SC_INLINE bool
rec_gt(const uint64_t *a, const uint64_t *b, uint32_t ncols)
{
	if (ncols == 1)
		return a[0] > b[0];
	if (ncols == 2)
		return a[0] > b[0] || (a[0] == b[0] && a[1] > b[1]);
	return sc_row_cmp(a, b, ncols) > 0;
}

SC_INLINE bool
rec_eq(const uint64_t *a, const uint64_t *b, uint32_t ncols)
{
	if (ncols == 1)
		return a[0] == b[0];
	if (ncols == 2)
		return ((a[0] ^ b[0]) | (a[1] ^ b[1])) == 0;
	return sc_row_eq(a, b, ncols);
}

SC_INLINE void
insertion_sort_impl(uint64_t *d, size_t n, uint32_t stride)
{
	uint64_t tmp[SC_SCHEMA_MAX_COLS + 1];
	uint32_t ncols = stride - 1;

	for (size_t i = 1; i < n; i++) {
		uint64_t *cur = d + i * stride;
		size_t j = i;

		if (rec_cmp(cur - stride, cur, ncols) <= 0)
			continue;
		rec_copy(tmp, cur, stride);
		while (j > 0 && rec_cmp(d + (j - 1) * stride, tmp, ncols) > 0) {
			rec_copy(d + j * stride, d + (j - 1) * stride, stride);
			j--;
		}
		rec_copy(d + j * stride, tmp, stride);
	}
}

/* count[0 .. 2^w) = histogram of the digit (bit, w) over n records. */
SC_INLINE void
histogram_impl(const uint64_t *d, size_t n, uint32_t stride, unsigned bit,
	       unsigned w, size_t *count)
{
	memset(count, 0, ((size_t)1 << w) * sizeof(size_t));
	for (size_t i = 0; i < n; i++)
		count[digit(d + i * stride, bit, w)]++;
}

/* Move each record to pos[its digit]++ (pos: bucket starts on entry,
 * bucket ends on return). */
SC_INLINE void
scatter_impl(const uint64_t *src, uint64_t *dst, size_t n, uint32_t stride,
	     unsigned bit, unsigned w, size_t *pos)
{
	for (size_t i = 0; i < n; i++) {
		const uint64_t *r = src + i * stride;

		rec_copy(dst + pos[digit(r, bit, w)]++ * stride, r, stride);
	}
}

/* The hot loops, specialised for the common strides so the record copy
 * and compare unroll. */
#define SC_DISPATCH(stride, call_fixed, call_any)                              \
	switch (stride) {                                                      \
	case 2: {                                                              \
		const uint32_t S_ = 2;                                         \
		call_fixed;                                                    \
		break;                                                         \
	}                                                                      \
	case 3: {                                                              \
		const uint32_t S_ = 3;                                         \
		call_fixed;                                                    \
		break;                                                         \
	}                                                                      \
	case 4: {                                                              \
		const uint32_t S_ = 4;                                         \
		call_fixed;                                                    \
		break;                                                         \
	}                                                                      \
	case 5: {                                                              \
		const uint32_t S_ = 5;                                         \
		call_fixed;                                                    \
		break;                                                         \
	}                                                                      \
	default:                                                               \
		call_any;                                                      \
		break;                                                         \
	}

static void
insertion_sort(uint64_t *d, size_t n, uint32_t stride)
{
	SC_DISPATCH(stride, insertion_sort_impl(d, n, S_),
		    insertion_sort_impl(d, n, stride));
}

static void
histogram(const uint64_t *d, size_t n, uint32_t stride, unsigned bit,
	  unsigned w, size_t *count)
{
	SC_DISPATCH(stride, histogram_impl(d, n, S_, bit, w, count),
		    histogram_impl(d, n, stride, bit, w, count));
}

static void
scatter(const uint64_t *src, uint64_t *dst, size_t n, uint32_t stride,
	unsigned bit, unsigned w, size_t *pos)
{
	SC_DISPATCH(stride, scatter_impl(src, dst, n, S_, bit, w, pos),
		    scatter_impl(src, dst, n, stride, bit, w, pos));
}

/*
 * Consolidate n sorted records from src, appending to dst at *nout: equal
 * rows add, zero sums vanish. Returns false on overflow (then *nout is
 * unchanged; src is untouched either way).
 */
SC_INLINE bool
compact_impl(const uint64_t *src, size_t n, uint64_t *dst, size_t *nout,
	     uint32_t stride)
{
	uint32_t ncols = stride - 1;
	size_t out = *nout, i = 0;

	while (i < n) {
		const uint64_t *r = src + i * stride;
		int64_t w = (int64_t)r[ncols];

		if (i + 1 < n &&
		    rec_cmp(src + (i + 1) * stride, r, ncols) == 0) {
			/* A run of equal rows: sum wide, so only the total
			 * must fit (+MAX, +1, -1 is MAX, not an overflow). */
			__int128 sum = w;

			for (i++;
			     i < n && rec_cmp(src + i * stride, r, ncols) == 0;
			     i++)
				sum += (int64_t)src[i * stride + ncols];
			if (sum > INT64_MAX || sum < INT64_MIN)
				return false;
			w = (int64_t)sum;
		} else {
			i++;
		}
		if (w != 0) {
			rec_copy(dst + out * stride, r, stride);
			dst[out * stride + ncols] = (uint64_t)w;
			out++;
		}
	}
	*nout = out;
	return true;
}

static bool
compact(const uint64_t *src, size_t n, uint64_t *dst, size_t *nout,
	uint32_t stride)
{
	bool ok;

	SC_DISPATCH(stride, ok = compact_impl(src, n, dst, nout, S_),
		    ok = compact_impl(src, n, dst, nout, stride));
	return ok;
}

/* Buckets at most this many bytes are sorted in cache (two of them, the
 * bucket and its partner area, must fit in L2). */
#define SORT_CACHE_BYTES ((size_t)192 << 10)
/* Buckets at or below this many records finish by insertion sort. */
#define SORT_LEAF 16
/* The widest digit of the in-cache levels: 2^12 counters = 16 KB. */
#define SORT_MAX_BITS 12
/* Counters for the in-cache levels, a stack shared by all of them (the
 * levels nest, each holding its counters until its buckets are done). */
#define SORT_ARENA ((size_t)1 << 16)

/* What the sort carries. */
struct sort_ctx {
	uint32_t stride; /* words per record */
	unsigned nbits;	 /* key bits: 64 * ncols */
	uint64_t *out;	 /* consolidated output */
	size_t nout;	 /* records in out */
	bool overflow;	 /* a sum overflowed */
	uint32_t *arena; /* counters for msd_small */
	size_t arena_n;	 /* how many (at most SORT_ARENA) */
	size_t top;	 /* counters in use */
};

/* Append n sorted records to the output, consolidating them. */
static void
emit_sorted(struct sort_ctx *ctx, const uint64_t *d, size_t n)
{
	if (!ctx->overflow && !compact(d, n, ctx->out, &ctx->nout, ctx->stride))
		ctx->overflow = true;
}

/* The digit width for an in-cache bucket of n records: about log2(n) + 1,
 * so buckets come out a record or two each; never across a word, never
 * more counters than the arena has left (0 if it is exhausted). */
static unsigned
small_width(const struct sort_ctx *ctx, size_t n, unsigned bit)
{
	unsigned w = 64 - (unsigned)__builtin_clzll(n);

	if (w > SORT_MAX_BITS)
		w = SORT_MAX_BITS;
	if (w > 64 - (bit & 63))
		w = 64 - (bit & 63);
	while (w > 0 && ((size_t)1 << w) > ctx->arena_n - ctx->top)
		w--;
	return w;
}

/* The in-cache levels count in 32 bits: a bucket there has well under
 * 2^32 records. */
SC_INLINE void
histogram32_impl(const uint64_t *d, size_t n, uint32_t stride, unsigned bit,
		 unsigned w, uint32_t *count)
{
	memset(count, 0, ((size_t)1 << w) * sizeof(uint32_t));
	for (size_t i = 0; i < n; i++)
		count[digit(d + i * stride, bit, w)]++;
}

SC_INLINE void
scatter32_impl(const uint64_t *src, uint64_t *dst, size_t n, uint32_t stride,
	       unsigned bit, unsigned w, uint32_t *pos)
{
	for (size_t i = 0; i < n; i++) {
		const uint64_t *r = src + i * stride;

		rec_copy(dst + (size_t)pos[digit(r, bit, w)]++ * stride, r,
			 stride);
	}
}

static void
histogram32(const uint64_t *d, size_t n, uint32_t stride, unsigned bit,
	    unsigned w, uint32_t *count)
{
	SC_DISPATCH(stride, histogram32_impl(d, n, S_, bit, w, count),
		    histogram32_impl(d, n, stride, bit, w, count));
}

static void
scatter32(const uint64_t *src, uint64_t *dst, size_t n, uint32_t stride,
	  unsigned bit, unsigned w, uint32_t *pos)
{
	SC_DISPATCH(stride, scatter32_impl(src, dst, n, S_, bit, w, pos),
		    scatter32_impl(src, dst, n, stride, bit, w, pos));
}

/* Order a group of two records that lies in `src`: in place if to_b (the
 * result belongs in src), else into `dst`. */
SC_INLINE void
pair_impl(uint64_t *src, uint64_t *dst, uint32_t stride, bool to_b)
{
	uint64_t *first = src, *second = src + stride;

	if (rec_cmp(first, second, stride - 1) > 0) {
		first = second;
		second = src;
	}
	if (to_b) {
		if (first != src) { /* swap in place */
			uint64_t tmp[SC_SCHEMA_MAX_COLS + 1];

			rec_copy(tmp, src, stride);
			rec_copy(src, src + stride, stride);
			rec_copy(src + stride, tmp, stride);
		}
		return;
	}
	rec_copy(dst, first, stride);
	rec_copy(dst + stride, second, stride);
}

static void
pair(uint64_t *src, uint64_t *dst, uint32_t stride, bool to_b)
{
	SC_DISPATCH(stride, pair_impl(src, dst, S_, to_b),
		    pair_impl(src, dst, stride, to_b));
}

/*
 * Sort the n records of an in-cache bucket `a` (partner area `b`) from key
 * bit `bit` on; the result ends in `b` if to_b, else in `a`. Digits are
 * about log2(n) wide, so one level usually leaves buckets of one or two
 * records, which are finished on the spot (a lone record that belongs in b
 * does not move at all); digits on which the bucket agrees are skipped
 * without moving anything. Counters come from ctx's arena, so the stack
 * stays small whatever the depth; when the arena runs out (only for
 * pathological inputs on very wide rows) a bucket is insertion sorted.
 */
static void
msd_small(struct sort_ctx *ctx, uint64_t *a, uint64_t *b, size_t n,
	  unsigned bit, bool to_b)
{
	const uint32_t stride = ctx->stride;
	uint32_t *cnt = ctx->arena + ctx->top, prev, sum;
	unsigned w = 0;

	for (;;) {
		if (n > SORT_LEAF && bit < ctx->nbits)
			w = small_width(ctx, n, bit);
		if (n <= SORT_LEAF || bit >= ctx->nbits || w == 0) {
			if (bit < ctx->nbits)
				insertion_sort(a, n, stride);
			if (to_b)
				memcpy(b, a, n * stride * sizeof(uint64_t));
			return;
		}
		histogram32(a, n, stride, bit, w, cnt);
		if (cnt[digit(a, bit, w)] != n)
			break;
		bit += w;
	}
	sum = 0;
	for (size_t d = 0; d < ((size_t)1 << w); d++) {
		uint32_t c = cnt[d];

		cnt[d] = sum;
		sum += c;
	}
	scatter32(a, b, n, stride, bit, w, cnt); /* cnt[d]: end of bucket d */
	ctx->top += (size_t)1 << w;
	prev = 0;
	for (size_t d = 0; d < ((size_t)1 << w); d++) {
		uint32_t start = prev, c = cnt[d] - prev;

		prev = cnt[d];
		if (c < 2) {
			if (c == 1 && !to_b)
				rec_copy(a + (size_t)start * stride,
					 b + (size_t)start * stride, stride);
		} else if (c == 2) {
			pair(b + (size_t)start * stride,
			     a + (size_t)start * stride, stride, to_b);
		} else {
			msd_small(ctx, b + (size_t)start * stride,
				  a + (size_t)start * stride, c, bit + w,
				  !to_b);
		}
	}
	ctx->top -= (size_t)1 << w;
}

/*
 * Sort and emit a bucket too large for the cache: 8-bit digits (256 write
 * streams keep the scatter friendly to caches and TLB), ping-ponging
 * between `a` and `b`, until buckets fit in cache; those are sorted by
 * msd_small and emitted in key order. Each frame holds 2 KB of counts.
 */
static void
msd_big(struct sort_ctx *ctx, uint64_t *a, uint64_t *b, size_t n, unsigned bit)
{
	const uint32_t stride = ctx->stride;
	size_t count[256], pos[256], off;
	unsigned w;

	for (;;) {
		if (bit >= ctx->nbits) { /* all one row */
			emit_sorted(ctx, a, n);
			return;
		}
		if (n * stride * sizeof(uint64_t) <= SORT_CACHE_BYTES) {
			/* The sorted bucket ends in b: every record
			 * that a digit isolates stays where the scatter
			 * put it, none is copied back. */
			msd_small(ctx, a, b, n, bit, true);
			emit_sorted(ctx, b, n);
			return;
		}
		w = 64 - (bit & 63) < 8 ? 64 - (bit & 63) : 8;
		histogram(a, n, stride, bit, w, count);
		if (count[digit(a, bit, w)] != n)
			break;
		bit += w;
	}
	off = 0;
	for (unsigned d = 0; d < (1u << w); d++) {
		pos[d] = off;
		off += count[d];
	}
	scatter(a, b, n, stride, bit, w, pos);
	off = 0;
	for (unsigned d = 0; d < (1u << w); d++) {
		if (count[d])
			msd_big(ctx, b + off * stride, a + off * stride,
				count[d], bit + w);
		off += count[d];
	}
}

/* One read of the input tells whether it is sorted, which key bits vary
 * at all, and the histogram of the top byte. */
struct scan {
	bool sorted;	   /* already in order */
	unsigned first;	   /* first key bit that varies; nbits if none */
	size_t hist0[256]; /* histogram of key bits 0..7 */
};

SC_INLINE void
scan_impl(const uint64_t *d, size_t n, uint32_t stride, bool hist,
	  struct scan *sc)
{
	const uint32_t ncols = stride - 1;
	uint64_t diff[SC_SCHEMA_MAX_COLS] = {0};
	bool sorted = true;

	if (hist)
		memset(sc->hist0, 0, sizeof(sc->hist0));
	for (size_t i = 0; i < n; i++) {
		const uint64_t *r = d + i * stride;

		for (uint32_t j = 0; j < ncols; j++)
			diff[j] |= r[j] ^ d[j];
		if (hist)
			sc->hist0[r[0] >> 56]++;
		if (i > 0)
			sorted &= rec_cmp(r - stride, r, ncols) <= 0;
	}
	sc->sorted = sorted;
	sc->first = ncols * 64;
	for (uint32_t j = 0; j < ncols; j++)
		if (diff[j]) {
			sc->first = j * 64 + (unsigned)__builtin_clzll(diff[j]);
			break;
		}
}

/* hist: also fill sc->hist0 (only the first level's scatter uses it;
 * clearing 2 KB of counters dominated the scan of small inputs). */
static void
scan(const uint64_t *d, size_t n, uint32_t stride, bool hist, struct scan *sc)
{
	if (hist) {
		SC_DISPATCH(stride, scan_impl(d, n, S_, true, sc),
			    scan_impl(d, n, stride, true, sc));
	} else {
		SC_DISPATCH(stride, scan_impl(d, n, S_, false, sc),
			    scan_impl(d, n, stride, false, sc));
	}
}

/* The builder's scratch: room for `n` records, kept for reuse. */
static int
builder_scratch(struct sc_batch_builder *b, size_t n)
{
	uint64_t *s;

	if (b->scratch_cap >= n)
		return 0;
	s = rec_alloc(n, b->stride);
	if (!s)
		return SC_ENOMEM;
	sc__mem_free(b->scratch);
	b->scratch = s;
	b->scratch_cap = n;
	return 0;
}

/*
 * Sort and consolidate the builder's records into ctx->out without
 * writing the builder's own buffer (so a failure leaves it as it was).
 * The first level scatters the whole input into the scratch by its first
 * varying byte; each first-level bucket is then sorted by ping-ponging with
 * a second area the size of the largest bucket, which stays in cache from
 * one bucket to the next (for random keys it is 1/256 of the input).
 */
/*
 * Counters for the in-cache levels of buckets of up to n records: the
 * first level needs at most 2n, deeper ones rarely much more; if they run
 * out a bucket is insertion sorted instead (correct, only slower).
 */
static size_t
arena_for(size_t n)
{
	return n < (SORT_ARENA - 64) / 4 ? 4 * n + 64 : SORT_ARENA;
}

/* The records of a counter arena of n counters, rounded up. */
static size_t
arena_records(size_t n, uint32_t stride)
{
	size_t rec = (size_t)stride * sizeof(uint64_t);

	return (n * sizeof(uint32_t) + rec - 1) / rec;
}

/*
 * A builder whose records fit in cache (and tiny ones above all: deltas of
 * a few rows are the common case of an incremental step) is sorted without
 * the first level's scatter: a copy goes straight to msd_small (or, for a
 * handful of records, to insertion sort) and is emitted from there.
 */
static int
sort_small_builder(struct sc_batch_builder *b, struct sort_ctx *ctx,
		   unsigned bit)
{
	const uint32_t stride = b->stride;
	size_t n = b->count, an = arena_for(n);
	uint64_t *a, *tmp;

	if (builder_scratch(b, 2 * n + arena_records(an, stride)))
		return SC_ENOMEM;
	a = b->scratch;
	tmp = a + n * stride;
	memcpy(a, b->data, n * stride * sizeof(uint64_t));
	if (n <= SORT_LEAF) {
		insertion_sort(a, n, stride);
		emit_sorted(ctx, a, n);
		return 0;
	}
	ctx->arena = (uint32_t *)(tmp + n * stride);
	ctx->arena_n = an;
	ctx->top = 0;
	msd_small(ctx, a, tmp, n, bit, true);
	emit_sorted(ctx, tmp, n);
	return 0;
}

/*
 * Sort and consolidate the builder's records into ctx->out without
 * writing the builder's own buffer (so a failure leaves it as it was).
 * The first level scatters the whole input into the scratch by its first
 * varying byte; each first-level bucket is then sorted by ping-ponging with
 * a second area the size of the largest bucket, which stays in cache from
 * one bucket to the next (for random keys it is 1/256 of the input).
 */
static int
sort_builder(struct sc_batch_builder *b, struct sort_ctx *ctx)
{
	const uint32_t stride = b->stride;
	size_t n = b->count, count[256], pos[256], off, maxb = 0, an;
	struct scan sc;
	unsigned bit, w;
	uint64_t *s, *tmp;
	bool in_cache = n * stride * sizeof(uint64_t) <= SORT_CACHE_BYTES;

	scan(b->data, n, stride, !in_cache, &sc);
	if (sc.sorted || sc.first >= ctx->nbits) {
		emit_sorted(ctx, b->data, n); /* in order, or all one row */
		return 0;
	}
	if (in_cache)
		return sort_small_builder(b, ctx, sc.first);
	if (sc.first < 8) {
		bit = 0;
		w = 8;
		memcpy(count, sc.hist0, sizeof(count));
	} else {
		bit = sc.first;
		w = 64 - (bit & 63) < 8 ? 64 - (bit & 63) : 8;
		histogram(b->data, n, stride, bit, w, count);
	}
	for (unsigned d = 0; d < (1u << w); d++)
		maxb = count[d] > maxb ? count[d] : maxb;
	/* Scratch: the first level's output, the partner area, and the
	 * counters of the in-cache levels (sized for the largest bucket
	 * that msd_big hands to msd_small). */
	an = arena_for(maxb < SORT_CACHE_BYTES / ((size_t)stride * 8)
			   ? maxb
			   : SORT_CACHE_BYTES / ((size_t)stride * 8));
	if (builder_scratch(b, n + maxb + arena_records(an, stride)))
		return SC_ENOMEM;
	s = b->scratch;
	tmp = s + n * stride;
	ctx->arena = (uint32_t *)(tmp + maxb * stride);
	ctx->arena_n = an;
	ctx->top = 0;
	off = 0;
	for (unsigned d = 0; d < (1u << w); d++) {
		pos[d] = off;
		off += count[d];
	}
	scatter(b->data, s, n, stride, bit, w, pos);
	off = 0;
	for (unsigned d = 0; d < (1u << w); d++) {
		if (count[d])
			msd_big(ctx, s + off * stride, tmp, count[d], bit + w);
		off += count[d];
	}
	return 0;
}

/*
 * Builders of at most SMALL_ROWS records (a step's delta, a frame on an
 * edge: the common case) skip the radix sort. Its fixed costs (a scan, a
 * scratch area, counters to clear) are what a delta of a few rows paid
 * for; an insertion sort over 32 records costs less than clearing one
 * histogram.
 */
#define SMALL_ROWS 32

/*
 * Copy the n records of src into dst in sorted order: an insertion sort
 * whose input is the builder and whose output is the batch, so each record
 * is written into place once. A record already in order costs one compare
 * and no shift, so sorted input (a batch pushed again) is in effect a
 * sortedness check and a copy. Stable, so equal rows stay in push order.
 */
SC_INLINE void
insert_into_impl(const uint64_t *src, size_t n, uint64_t *dst, uint32_t stride)
{
	const uint32_t ncols = stride - 1;

	for (size_t i = 0; i < n; i++) {
		const uint64_t *r = src + i * stride;
		size_t j = i;

		while (j > 0 && rec_gt(dst + (j - 1) * stride, r, ncols)) {
			rec_copy(dst + j * stride, dst + (j - 1) * stride,
				 stride);
			j--;
		}
		rec_copy(dst + j * stride, r, stride);
	}
}

/*
 * Consolidate the n sorted records of d in place (equal rows add, zero
 * sums vanish; a run is summed wide, so only its total must fit int64).
 * Returns false on overflow, leaving d partly rewritten: the caller drops
 * it. A record moves only when something before it vanished, and then to
 * a lower slot, so source and destination never overlap.
 */
SC_INLINE bool
compact_in_place_impl(uint64_t *d, size_t n, size_t *nout, uint32_t stride)
{
	const uint32_t ncols = stride - 1;
	size_t out = 0, i = 0;

	while (i < n) {
		const uint64_t *r = d + i * stride;
		int64_t w = (int64_t)r[ncols];
		size_t j = i + 1;

		if (j < n && rec_eq(d + j * stride, r, ncols)) {
			__int128 sum = w;

			for (; j < n && rec_eq(d + j * stride, r, ncols); j++)
				sum += (int64_t)d[j * stride + ncols];
			if (sum > INT64_MAX || sum < INT64_MIN)
				return false;
			w = (int64_t)sum;
		}
		if (w != 0) {
			if (out != i)
				rec_copy(d + out * stride, r, stride);
			d[out * stride + ncols] = (uint64_t)w;
			out++;
		}
		i = j;
	}
	*nout = out;
	return true;
}

SC_INLINE bool
small_sort_impl(const uint64_t *src, size_t n, uint64_t *dst, size_t *nout,
		uint32_t stride)
{
	insert_into_impl(src, n, dst, stride);
	return compact_in_place_impl(dst, n, nout, stride);
}

/* Sort and consolidate n (<= SMALL_ROWS) records of src into dst; *nout
 * rows result. False on overflow. */
static bool
small_sort(const uint64_t *src, size_t n, uint64_t *dst, size_t *nout,
	   uint32_t stride)
{
	bool ok;

	SC_DISPATCH(stride, ok = small_sort_impl(src, n, dst, nout, S_),
		    ok = small_sort_impl(src, n, dst, nout, stride));
	return ok;
}

/* A header block with room for `cap` inline records, uninitialised. NULL
 * if out of memory. */
static struct sc_batch *
small_alloc(size_t cap, uint32_t stride)
{
	return malloc(sizeof(struct sc_batch) +
		      cap * stride * sizeof(uint64_t));
}

/*
 * Make the block r (room for `cap` records, `nout` of them written after
 * the header) a batch of one reference. A block left with much less than
 * its room (rows cancelled) is shrunk, as sc__batch_adopt shrinks, so
 * sc_batch_bytes stays near the truth. Returns the batch (r may move).
 */
SC_INLINE struct sc_batch *
small_seal(struct sc_batch *r, uint32_t ncols, size_t nout, size_t cap)
{
	if (nout < cap - cap / 4) {
		struct sc_batch *s = realloc(
		    r, sizeof(*r) + nout * (ncols + 1) * sizeof(uint64_t));

		if (s)
			r = s;
	}
	r->refs = 1;
	r->ncols = ncols;
	r->stride = ncols + 1;
	r->count = nout;
	r->data = nout ? (uint64_t *)(r + 1) : NULL;
	return r;
}

/*
 * Finish a small builder into a batch whose records follow its header in
 * the same allocation: one malloc and one free per batch instead of two
 * each (release knows the records are inline by their address). A batch
 * left with much less than it was given (rows cancelled) is shrunk, as
 * sc__batch_adopt shrinks, so sc_batch_bytes stays near the truth.
 */
static int
small_finish(struct sc_batch_builder *b, struct sc_batch **out)
{
	const uint32_t stride = b->stride;
	size_t n = b->count, nout = 0;
	struct sc_batch *r = small_alloc(n, stride);

	if (!r)
		return sc__fail(SC_ENOMEM,
				"sc_batch_builder_finish: out of memory for "
				"%zu records",
				n);
	if (!small_sort(b->data, n, (uint64_t *)(r + 1), &nout, stride)) {
		free(r);
		return sc__fail(SC_EOVERFLOW,
				"sc_batch_builder_finish: weights of equal "
				"rows sum beyond int64");
	}
	b->count = 0;
	*out = small_seal(r, b->ncols, nout, n);
	return 0;
}

int
sc_batch_builder_finish(struct sc_batch_builder *b, struct sc_batch **out)
{
	struct sort_ctx ctx;
	size_t n;

	if (!b || !out)
		return sc__fail(SC_EINVAL,
				"sc_batch_builder_finish: %s is NULL",
				!b ? "builder" : "out");
	n = b->count;
	if (n <= SMALL_ROWS)
		return small_finish(b, out);
	ctx.stride = b->stride;
	ctx.nbits = b->ncols * 64;
	ctx.nout = 0;
	ctx.overflow = false;
	ctx.out = rec_alloc(n, b->stride);
	if (!ctx.out)
		goto nomem;
	if (sort_builder(b, &ctx)) {
		sc__mem_free(ctx.out);
		goto nomem;
	}
	if (ctx.overflow) {
		sc__mem_free(ctx.out);
		return sc__fail(SC_EOVERFLOW,
				"sc_batch_builder_finish: weights of equal "
				"rows sum beyond int64");
	}
	if (sc__batch_adopt(b->ncols, ctx.out, ctx.nout, n, out))
		return SC_ENOMEM;
	b->count = 0;
	return 0;

nomem:
	return sc__fail(
	    SC_ENOMEM, "sc_batch_builder_finish: out of memory for %zu records",
	    n);
}

int
sc_batch_from_records(uint32_t ncols, const uint64_t *rows,
		      const int64_t *weights, size_t n, struct sc_batch **out)
{
	struct sc_batch_builder bld;
	int rc;

	if (!out || (!rows && n > 0))
		return sc__fail(SC_EINVAL, "sc_batch_from_records: %s is NULL",
				!out ? "out" : "rows");
	rc = sc_batch_builder_init(&bld, ncols);
	if (rc)
		return rc;
	rc = sc_batch_builder_reserve(&bld, n);
	for (size_t i = 0; rc == 0 && i < n; i++)
		rc = sc_batch_builder_push(&bld, rows + i * ncols, ncols,
					   weights ? weights[i] : 1);
	if (rc == 0)
		rc = sc_batch_builder_finish(&bld, out);
	sc_batch_builder_fini(&bld);
	return rc;
}

/* --- merging ------------------------------------------------------------- */

/* A merge of at most SMALL_ROWS rows writes into the records of a small
 * batch's block (one allocation for the result, as a small builder's). */
int
sc__merge_init(struct sc__merge *m, const struct sc_batch *a,
	       const struct sc_batch *b)
{
	size_t n = a->count + b->count;
	struct sc_batch *small = NULL;
	uint64_t *buf;

	if (n <= SMALL_ROWS) {
		small = small_alloc(n, a->stride);
		buf = small ? (uint64_t *)(small + 1) : NULL;
	} else {
		buf = rec_alloc(n, a->stride);
	}
	if (!buf)
		return sc__fail(SC_ENOMEM, "merge: out of memory for %zu rows",
				n);
	*m = (struct sc__merge){.a = a, .b = b, .out = buf, .small = small};
	return 0;
}

/*
 * The merge loop. Distinct rows are the common case, so the choice of
 * which side to copy is made without a branch (the comparison result
 * selects the pointer and the increments); an equal pair takes the
 * predictable slow path.
 */
SC_INLINE int
merge_impl(struct sc__merge *m, size_t budget, size_t *moved, uint32_t stride)
{
	const uint32_t ncols = stride - 1;
	const uint64_t *pa = m->a->data, *pb = m->b->data;
	size_t ia = m->ia, ib = m->ib, na = m->a->count, nb = m->b->count;
	size_t no = m->nout, done = 0;
	uint64_t *out = m->out;
	int rc = 0;

	while (ia < na && ib < nb && done < budget) {
		const uint64_t *ra = pa + ia * stride, *rb = pb + ib * stride;
		int c = rec_cmp(ra, rb, ncols);

		if (__builtin_expect(c == 0, 0)) {
			int64_t w;

			if (__builtin_add_overflow((int64_t)ra[ncols],
						   (int64_t)rb[ncols], &w)) {
				rc = SC_EOVERFLOW;
				break;
			}
			if (w != 0) {
				rec_copy(out + no * stride, ra, stride);
				out[no * stride + ncols] = (uint64_t)w;
				no++;
			}
			ia++;
			ib++;
			done++; /* one step, though two rows */
			continue;
		}
		{
			size_t take_a = c < 0;

			rec_copy(out + no * stride, take_a ? ra : rb, stride);
			no++;
			ia += take_a;
			ib += 1 - take_a;
			done++;
		}
	}
	if (rc == 0 && (ia == na || ib == nb) && done < budget &&
	    (ia < na || ib < nb)) {
		/* One side is done: the rest of the other is a copy. */
		const uint64_t *rest =
		    ia < na ? pa + ia * stride : pb + ib * stride;
		size_t left = ia < na ? na - ia : nb - ib;

		if (left > budget - done)
			left = budget - done;
		memcpy(out + no * stride, rest, left * stride * 8);
		no += left;
		done += left;
		if (ia < na)
			ia += left;
		else
			ib += left;
	}
	m->ia = ia;
	m->ib = ib;
	m->nout = no;
	*moved = done;
	return rc;
}

int
sc__merge_step(struct sc__merge *m, size_t budget, size_t *moved)
{
	int rc;

	SC_DISPATCH(m->a->stride, rc = merge_impl(m, budget, moved, S_),
		    rc = merge_impl(m, budget, moved, m->a->stride));
	if (rc)
		return sc__fail(SC_EOVERFLOW,
				"merge: weights %" PRId64 " + %" PRId64
				" of one row leave int64",
				sc_batch_weight(m->a, m->ia),
				sc_batch_weight(m->b, m->ib));
	return 0;
}

int
sc__merge_finish(struct sc__merge *m, struct sc_batch **out)
{
	size_t cap = m->a->count + m->b->count;
	int rc = 0;

	if (m->small)
		*out = small_seal(m->small, m->a->ncols, m->nout, cap);
	else
		rc = sc__batch_adopt(m->a->ncols, m->out, m->nout, cap, out);
	m->out = NULL;
	m->small = NULL;
	return rc;
}

void
sc__merge_abort(struct sc__merge *m)
{
	if (m->small)
		free(m->small);
	else
		sc__mem_free(m->out);
	m->out = NULL;
	m->small = NULL;
}

/* --- the group ------------------------------------------------------------ */

static int
check_pair(const char *fn, const struct sc_batch *a, const struct sc_batch *b,
	   struct sc_batch **out)
{
	if (!a || !b || !out)
		return sc__fail(SC_EINVAL, "%s: %s is NULL", fn,
				!a   ? "a"
				: !b ? "b"
				     : "out");
	if (a->ncols != b->ncols)
		return sc__fail(SC_ESCHEMA,
				"%s: batches have %u and %u columns", fn,
				a->ncols, b->ncols);
	return 0;
}

int
sc_batch_add(const struct sc_batch *a, const struct sc_batch *b,
	     struct sc_batch **out)
{
	struct sc__merge m;
	size_t moved;
	int rc = check_pair("sc_batch_add", a, b, out);

	if (rc)
		return rc;
	/* x + 0 is x: share it (batches are immutable; only the reference
	 * count, which is not part of the value, changes). */
	if (b->count == 0 || a->count == 0) {
		*out = sc_batch_retain((struct sc_batch *)(b->count ? b : a));
		return 0;
	}
	rc = sc__merge_init(&m, a, b);
	if (rc)
		return rc;
	rc = sc__merge_step(&m, SIZE_MAX, &moved);
	if (rc) {
		sc__merge_abort(&m);
		return rc;
	}
	return sc__merge_finish(&m, out);
}

int
sc_batch_sum(struct sc_batch *const *batches, size_t n, struct sc_batch **out)
{
	struct sc_batch *l, *r;
	int rc;

	if (!batches || !out || n == 0)
		return sc__fail(SC_EINVAL, "sc_batch_sum: %s",
				n == 0 ? "no batches" : "an argument is NULL");
	for (size_t i = 0; i < n; i++)
		if (!batches[i] || batches[i]->ncols != batches[0]->ncols)
			return sc__fail(batches[i] ? SC_ESCHEMA : SC_EINVAL,
					"sc_batch_sum: batch %zu is NULL or "
					"has a different column count",
					i);
	if (n == 1) {
		*out = sc_batch_retain(batches[0]);
		return 0;
	}
	rc = sc_batch_sum(batches, n / 2, &l);
	if (rc)
		return rc;
	rc = sc_batch_sum(batches + n / 2, n - n / 2, &r);
	if (rc)
		goto release_l;
	rc = sc_batch_add(l, r, out);
	sc_batch_release(r);
release_l:
	sc_batch_release(l);
	return rc;
}

/* k * a with every product checked first, so failure writes nothing. */
static int
scale(const char *fn, const struct sc_batch *a, int64_t k,
      struct sc_batch **out)
{
	uint64_t *d;

	if (!a || !out)
		return sc__fail(SC_EINVAL, "%s: %s is NULL", fn,
				!a ? "batch" : "out");
	if (k == 0)
		return sc_batch_empty(a->ncols, out);
	for (size_t i = 0; i < a->count; i++) {
		int64_t p;

		if (__builtin_mul_overflow(sc_batch_weight(a, i), k, &p))
			return sc__fail(SC_EOVERFLOW,
					"%s: weight %" PRId64 " x %" PRId64
					" leaves int64",
					fn, sc_batch_weight(a, i), k);
	}
	d = rec_alloc(a->count, a->stride);
	if (!d)
		return sc__fail(SC_ENOMEM, "%s: out of memory", fn);
	if (a->count)
		memcpy(d, a->data, a->count * a->stride * 8);
	for (size_t i = 0; i < a->count; i++) {
		uint64_t *w = d + i * a->stride + a->ncols;

		*w = (uint64_t)((int64_t)*w * k);
	}
	return sc__batch_adopt(a->ncols, d, a->count, a->count, out);
}

int
sc_batch_negate(const struct sc_batch *a, struct sc_batch **out)
{
	return scale("sc_batch_negate", a, -1, out);
}

int
sc_batch_scale(const struct sc_batch *a, int64_t k, struct sc_batch **out)
{
	return scale("sc_batch_scale", a, k, out);
}

bool
sc_batch_equal(const struct sc_batch *a, const struct sc_batch *b)
{
	if (!a || !b)
		return a == b;
	if (a->ncols != b->ncols || a->count != b->count)
		return false;
	return a->count == 0 ||
	       memcmp(a->data, b->data, a->count * a->stride * 8) == 0;
}

bool
sc_batch_is_consolidated(const struct sc_batch *b)
{
	if (!b)
		return false;
	for (size_t i = 0; i < b->count; i++) {
		if (sc_batch_weight(b, i) == 0)
			return false;
		if (i > 0 && sc_row_cmp(sc_batch_row(b, i - 1),
					sc_batch_row(b, i), b->ncols) >= 0)
			return false;
	}
	return true;
}

/* --- keys ----------------------------------------------------------------- */

size_t
sc_batch_lower_bound(const struct sc_batch *b, const uint64_t *key, uint32_t k,
		     size_t from)
{
	size_t lo = from, hi = b->count;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (sc_row_cmp(sc_batch_row(b, mid), key, k) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The first row index in [from, count) whose prefix is > key. */
static size_t
upper_bound(const struct sc_batch *b, const uint64_t *key, uint32_t k,
	    size_t from)
{
	size_t lo = from, hi = b->count;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (sc_row_cmp(sc_batch_row(b, mid), key, k) <= 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int
sc_batch_key_range(const struct sc_batch *b, const uint64_t *key, uint32_t k,
		   size_t *lo, size_t *hi)
{
	size_t l;

	if (!b || !lo || !hi || (!key && k > 0))
		return sc__fail(SC_EINVAL,
				"sc_batch_key_range: an argument is NULL");
	if (k > b->ncols)
		return sc__fail(SC_ESCHEMA,
				"sc_batch_key_range: key of %u columns, batch "
				"has %u",
				k, b->ncols);
	l = sc_batch_lower_bound(b, key, k, 0);
	*hi = upper_bound(b, key, k, l);
	*lo = l;
	return 0;
}

int
sc_batch_index_by(const struct sc_batch *b, const uint32_t *cols, uint32_t n,
		  struct sc_batch **out)
{
	struct sc_batch_builder bld;
	uint64_t row[SC_SCHEMA_MAX_COLS];
	int rc;

	if (!b || !cols || !out)
		return sc__fail(SC_EINVAL, "sc_batch_index_by: an argument is "
					   "NULL");
	if (!ncols_valid(n))
		return bad_ncols("sc_batch_index_by", n);
	for (uint32_t j = 0; j < n; j++)
		if (cols[j] >= b->ncols)
			return sc__fail(SC_ESCHEMA,
					"sc_batch_index_by: column %u of a "
					"%u-column batch",
					cols[j], b->ncols);
	rc = sc_batch_builder_init(&bld, n);
	if (rc == 0)
		rc = sc_batch_builder_reserve(&bld, b->count);
	for (size_t i = 0; rc == 0 && i < b->count; i++) {
		const uint64_t *r = sc_batch_row(b, i);

		for (uint32_t j = 0; j < n; j++)
			row[j] = r[cols[j]];
		rc = sc_batch_builder_push(&bld, row, n, sc_batch_weight(b, i));
	}
	if (rc == 0)
		rc = sc_batch_builder_finish(&bld, out);
	sc_batch_builder_fini(&bld);
	return rc;
}

/* --- printing ---------------------------------------------------------------
 */

static void
print_rows(FILE *f, const struct sc_batch *b, const struct sc_schema *s,
	   size_t max_rows)
{
	char buf[1024];
	bool typed = s && s->ncols == b->ncols;

	(void)fprintf(f, "batch of %zu row%s (%u column%s)%s\n", b->count,
		      b->count == 1 ? "" : "s", b->ncols,
		      b->ncols == 1 ? "" : "s", typed ? "" : ", raw words");
	for (size_t i = 0; i < b->count; i++) {
		const uint64_t *r = sc_batch_row(b, i);

		if (i == max_rows) {
			(void)fprintf(f, "  ... %zu more\n", b->count - i);
			break;
		}
		if (typed) {
			(void)sc_schema_format_row(s, r, buf, sizeof(buf));
			(void)fprintf(f, "  %s", buf);
		} else {
			(void)fprintf(f, "  (");
			for (uint32_t j = 0; j < b->ncols; j++)
				(void)fprintf(f, "%s0x%" PRIx64, j ? ", " : "",
					      r[j]);
			(void)fprintf(f, ")");
		}
		(void)fprintf(f, " x %" PRId64 "\n", sc_batch_weight(b, i));
	}
}

void
sc_batch_fprint(FILE *f, const struct sc_batch *b, const struct sc_schema *s)
{
	if (!f)
		return;
	if (!b) {
		(void)fprintf(f, "batch (null)\n");
		return;
	}
	print_rows(f, b, s, SIZE_MAX);
}

int
sc_batch_to_string(const struct sc_batch *b, const struct sc_schema *s,
		   size_t max_rows, char **out)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	if (!b || !out)
		return sc__fail(SC_EINVAL, "sc_batch_to_string: %s is NULL",
				!b ? "batch" : "out");
	f = open_memstream(&text, &len);
	if (!f)
		return sc__fail(SC_ENOMEM, "sc_batch_to_string: out of memory");
	print_rows(f, b, s, max_rows);
	if (fclose(f) != 0 || !text) {
		free(text);
		return sc__fail(SC_ENOMEM, "sc_batch_to_string: out of memory");
	}
	*out = text;
	return 0;
}

/*
 * batch_sort.c - sorting and consolidating a builder's rows into a batch
 * (sc_batch_builder_finish): the insertion sort of small builders, the
 * most-significant-digit-first radix sort of large ones, and the
 * consolidation that follows each (see batch.h for the design and its
 * measured costs).
 */
#include "operators/batch_int.h"
#include "operators/doing_int.h"
#include "operators/mem_int.h"

#include <stdlib.h>
#include <string.h>

/*
 * The digit of `w` bits at bit `bit` of a record's key, bit 0 being the
 * top bit of word 0. A digit never crosses a word (w <= 64 - bit % 64).
 */
SC__INLINE unsigned
digit(const uint64_t *rec, unsigned bit, unsigned w)
{
	return (unsigned)((rec[bit >> 6] << (bit & 63)) >> (64 - w));
}

/* a > b, and a == b: cheaper than a three-way compare where only one
 * answer is wanted (the small path's insertion sort and runs). */
SC__INLINE bool
rec_gt(const uint64_t *a, const uint64_t *b, uint32_t ncols)
{
	if (ncols == 1)
		return a[0] > b[0];
	if (ncols == 2)
		return a[0] > b[0] || (a[0] == b[0] && a[1] > b[1]);
	return sc_row_cmp(a, b, ncols) > 0;
}

SC__INLINE bool
rec_eq(const uint64_t *a, const uint64_t *b, uint32_t ncols)
{
	if (ncols == 1)
		return a[0] == b[0];
	if (ncols == 2)
		return ((a[0] ^ b[0]) | (a[1] ^ b[1])) == 0;
	return sc_row_eq(a, b, ncols);
}

SC__INLINE void
insertion_sort_impl(uint64_t *d, size_t n, uint32_t stride)
{
	uint64_t tmp[SC_SCHEMA_MAX_COLS + 1];
	uint32_t ncols = stride - 1;

	for (size_t i = 1; i < n; i++) {
		uint64_t *cur = d + i * stride;
		size_t j = i;

		if (sc__rec_cmp(cur - stride, cur, ncols) <= 0)
			continue;
		sc__rec_copy(tmp, cur, stride);
		while (j > 0 &&
		       sc__rec_cmp(d + (j - 1) * stride, tmp, ncols) > 0) {
			sc__rec_copy(d + j * stride, d + (j - 1) * stride,
				     stride);
			j--;
		}
		sc__rec_copy(d + j * stride, tmp, stride);
	}
}

/* count[0 .. 2^w) = histogram of the digit (bit, w) over n records. */
SC__INLINE void
histogram_impl(const uint64_t *d, size_t n, uint32_t stride, unsigned bit,
	       unsigned w, size_t *count)
{
	memset(count, 0, ((size_t)1 << w) * sizeof(size_t));
	for (size_t i = 0; i < n; i++)
		count[digit(d + i * stride, bit, w)]++;
}

/* Move each record to pos[its digit]++ (pos: bucket starts on entry,
 * bucket ends on return). */
SC__INLINE void
scatter_impl(const uint64_t *src, uint64_t *dst, size_t n, uint32_t stride,
	     unsigned bit, unsigned w, size_t *pos)
{
	for (size_t i = 0; i < n; i++) {
		const uint64_t *r = src + i * stride;

		sc__rec_copy(dst + pos[digit(r, bit, w)]++ * stride, r, stride);
	}
}

static void
insertion_sort(uint64_t *d, size_t n, uint32_t stride)
{
	SC__DISPATCH(stride, insertion_sort_impl(d, n, S_),
		     insertion_sort_impl(d, n, stride));
}

static void
histogram(const uint64_t *d, size_t n, uint32_t stride, unsigned bit,
	  unsigned w, size_t *count)
{
	SC__DISPATCH(stride, histogram_impl(d, n, S_, bit, w, count),
		     histogram_impl(d, n, stride, bit, w, count));
}

static void
scatter(const uint64_t *src, uint64_t *dst, size_t n, uint32_t stride,
	unsigned bit, unsigned w, size_t *pos)
{
	SC__DISPATCH(stride, scatter_impl(src, dst, n, S_, bit, w, pos),
		     scatter_impl(src, dst, n, stride, bit, w, pos));
}

/*
 * Consolidate n sorted records from src, appending to dst at *nout: equal
 * rows add, zero sums vanish. Returns false on overflow (then *nout is
 * unchanged; src is untouched either way).
 */
SC__INLINE bool
compact_impl(const uint64_t *src, size_t n, uint64_t *dst, size_t *nout,
	     uint32_t stride)
{
	uint32_t ncols = stride - 1;
	size_t out = *nout, i = 0;

	while (i < n) {
		const uint64_t *r = src + i * stride;
		int64_t w = (int64_t)r[ncols];

		if (i + 1 < n &&
		    sc__rec_cmp(src + (i + 1) * stride, r, ncols) == 0) {
			/* A run of equal rows: sum wide, so only the total
			 * must fit (+MAX, +1, -1 is MAX, not an overflow). */
			__int128 sum = w;

			for (i++; i < n &&
				  sc__rec_cmp(src + i * stride, r, ncols) == 0;
			     i++)
				sum += (int64_t)src[i * stride + ncols];
			if (sum > INT64_MAX || sum < INT64_MIN)
				return false;
			w = (int64_t)sum;
		} else {
			i++;
		}
		if (w != 0) {
			sc__rec_copy(dst + out * stride, r, stride);
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

	SC__DISPATCH(stride, ok = compact_impl(src, n, dst, nout, S_),
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
SC__INLINE void
histogram32_impl(const uint64_t *d, size_t n, uint32_t stride, unsigned bit,
		 unsigned w, uint32_t *count)
{
	memset(count, 0, ((size_t)1 << w) * sizeof(uint32_t));
	for (size_t i = 0; i < n; i++)
		count[digit(d + i * stride, bit, w)]++;
}

SC__INLINE void
scatter32_impl(const uint64_t *src, uint64_t *dst, size_t n, uint32_t stride,
	       unsigned bit, unsigned w, uint32_t *pos)
{
	for (size_t i = 0; i < n; i++) {
		const uint64_t *r = src + i * stride;

		sc__rec_copy(dst + (size_t)pos[digit(r, bit, w)]++ * stride, r,
			     stride);
	}
}

static void
histogram32(const uint64_t *d, size_t n, uint32_t stride, unsigned bit,
	    unsigned w, uint32_t *count)
{
	SC__DISPATCH(stride, histogram32_impl(d, n, S_, bit, w, count),
		     histogram32_impl(d, n, stride, bit, w, count));
}

static void
scatter32(const uint64_t *src, uint64_t *dst, size_t n, uint32_t stride,
	  unsigned bit, unsigned w, uint32_t *pos)
{
	SC__DISPATCH(stride, scatter32_impl(src, dst, n, S_, bit, w, pos),
		     scatter32_impl(src, dst, n, stride, bit, w, pos));
}

/* Order a group of two records that lies in `src`: in place if to_b (the
 * result belongs in src), else into `dst`. */
SC__INLINE void
pair_impl(uint64_t *src, uint64_t *dst, uint32_t stride, bool to_b)
{
	uint64_t *first = src, *second = src + stride;

	if (sc__rec_cmp(first, second, stride - 1) > 0) {
		first = second;
		second = src;
	}
	if (to_b) {
		if (first != src) { /* swap in place */
			uint64_t tmp[SC_SCHEMA_MAX_COLS + 1];

			sc__rec_copy(tmp, src, stride);
			sc__rec_copy(src, src + stride, stride);
			sc__rec_copy(src + stride, tmp, stride);
		}
		return;
	}
	sc__rec_copy(dst, first, stride);
	sc__rec_copy(dst + stride, second, stride);
}

static void
pair(uint64_t *src, uint64_t *dst, uint32_t stride, bool to_b)
{
	SC__DISPATCH(stride, pair_impl(src, dst, S_, to_b),
		     pair_impl(src, dst, stride, to_b));
}

/*
 * The first key bit at or after `bit` on which the n records at d do not
 * all agree (nbits if none): one xor-or pass per word. A digit that came
 * out constant (every record in one bucket) sends the sort here instead
 * of to the next digit's histogram: a bucket of rows that share a key
 * word (one auction's bids, then one bidder's) would otherwise pay a
 * cleared counter array and a count per record for each of the word's
 * constant digits.
 */
static unsigned
skip_constant(const uint64_t *d, size_t n, uint32_t stride, unsigned bit,
	      unsigned nbits)
{
	while (bit < nbits) {
		unsigned word = bit >> 6;
		uint64_t diff = 0;

		for (size_t i = 1; i < n; i++)
			diff |= d[i * stride + word] ^ d[word];
		diff &= ~(uint64_t)0 >> (bit & 63);
		if (diff)
			return word * 64 + (unsigned)__builtin_clzll(diff);
		bit = (word + 1) * 64;
	}
	return nbits;
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
		bit = skip_constant(a, n, stride, bit + w, ctx->nbits);
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
				sc__rec_copy(a + (size_t)start * stride,
					     b + (size_t)start * stride,
					     stride);
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
		bit = skip_constant(a, n, stride, bit + w, ctx->nbits);
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

/* One read of an input too large for the cache tells whether it is
 * sorted, which key bits vary at all, and the histogram of the top byte
 * (the first level's scatter uses it). */
struct scan {
	bool sorted;	   /* already in order */
	unsigned first;	   /* first key bit that varies; nbits if none */
	size_t hist0[256]; /* histogram of key bits 0..7 */
};

SC__INLINE void
scan_impl(const uint64_t *d, size_t n, uint32_t stride, struct scan *sc)
{
	const uint32_t ncols = stride - 1;
	uint64_t diff[SC_SCHEMA_MAX_COLS] = {0};
	bool sorted = true;

	memset(sc->hist0, 0, sizeof(sc->hist0));
	for (size_t i = 0; i < n; i++) {
		const uint64_t *r = d + i * stride;

		for (uint32_t j = 0; j < ncols; j++)
			diff[j] |= r[j] ^ d[j];
		sc->hist0[r[0] >> 56]++;
		if (i > 0)
			sorted &= sc__rec_cmp(r - stride, r, ncols) <= 0;
	}
	sc->sorted = sorted;
	sc->first = ncols * 64;
	for (uint32_t j = 0; j < ncols; j++)
		if (diff[j]) {
			sc->first = j * 64 + (unsigned)__builtin_clzll(diff[j]);
			break;
		}
}

static void
scan(const uint64_t *d, size_t n, uint32_t stride, struct scan *sc)
{
	SC__DISPATCH(stride, scan_impl(d, n, S_, sc),
		     scan_impl(d, n, stride, sc));
}

/* The builder's scratch: room for `n` records, kept for reuse. */
static int
builder_scratch(struct sc_batch_builder *b, size_t n)
{
	uint64_t *s;

	if (b->scratch_cap >= n)
		return 0;
	s = sc__rec_alloc(n, b->stride);
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
static bool run_sorted(const uint64_t *d, size_t m, uint32_t stride);

static int
sort_builder(struct sc_batch_builder *b, struct sort_ctx *ctx)
{
	const uint32_t stride = b->stride;
	size_t n = b->count, count[256], pos[256], off, maxb = 0, an;
	struct scan sc;
	unsigned bit, w;
	uint64_t *s, *tmp;
	bool in_cache = n * stride * sizeof(uint64_t) <= SORT_CACHE_BYTES;

	/* In cache, the scan stops at the first pair out of order (for rows
	 * in no order, a few): msd_small finds the first varying bit on its
	 * own, from a histogram of the top digit and the constant-digit
	 * skip, at a small part of a full scan's cost per row. */
	if (in_cache) {
		if (run_sorted(b->data, n, stride)) {
			emit_sorted(ctx, b->data, n); /* in order already */
			return 0;
		}
		return sort_small_builder(b, ctx, 0);
	}
	scan(b->data, n, stride, &sc);
	if (sc.sorted || sc.first >= ctx->nbits) {
		emit_sorted(ctx, b->data, n); /* in order, or all one row */
		return 0;
	}
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

/* Whether records a and b agree on their first k words. */
static inline bool
prefix_eq(const uint64_t *a, const uint64_t *b, uint32_t k)
{
	for (uint32_t j = 0; j < k; j++)
		if (a[j] != b[j])
			return false;
	return true;
}

/* The end of the run of records from i on that agree with record i on
 * their first k words. */
SC__INLINE size_t
run_end(const uint64_t *d, size_t n, uint32_t stride, uint32_t k, size_t i)
{
	const uint64_t *r = d + i * stride;
	size_t j = i + 1;

	if (k == 1) { /* the common key of one column */
		while (j < n && d[j * stride] == r[0])
			j++;
		return j;
	}
	while (j < n && prefix_eq(d + j * stride, r, k))
		j++;
	return j;
}

/* Whether the m records at d are in order already (a join's run of one
 * key often is: its rows follow one side's delta). Stops at the first
 * pair out of order. */
static bool
run_sorted(const uint64_t *d, size_t m, uint32_t stride)
{
	for (size_t i = 1; i < m; i++)
		if (rec_gt(d + (i - 1) * stride, d + i * stride, stride - 1))
			return false;
	return true;
}

/* The first key bit from word `from` on that varies among the m records
 * at d (64 * ncols if none): the run's radix sort starts there rather
 * than finding constant digits one histogram at a time. */
static unsigned
first_varying(const uint64_t *d, size_t m, uint32_t stride, uint32_t from)
{
	for (uint32_t j = from; j + 1 < stride; j++) {
		uint64_t diff = 0;

		for (size_t i = 1; i < m; i++)
			diff |= d[i * stride + j] ^ d[j];
		if (diff)
			return j * 64 + (unsigned)__builtin_clzll(diff);
	}
	return (stride - 1) * 64;
}

/*
 * Sort and consolidate the builder's records, pushed in order of their
 * first k words (sc__batch_builder_finish_prefix), run by run: only a run
 * of records equal on those words needs sorting, and only if it is not in
 * order already: a copy of it in the scratch (the builder stays as it
 * was), by insertion sort or, from the first key bit that varies within
 * it, by msd_big, which splits a run too large for the cache until its
 * buckets fit. What lies between the runs out of order is emitted as it
 * stands. The scratch grows only to the longest run out of order, not to
 * the input: a copy of the whole input cost page faults and cache.
 */
static int
sort_prefix(struct sc_batch_builder *b, struct sort_ctx *ctx, uint32_t k)
{
	const uint32_t stride = b->stride;
	const uint64_t *d = b->data;
	size_t n = b->count, span = 0;
	size_t cache_rows = SORT_CACHE_BYTES / ((size_t)stride * 8);

	for (size_t i = 0; i < n;) {
		size_t j = run_end(d, n, stride, k, i), m = j - i, an;
		uint64_t *a, *tmp;

		if (m == 1 || run_sorted(d + i * stride, m, stride)) {
			i = j;
			continue;
		}
		an = arena_for(m < cache_rows ? m : cache_rows);
		if (builder_scratch(b, 2 * m + arena_records(an, stride)))
			return SC_ENOMEM;
		a = b->scratch;
		tmp = a + m * stride;
		emit_sorted(ctx, d + span * stride, i - span);
		memcpy(a, d + i * stride, m * stride * sizeof(uint64_t));
		if (m <= SORT_LEAF) {
			insertion_sort(a, m, stride);
			emit_sorted(ctx, a, m);
		} else {
			ctx->arena = (uint32_t *)(tmp + m * stride);
			ctx->arena_n = an;
			ctx->top = 0;
			msd_big(ctx, a, tmp, m, first_varying(a, m, stride, k));
		}
		span = i = j;
	}
	emit_sorted(ctx, d + span * stride, n - span);
	return 0;
}

/*
 * Copy the n records of src into dst in sorted order: an insertion sort
 * whose input is the builder and whose output is the batch, so each record
 * is written into place once. A record already in order costs one compare
 * and no shift, so sorted input (a batch pushed again) is in effect a
 * sortedness check and a copy. Stable, so equal rows stay in push order.
 */
SC__INLINE void
insert_into_impl(const uint64_t *src, size_t n, uint64_t *dst, uint32_t stride)
{
	const uint32_t ncols = stride - 1;

	for (size_t i = 0; i < n; i++) {
		const uint64_t *r = src + i * stride;
		size_t j = i;

		while (j > 0 && rec_gt(dst + (j - 1) * stride, r, ncols)) {
			sc__rec_copy(dst + j * stride, dst + (j - 1) * stride,
				     stride);
			j--;
		}
		sc__rec_copy(dst + j * stride, r, stride);
	}
}

/*
 * Consolidate the n sorted records of d in place (equal rows add, zero
 * sums vanish; a run is summed wide, so only its total must fit int64).
 * Returns false on overflow, leaving d partly rewritten: the caller drops
 * it. A record moves only when something before it vanished, and then to
 * a lower slot, so source and destination never overlap.
 */
SC__INLINE bool
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
				sc__rec_copy(d + out * stride, r, stride);
			d[out * stride + ncols] = (uint64_t)w;
			out++;
		}
		i = j;
	}
	*nout = out;
	return true;
}

SC__INLINE bool
small_sort_impl(const uint64_t *src, size_t n, uint64_t *dst, size_t *nout,
		uint32_t stride)
{
	insert_into_impl(src, n, dst, stride);
	return compact_in_place_impl(dst, n, nout, stride);
}

/* Sort and consolidate n (<= SC__SMALL_ROWS) records of src into dst; *nout
 * rows result. False on overflow. */
static bool
small_sort(const uint64_t *src, size_t n, uint64_t *dst, size_t *nout,
	   uint32_t stride)
{
	bool ok;

	SC__DISPATCH(stride, ok = small_sort_impl(src, n, dst, nout, S_),
		     ok = small_sort_impl(src, n, dst, nout, stride));
	return ok;
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
	struct sc_batch *r = sc__small_alloc(n, stride);

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
	*out = sc__small_seal(r, b->ncols, nout, n);
	return 0;
}

/* The finish, with the records known to be in order of their first k
 * words (k 0: nothing known). */
static int
finish(struct sc_batch_builder *b, uint32_t k, struct sc_batch **out)
{
	struct sort_ctx ctx;
	uint64_t was;
	size_t n;
	int rc;

	if (!b || !out)
		return sc__fail(SC_EINVAL,
				"sc_batch_builder_finish: %s is NULL",
				!b ? "builder" : "out");
	n = b->count;
	if (n <= SC__SMALL_ROWS)
		return small_finish(b, out);
	ctx.stride = b->stride;
	ctx.nbits = b->ncols * 64;
	ctx.nout = 0;
	ctx.overflow = false;
	ctx.out = sc__rec_alloc(n, b->stride);
	if (!ctx.out)
		goto nomem;
	/* Only the big sort is marked: the small one costs less than the
	 * marks would. */
	was = sc__doing_act(SC__ACT_SORT);
	if (k >= b->ncols) {
		emit_sorted(&ctx, b->data, n);
		rc = 0;
	} else {
		rc = k ? sort_prefix(b, &ctx, k) : sort_builder(b, &ctx);
	}
	sc__doing_back(was);
	if (rc) {
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
sc_batch_builder_finish(struct sc_batch_builder *b, struct sc_batch **out)
{
	return finish(b, 0, out);
}

int
sc__batch_builder_finish_prefix(struct sc_batch_builder *b, uint32_t k,
				struct sc_batch **out)
{
	return finish(b, k, out);
}

/* finish of the n records from record `from` on, as if they were all the
 * builder held; the builder's own view is as it was afterwards. */
static int
finish_range(struct sc_batch_builder *b, size_t from, size_t n, uint32_t k,
	     struct sc_batch **out)
{
	uint64_t *data = b->data;
	size_t count = b->count;
	int rc;

	b->data = data + from * b->stride;
	b->count = n;
	rc = finish(b, k, out);
	b->data = data;
	b->count = count;
	return rc;
}

int
sc__batch_builder_finish_parts(struct sc_batch_builder *b, uint32_t k,
			       size_t split, struct sc_batch **out)
{
	struct sc_batch *x = NULL, *y = NULL;
	int rc;

	if (!b || !out || split == 0 || split >= b->count)
		return finish(b, split == 0 ? k : 0, out);
	rc = finish_range(b, 0, split, k, &x);
	if (rc == 0)
		rc = finish_range(b, split, b->count - split, k, &y);
	if (rc == 0)
		rc = sc_batch_add(x, y, out);
	sc_batch_release(x);
	sc_batch_release(y);
	/* A part's sum may leave int64 where the total does not: only the
	 * whole sort can tell, as sc_batch_builder_finish promises. */
	if (rc == SC_EOVERFLOW)
		return finish(b, 0, out);
	if (rc == 0)
		b->count = 0;
	return rc;
}

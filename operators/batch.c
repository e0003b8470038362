/*
 * batch.c - consolidated Z-sets: life, the builder, merge, group ops, keys
 * and printing (see batch.h for the design). Sorting and consolidating a
 * builder's rows (sc_batch_builder_finish) is batch_sort.c.
 */
#include "operators/batch_int.h"
#include "operators/mem_int.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* --- records ------------------------------------------------------------- */

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

uint64_t *
sc__rec_alloc(size_t n, uint32_t stride)
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
 * after it (see small_finish in batch_sort.c); release must not free them
 * apart. */
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

/* A merge of at most SC__SMALL_ROWS rows writes into the records of a small
 * batch's block (one allocation for the result, as a small builder's). */
int
sc__merge_init(struct sc__merge *m, const struct sc_batch *a,
	       const struct sc_batch *b)
{
	size_t n = a->count + b->count;
	struct sc_batch *small = NULL;
	uint64_t *buf;

	if (n <= SC__SMALL_ROWS) {
		small = sc__small_alloc(n, a->stride);
		buf = small ? (uint64_t *)(small + 1) : NULL;
	} else {
		buf = sc__rec_alloc(n, a->stride);
	}
	if (!buf)
		return sc__fail(SC_ENOMEM, "merge: out of memory for %zu rows",
				n);
	*m = (struct sc__merge){.a = a, .b = b, .out = buf, .small = small};
	return 0;
}

/* Note an equal pair (the slow path of the merge loop: not inlined). */
static __attribute__((noinline)) void
merge_note(struct sc__merge_eq *eq, size_t ia, bool cancelled)
{
	if (eq->n == eq->cap) {
		size_t cap = eq->cap ? 2 * eq->cap : 64;
		size_t *at = realloc(eq->at, cap * sizeof(*at));

		if (!at) {
			eq->lost = true;
			return;
		}
		eq->at = at;
		eq->cap = cap;
	}
	eq->at[eq->n++] = ia | (cancelled ? SC__MERGE_EQ_CANCELLED : 0);
}

/*
 * The merge loop. Distinct rows are the common case, so the choice of
 * which side to copy is made without a branch (the comparison result
 * selects the pointer and the increments); an equal pair takes the
 * predictable slow path.
 */
SC__INLINE int
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
		int c = sc__rec_cmp(ra, rb, ncols);

		if (__builtin_expect(c == 0, 0)) {
			int64_t w;

			if (__builtin_add_overflow((int64_t)ra[ncols],
						   (int64_t)rb[ncols], &w)) {
				rc = SC_EOVERFLOW;
				break;
			}
			if (w != 0) {
				sc__rec_copy(out + no * stride, ra, stride);
				out[no * stride + ncols] = (uint64_t)w;
				no++;
			}
			if (m->eq)
				merge_note(m->eq, ia, w == 0);
			ia++;
			ib++;
			done++; /* one step, though two rows */
			continue;
		}
		{
			size_t take_a = c < 0;

			sc__rec_copy(out + no * stride, take_a ? ra : rb,
				     stride);
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

	SC__DISPATCH(m->a->stride, rc = merge_impl(m, budget, moved, S_),
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
		*out = sc__small_seal(m->small, m->a->ncols, m->nout, cap);
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

/* The balanced tree of merges over batches[0..n), n >= 1 (checked). */
static int
sum_tree(struct sc_batch *const *batches, size_t n, struct sc_batch **out)
{
	struct sc_batch *l, *r;
	int rc;

	if (n == 1) {
		*out = sc_batch_retain(batches[0]);
		return 0;
	}
	rc = sum_tree(batches, n / 2, &l);
	if (rc)
		return rc;
	rc = sum_tree(batches + n / 2, n - n / 2, &r);
	if (rc)
		goto release_l;
	/* l and r are reference counted (the n == 1 case retains an input);
	 * the analyzer models each release as a free and reports a false
	 * use after free here. */
	rc = sc_batch_add(l, r, out); // NOLINT(clang-analyzer-unix.Malloc)
	sc_batch_release(r);
release_l:
	sc_batch_release(l);
	return rc;
}

/*
 * The same sum through one builder: every row pushed, then one sort whose
 * consolidation adds equal rows in 128 bits, so only a row's total must
 * fit. A half of the tree may pass int64 where the total does not (+MAX
 * and +1 in one half, -1 in the other), and which rows meet in which half
 * is an accident of the order of the batches (for a trace, of its merge
 * schedule): the tree's overflow is retried here, so SC_EOVERFLOW means a
 * total outside int64. Slower than the tree, and only taken after it.
 */
static int
sum_flat(struct sc_batch *const *batches, size_t n, struct sc_batch **out)
{
	struct sc_batch_builder b;
	size_t rows = 0;
	int rc;

	/* The batches are the caller's, alive; the analyzer takes sum_tree's
	 * release of a retained input for a free (as there). */
	for (size_t i = 0; i < n; i++)
		// NOLINTNEXTLINE(clang-analyzer-unix.Malloc)
		rows += sc_batch_count(batches[i]);
	rc = sc_batch_builder_init(&b, batches[0]->ncols);
	if (rc)
		return rc;
	rc = sc_batch_builder_reserve(&b, rows);
	for (size_t i = 0; rc == 0 && i < n; i++)
		rc = sc_batch_builder_push_batch(&b, batches[i], 1);
	if (rc == 0)
		rc = sc_batch_builder_finish(&b, out);
	sc_batch_builder_fini(&b);
	return rc;
}

int
sc_batch_sum(struct sc_batch *const *batches, size_t n, struct sc_batch **out)
{
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
	rc = sum_tree(batches, n, out);
	if (rc == SC_EOVERFLOW && n > 2)
		rc = sum_flat(batches, n, out);
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
	d = sc__rec_alloc(a->count, a->stride);
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
	if (!b)
		return 0;
	return sc__batch_search(b, from, b->count, key, k, false);
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
	*hi = sc__batch_search(b, l, b->count, key, k, true);
	*lo = l;
	return 0;
}

/*
 * A re-key that only moves columns can skip the general sort. If cols is a
 * permutation of the batch's columns whose tail cols[p..n) is increasing,
 * then among rows equal on cols[0..p) the batch's own order (sorted by all
 * columns in index order, the fixed ones aside: by cols[p..n)) is already
 * the wanted one, so the result is a STABLE sort of the rows by
 * cols[0..p) alone, and since a permutation keeps rows distinct there is
 * nothing to consolidate. by_col in the grid ((row, col, v) to
 * (col, row, v)) and MIN/MAX's (key, value, rest) layout are of this form.
 * Returns that p (>= 1), or 0 when cols is not a permutation or is the
 * identity.
 */
static uint32_t
stable_prefix(const uint32_t *cols, uint32_t n, uint32_t ncols)
{
	bool seen[SC_SCHEMA_MAX_COLS] = {false};
	uint32_t p = n - 1;

	if (n != ncols)
		return 0;
	for (uint32_t j = 0; j < n; j++) {
		if (seen[cols[j]])
			return 0;
		seen[cols[j]] = true;
	}
	while (p > 0 && cols[p - 1] < cols[p])
		p--;
	return p;
}

/* Radix digits of the stable sort: up to 11 bits (2,048 counters). */
#define KEY_DIGIT 11

/* The scatter of stable_pass, specialised by stride (record copies of a
 * constant size). */
SC__INLINE void
scatter_by(const uint64_t *src, uint64_t *dst, size_t n, uint32_t stride,
	   uint32_t word, unsigned shift, uint64_t mask, size_t *count)
{
	for (size_t i = 0; i < n; i++) {
		const uint64_t *r = src + i * stride;

		sc__rec_copy(dst + count[(r[word] >> shift) & mask]++ * stride,
			     r, stride);
	}
}

/*
 * One stable counting pass over n records of `stride` words from src to
 * dst by the `w` bits at `shift` of word `word`.
 */
static void
stable_pass(const uint64_t *src, uint64_t *dst, size_t n, uint32_t stride,
	    uint32_t word, unsigned shift, unsigned w)
{
	size_t count[1u << KEY_DIGIT], sum = 0;
	uint64_t mask = (UINT64_C(1) << w) - 1;

	memset(count, 0, ((size_t)1 << w) * sizeof(count[0]));
	for (size_t i = 0; i < n; i++)
		count[(src[i * stride + word] >> shift) & mask]++;
	for (size_t d = 0; d < ((size_t)1 << w); d++) {
		size_t c = count[d];

		count[d] = sum;
		sum += c;
	}
	SC__DISPATCH(stride,
		     scatter_by(src, dst, n, S_, word, shift, mask, count),
		     scatter_by(src, dst, n, stride, word, shift, mask, count))
}

/*
 * The projected records of b (cols, n columns, then the weight) sorted
 * stably by their first p words: a least-significant-digit radix sort
 * that passes only over the bits that vary (often one pass: a column of
 * 256 values varies in 9 bits). *out is the batch.
 */
static int
index_by_stable(const struct sc_batch *b, const uint32_t *cols, uint32_t n,
		uint32_t p, struct sc_batch **out)
{
	uint32_t stride = n + 1;
	uint64_t *x = sc__rec_alloc(b->count, stride);
	uint64_t *y = sc__rec_alloc(b->count, stride), *t;

	if (!x || !y) {
		sc__mem_free(x);
		sc__mem_free(y);
		return sc__fail(SC_ENOMEM, "sc_batch_index_by: out of memory");
	}
	for (size_t i = 0; i < b->count; i++) {
		const uint64_t *r = sc_batch_row(b, i);
		uint64_t *d = x + i * stride;

		for (uint32_t j = 0; j < n; j++)
			d[j] = r[cols[j]];
		d[n] = (uint64_t)sc_batch_weight(b, i);
	}
	for (uint32_t word = p; word-- > 0;) {
		uint64_t any = 0, all = UINT64_MAX, vary;

		for (size_t i = 0; i < b->count; i++) {
			any |= x[i * stride + word];
			all &= x[i * stride + word];
		}
		vary = any ^ all;
		while (vary) {
			unsigned lo = (unsigned)__builtin_ctzll(vary);
			unsigned w = 64 - lo < KEY_DIGIT ? 64 - lo : KEY_DIGIT;

			stable_pass(x, y, b->count, stride, word, lo, w);
			t = x;
			x = y;
			y = t;
			vary = w + lo >= 64 ? 0 : vary >> (lo + w) << (lo + w);
		}
	}
	sc__mem_free(y);
	return sc__batch_adopt(n, x, b->count, b->count, out);
}

int
sc_batch_index_by(const struct sc_batch *b, const uint32_t *cols, uint32_t n,
		  struct sc_batch **out)
{
	struct sc_batch_builder bld;
	uint64_t row[SC_SCHEMA_MAX_COLS];
	uint32_t p, k = 0;
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
	p = stable_prefix(cols, n, b->ncols);
	if (p > 0 && b->count > SC__SMALL_ROWS)
		return index_by_stable(b, cols, n, p, out);
	/* Columns 0..k-1 first: the rows come out in order of those, and
	 * only the runs that agree on them need sorting. */
	while (k < n && cols[k] == k)
		k++;
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
		rc = sc__batch_builder_finish_prefix(&bld, k, out);
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

/* --- wide Z-sets (batch_int.h) ---------------------------------------------
 * Cold: only a step whose narrow delta overflowed comes here. */

void
sc__wide_init(struct sc__wide *x, uint32_t ncols)
{
	x->ncols = ncols;
	x->n = x->cap = 0;
	x->rows = NULL;
	x->w = NULL;
}

void
sc__wide_fini(struct sc__wide *x)
{
	if (!x)
		return;
	free(x->rows);
	free(x->w);
	sc__wide_init(x, x->ncols);
}

/* Room for `more` rows. */
static int
wide_room(struct sc__wide *x, size_t more)
{
	size_t cap = x->cap ? x->cap : 16;
	uint64_t *rows;
	__int128 *w;

	if (more <= x->cap - x->n)
		return 0;
	while (cap - x->n < more)
		cap *= 2;
	rows = realloc(x->rows, cap * x->ncols * sizeof(uint64_t));
	if (!rows)
		return sc__fail(SC_ENOMEM, "wide delta: out of memory");
	x->rows = rows;
	w = realloc(x->w, cap * sizeof(__int128));
	if (!w)
		return sc__fail(SC_ENOMEM, "wide delta: out of memory");
	x->w = w;
	x->cap = cap;
	return 0;
}

static void
wide_put(struct sc__wide *x, const uint64_t *row, __int128 w)
{
	memcpy(x->rows + x->n * x->ncols, row, x->ncols * sizeof(uint64_t));
	x->w[x->n++] = w;
}

int
sc__wide_add(struct sc__wide *x, const uint64_t *row, __int128 w)
{
	int rc;

	if (w == 0)
		return 0;
	rc = wide_room(x, 1);
	if (rc == 0)
		wide_put(x, row, w);
	return rc;
}

int
sc__wide_add_batch(struct sc__wide *x, const struct sc_batch *b, int sign)
{
	int rc;

	if (!b || b->count == 0)
		return 0;
	rc = wide_room(x, b->count);
	for (size_t i = 0; rc == 0 && i < b->count; i++)
		wide_put(x, sc_batch_row(b, i),
			 (__int128)sign * sc_batch_weight(b, i));
	return rc;
}

int
sc__wide_add_builder(struct sc__wide *x, const struct sc_batch_builder *b)
{
	int rc = wide_room(x, b->count);

	for (size_t i = 0; rc == 0 && i < b->count; i++) {
		const uint64_t *rec = b->data + i * b->stride;

		wide_put(x, rec, (int64_t)rec[b->ncols]);
	}
	return rc;
}

/* Merge sort of row indices by row (stable; cold, small n). */
static void
wide_sort(const struct sc__wide *x, size_t *idx, size_t *tmp, size_t n)
{
	size_t h = n / 2, i = 0, j = h, k = 0;

	if (n < 2)
		return;
	wide_sort(x, idx, tmp, h);
	wide_sort(x, idx + h, tmp, n - h);
	while (i < h || j < n) {
		if (j == n || (i < h && sc_row_cmp(x->rows + idx[i] * x->ncols,
						   x->rows + idx[j] * x->ncols,
						   x->ncols) <= 0))
			tmp[k++] = idx[i++];
		else
			tmp[k++] = idx[j++];
	}
	memcpy(idx, tmp, n * sizeof(size_t));
}

int
sc__wide_take(struct sc__wide *x, struct sc_batch **out)
{
	struct sc_batch_builder bld = {0};
	struct sc__wide rest;
	size_t *idx, *tmp;
	int rc;

	*out = NULL;
	if (x->n == 0)
		return 0;
	idx = malloc(2 * x->n * sizeof(size_t));
	if (!idx)
		return sc__fail(SC_ENOMEM, "wide delta: out of memory");
	tmp = idx + x->n;
	for (size_t i = 0; i < x->n; i++)
		idx[i] = i;
	wide_sort(x, idx, tmp, x->n);
	sc__wide_init(&rest, x->ncols);
	rc = sc_batch_builder_init(&bld, x->ncols);
	for (size_t i = 0, e; rc == 0 && i < x->n; i = e) {
		const uint64_t *row = x->rows + idx[i] * x->ncols;
		__int128 sum = 0;
		int64_t part;

		for (e = i; e < x->n && sc_row_eq(x->rows + idx[e] * x->ncols,
						  row, x->ncols);
		     e++)
			sum += x->w[idx[e]];
		part = sum > INT64_MAX	 ? INT64_MAX
		       : sum < INT64_MIN ? INT64_MIN
					 : (int64_t)sum;
		rc = sc_batch_builder_push(&bld, row, x->ncols, part);
		if (rc == 0)
			rc = sc__wide_add(&rest, row, sum - part);
	}
	if (rc == 0 && sc_batch_builder_count(&bld))
		rc = sc_batch_builder_finish(&bld, out);
	sc_batch_builder_fini(&bld);
	free(idx);
	if (rc) {
		sc__wide_fini(&rest);
		if (*out)
			sc_batch_release(*out);
		*out = NULL;
		return rc;
	}
	sc__wide_fini(x);
	*x = rest;
	return 0;
}

/*
 * batch.h - consolidated Z-sets: the unit of data everywhere.
 *
 * A batch is a Z-set over fixed-width rows (ncols u64 words each, encoded
 * as schema.h describes) that is *consolidated*: its rows are sorted by
 * sc_row_cmp, no row appears twice, and no weight is zero. Weights are
 * int64; any sum or product that would leave int64 is SC_EOVERFLOW, never
 * a wraparound, and the failing call changes nothing.
 *
 * Batches are immutable once built and reference counted (the count is
 * atomic, so a batch may be shared between threads: an edge hands it to a
 * consumer, a trace keeps it as a level). Every function that makes a batch
 * returns it with one reference owned by the caller; sc_batch_release drops
 * it. Batches carry only their column count: a schema is needed only to
 * print them.
 *
 * Layout: one array of records, each ncols key words followed by one weight
 * word (two's complement int64). Interleaving keeps a row and its weight in
 * one cache line and lets sort and merge move a record as one unit. A batch
 * of n rows of c columns takes (c + 1) * 8 * n bytes plus a 32-byte header.
 * A batch built from at most 32 records, or summed from at most 32 rows,
 * has its records right after its header, in one allocation (one malloc
 * and one free instead of two each).
 *
 * Building: a builder takes rows in any order (push row + weight), then
 * sc_batch_builder_finish sorts and consolidates them. At most 32 records
 * (a step's delta, a frame on an edge: the common case) are insertion
 * sorted straight into the new batch and compacted there: the radix sort's
 * fixed costs (a scan, scratch, counters to clear) would be most of the
 * work, and near 32 records the two cost about the same. Larger inputs
 * take an out-of-place most-significant-digit-first radix sort over the
 * key bits (a row's bit string sorts exactly as the row does, thanks to the
 * order-preserving encoding):
 *   - one read of the input finds whether it is already sorted (then only
 *     compaction runs), the first key bit that varies at all (constant
 *     leading bits are skipped) and, for inputs larger than the cache, the
 *     first histogram;
 *   - the first level scatters the input by 8 bits into a scratch buffer
 *     (256 write streams suit caches and TLB); buckets still larger than
 *     the cache (192 KB) are split again by 8 bits;
 *   - a bucket that fits in cache is sorted there, ping-ponging with a
 *     small partner area, by digits about log2(n) + 1 bits wide, so one
 *     level leaves groups of one or two records, finished on the spot;
 *     groups of up to 16 are insertion sorted;
 *   - each sorted bucket is consolidated straight into the new batch, in
 *     key order, while still in cache: no separate compaction pass.
 * The builder's own buffer is only read, so a failed finish leaves it
 * exactly as it was. Typical cost on 1M random two-column rows: one read
 * of the input, one scatter to memory, the rest in cache (see
 * bench/bench_consolidate.c), 5-6x faster than qsort plus compaction.
 *
 * Adding two batches is one linear merge; negate and scale are one pass.
 *
 * Large buffers (4 MB and up) get a huge-page hint and, once freed, are kept
 * in a small shared cache for the next large batch (sc_batch_cache_trim).
 *
 * An *indexed* batch is a batch whose first k columns are its key: since
 * rows are sorted, the rows with a given key prefix are one contiguous range,
 * found by binary search (sc_batch_key_range). sc_batch_index_by re-keys by
 * projecting/permuting columns and consolidating again.
 */
#ifndef SC_BATCH_H
#define SC_BATCH_H

#ifdef __cplusplus
extern "C" {
#endif

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "operators/error.h"
#include "operators/schema.h"

/*
 * A batch. The fields are visible so that the accessors below inline; they
 * are READ-ONLY for everyone but batch.c, and a batch never changes once
 * built.
 */
struct sc_batch {
	uint64_t refs;	 /* reference count, atomic; freed at 0 */
	uint32_t ncols;	 /* key words per row, >= 1 */
	uint32_t stride; /* words per record: ncols + 1 (the weight) */
	size_t count;	 /* rows, all distinct, all non-zero weight */
	uint64_t *data;	 /* count * stride words, rows sorted; NULL if 0 */
};

/* --- access (inline, no checks: i must be < count) --------------------- */

static inline size_t
sc_batch_count(const struct sc_batch *b)
{
	return b->count;
}

static inline uint32_t
sc_batch_ncols(const struct sc_batch *b)
{
	return b->ncols;
}

/* The ncols words of row i; valid while the caller holds a reference. */
static inline const uint64_t *
sc_batch_row(const struct sc_batch *b, size_t i)
{
	return b->data + i * b->stride;
}

static inline int64_t
sc_batch_weight(const struct sc_batch *b, size_t i)
{
	/* A batch with rows has data; the analyzer, following a probe's
	 * walk over several runs, cannot see that invariant. */
	// NOLINTNEXTLINE(clang-analyzer-core.NullDereference)
	return (int64_t)b->data[i * b->stride + b->ncols];
}

/* --- life --------------------------------------------------------------- */

/*
 * sc_batch_empty - the zero Z-set of `ncols` columns. Returns 0 and writes
 * *out, SC_ESCHEMA (ncols 0 or above SC_SCHEMA_MAX_COLS), SC_EINVAL,
 * SC_ENOMEM.
 */
int sc_batch_empty(uint32_t ncols, struct sc_batch **out);

/* sc_batch_retain - add a reference; returns b. Any thread. */
struct sc_batch *sc_batch_retain(struct sc_batch *b);

/* sc_batch_release - drop a reference; the last one frees. NULL is allowed.
 * Any thread. */
void sc_batch_release(struct sc_batch *b);

/*
 * sc_batch_from_records - a batch from `n` rows given as one array of
 * n * ncols words and `weights` (n of them; NULL means every weight 1), in
 * any order and with duplicates. Returns 0 and *out, SC_EINVAL, SC_ESCHEMA,
 * SC_ENOMEM, SC_EOVERFLOW (duplicates' weights sum beyond int64).
 */
int sc_batch_from_records(uint32_t ncols, const uint64_t *rows,
			  const int64_t *weights, size_t n,
			  struct sc_batch **out);

/* --- the builder --------------------------------------------------------- */

/*
 * A builder collects records in any order. Caller storage: init/fini.
 * Fields private to batch.c. Single thread.
 */
struct sc_batch_builder {
	uint32_t ncols;	    /* key words per row */
	uint32_t stride;    /* ncols + 1 */
	size_t count;	    /* records pushed (zero weights are not kept) */
	size_t cap;	    /* records the buffer holds */
	uint64_t *data;	    /* count * stride words, unsorted */
	uint64_t *scratch;  /* the sort's second buffer, kept for reuse */
	size_t scratch_cap; /* records scratch holds */
};

/*
 * sc_batch_builder_init - an empty builder for rows of `ncols` columns. No
 * allocation yet. Returns 0, SC_EINVAL (b NULL) or SC_ESCHEMA.
 */
int sc_batch_builder_init(struct sc_batch_builder *b, uint32_t ncols);

/* sc_batch_builder_fini - free the builder's buffer. NULL is allowed. */
void sc_batch_builder_fini(struct sc_batch_builder *b);

/*
 * sc_batch_builder_reserve - make room for `n` more records. 0, SC_EINVAL,
 * SC_ENOMEM (then the builder is unchanged).
 */
int sc_batch_builder_reserve(struct sc_batch_builder *b, size_t n);

/*
 * sc_batch_builder_push - add `weight` times `row` (ncols words). A zero
 * weight is accepted and ignored. Returns 0, SC_EINVAL (NULL), SC_ESCHEMA
 * (ncols differs from the builder's), SC_ENOMEM; on failure the builder is
 * unchanged.
 */
int sc__batch_builder_push_slow(struct sc_batch_builder *b, const uint64_t *row,
				uint32_t ncols, int64_t weight);

static inline int
sc_batch_builder_push(struct sc_batch_builder *b, const uint64_t *row,
		      uint32_t ncols, int64_t weight)
{
	/* The common case inline: room, right width, non-zero weight. */
	if (b && row && ncols == b->ncols && b->count < b->cap && weight) {
		uint64_t *rec = b->data + b->count * b->stride;

		for (uint32_t i = 0; i < ncols; i++)
			rec[i] = row[i];
		rec[ncols] = (uint64_t)weight;
		b->count++;
		return 0;
	}
	return sc__batch_builder_push_slow(b, row, ncols, weight);
}

/*
 * sc_batch_builder_push_batch - add every row of `src` times `scale`
 * (a scale of 0 adds nothing). SC_EOVERFLOW if a product leaves int64;
 * other errors as push. Unchanged on failure.
 */
int sc_batch_builder_push_batch(struct sc_batch_builder *b,
				const struct sc_batch *src, int64_t scale);

/* sc_batch_builder_count - records pushed since init or the last finish. */
static inline size_t
sc_batch_builder_count(const struct sc_batch_builder *b)
{
	return b->count;
}

/*
 * sc_batch_builder_finish - sort and consolidate what was pushed into a
 * new batch (*out, one reference) and empty the builder for reuse (its
 * buffer is kept). Returns 0, SC_EINVAL, SC_ENOMEM or SC_EOVERFLOW (equal
 * rows' weights sum beyond int64; only the total counts, not a partial
 * sum); on failure *out is unwritten and the builder is unchanged.
 */
int sc_batch_builder_finish(struct sc_batch_builder *b, struct sc_batch **out);

/* sc_batch_builder_clear - forget what was pushed; keep the buffer. */
void sc_batch_builder_clear(struct sc_batch_builder *b);

/* --- the group ----------------------------------------------------------- */

/*
 * sc_batch_add - a + b, by one linear merge. Returns 0 and *out (one
 * reference the caller owns: a new batch, or a itself (retained) when b is
 * empty, or b when a is; a and b are unchanged), SC_EINVAL, SC_ESCHEMA
 * (column counts differ), SC_ENOMEM, SC_EOVERFLOW.
 */
int sc_batch_add(const struct sc_batch *a, const struct sc_batch *b,
		 struct sc_batch **out);

/*
 * sc_batch_sum - the sum of n batches (k-way, by a balanced tree of
 * merges, redone by one wide consolidation if a partial sum of the tree
 * overflows: SC_EOVERFLOW means a row's total leaves int64). n == 0 is
 * SC_EINVAL (no column count); otherwise as sc_batch_add.
 */
int sc_batch_sum(struct sc_batch *const *batches, size_t n,
		 struct sc_batch **out);

/* sc_batch_negate - -a. SC_EOVERFLOW if a weight is INT64_MIN. */
int sc_batch_negate(const struct sc_batch *a, struct sc_batch **out);

/* sc_batch_scale - k * a (k == 0 gives the empty batch). SC_EOVERFLOW if a
 * product leaves int64. */
int sc_batch_scale(const struct sc_batch *a, int64_t k, struct sc_batch **out);

/* sc_batch_equal - same column count, rows and weights. NULLs are equal
 * only to each other. */
bool sc_batch_equal(const struct sc_batch *a, const struct sc_batch *b);

/* sc_batch_is_consolidated - checks the invariant (for tests and
 * debugging): sorted, distinct, no zero weight. O(n). */
bool sc_batch_is_consolidated(const struct sc_batch *b);

/* --- keys ----------------------------------------------------------------- */

/*
 * sc_batch_key_range - the rows whose first k columns equal key[0..k):
 * writes [*lo, *hi) (empty, lo == hi, when none, at the place the key would
 * be). k == 0 matches every row. Two binary searches, O(k log n). Returns
 * 0, SC_EINVAL (NULL), SC_ESCHEMA (k > ncols).
 */
int sc_batch_key_range(const struct sc_batch *b, const uint64_t *key,
		       uint32_t k, size_t *lo, size_t *hi);

/*
 * sc_batch_lower_bound - the first row index i with row(i)[0..k) >= key
 * (as unsigned words), searching [from, count). No checks: k <= ncols,
 * from <= count. For merge-joins that walk keys in order.
 */
size_t sc_batch_lower_bound(const struct sc_batch *b, const uint64_t *key,
			    uint32_t k, size_t from);

/*
 * sc_batch_index_by - re-key: the batch of rows (row[cols[0]], ...,
 * row[cols[n-1]]) with their weights, consolidated (rows that become equal
 * add). cols may repeat or omit columns. Returns 0 and *out, SC_EINVAL,
 * SC_ESCHEMA (n 0 or too wide, or a column index >= ncols), SC_ENOMEM,
 * SC_EOVERFLOW.
 */
int sc_batch_index_by(const struct sc_batch *b, const uint32_t *cols,
		      uint32_t n, struct sc_batch **out);

/* The most shares sc_batch_route splits a batch into. */
#define SC_BATCH_ROUTE_MAX 64

/*
 * sc_batch_route - partition by key (batch_route.c): split `b` into n
 * batches by sc_row_hash of each row's first `key` columns mod n, so every
 * row of a key lands in one share: out[i] gets the rows of shard i, or
 * NULL when it has none. 1 <= n <= SC_BATCH_ROUTE_MAX, key 1..ncols.
 * Returns 0 (the caller releases each out[i]), SC_EINVAL, SC_ENOMEM
 * (nothing written). Any thread.
 */
int sc_batch_route(const struct sc_batch *b, uint32_t key, uint32_t n,
		   struct sc_batch **out);

/* --- printing --------------------------------------------------------------
 */

/*
 * sc_batch_fprint - one line per row, "  (1, 'x') x 3", decoded by `s`
 * (whose ncols must equal the batch's; otherwise, or when s is NULL, the
 * rows print as hex words), headed by the row count. For test failures
 * and logs.
 */
void sc_batch_fprint(FILE *f, const struct sc_batch *b,
		     const struct sc_schema *s);

/*
 * sc_batch_to_string - the same text in a malloc'ed string (*out, the
 * caller frees). At most `max_rows` rows are printed, then "...". Returns 0,
 * SC_EINVAL, SC_ENOMEM.
 */
int sc_batch_to_string(const struct sc_batch *b, const struct sc_schema *s,
		       size_t max_rows, char **out);

/* sc_batch_bytes - bytes the batch holds (header and records). */
size_t sc_batch_bytes(const struct sc_batch *b);

/*
 * sc_batch_cache_trim - give back the large buffers (4 MB and up) that
 * batches, builders and merges keep for reuse after they are freed (at most
 * 8 buffers and 256 MB in all). Without the cache every large batch would
 * be written into fresh pages that the kernel must fault in and zero
 * (jemalloc returns allocations above 8 MB on free). Any thread.
 */
void sc_batch_cache_trim(void);

/* sc_batch_cache_bytes - bytes the large-buffer cache holds now. */
size_t sc_batch_cache_bytes(void);

#ifdef __cplusplus
}
#endif

#endif /* SC_BATCH_H */

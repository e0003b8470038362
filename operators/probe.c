/*
 * probe.c - monotone galloping probes into trace runs (see probe_int.h).
 */
#include "operators/batch_int.h"
#include "operators/probe_int.h"

#include <stdlib.h>
#include <string.h>

void
sc__probe_init(struct sc__probe *p, uint32_t ncols, const struct sc_trace *t,
	       const struct sc_batch *extra)
{
	size_t n = t ? sc_trace_runs(t) : 0;

	p->ncols = ncols;
	p->nruns = 0;
	p->pkeys = NULL;
	p->pk = 0;
	p->pm = p->pi = 0;
	p->kidx = p->block = NULL;
	for (size_t i = 0; i < SC__PROBE_MAX; i++) {
		p->pre[i] = NULL;
		p->fence[i] = NULL;
		p->nfence[i] = 0;
	}
	for (size_t i = 0; i < n; i++) {
		p->run[p->nruns] = sc_trace_run(t, i);
		p->from[p->nruns] = 0;
		p->lo[p->nruns] = p->hi[p->nruns] = 0;
		p->nruns++;
	}
	p->ntrace = p->nruns;
	if (extra && sc_batch_count(extra) > 0) {
		p->run[p->nruns] = extra;
		p->from[p->nruns] = 0;
		p->lo[p->nruns] = p->hi[p->nruns] = 0;
		p->nruns++;
	}
}

/* Does row i of b come at or after key (strict: after) on k words? */
static inline bool
past(const struct sc_batch *b, size_t i, const uint64_t *key, uint32_t k,
     bool strict)
{
	int c = sc_row_cmp(sc_batch_row(b, i), key, k);

	return strict ? c > 0 : c >= 0;
}

/*
 * The first index in [from, count) that is past the key: gallop forward in
 * steps 1, 2, 4, ... until one is, then binary search the last step.
 */
static size_t
gallop(const struct sc_batch *b, size_t from, const uint64_t *key, uint32_t k,
       bool strict)
{
	size_t n = sc_batch_count(b), lo = from, hi, step = 1;

	if (lo >= n || past(b, lo, key, k, strict))
		return lo;
	/* Invariant: row lo is not past the key. */
	for (;;) {
		hi = lo + step;
		if (hi >= n) {
			hi = n;
			break;
		}
		if (past(b, hi, key, k, strict))
			break;
		lo = hi;
		step *= 2;
	}
	/* Row lo is not past, row hi is (or hi == n): search (lo, hi]. */
	lo++;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (past(b, mid, key, k, strict))
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

/* Searches advanced together by lower_bounds. */
#define LANES 16

/*
 * The lower bounds in run b of the m sorted keys (rows kidx[] of `keys`,
 * first k words), LANES keys at a time. Each lane is a branch-free binary
 * search; all lanes of a group have the same length, so they step in
 * lockstep and their loads, independent of one another, are in flight
 * together (and the next ones are prefetched).
 */
static void
lower_bounds(const struct sc_batch *b, const struct sc_batch *keys,
	     const size_t *kidx, size_t m, uint32_t k, size_t *out)
{
	size_t n = sc_batch_count(b), from = 0;

	for (size_t g = 0; g < m; g += LANES) {
		size_t nl = m - g < LANES ? m - g : LANES, len = n - from;
		size_t base[LANES];
		const uint64_t *key[LANES];

		for (size_t l = 0; l < nl; l++) {
			base[l] = from;
			key[l] = sc_batch_row(keys, kidx[g + l]);
		}
		if (len == 0) {
			for (size_t l = 0; l < nl; l++)
				out[g + l] = from;
			continue;
		}
		while (len > 1) {
			size_t half = len / 2;

			for (size_t l = 0; l < nl; l++)
				base[l] +=
				    sc_row_cmp(sc_batch_row(b, base[l] + half),
					       key[l], k) < 0
					? half
					: 0;
			len -= half;
			for (size_t l = 0; l < nl; l++)
				__builtin_prefetch(
				    sc_batch_row(b, base[l] + len / 2));
		}
		for (size_t l = 0; l < nl; l++)
			out[g + l] =
			    base[l] + (sc_row_cmp(sc_batch_row(b, base[l]),
						  key[l], k) < 0);
		from = out[g + nl - 1];
	}
}

/* Fence words equal to a key's first word looked past before giving up
 * on a bounded search (many rows sharing a first word: gallop instead). */
#define FENCE_TIES 4

/*
 * Where the lower bound of a key with first word w can end, given f, the
 * first fence word >= w: at the first fence row whose word is > w (every
 * row from there on is greater), or at the end of the run when there is
 * none. Fence words equal to w are skipped (rows sharing a first word may
 * still be smaller on later words), at most FENCE_TIES of them; past that,
 * SIZE_MAX: unbounded.
 */
static size_t
block_end(const struct sc_batch *b, const uint64_t *fence, size_t nf, size_t f,
	  uint64_t w)
{
	for (size_t t = 0; f < nf && fence[f] == w; t++, f++)
		if (t == FENCE_TIES)
			return SIZE_MAX;
	return f == nf ? sc_batch_count(b) : f * SC__FENCE_STRIDE;
}

/*
 * lower_bounds through a fence: the lockstep search runs over the fence words
 * (first words of every 16th row), which finds for each key the block of
 * 16 rows before which every row is smaller; the block is prefetched for
 * all lanes, then each lane searches the block (or gallops from it, when
 * the next fence word ties with the key's first word).
 */
static void
fenced_lower_bounds(const struct sc_batch *b, const uint64_t *fence, size_t nf,
		    const struct sc_batch *keys, const size_t *kidx, size_t m,
		    uint32_t k, size_t *out)
{
	size_t ffrom = 0, prev = 0;
	size_t block = SC__FENCE_STRIDE * (size_t)b->stride * sizeof(uint64_t);

	for (size_t g = 0; g < m; g += LANES) {
		size_t nl = m - g < LANES ? m - g : LANES, len = nf - ffrom;
		size_t base[LANES], start[LANES], end[LANES];
		const uint64_t *key[LANES];

		for (size_t l = 0; l < nl; l++) {
			base[l] = ffrom;
			key[l] = sc_batch_row(keys, kidx[g + l]);
		}
		while (len > 1) {
			size_t half = len / 2;

			for (size_t l = 0; l < nl; l++)
				base[l] += fence[base[l] + half] < key[l][0]
					       ? half
					       : 0;
			len -= half;
		}
		for (size_t l = 0; l < nl; l++) {
			/* f: the first fence word >= the key's first word. */
			size_t f = len == 0
				       ? ffrom
				       : base[l] + (fence[base[l]] < key[l][0]);
			const char *at;

			start[l] = f == 0 ? 0 : (f - 1) * SC__FENCE_STRIDE;
			end[l] = block_end(b, fence, nf, f, key[l][0]);
			at = (const char *)sc_batch_row(b, start[l]);
			for (size_t off = 0; off < block; off += 64)
				__builtin_prefetch(at + off);
			if (l == nl - 1)
				ffrom = f;
		}
		for (size_t l = 0; l < nl; l++) {
			size_t s = start[l] > prev ? start[l] : prev;

			prev = out[g + l] =
			    end[l] == SIZE_MAX
				? gallop(b, s, key[l], k, false)
				: sc__batch_search(b, s, end[l], key[l], k,
						   false);
		}
	}
}

void
sc__fences_init(struct sc__fences *fs)
{
	memset(fs, 0, sizeof(*fs));
}

static void
fence_drop(struct sc__fences *fs, size_t i)
{
	sc_batch_release(fs->run[i]);
	free(fs->first[i]);
	fs->n--;
	fs->run[i] = fs->run[fs->n];
	fs->first[i] = fs->first[fs->n];
	fs->nf[i] = fs->nf[fs->n];
}

void
sc__fences_fini(struct sc__fences *fs)
{
	while (fs && fs->n)
		fence_drop(fs, fs->n - 1);
}

size_t
sc__fences_bytes(const struct sc__fences *fs)
{
	size_t n = 0;

	for (size_t i = 0; fs && i < fs->n; i++)
		n += fs->nf[i] * sizeof(uint64_t);
	return n;
}

static bool
probe_has_run(const struct sc__probe *p, const struct sc_batch *b)
{
	for (uint32_t i = 0; i < p->ntrace; i++)
		if (p->run[i] == b)
			return true;
	return false;
}

void
sc__fences_sync(struct sc__fences *fs, const struct sc_trace *t)
{
	for (size_t i = fs->n; i-- > 0;) {
		bool live = false;

		for (size_t r = 0; r < sc_trace_runs(t) && !live; r++)
			live = sc_trace_run(t, r) == fs->run[i];
		if (!live)
			fence_drop(fs, i);
	}
}

/* The fence of trace run b, from the cache or built now; NULL if it could
 * not be allocated. */
static const uint64_t *
fence_get(struct sc__fences *fs, const struct sc_batch *b, size_t *nf)
{
	size_t n = sc_batch_count(b);
	size_t m = (n + SC__FENCE_STRIDE - 1) / SC__FENCE_STRIDE;
	uint64_t *f;

	for (size_t i = 0; i < fs->n; i++)
		if (fs->run[i] == b) {
			*nf = fs->nf[i];
			return fs->first[i];
		}
	if (fs->n == SC_TRACE_MAX_RUNS)
		return NULL;
	f = malloc(m * sizeof(uint64_t));
	if (!f)
		return NULL;
	for (size_t i = 0; i < m; i++)
		f[i] = sc_batch_row(b, i * SC__FENCE_STRIDE)[0];
	/* The cache's reference keeps the run, and so its address, alive. */
	fs->run[fs->n] = sc_batch_retain((struct sc_batch *)b);
	fs->first[fs->n] = f;
	fs->nf[fs->n++] = m;
	*nf = m;
	return f;
}

/* Drop the fences of runs that left the trace; fetch those of its long
 * runs. */
static void
fences_attach(struct sc__probe *p, struct sc__fences *fs)
{
	for (size_t i = fs->n; i-- > 0;)
		if (!probe_has_run(p, fs->run[i]))
			fence_drop(fs, i);
	for (uint32_t i = 0; i < p->ntrace; i++)
		if (sc_batch_count(p->run[i]) >= SC__FENCE_MIN)
			p->fence[i] = fence_get(fs, p->run[i], &p->nfence[i]);
}

/*
 * Is run b worth a batched search for m keys? Only when it is long and the
 * keys are sparse in it: otherwise galloping from key to key stays in
 * cache and costs less than the lockstep searches from the start.
 */
static bool
is_long(const struct sc_batch *b, size_t m)
{
	size_t n = sc_batch_count(b);

	return n >= SC__PROBE_BATCH_MIN && n >= 16 * m;
}

void
sc__probe_prepare(struct sc__probe *p, const struct sc_batch *keys, uint32_t k,
		  struct sc__fences *fs)
{
	size_t m = 0, nlong = 0, n = keys ? sc_batch_count(keys) : 0, j = 0;

	for (size_t i = 0; i < n; i = sc__batch_key_end(keys, i, k))
		m++;
	for (uint32_t i = 0; i < p->nruns; i++)
		nlong += is_long(p->run[i], m);
	if (m == 0 || nlong == 0 || p->block)
		return;
	if (fs)
		fences_attach(p, fs);
	p->block = malloc((m + nlong * m) * sizeof(size_t));
	if (!p->block)
		return; /* unprepared: slower, not wrong */
	p->kidx = p->block;
	for (size_t i = 0; i < n; i = sc__batch_key_end(keys, i, k))
		p->kidx[j++] = i;
	j = 0;
	for (uint32_t i = 0; i < p->nruns; i++) {
		if (!is_long(p->run[i], m))
			continue;
		p->pre[i] = p->block + m + (j++) * m;
		if (p->fence[i])
			fenced_lower_bounds(p->run[i], p->fence[i],
					    p->nfence[i], keys, p->kidx, m, k,
					    p->pre[i]);
		else
			lower_bounds(p->run[i], keys, p->kidx, m, k, p->pre[i]);
	}
	p->pkeys = keys;
	p->pk = k;
	p->pm = m;
	p->pi = 0;
}

void
sc__probe_fini(struct sc__probe *p)
{
	free(p->block);
	p->block = p->kidx = NULL;
	p->pm = 0;
	for (size_t i = 0; i < SC__PROBE_MAX; i++)
		p->pre[i] = NULL;
}

/*
 * Is `key` the next prepared key? Skips prepared keys below it (a caller
 * may seek only some of them). Returns the index or SIZE_MAX.
 */
static size_t
prepared(struct sc__probe *p, const uint64_t *key, uint32_t k)
{
	int c = 1;

	if (p->pm == 0 || k != p->pk)
		return SIZE_MAX;
	while (p->pi < p->pm &&
	       (c = sc_row_cmp(sc_batch_row(p->pkeys, p->kidx[p->pi]), key,
			       k)) < 0)
		p->pi++;
	return c == 0 && p->pi < p->pm ? p->pi++ : SIZE_MAX;
}

/* The lower bound of key in run i: prepared, or galloped. */
static size_t
run_lower(struct sc__probe *p, uint32_t i, size_t pi, const uint64_t *key,
	  uint32_t k)
{
	if (pi != SIZE_MAX && p->pre[i])
		return p->pre[i][pi];
	return gallop(p->run[i], p->from[i], key, k, false);
}

void
sc__probe_seek(struct sc__probe *p, const uint64_t *key, uint32_t k)
{
	size_t pi = prepared(p, key, k);

	for (uint32_t i = 0; i < p->nruns; i++) {
		size_t lo = run_lower(p, i, pi, key, k);

		p->from[i] = lo;
		p->lo[i] = lo;
		p->hi[i] = gallop(p->run[i], lo, key, k, true);
	}
}

int
sc__probe_weight(struct sc__probe *p, const uint64_t *row, int64_t *w)
{
	__int128 sum = 0; /* wide: only the total must fit, whatever the runs */
	size_t pi = prepared(p, row, p->ncols);

	for (uint32_t i = 0; i < p->nruns; i++) {
		const struct sc_batch *b = p->run[i];
		size_t lo = run_lower(p, i, pi, row, p->ncols);

		p->from[i] = lo;
		if (lo < sc_batch_count(b) &&
		    sc_row_eq(sc_batch_row(b, lo), row, p->ncols))
			sum += sc_batch_weight(b, lo);
	}
	if (sum > INT64_MAX || sum < INT64_MIN)
		return sc__fail(SC_EOVERFLOW, "probe: a row's integrated "
					      "weight leaves int64");
	*w = (int64_t)sum;
	return 0;
}

/*
 * One step of a walk: the extreme row (smallest going forward, largest
 * going back) among the runs' range ends, its weights summed and every
 * copy consumed. 1 with the row, 0 when the ranges are exhausted.
 */
static inline __attribute__((always_inline)) int
walk_core(struct sc__probe *p, bool back, const uint64_t **row, __int128 *w)
{
	const uint64_t *best = NULL;
	__int128 sum = 0; /* wide: only the total must fit */

	for (uint32_t i = 0; i < p->nruns; i++) {
		const uint64_t *r;

		if (p->lo[i] == p->hi[i])
			continue;
		r = sc_batch_row(p->run[i], back ? p->hi[i] - 1 : p->lo[i]);
		if (!best || (sc_row_cmp(r, best, p->ncols) < 0) != back)
			best = r;
	}
	if (!best)
		return 0;
	for (uint32_t i = 0; i < p->nruns; i++) {
		size_t at;

		if (p->lo[i] == p->hi[i])
			continue;
		at = back ? p->hi[i] - 1 : p->lo[i];
		if (!sc_row_eq(sc_batch_row(p->run[i], at), best, p->ncols))
			continue;
		sum += sc_batch_weight(p->run[i], at);
		if (back)
			p->hi[i]--;
		else
			p->lo[i]++;
	}
	*row = best;
	*w = sum;
	return 1;
}

static int
walk_step(struct sc__probe *p, bool back, bool clamp, const uint64_t **row,
	  int64_t *w)
{
	__int128 sum;

	if (walk_core(p, back, row, &sum) == 0)
		return 0;
	if (clamp && (sum > INT64_MAX || sum < INT64_MIN))
		sum = sum > 0 ? INT64_MAX : INT64_MIN;
	if (sum > INT64_MAX || sum < INT64_MIN)
		return sc__fail(SC_EOVERFLOW, "probe: a row's integrated "
					      "weight leaves int64");
	*w = (int64_t)sum;
	return 1;
}

static int
walk(struct sc__probe *p, bool back, bool clamp, const uint64_t **row,
     int64_t *w)
{
	int rc;

	while ((rc = walk_step(p, back, clamp, row, w)) == 1)
		if (*w != 0)
			return 1;
	return rc;
}

int
sc__probe_next(struct sc__probe *p, const uint64_t **row, int64_t *w)
{
	return walk(p, false, false, row, w);
}

int
sc__probe_prev(struct sc__probe *p, const uint64_t **row, int64_t *w)
{
	return walk(p, true, false, row, w);
}

static int
walk_wide(struct sc__probe *p, bool back, const uint64_t **row, __int128 *w)
{
	int rc;

	while ((rc = walk_core(p, back, row, w)) == 1)
		if (*w != 0)
			return 1;
	return rc;
}

int
sc__probe_next_wide(struct sc__probe *p, const uint64_t **row, __int128 *w)
{
	return walk_wide(p, false, row, w);
}

int
sc__probe_prev_wide(struct sc__probe *p, const uint64_t **row, __int128 *w)
{
	return walk_wide(p, true, row, w);
}

int
sc__probe_next_live(struct sc__probe *p, const uint64_t **row, int64_t *w)
{
	return walk(p, false, true, row, w);
}

int
sc__probe_prev_live(struct sc__probe *p, const uint64_t **row, int64_t *w)
{
	return walk(p, true, true, row, w);
}

uint64_t
sc__batch_mass(const struct sc_batch *b)
{
	/* A 128-bit total cannot overflow (fewer than 2^64 rows of |w| <=
	 * 2^63), so the loop has no saturation test; it saturates once. */
	unsigned __int128 m = 0;

	for (size_t i = 0; b && i < sc_batch_count(b); i++) {
		int64_t w = sc_batch_weight(b, i);

		m += w < 0 ? 0 - (uint64_t)w : (uint64_t)w;
	}
	return m > UINT64_MAX ? UINT64_MAX : (uint64_t)m;
}

int
sc__trace_make_room(struct sc_trace *t)
{
	if (sc_trace_runs(t) + 1 < SC_TRACE_MAX_RUNS)
		return 0;
	return sc_trace_work(t, SIZE_MAX, NULL);
}

int
sc__check_delta(const char *fn, const char *what, const struct sc_batch *b,
		uint32_t ncols)
{
	if (b && sc_batch_ncols(b) != ncols)
		return sc__fail(SC_ESCHEMA, "%s: %s has %u columns, want %u",
				fn, what, sc_batch_ncols(b), ncols);
	return 0;
}

/*
 * trace.c - the LSM spine of batches (see trace.h for the design).
 */
#include "operators/trace.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "operators/base.h"
#include "operators/batch_int.h"
#include "operators/doing_int.h"
#include "operators/mem_int.h"
#include "operators/symbol_int.h"
#include "operators/waterline_int.h"

struct sc_trace {
	uint32_t ncols;				  /* row width of every run */
	size_t nruns;				  /* runs in use */
	struct sc_batch *runs[SC_TRACE_MAX_RUNS]; /* largest first, non-empty,
						   * one reference each */
	bool merging; /* a merge of runs[mi] and runs[mi + 1] is in hand */
	size_t mi;    /* index of the older run of that merge */
	struct sc__merge merge; /* its state, valid while merging */
	struct sc__symcols sym; /* each run holds its rows' symbols */
	struct sc__merge_eq eq; /* the merge's equal pairs, when sym */
	bool wide; /* a row's integral is outside int64: the spine is a wide
		      fold (wide_fold) and merges wait for the next insert */
	struct sc__sweep *sw; /* the cleanup sweep in hand (waterline.h),
			       * or NULL */
};

/* One run being read without its dead rows (see the end of this file). */
struct sweep_run {
	struct sc_batch *run; /* being read (a reference), or NULL */
	size_t pos;	      /* its next row */
	bool dead;	      /* a dead row was met: buf holds the live ones */
	size_t first;	      /* the first dead row: rows before it are */
	size_t copied;	      /* copied into buf up to here, then the rest */
	uint64_t *buf;	      /* the live rows, records of ncols + 1 words */
	size_t n;	      /* records in buf */
	size_t *gone;	      /* the dead rows' indices in run */
	size_t ngone, cap_gone;
};

/* The cleanup sweeps in hand: one takes every run in turn, the other the
 * run the last merge wrote. */
struct sc__sweep {
	struct sweep_run round; /* every run in turn */
	struct sweep_run fresh; /* the run a merge has just written */
	size_t next;		/* index of the next run the round takes */
	struct sc__horizon h;	/* the latest horizon given, for merges */
};

int
sc_trace_create(uint32_t ncols, struct sc_trace **out)
{
	struct sc_trace *t;

	if (!out)
		return sc__fail(SC_EINVAL, "sc_trace_create: out is NULL");
	if (ncols == 0 || ncols > SC_SCHEMA_MAX_COLS)
		return sc__fail(SC_ESCHEMA,
				"sc_trace_create: %u columns, want 1..%d",
				ncols, SC_SCHEMA_MAX_COLS);
	t = calloc(1, sizeof(*t));
	if (!t)
		return sc__fail(SC_ENOMEM, "sc_trace_create: out of memory");
	t->ncols = ncols;
	*out = t;
	return 0;
}

void
sc_trace_destroy(struct sc_trace *t)
{
	if (!t)
		return;
	if (t->merging)
		sc__merge_abort(&t->merge);
	for (size_t i = 0; i < t->nruns; i++) {
		sc__symtab_unhold(&t->sym, t->runs[i]);
		sc_batch_release(t->runs[i]);
	}
	free(t->eq.at);
	sc__trace_sweep_fini(t);
	free(t);
}

void
sc__trace_set_symbols(struct sc_trace *t, const struct sc__symcols *s)
{
	SC_ASSERT(t->nruns == 0);
	t->sym = *s;
}

size_t
sc_trace_runs(const struct sc_trace *t)
{
	return t ? t->nruns : 0;
}

const struct sc_batch *
sc_trace_run(const struct sc_trace *t, size_t i)
{
	return t && i < t->nruns ? t->runs[i] : NULL;
}

size_t
sc_trace_rows(const struct sc_trace *t)
{
	size_t n = 0;

	for (size_t i = 0; t && i < t->nruns; i++)
		n += t->runs[i]->count;
	return n;
}

size_t
sc_trace_bytes(const struct sc_trace *t)
{
	size_t n;

	if (!t)
		return 0;
	n = sizeof(*t);
	for (size_t i = 0; i < t->nruns; i++)
		n += sc_batch_bytes(t->runs[i]);
	if (t->merging)
		n += (t->merge.a->count + t->merge.b->count) * (t->ncols + 1) *
		     sizeof(uint64_t);
	if (t->sw && t->sw->round.buf) /* a cleanup sweep's copy */
		n +=
		    t->sw->round.run->count * (t->ncols + 1) * sizeof(uint64_t);
	if (t->sw && t->sw->fresh.buf)
		n +=
		    t->sw->fresh.run->count * (t->ncols + 1) * sizeof(uint64_t);
	return n;
}

/* The pair a run of size `older` and its younger neighbour `younger` break
 * the spine's invariant. */
static bool
violates(size_t older, size_t younger)
{
	return older <= 2 * younger;
}

/* The youngest adjacent pair that breaks the invariant, or SIZE_MAX. */
static size_t
pick_merge(const size_t *sizes, size_t n)
{
	for (size_t i = n - 1; n >= 2 && i-- > 0;)
		if (violates(sizes[i], sizes[i + 1]))
			return i;
	return SIZE_MAX;
}

/*
 * The runs are kept largest first (a Z-set sum does not care about order).
 * That, not the age of the runs, is what bounds the merge work: a merge
 * then always folds a run into one at least as large and at most twice as
 * large, so every row it moves lands in a run at least half as large again.
 * Ordered by age instead, a large delta inserted after a small one would
 * fold the small run into it and then the result into the whole trace:
 * alternating large and small inserts would move the whole trace each time.
 */
static void
swap_runs(struct sc_trace *t, size_t i, size_t j)
{
	struct sc_batch *r = t->runs[i];

	t->runs[i] = t->runs[j];
	t->runs[j] = r;
}

/* Move run i to its place by size; no merge may be in hand. */
static void
resort_run(struct sc_trace *t, size_t i)
{
	for (; i > 0 && t->runs[i]->count > t->runs[i - 1]->count; i--)
		swap_runs(t, i, i - 1);
	for (; i + 1 < t->nruns && t->runs[i]->count < t->runs[i + 1]->count;
	     i++)
		swap_runs(t, i, i + 1);
}

/* Add run r (a reference the trace now owns) at its place by size, after
 * runs of the same size, and never between the two runs of the merge in
 * hand. */
static void
place_run(struct sc_trace *t, struct sc_batch *r)
{
	size_t pos = 0;

	while (pos < t->nruns && t->runs[pos]->count >= r->count)
		pos++;
	if (t->merging && pos == t->mi + 1)
		pos = t->mi + 2;
	memmove(&t->runs[pos + 1], &t->runs[pos],
		(t->nruns - pos) * sizeof(struct sc_batch *));
	t->runs[pos] = r;
	t->nruns++;
	if (t->merging && pos <= t->mi)
		t->mi++;
}

/* Remove runs[i + 1] and put `merged` (NULL if the sum was empty) in
 * place of runs[i], then move it to its place by size. */
static void
replace_pair(struct sc_trace *t, size_t i, struct sc_batch *merged)
{
	/* Every run holds its entries' ids: the sum keeps the inputs' holds
	 * but those of the entries the merge added up or cancelled, which
	 * it noted (or, short of memory to note them, a walk finds). */
	if (!t->eq.lost)
		sc__symtab_unhold_pairs(&t->sym, t->runs[i], t->eq.at, t->eq.n);
	else
		sc__symtab_unhold_merge(&t->sym, t->runs[i], t->runs[i + 1]);
	sc_batch_release(t->runs[i]);
	sc_batch_release(t->runs[i + 1]);
	if (merged && merged->count) {
		t->runs[i] = merged;
		memmove(&t->runs[i + 1], &t->runs[i + 2],
			(t->nruns - i - 2) * sizeof(struct sc_batch *));
		t->nruns--;
		resort_run(t, i);
		return;
	}
	sc_batch_release(merged);
	memmove(&t->runs[i], &t->runs[i + 2],
		(t->nruns - i - 2) * sizeof(struct sc_batch *));
	t->nruns -= 2;
}

/* Keep sizes[0..n) largest first after sizes[i] grew. */
static void
bubble_up(size_t *sizes, size_t i)
{
	for (; i > 0 && sizes[i] > sizes[i - 1]; i--) {
		size_t x = sizes[i];

		sizes[i] = sizes[i - 1];
		sizes[i - 1] = x;
	}
}

size_t
sc_trace_pending(const struct sc_trace *t)
{
	size_t sizes[SC_TRACE_MAX_RUNS], n = 0, cost = 0, i;

	if (!t || t->wide)
		return 0; /* a wide fold waits for the next insert */
	/* Simulate the cascade on sizes, as if no weight cancelled (which
	 * only shrinks merges, so this bounds the real work). */
	for (i = 0; i < t->nruns; i++) {
		if (t->merging && i == t->mi) {
			sizes[n] = t->runs[i]->count + t->runs[i + 1]->count;
			cost += sc__merge_left(&t->merge);
			i++;
		} else {
			sizes[n] = t->runs[i]->count;
		}
		bubble_up(sizes, n++);
	}
	while ((i = pick_merge(sizes, n)) != SIZE_MAX) {
		cost += sizes[i] + sizes[i + 1];
		sizes[i] += sizes[i + 1];
		memmove(&sizes[i + 1], &sizes[i + 2],
			(n - i - 2) * sizeof(sizes[0]));
		n--;
		bubble_up(sizes, i);
	}
	return cost;
}

/* Start the next merge the invariant asks for; false if settled. */
static int
start_merge(struct sc_trace *t, bool *started)
{
	size_t sizes[SC_TRACE_MAX_RUNS], i;
	int rc;

	for (i = 0; i < t->nruns; i++)
		sizes[i] = t->runs[i]->count;
	i = pick_merge(sizes, t->nruns);
	*started = false;
	if (i == SIZE_MAX)
		return 0;
	rc = sc__merge_init(&t->merge, t->runs[i], t->runs[i + 1]);
	if (rc)
		return rc;
	if (sc__symcols_any(&t->sym)) {
		t->eq.n = 0;
		t->eq.lost = false;
		t->merge.eq = &t->eq;
	}
	t->merging = true;
	t->mi = i;
	*started = true;
	return 0;
}

/* w clamped into int64. */
static int64_t
clamp64(__int128 w)
{
	return w > INT64_MAX   ? INT64_MAX
	       : w < INT64_MIN ? INT64_MIN
			       : (int64_t)w;
}

/* Every row of the spine with a non-zero total, in row order, its total
 * summed in 128 bits (row[] points into the runs). The count of them. */
static size_t
wide_totals(const struct sc_trace *t, const uint64_t **row, __int128 *w)
{
	size_t pos[SC_TRACE_MAX_RUNS] = {0}, n = 0;

	for (;;) {
		const uint64_t *min = NULL, *r;
		__int128 sum = 0;

		for (size_t i = 0; i < t->nruns; i++) {
			if (pos[i] == t->runs[i]->count)
				continue;
			r = sc_batch_row(t->runs[i], pos[i]);
			if (!min || sc_row_cmp(r, min, t->ncols) < 0)
				min = r;
		}
		if (!min)
			return n;
		for (size_t i = 0; i < t->nruns; i++) {
			if (pos[i] == t->runs[i]->count ||
			    !sc_row_eq(sc_batch_row(t->runs[i], pos[i]), min,
				       t->ncols))
				continue;
			sum += sc_batch_weight(t->runs[i], pos[i]);
			pos[i]++;
		}
		if (sum != 0) {
			row[n] = min;
			w[n++] = sum;
		}
	}
}

/* The next level of a wide fold: every row whose remainder w[i] is not 0,
 * with the remainder clamped into int64 (taken off w[i]); NULL *out when
 * none is left. 0 or SC_ENOMEM. */
static int
wide_level(uint32_t ncols, const uint64_t **row, __int128 *w, size_t n,
	   struct sc_batch **out)
{
	size_t m = 0, k = 0;
	uint64_t *data;

	*out = NULL;
	for (size_t i = 0; i < n; i++)
		m += w[i] != 0;
	if (m == 0)
		return 0;
	data = sc__mem_alloc(m * (ncols + 1) * sizeof(uint64_t));
	if (!data)
		return SC_ENOMEM;
	for (size_t i = 0; i < n; i++) {
		uint64_t *rec = data + k * (ncols + 1);
		int64_t c = clamp64(w[i]);

		if (c == 0)
			continue;
		memcpy(rec, row[i], ncols * sizeof(uint64_t));
		rec[ncols] = (uint64_t)c;
		w[i] -= c;
		k++;
	}
	return sc__batch_adopt(ncols, data, m, m, out);
}

/*
 * The integral has a row outside int64, which is no error while it lasts:
 * that is a partial integral, which later inserts may
 * bring back, and which deltas a trace sees depends on how a schedule
 * grouped them into steps. Fold the whole spine into runs that fit
 * instead: the first holds every row with its total clamped into int64,
 * each next one the rows whose remainder is not 0 yet, clamped again (at
 * most as many runs as were folded: |total| <= nruns * 2^63). The spine
 * stays exact; reads of such a row say SC_EOVERFLOW (cursor, integral).
 * Its first two runs would only overflow again if merged, so merges wait
 * (t->wide) until an insert changes the spine; each fold costs a k-way
 * merge of the spine, which happens once per overflowing merge. On
 * SC_ENOMEM the trace is unchanged.
 */
static int
wide_fold(struct sc_trace *t)
{
	struct sc_batch *lv[SC_TRACE_MAX_RUNS];
	size_t rows = sc_trace_rows(t), n, nl = 0;
	const uint64_t **row = malloc((rows ? rows : 1) * sizeof(*row));
	__int128 *w = malloc((rows ? rows : 1) * sizeof(*w));
	int rc = row && w ? 0 : SC_ENOMEM;

	n = rc ? 0 : wide_totals(t, row, w);
	while (rc == 0 && nl < t->nruns) {
		rc = wide_level(t->ncols, row, w, n, &lv[nl]);
		if (rc || !lv[nl])
			break;
		nl++;
	}
	free(row);
	free(w);
	if (rc) {
		while (nl > 0)
			sc_batch_release(lv[--nl]);
		return sc__fail(SC_ENOMEM,
				"sc_trace_work: out of memory folding a row "
				"past int64");
	}
	if (t->merging)
		sc__merge_abort(&t->merge);
	t->merging = false;
	for (size_t i = 0; i < nl; i++)
		sc__symtab_hold(&t->sym, lv[i]);
	for (size_t i = 0; i < t->nruns; i++) {
		sc__symtab_unhold(&t->sym, t->runs[i]);
		sc_batch_release(t->runs[i]);
	}
	for (size_t i = 0; i < nl; i++)
		t->runs[i] = lv[i];
	t->nruns = nl;
	t->wide = true;
	return 0;
}

/*
 * The merge in hand met a row whose two weights sum beyond int64. That sum
 * is only a partial integral: another run may hold the weight that brings
 * the row back (+MAX and +1 here, -1 in a third run), and which runs meet
 * in a merge is an accident of the merge schedule. So fold the whole spine
 * into one run instead (sc_batch_sum adds each row's weights in 128 bits):
 * that fails only if the integral itself has a row outside int64, and then
 * the spine is folded wide (wide_fold above). Rare, so its cost (a sort
 * of every row) is not budgeted.
 */
static int
merge_overflowed(struct sc_trace *t, int rc)
{
	struct sc_batch *all;

	rc = sc_batch_sum(t->runs, t->nruns, &all);
	if (rc == SC_EOVERFLOW)
		return wide_fold(t);
	if (rc)
		return sc__fail(rc, "sc_trace_work: out of memory folding "
				    "the spine");
	sc__merge_abort(&t->merge);
	t->merging = false;
	sc__symtab_hold(&t->sym, all);
	for (size_t i = 0; i < t->nruns; i++) {
		sc__symtab_unhold(&t->sym, t->runs[i]);
		sc_batch_release(t->runs[i]);
	}
	t->nruns = 0;
	if (all->count)
		t->runs[t->nruns++] = all;
	else
		sc_batch_release(all); /* empty: it holds nothing */
	return 0;
}

/* Advance the merge in hand; on completion swap its result in. */
static void clean_start(struct sc_trace *t, struct sc_batch *run);
static size_t clean_work(struct sc_trace *t, size_t budget);

static int
advance_merge(struct sc_trace *t, size_t budget, size_t *moved)
{
	struct sc_batch *merged;
	bool keep;
	int rc = sc__merge_step(&t->merge, budget, moved);

	if (rc == SC_EOVERFLOW)
		return merge_overflowed(t, rc);
	if (rc)
		return rc;
	if (sc__merge_left(&t->merge) > 0)
		return 0;
	rc = sc__merge_finish(&t->merge, &merged);
	t->merging = false;
	if (rc)
		return rc;
	keep = merged && merged->count;
	replace_pair(t, t->mi, merged);
	if (keep)
		clean_start(t, merged);
	return 0;
}

int
sc_trace_work(struct sc_trace *t, size_t budget, size_t *done)
{
	size_t total = 0, moved;
	bool started;
	int rc;

	if (!t)
		return sc__fail(SC_EINVAL, "sc_trace_work: trace is NULL");
	while (total < budget && !t->wide) {
		if (!t->merging) {
			rc = start_merge(t, &started);
			if (rc)
				return rc;
			if (!started)
				break;
		}
		rc = advance_merge(t, budget - total, &moved);
		if (rc)
			return rc;
		total += moved;
	}
	/* As much again reads the run the last merge wrote for rows no
	 * future delta can reach (not counted in *done: that is merge work,
	 * which a caller shares among its traces by it). */
	(void)clean_work(t, budget);
	if (done)
		*done = total;
	return 0;
}

int
sc_trace_insert(struct sc_trace *t, struct sc_batch *b)
{
	int rc;

	if (!t || !b)
		return sc__fail(SC_EINVAL, "sc_trace_insert: %s is NULL",
				!t ? "trace" : "batch");
	if (b->ncols != t->ncols)
		return sc__fail(SC_ESCHEMA,
				"sc_trace_insert: batch has %u columns, trace "
				"has %u",
				b->ncols, t->ncols);
	if (b->count == 0)
		return 0;
	if (t->nruns + 1 >= SC_TRACE_MAX_RUNS) {
		/* The safety net: settle the spine completely. A settled
		 * spine of N rows has at most log2(N) + 1 runs, far fewer
		 * than the limit for any N that fits in memory. */
		uint64_t was = sc__doing_act(SC__ACT_MERGE);

		t->wide = false; /* try the merges a wide fold held */
		rc = sc_trace_work(t, SIZE_MAX, NULL);
		sc__doing_back(was);
		if (rc)
			return rc;
		if (t->nruns + 1 >= SC_TRACE_MAX_RUNS)
			return sc__fail(SC_ESTATE,
					"sc_trace_insert: %zu runs even when "
					"settled",
					t->nruns);
	}
	sc__symtab_hold(&t->sym, b);
	place_run(t, sc_batch_retain(b));
	t->wide = false; /* the spine changed: merges may go on */
	return 0;
}

int
sc_trace_integral(const struct sc_trace *t, struct sc_batch **out)
{
	if (!t || !out)
		return sc__fail(SC_EINVAL, "sc_trace_integral: %s is NULL",
				!t ? "trace" : "out");
	if (t->nruns == 0)
		return sc_batch_empty(t->ncols, out);
	return sc_batch_sum(t->runs, t->nruns, out);
}

int
sc_trace_seek(const struct sc_trace *t, const uint64_t *key, uint32_t k,
	      struct sc_trace_cursor *c)
{
	size_t lo, hi;

	if (!t || !c || (!key && k > 0))
		return sc__fail(SC_EINVAL,
				"sc_trace_seek: an argument is NULL");
	if (k > t->ncols)
		return sc__fail(
		    SC_ESCHEMA,
		    "sc_trace_seek: key of %u columns, trace has %u", k,
		    t->ncols);
	c->ncols = t->ncols;
	c->nruns = 0;
	for (size_t i = 0; i < t->nruns; i++) {
		(void)sc_batch_key_range(t->runs[i], key, k, &lo, &hi);
		if (lo == hi)
			continue;
		c->run[c->nruns] = t->runs[i];
		c->pos[c->nruns] = lo;
		c->end[c->nruns] = hi;
		c->nruns++;
	}
	return 0;
}

/* Drop exhausted runs from the cursor so the scan stays short. */
static void
cursor_compact(struct sc_trace_cursor *c)
{
	uint32_t j = 0;

	for (uint32_t i = 0; i < c->nruns; i++) {
		if (c->pos[i] == c->end[i])
			continue;
		c->run[j] = c->run[i];
		c->pos[j] = c->pos[i];
		c->end[j] = c->end[i];
		j++;
	}
	c->nruns = j;
}

int
sc_trace_cursor_next(struct sc_trace_cursor *c, const uint64_t **row,
		     int64_t *weight)
{
	if (!c || !row || !weight)
		return sc__fail(SC_EINVAL,
				"sc_trace_cursor_next: an argument is NULL");
	while (c->nruns > 0) {
		const uint64_t *min = NULL;
		__int128 sum = 0; /* wide: only the total must fit */
		int64_t w;

		for (uint32_t i = 0; i < c->nruns; i++) {
			const uint64_t *r = sc_batch_row(c->run[i], c->pos[i]);

			if (!min || sc_row_cmp(r, min, c->ncols) < 0)
				min = r;
		}
		for (uint32_t i = 0; i < c->nruns; i++) {
			const uint64_t *r = sc_batch_row(c->run[i], c->pos[i]);

			if (!sc_row_eq(r, min, c->ncols))
				continue;
			sum += sc_batch_weight(c->run[i], c->pos[i]);
			c->pos[i]++;
		}
		cursor_compact(c);
		if (sum > INT64_MAX || sum < INT64_MIN)
			return sc__fail(SC_EOVERFLOW,
					"sc_trace_cursor_next: a row's weights "
					"sum beyond int64");
		w = (int64_t)sum;
		if (w != 0) {
			*row = min;
			*weight = w;
			return 1;
		}
	}
	return 0;
}

int
sc_trace_lookup(const struct sc_trace *t, const uint64_t *key, uint32_t k,
		struct sc_batch **out)
{
	struct sc_trace_cursor c;
	const uint64_t *row;
	uint64_t *data;
	size_t cap = 0, n = 0;
	int64_t w;
	int rc;

	if (!out)
		return sc__fail(SC_EINVAL, "sc_trace_lookup: out is NULL");
	rc = sc_trace_seek(t, key, k, &c);
	if (rc)
		return sc__errwrap(rc, "sc_trace_lookup");
	for (uint32_t i = 0; i < c.nruns; i++)
		cap += c.end[i] - c.pos[i];
	data =
	    sc__mem_alloc((cap ? cap : 1) * (t->ncols + 1) * sizeof(uint64_t));
	if (!data)
		return sc__fail(SC_ENOMEM, "sc_trace_lookup: out of memory");
	while ((rc = sc_trace_cursor_next(&c, &row, &w)) == 1) {
		uint64_t *rec = data + n * (t->ncols + 1);

		memcpy(rec, row, t->ncols * sizeof(uint64_t));
		rec[t->ncols] = (uint64_t)w;
		n++;
	}
	if (rc < 0) {
		sc__mem_free(data);
		return rc;
	}
	return sc__batch_adopt(t->ncols, data, n, cap, out);
}

/* --- cleanup sweeps (waterline.h) -----------------------------------------
 *
 * A sweep rewrites one run at a time without its dead rows, a bounded
 * number of rows per call, and swaps the result in when the whole run has
 * been read, so lookups see the old run (exact) until then. The run is
 * held by a reference of the sweep's own: if a merge takes it meanwhile,
 * the result is dropped (the merged run is read on a later round). A run
 * with no dead row costs a read and no copy: rows are copied only from the
 * first dead one on, those before it a budget's worth at a time. Runs are
 * taken in turn, so a trace of N rows is swept whole every N / budget
 * calls; and the run each merge writes is read next, with the merge
 * work's budget (clean_start), so no step reads or copies a whole run.
 * The swap lets go of the dead rows' holds only: the live rows keep
 * theirs.
 */

static void
sweep_drop(struct sweep_run *r)
{
	sc_batch_release(r->run);
	sc__mem_free(r->buf);
	r->run = NULL;
	r->buf = NULL;
	r->n = 0;
	r->dead = false;
	r->ngone = 0;
}

void
sc__trace_sweep_fini(struct sc_trace *t)
{
	if (!t->sw)
		return;
	sweep_drop(&t->sw->round);
	sweep_drop(&t->sw->fresh);
	free(t->sw->round.gone);
	free(t->sw->fresh.gone);
	free(t->sw);
	t->sw = NULL;
}

static bool
in_merge(const struct sc_trace *t, size_t i)
{
	return t->merging && (i == t->mi || i == t->mi + 1);
}

/* Start reading run r from its first row. */
static void
sweep_begin(struct sweep_run *r, struct sc_batch *run)
{
	r->run = sc_batch_retain(run);
	r->pos = 0;
}

/* Take the next run not in the merge in hand; false if none. */
static bool
sweep_take(struct sc_trace *t, struct sc__sweep *sw)
{
	for (size_t tries = 0; tries < t->nruns; tries++) {
		size_t i = sw->next++ % t->nruns;

		if (in_merge(t, i))
			continue;
		sweep_begin(&sw->round, t->runs[i]);
		return true;
	}
	return false;
}

/* Copy rows [i, i + k) of the run (each row and its weight) into buf. */
static void
sweep_keep(const struct sc_trace *t, struct sweep_run *r, size_t i, size_t k)
{
	for (size_t j = i; j < i + k; j++) {
		uint64_t *rec = r->buf + r->n * (t->ncols + 1);

		memcpy(rec, sc_batch_row(r->run, j),
		       t->ncols * sizeof(uint64_t));
		rec[t->ncols] = (uint64_t)sc_batch_weight(r->run, j);
		r->n++;
	}
}

/* The first dead row: the live rows before it are copied over the next
 * calls, budget permitting, before the read goes on. False short of
 * memory (the sweep gives this run up). */
static bool
sweep_first_dead(const struct sc_trace *t, struct sweep_run *r)
{
	size_t cap = r->run->count;

	r->buf = sc__mem_alloc(cap * (t->ncols + 1) * sizeof(uint64_t));
	if (!r->buf)
		return false;
	r->dead = true;
	r->first = r->pos;
	r->copied = 0;
	return true;
}

/* Note dead row i, whose holds go when the run does. False short of
 * memory. */
static bool
sweep_gone(struct sweep_run *r, size_t i)
{
	if (r->ngone == r->cap_gone) {
		size_t cap = r->cap_gone ? 2 * r->cap_gone : 64;
		size_t *g = realloc(r->gone, cap * sizeof(*g));

		if (!g)
			return false;
		r->gone = g;
		r->cap_gone = cap;
	}
	r->gone[r->ngone++] = i;
	return true;
}

/*
 * Put the live rows read by r in place of runs[i]; no merge may be in
 * hand on runs[i]. The live rows keep the holds the run took for them,
 * and only the dead ones let theirs go, so the swap costs the dead rows,
 * not the run. Short of memory the run stays.
 */
static void
swap_live(struct sc_trace *t, size_t i, struct sweep_run *r)
{
	struct sc_batch *live;
	uint64_t *buf = r->buf;

	r->buf = NULL; /* the batch owns it, or adopt frees it */
	if (sc__batch_adopt(t->ncols, buf, r->n, r->run->count, &live))
		return;
	sc__symtab_unhold_pairs(&t->sym, t->runs[i], r->gone, r->ngone);
	sc_batch_release(t->runs[i]);
	memmove(&t->runs[i], &t->runs[i + 1],
		(t->nruns - i - 1) * sizeof(struct sc_batch *));
	t->nruns--;
	if (t->merging && i < t->mi)
		t->mi--;
	if (live->count)
		place_run(t, live);
	else
		sc_batch_release(live);
}

/* The run has been read: swap the live rows in, if it is still a run and
 * not in the merge in hand. */
static void
sweep_finish(struct sc_trace *t, struct sweep_run *r)
{
	size_t i;

	for (i = 0; i < t->nruns && t->runs[i] != r->run; i++)
		;
	if (r->dead && i < t->nruns && !in_merge(t, i))
		swap_live(t, i, r);
	sweep_drop(r);
}

/* The first dead row of r's run in [r->pos, end), or end. */
static size_t
scan_live(const struct sweep_run *r, const struct sc__horizon *h, size_t end)
{
	size_t i = r->pos;

	while (i < end && !sc__horizon_dead(h, sc_batch_row(r->run, i)))
		i++;
	return i;
}

/*
 * Read at most `budget` rows of r's run (a row copied from before the
 * first dead one counts as one more), noting the dead ones, and swap the
 * live rows in once the run is read whole. The units used.
 */
static size_t
sweep_read(struct sc_trace *t, struct sweep_run *r, const struct sc__horizon *h,
	   size_t budget)
{
	size_t used = 0;

	while (r->run && used < budget) {
		size_t count = r->run->count, end;

		if (r->dead && r->copied < r->first) {
			size_t k = r->first - r->copied;

			if (k > budget - used)
				k = budget - used;
			sweep_keep(t, r, r->copied, k);
			r->copied += k;
			used += k;
			continue;
		}
		if (r->pos == count) {
			sweep_finish(t, r);
			break;
		}
		if (!r->dead) { /* no copy yet: a plain scan */
			end = count - r->pos > budget - used
				  ? r->pos + (budget - used)
				  : count;
			end = scan_live(r, h, end);
			used += end - r->pos;
			r->pos = end;
			if (end == count || used == budget)
				continue;
		}
		if (sc__horizon_dead(h, sc_batch_row(r->run, r->pos))) {
			if ((!r->dead && !sweep_first_dead(t, r)) ||
			    !sweep_gone(r, r->pos)) {
				sweep_drop(r);
				used++; /* the row read, so a round moves on */
				break;
			}
		} else {
			sweep_keep(t, r, r->pos, 1);
		}
		r->pos++;
		used++;
	}
	return used;
}

/*
 * A merge has just put `run` in the trace: read it next for rows below
 * the latest horizon a sweep was given (waterlines only rise, so it still
 * holds), with what the merges leave of the trace's work budget. The
 * round alone could not keep up: the large runs it reads are often folded
 * into a merge before it has read them whole, and its work on them is
 * lost, so dead rows would pile up in the runs that merge most. A read in
 * hand of a run still in the trace goes on (a stream of small merges
 * would otherwise never let a large run be read whole); the new run then
 * waits for the round or the next merge.
 */
static void
clean_start(struct sc_trace *t, struct sc_batch *run)
{
	struct sweep_run *f;

	if (!t->sw || t->sw->h.n == 0)
		return;
	f = &t->sw->fresh;
	if (f->run) {
		for (size_t i = 0; i < t->nruns; i++)
			if (t->runs[i] == f->run && !in_merge(t, i))
				return;
		sweep_drop(f);
	}
	sweep_begin(f, run);
}

static size_t
clean_work(struct sc_trace *t, size_t budget)
{
	if (!t->sw || !t->sw->fresh.run)
		return 0;
	return sweep_read(t, &t->sw->fresh, &t->sw->h, budget);
}

void
sc__trace_sweep(struct sc_trace *t, const struct sc__horizon *h, size_t budget)
{
	struct sc__sweep *sw = t->sw;

	if (!sw) {
		sw = calloc(1, sizeof(*sw));
		if (!sw)
			return;
		t->sw = sw;
	}
	sw->h = *h;
	while (budget > 0) {
		if (!sw->round.run && !sweep_take(t, sw))
			return;
		budget -= sweep_read(t, &sw->round, h, budget);
	}
}

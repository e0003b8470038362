/*
 * rowhash.c - rows to integrated weights, open addressing (see
 * rowhash_int.h).
 */
#include "operators/rowhash_int.h"

#include <stdlib.h>
#include <string.h>

#include "operators/doing_int.h"
#include "operators/error.h"
#include "operators/mem_int.h"
#include "operators/waterline_int.h"

/* Slots used at most: 1 in 2 (0.7 cost a fifth more instructions per
 * update on the grid workload, its clusters longer under churn). */
#define LOAD_NUM 1
#define LOAD_DEN 2

/*
 * Old slots drained per row reserved while growing, and at least per
 * reserve. A growth starts at the latest when the rows held and reserved
 * pass half of the old array's S slots (earlier when prepared, below);
 * the new array has at least 2S slots, so at
 * least S/4 more rows fit before it must grow again (S/2 of room less
 * the most a growth's own reserve can have taken without draining
 * everything at once: with more >= S/4 rows, its 8 * more units cover
 * the 2S of the whole drain). Draining costs at most 2 units a slot (a
 * visit, a move), so 2S units over S/4 rows is 8 a row: the old array is
 * empty before the new one is full, and no reserve finds a growth in
 * hand that it would have to finish at once.
 */
#define RH_DRAIN_PER_ROW 8
#define RH_DRAIN_MIN	 64

/*
 * Preparing a growth (rowhash_int.h): it starts at a load of
 * RH_PREP_NUM / RH_PREP_DEN, and each reserve faults in RH_TOUCH_PER_ROW
 * records' worth of the next array per row reserved, at least a huge
 * page of an array that has the huge-page hint (one fault brings the
 * whole of it), else RH_TOUCH_MIN_SMALL (a fault a page: 512 of them at
 * once were a step of milliseconds). From 3/8 to 1/2 of S slots come
 * S/8 rows, and the next array has 2S slots: 16 records a row; 32 leaves
 * a margin for the drain of the growth before, which must end before the
 * switch.
 */
#define RH_PREP_NUM	   3
#define RH_PREP_DEN	   8
#define RH_TOUCH_PER_ROW   32
#define RH_TOUCH_MIN	   ((size_t)2 << 20)
#define RH_TOUCH_MIN_SMALL ((size_t)64 << 10)

/*
 * The touches wait for the background prefault (mem_int.h) while the table
 * is under RH_LATE_NUM / RH_LATE_DEN full: the first S/32 of the S/8 rows
 * between 3/8 and 1/2 give it time; over the last 3S/32 the touches at
 * RH_TOUCH_PER_ROW still cover the 2S records 1.5 times. A switch that
 * comes first takes the array as it is (its inserts fault the rest).
 */
#define RH_LATE_NUM 13
#define RH_LATE_DEN 32
#define RH_PAGE	    4096

void
sc__rowhash_init(struct sc__rowhash *h, uint32_t ncols)
{
	memset(h, 0, sizeof(*h));
	h->ncols = ncols;
	h->stride = ncols + 1;
}

void
sc__rowhash_fini(struct sc__rowhash *h)
{
	/* An array a prefault may still read is freed after it. */
	sc__mem_prefault_free(h->recs, h->rticket);
	sc__mem_prefault_free(h->old, h->oticket);
	sc__mem_prefault_free(h->next, h->ticket);
	h->rticket = 0;
	h->oticket = 0;
	h->ticket = 0;
	h->next = NULL;
	h->nmask = 0;
	h->touched = 0;
	h->old = NULL;
	h->omask = 0;
	h->on = 0;
	h->drain = 0;
	h->dstart = 0;
	h->dn = 0;
	h->stray = 0;
	h->recs = NULL;
	h->n = 0;
	h->mask = 0;
	h->wide = false;
	h->nwide = 0;
	h->stride = h->ncols + 1;
}

static inline uint64_t *
rec_at(const struct sc__rowhash *h, size_t s)
{
	return h->recs + s * h->stride;
}

static inline int64_t
rec_w(const struct sc__rowhash *h, const uint64_t *rec)
{
	return (int64_t)rec[h->ncols];
}

/* --- weights past int64 (rowhash_int.h) --- */

static inline int64_t
clamp64(__int128 w)
{
	return w > INT64_MAX   ? INT64_MAX
	       : w < INT64_MIN ? INT64_MIN
			       : (int64_t)w;
}

static inline bool
out64(__int128 w)
{
	return w > INT64_MAX || w < INT64_MIN;
}

/* The exact weight of an occupied record in h's layout. */
static inline __int128
rec_exact(const struct sc__rowhash *h, const uint64_t *rec)
{
	if (!h->wide)
		return rec_w(h, rec);
	return (__int128)(((unsigned __int128)rec[h->ncols + 2] << 64) |
			  rec[h->ncols + 1]);
}

/* Write weight w (not 0) into rec, in h's layout. */
static inline void
rec_set(const struct sc__rowhash *h, uint64_t *rec, __int128 w)
{
	rec[h->ncols] = (uint64_t)clamp64(w);
	if (h->wide) {
		rec[h->ncols + 1] = (uint64_t)w;
		rec[h->ncols + 2] = (uint64_t)((unsigned __int128)w >> 64);
	}
}

/* Rows equal, with the narrow widths unrolled. */
static inline bool
row_eq(const uint64_t *a, const uint64_t *b, uint32_t ncols)
{
	switch (ncols) {
	case 1:
		return a[0] == b[0];
	case 2:
		return ((a[0] ^ b[0]) | (a[1] ^ b[1])) == 0;
	case 3:
		return ((a[0] ^ b[0]) | (a[1] ^ b[1]) | (a[2] ^ b[2])) == 0;
	default:
		return sc_row_eq(a, b, ncols);
	}
}

/* Copy n words: constant sizes for the narrow rows, which a call to
 * memcpy of a variable size would cost several times over. */
static inline void
words_copy(uint64_t *dst, const uint64_t *src, uint32_t n)
{
	switch (n) {
	case 2:
		memcpy(dst, src, 2 * sizeof(uint64_t));
		break;
	case 3:
		memcpy(dst, src, 3 * sizeof(uint64_t));
		break;
	case 4:
		memcpy(dst, src, 4 * sizeof(uint64_t));
		break;
	default:
		memcpy(dst, src, (size_t)n * sizeof(uint64_t));
		break;
	}
}

/* The slot of array recs (mask + 1 slots, h's layout) holding row, or
 * the empty slot that ends its probe. */
static inline size_t
find_in(const struct sc__rowhash *h, const uint64_t *recs, size_t mask,
	const uint64_t *row, uint64_t hv)
{
	for (size_t s = sc__rowhash_home(hv, mask);; s = (s + 1) & mask) {
		const uint64_t *rec = recs + s * h->stride;

		if (rec_w(h, rec) == 0 || row_eq(rec, row, h->ncols))
			return s;
	}
}

/* The slot of the current array holding row, or the empty slot that ends
 * its probe. */
static inline size_t
find_slot(const struct sc__rowhash *h, const uint64_t *row, uint64_t hv)
{
	return find_in(h, h->recs, h->mask, row, hv);
}

/*
 * Empty slot s of array recs (mask + 1 slots, h's layout) and shift back
 * the cluster after it: a record may move into the hole unless its home
 * lies cyclically in (hole, its slot].
 */
static inline __attribute__((always_inline)) void
delete_in(const struct sc__rowhash *h, uint64_t *recs, size_t mask, size_t s)
{
	const uint32_t stride = h->stride;
	size_t j = s;

	for (;;) {
		recs[s * stride + h->ncols] = 0;
		for (;;) {
			const uint64_t *rec;
			size_t home;

			j = (j + 1) & mask;
			rec = recs + j * stride;
			if (rec_w(h, rec) == 0)
				return;
			home = sc__rowhash_home(sc__rowhash_hash(h, rec), mask);
			if (((j - home) & mask) >= ((j - s) & mask))
				break;
		}
		words_copy(recs + s * stride, recs + j * stride, stride);
		s = j;
	}
}

/* Empty slot s of the current array (see delete_in). */
static inline __attribute__((always_inline)) void
slot_delete(struct sc__rowhash *h, size_t s)
{
	delete_in(h, h->recs, h->mask, s);
}

/*
 * Drain the old array of a growing table by about `budget` units (a slot
 * visited, a record moved), a whole cluster at a time (rowhash_int.h):
 * a cluster begun is moved to its end, so the budget may be passed by
 * the rest of one cluster. The records come in slot order, so their
 * homes in the new array rise too and the writes stream. The old array
 * is freed once empty.
 */
static void
drain(struct sc__rowhash *h, size_t budget)
{
	/* Locals, not h's fields: the records are uint64_t words, which
	 * may alias h's size_t fields, so every store into a record would
	 * make the compiler load them all again. */
	const uint32_t stride = h->stride, ncols = h->ncols;
	const size_t omask = h->omask, mask = h->mask;
	uint64_t *const old = h->old, *const recs = h->recs;
	size_t at = h->drain, on = h->on, dn = h->dn;

	if (!old)
		return;
	while (on > 0 && budget > 0) {
		uint64_t *rec = old + at * stride;

		budget--;
		at = (at + 1) & omask;
		dn++;
		for (; rec[ncols] != 0;
		     rec = old + at * stride, at = (at + 1) & omask, dn++) {
			size_t s =
			    sc__rowhash_home(sc_row_hash(rec, ncols), mask);

			/* The row is in the old array only: its place in
			 * the new one is the first empty slot of its probe. */
			while (recs[s * stride + ncols] != 0)
				s = (s + 1) & mask;
			words_copy(recs + s * stride, rec, stride);
			rec[ncols] = 0;
			on--;
			if (budget > 0)
				budget--;
		}
	}
	h->drain = at;
	h->on = on;
	h->dn = dn;
	if (on == 0) {
		sc__mem_prefault_free(old, h->oticket);
		h->oticket = 0;
		h->old = NULL;
		h->omask = 0;
		h->drain = 0;
		h->dstart = 0;
		h->dn = 0;
		h->stray = 0;
	}
}

void
sc__rowhash_settle(struct sc__rowhash *h)
{
	drain(h, SIZE_MAX);
}

/*
 * Move every record into a fresh table of nslots slots in the wide or the
 * narrow layout (rowhash_int.h). 0 or SC_ENOMEM (the table unchanged).
 */
static int
relayout(struct sc__rowhash *h, size_t nslots, bool wide)
{
	struct sc__rowhash o = *h;
	uint32_t stride = h->ncols + (wide ? 3 : 1);
	uint64_t *recs;
	size_t bytes;

	if (__builtin_mul_overflow(nslots, (size_t)stride * 8, &bytes))
		return SC_ENOMEM;
	recs = calloc(1, bytes);
	if (!recs)
		return SC_ENOMEM;
	if (bytes >= SC__MEM_BIG)
		sc__mem_hint_huge(recs, bytes);
	h->recs = recs;
	h->mask = nslots - 1;
	h->stride = stride;
	h->wide = wide;
	for (size_t s = 0; o.recs && s <= o.mask; s++) {
		const uint64_t *rec = rec_at(&o, s);
		uint64_t *dst;

		if (rec_w(&o, rec) == 0)
			continue;
		dst = rec_at(h, find_slot(h, rec, sc__rowhash_hash(h, rec)));
		memcpy(dst, rec, (size_t)h->ncols * 8);
		rec_set(h, dst, rec_exact(&o, rec));
	}
	sc__mem_prefault_free(o.recs, o.rticket);
	h->rticket = 0;
	return 0;
}

/* A fresh array of nslots slots in the narrow layout, or NULL. */
static uint64_t *
array_alloc(const struct sc__rowhash *h, size_t nslots)
{
	uint64_t *recs;
	size_t bytes;

	if (__builtin_mul_overflow(nslots, (size_t)h->stride * 8, &bytes))
		return NULL;
	/* calloc: a large array comes from fresh pages that are zero
	 * already, faulted in as they are first touched. A table of
	 * millions of rows is probed at random, so it gets the huge-page
	 * hint, which saves a TLB miss per probe besides the page faults. */
	recs = calloc(1, bytes);
	if (recs && bytes >= SC__MEM_BIG)
		sc__mem_hint_huge(recs, bytes);
	return recs;
}

/* Drop a prepared growth. */
static void
unprepare(struct sc__rowhash *h)
{
	sc__mem_prefault_free(h->next, h->ticket);
	h->next = NULL;
	h->nmask = 0;
	h->touched = 0;
	h->ticket = 0;
}

/* Fault in about `bytes` more of the prepared array, a word a page. */
static void
touch(struct sc__rowhash *h, size_t bytes)
{
	size_t total = (h->nmask + 1) * (size_t)h->stride * 8;
	volatile uint64_t *p = h->next;

	while (h->touched < total && bytes > 0) {
		p[h->touched / 8] = 0;
		h->touched += RH_PAGE;
		bytes = bytes > RH_PAGE ? bytes - RH_PAGE : 0;
	}
}

/* Make recs (nslots slots, empty, its prefault `ticket`) the current
 * array; the current one, if it holds rows, becomes the old one, drained
 * later. No growth in hand. */
static void
switch_to(struct sc__rowhash *h, uint64_t *recs, size_t nslots, uint64_t ticket)
{
	if (h->recs && h->n > 0) {
		h->old = h->recs;
		h->oticket = h->rticket;
		h->omask = h->mask;
		h->on = h->n;
		/* Begin at an empty slot, so that no cluster is cut. */
		for (h->drain = 0; rec_w(h, h->old + h->drain * h->stride);)
			h->drain++;
		h->dstart = h->drain;
		h->dn = 0;
		h->stray = 0;
	} else {
		sc__mem_prefault_free(h->recs, h->rticket);
	}
	h->recs = recs;
	h->rticket = ticket;
	h->mask = nslots - 1;
}

/* Take the prepared array out of h (its owner now the caller), and its
 * prefault's ticket into *ticket. */
static uint64_t *
take_next(struct sc__rowhash *h, uint64_t *ticket)
{
	uint64_t *recs = h->next;

	*ticket = h->ticket;
	h->next = NULL;
	h->nmask = 0;
	h->touched = 0;
	h->ticket = 0;
	return recs;
}

/*
 * Grow into a fresh array of nslots slots at once: the prepared one if it
 * is large enough, else a new one; a growth in hand is finished first.
 * 0 or SC_ENOMEM (the rows held unchanged).
 */
static int
grow_sliced(struct sc__rowhash *h, size_t nslots)
{
	uint64_t *recs, ticket = 0;

	if (h->next && h->nmask + 1 >= nslots) {
		nslots = h->nmask + 1;
		recs = take_next(h, &ticket);
	} else {
		recs = array_alloc(h, nslots);
		if (!recs)
			return SC_ENOMEM;
		unprepare(h);
	}
	sc__rowhash_settle(h);
	switch_to(h, recs, nslots, ticket);
	return 0;
}

/*
 * Prepare the next growth, step by step (rowhash_int.h): allocate the
 * next array once the table is RH_PREP_NUM / RH_PREP_DEN full and no
 * growth is in hand, touch `bytes` more of it, and switch to it once it
 * is touched whole and the last growth's drain is done. Short of memory
 * it does nothing: reserve grows at once later, or fails then.
 */
static void
prepare(struct sc__rowhash *h, size_t bytes)
{
	size_t nslots = h->mask + 1, total;
	uint64_t was, *recs, ticket;

	if (!h->next) {
		if (h->old || h->wide ||
		    h->n * RH_PREP_DEN <= nslots * RH_PREP_NUM)
			return;
		h->next = array_alloc(h, 2 * nslots);
		if (!h->next)
			return;
		h->nmask = 2 * nslots - 1;
		h->touched = 0;
		/* The kernel's part (fresh pages) off this thread: a
		 * background prefault, and no touching while it runs. */
		h->ticket = sc__mem_prefault(
		    h->next, 2 * nslots * (size_t)h->stride * 8);
		if (h->ticket)
			return;
	}
	total = (h->nmask + 1) * (size_t)h->stride * 8;
	if (h->ticket && sc__mem_prefault_over(h->ticket)) {
		h->ticket = 0;
		h->touched = total; /* what it left, inserts fault */
	} else if (h->ticket && h->n * RH_LATE_DEN < nslots * RH_LATE_NUM) {
		return; /* the prefault still has time */
	}
	/* Faulting pages in is the growth's work, and named so. */
	was = sc__doing_act(SC__ACT_GROW);
	touch(h, bytes);
	sc__doing_back(was);
	if (h->old || h->touched < total)
		return;
	nslots = h->nmask + 1;
	recs = take_next(h, &ticket);
	switch_to(h, recs, nslots, ticket);
}

/* Grow to nslots slots: in slices when narrow; a wide table (never
 * growing, see widen_add) is copied at once, narrowed when every weight
 * fits again. */
static int
grow(struct sc__rowhash *h, size_t nslots)
{
	uint64_t *old = h->recs;
	size_t oslots = old ? h->mask + 1 : 0;
	size_t bytes;

	if (!h->wide)
		return grow_sliced(h, nslots);
	unprepare(h);
	if (h->nwide == 0) /* every weight fits again */
		return relayout(h, nslots, false);

	if (__builtin_mul_overflow(nslots, (size_t)h->stride * 8, &bytes))
		return SC_ENOMEM;
	h->recs = calloc(1, bytes);
	if (!h->recs) {
		h->recs = old;
		return SC_ENOMEM;
	}
	if (bytes >= SC__MEM_BIG)
		sc__mem_hint_huge(h->recs, bytes);
	h->mask = nslots - 1;
	for (size_t s = 0; s < oslots; s++) {
		const uint64_t *rec = old + s * h->stride;

		if (rec_w(h, rec) == 0)
			continue;
		memcpy(rec_at(h, find_slot(h, rec, sc__rowhash_hash(h, rec))),
		       rec, (size_t)h->stride * 8);
	}
	sc__mem_prefault_free(old, h->rticket);
	h->rticket = 0;
	return 0;
}

/* The part of reserve that grows the table to room for `need` rows (of
 * nslots slots now) and drains the last growth by `budget` rows. */
static int
reserve_grow(struct sc__rowhash *h, size_t need, size_t nslots, size_t budget)
{
	if (!h->recs || need * LOAD_DEN > nslots * LOAD_NUM) {
		while (need * LOAD_DEN > nslots * LOAD_NUM)
			nslots *= 2;
		if (grow(h, nslots))
			return sc__fail(SC_ENOMEM,
					"row table: out of memory for %zu rows",
					need);
	}
	drain(h, budget);
	return 0;
}

int
sc__rowhash_reserve(struct sc__rowhash *h, size_t more)
{
	size_t need = h->n + more, nslots;
	size_t budget = RH_DRAIN_MIN, bytes = RH_TOUCH_MIN_SMALL;
	uint64_t was;
	int rc;

	if (h->recs && (h->mask + 1) * 2 * (size_t)h->stride * 8 >= SC__MEM_BIG)
		bytes = RH_TOUCH_MIN; /* the next array is twice this one */

	if (need < h->n || need > SIZE_MAX / LOAD_DEN)
		return sc__fail(SC_ENOMEM, "row table: %zu rows", need);
	if (more > (SIZE_MAX - budget) / RH_DRAIN_PER_ROW)
		budget = SIZE_MAX;
	else
		budget += more * RH_DRAIN_PER_ROW;
	if (more > SIZE_MAX / RH_TOUCH_PER_ROW / 8 / h->stride)
		bytes = SIZE_MAX;
	else if (more * RH_TOUCH_PER_ROW * 8 * h->stride > bytes)
		bytes = more * RH_TOUCH_PER_ROW * 8 * h->stride;
	if (h->recs)
		prepare(h, bytes);
	nslots = h->recs ? h->mask + 1 : 16;
	/* Marked only when it grows or drains: a reserve that fits is the
	 * common case, and pays a compare for the mark. */
	if (h->recs && !h->old && need * LOAD_DEN <= nslots * LOAD_NUM)
		return 0;
	was = sc__doing_act(SC__ACT_GROW);
	rc = reserve_grow(h, need, nslots, budget);
	sc__doing_back(was);
	return rc;
}

/* sc__rowhash_add on a wide table: exact sums in 128 bits. Cold and out
 * of line, so that the narrow path keeps slot_delete inlined. */
static __attribute__((cold, noinline)) int
add_wide(struct sc__rowhash *h, const uint64_t *row, uint64_t hv, int64_t w,
	 int64_t *was, int64_t *now)
{
	size_t s = find_slot(h, row, hv); /* a wide table is not growing */
	uint64_t *rec = rec_at(h, s);
	__int128 old = rec_w(h, rec) ? rec_exact(h, rec) : 0, sum = old + w;

	*was = clamp64(old);
	*now = clamp64(sum);
	if (out64(sum) && !out64(old))
		h->nwide++;
	else if (out64(old) && !out64(sum))
		h->nwide--;
	if (old == 0) {
		words_copy(rec, row, h->ncols);
		rec_set(h, rec, sum);
		h->n++;
	} else if (sum == 0) {
		slot_delete(h, s);
		h->n--;
	} else {
		rec_set(h, rec, sum);
	}
	return 0;
}

/* The first sum past int64: finish a growth in hand, widen in place (same
 * slots, so reserved room stays reserved), then add. */
static __attribute__((cold, noinline)) int
widen_add(struct sc__rowhash *h, const uint64_t *row, uint64_t hv, int64_t w,
	  int64_t *was, int64_t *now)
{
	sc__rowhash_settle(h);
	unprepare(h);
	if (relayout(h, h->mask + 1, true))
		return sc__fail(SC_ENOMEM, "row table: out of memory for a "
					   "weight past int64");
	return add_wide(h, row, hv, w, was, now);
}

/* The old array's most records while growing, the load it may reach
 * before a growth begins: past it, inserts go to the new array as
 * strays (rowhash_int.h), so that its clusters stay as short as they
 * were. */
static inline size_t
old_cap(const struct sc__rowhash *h)
{
	return (h->omask + 1) * LOAD_NUM / LOAD_DEN;
}

/* Add w to the record in slot s of array recs (mask + 1 slots), the row's
 * slot or the empty one ending its probe, in the narrow layout; *on
 * counts the array's records when it is the old one. */
static inline __attribute__((always_inline)) void
add_at(struct sc__rowhash *h, uint64_t *recs, size_t mask, size_t s,
       const uint64_t *row, int64_t old, int64_t sum, size_t *on)
{
	uint64_t *rec = recs + s * h->stride;

	if (old == 0) { /* absent: insert (room was reserved) */
		words_copy(rec, row, h->ncols);
		rec[h->ncols] = (uint64_t)sum;
		h->n++;
		if (on)
			(*on)++;
	} else if (sum == 0) {
		delete_in(h, recs, mask, s);
		h->n--;
		if (on)
			(*on)--;
	} else {
		rec[h->ncols] = (uint64_t)sum;
	}
}

/*
 * sc__rowhash_add on a growing table for a row whose old home the drain
 * has not passed: it lives in the old array, or, as a stray, in the new
 * one; an absent row is inserted into the old array while it has room.
 */
static __attribute__((noinline)) int
add_old(struct sc__rowhash *h, const uint64_t *row, uint64_t hv, int64_t w,
	int64_t *was, int64_t *now)
{
	size_t os = find_in(h, h->old, h->omask, row, hv), s;
	int64_t old = rec_w(h, h->old + os * h->stride), sum;

	if (old == 0 && (h->stray > 0 || h->on >= old_cap(h))) {
		s = find_slot(h, row, hv);
		old = rec_w(h, rec_at(h, s));
		if (old != 0 || h->on >= old_cap(h)) {
			if (__builtin_add_overflow(old, w, &sum))
				return widen_add(h, row, hv, w, was, now);
			*was = old;
			*now = sum;
			h->stray += old == 0;
			add_at(h, h->recs, h->mask, s, row, old, sum, NULL);
			return 0;
		}
	}
	if (__builtin_add_overflow(old, w, &sum))
		return widen_add(h, row, hv, w, was, now);
	*was = old;
	*now = sum;
	add_at(h, h->old, h->omask, os, row, old, sum, &h->on);
	return 0;
}

int
sc__rowhash_add(struct sc__rowhash *h, const uint64_t *row, uint64_t hv,
		int64_t w, int64_t *was, int64_t *now)
{
	size_t s;
	int64_t old, sum;

	if (__builtin_expect(h->wide, 0))
		return add_wide(h, row, hv, w, was, now);
	if (__builtin_expect(sc__rowhash_in_old(h, hv), 0))
		return add_old(h, row, hv, w, was, now);
	s = find_slot(h, row, hv);
	old = rec_w(h, rec_at(h, s));
	if (__builtin_expect(__builtin_add_overflow(old, w, &sum), 0))
		return widen_add(h, row, hv, w, was, now);
	*was = old;
	*now = sum;
	add_at(h, h->recs, h->mask, s, row, old, sum, NULL);
	return 0;
}

__int128
sc__rowhash_get(const struct sc__rowhash *h, const uint64_t *row)
{
	const uint64_t *rec;

	uint64_t hv;

	if (!h->recs)
		return 0;
	hv = sc__rowhash_hash(h, row);
	if (sc__rowhash_in_old(h, hv)) {
		rec =
		    h->old + find_in(h, h->old, h->omask, row, hv) * h->stride;
		if (rec_w(h, rec) != 0 || h->stray == 0)
			return rec_w(h, rec);
	}
	rec = rec_at(h, find_slot(h, row, hv));
	return rec_w(h, rec) ? rec_exact(h, rec) : 0;
}

size_t
sc__rowhash_bytes(const struct sc__rowhash *h)
{
	size_t n = h->recs ? (h->mask + 1) * (size_t)h->stride * 8 : 0;

	n += h->old ? (h->omask + 1) * (size_t)h->stride * 8 : 0;
	return n + (h->next ? (h->nmask + 1) * (size_t)h->stride * 8 : 0);
}

/*
 * sc__rowhash_sweep - the cleanup sweep (waterline_int.h): visit `budget`
 * slots from *cursor, wrapping, and remove the dead records. A removal
 * shifts later records of the cluster back into the hole, so the slot is
 * looked at again before the cursor moves on; a record shifted past the
 * wrap point is merely visited twice. A table that grows between calls
 * is re-hashed, so the cursor may skip a few records until its next round.
 * A growing table's old array is drained by the same budget first: its
 * records are swept once they have moved.
 */
void
sc__rowhash_sweep(struct sc__rowhash *rh, const struct sc__horizon *h,
		  size_t *cursor, size_t budget,
		  void (*drop)(void *ctx, const uint64_t *rec), void *ctx)
{
	size_t s = *cursor, n;

	drain(rh, budget);
	n = rh->n - rh->on; /* records in the current array */
	if (!rh->recs || n == 0)
		return;
	/* The budget counts records, the walk slots: a table is at most about
	 * half full, so a walk of `budget` slots would go round more slowly
	 * than records come in, and the dead ones would pile up. */
	budget *= (rh->mask + 1 + n - 1) / n;
	s &= rh->mask;
	while (budget-- > 0) {
		const uint64_t *rec = rec_at(rh, s);

		if (rec_w(rh, rec) != 0 && sc__horizon_dead(h, rec)) {
			if (drop)
				drop(ctx, rec);
			slot_delete(rh, s);
			rh->n--;
			if (--n == 0)
				break;
			continue;
		}
		s = (s + 1) & rh->mask;
	}
	*cursor = s;
}

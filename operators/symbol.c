/*
 * symbol.c - the interning table (see symbol.h for the design).
 *
 * Nothing under the table's mutex reads or writes the caller's memory: the
 * text is hashed and copied into a key first, and results are written out
 * after the mutex is given back. A bad pointer from a unit's callback then
 * faults with no lock held, the fault becomes a panic of that unit, and
 * the table goes on serving everyone else. The mutex is
 * taken through sc__mutex_lock, so that a fault inside the table itself
 * (a bug of ours) kills the process with a message rather than leaving the
 * mutex held for ever (operators/base_int.h).
 */
#include "operators/symbol.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "operators/base_int.h"
#include "operators/batch_int.h"
#include "operators/symbol_int.h"

/*
 * A hash slot holds the top 32 bits of the text's hash above a 32-bit id,
 * so a probe that meets another text usually tells from the slot alone,
 * without touching the entry or the text (each a cache miss in a large
 * table). Ids are below 2^32 - 1; these two slot values are never a real
 * slot (id 0 is never handed out, and no id is 2^32 - 1).
 */
#define SLOT_EMPTY 0u
#define SLOT_TOMB  UINT64_MAX
#define ID_LIMIT   0xffffffffu

static inline uint64_t
slot_make(uint64_t h, uint64_t id)
{
	return (h & 0xffffffff00000000ULL) | id;
}

static inline uint64_t
slot_id(uint64_t slot)
{
	return slot & 0xffffffffu;
}

struct sym_entry {
	char *text;    /* len bytes and a NUL; NULL when the id is free */
	size_t len;    /* bytes of text, without the NUL */
	uint64_t hash; /* hash of the text, kept to rehash without reading it */
	uint64_t refs; /* references; 0 when free */
};

struct sc_symtab {
	pthread_mutex_t lock;  /* guards every field below */
	uint64_t *slots;       /* open addressing, nslots a power of two */
	size_t nslots;	       /* capacity of slots */
	size_t used;	       /* slots neither empty nor tombstones */
	size_t tombs;	       /* tombstone slots */
	struct sym_entry *ent; /* indexed by id; ent[0] unused */
	size_t nent;	       /* entries allocated (ids < nent exist) */
	size_t capent;	       /* capacity of ent */
	uint64_t *free_ids;    /* ids released to zero, reused LIFO */
	size_t nfree, capfree; /* size and capacity of free_ids */
	size_t text_bytes;     /* bytes of live text */
};

/*
 * The caller's text as the locked code sees it: a private copy, on the
 * stack when short (an intern of a known short string allocates nothing),
 * on the heap otherwise, where a new symbol takes it over as its text.
 */
#define KEY_STACK_MAX 256

struct sym_key {
	const char *text;	 /* the copy: buf or heap */
	char *heap;		 /* a malloc'd copy, or NULL */
	size_t len;		 /* bytes of text, without the NUL */
	uint64_t hash;		 /* hash_bytes of the text */
	char buf[KEY_STACK_MAX]; /* the copy when len < KEY_STACK_MAX */
};

static uint64_t
hash_bytes(const char *p, size_t n)
{
	/* FNV-1a, then a final mix so the low bits used for the slot index
	 * depend on every byte. */
	uint64_t h = 0xcbf29ce484222325ULL;

	for (size_t i = 0; i < n; i++) {
		h ^= (unsigned char)p[i];
		h *= 0x100000001b3ULL;
	}
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	return h ^ (h >> 33);
}

/*
 * Hash and copy the caller's text, before any lock is taken. The hash reads
 * every byte first, so a bad pointer faults here before anything is
 * allocated. Returns 0, or SC_ENOMEM (a long text and no memory for its
 * copy; no message recorded). key_fini frees what key_make made.
 */
static int
key_make(struct sym_key *k, const char *text, size_t len)
{
	k->hash = hash_bytes(text, len);
	k->len = len;
	k->heap = NULL;
	if (len < sizeof(k->buf)) {
		if (len)
			memcpy(k->buf, text, len);
		k->buf[len] = '\0';
		k->text = k->buf;
		return 0;
	}
	k->heap = malloc(len + 1);
	if (!k->heap)
		return SC_ENOMEM;
	memcpy(k->heap, text, len);
	k->heap[len] = '\0';
	k->text = k->heap;
	return 0;
}

static void
key_fini(struct sym_key *k)
{
	free(k->heap);
	k->heap = NULL;
}

/* The key's text as a heap string a new entry can own: the heap copy is
 * taken over, a stack copy is copied once more. NULL when out of memory. */
static char *
key_take_text(struct sym_key *k)
{
	char *copy = k->heap;

	if (copy) {
		k->heap = NULL;
		return copy;
	}
	copy = malloc(k->len + 1);
	if (copy)
		memcpy(copy, k->buf, k->len + 1);
	return copy;
}

int
sc_symtab_create(struct sc_symtab **out)
{
	struct sc_symtab *t;

	if (!out)
		return sc__fail(SC_EINVAL, "sc_symtab_create: out is NULL");
	t = calloc(1, sizeof(*t));
	if (!t)
		goto fail;
	t->nslots = 64;
	t->slots = calloc(t->nslots, sizeof(t->slots[0]));
	if (!t->slots)
		goto free_table;
	t->nent = 1; /* id 0 is SC_SYMBOL_NONE */
	t->capent = 64;
	t->ent = calloc(t->capent, sizeof(t->ent[0]));
	if (!t->ent)
		goto free_slots;
	if (pthread_mutex_init(&t->lock, NULL) != 0)
		goto free_ent;
	*out = t;
	return 0;

free_ent:
	free(t->ent);
free_slots:
	free(t->slots);
free_table:
	free(t);
fail:
	return sc__fail(SC_ENOMEM, "sc_symtab_create: out of memory");
}

void
sc_symtab_destroy(struct sc_symtab *t)
{
	if (!t)
		return;
	for (size_t i = 1; i < t->nent; i++)
		free(t->ent[i].text);
	free(t->ent);
	free(t->slots);
	free(t->free_ids);
	pthread_mutex_destroy(&t->lock);
	free(t);
}

/* The slot holding `text`, or the empty slot where it would go (*found
 * tells which). Never returns a tombstone when found is false, so an insert
 * may reuse the first tombstone on the way. Caller holds the lock. */
static size_t
probe(const struct sc_symtab *t, const struct sym_key *k, bool *found)
{
	uint64_t h = k->hash;
	size_t mask = t->nslots - 1, i = h & mask, tomb = SIZE_MAX;

	for (;; i = (i + 1) & mask) {
		uint64_t sl = t->slots[i], id = slot_id(sl);

		if (sl == SLOT_EMPTY) {
			*found = false;
			return tomb != SIZE_MAX ? tomb : i;
		}
		if (sl == SLOT_TOMB) {
			if (tomb == SIZE_MAX)
				tomb = i;
			continue;
		}
		if ((sl ^ h) >> 32 == 0 && t->ent[id].hash == h &&
		    t->ent[id].len == k->len &&
		    memcmp(t->ent[id].text, k->text, k->len) == 0) {
			*found = true;
			return i;
		}
	}
}

/* Rebuild the slots with room for one more live id, dropping tombstones.
 * Caller holds the lock. Unchanged on SC_ENOMEM. */
static int
grow_slots(struct sc_symtab *t)
{
	size_t n = t->nslots, mask;
	uint64_t *s;

	if ((t->used + 1) * 2 >= n)
		n *= 2;
	s = calloc(n, sizeof(*s));
	if (!s)
		return SC_ENOMEM;
	mask = n - 1;
	for (size_t i = 0; i < t->nslots; i++) {
		uint64_t sl = t->slots[i];
		size_t j;

		if (sl == SLOT_EMPTY || sl == SLOT_TOMB)
			continue;
		for (j = t->ent[slot_id(sl)].hash & mask; s[j] != SLOT_EMPTY;
		     j = (j + 1) & mask)
			;
		s[j] = sl;
	}
	free(t->slots);
	t->slots = s;
	t->nslots = n;
	t->tombs = 0;
	return 0;
}

/* Make sure one more id can be allocated and one more id freed later
 * without any allocation. Caller holds the lock. */
static int
reserve_id(struct sc_symtab *t)
{
	if (t->nfree == 0 && t->nent == t->capent) {
		size_t cap = t->capent * 2;
		struct sym_entry *e = realloc(t->ent, cap * sizeof(*e));

		if (!e)
			return SC_ENOMEM;
		memset(e + t->capent, 0, (cap - t->capent) * sizeof(*e));
		t->ent = e;
		t->capent = cap;
	}
	/* Room in free_ids for every id that exists, so release never
	 * allocates (release cannot fail for want of memory). */
	if (t->capfree < t->nent + 1) {
		size_t cap = t->capent + 1;
		uint64_t *f = realloc(t->free_ids, cap * sizeof(*f));

		if (!f)
			return SC_ENOMEM;
		t->free_ids = f;
		t->capfree = cap;
	}
	return 0;
}

/* Intern the key; *id is the table's own variable, not the caller's.
 * Caller holds the lock. */
static int
intern_locked(struct sc_symtab *t, struct sym_key *k, uint64_t *id)
{
	uint64_t h = k->hash, nid;
	bool found;
	size_t slot;
	char *copy;

	slot = probe(t, k, &found);
	if (found) {
		uint64_t fid = slot_id(t->slots[slot]);
		struct sym_entry *e = &t->ent[fid];

		if (e->refs == UINT64_MAX)
			return sc__fail(SC_EOVERFLOW,
					"sc_symtab_intern: reference count of "
					"id %" PRIu64 " would wrap",
					fid);
		e->refs++;
		*id = fid;
		return 0;
	}
	if ((t->used + t->tombs + 1) * 4 >= t->nslots * 3) {
		if (grow_slots(t))
			goto nomem;
		slot = probe(t, k, &found);
	}
	if (t->nfree == 0 && t->nent >= ID_LIMIT)
		return sc__fail(SC_EOVERFLOW,
				"sc_symtab_intern: %zu live symbols, the most "
				"a table holds",
				t->used);
	if (reserve_id(t))
		goto nomem;
	copy = key_take_text(k);
	if (!copy)
		goto nomem;
	nid = t->nfree ? t->free_ids[--t->nfree] : t->nent++;
	t->ent[nid] = (struct sym_entry){
	    .text = copy, .len = k->len, .hash = h, .refs = 1};
	if (t->slots[slot] == SLOT_TOMB)
		t->tombs--;
	t->slots[slot] = slot_make(h, nid);
	t->used++;
	t->text_bytes += k->len + 1;
	*id = nid;
	return 0;

nomem:
	return sc__fail(SC_ENOMEM, "sc_symtab_intern: out of memory");
}

int
sc_symtab_intern(struct sc_symtab *t, const char *text, size_t len,
		 uint64_t *id)
{
	struct sym_key k;
	uint64_t got;
	int rc;

	if (!t || !id || (!text && len > 0))
		return sc__fail(SC_EINVAL, "sc_symtab_intern: %s is NULL",
				!t    ? "table"
				: !id ? "id"
				      : "text");
	/* The caller's memory is read here and written at the end, never
	 * under the lock (see the note at the top). */
	if (key_make(&k, text ? text : "", len))
		return sc__fail(SC_ENOMEM, "sc_symtab_intern: out of memory");
	sc__mutex_lock(&t->lock);
	rc = intern_locked(t, &k, &got);
	sc__mutex_unlock(&t->lock);
	key_fini(&k);
	if (rc == 0)
		*id = got;
	return rc;
}

int
sc_symtab_intern_cstr(struct sc_symtab *t, const char *text, uint64_t *id)
{
	if (!text)
		return sc__fail(SC_EINVAL,
				"sc_symtab_intern_cstr: text is NULL");
	return sc__errwrap(sc_symtab_intern(t, text, strlen(text), id),
			   "sc_symtab_intern_cstr");
}

int
sc_symtab_find(struct sc_symtab *t, const char *text, size_t len, uint64_t *id)
{
	struct sym_key k;
	uint64_t got = 0;
	bool found;
	size_t slot;

	if (!t || !id || (!text && len > 0))
		return sc__fail(SC_EINVAL,
				"sc_symtab_find: an argument is NULL");
	if (key_make(&k, text ? text : "", len))
		return sc__fail(SC_ENOMEM, "sc_symtab_find: out of memory");
	sc__mutex_lock(&t->lock);
	slot = probe(t, &k, &found);
	if (found)
		got = slot_id(t->slots[slot]);
	sc__mutex_unlock(&t->lock);
	key_fini(&k);
	if (!found)
		return sc__fail(SC_ENOENT, "sc_symtab_find: text not interned");
	*id = got;
	return 0;
}

static bool
live(const struct sc_symtab *t, uint64_t id)
{
	return id != SC_SYMBOL_NONE && id < t->nent && t->ent[id].refs > 0;
}

int
sc_symtab_lookup(struct sc_symtab *t, uint64_t id, const char **text,
		 size_t *len)
{
	const char *got = NULL;
	size_t got_len = 0;
	bool is_live;

	if (!t || !text)
		return sc__fail(SC_EINVAL, "sc_symtab_lookup: %s is NULL",
				!t ? "table" : "text");
	sc__mutex_lock(&t->lock);
	is_live = live(t, id);
	if (is_live) {
		got = t->ent[id].text;
		got_len = t->ent[id].len;
	}
	sc__mutex_unlock(&t->lock);
	if (!is_live)
		return sc__fail(SC_ENOENT,
				"sc_symtab_lookup: id %" PRIu64 " is not live",
				id);
	/* Written after the lock: they are the caller's memory. */
	*text = got;
	if (len)
		*len = got_len;
	return 0;
}

int
sc_symtab_retain(struct sc_symtab *t, uint64_t id)
{
	int rc = 0;

	if (!t)
		return sc__fail(SC_EINVAL, "sc_symtab_retain: table is NULL");
	sc__mutex_lock(&t->lock);
	if (!live(t, id))
		rc = sc__fail(SC_ENOENT,
			      "sc_symtab_retain: id %" PRIu64 " is not live",
			      id);
	else if (t->ent[id].refs == UINT64_MAX)
		rc = sc__fail(SC_EOVERFLOW,
			      "sc_symtab_retain: reference count of id %" PRIu64
			      " would wrap",
			      id);
	else
		t->ent[id].refs++;
	sc__mutex_unlock(&t->lock);
	return rc;
}

/* Remove a live id whose count reached zero. Caller holds the lock. */
static void
drop_locked(struct sc_symtab *t, uint64_t id)
{
	struct sym_entry *e = &t->ent[id];
	size_t mask = t->nslots - 1, i = e->hash & mask;

	while (t->slots[i] != slot_make(e->hash, id))
		i = (i + 1) & mask;
	t->slots[i] = SLOT_TOMB;
	t->used--;
	t->tombs++;
	t->text_bytes -= e->len + 1;
	free(e->text);
	*e = (struct sym_entry){0};
	t->free_ids[t->nfree++] = id; /* room reserved by reserve_id */
}

int
sc_symtab_release(struct sc_symtab *t, uint64_t id)
{
	int rc = 0;

	if (!t)
		return sc__fail(SC_EINVAL, "sc_symtab_release: table is NULL");
	sc__mutex_lock(&t->lock);
	if (!live(t, id))
		rc = sc__fail(SC_ENOENT,
			      "sc_symtab_release: id %" PRIu64 " is not live",
			      id);
	else if (--t->ent[id].refs == 0)
		drop_locked(t, id);
	sc__mutex_unlock(&t->lock);
	return rc;
}

size_t
sc_symtab_count(struct sc_symtab *t)
{
	size_t n;

	if (!t)
		return 0;
	sc__mutex_lock(&t->lock);
	n = t->used;
	sc__mutex_unlock(&t->lock);
	return n;
}

uint64_t
sc_symtab_refs(struct sc_symtab *t, uint64_t id)
{
	uint64_t r = 0;

	if (!t)
		return 0;
	sc__mutex_lock(&t->lock);
	if (live(t, id))
		r = t->ent[id].refs;
	sc__mutex_unlock(&t->lock);
	return r;
}

size_t
sc_symtab_bytes(struct sc_symtab *t)
{
	size_t n;

	if (!t)
		return 0;
	sc__mutex_lock(&t->lock);
	n = sizeof(*t) + t->nslots * sizeof(t->slots[0]) +
	    t->capent * sizeof(t->ent[0]) +
	    t->capfree * sizeof(t->free_ids[0]) + t->text_bytes;
	sc__mutex_unlock(&t->lock);
	return n;
}

/* --- holds by kept rows (symbol_int.h) ------------------------------------ */

void
sc__symcols_of(const struct sc_schema *s, struct sc__symcols *out)
{
	out->tab = s->symbols;
	out->mask = 0;
	out->flip = 0;
	for (uint32_t c = 0; c < s->ncols; c++)
		if (s->types[c] == SC_TYPE_SYMBOL)
			out->mask |= 1u << c;
	if (!out->tab)
		out->mask = 0;
}

void
sc__symcols_permute(const struct sc__symcols *in, const uint32_t *perm,
		    const uint64_t *flip_cols, uint32_t n,
		    struct sc__symcols *out)
{
	struct sc__symcols r = {in->tab, 0, 0};

	for (uint32_t i = 0; i < n; i++) {
		if (!(in->mask >> perm[i] & 1))
			continue;
		r.mask |= 1u << i;
		if ((in->flip >> perm[i] & 1) != (flip_cols && flip_cols[i]))
			r.flip |= 1u << i;
	}
	*out = r;
}

/* The id in word w of column c. */
static inline uint64_t
word_id(const struct sc__symcols *s, uint32_t c, uint64_t w)
{
	return s->flip >> c & 1 ? ~w : w;
}

int
sc__symtab_check(const struct sc__symcols *s, const struct sc_batch *b,
		 const char *fn)
{
	uint64_t bad = 0;
	uint32_t col = 0;
	bool ok = true;

	if (!sc__symcols_any(s) || !b)
		return 0;
	sc__mutex_lock(&s->tab->lock);
	for (size_t i = 0; ok && i < b->count; i++) {
		const uint64_t *row = sc_batch_row(b, i);

		for (uint32_t m = s->mask; ok && m; m &= m - 1) {
			col = (uint32_t)__builtin_ctz(m);
			bad = word_id(s, col, row[col]);
			ok = live(s->tab, bad);
		}
	}
	sc__mutex_unlock(&s->tab->lock);
	if (ok)
		return 0;
	return sc__fail(SC_ENOENT,
			"%s: column %u holds symbol %" PRIu64
			", which is not live (released before the rows "
			"were handed over?)",
			fn, col, bad);
}

/* Add d (+1 or -1) to the count of every symbol word of b. Lock held. */
static void
hold_locked(struct sc_symtab *t, const struct sc__symcols *s,
	    const struct sc_batch *b, int d)
{
	for (size_t i = 0; i < b->count; i++) {
		const uint64_t *row = sc_batch_row(b, i);

		for (uint32_t m = s->mask; m; m &= m - 1) {
			uint32_t c = (uint32_t)__builtin_ctz(m);
			uint64_t id = word_id(s, c, row[c]);

			SC_ASSERT(live(t, id));
			if (!live(t, id))
				continue;
			if (d > 0) {
				t->ent[id].refs +=
				    t->ent[id].refs != UINT64_MAX;
			} else if (--t->ent[id].refs == 0) {
				drop_locked(t, id);
			}
		}
	}
}

/* Drop one reference per symbol word of one row. Lock held. */
static void
unhold_row(struct sc_symtab *t, const struct sc__symcols *s,
	   const uint64_t *row)
{
	for (uint32_t m = s->mask; m; m &= m - 1) {
		uint32_t c = (uint32_t)__builtin_ctz(m);
		uint64_t id = word_id(s, c, row[c]);

		SC_ASSERT(live(t, id));
		if (live(t, id) && --t->ent[id].refs == 0)
			drop_locked(t, id);
	}
}

/* Take one reference per symbol word of one row. Lock held. */
static void
hold_row(struct sc_symtab *t, const struct sc__symcols *s, const uint64_t *row)
{
	for (uint32_t m = s->mask; m; m &= m - 1) {
		uint32_t c = (uint32_t)__builtin_ctz(m);
		uint64_t id = word_id(s, c, row[c]);

		SC_ASSERT(live(t, id));
		if (live(t, id))
			t->ent[id].refs += t->ent[id].refs != UINT64_MAX;
	}
}

void
sc__symtab_hold_changes(const struct sc__symcols *s,
			const struct sc_batch *delta,
			__int128 (*weight_now)(void *ctx, const uint64_t *row),
			void *ctx)
{
	if (!sc__symcols_any(s) || !delta || delta->count == 0)
		return;
	sc__mutex_lock(&s->tab->lock);
	for (size_t i = 0; i < delta->count; i++) {
		const uint64_t *row = sc_batch_row(delta, i);
		__int128 now = weight_now(ctx, row); /* may leave int64 */
		__int128 was = now - sc_batch_weight(delta, i);

		if (was == 0 && now != 0)
			hold_row(s->tab, s, row);
		else if (was != 0 && now == 0)
			unhold_row(s->tab, s, row);
	}
	sc__mutex_unlock(&s->tab->lock);
}

void
sc__symtab_unhold_slots(const struct sc__symcols *s, const uint64_t *slots,
			size_t n, uint32_t stride, uint32_t ncols)
{
	if (!sc__symcols_any(s) || !slots)
		return;
	sc__mutex_lock(&s->tab->lock);
	for (size_t i = 0; i < n; i++) {
		const uint64_t *rec = slots + i * stride;

		if (rec[ncols] != 0)
			unhold_row(s->tab, s, rec);
	}
	sc__mutex_unlock(&s->tab->lock);
}

void
sc__symtab_unhold_merge(const struct sc__symcols *s, const struct sc_batch *a,
			const struct sc_batch *b)
{
	size_t i = 0, j = 0;

	if (!sc__symcols_any(s) || !a || !b)
		return;
	sc__mutex_lock(&s->tab->lock);
	while (i < a->count && j < b->count) {
		const uint64_t *ra = sc_batch_row(a, i),
			       *rb = sc_batch_row(b, j);
		int c = sc_row_cmp(ra, rb, a->ncols);

		if (c != 0) {
			i += c < 0;
			j += c > 0;
			continue;
		}
		/* Two entries became one, or none when they cancelled. */
		unhold_row(s->tab, s, ra);
		if (sc_batch_weight(a, i) + sc_batch_weight(b, j) == 0)
			unhold_row(s->tab, s, ra);
		i++;
		j++;
	}
	sc__mutex_unlock(&s->tab->lock);
}

void
sc__symtab_unhold_pairs(const struct sc__symcols *s, const struct sc_batch *a,
			const size_t *at, size_t n)
{
	if (!sc__symcols_any(s) || n == 0)
		return;
	sc__mutex_lock(&s->tab->lock);
	for (size_t i = 0; i < n; i++) {
		size_t row = at[i] & ~SC__MERGE_EQ_CANCELLED;

		unhold_row(s->tab, s, sc_batch_row(a, row));
		if (at[i] & SC__MERGE_EQ_CANCELLED)
			unhold_row(s->tab, s, sc_batch_row(a, row));
	}
	sc__mutex_unlock(&s->tab->lock);
}

void
sc__symtab_hold(const struct sc__symcols *s, const struct sc_batch *b)
{
	if (!sc__symcols_any(s) || !b || b->count == 0)
		return;
	sc__mutex_lock(&s->tab->lock);
	hold_locked(s->tab, s, b, 1);
	sc__mutex_unlock(&s->tab->lock);
}

void
sc__symtab_unhold(const struct sc__symcols *s, const struct sc_batch *b)
{
	if (!sc__symcols_any(s) || !b || b->count == 0)
		return;
	sc__mutex_lock(&s->tab->lock);
	hold_locked(s->tab, s, b, -1);
	sc__mutex_unlock(&s->tab->lock);
}

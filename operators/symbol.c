/*
 * symbol.c - the interning table (see symbol.h for the design).
 *
 * Nothing under a shard's mutex reads or writes the caller's memory: the
 * text is hashed and copied into a key first, and results are written out
 * after the mutex is given back. A bad pointer from a unit's callback then
 * faults with no lock held, the fault becomes a panic of that unit, and
 * the table goes on serving everyone else. The mutexes are taken through
 * sc__mutex_lock, so that a fault inside the table itself (a bug of ours)
 * kills the process with a message rather than leaving a mutex held for
 * ever (operators/base_int.h).
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
 * Shards. A text's hash picks one of SHARDS shards (bits 28..31 of the
 * hash: the slot index uses the low bits, the slot tag the high 32), each
 * a table of its own behind its own mutex, so that threads interning
 * different texts mostly take different locks. An id is its shard's local
 * id shifted left by SHARD_BITS with the shard in the low bits: any call
 * given an id finds its shard without hashing. Local id 0 is never handed
 * out, so id 0 (shard 0, local 0) never names a text.
 *
 * A hash slot holds the top 32 bits of the text's hash above a 32-bit
 * local id, so a probe that meets another text usually tells from the slot
 * alone, without touching the entry or the text (each a cache miss in a
 * large table). Local ids stay below LOCAL_LIMIT, so ids stay below 2^32;
 * these two slot values are never a real slot.
 */
#define SHARD_BITS  4
#define SHARDS	    (1u << SHARD_BITS)
#define SHARD_MASK  (SHARDS - 1)
#define SHARD_SHIFT 28
#define SLOT_EMPTY  0u
#define SLOT_TOMB   UINT64_MAX
#define LOCAL_LIMIT (0xffffffffu >> SHARD_BITS)
#define SHARD_SLOTS 16 /* a shard's first capacities */

static inline uint64_t
slot_make(uint64_t h, uint64_t local)
{
	return (h & 0xffffffff00000000ULL) | local;
}

static inline uint64_t
slot_local(uint64_t slot)
{
	return slot & 0xffffffffu;
}

struct sym_entry {
	char *text;    /* len bytes and a NUL; NULL when the id is free */
	size_t len;    /* bytes of text, without the NUL */
	uint64_t hash; /* hash of the text, kept to rehash without reading it */
	uint64_t refs; /* references; 0 when free */
};

struct shard {
	pthread_mutex_t lock;  /* guards every field below */
	uint64_t *slots;       /* open addressing, nslots a power of two */
	size_t nslots;	       /* capacity of slots */
	size_t used;	       /* slots neither empty nor tombstones */
	size_t tombs;	       /* tombstone slots */
	struct sym_entry *ent; /* indexed by local id; ent[0] unused */
	size_t nent;	       /* entries allocated (local ids < nent exist) */
	size_t capent;	       /* capacity of ent */
	uint64_t *free_ids;    /* local ids released to zero, reused LIFO */
	size_t nfree, capfree; /* size and capacity of free_ids */
	size_t text_bytes;     /* bytes of live text */
	/* One cache line per shard's hot fields, so that two threads on two
	 * shards do not share one. */
	char pad[64];
};

struct sc_symtab {
	struct shard sh[SHARDS];
};

static inline struct shard *
shard_of_hash(struct sc_symtab *t, uint64_t h)
{
	return &t->sh[(h >> SHARD_SHIFT) & SHARD_MASK];
}

static inline uint64_t
id_make(const struct sc_symtab *t, const struct shard *s, uint64_t local)
{
	return local << SHARD_BITS | (uint64_t)(s - t->sh);
}

/* The entry of a live id, or NULL. Caller holds its shard's lock. */
static inline struct sym_entry *
live_entry(struct sc_symtab *t, uint64_t id)
{
	struct shard *s = &t->sh[id & SHARD_MASK];
	uint64_t local = id >> SHARD_BITS;

	/* Local 0 (and so id 0) is never live: ent[0].refs stays 0. */
	if (local >= s->nent || s->ent[local].refs == 0)
		return NULL;
	return &s->ent[local];
}

/* Every shard's lock, in shard order (the one order any two callers
 * taking several use, so none waits on another in a cycle). */
static void
lock_all(struct sc_symtab *t)
{
	for (unsigned i = 0; i < SHARDS; i++)
		sc__mutex_lock(&t->sh[i].lock);
}

static void
unlock_all(struct sc_symtab *t)
{
	for (unsigned i = SHARDS; i-- > 0;)
		sc__mutex_unlock(&t->sh[i].lock);
}

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
	uint64_t hash;		 /* hash_padded of the text */
	char buf[KEY_STACK_MAX]; /* the copy when len < KEY_STACK_MAX */
};

static inline uint64_t
hash_word(uint64_t h, uint64_t w)
{
	h = (h ^ w) * 0x9e3779b97f4a7c15ULL;
	return h ^ (h >> 29);
}

/*
 * The text's hash: eight bytes at a time (a multiply and a shift per word,
 * well under one instruction per byte, where a byte-wise FNV-1a costs
 * four), the tail as one zero-padded word, the length mixed in so that
 * texts that differ only by trailing zero bytes differ, and a final
 * avalanche (murmur3's) so that the low bits that index the slots and the
 * bits that pick the shard depend on every byte. It reads the key's copy,
 * whose last word the copy zeroed first, so the tail is a whole word too.
 */
static uint64_t
hash_padded(const char *p, size_t n)
{
	uint64_t h = 0x243f6a8885a308d3ULL ^ n, w;

	for (size_t i = 0; i < n; i += 8) {
		memcpy(&w, p + i, 8);
		h = hash_word(h, w);
	}
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ULL;
	return h ^ (h >> 33);
}

/* Copy n bytes of text to dst, whose room is rounded up to a whole word,
 * the last word zeroed first (for hash_padded). */
static void
copy_padded(char *dst, const char *text, size_t n)
{
	if (n) {
		memcpy(dst + ((n - 1) & ~(size_t)7), &(uint64_t){0}, 8);
		memcpy(dst, text, n);
	}
}

/*
 * Copy and hash the caller's text, before any lock is taken: the one pass
 * that reads the caller's memory (a bad pointer faults here, before
 * anything is allocated). The text is copied, into the key when short or
 * into the heap copy a new symbol keeps when long, its last word zeroed
 * first, and hashed a whole word at a time from the copy (in cache, no
 * byte loop for the tail). Returns 0, or SC_ENOMEM (a long text and no
 * memory for its copy; no message recorded). key_fini frees what key_make
 * made.
 */
static int
key_make(struct sym_key *k, const char *text, size_t len)
{
	char *copy = k->buf;

	k->len = len;
	k->heap = NULL;
	if (len >= sizeof(k->buf)) {
		/* Touch one byte of every page of the text before the copy
		 * is allocated, so that a bad pointer faults with nothing
		 * allocated to lose. */
		for (size_t off = 0; off < len; off += 4096)
			(void)*(const volatile char *)(text + off);
		(void)*(const volatile char *)(text + len - 1);
		k->heap = malloc((len + 8) & ~(size_t)7);
		if (!k->heap)
			return SC_ENOMEM;
		copy = k->heap;
	}
	copy_padded(copy, text, len);
	copy[len] = '\0';
	k->text = copy;
	k->hash = hash_padded(copy, len);
	return 0;
}

static void
key_fini(struct sym_key *k)
{
	if (k->heap) /* a short text's key has none: skip the call */
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

static int
shard_init(struct shard *s)
{
	s->nslots = SHARD_SLOTS;
	s->slots = calloc(s->nslots, sizeof(s->slots[0]));
	s->nent = 1; /* local id 0 is never handed out */
	s->capent = SHARD_SLOTS;
	s->ent = calloc(s->capent, sizeof(s->ent[0]));
	if (!s->slots || !s->ent)
		goto undo_alloc;
	if (pthread_mutex_init(&s->lock, NULL) != 0)
		goto undo_alloc;
	return 0;

undo_alloc:
	free(s->slots);
	free(s->ent);
	return SC_ENOMEM;
}

static void
shard_fini(struct shard *s)
{
	for (size_t i = 1; i < s->nent; i++)
		free(s->ent[i].text);
	free(s->ent);
	free(s->slots);
	free(s->free_ids);
	pthread_mutex_destroy(&s->lock);
}

int
sc_symtab_create(struct sc_symtab **out)
{
	struct sc_symtab *t;
	unsigned made = 0;

	if (!out)
		return sc__fail(SC_EINVAL, "sc_symtab_create: out is NULL");
	t = calloc(1, sizeof(*t));
	if (!t)
		goto fail;
	for (; made < SHARDS; made++)
		if (shard_init(&t->sh[made]))
			goto undo_shards;
	*out = t;
	return 0;

undo_shards:
	while (made-- > 0)
		shard_fini(&t->sh[made]);
	free(t);
fail:
	return sc__fail(SC_ENOMEM, "sc_symtab_create: out of memory");
}

void
sc_symtab_destroy(struct sc_symtab *t)
{
	if (!t)
		return;
	for (unsigned i = 0; i < SHARDS; i++)
		shard_fini(&t->sh[i]);
	free(t);
}

/* The slot holding `text`, or the empty slot where it would go (*found
 * tells which). Never returns a tombstone when found is false, so an insert
 * may reuse the first tombstone on the way. Caller holds the lock. */
static size_t
probe(const struct shard *s, const struct sym_key *k, bool *found)
{
	uint64_t h = k->hash;
	size_t mask = s->nslots - 1, i = h & mask, tomb = SIZE_MAX;

	for (;; i = (i + 1) & mask) {
		uint64_t sl = s->slots[i], local = slot_local(sl);

		if (sl == SLOT_EMPTY) {
			*found = false;
			return tomb != SIZE_MAX ? tomb : i;
		}
		if (sl == SLOT_TOMB) {
			if (tomb == SIZE_MAX)
				tomb = i;
			continue;
		}
		if ((sl ^ h) >> 32 == 0 && s->ent[local].hash == h &&
		    s->ent[local].len == k->len &&
		    memcmp(s->ent[local].text, k->text, k->len) == 0) {
			*found = true;
			return i;
		}
	}
}

/* Rebuild the slots with room for one more live id, dropping tombstones.
 * Caller holds the lock. Unchanged on SC_ENOMEM. */
static int
grow_slots(struct shard *s)
{
	size_t n = s->nslots, mask;
	uint64_t *sl;

	if ((s->used + 1) * 2 >= n)
		n *= 2;
	sl = calloc(n, sizeof(*sl));
	if (!sl)
		return SC_ENOMEM;
	mask = n - 1;
	for (size_t i = 0; i < s->nslots; i++) {
		uint64_t v = s->slots[i];
		size_t j;

		if (v == SLOT_EMPTY || v == SLOT_TOMB)
			continue;
		for (j = s->ent[slot_local(v)].hash & mask; sl[j] != SLOT_EMPTY;
		     j = (j + 1) & mask)
			;
		sl[j] = v;
	}
	free(s->slots);
	s->slots = sl;
	s->nslots = n;
	s->tombs = 0;
	return 0;
}

/* Make sure one more id can be allocated and one more id freed later
 * without any allocation. Caller holds the lock. */
static int
reserve_id(struct shard *s)
{
	if (s->nfree == 0 && s->nent == s->capent) {
		size_t cap = s->capent * 2;
		struct sym_entry *e = realloc(s->ent, cap * sizeof(*e));

		if (!e)
			return SC_ENOMEM;
		memset(e + s->capent, 0, (cap - s->capent) * sizeof(*e));
		s->ent = e;
		s->capent = cap;
	}
	/* Room in free_ids for every id that exists, so release never
	 * allocates (release cannot fail for want of memory). */
	if (s->capfree < s->nent + 1) {
		size_t cap = s->capent + 1;
		uint64_t *f = realloc(s->free_ids, cap * sizeof(*f));

		if (!f)
			return SC_ENOMEM;
		s->free_ids = f;
		s->capfree = cap;
	}
	return 0;
}

/* Intern the key in its shard; *id is the table's own variable, not the
 * caller's. Caller holds the shard's lock. */
static int
intern_locked(struct sc_symtab *t, struct shard *s, struct sym_key *k,
	      uint64_t *id)
{
	uint64_t h = k->hash, local;
	bool found;
	size_t slot;
	char *copy;

	slot = probe(s, k, &found);
	if (found) {
		uint64_t l = slot_local(s->slots[slot]);
		struct sym_entry *e = &s->ent[l];

		if (e->refs == UINT64_MAX)
			return sc__fail(SC_EOVERFLOW,
					"sc_symtab_intern: reference count of "
					"id %" PRIu64 " would wrap",
					id_make(t, s, l));
		e->refs++;
		*id = id_make(t, s, l);
		return 0;
	}
	if ((s->used + s->tombs + 1) * 4 >= s->nslots * 3) {
		if (grow_slots(s))
			goto nomem;
		slot = probe(s, k, &found);
	}
	if (s->nfree == 0 && s->nent >= LOCAL_LIMIT)
		return sc__fail(SC_EOVERFLOW,
				"sc_symtab_intern: %zu live symbols in a "
				"shard, the most it holds",
				s->used);
	if (reserve_id(s))
		goto nomem;
	copy = key_take_text(k);
	if (!copy)
		goto nomem;
	local = s->nfree ? s->free_ids[--s->nfree] : s->nent++;
	s->ent[local] = (struct sym_entry){
	    .text = copy, .len = k->len, .hash = h, .refs = 1};
	if (s->slots[slot] == SLOT_TOMB)
		s->tombs--;
	s->slots[slot] = slot_make(h, local);
	s->used++;
	s->text_bytes += k->len + 1;
	*id = id_make(t, s, local);
	return 0;

nomem:
	return sc__fail(SC_ENOMEM, "sc_symtab_intern: out of memory");
}

int
sc_symtab_intern(struct sc_symtab *t, const char *text, size_t len,
		 uint64_t *id)
{
	struct sym_key k;
	struct shard *s;
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
	s = shard_of_hash(t, k.hash);
	sc__mutex_lock(&s->lock);
	rc = intern_locked(t, s, &k, &got);
	sc__mutex_unlock(&s->lock);
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
	struct shard *s;
	uint64_t got = 0;
	bool found;
	size_t slot;

	if (!t || !id || (!text && len > 0))
		return sc__fail(SC_EINVAL,
				"sc_symtab_find: an argument is NULL");
	if (key_make(&k, text ? text : "", len))
		return sc__fail(SC_ENOMEM, "sc_symtab_find: out of memory");
	s = shard_of_hash(t, k.hash);
	sc__mutex_lock(&s->lock);
	slot = probe(s, &k, &found);
	if (found)
		got = id_make(t, s, slot_local(s->slots[slot]));
	sc__mutex_unlock(&s->lock);
	key_fini(&k);
	if (!found)
		return sc__fail(SC_ENOENT, "sc_symtab_find: text not interned");
	*id = got;
	return 0;
}

/* The shard of an id (any id: a dead or foreign one too). */
static inline struct shard *
shard_of_id(struct sc_symtab *t, uint64_t id)
{
	return &t->sh[id & SHARD_MASK];
}

int
sc_symtab_lookup(struct sc_symtab *t, uint64_t id, const char **text,
		 size_t *len)
{
	const char *got = NULL;
	size_t got_len = 0;
	struct sym_entry *e;
	struct shard *s;

	if (!t || !text)
		return sc__fail(SC_EINVAL, "sc_symtab_lookup: %s is NULL",
				!t ? "table" : "text");
	s = shard_of_id(t, id);
	sc__mutex_lock(&s->lock);
	e = live_entry(t, id);
	if (e) {
		got = e->text;
		got_len = e->len;
	}
	sc__mutex_unlock(&s->lock);
	if (!e)
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
	struct sym_entry *e;
	struct shard *s;
	int rc = 0;

	if (!t)
		return sc__fail(SC_EINVAL, "sc_symtab_retain: table is NULL");
	s = shard_of_id(t, id);
	sc__mutex_lock(&s->lock);
	e = live_entry(t, id);
	if (!e)
		rc = sc__fail(SC_ENOENT,
			      "sc_symtab_retain: id %" PRIu64 " is not live",
			      id);
	else if (e->refs == UINT64_MAX)
		rc = sc__fail(SC_EOVERFLOW,
			      "sc_symtab_retain: reference count of id %" PRIu64
			      " would wrap",
			      id);
	else
		e->refs++;
	sc__mutex_unlock(&s->lock);
	return rc;
}

/* Remove a live id whose count reached zero. Caller holds its shard's
 * lock. */
static void
drop_locked(struct sc_symtab *t, uint64_t id)
{
	struct shard *s = shard_of_id(t, id);
	uint64_t local = id >> SHARD_BITS;
	struct sym_entry *e = &s->ent[local];
	size_t mask = s->nslots - 1, i = e->hash & mask;

	while (s->slots[i] != slot_make(e->hash, local))
		i = (i + 1) & mask;
	s->slots[i] = SLOT_TOMB;
	s->used--;
	s->tombs++;
	s->text_bytes -= e->len + 1;
	free(e->text);
	*e = (struct sym_entry){0};
	s->free_ids[s->nfree++] = local; /* room reserved by reserve_id */
}

/* Drop one reference of a live id. Caller holds its shard's lock. */
static inline void
unref_locked(struct sc_symtab *t, struct sym_entry *e, uint64_t id)
{
	if (--e->refs == 0)
		drop_locked(t, id);
}

int
sc_symtab_release(struct sc_symtab *t, uint64_t id)
{
	struct sym_entry *e;
	struct shard *s;
	int rc = 0;

	if (!t)
		return sc__fail(SC_EINVAL, "sc_symtab_release: table is NULL");
	s = shard_of_id(t, id);
	sc__mutex_lock(&s->lock);
	e = live_entry(t, id);
	if (!e)
		rc = sc__fail(SC_ENOENT,
			      "sc_symtab_release: id %" PRIu64 " is not live",
			      id);
	else
		unref_locked(t, e, id);
	sc__mutex_unlock(&s->lock);
	return rc;
}

int
sc_symtab_release_ids(struct sc_symtab *t, const uint64_t *ids, size_t n)
{
	uint64_t bad = 0;
	size_t nbad = 0;

	if (!t || (!ids && n > 0))
		return sc__fail(SC_EINVAL, "sc_symtab_release_ids: %s is NULL",
				!t ? "table" : "ids");
	if (n == 0)
		return 0;
	/* One pass under every lock: cheaper than a lock per id from a
	 * generator's chunk of thousands. */
	lock_all(t);
	for (size_t i = 0; i < n; i++) {
		struct sym_entry *e = live_entry(t, ids[i]);

		if (!e) {
			bad = nbad++ ? bad : ids[i];
			continue;
		}
		unref_locked(t, e, ids[i]);
	}
	unlock_all(t);
	if (nbad)
		return sc__fail(SC_ENOENT,
				"sc_symtab_release_ids: %zu ids not live (the "
				"first %" PRIu64 "); the others released",
				nbad, bad);
	return 0;
}

size_t
sc_symtab_count(struct sc_symtab *t)
{
	size_t n = 0;

	if (!t)
		return 0;
	for (unsigned i = 0; i < SHARDS; i++) {
		sc__mutex_lock(&t->sh[i].lock);
		n += t->sh[i].used;
		sc__mutex_unlock(&t->sh[i].lock);
	}
	return n;
}

uint64_t
sc_symtab_refs(struct sc_symtab *t, uint64_t id)
{
	struct sym_entry *e;
	struct shard *s;
	uint64_t r = 0;

	if (!t)
		return 0;
	s = shard_of_id(t, id);
	sc__mutex_lock(&s->lock);
	e = live_entry(t, id);
	if (e)
		r = e->refs;
	sc__mutex_unlock(&s->lock);
	return r;
}

size_t
sc_symtab_bytes(struct sc_symtab *t)
{
	size_t n;

	if (!t)
		return 0;
	n = sizeof(*t);
	for (unsigned i = 0; i < SHARDS; i++) {
		struct shard *s = &t->sh[i];

		sc__mutex_lock(&s->lock);
		n += s->nslots * sizeof(s->slots[0]) +
		     s->capent * sizeof(s->ent[0]) +
		     s->capfree * sizeof(s->free_ids[0]) + s->text_bytes;
		sc__mutex_unlock(&s->lock);
	}
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

/*
 * A pass over rows under every lock (a hold, an unhold, a check) sees the
 * table through a view taken once: each shard's entry array and size (no
 * pass allocates an id, so neither moves while the locks are held) and the
 * symbol columns as a list with the mask that undoes a complemented one.
 * A symbol word then costs a shard pick, a bound check and the count.
 */
struct symview {
	struct sym_entry *ent[SHARDS];
	size_t nent[SHARDS];
	uint32_t ncols;
	uint32_t col[32];
	uint64_t flip[32]; /* ~0 for a column stored as ~id */
};

/* Every lock held. */
static void
view_make(struct sc_symtab *t, const struct sc__symcols *s, struct symview *v)
{
	for (unsigned i = 0; i < SHARDS; i++) {
		v->ent[i] = t->sh[i].ent;
		v->nent[i] = t->sh[i].nent;
	}
	v->ncols = 0;
	for (uint32_t m = s->mask; m; m &= m - 1) {
		uint32_t c = (uint32_t)__builtin_ctz(m);

		v->col[v->ncols] = c;
		v->flip[v->ncols++] = s->flip >> c & 1 ? ~(uint64_t)0 : 0;
	}
}

/* The entry of a live id, or NULL: live_entry through a view. */
static inline struct sym_entry *
view_entry(const struct symview *v, uint64_t id)
{
	unsigned sh = (unsigned)(id & SHARD_MASK);
	uint64_t local = id >> SHARD_BITS;
	struct sym_entry *e;

	if (local >= v->nent[sh])
		return NULL;
	e = v->ent[sh] + local;
	return e->refs ? e : NULL;
}

/* The id in the view's j-th symbol column of row. */
static inline uint64_t
view_id(const struct symview *v, uint32_t j, const uint64_t *row)
{
	return row[v->col[j]] ^ v->flip[j];
}

int
sc__symtab_check(const struct sc__symcols *s, const struct sc_batch *b,
		 const char *fn)
{
	struct symview v;
	uint64_t bad = 0;
	uint32_t col = 0;
	bool ok = true;

	if (!sc__symcols_any(s) || !b)
		return 0;
	lock_all(s->tab);
	view_make(s->tab, s, &v);
	for (size_t i = 0; ok && i < b->count; i++) {
		const uint64_t *row = sc_batch_row(b, i);

		for (uint32_t j = 0; j < v.ncols; j++)
			if (!view_entry(&v, view_id(&v, j, row))) {
				col = v.col[j];
				bad = view_id(&v, j, row);
				ok = false;
				break;
			}
	}
	unlock_all(s->tab);
	if (ok)
		return 0;
	return sc__fail(SC_ENOENT,
			"%s: column %u holds symbol %" PRIu64
			", which is not live (released before the rows "
			"were handed over?)",
			fn, col, bad);
}

/* Drop one reference per symbol word of one row. Every lock held. */
static inline void
unhold_row(struct sc_symtab *t, const struct symview *v, const uint64_t *row)
{
	for (uint32_t j = 0; j < v->ncols; j++) {
		uint64_t id = view_id(v, j, row);
		struct sym_entry *e = view_entry(v, id);

		SC_ASSERT(e);
		if (e)
			unref_locked(t, e, id);
	}
}

/* Take one reference per symbol word of one row. Every lock held. */
static inline void
hold_row(const struct symview *v, const uint64_t *row)
{
	for (uint32_t j = 0; j < v->ncols; j++) {
		struct sym_entry *e = view_entry(v, view_id(v, j, row));

		SC_ASSERT(e);
		if (e)
			e->refs += e->refs != UINT64_MAX;
	}
}

void
sc__symtab_hold_changes(const struct sc__symcols *s,
			const struct sc_batch *delta,
			__int128 (*weight_now)(void *ctx, const uint64_t *row),
			void *ctx)
{
	struct symview v;

	if (!sc__symcols_any(s) || !delta || delta->count == 0)
		return;
	lock_all(s->tab);
	view_make(s->tab, s, &v);
	for (size_t i = 0; i < delta->count; i++) {
		const uint64_t *row = sc_batch_row(delta, i);
		__int128 now = weight_now(ctx, row); /* may leave int64 */
		__int128 was = now - sc_batch_weight(delta, i);

		if (was == 0 && now != 0)
			hold_row(&v, row);
		else if (was != 0 && now == 0)
			unhold_row(s->tab, &v, row);
	}
	unlock_all(s->tab);
}

void
sc__symtab_unhold_slots(const struct sc__symcols *s, const uint64_t *slots,
			size_t n, uint32_t stride, uint32_t ncols)
{
	struct symview v;

	if (!sc__symcols_any(s) || !slots)
		return;
	lock_all(s->tab);
	view_make(s->tab, s, &v);
	for (size_t i = 0; i < n; i++) {
		const uint64_t *rec = slots + i * stride;

		if (rec[ncols] != 0)
			unhold_row(s->tab, &v, rec);
	}
	unlock_all(s->tab);
}

void
sc__symtab_unhold_merge(const struct sc__symcols *s, const struct sc_batch *a,
			const struct sc_batch *b)
{
	size_t i = 0, j = 0;
	struct symview v;

	if (!sc__symcols_any(s) || !a || !b)
		return;
	lock_all(s->tab);
	view_make(s->tab, s, &v);
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
		unhold_row(s->tab, &v, ra);
		if (sc_batch_weight(a, i) + sc_batch_weight(b, j) == 0)
			unhold_row(s->tab, &v, ra);
		i++;
		j++;
	}
	unlock_all(s->tab);
}

void
sc__symtab_unhold_pairs(const struct sc__symcols *s, const struct sc_batch *a,
			const size_t *at, size_t n)
{
	struct symview v;

	if (!sc__symcols_any(s) || n == 0)
		return;
	lock_all(s->tab);
	view_make(s->tab, s, &v);
	for (size_t i = 0; i < n; i++) {
		size_t row = at[i] & ~SC__MERGE_EQ_CANCELLED;

		unhold_row(s->tab, &v, sc_batch_row(a, row));
		if (at[i] & SC__MERGE_EQ_CANCELLED)
			unhold_row(s->tab, &v, sc_batch_row(a, row));
	}
	unlock_all(s->tab);
}

void
sc__symtab_hold(const struct sc__symcols *s, const struct sc_batch *b)
{
	struct symview v;

	if (!sc__symcols_any(s) || !b || b->count == 0)
		return;

	lock_all(s->tab);
	view_make(s->tab, s, &v);
	for (size_t i = 0; i < b->count; i++)
		hold_row(&v, sc_batch_row(b, i));
	unlock_all(s->tab);
}

void
sc__symtab_unhold(const struct sc__symcols *s, const struct sc_batch *b)
{
	struct symview v;

	if (!sc__symcols_any(s) || !b || b->count == 0)
		return;

	lock_all(s->tab);
	view_make(s->tab, s, &v);
	for (size_t i = 0; i < b->count; i++)
		unhold_row(s->tab, &v, sc_batch_row(b, i));
	unlock_all(s->tab);
}

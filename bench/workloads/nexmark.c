/*
 * nexmark.c - the Nexmark event generator (see nexmark.h).
 *
 * The id arithmetic follows the standard generator's
 * (lastBase0PersonId, lastBase0AuctionId, nextBase0PersonId,
 * nextBase0AuctionId, nextAuctionLengthMs, nextPrice, nextExtra), and the
 * texts its StringsGenerator and its bids' channel cache, written afresh
 * from their published behaviour.
 *
 * Texts are written by hand into a buffer on the stack (no formatting
 * call: the generator is on the hot path of every run it feeds), four
 * characters from each 64-bit draw, and interned once each; the table
 * hashes them once (symbol.h).
 */
#include "bench/workloads/nexmark.h"

#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "operators/base.h"

#define NX_BLOCK	  50 /* events per block: 1 person, 3 auctions, 46 bids */
#define NX_PERSONS	  1
#define NX_AUCTIONS	  3
#define NX_ID_LEAD	  10  /* ids past the newest a draw may name */
#define NX_HOT_EVERY	  100 /* hot ids are multiples of this (base 0) */
#define NX_MIN_STRING	  3   /* the shortest random text */
#define NX_MAX_POOL	  65536
#define NX_MAX_AVG	  65536 /* the largest average size accepted */
#define NX_TEXT_LETTERS	  0	/* pool classes */
#define NX_TEXT_EXACT	  1
#define NX_TEXT_CARD	  2
#define NX_TEXT_EMAIL	  3
#define NX_CLASSES	  4
#define NX_CHANNELS	  10000 /* the standard's CHANNELS_NUMBER */
#define NX_HOT_CHANNEL	  2	/* 1 - 1/2 of the bids on a hot channel */
#define NX_URL_PART	  5	/* a url's path parts: nextString(5) */
#define NX_MAX_DISORDER	  1000000000000ull /* ms: about 31 years */
#define NX_DISORDER_SALT  0x646973617272ULL
#define NX_CHANNEL_SALT	  0x6368616e6e656cULL
#define NX_HOT_URL_SALT	  0x686f7475726cULL
#define NX_URL_HEAD	  "https://www.nexmark.com/"
#define NX_URL_TAIL	  "item.htm?query=1"
#define NX_URL_CHANNEL_ID "&channel_id="
#define NX_CHANNEL_PREFIX "channel-"
#define NX_STACK_TEXT	  512 /* texts up to this long are made on the stack */

const char *const sc_nexmark_states[6] = {"AZ", "CA", "ID", "OR", "WA", "WY"};
const char *const sc_nexmark_cities[10] = {
    "Phoenix", "Los Angeles", "San Francisco", "Boise", "Portland",
    "Bend",    "Redmond",     "Seattle",       "Kent",	"Cheyenne"};
const char *const sc_nexmark_channels[4] = {"Google", "Facebook", "Baidu",
					    "Apple"};
static const char *const first_names[11] = {"Peter", "Paul",   "Luke",	"John",
					    "Saul",  "Vicky",  "Kate",	"Julie",
					    "Sarah", "Deiter", "Walter"};
static const char *const last_names[9] = {"Shultz", "Abrams",  "Spencer",
					  "White",  "Bartels", "Walton",
					  "Smith",  "Jones",   "Noris"};

static const char *const person_cols[SC_NXP_NCOLS] = {
    "id",   "name",  "email_address", "credit_card",
    "city", "state", "date_time",     "extra"};
static const char *const auction_cols[SC_NXA_NCOLS] = {
    "id",	 "item_name", "description", "initial_bid", "reserve",
    "date_time", "expires",   "seller",	     "category",    "extra"};
static const char *const bid_cols[SC_NXB_NCOLS] = {
    "auction", "bidder", "price", "channel", "url", "date_time", "extra"};

/* Ids the generator holds a reference on. */
struct held {
	uint64_t *ids;
	size_t n, cap;
};

struct sc_nexmark {
	struct sc_nexmark_opts o;
	struct sc_symtab *symbols; /* borrowed */
	uint64_t n;		   /* the next event's number */
	uint64_t seed_mix;	   /* the seed, mixed once */
	uint64_t names[11 * 9];	   /* interned "First Last", 0 until used */
	uint64_t states[6], cities[10], channels[4], empty;
	uint64_t hot_urls[4]; /* the hot channels' urls */
	uint64_t *chan;	      /* NX_CHANNELS pairs (name, url), 0 until used */
	uint32_t pool_len;    /* lengths 0 .. pool_len - 1 pooled */
	uint64_t *pool[NX_CLASSES]; /* class: pool_len * P ids (0: not yet) */
	struct held fresh; /* fresh texts since sc_nexmark_release_texts */
	struct sc_batch_builder b[SC_NEXMARK_KINDS];
};

void
sc_nexmark_opts_default(struct sc_nexmark_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->seed = 1;
	o->base_time_ms = 1436918400000LL;
	o->gap_us = 100;
	o->first_person_id = 1000;
	o->first_auction_id = 1000;
	o->active_people = 1000;
	o->in_flight_auctions = 100;
	o->hot_auction_ratio = 2;
	o->hot_bidder_ratio = 4;
	o->hot_seller_ratio = 4;
	o->avg_person_bytes = 200;
	o->avg_auction_bytes = 500;
	o->avg_bid_bytes = 100;
	o->string_pool = 0;
}

/* --- small pieces ------------------------------------------------------- */

/* A uniform draw in [0, n), n >= 1 (the modulo's bias is below 2^-40 for
 * the ranges used here). */
static uint64_t
nx_below(uint64_t *rng, uint64_t n)
{
	return sc_splitmix_next(rng) % n;
}

/* A uniform double in [0, 1). */
static double
nx_unit(uint64_t *rng)
{
	return (double)(sc_splitmix_next(rng) >> 11) * 0x1p-53;
}

static int64_t
nx_time(const struct sc_nexmark *nx, uint64_t n)
{
	uint64_t g = nx->o.gap_us;

	/* floor(n * g / 1000) without overflow for any n. */
	return nx->o.base_time_ms +
	       (int64_t)((n / 1000) * g + (n % 1000) * g / 1000);
}

/* Event n's date_time: its place's time less its delay, drawn from a
 * stream of (seed, n) apart from the event's own, so that a disorder of 0
 * draws nothing and changes nothing. */
static int64_t
nx_event_time(const struct sc_nexmark *nx, uint64_t n)
{
	uint64_t rng;

	if (!nx->o.disorder_ms)
		return nx_time(nx, n);
	rng = nx->seed_mix ^ sc_splitmix_mix(n ^ NX_DISORDER_SALT);
	return nx_time(nx, n) - (int64_t)nx_below(&rng, nx->o.disorder_ms + 1);
}

/* The newest person (base 0) at event n. */
static int64_t
nx_last_person(uint64_t n)
{
	return (int64_t)(n / NX_BLOCK);
}

/* The newest auction (base 0) at event n: -1 before the first. */
static int64_t
nx_last_auction(uint64_t n)
{
	int64_t epoch = (int64_t)(n / NX_BLOCK);
	int64_t off = (int64_t)(n % NX_BLOCK);

	if (off < NX_PERSONS) {
		epoch--;
		off = NX_AUCTIONS - 1;
	} else if (off >= NX_PERSONS + NX_AUCTIONS) {
		off = NX_AUCTIONS - 1;
	} else {
		off -= NX_PERSONS;
	}
	return epoch * NX_AUCTIONS + off;
}

/* A person (base 0) among the active ones and the lead past the newest. */
static int64_t
nx_next_person(const struct sc_nexmark *nx, uint64_t n, uint64_t *rng)
{
	int64_t people = nx_last_person(n) + 1;
	int64_t active = people < (int64_t)nx->o.active_people
			     ? people
			     : (int64_t)nx->o.active_people;

	return people - active +
	       (int64_t)nx_below(rng, (uint64_t)active + NX_ID_LEAD);
}

/* An auction (base 0) among those in flight and the lead. */
static int64_t
nx_next_auction(const struct sc_nexmark *nx, uint64_t n, uint64_t *rng)
{
	int64_t last = nx_last_auction(n);
	int64_t lo = last - (int64_t)nx->o.in_flight_auctions;

	lo = lo > 0 ? lo : 0;
	return lo +
	       (int64_t)nx_below(rng, (uint64_t)(last - lo) + 1 + NX_ID_LEAD);
}

/* The standard's prices: 10^(6u) dollars in cents, as 2^(6u log2 10)
 * (exp2 costs a fifth of pow's general case), rounded half up: the value
 * is 100 .. 10^8, where adding a half and truncating is llround. */
static int64_t
nx_price(uint64_t *rng)
{
	return (int64_t)(exp2(nx_unit(rng) * 19.931568569324174) * 100.0 + 0.5);
}

/* Keep one reference on id (until released). */
static int
nx_hold(struct held *h, uint64_t id)
{
	if (h->n == h->cap) {
		size_t cap = h->cap ? 2 * h->cap : 1024;
		uint64_t *ids = realloc(h->ids, cap * sizeof(*ids));

		if (!ids)
			return sc_errorf(SC_ENOMEM,
					 "sc_nexmark: out of memory holding "
					 "%zu symbols",
					 h->n);
		h->ids = ids;
		h->cap = cap;
	}
	h->ids[h->n++] = id;
	return 0;
}

/* The interned id of a text into *slot (once: later calls reuse it). */
static int
nx_intern_once(struct sc_nexmark *nx, uint64_t *slot, const char *text,
	       size_t len)
{
	if (*slot)
		return 0;
	return sc_symtab_intern(nx->symbols, text, len, slot);
}

/* --- writing texts ------------------------------------------------------- */

static char *
nx_put(char *p, const char *s, size_t n)
{
	memcpy(p, s, n);
	return p + n;
}

/* The decimal digits of v at p; returns the end. */
static char *
nx_put_u64(char *p, uint64_t v)
{
	char tmp[20];
	size_t n = 0;

	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (n)
		*p++ = tmp[--n];
	return p;
}

/*
 * Characters by the word. A 64-bit draw is a uniform fraction f of 1; its
 * base-n digits come one multiply each: the integer part of f x n is the
 * digit, the fractional part the rest (no division, no per-character
 * draw). A draw gives only as many digits as leave at least 2^20 of its
 * values behind every combination of them (n^k <= 2^44), so any run of
 * characters is within 2^-20 of uniform: 8 letters (base 26), 5
 * nextString characters (base 338 = 13 x 26: a space one time in 13,
 * else a letter), 8 card digits.
 */
static inline unsigned
nx_digit(uint64_t *f, unsigned n)
{
	unsigned __int128 m = (unsigned __int128)*f * n;

	*f = (uint64_t)m;
	return (unsigned)(m >> 64);
}

/* A nextString character by its base-338 digit: 26 spaces, then the
 * alphabet 12 times. */
#define NX_AZ "abcdefghijklmnopqrstuvwxyz"
static const char nx_text338[339] = "                          " NX_AZ NX_AZ
    NX_AZ NX_AZ NX_AZ NX_AZ NX_AZ NX_AZ NX_AZ NX_AZ NX_AZ NX_AZ;
#undef NX_AZ

/*
 * Two letters by one digit: a base-676 digit of f is the pair of its next
 * two base-26 digits (f x 676 = 26 (f x 26): the high words agree, and so
 * does the rest), so an exact text's letters come a pair per multiply and
 * table load, the same letters as one at a time. Made once per process.
 */
static uint16_t nx_pair26[676];
static pthread_once_t nx_pair26_once = PTHREAD_ONCE_INIT;

static void
nx_pair26_make(void)
{
	for (unsigned d = 0; d < 676; d++) /* little-endian: first letter low */
		nx_pair26[d] = (uint16_t)(('a' + d / 26) | ('a' + d % 26) << 8);
}

/*
 * len random characters of class c at buf, from *rng. A nextString's
 * characters are a space one time in 13 and else a letter; an exact
 * text's letters only (the bulk of the bytes: every extra); a card's
 * groups of four digits with a space between.
 */
static void
nx_fill(int c, size_t len, uint64_t *rng, char *buf)
{
	size_t i = 0;
	uint64_t f;

	if (c == NX_TEXT_EXACT) {
		for (; i + 8 <= len; i += 8) {
			uint64_t w = 0;

			f = sc_splitmix_next(rng);
#pragma GCC unroll 4
			for (int k = 0; k < 4; k++)
				w |= (uint64_t)nx_pair26[nx_digit(&f, 676)]
				     << (16 * k);
			memcpy(buf + i, &w, 8); /* little-endian: in order */
		}
		f = i < len ? sc_splitmix_next(rng) : 0;
		for (; i + 2 <= len; i += 2) {
			uint16_t two = nx_pair26[nx_digit(&f, 676)];

			memcpy(buf + i, &two, 2);
		}
		if (i < len)
			buf[i] = (char)('a' + nx_digit(&f, 26));
		return;
	}
	if (c == NX_TEXT_LETTERS) {
		for (; i + 5 <= len; i += 5) {
			f = sc_splitmix_next(rng);
#pragma GCC unroll 5
			for (int k = 0; k < 5; k++)
				buf[i + k] = nx_text338[nx_digit(&f, 338)];
		}
		for (f = i < len ? sc_splitmix_next(rng) : 0; i < len; i++)
			buf[i] = nx_text338[nx_digit(&f, 338)];
		return;
	}
	for (f = 0; i < len; i++) {
		if (i % 5 == 4) {
			buf[i] = ' ';
			continue;
		}
		if (i % 10 == 0)
			f = sc_splitmix_next(rng);
		buf[i] = (char)('0' + nx_digit(&f, 10));
	}
}

/* The standard's email shape, user@host.com: `shape` is the user part's
 * length times 8 plus the host part's (each a nextString). */
static size_t
nx_email(uint64_t *rng, size_t shape, char *buf)
{
	char *p = buf;

	nx_fill(NX_TEXT_LETTERS, shape / 8, rng, p);
	p += shape / 8;
	*p++ = '@';
	nx_fill(NX_TEXT_LETTERS, shape % 8, rng, p);
	p += shape % 8;
	p = nx_put(p, ".com", 4);
	return (size_t)(p - buf);
}

/* The standard's base url: three path parts, each a nextString(5). At
 * most 24 + 3 * 5 + 16 bytes. */
static size_t
nx_base_url(uint64_t *rng, char *buf)
{
	char *p = nx_put(buf, NX_URL_HEAD, sizeof(NX_URL_HEAD) - 1);

	for (int i = 0; i < 3; i++) {
		size_t len =
		    NX_MIN_STRING + nx_below(rng, NX_URL_PART - NX_MIN_STRING);

		nx_fill(NX_TEXT_LETTERS, len, rng, p);
		p += len;
		*p++ = '/';
	}
	p = nx_put(p, NX_URL_TAIL, sizeof(NX_URL_TAIL) - 1);
	return (size_t)(p - buf);
}

/* The standard's channel_id of channel c: the absolute value of its 32
 * bits reversed, read as a signed int. */
static uint64_t
nx_channel_id(uint32_t c)
{
	uint32_t r = 0;
	int32_t s;

	for (int i = 0; i < 32; i++, c >>= 1)
		r = r << 1 | (c & 1);
	memcpy(&s, &r, sizeof(s));
	return s < 0 ? (uint64_t)(-(int64_t)s) : (uint64_t)s;
}

/*
 * Channel c of the cache (0 .. NX_CHANNELS - 1): its name "channel-c" and
 * its url, a base url with, nine times in ten, its channel_id appended.
 * Made from a stream of (seed, c) alone the first time it is drawn and
 * kept (with the generator's reference) for the generator's life, as the
 * standard's cache of 10,000 channels.
 */
static int
nx_channel(struct sc_nexmark *nx, uint32_t c, uint64_t *name, uint64_t *url)
{
	uint64_t *slot = &nx->chan[2 * (size_t)c];
	uint64_t rng, id = 0;
	char buf[128], *p;
	int rc;

	if (!slot[0]) {
		rng = nx->seed_mix ^ sc_splitmix_mix(NX_CHANNEL_SALT ^ c);
		p = buf + nx_base_url(&rng, buf);
		if (nx_below(&rng, 10) > 0) {
			p = nx_put(p, NX_URL_CHANNEL_ID,
				   sizeof(NX_URL_CHANNEL_ID) - 1);
			p = nx_put_u64(p, nx_channel_id(c));
		}
		if ((rc = sc_symtab_intern(nx->symbols, buf, (size_t)(p - buf),
					   &id)) != 0)
			return rc;
		p = nx_put(buf, NX_CHANNEL_PREFIX,
			   sizeof(NX_CHANNEL_PREFIX) - 1);
		p = nx_put_u64(p, c);
		if ((rc = sc_symtab_intern(nx->symbols, buf, (size_t)(p - buf),
					   &slot[0])) != 0) {
			(void)sc_symtab_release(nx->symbols, id);
			return rc;
		}
		slot[1] = id;
	}
	*name = slot[0];
	*url = slot[1];
	return 0;
}

/* The hot channels' urls: base urls made once from the seed. */
static int
nx_hot_urls(struct sc_nexmark *nx)
{
	char buf[128];
	int rc = 0;

	for (uint64_t i = 0; i < 4 && !rc; i++) {
		uint64_t rng =
		    nx->seed_mix ^ sc_splitmix_mix(NX_HOT_URL_SALT ^ i);

		rc = sc_symtab_intern(nx->symbols, buf, nx_base_url(&rng, buf),
				      &nx->hot_urls[i]);
	}
	return rc;
}

/*
 * A text of class c and length len (an email: its shape, nx_email), as
 * an id: drawn from the pool (one draw from the event's rng picks the
 * entry, whose text comes from the seed alone), or made from the event's
 * rng and interned afresh when there is no pool (or len is past it), the
 * reference then held until sc_nexmark_release_texts.
 */
static int
nx_string(struct sc_nexmark *nx, int c, size_t len, uint64_t *rng, uint64_t *id)
{
	uint32_t p = nx->o.string_pool;
	char stack[NX_STACK_TEXT], *buf = stack;
	uint64_t trng = 0, *slot = NULL;
	size_t n = len;
	int rc;

	if (p && len < nx->pool_len) {
		uint64_t j = nx_below(rng, p);

		slot = &nx->pool[c][len * p + j];
		if (*slot) {
			*id = *slot;
			return 0;
		}
		trng =
		    nx->seed_mix ^ sc_splitmix_mix(((uint64_t)c << 56) ^
						   ((uint64_t)len << 24) ^ j);
		rng = &trng;
	}
	if (len > sizeof(stack) && !(buf = malloc(len)))
		return sc_errorf(SC_ENOMEM, "sc_nexmark: out of memory");
	if (c == NX_TEXT_EMAIL)
		n = nx_email(rng, len, buf);
	else
		nx_fill(c, len, rng, buf);
	rc = sc_symtab_intern(nx->symbols, buf, n, id);
	if (buf != stack)
		free(buf);
	if (rc)
		return rc;
	if (slot) {
		*slot = *id;
		return 0;
	}
	if ((rc = nx_hold(&nx->fresh, *id)) != 0)
		(void)sc_symtab_release(nx->symbols, *id);
	return rc;
}

/* The standard's nextString: length 3 .. max - 1, letters and spaces. */
static int
nx_random_string(struct sc_nexmark *nx, size_t max, uint64_t *rng, uint64_t *id,
		 size_t *len)
{
	*len = NX_MIN_STRING + nx_below(rng, max - NX_MIN_STRING);
	return nx_string(nx, NX_TEXT_LETTERS, *len, rng, id);
}

/* The standard's nextExtra: pad `cur` bytes towards `avg`, within 20%. */
static int
nx_extra(struct sc_nexmark *nx, size_t cur, size_t avg, uint64_t *rng,
	 uint64_t *id)
{
	size_t want, delta, len;

	if (cur >= avg) {
		*id = nx->empty;
		return 0;
	}
	want = avg - cur;
	delta = (want + 2) / 5; /* round(want * 0.2), halves up */
	len = want - delta + (delta ? nx_below(rng, 2 * delta) : 0);
	return nx_string(nx, NX_TEXT_EXACT, len, rng, id);
}

/* --- the three kinds ------------------------------------------------------ */

/* The interned "First Last" of name (fi, li), made the first time. */
static int
nx_name(struct sc_nexmark *nx, uint64_t fi, uint64_t li, size_t *len)
{
	size_t fl = strlen(first_names[fi]), ll = strlen(last_names[li]);
	char buf[32], *p;

	*len = fl + 1 + ll;
	if (nx->names[fi * 9 + li])
		return 0;
	p = nx_put(buf, first_names[fi], fl);
	*p++ = ' ';
	p = nx_put(p, last_names[li], ll);
	return nx_intern_once(nx, &nx->names[fi * 9 + li], buf,
			      (size_t)(p - buf));
}

static int
nx_person(struct sc_nexmark *nx, uint64_t n, uint64_t *rng, uint64_t *row)
{
	uint64_t fi = nx_below(rng, 11), li = nx_below(rng, 9);
	uint64_t ci = nx_below(rng, 10), si = nx_below(rng, 6);
	uint64_t email = 0, card = 0, extra = 0;
	/* The standard's nextString(7) and nextString(5): 3..6 and 3..4. */
	size_t shape = (NX_MIN_STRING + nx_below(rng, 7 - NX_MIN_STRING)) * 8 +
		       NX_MIN_STRING + nx_below(rng, 5 - NX_MIN_STRING);
	size_t cur, len = 0, elen = shape / 8 + shape % 8 + 5;
	int rc;

	if ((rc = nx_name(nx, fi, li, &len)) != 0 ||
	    (rc = nx_string(nx, NX_TEXT_EMAIL, shape, rng, &email)) != 0 ||
	    (rc = nx_string(nx, NX_TEXT_CARD, 19, rng, &card)) != 0)
		return rc;
	cur = 8 + len + elen + 19 + strlen(sc_nexmark_cities[ci]) + 2;
	if ((rc = nx_extra(nx, cur, nx->o.avg_person_bytes, rng, &extra)) != 0)
		return rc;
	row[SC_NXP_ID] = sc_enc_i64(nx->o.first_person_id + nx_last_person(n));
	row[SC_NXP_NAME] = sc_enc_symbol(nx->names[fi * 9 + li]);
	row[SC_NXP_EMAIL] = sc_enc_symbol(email);
	row[SC_NXP_CREDIT_CARD] = sc_enc_symbol(card);
	row[SC_NXP_CITY] = sc_enc_symbol(nx->cities[ci]);
	row[SC_NXP_STATE] = sc_enc_symbol(nx->states[si]);
	row[SC_NXP_DATE_TIME] = sc_enc_i64(nx_event_time(nx, n));
	row[SC_NXP_EXTRA] = sc_enc_symbol(extra);
	return 0;
}

static int
nx_auction(struct sc_nexmark *nx, uint64_t n, uint64_t *rng, uint64_t *row)
{
	uint64_t item = 0, desc = 0, extra = 0;
	size_t ilen = 0, dlen = 0;
	int64_t t = nx_event_time(nx, n), seller, initial, reserve, horizon;
	int64_t length;
	uint64_t ahead =
	    (uint64_t)nx->o.in_flight_auctions * NX_BLOCK / NX_AUCTIONS;
	int rc;

	if (nx_below(rng, nx->o.hot_seller_ratio) > 0)
		seller = nx_last_person(n) / NX_HOT_EVERY * NX_HOT_EVERY;
	else
		seller = nx_next_person(nx, n, rng);
	initial = nx_price(rng);
	reserve = initial + nx_price(rng);
	horizon = nx_time(nx, n + ahead) - nx_time(nx, n);
	length = 1 + (int64_t)nx_below(
			 rng, horizon * 2 > 1 ? (uint64_t)horizon * 2 : 1);
	if ((rc = nx_random_string(nx, 20, rng, &item, &ilen)) != 0 ||
	    (rc = nx_random_string(nx, 100, rng, &desc, &dlen)) != 0 ||
	    (rc = nx_extra(nx, ilen + dlen + 48, nx->o.avg_auction_bytes, rng,
			   &extra)) != 0)
		return rc;
	row[SC_NXA_ID] =
	    sc_enc_i64(nx->o.first_auction_id + nx_last_auction(n));
	row[SC_NXA_ITEM_NAME] = sc_enc_symbol(item);
	row[SC_NXA_DESCRIPTION] = sc_enc_symbol(desc);
	row[SC_NXA_INITIAL_BID] = sc_enc_i64(initial);
	row[SC_NXA_RESERVE] = sc_enc_i64(reserve);
	row[SC_NXA_DATE_TIME] = sc_enc_i64(t);
	row[SC_NXA_EXPIRES] = sc_enc_i64(t + length);
	row[SC_NXA_SELLER] = sc_enc_i64(nx->o.first_person_id + seller);
	row[SC_NXA_CATEGORY] = sc_enc_i64(10 + (int64_t)nx_below(rng, 5));
	row[SC_NXA_EXTRA] = sc_enc_symbol(extra);
	return 0;
}

/* A bid's channel and url: one time in NX_HOT_CHANNEL a channel of the
 * cache, else a hot one with its url. */
static int
nx_bid_channel(struct sc_nexmark *nx, uint64_t *rng, uint64_t *channel,
	       uint64_t *url)
{
	if (nx_below(rng, NX_HOT_CHANNEL) > 0) {
		uint64_t i = nx_below(rng, 4);

		*channel = nx->channels[i];
		*url = nx->hot_urls[i];
		return 0;
	}
	return nx_channel(nx, (uint32_t)nx_below(rng, NX_CHANNELS), channel,
			  url);
}

static int
nx_bid(struct sc_nexmark *nx, uint64_t n, uint64_t *rng, uint64_t *row)
{
	int64_t auction, bidder, price;
	uint64_t channel = 0, url = 0, extra = 0;
	int rc;

	if (nx_below(rng, nx->o.hot_auction_ratio) > 0)
		auction = nx_last_auction(n) / NX_HOT_EVERY * NX_HOT_EVERY;
	else
		auction = nx_next_auction(nx, n, rng);
	if (nx_below(rng, nx->o.hot_bidder_ratio) > 0)
		bidder = nx_last_person(n) / NX_HOT_EVERY * NX_HOT_EVERY + 1;
	else
		bidder = nx_next_person(nx, n, rng);
	price = nx_price(rng);
	if ((rc = nx_bid_channel(nx, rng, &channel, &url)) != 0 ||
	    (rc = nx_extra(nx, 32, nx->o.avg_bid_bytes, rng, &extra)) != 0)
		return rc;
	row[SC_NXB_AUCTION] = sc_enc_i64(nx->o.first_auction_id + auction);
	row[SC_NXB_BIDDER] = sc_enc_i64(nx->o.first_person_id + bidder);
	row[SC_NXB_PRICE] = sc_enc_i64(price);
	row[SC_NXB_CHANNEL] = sc_enc_symbol(channel);
	row[SC_NXB_URL] = sc_enc_symbol(url);
	row[SC_NXB_DATE_TIME] = sc_enc_i64(nx_event_time(nx, n));
	row[SC_NXB_EXTRA] = sc_enc_symbol(extra);
	return 0;
}

/* --- life ----------------------------------------------------------------- */

static int
nx_check_opts(const struct sc_nexmark_opts *o)
{
	const char *bad = NULL;

	if (o->gap_us < 1 || o->gap_us > 1000000000ull)
		bad = "gap_us out of 1..10^9";
	else if (!o->active_people || !o->in_flight_auctions)
		bad = "active_people and in_flight_auctions must be >= 1";
	else if (!o->hot_auction_ratio || !o->hot_bidder_ratio ||
		 !o->hot_seller_ratio)
		bad = "a hot ratio of 0 (1 means nothing is hot)";
	else if (o->string_pool > NX_MAX_POOL)
		bad = "string_pool above 65536";
	else if (o->avg_person_bytes > NX_MAX_AVG ||
		 o->avg_auction_bytes > NX_MAX_AVG ||
		 o->avg_bid_bytes > NX_MAX_AVG)
		bad = "an average size above 65536";
	else if (o->disorder_ms > NX_MAX_DISORDER)
		bad = "disorder_ms above 10^12";
	if (bad)
		return sc_errorf(SC_EINVAL, "sc_nexmark_create: %s", bad);
	return 0;
}

/* Intern the fixed lists (states, cities, channels and their urls, the
 * empty text). */
static int
nx_intern_lists(struct sc_nexmark *nx)
{
	int rc = 0;

	for (int i = 0; i < 6 && !rc; i++)
		rc = sc_symtab_intern_cstr(nx->symbols, sc_nexmark_states[i],
					   &nx->states[i]);
	for (int i = 0; i < 10 && !rc; i++)
		rc = sc_symtab_intern_cstr(nx->symbols, sc_nexmark_cities[i],
					   &nx->cities[i]);
	for (int i = 0; i < 4 && !rc; i++)
		rc = sc_symtab_intern_cstr(nx->symbols, sc_nexmark_channels[i],
					   &nx->channels[i]);
	if (!rc)
		rc = nx_hot_urls(nx);
	if (!rc)
		rc = sc_symtab_intern(nx->symbols, "", 0, &nx->empty);
	return rc;
}

/* Release the non-zero ids of ids[0..n). */
static void
nx_release_ids(struct sc_nexmark *nx, uint64_t *ids, size_t n)
{
	for (size_t i = 0; ids && i < n; i++)
		if (ids[i])
			(void)sc_symtab_release(nx->symbols, ids[i]);
}

static void
nx_release_all(struct sc_nexmark *nx)
{
	size_t np = (size_t)nx->pool_len * nx->o.string_pool;

	nx_release_ids(nx, nx->names, 99);
	nx_release_ids(nx, nx->states, 6);
	nx_release_ids(nx, nx->cities, 10);
	nx_release_ids(nx, nx->channels, 4);
	nx_release_ids(nx, nx->hot_urls, 4);
	nx_release_ids(nx, &nx->empty, 1);
	nx_release_ids(nx, nx->chan, 2 * (size_t)NX_CHANNELS);
	free(nx->chan);
	for (int c = 0; c < NX_CLASSES; c++) {
		nx_release_ids(nx, nx->pool[c], np);
		free(nx->pool[c]);
	}
	sc_nexmark_release_texts(nx);
	free(nx->fresh.ids);
}

int
sc_nexmark_create(const struct sc_nexmark_opts *o, struct sc_symtab *symbols,
		  struct sc_nexmark **out)
{
	struct sc_nexmark *nx;
	uint32_t most;
	int rc;

	if (!o || !symbols || !out)
		return sc_errorf(SC_EINVAL, "sc_nexmark_create: NULL argument");
	if ((rc = nx_check_opts(o)) != 0)
		return rc;
	(void)pthread_once(&nx_pair26_once, nx_pair26_make);
	if (!(nx = calloc(1, sizeof(*nx))))
		return sc_errorf(SC_ENOMEM, "sc_nexmark_create: out of memory");
	nx->o = *o;
	nx->symbols = symbols;
	nx->seed_mix = sc_splitmix_mix(o->seed ^ 0x6e65786d61726bULL);
	/* Pooled lengths: every extra (at most 1.2 times an average) and
	 * the fixed-width texts. */
	most = o->avg_person_bytes > o->avg_auction_bytes
		   ? o->avg_person_bytes
		   : o->avg_auction_bytes;
	most = most > o->avg_bid_bytes ? most : o->avg_bid_bytes;
	nx->pool_len = most + most / 4 + 128;
	rc = SC_ENOMEM;
	if (!(nx->chan = calloc(2 * (size_t)NX_CHANNELS, sizeof(uint64_t))))
		goto fail;
	for (int c = 0; c < NX_CLASSES && o->string_pool; c++)
		if (!(nx->pool[c] =
			  calloc((size_t)nx->pool_len * o->string_pool,
				 sizeof(uint64_t))))
			goto fail;
	for (int k = 0; k < SC_NEXMARK_KINDS; k++)
		(void)sc_batch_builder_init(&nx->b[k], sc_nexmark_ncols(k));
	if ((rc = nx_intern_lists(nx)) != 0)
		goto fail;
	*out = nx;
	return 0;
fail:
	if (rc == SC_ENOMEM)
		(void)sc_errorf(rc, "sc_nexmark_create: out of memory");
	sc_nexmark_destroy(nx);
	return rc;
}

void
sc_nexmark_destroy(struct sc_nexmark *nx)
{
	if (!nx)
		return;
	nx_release_all(nx);
	for (int k = 0; k < SC_NEXMARK_KINDS; k++)
		sc_batch_builder_fini(&nx->b[k]);
	free(nx);
}

void
sc_nexmark_release_texts(struct sc_nexmark *nx)
{
	if (!nx || !nx->fresh.n)
		return;
	(void)sc_symtab_release_ids(nx->symbols, nx->fresh.ids, nx->fresh.n);
	nx->fresh.n = 0;
}

/* --- events ----------------------------------------------------------------
 */

int64_t
sc_nexmark_lateness(const struct sc_nexmark_opts *o)
{
	return o ? (int64_t)o->disorder_ms : 0;
}

enum sc_nexmark_kind
sc_nexmark_kind_of(uint64_t n)
{
	uint64_t off = n % NX_BLOCK;

	if (off < NX_PERSONS)
		return SC_NEXMARK_PERSON;
	if (off < NX_PERSONS + NX_AUCTIONS)
		return SC_NEXMARK_AUCTION;
	return SC_NEXMARK_BID;
}

int
sc_nexmark_next(struct sc_nexmark *nx, struct sc_nexmark_event *ev)
{
	uint64_t rng, row[SC_NEXMARK_MAX_COLS];
	enum sc_nexmark_kind k;
	int rc;

	if (!nx || !ev)
		return sc_errorf(SC_EINVAL, "sc_nexmark_next: NULL argument");
	/* Each event's stream depends on (seed, n) alone. */
	rng = nx->seed_mix ^ sc_splitmix_mix(nx->n);
	k = sc_nexmark_kind_of(nx->n);
	memset(row, 0, sizeof(row));
	if (k == SC_NEXMARK_PERSON)
		rc = nx_person(nx, nx->n, &rng, row);
	else if (k == SC_NEXMARK_AUCTION)
		rc = nx_auction(nx, nx->n, &rng, row);
	else
		rc = nx_bid(nx, nx->n, &rng, row);
	if (rc)
		return rc;
	ev->kind = k;
	ev->n = nx->n++;
	memcpy(ev->row, row, sizeof(row));
	return 0;
}

int
sc_nexmark_batches(struct sc_nexmark *nx, size_t events,
		   struct sc_batch *out[SC_NEXMARK_KINDS])
{
	struct sc_batch *made[SC_NEXMARK_KINDS] = {NULL};
	struct sc_nexmark_event ev;
	int rc = 0;

	if (!nx || !out || !events)
		return sc_errorf(SC_EINVAL,
				 "sc_nexmark_batches: NULL or 0 events");
	for (int k = 0; k < SC_NEXMARK_KINDS; k++)
		sc_batch_builder_clear(&nx->b[k]);
	for (size_t i = 0; i < events && !rc; i++)
		if (!(rc = sc_nexmark_next(nx, &ev)))
			rc =
			    sc_batch_builder_push(&nx->b[ev.kind], ev.row,
						  sc_nexmark_ncols(ev.kind), 1);
	for (int k = 0; k < SC_NEXMARK_KINDS && !rc; k++)
		if (sc_batch_builder_count(&nx->b[k]))
			rc = sc_batch_builder_finish(&nx->b[k], &made[k]);
	if (rc) {
		for (int k = 0; k < SC_NEXMARK_KINDS; k++)
			sc_batch_release(made[k]);
		return rc;
	}
	memcpy(out, made, sizeof(made));
	return 0;
}

uint64_t
sc_nexmark_count(const struct sc_nexmark *nx)
{
	return nx->n;
}

int
sc_nexmark_seek(struct sc_nexmark *nx, uint64_t n)
{
	if (!nx)
		return sc_errorf(SC_EINVAL, "sc_nexmark_seek: NULL generator");
	nx->n = n;
	return 0;
}

int
sc_nexmark_take_texts(struct sc_nexmark *nx, uint64_t **ids, size_t *n)
{
	if (!nx || !ids || !n)
		return sc_errorf(SC_EINVAL,
				 "sc_nexmark_take_texts: NULL argument");
	*ids = nx->fresh.n ? nx->fresh.ids : NULL;
	*n = nx->fresh.n;
	if (nx->fresh.n)
		nx->fresh = (struct held){0};
	return 0;
}

uint32_t
sc_nexmark_ncols(enum sc_nexmark_kind k)
{
	static const uint32_t n[SC_NEXMARK_KINDS] = {SC_NXP_NCOLS, SC_NXA_NCOLS,
						     SC_NXB_NCOLS};

	return (unsigned)k < SC_NEXMARK_KINDS ? n[k] : 0;
}

const char *
sc_nexmark_kind_name(enum sc_nexmark_kind k)
{
	static const char *const n[SC_NEXMARK_KINDS] = {"person", "auction",
							"bid"};

	return (unsigned)k < SC_NEXMARK_KINDS ? n[k] : "?";
}

const char *const *
sc_nexmark_columns(enum sc_nexmark_kind k)
{
	static const char *const *const c[SC_NEXMARK_KINDS] = {
	    person_cols, auction_cols, bid_cols};

	return (unsigned)k < SC_NEXMARK_KINDS ? c[k] : NULL;
}

int
sc_nexmark_schema(enum sc_nexmark_kind k, struct sc_symtab *symbols,
		  struct sc_schema *out)
{
	static const enum sc_type person[SC_NXP_NCOLS] = {
	    SC_TYPE_I64,    SC_TYPE_SYMBOL, SC_TYPE_SYMBOL, SC_TYPE_SYMBOL,
	    SC_TYPE_SYMBOL, SC_TYPE_SYMBOL, SC_TYPE_I64,    SC_TYPE_SYMBOL};
	static const enum sc_type auction[SC_NXA_NCOLS] = {
	    SC_TYPE_I64, SC_TYPE_SYMBOL, SC_TYPE_SYMBOL, SC_TYPE_I64,
	    SC_TYPE_I64, SC_TYPE_I64,	 SC_TYPE_I64,	 SC_TYPE_I64,
	    SC_TYPE_I64, SC_TYPE_SYMBOL};
	static const enum sc_type bid[SC_NXB_NCOLS] = {
	    SC_TYPE_I64,    SC_TYPE_I64, SC_TYPE_I64,	SC_TYPE_SYMBOL,
	    SC_TYPE_SYMBOL, SC_TYPE_I64, SC_TYPE_SYMBOL};
	static const enum sc_type *const t[SC_NEXMARK_KINDS] = {person, auction,
								bid};

	if (!out || (unsigned)k >= SC_NEXMARK_KINDS)
		return sc_errorf(SC_EINVAL,
				 "sc_nexmark_schema: NULL or kind %d", (int)k);
	return sc_schema_init(out, sc_nexmark_ncols(k), t[k], symbols);
}

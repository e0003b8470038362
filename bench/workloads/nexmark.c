/*
 * nexmark.c - the Nexmark event generator (see nexmark.h).
 *
 * The id arithmetic follows the standard generator's
 * (lastBase0PersonId, lastBase0AuctionId, nextBase0PersonId,
 * nextBase0AuctionId, nextAuctionLengthMs, nextPrice, nextExtra), written
 * afresh from their published behaviour.
 */
#include "bench/workloads/nexmark.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "operators/base.h"

#define NX_BLOCK	 50 /* events per block: 1 person, 3 auctions, 46 bids */
#define NX_PERSONS	 1
#define NX_AUCTIONS	 3
#define NX_ID_LEAD	 10  /* ids past the newest a draw may name */
#define NX_HOT_EVERY	 100 /* hot ids are multiples of this (base 0) */
#define NX_MIN_STRING	 3   /* the shortest random text */
#define NX_MAX_POOL	 65536
#define NX_MAX_AVG	 65536 /* the largest average size accepted */
#define NX_TEXT_LETTERS	 0     /* pool classes */
#define NX_TEXT_EXACT	 1
#define NX_TEXT_CARD	 2
#define NX_TEXT_URL	 3
#define NX_TEXT_EMAIL	 4
#define NX_CLASSES	 5
#define NX_MAX_DISORDER	 1000000000000ull /* ms: about 31 years */
#define NX_DISORDER_SALT 0x646973617272ULL

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

/* Ids the generator holds a reference on, released at destroy. */
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
	uint32_t pool_len;	    /* lengths 0 .. pool_len - 1 pooled */
	uint64_t *pool[NX_CLASSES]; /* class: pool_len * P ids (0: not yet) */
	struct held fresh;	    /* string_pool 0: every text interned */
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
	o->string_pool = 32;
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

/* The standard's prices: 10^(6u) dollars in cents. */
static int64_t
nx_price(uint64_t *rng)
{
	return (int64_t)llround(pow(10.0, nx_unit(rng) * 6.0) * 100.0);
}

/* Keep one reference on id until destroy. */
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

/* A random text of class c and length len into buf, from *rng. */
static void
nx_text(int c, size_t len, uint64_t *rng, char *buf)
{
	for (size_t i = 0; i < len; i++) {
		/* A card's groups of four digits, and the standard's one
		 * space in 13 in a nextString (not drawn for a card). */
		if ((c == NX_TEXT_CARD && i % 5 == 4) ||
		    (c == NX_TEXT_LETTERS && nx_below(rng, 13) == 0))
			buf[i] = ' ';
		else if (c == NX_TEXT_CARD)
			buf[i] = "0123456789"[nx_below(rng, 10)];
		else
			buf[i] =
			    "abcdefghijklmnopqrstuvwxyz"[nx_below(rng, 26)];
	}
	buf[len] = 0;
}

/* The standard's url shape: three random path parts, the channel's id. */
static size_t
nx_url(uint64_t *rng, uint32_t channel, char *buf, size_t cap)
{
	char p[3][6];

	for (int i = 0; i < 3; i++)
		nx_text(NX_TEXT_EXACT, 5, rng, p[i]);
	return (size_t)snprintf(buf, cap,
				"https://www.nexmark.com/%s/%s/%s/"
				"item.htm?query=1&channel_id=%u",
				p[0], p[1], p[2], channel);
}

/* The standard's email shape, user@host.com: `shape` is the user part's
 * length times 8 plus the host part's (each a nextString). */
static size_t
nx_email(uint64_t *rng, size_t shape, char *buf, size_t cap)
{
	char u[8], h[8];

	nx_text(NX_TEXT_LETTERS, shape / 8, rng, u);
	nx_text(NX_TEXT_LETTERS, shape % 8, rng, h);
	return (size_t)snprintf(buf, cap, "%s@%s.com", u, h);
}

/*
 * A text of class c and length len (a url: channel `len`; an email: its
 * shape, nx_email), as an id:
 * drawn from the pool (one draw from the event's rng picks the entry,
 * whose text comes from the seed alone), or made from the event's rng and
 * interned afresh when there is no pool (or len is past it).
 */
static int
nx_string(struct sc_nexmark *nx, int c, size_t len, uint64_t *rng, uint64_t *id)
{
	uint32_t p = nx->o.string_pool;
	char stack[512], *buf = stack;
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
	if (len + 1 > sizeof(stack) && !(buf = malloc(len + 1)))
		return sc_errorf(SC_ENOMEM, "sc_nexmark: out of memory");
	if (c == NX_TEXT_URL)
		n = nx_url(rng, (uint32_t)len, buf, sizeof(stack));
	else if (c == NX_TEXT_EMAIL)
		n = nx_email(rng, len, buf, sizeof(stack));
	else
		nx_text(c, len, rng, buf);
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
	delta = (size_t)llround((double)want * 0.2);
	len = want - delta + (delta ? nx_below(rng, 2 * delta) : 0);
	return nx_string(nx, NX_TEXT_EXACT, len, rng, id);
}

/* --- the three kinds ------------------------------------------------------ */

static int
nx_person(struct sc_nexmark *nx, uint64_t n, uint64_t *rng, uint64_t *row)
{
	uint64_t fi = nx_below(rng, 11), li = nx_below(rng, 9);
	uint64_t ci = nx_below(rng, 10), si = nx_below(rng, 6);
	uint64_t name = 0, email = 0, card = 0, extra = 0;
	/* The standard's nextString(7) and nextString(5): 3..6 and 3..4. */
	size_t shape = (NX_MIN_STRING + nx_below(rng, 7 - NX_MIN_STRING)) * 8 +
		       NX_MIN_STRING + nx_below(rng, 5 - NX_MIN_STRING);
	size_t cur, elen = shape / 8 + shape % 8 + 5;
	char buf[64];
	int rc, len;

	len = snprintf(buf, sizeof(buf), "%s %s", first_names[fi],
		       last_names[li]);
	if ((rc = nx_intern_once(nx, &nx->names[fi * 9 + li], buf,
				 (size_t)len)) != 0 ||
	    (rc = nx_string(nx, NX_TEXT_EMAIL, shape, rng, &email)) != 0)
		return rc;
	name = nx->names[fi * 9 + li];
	if ((rc = nx_string(nx, NX_TEXT_CARD, 19, rng, &card)) != 0)
		return rc;
	cur = 8 + (size_t)len + elen + 19 + strlen(sc_nexmark_cities[ci]) + 2;
	if ((rc = nx_extra(nx, cur, nx->o.avg_person_bytes, rng, &extra)) != 0)
		return rc;
	row[SC_NXP_ID] = sc_enc_i64(nx->o.first_person_id + nx_last_person(n));
	row[SC_NXP_NAME] = sc_enc_symbol(name);
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

static int
nx_bid(struct sc_nexmark *nx, uint64_t n, uint64_t *rng, uint64_t *row)
{
	int64_t auction, bidder, price;
	uint64_t channel, url = 0, extra = 0;
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
	channel = nx_below(rng, 4);
	if ((rc = nx_string(nx, NX_TEXT_URL, (size_t)channel, rng, &url)) !=
		0 ||
	    (rc = nx_extra(nx, 32, nx->o.avg_bid_bytes, rng, &extra)) != 0)
		return rc;
	row[SC_NXB_AUCTION] = sc_enc_i64(nx->o.first_auction_id + auction);
	row[SC_NXB_BIDDER] = sc_enc_i64(nx->o.first_person_id + bidder);
	row[SC_NXB_PRICE] = sc_enc_i64(price);
	row[SC_NXB_CHANNEL] = sc_enc_symbol(nx->channels[channel]);
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

/* Intern the fixed lists (states, cities, channels, the empty text). */
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
		rc = sc_symtab_intern(nx->symbols, "", 0, &nx->empty);
	return rc;
}

static void
nx_release_all(struct sc_nexmark *nx)
{
	uint64_t *fixed[] = {nx->names, nx->states, nx->cities, nx->channels,
			     &nx->empty};
	const size_t nfixed[] = {99, 6, 10, 4, 1};
	size_t np = (size_t)nx->pool_len * nx->o.string_pool;

	for (size_t f = 0; f < sizeof(nfixed) / sizeof(nfixed[0]); f++)
		for (size_t i = 0; i < nfixed[f]; i++)
			if (fixed[f][i])
				(void)sc_symtab_release(nx->symbols,
							fixed[f][i]);
	for (int c = 0; c < NX_CLASSES; c++) {
		for (size_t i = 0; nx->pool[c] && i < np; i++)
			if (nx->pool[c][i])
				(void)sc_symtab_release(nx->symbols,
							nx->pool[c][i]);
		free(nx->pool[c]);
	}
	for (size_t i = 0; i < nx->fresh.n; i++)
		(void)sc_symtab_release(nx->symbols, nx->fresh.ids[i]);
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

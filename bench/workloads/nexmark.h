/*
 * nexmark.h - the Nexmark event generator: people, auctions and bids of an
 * online auction, seeded and deterministic, after the standard generator
 * (Apache Beam's NexmarkGenerator, which Flink, DBSP/Feldera, RisingWave
 * and Arroyo all run), for `subcirc run --workload nexmark` and the tests.
 *
 * Events. Event n (0, 1, 2, ...) is a person, an auction or a bid by its
 * place in a block of 50: offset n % 50 = 0 is a person, 1..3 auctions,
 * 4..49 bids (the proportion 1 : 3 : 46). Its time is
 * base_time_ms + n * gap_us / 1000 (ms since the epoch, floor), so with
 * the default gap of 100 us ten events share a millisecond and event time
 * advances 10,000 events per second.
 *
 * Ids and active windows (as the standard's). Person ids count from 1000
 * (first_person_id) in the order people are made, auction ids from 1000
 * (first_auction_id). A seller or bidder that is not hot is drawn
 * uniformly among the last `active_people` people and the 10 ids past the
 * newest (a bid may name a person not made yet, as in the standard); an
 * auction a bid names, when not hot, among the last `in_flight_auctions`
 * auctions and the 10 ids past the newest. Hot: a bid is on the hot auction
 * (the newest id that is a multiple of 100 past the first, base 0) with
 * probability 1 - 1/hot_auction_ratio, by the hot bidder (likewise, plus
 * one) with 1 - 1/hot_bidder_ratio, and an auction is the hot seller's
 * with 1 - 1/hot_seller_ratio.
 *
 * Values. An auction's category is 10..14; its initial bid and every price
 * round(100 * 10^(6u)) for a uniform u in [0, 1) (1 .. 10^8 cents); its
 * reserve the initial bid plus such a price; it expires 1 .. 2h ms after
 * its start, h being the time 100 auctions take to be made (so about
 * in_flight_auctions are open at once). A person's name is a first and a
 * last name from the standard's lists, the state one of AZ, CA, ID, OR,
 * WA, WY and the city one of Phoenix, Los Angeles, San Francisco, Boise,
 * Portland, Bend, Redmond, Seattle, Kent, Cheyenne (each uniform and
 * independent, as the standard does). A bid's channel is, with
 * probability 1/2, one of the hot Google, Facebook, Baidu, Apple with a
 * url of its own, else "channel-c" for a c uniform in 0 .. 9,999 with that
 * channel's url (the standard's cache of 10,000 channels: made from
 * (seed, c) alone the first time c is drawn, https://www.nexmark.com/
 * and three nextString(5) path parts, then item.htm?query=1, nine times in
 * ten followed by &channel_id=N). `extra` pads each event to the
 * standard's average size (person 200 bytes, auction 500, bid 100: numbers
 * count 8 bytes, strings their length) by the standard's rule: a length
 * uniform within 20% of what is missing.
 *
 * Strings are symbols (symbol.h) of a table the caller gives. The random
 * texts (a person's email, credit card and extra, an auction's item name,
 * description and extra, a bid's extra) are made afresh for every event,
 * as the standard makes them, and interned once each; the names, cities,
 * states and channels with their urls come from bounded sets, interned
 * the first time each is needed and kept for the generator's life. For
 * study, `string_pool = P > 0` draws each random text instead, per
 * length, from a pool of P texts made from the seed: then the table stays
 * bounded however many events are made.
 *
 * Who holds the ids. The generator holds one reference on every fresh
 * text it made until sc_nexmark_release_texts (or destroy): a host feeds
 * the rows (a circuit or a runtime then holds what it keeps, symbol.h)
 * and releases them, so that a text lives exactly as long as some kept
 * row names it and the table follows the live state. The bounded sets'
 * and the pools' ids live until destroy: destroy the generator only after
 * the rows that use them are gone (or keep the ids with
 * sc_symtab_retain).
 *
 * Disorder. With disorder_ms = D > 0 every event's date_time is its
 * place's time (above) minus a delay drawn uniformly in 0 .. D from a
 * stream seeded by (seed, n) of its own, so the events still come in the
 * order of n but their times do not: since the places' times never go
 * down, each row's date_time is at least the largest seen before it, in
 * its stream or any other, minus D. That is the bound a declared lateness
 * of D on date_time (operators/waterline.h) promises, so D is the
 * lateness that matches (sc_nexmark_lateness). An auction expires its
 * length after its own date_time. D = 0, the default, draws nothing and
 * leaves every event as it was.
 *
 * Determinism. Each event draws from a random stream seeded by (seed, n)
 * alone, so event n is the same whatever came before it; the ids of the
 * symbols depend on the order in which texts are interned and released,
 * so two generators with the same seed give the same rows into two fresh
 * tables (or into one shared table while every text stays held).
 *
 * Threads: one thread uses a generator; the symbol table may be shared.
 */
#ifndef SC_BENCH_WORKLOADS_NEXMARK_H
#define SC_BENCH_WORKLOADS_NEXMARK_H

#include <stddef.h>
#include <stdint.h>

#include "operators/batch.h"
#include "operators/error.h"
#include "operators/schema.h"
#include "operators/symbol.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The three streams. */
enum sc_nexmark_kind {
	SC_NEXMARK_PERSON = 0,
	SC_NEXMARK_AUCTION = 1,
	SC_NEXMARK_BID = 2,
	SC_NEXMARK_KINDS = 3
};

/* Columns of person(id, name, email_address, credit_card, city, state,
 * date_time, extra): ids and times i64, strings symbols. */
enum {
	SC_NXP_ID = 0,
	SC_NXP_NAME = 1,
	SC_NXP_EMAIL = 2,
	SC_NXP_CREDIT_CARD = 3,
	SC_NXP_CITY = 4,
	SC_NXP_STATE = 5,
	SC_NXP_DATE_TIME = 6,
	SC_NXP_EXTRA = 7,
	SC_NXP_NCOLS = 8
};

/* Columns of auction(id, item_name, description, initial_bid, reserve,
 * date_time, expires, seller, category, extra). */
enum {
	SC_NXA_ID = 0,
	SC_NXA_ITEM_NAME = 1,
	SC_NXA_DESCRIPTION = 2,
	SC_NXA_INITIAL_BID = 3,
	SC_NXA_RESERVE = 4,
	SC_NXA_DATE_TIME = 5,
	SC_NXA_EXPIRES = 6,
	SC_NXA_SELLER = 7,
	SC_NXA_CATEGORY = 8,
	SC_NXA_EXTRA = 9,
	SC_NXA_NCOLS = 10
};

/* Columns of bid(auction, bidder, price, channel, url, date_time, extra). */
enum {
	SC_NXB_AUCTION = 0,
	SC_NXB_BIDDER = 1,
	SC_NXB_PRICE = 2,
	SC_NXB_CHANNEL = 3,
	SC_NXB_URL = 4,
	SC_NXB_DATE_TIME = 5,
	SC_NXB_EXTRA = 6,
	SC_NXB_NCOLS = 7
};

/* The widest of the three rows. */
#define SC_NEXMARK_MAX_COLS 10

/*
 * The parameters, each with the standard's value as its default
 * (sc_nexmark_opts_default).
 */
struct sc_nexmark_opts {
	uint64_t seed;		     /* random streams; default 1 */
	int64_t base_time_ms;	     /* time of event 0; default
					1436918400000 (2015-07-15 00:00
					UTC, the standard's BASE_TIME) */
	uint64_t gap_us;	     /* event time between events, 1 ..
					10^9; default 100 (10,000 events
					per second of event time) */
	int64_t first_person_id;     /* default 1000 */
	int64_t first_auction_id;    /* default 1000 */
	uint32_t active_people;	     /* people a seller/bidder is drawn
					from; default 1000 */
	uint32_t in_flight_auctions; /* auctions a bid is drawn from, and
					what sets their length; default
					100 */
	uint32_t hot_auction_ratio;  /* 1 - 1/r of bids on the hot auction;
					default 2 (>= 1; 1: none hot) */
	uint32_t hot_bidder_ratio;   /* likewise for bidders; default 4 */
	uint32_t hot_seller_ratio;   /* likewise for sellers; default 4 */
	uint32_t avg_person_bytes;   /* padding target; default 200 */
	uint32_t avg_auction_bytes;  /* default 500 */
	uint32_t avg_bid_bytes;	     /* default 100 */
	uint32_t string_pool;	     /* distinct random texts per length;
					default 0: every text fresh, as
					the standard */
	uint64_t disorder_ms;	     /* the most an event's date_time lags
					its place's time (Disorder, above),
					0 .. 10^12; default 0 (in order) */
};

/* The standard configuration (the values above). */
void sc_nexmark_opts_default(struct sc_nexmark_opts *o);

/* One event: its kind, its number and its row (the kind's width). */
struct sc_nexmark_event {
	enum sc_nexmark_kind kind;
	uint64_t n;			   /* event number, from 0 */
	uint64_t row[SC_NEXMARK_MAX_COLS]; /* encoded (schema.h) */
};

struct sc_nexmark;

/*
 * sc_nexmark_create - a generator at event 0, interning into `symbols`
 * (borrowed: it must outlive the generator). Returns:
 *   0            *out is the generator
 *   SC_EINVAL    NULL, a ratio or active window of 0, gap_us out of
 *                1..10^9, a string_pool above 65536, a disorder_ms
 *                above 10^12 (the message names the parameter)
 *   SC_ENOMEM
 */
int sc_nexmark_create(const struct sc_nexmark_opts *o,
		      struct sc_symtab *symbols, struct sc_nexmark **out);

/* sc_nexmark_destroy - release the generator's symbol references and free
 * it. NULL is allowed. */
void sc_nexmark_destroy(struct sc_nexmark *nx);

/*
 * sc_nexmark_release_texts - drop the generator's references on the fresh
 * texts of every event made so far (those of the bounded sets and the
 * pools stay). Call it once those rows are fed or retained: a text nothing
 * else holds dies, and its id may name another text. NULL is allowed.
 */
void sc_nexmark_release_texts(struct sc_nexmark *nx);

/*
 * sc_nexmark_next - the next event into *ev. Returns 0, SC_EINVAL (NULL)
 * or SC_ENOMEM / SC_EOVERFLOW from interning (then the generator has not
 * moved on, and the same event comes next).
 */
int sc_nexmark_next(struct sc_nexmark *nx, struct sc_nexmark_event *ev);

/*
 * sc_nexmark_batches - the next `events` events (>= 1) as one batch per
 * stream: out[kind] gets the rows of that kind (weight 1 each), or NULL
 * when there are none. Returns 0 (the caller releases each out[k]),
 * SC_EINVAL or SC_ENOMEM (nothing written; events made before the failure
 * are consumed).
 */
int sc_nexmark_batches(struct sc_nexmark *nx, size_t events,
		       struct sc_batch *out[SC_NEXMARK_KINDS]);

/* sc_nexmark_count - how many events have been made (the next event's
 * number). */
uint64_t sc_nexmark_count(const struct sc_nexmark *nx);

/*
 * sc_nexmark_seek - make event n the next one. Event n depends on (seed,
 * n) alone, so a generator sought to n makes what one that made events 0
 * .. n-1 would make next; several generators sought to disjoint ranges
 * make one stream's events in parallel (nexmark_par.h). Returns 0, or
 * SC_EINVAL (nx NULL).
 */
int sc_nexmark_seek(struct sc_nexmark *nx, uint64_t n);

/*
 * sc_nexmark_take_texts - hand the caller the references the generator
 * holds on the fresh texts made since the last release or take: *ids
 * (malloc'd, the caller frees it) gets *n ids, one reference each, which
 * the caller drops with sc_symtab_release_ids once the rows that name
 * them are fed. The generator holds none of them afterwards. *ids is NULL
 * when *n is 0. Returns 0, or SC_EINVAL (an argument NULL).
 */
int sc_nexmark_take_texts(struct sc_nexmark *nx, uint64_t **ids, size_t *n);

/*
 * sc_nexmark_lateness - the lateness (ms, on date_time) that events made
 * with options o respect: o->disorder_ms (0 when in order). Every row's
 * date_time is at least the largest date_time before it minus this.
 */
int64_t sc_nexmark_lateness(const struct sc_nexmark_opts *o);

/* sc_nexmark_kind_of - the kind of event number n (1 : 3 : 46 per 50). */
enum sc_nexmark_kind sc_nexmark_kind_of(uint64_t n);

/* sc_nexmark_ncols - the width of a kind's rows (8, 10, 7). */
uint32_t sc_nexmark_ncols(enum sc_nexmark_kind k);

/* sc_nexmark_kind_name - "person", "auction", "bid" (static). */
const char *sc_nexmark_kind_name(enum sc_nexmark_kind k);

/* sc_nexmark_columns - the column names of a kind (static, ncols of
 * them). */
const char *const *sc_nexmark_columns(enum sc_nexmark_kind k);

/*
 * sc_nexmark_schema - the schema of a kind's rows, with `symbols` as its
 * table (may be NULL). Returns 0, SC_EINVAL (NULL, unknown kind).
 */
int sc_nexmark_schema(enum sc_nexmark_kind k, struct sc_symtab *symbols,
		      struct sc_schema *out);

/* The lists the values come from, for tests (static). */
extern const char *const sc_nexmark_states[6];
extern const char *const sc_nexmark_cities[10];
extern const char *const sc_nexmark_channels[4];

#ifdef __cplusplus
}
#endif

#endif /* SC_BENCH_WORKLOADS_NEXMARK_H */

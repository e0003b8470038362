/*
 * test_nexmark.c - the Nexmark generator and queries
 * (bench/workloads/nexmark.h, nexmark_queries.h).
 *
 * The generator: deterministic per seed, its proportions, id ranges,
 * active windows, hot ratios, value lists and average sizes as the
 * standard's. The queries: each one's settled output equals a
 * from-scratch evaluation of its SQL written here in plain C over the
 * generated events (no operator code), for several seeds; and placed with
 * every strategy on 1 to 4 units it settles where the single circuit does
 * (units/settle.h), checked against the same evaluation.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <strings.h>
#include <unistd.h>

#include "bench/workloads/nexmark.h"
#include "bench/workloads/nexmark_queries.h"
#include "operators/circuit.h"
#include "tests/support/prop.h"
#include "units/settle.h"

/* --- the events, decoded ----------------------------------------------------
 */

struct events {
	struct sc_symtab *t;
	size_t n[SC_NEXMARK_KINDS];
	uint64_t *rows[SC_NEXMARK_KINDS]; /* n[k] rows of width ncols(k) */
	uint64_t *seq[SC_NEXMARK_KINDS];  /* each row's place in the stream */
	size_t chunk; /* events a submission, where the run sets it (q12) */
};

static void
events_make(struct events *e, const struct sc_nexmark_opts *o, size_t count)
{
	struct sc_nexmark *nx = NULL;
	struct sc_nexmark_event ev;

	memset(e, 0, sizeof(*e));
	cr_assert_eq(sc_symtab_create(&e->t), 0);
	cr_assert_eq(sc_nexmark_create(o, e->t, &nx), 0);
	for (int k = 0; k < SC_NEXMARK_KINDS; k++) {
		e->rows[k] = calloc(count * sc_nexmark_ncols(k) + 1, 8);
		e->seq[k] = calloc(count + 1, 8);
	}
	for (size_t i = 0; i < count; i++) {
		uint32_t w;

		cr_assert_eq(sc_nexmark_next(nx, &ev), 0);
		w = sc_nexmark_ncols(ev.kind);
		memcpy(e->rows[ev.kind] + e->n[ev.kind] * w, ev.row,
		       (size_t)w * 8);
		e->seq[ev.kind][e->n[ev.kind]] = i;
		e->n[ev.kind]++;
	}
	/* The rows keep their ids alive in this test by holding the table:
	 * the generator's references go, the texts stay for lookups, so
	 * retain every symbol first. */
	for (int k = 0; k < SC_NEXMARK_KINDS; k++) {
		struct sc_schema s;
		uint32_t w = sc_nexmark_ncols(k);

		cr_assert_eq(sc_nexmark_schema(k, NULL, &s), 0);
		for (size_t i = 0; i < e->n[k]; i++)
			for (uint32_t c = 0; c < w; c++)
				if (s.types[c] == SC_TYPE_SYMBOL)
					cr_assert_eq(
					    sc_symtab_retain(
						e->t, e->rows[k][i * w + c]),
					    0);
	}
	sc_nexmark_destroy(nx);
}

static void
events_free(struct events *e)
{
	for (int k = 0; k < SC_NEXMARK_KINDS; k++) {
		free(e->rows[k]);
		free(e->seq[k]);
	}
	sc_symtab_destroy(e->t);
}

static const uint64_t *
ev_row(const struct events *e, int k, size_t i)
{
	return e->rows[k] + i * sc_nexmark_ncols(k);
}

static int64_t
ev_i64(const struct events *e, int k, size_t i, int col)
{
	return sc_dec_i64(ev_row(e, k, i)[col]);
}

static const char *
ev_text(const struct events *e, int k, size_t i, int col)
{
	const char *s = NULL;

	cr_assert_eq(sc_symtab_lookup(e->t, ev_row(e, k, i)[col], &s, NULL), 0);
	return s;
}

static size_t
ev_len(const struct events *e, int k, size_t i, int col)
{
	return strlen(ev_text(e, k, i, col));
}

/* --- the generator -----------------------------------------------------------
 */

Test(nexmark, generator_is_deterministic_per_seed)
{
	struct sc_nexmark_opts o;
	struct events a, b, c;

	sc_nexmark_opts_default(&o);
	o.seed = sc_prop_seed(11);
	events_make(&a, &o, 3000);
	events_make(&b, &o, 3000);
	o.seed++;
	events_make(&c, &o, 3000);
	for (int k = 0; k < SC_NEXMARK_KINDS; k++) {
		size_t bytes = a.n[k] * sc_nexmark_ncols(k) * 8;

		cr_assert_eq(a.n[k], b.n[k]);
		/* Two fresh tables intern the same texts in the same order. */
		cr_assert(!memcmp(a.rows[k], b.rows[k], bytes), "kind %d", k);
	}
	cr_assert(memcmp(a.rows[SC_NEXMARK_BID], c.rows[SC_NEXMARK_BID],
			 a.n[SC_NEXMARK_BID] * SC_NXB_NCOLS * 8) != 0,
		  "another seed gives other bids");
	events_free(&a);
	events_free(&b);
	events_free(&c);
}

Test(nexmark, events_come_in_blocks_of_one_person_three_auctions_46_bids)
{
	for (uint64_t n = 0; n < 500; n++) {
		uint64_t off = n % 50;
		enum sc_nexmark_kind want = off == 0  ? SC_NEXMARK_PERSON
					    : off < 4 ? SC_NEXMARK_AUCTION
						      : SC_NEXMARK_BID;

		cr_assert_eq(sc_nexmark_kind_of(n), want, "event %llu",
			     (unsigned long long)n);
	}
}

Test(nexmark, ids_start_at_1000_and_count_up)
{
	struct sc_nexmark_opts o;
	struct events e;

	sc_nexmark_opts_default(&o);
	events_make(&e, &o, 5000);
	cr_assert_eq(e.n[SC_NEXMARK_PERSON], 100);
	cr_assert_eq(e.n[SC_NEXMARK_AUCTION], 300);
	cr_assert_eq(e.n[SC_NEXMARK_BID], 4600);
	for (size_t i = 0; i < e.n[SC_NEXMARK_PERSON]; i++)
		cr_assert_eq(ev_i64(&e, SC_NEXMARK_PERSON, i, SC_NXP_ID),
			     1000 + (int64_t)i);
	for (size_t i = 0; i < e.n[SC_NEXMARK_AUCTION]; i++)
		cr_assert_eq(ev_i64(&e, SC_NEXMARK_AUCTION, i, SC_NXA_ID),
			     1000 + (int64_t)i);
	events_free(&e);
}

/* Bids name recent auctions and people: never one past the lead of 10
 * ahead of the newest, never one older than the active window (hot ones
 * aside, which are the newest multiple of 100). */
Test(nexmark, draws_stay_within_the_active_windows)
{
	struct sc_nexmark_opts o;
	struct events e;
	size_t b = 0;

	sc_nexmark_opts_default(&o);
	o.active_people = 20;
	o.in_flight_auctions = 30;
	events_make(&e, &o, 20000);
	for (uint64_t n = 0; n < 20000; n++) {
		int64_t persons = (int64_t)(n / 50) + 1;
		int64_t last_a = (int64_t)(n / 50) * 3 +
				 (n % 50 >= 4 ? 2 : (int64_t)(n % 50) - 1);
		int64_t a, p;

		if (sc_nexmark_kind_of(n) != SC_NEXMARK_BID)
			continue;
		a = ev_i64(&e, SC_NEXMARK_BID, b, SC_NXB_AUCTION) - 1000;
		p = ev_i64(&e, SC_NEXMARK_BID, b, SC_NXB_BIDDER) - 1000;
		b++;
		cr_assert(a <= last_a + 10 &&
			      (a >= last_a - 30 || a == last_a / 100 * 100),
			  "event %llu: auction %lld, newest %lld",
			  (unsigned long long)n, (long long)a,
			  (long long)last_a);
		cr_assert(
		    p < persons + 10 && (p >= persons - 20 ||
					 p == (persons - 1) / 100 * 100 + 1),
		    "event %llu: bidder %lld of %lld people",
		    (unsigned long long)n, (long long)p, (long long)persons);
	}
	events_free(&e);
}

/* The hot auction takes 1 - 1/2 of the bids, the hot bidder 1 - 1/4 (plus
 * what uniform draws add), the hot seller 1 - 1/4 of the auctions. */
Test(nexmark, hot_ratios_are_2_4_and_4)
{
	struct sc_nexmark_opts o;
	struct events e;
	size_t hot_a = 0, hot_b = 0, hot_s = 0, nb, na;
	uint64_t n = 0;
	size_t b = 0, a = 0;

	sc_nexmark_opts_default(&o);
	events_make(&e, &o, 100000);
	nb = e.n[SC_NEXMARK_BID];
	na = e.n[SC_NEXMARK_AUCTION];
	for (n = 0; n < 100000; n++) {
		int64_t last_p = (int64_t)(n / 50);
		int64_t last_a = (int64_t)(n / 50) * 3 +
				 (n % 50 >= 4 ? 2 : (int64_t)(n % 50) - 1);

		if (sc_nexmark_kind_of(n) == SC_NEXMARK_BID) {
			hot_a += ev_i64(&e, SC_NEXMARK_BID, b, SC_NXB_AUCTION) -
				     1000 ==
				 last_a / 100 * 100;
			hot_b += ev_i64(&e, SC_NEXMARK_BID, b, SC_NXB_BIDDER) -
				     1000 ==
				 last_p / 100 * 100 + 1;
			b++;
		} else if (sc_nexmark_kind_of(n) == SC_NEXMARK_AUCTION) {
			hot_s +=
			    ev_i64(&e, SC_NEXMARK_AUCTION, a, SC_NXA_SELLER) -
				1000 ==
			    last_p / 100 * 100;
			a++;
		}
	}
	cr_assert(fabs((double)hot_a / (double)nb - 0.5) < 0.02, "%zu of %zu",
		  hot_a, nb);
	cr_assert(fabs((double)hot_b / (double)nb - 0.75) < 0.02, "%zu of %zu",
		  hot_b, nb);
	cr_assert(fabs((double)hot_s / (double)na - 0.75) < 0.03, "%zu of %zu",
		  hot_s, na);
	events_free(&e);
}

static bool
in_list(const char *s, const char *const *list, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(s, list[i]))
			return true;
	return false;
}

Test(nexmark, values_come_from_the_standard_lists)
{
	struct sc_nexmark_opts o;
	struct events e;
	bool cat_seen[5] = {false};
	size_t hot = 0;

	sc_nexmark_opts_default(&o);
	events_make(&e, &o, 20000);
	for (size_t i = 0; i < e.n[SC_NEXMARK_PERSON]; i++) {
		cr_assert(
		    in_list(ev_text(&e, SC_NEXMARK_PERSON, i, SC_NXP_STATE),
			    sc_nexmark_states, 6));
		cr_assert(
		    in_list(ev_text(&e, SC_NEXMARK_PERSON, i, SC_NXP_CITY),
			    sc_nexmark_cities, 10));
		cr_assert(strchr(
		    ev_text(&e, SC_NEXMARK_PERSON, i, SC_NXP_EMAIL), '@'));
	}
	for (size_t i = 0; i < e.n[SC_NEXMARK_AUCTION]; i++) {
		int64_t c = ev_i64(&e, SC_NEXMARK_AUCTION, i, SC_NXA_CATEGORY);
		int64_t t = ev_i64(&e, SC_NEXMARK_AUCTION, i, SC_NXA_DATE_TIME);

		cr_assert(c >= 10 && c <= 14, "category %lld", (long long)c);
		cat_seen[c - 10] = true;
		cr_assert_gt(ev_i64(&e, SC_NEXMARK_AUCTION, i, SC_NXA_EXPIRES),
			     t);
		cr_assert_gt(
		    ev_i64(&e, SC_NEXMARK_AUCTION, i, SC_NXA_RESERVE),
		    ev_i64(&e, SC_NEXMARK_AUCTION, i, SC_NXA_INITIAL_BID));
	}
	for (int c = 0; c < 5; c++)
		cr_assert(cat_seen[c], "category %d never drawn", 10 + c);
	for (size_t i = 0; i < e.n[SC_NEXMARK_BID]; i++) {
		int64_t p = ev_i64(&e, SC_NEXMARK_BID, i, SC_NXB_PRICE);

		const char *ch = ev_text(&e, SC_NEXMARK_BID, i, SC_NXB_CHANNEL);
		char *end = NULL;

		if (in_list(ch, sc_nexmark_channels, 4)) {
			hot++;
		} else {
			cr_assert(!strncmp(ch, "channel-", 8), "%s", ch);
			cr_assert_lt(strtol(ch + 8, &end, 10), 10000, "%s", ch);
			cr_assert_eq(*end, 0, "%s", ch);
		}
		cr_assert(!strncmp(ev_text(&e, SC_NEXMARK_BID, i, SC_NXB_URL),
				   "https://www.nexmark.com/", 24));
		cr_assert(p >= 100 && p <= 100000000, "price %lld",
			  (long long)p);
	}
	/* Half the bids on a hot channel, the others on the cache's. */
	cr_assert(fabs((double)hot / (double)e.n[SC_NEXMARK_BID] - 0.5) < 0.03,
		  "%zu hot of %zu", hot, e.n[SC_NEXMARK_BID]);
	events_free(&e);
}

/* Fresh texts have the standard's characters in the standard's mix: an
 * extra letters only, each letter near 1/26 of them; a nextString (an
 * item's name and description) a space one time in 13, else letters; a
 * card four groups of four digits, each digit near 1/10. A generator
 * that drew characters from too few bits would skew the letters by 10%
 * and more. */
Test(nexmark, fresh_texts_have_the_standard_character_mix)
{
	struct sc_nexmark_opts o;
	struct events e;
	uint64_t letters[26] = {0}, nletters = 0, spaces = 0, chars = 0;
	uint64_t digits[10] = {0}, ndigits = 0;

	sc_nexmark_opts_default(&o);
	o.string_pool = 0;
	events_make(&e, &o, 100000);
	for (size_t i = 0; i < e.n[SC_NEXMARK_BID]; i++)
		for (const char *t =
			 ev_text(&e, SC_NEXMARK_BID, i, SC_NXB_EXTRA);
		     *t; t++) {
			cr_assert(*t >= 'a' && *t <= 'z', "extra char %d", *t);
			letters[*t - 'a']++;
			nletters++;
		}
	cr_assert_gt(nletters, 100000);
	for (int l = 0; l < 26; l++)
		cr_assert(fabs((double)letters[l] * 26 / (double)nletters - 1) <
			      0.03,
			  "'%c': %llu of %llu letters", 'a' + l,
			  (unsigned long long)letters[l],
			  (unsigned long long)nletters);
	for (size_t i = 0; i < e.n[SC_NEXMARK_AUCTION]; i++)
		for (int col = SC_NXA_ITEM_NAME; col <= SC_NXA_DESCRIPTION;
		     col++)
			for (const char *t =
				 ev_text(&e, SC_NEXMARK_AUCTION, i, col);
			     *t; t++) {
				cr_assert(*t == ' ' || (*t >= 'a' && *t <= 'z'),
					  "text char %d", *t);
				spaces += *t == ' ';
				chars++;
			}
	cr_assert(fabs((double)spaces * 13 / (double)chars - 1) < 0.1,
		  "%llu spaces in %llu", (unsigned long long)spaces,
		  (unsigned long long)chars);
	for (size_t i = 0; i < e.n[SC_NEXMARK_PERSON]; i++) {
		const char *t =
		    ev_text(&e, SC_NEXMARK_PERSON, i, SC_NXP_CREDIT_CARD);

		cr_assert_eq(strlen(t), 19, "card '%s'", t);
		for (int k = 0; k < 19; k++) {
			if (k % 5 == 4) {
				cr_assert_eq(t[k], ' ', "card '%s'", t);
				continue;
			}
			cr_assert(t[k] >= '0' && t[k] <= '9', "card '%s'", t);
			digits[t[k] - '0']++;
			ndigits++;
		}
	}
	for (int d = 0; d < 10; d++)
		cr_assert(
		    fabs((double)digits[d] * 10 / (double)ndigits - 1) < 0.1,
		    "digit %d: %llu of %llu", d, (unsigned long long)digits[d],
		    (unsigned long long)ndigits);
	events_free(&e);
}

/* Event n's time is base + n * gap / 1000 ms: with the default gap of
 * 100 us, ten events per millisecond. */
Test(nexmark, event_time_advances_by_the_gap)
{
	struct sc_nexmark_opts o;
	struct events e;
	size_t b = 0;

	sc_nexmark_opts_default(&o);
	events_make(&e, &o, 2000);
	for (uint64_t n = 0; n < 2000; n++) {
		if (sc_nexmark_kind_of(n) != SC_NEXMARK_BID)
			continue;
		cr_assert_eq(ev_i64(&e, SC_NEXMARK_BID, b++, SC_NXB_DATE_TIME),
			     1436918400000LL + (int64_t)(n / 10));
	}
	events_free(&e);
}

/* The sizes as the standard counts them (8 bytes a number, a string its
 * length) average 200, 500 and 100 bytes (within a few percent). */
Test(nexmark, extra_pads_to_the_standard_average_sizes)
{
	struct sc_nexmark_opts o;
	struct events e;
	double ps = 0, as = 0, bs = 0;

	sc_nexmark_opts_default(&o);
	events_make(&e, &o, 50000);
	for (size_t i = 0; i < e.n[SC_NEXMARK_PERSON]; i++)
		ps += 8.0 + (double)(ev_len(&e, 0, i, SC_NXP_NAME) +
				     ev_len(&e, 0, i, SC_NXP_EMAIL) +
				     ev_len(&e, 0, i, SC_NXP_CREDIT_CARD) +
				     ev_len(&e, 0, i, SC_NXP_CITY) +
				     ev_len(&e, 0, i, SC_NXP_STATE) +
				     ev_len(&e, 0, i, SC_NXP_EXTRA));
	for (size_t i = 0; i < e.n[SC_NEXMARK_AUCTION]; i++)
		as += 48.0 + (double)(ev_len(&e, 1, i, SC_NXA_ITEM_NAME) +
				      ev_len(&e, 1, i, SC_NXA_DESCRIPTION) +
				      ev_len(&e, 1, i, SC_NXA_EXTRA));
	for (size_t i = 0; i < e.n[SC_NEXMARK_BID]; i++)
		bs += 32.0 + (double)ev_len(&e, 2, i, SC_NXB_EXTRA);
	ps /= (double)e.n[0];
	as /= (double)e.n[1];
	bs /= (double)e.n[2];
	cr_assert(fabs(ps - 200) < 8, "person %.1f", ps);
	cr_assert(fabs(as - 500) < 15, "auction %.1f", as);
	cr_assert(fabs(bs - 100) < 3, "bid %.1f", bs);
	events_free(&e);
}

/* With a pool the table stays bounded; without one every text is new,
 * and the generator holds it only until sc_nexmark_release_texts. */
Test(nexmark, string_pool_bounds_the_symbol_table)
{
	struct sc_nexmark_opts o;
	struct sc_symtab *t = NULL;
	struct sc_nexmark *nx = NULL;
	struct sc_nexmark_event ev;
	size_t at1m, kept;

	sc_nexmark_opts_default(&o);
	cr_assert_eq(o.string_pool, 0, "fresh texts by default");
	o.string_pool = 32;
	cr_assert_eq(sc_symtab_create(&t), 0);
	cr_assert_eq(sc_nexmark_create(&o, t, &nx), 0);
	for (int i = 0; i < 1000000; i++)
		cr_assert_eq(sc_nexmark_next(nx, &ev), 0);
	at1m = sc_symtab_count(t);
	for (int i = 0; i < 1000000; i++)
		cr_assert_eq(sc_nexmark_next(nx, &ev), 0);
	/* The pools and the channel cache fill as their entries are first
	 * drawn, and then stop: a million events more add under 5% (2M
	 * events of fresh texts would be millions of symbols). */
	cr_assert_lt(sc_symtab_count(t), at1m + at1m / 20,
		     "%zu symbols after 2M events, %zu after 1M",
		     sc_symtab_count(t), at1m);
	cr_assert_lt(sc_symtab_count(t), 20000 + 2 * 10000);
	sc_nexmark_destroy(nx);
	cr_assert_eq(sc_symtab_count(t), 0, "destroy releases every id");
	o.string_pool = 0;
	cr_assert_eq(sc_nexmark_create(&o, t, &nx), 0);
	for (int i = 0; i < 2000; i++)
		cr_assert_eq(sc_nexmark_next(nx, &ev), 0);
	cr_assert_gt(sc_symtab_count(t), 1900, "fresh texts: %zu",
		     sc_symtab_count(t));
	sc_nexmark_release_texts(nx);
	kept = sc_symtab_count(t);
	/* The lists (126 texts) and the channels drawn (a name and a url
	 * each, about 920 draws of 10,000). */
	cr_assert_lt(kept, 126 + 2 * 1000, "%zu kept after the release", kept);
	for (int i = 0; i < 2000; i++)
		cr_assert_eq(sc_nexmark_next(nx, &ev), 0);
	sc_nexmark_release_texts(nx);
	cr_assert_lt(sc_symtab_count(t), kept + 2000);
	sc_nexmark_destroy(nx);
	cr_assert_eq(sc_symtab_count(t), 0);
	sc_symtab_destroy(t);
}

/* A row of kind k at time `at` whose symbols are all the empty text (an id
 * the generator keeps for its life), into b. */
static void
far_row(struct sc_symtab *t, enum sc_nexmark_kind k, int64_t at,
	struct sc_batch **b)
{
	static const int tcol[SC_NEXMARK_KINDS] = {
	    SC_NXP_DATE_TIME, SC_NXA_DATE_TIME, SC_NXB_DATE_TIME};
	uint64_t row[SC_NEXMARK_MAX_COLS], empty = 0;
	struct sc_batch_builder bb;
	struct sc_schema s;

	cr_assert_eq(sc_symtab_find(t, "", 0, &empty), 0);
	cr_assert_eq(sc_nexmark_schema(k, NULL, &s), 0);
	for (uint32_t c = 0; c < sc_nexmark_ncols(k); c++)
		row[c] = s.types[c] == SC_TYPE_SYMBOL ? sc_enc_symbol(empty)
						      : sc_enc_i64(1000);
	row[tcol[k]] = sc_enc_i64(at);
	if (k == SC_NEXMARK_AUCTION)
		row[SC_NXA_EXPIRES] = sc_enc_i64(at + 1);
	cr_assert_eq(sc_batch_builder_init(&bb, sc_nexmark_ncols(k)), 0);
	cr_assert_eq(sc_batch_builder_push(&bb, row, sc_nexmark_ncols(k), 1),
		     0);
	cr_assert_eq(sc_batch_builder_finish(&bb, b), 0);
	sc_batch_builder_fini(&bb);
}

/*
 * Fresh texts live exactly as long as the state that names them: the
 * generator lets go of each chunk's texts once it is fed, and once rows
 * far past the lateness have let the circuit drop every earlier row, the
 * table's live count is the same as with no circuit at all (the
 * generator's lists and channels, and the query's own texts): destroying
 * the circuit then frees nothing. With a pool as well.
 */
static void
check_texts_follow_the_state(const char *name, uint32_t pool)
{
	struct sc_nexmark_opts o;
	struct sc_nexmark_query_opts qo;
	struct sc_nexmark_query *q = NULL;
	struct sc_nexmark *nx = NULL;
	struct sc_circuit *cir = NULL;
	struct sc_symtab *t = NULL;
	struct sc_batch *b[SC_NEXMARK_KINDS];
	size_t cleaned, bare, peak = 0;

	sc_nexmark_opts_default(&o);
	o.seed = sc_prop_seed(31);
	o.gap_us = 5000;
	o.string_pool = pool;
	cr_assert_eq(sc_symtab_create(&t), 0);
	sc_nexmark_query_opts_default(&qo);
	qo.flags = SC_NEXMARK_QUERY_STREAM;
	qo.lateness_ms = 4000;
	cr_assert_eq(sc_nexmark_query_create_opts(name, t, &qo, &q), 0, "%s",
		     sc_errmsg());
	cr_assert_eq(sc_nexmark_create(&o, t, &nx), 0);
	cr_assert_eq(sc_circuit_create(sc_nexmark_query_graph(q), &cir), 0);
	for (int chunk = 0; chunk < 40; chunk++) {
		cr_assert_eq(sc_nexmark_batches(nx, 250, b), 0);
		for (int k = 0; k < SC_NEXMARK_KINDS; k++) {
			int in = sc_nexmark_query_input(q, k);

			if (b[k] && in >= 0)
				cr_assert_eq(sc_circuit_feed(cir, in, b[k]), 0,
					     "%s", sc_errmsg());
			sc_batch_release(b[k]);
		}
		sc_nexmark_release_texts(nx);
		cr_assert_eq(sc_circuit_step(cir), 0, "%s", sc_errmsg());
		peak = sc_symtab_count(t) > peak ? sc_symtab_count(t) : peak;
	}
	/* Rows a day and an hour later on every input the query reads:
	 * the waterline passes every earlier row (and closes the day of
	 * q15-q17's groups), and the steps after drop them (a trace lets a
	 * row's holds go when the runs holding its insertion and its removal
	 * merge, which its spine does over the next steps: q7's takes 8 to 16
	 * empty ones). */
	for (int k = 0; k < SC_NEXMARK_KINDS; k++) {
		int in = sc_nexmark_query_input(q, k);
		struct sc_batch *fb = NULL;

		if (in < 0)
			continue;
		far_row(t, (enum sc_nexmark_kind)k,
			o.base_time_ms + (int64_t)40 * 250 * 5 + 90000000, &fb);
		cr_assert_eq(sc_circuit_feed(cir, in, fb), 0, "%s",
			     sc_errmsg());
		sc_batch_release(fb);
	}
	for (int i = 0; i < 32; i++)
		cr_assert_eq(sc_circuit_step(cir), 0, "%s", sc_errmsg());
	cleaned = sc_symtab_count(t);
	sc_circuit_destroy(cir);
	bare = sc_symtab_count(t);
	cr_assert_eq(cleaned, bare,
		     "%s pool %u: %zu live symbols after the cleanup, %zu "
		     "with no circuit (peak %zu)",
		     name, pool, cleaned, bare, peak);
	sc_nexmark_destroy(nx);
	cr_assert_eq(sc_nexmark_query_destroy(q), 0);
	cr_assert_eq(sc_symtab_count(t), 0, "every id released");
	sc_symtab_destroy(t);
}

Test(nexmark, texts_live_as_long_as_the_state_lateness_keeps)
{
	/* The queries whose fresh texts lateness bounds: q18 (the last bid
	 * per bidder and auction), q19 (the top 10 per auction) and q20
	 * (bids joined with auctions on the id alone) have no time in their
	 * SQL's keys or conditions, so no waterline ever drops their rows
	 * (q3's join is such too, but it keeps only the lists' texts).
	 * q15-q17 keep only channels, which the generator keeps as well:
	 * for them this checks that their days close and every reference
	 * they took is given back. q11's state is not bounded (session.h:
	 * no cleanup) but is (bidder, date_time) rows, no text: for it this
	 * checks that the bids' texts go with the projection ahead of the
	 * session windows, which keep every row for good. */
	static const char *const names[] = {
	    "q0", "q1",	 "q2",	"q3",  "q4",  "q5",  "q7",  "q8",
	    "q9", "q11", "q14", "q15", "q16", "q17", "q21", "q22"};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		check_texts_follow_the_state(names[i], 0);
		check_texts_follow_the_state(names[i], 32);
	}
}

Test(nexmark, bad_parameters_are_refused_by_name)
{
	struct sc_nexmark_opts o;
	struct sc_symtab *t = NULL;
	struct sc_nexmark *nx = NULL;

	cr_assert_eq(sc_symtab_create(&t), 0);
	sc_nexmark_opts_default(&o);
	o.gap_us = 0;
	cr_assert_eq(sc_nexmark_create(&o, t, &nx), SC_EINVAL);
	cr_assert(strstr(sc_errmsg(), "gap_us"), "%s", sc_errmsg());
	sc_nexmark_opts_default(&o);
	o.hot_bidder_ratio = 0;
	cr_assert_eq(sc_nexmark_create(&o, t, &nx), SC_EINVAL);
	cr_assert(strstr(sc_errmsg(), "hot ratio"), "%s", sc_errmsg());
	cr_assert_null(nx);
	sc_symtab_destroy(t);
}

/* --- the from-scratch evaluations
 * --------------------------------------------- */

/* Rows pushed with weight 1 each into a builder of width w, then the
 * batch. */
struct expect {
	struct sc_batch_builder b;
};

static void
expect_init(struct expect *x, uint32_t w)
{
	cr_assert_eq(sc_batch_builder_init(&x->b, w), 0);
}

static void
expect_push(struct expect *x, const uint64_t *row)
{
	cr_assert_eq(sc_batch_builder_push(&x->b, row, x->b.ncols, 1), 0);
}

static struct sc_batch *
expect_finish(struct expect *x)
{
	struct sc_batch *out = NULL;

	cr_assert_eq(sc_batch_builder_finish(&x->b, &out), 0);
	sc_batch_builder_fini(&x->b);
	return out;
}

#define P SC_NEXMARK_PERSON
#define A SC_NEXMARK_AUCTION
#define B SC_NEXMARK_BID

static struct sc_batch *
eval_q0(const struct events *e)
{
	struct expect x;

	expect_init(&x, 7);
	for (size_t i = 0; i < e->n[B]; i++)
		expect_push(&x, ev_row(e, B, i));
	return expect_finish(&x);
}

static struct sc_batch *
eval_q1(const struct events *e)
{
	struct expect x;

	expect_init(&x, 5);
	for (size_t i = 0; i < e->n[B]; i++) {
		const uint64_t *r = ev_row(e, B, i);
		double v = 0.908 * (double)ev_i64(e, B, i, SC_NXB_PRICE);
		uint64_t o[5] = {r[0], r[1], sc_enc_f64(v), r[5], r[6]};

		expect_push(&x, o);
	}
	return expect_finish(&x);
}

static struct sc_batch *
eval_q2(const struct events *e)
{
	struct expect x;

	expect_init(&x, 2);
	for (size_t i = 0; i < e->n[B]; i++) {
		const uint64_t *r = ev_row(e, B, i);
		uint64_t o[2] = {r[0], r[2]};

		if (ev_i64(e, B, i, SC_NXB_AUCTION) % 123 == 0)
			expect_push(&x, o);
	}
	return expect_finish(&x);
}

static struct sc_batch *
eval_q3(const struct events *e)
{
	struct expect x;

	expect_init(&x, 4);
	for (size_t i = 0; i < e->n[A]; i++) {
		if (ev_i64(e, A, i, SC_NXA_CATEGORY) != 10)
			continue;
		for (size_t j = 0; j < e->n[P]; j++) {
			const char *st = ev_text(e, P, j, SC_NXP_STATE);
			const uint64_t *p = ev_row(e, P, j);
			uint64_t o[4] = {p[SC_NXP_NAME], p[SC_NXP_CITY],
					 p[SC_NXP_STATE],
					 ev_row(e, A, i)[SC_NXA_ID]};

			if (ev_i64(e, P, j, SC_NXP_ID) ==
				ev_i64(e, A, i, SC_NXA_SELLER) &&
			    (!strcmp(st, "OR") || !strcmp(st, "ID") ||
			     !strcmp(st, "CA")))
				expect_push(&x, o);
		}
	}
	return expect_finish(&x);
}

static struct sc_batch *
eval_q4(const struct events *e)
{
	int64_t sum[5] = {0}, cnt[5] = {0};
	struct expect x;

	expect_init(&x, 2);
	for (size_t i = 0; i < e->n[A]; i++) {
		int64_t id = ev_i64(e, A, i, SC_NXA_ID), best = -1;
		int64_t t0 = ev_i64(e, A, i, SC_NXA_DATE_TIME);
		int64_t t1 = ev_i64(e, A, i, SC_NXA_EXPIRES);

		for (size_t j = 0; j < e->n[B]; j++) {
			int64_t t = ev_i64(e, B, j, SC_NXB_DATE_TIME);
			int64_t p = ev_i64(e, B, j, SC_NXB_PRICE);

			if (ev_i64(e, B, j, SC_NXB_AUCTION) == id && t0 <= t &&
			    t <= t1 && p > best)
				best = p;
		}
		if (best >= 0) {
			int64_t c = ev_i64(e, A, i, SC_NXA_CATEGORY) - 10;

			sum[c] += best;
			cnt[c]++;
		}
	}
	for (int c = 0; c < 5; c++) {
		/* Both exact in a double: the quotient rounds once. */
		uint64_t o[2] = {sc_enc_i64(10 + c),
				 sc_enc_f64((double)sum[c] / (double)cnt[c])};

		if (cnt[c])
			expect_push(&x, o);
	}
	return expect_finish(&x);
}

/* q6: per seller, the average final price of its auctions ranked at most
 * 10 by date_time, latest first (rank: 1 + the seller's auctions with a
 * final price and a strictly later date_time). */
static struct sc_batch *
eval_q6(const struct events *e)
{
	size_t n = e->n[A];
	int64_t *fin = calloc(n + 1, sizeof(*fin));
	bool *in = calloc(n + 1, sizeof(*in));
	struct expect x;

	cr_assert(fin && in);
	expect_init(&x, 2);
	for (size_t i = 0; i < n; i++) {
		int64_t id = ev_i64(e, A, i, SC_NXA_ID);
		int64_t t0 = ev_i64(e, A, i, SC_NXA_DATE_TIME);
		int64_t t1 = ev_i64(e, A, i, SC_NXA_EXPIRES);

		fin[i] = -1;
		for (size_t j = 0; j < e->n[B]; j++) {
			int64_t t = ev_i64(e, B, j, SC_NXB_DATE_TIME);
			int64_t p = ev_i64(e, B, j, SC_NXB_PRICE);

			if (ev_i64(e, B, j, SC_NXB_AUCTION) == id && t0 <= t &&
			    t <= t1 && p > fin[i])
				fin[i] = p;
		}
	}
	for (size_t i = 0; i < n; i++) {
		int64_t rank = 1;

		for (size_t j = 0; j < n && fin[i] >= 0; j++)
			rank += fin[j] >= 0 &&
				ev_i64(e, A, j, SC_NXA_SELLER) ==
				    ev_i64(e, A, i, SC_NXA_SELLER) &&
				ev_i64(e, A, j, SC_NXA_DATE_TIME) >
				    ev_i64(e, A, i, SC_NXA_DATE_TIME);
		in[i] = fin[i] >= 0 && rank <= 10;
	}
	for (size_t i = 0; i < n; i++) {
		int64_t s = ev_i64(e, A, i, SC_NXA_SELLER), sum = 0, cnt = 0;
		bool first = in[i];

		for (size_t j = 0; j < i && first; j++)
			first = !(in[j] && ev_i64(e, A, j, SC_NXA_SELLER) == s);
		if (!first)
			continue;
		for (size_t j = i; j < n; j++)
			if (in[j] && ev_i64(e, A, j, SC_NXA_SELLER) == s) {
				sum += fin[j];
				cnt++;
			}
		{
			/* Both exact in a double: the quotient rounds once. */
			uint64_t o[2] = {sc_enc_i64(s),
					 sc_enc_f64((double)sum / (double)cnt)};

			expect_push(&x, o);
		}
	}
	free(fin);
	free(in);
	return expect_finish(&x);
}

static int
cmp_pair(const void *a, const void *b)
{
	const int64_t *x = a, *y = b;

	if (x[0] != y[0])
		return x[0] < y[0] ? -1 : 1;
	return x[1] < y[1] ? -1 : x[1] > y[1];
}

static struct sc_batch *
eval_q5(const struct events *e)
{
	int64_t *pairs = calloc(e->n[B] * 5 * 2 + 2, sizeof(int64_t));
	size_t np = 0;
	struct expect x;

	/* (window start, auction) for every window of every bid */
	for (size_t i = 0; i < e->n[B]; i++) {
		int64_t t = ev_i64(e, B, i, SC_NXB_DATE_TIME);

		for (int64_t s = t / 2000 * 2000; s > t - 10000; s -= 2000) {
			pairs[np * 2] = s;
			pairs[np * 2 + 1] = ev_i64(e, B, i, SC_NXB_AUCTION);
			np++;
		}
	}
	qsort(pairs, np, 2 * sizeof(int64_t), cmp_pair);
	expect_init(&x, 2);
	for (size_t w = 0; w < np;) {
		size_t end = w, best = 0;

		while (end < np && pairs[end * 2] == pairs[w * 2])
			end++;
		/* the window's maximum count, then every auction with it */
		for (int pass = 0; pass < 2; pass++) {
			for (size_t i = w; i < end;) {
				size_t j = i;

				while (j < end &&
				       pairs[j * 2 + 1] == pairs[i * 2 + 1])
					j++;
				if (pass == 0 && j - i > best)
					best = j - i;
				if (pass == 1 && j - i == best) {
					uint64_t o[2] = {
					    sc_enc_i64(pairs[i * 2 + 1]),
					    sc_enc_i64((int64_t)best)};

					expect_push(&x, o);
				}
				i = j;
			}
		}
		w = end;
	}
	free(pairs);
	return expect_finish(&x);
}

static struct sc_batch *
eval_q7(const struct events *e)
{
	struct expect x;

	expect_init(&x, 5);
	for (size_t i = 0; i < e->n[B]; i++) {
		int64_t s = ev_i64(e, B, i, SC_NXB_DATE_TIME) / 10000;
		int64_t p = ev_i64(e, B, i, SC_NXB_PRICE), best = p;
		const uint64_t *r = ev_row(e, B, i);
		uint64_t o[5] = {r[SC_NXB_AUCTION], r[SC_NXB_PRICE],
				 r[SC_NXB_BIDDER], r[SC_NXB_DATE_TIME],
				 r[SC_NXB_EXTRA]};

		for (size_t j = 0; j < e->n[B]; j++)
			if (ev_i64(e, B, j, SC_NXB_DATE_TIME) / 10000 == s &&
			    ev_i64(e, B, j, SC_NXB_PRICE) > best)
				best = ev_i64(e, B, j, SC_NXB_PRICE);
		if (p == best)
			expect_push(&x, o);
	}
	return expect_finish(&x);
}

static struct sc_batch *
eval_q8(const struct events *e)
{
	struct expect x;

	expect_init(&x, 3);
	for (size_t i = 0; i < e->n[P]; i++) {
		int64_t id = ev_i64(e, P, i, SC_NXP_ID);
		int64_t s = ev_i64(e, P, i, SC_NXP_DATE_TIME) / 10000 * 10000;

		for (size_t j = 0; j < e->n[A]; j++) {
			/* Wider than the 3 pushed, for the analyzer, which
			 * does not follow the builder's width. */
			uint64_t o[SC_NEXMARK_MAX_COLS] = {
			    ev_row(e, P, i)[SC_NXP_ID],
			    ev_row(e, P, i)[SC_NXP_NAME], sc_enc_i64(s)};

			if (ev_i64(e, A, j, SC_NXA_SELLER) == id &&
			    ev_i64(e, A, j, SC_NXA_DATE_TIME) / 10000 * 10000 ==
				s) {
				expect_push(&x, o); /* once per window */
				break;
			}
		}
	}
	return expect_finish(&x);
}

static struct sc_batch *
eval_q20(const struct events *e)
{
	struct expect x;

	expect_init(&x, 13);
	for (size_t i = 0; i < e->n[B]; i++) {
		const uint64_t *b = ev_row(e, B, i);

		for (size_t j = 0; j < e->n[A]; j++) {
			const uint64_t *a = ev_row(e, A, j);
			uint64_t o[13] = {
			    b[SC_NXB_AUCTION],	 b[SC_NXB_BIDDER],
			    b[SC_NXB_PRICE],	 b[SC_NXB_CHANNEL],
			    b[SC_NXB_URL],	 b[SC_NXB_DATE_TIME],
			    a[SC_NXA_ITEM_NAME], a[SC_NXA_INITIAL_BID],
			    a[SC_NXA_RESERVE],	 a[SC_NXA_DATE_TIME],
			    a[SC_NXA_EXPIRES],	 a[SC_NXA_SELLER],
			    a[SC_NXA_CATEGORY]};

			if (ev_i64(e, B, i, SC_NXB_AUCTION) ==
				ev_i64(e, A, j, SC_NXA_ID) &&
			    ev_i64(e, A, j, SC_NXA_CATEGORY) == 10)
				expect_push(&x, o);
		}
	}
	return expect_finish(&x);
}

/* A text interned in the events' table (kept until it goes). */
static uint64_t
ev_intern(const struct events *e, const char *text, size_t len)
{
	uint64_t id;

	cr_assert_eq(sc_symtab_intern(e->t, text, len, &id), 0);
	return sc_enc_symbol(id);
}

/* q12 with the feed's stepped clock: the bids of chunk i (events
 * i * chunk ..) taken at i * 1000 ms; per (bidder, 10 s window of that
 * time) the bids, as (bidder, count, start, start + 10 s). */
struct bidder_window {
	int64_t bidder, start;
};

static int
bidder_window_cmp(const void *a, const void *b)
{
	const struct bidder_window *x = a, *y = b;

	if (x->bidder != y->bidder)
		return x->bidder < y->bidder ? -1 : 1;
	return (x->start > y->start) - (x->start < y->start);
}

static struct sc_batch *
eval_q12(const struct events *e)
{
	struct bidder_window *bw = calloc(e->n[B] + 1, sizeof(*bw));
	struct expect x;

	cr_assert(bw && e->chunk > 0);
	for (size_t i = 0; i < e->n[B]; i++) {
		int64_t p = (int64_t)(e->seq[B][i] / e->chunk) * 1000;

		bw[i].bidder = ev_i64(e, B, i, SC_NXB_BIDDER);
		bw[i].start = p - p % 10000;
	}
	qsort(bw, e->n[B], sizeof(*bw), bidder_window_cmp);
	expect_init(&x, 4);
	for (size_t i = 0, j; i < e->n[B]; i = j) {
		uint64_t o[4];

		for (j = i; j < e->n[B] && !bidder_window_cmp(&bw[i], &bw[j]);
		     j++)
			;
		o[0] = sc_enc_i64(bw[i].bidder);
		o[1] = sc_enc_i64((int64_t)(j - i));
		o[2] = sc_enc_i64(bw[i].start);
		o[3] = sc_enc_i64(bw[i].start + 10000);
		expect_push(&x, o);
	}
	free(bw);
	return expect_finish(&x);
}

/* q13 with the standard side input: every key 0..9,999 once, its value
 * its decimal text, so each bid meets the one row of auction % 10000. */
static struct sc_batch *
eval_q13(const struct events *e)
{
	struct expect x;

	expect_init(&x, 5);
	for (size_t i = 0; i < e->n[B]; i++) {
		const uint64_t *r = ev_row(e, B, i);
		char v[24];
		int len = snprintf(
		    v, sizeof(v), "%lld",
		    (long long)(ev_i64(e, B, i, SC_NXB_AUCTION) % 10000));
		uint64_t o[5] = {r[SC_NXB_AUCTION], r[SC_NXB_BIDDER],
				 r[SC_NXB_PRICE], r[SC_NXB_DATE_TIME],
				 ev_intern(e, v, (size_t)len)};

		expect_push(&x, o);
	}
	return expect_finish(&x);
}

/* q10: every bid with the day and the minute of the day of its time, by
 * calendar arithmetic (gmtime_r) rather than the query's division. */
static struct sc_batch *
eval_q10(const struct events *e)
{
	struct expect x;

	expect_init(&x, 7);
	for (size_t i = 0; i < e->n[B]; i++) {
		const uint64_t *r = ev_row(e, B, i);
		int64_t ms = ev_i64(e, B, i, SC_NXB_DATE_TIME);
		time_t t = (time_t)(ms / 1000 - (ms % 1000 < 0));
		struct tm tm;
		uint64_t o[7];

		cr_assert_not_null(gmtime_r(&t, &tm));
		o[0] = r[SC_NXB_AUCTION];
		o[1] = r[SC_NXB_BIDDER];
		o[2] = r[SC_NXB_PRICE];
		o[3] = r[SC_NXB_DATE_TIME];
		o[4] = r[SC_NXB_EXTRA];
		o[5] = sc_enc_i64((int64_t)(t - (tm.tm_hour * 3600 +
						 tm.tm_min * 60 + tm.tm_sec)) /
				  86400);
		o[6] = sc_enc_i64(tm.tm_hour * 60 + tm.tm_min);
		expect_push(&x, o);
	}
	return expect_finish(&x);
}

static struct sc_batch *
eval_q14(const struct events *e)
{
	struct expect x;

	expect_init(&x, 7);
	for (size_t i = 0; i < e->n[B]; i++) {
		const uint64_t *r = ev_row(e, B, i);
		double v = 0.908 * (double)ev_i64(e, B, i, SC_NXB_PRICE);
		int64_t h = ev_i64(e, B, i, SC_NXB_DATE_TIME) / 3600000 % 24;
		const char *extra = ev_text(e, B, i, SC_NXB_EXTRA);
		const char *when = h >= 8 && h <= 18   ? "dayTime"
				   : h <= 6 || h >= 20 ? "nightTime"
						       : "otherTime";
		int64_t c = 0;

		if (v <= 1000000 || v >= 50000000)
			continue;
		for (const char *p = strchr(extra, 'c'); p;
		     p = strchr(p + 1, 'c'))
			c++;
		{
			uint64_t o[7] = {r[SC_NXB_AUCTION],
					 r[SC_NXB_BIDDER],
					 sc_enc_f64(v),
					 ev_intern(e, when, strlen(when)),
					 r[SC_NXB_DATE_TIME],
					 r[SC_NXB_EXTRA],
					 sc_enc_i64(c)};

			expect_push(&x, o);
		}
	}
	return expect_finish(&x);
}

/* The value of the url's first "channel_id=" at its start or after a
 * '&', up to the next '&': the regular expression's group 2 written out
 * by hand. */
static const char *
channel_id_of(const char *url, size_t *len)
{
	static const char key[] = "channel_id=";

	for (const char *p = strstr(url, key); p; p = strstr(p + 1, key))
		if (p == url || p[-1] == '&') {
			p += sizeof(key) - 1;
			*len = strcspn(p, "&");
			return p;
		}
	return NULL;
}

static struct sc_batch *
eval_q21(const struct events *e)
{
	static const char *const known[4] = {"apple", "google", "facebook",
					     "baidu"};
	static const char *const ids[4] = {"0", "1", "2", "3"};
	struct expect x;

	expect_init(&x, 5);
	for (size_t i = 0; i < e->n[B]; i++) {
		const uint64_t *r = ev_row(e, B, i);
		const char *ch = ev_text(e, B, i, SC_NXB_CHANNEL), *id = NULL;
		size_t len = 0;

		for (int k = 0; k < 4 && !id; k++)
			if (!strcasecmp(ch, known[k])) {
				id = ids[k];
				len = 1;
			}
		if (!id)
			id = channel_id_of(ev_text(e, B, i, SC_NXB_URL), &len);
		if (id) {
			uint64_t o[5] = {r[SC_NXB_AUCTION], r[SC_NXB_BIDDER],
					 r[SC_NXB_PRICE], r[SC_NXB_CHANNEL],
					 ev_intern(e, id, len)};

			expect_push(&x, o);
		}
	}
	return expect_finish(&x);
}

static struct sc_batch *
eval_q22(const struct events *e)
{
	struct expect x;

	expect_init(&x, 7);
	for (size_t i = 0; i < e->n[B]; i++) {
		const uint64_t *r = ev_row(e, B, i);
		const char *p = ev_text(e, B, i, SC_NXB_URL);
		uint64_t o[7] = {r[SC_NXB_AUCTION], r[SC_NXB_BIDDER],
				 r[SC_NXB_PRICE], r[SC_NXB_CHANNEL]};

		/* past "https://www.nexmark.com/": three slashes */
		for (int k = 0; k < 3 && p; k++)
			p = strchr(p, '/') ? strchr(p, '/') + 1 : NULL;
		for (int k = 0; k < 3; k++) {
			size_t len = p ? strcspn(p, "/") : 0;

			o[4 + k] = ev_intern(e, p ? p : "", len);
			p = p && p[len] == '/' ? p + len + 1 : NULL;
		}
		expect_push(&x, o);
	}
	return expect_finish(&x);
}

static struct sc_batch *
eval_q23(const struct events *e)
{
	struct expect x;

	expect_init(&x, 16);
	for (size_t i = 0; i < e->n[B]; i++) {
		const uint64_t *b = ev_row(e, B, i);

		for (size_t j = 0; j < e->n[A]; j++) {
			const uint64_t *a = ev_row(e, A, j);

			if (b[SC_NXB_AUCTION] != a[SC_NXA_ID])
				continue;
			for (size_t k = 0; k < e->n[P]; k++) {
				const uint64_t *p = ev_row(e, P, k);
				uint64_t o[16] = {
				    b[SC_NXB_AUCTION],	   b[SC_NXB_BIDDER],
				    b[SC_NXB_PRICE],	   b[SC_NXB_CHANNEL],
				    b[SC_NXB_URL],	   b[SC_NXB_DATE_TIME],
				    b[SC_NXB_EXTRA],	   a[SC_NXA_ITEM_NAME],
				    a[SC_NXA_INITIAL_BID], a[SC_NXA_RESERVE],
				    a[SC_NXA_EXPIRES],	   a[SC_NXA_SELLER],
				    a[SC_NXA_CATEGORY],	   p[SC_NXP_NAME],
				    p[SC_NXP_CITY],	   p[SC_NXP_STATE]};

				if (a[SC_NXA_SELLER] == p[SC_NXP_ID])
					expect_push(&x, o);
			}
		}
	}
	return expect_finish(&x);
}

/* --- q11: session windows, from scratch ------------------------------------
 *
 * Each bidder's bids' date_times sorted (bids at one time each count);
 * a session ends where the next time is 10,000 ms or more after the one
 * before: (bidder, bids, first time, last time + 10,000).
 */

#define EV_SESSION_GAP 10000

static struct sc_batch *
eval_q11(const struct events *e)
{
	size_t n = e->n[B];
	int64_t *bt = calloc(2 * n + 2, sizeof(*bt)); /* (bidder, time) */
	struct expect x;

	cr_assert(bt);
	for (size_t i = 0; i < n; i++) {
		bt[2 * i] = ev_i64(e, B, i, SC_NXB_BIDDER);
		bt[2 * i + 1] = ev_i64(e, B, i, SC_NXB_DATE_TIME);
	}
	qsort(bt, n, 2 * sizeof(*bt), cmp_pair);
	expect_init(&x, 4);
	for (size_t s = 0, j; s < n; s = j) {
		for (j = s + 1; j < n && bt[2 * j] == bt[2 * s] &&
				bt[2 * j + 1] - bt[2 * j - 1] < EV_SESSION_GAP;
		     j++)
			;
		{
			uint64_t o[4] = {
			    sc_enc_i64(bt[2 * s]), sc_enc_i64((int64_t)(j - s)),
			    sc_enc_i64(bt[2 * s + 1]),
			    sc_enc_i64(bt[2 * j - 1] + EV_SESSION_GAP)};

			expect_push(&x, o);
		}
	}
	free(bt);
	return expect_finish(&x);
}

/* --- q15, q16, q17: per-day counts, from scratch ---------------------------
 *
 * The day is DATE_FORMAT(date_time, 'yyyy-MM-dd') as the day's number
 * since 1970-01-01 UTC (floor of date_time / 86,400,000 ms); the minute
 * DATE_FORMAT's 'HH:mm' as the minute of that day. The bids are sorted
 * by their group, and each group's aggregates read off its run: the
 * distinct counts by sorting the values of the rows the filter passes.
 */

#define EV_DAY_MS 86400000

static int64_t
ev_day(int64_t t)
{
	return t >= 0 ? t / EV_DAY_MS : -((-t + EV_DAY_MS - 1) / EV_DAY_MS);
}

/* FILTER (WHERE price < 10000), (price >= 10000 AND price < 1000000),
 * (price >= 1000000): rank 1, 2 or 3. */
static int
ev_rank(int64_t price)
{
	if (price < 10000)
		return 1;
	return price < 1000000 ? 2 : 3;
}

/* A bid and its group: (k0, day), k0 a column's word (0 for q15). */
struct day_bid {
	uint64_t k0;
	int64_t day;
	size_t i;
};

static int
cmp_day_bid(const void *a, const void *b)
{
	const struct day_bid *x = a, *y = b;

	if (x->k0 != y->k0)
		return x->k0 < y->k0 ? -1 : 1;
	if (x->day != y->day)
		return x->day < y->day ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

/* The bids sorted by (column k0col's word, or 0 when k0col < 0; day). */
static struct day_bid *
ev_by_day(const struct events *e, int k0col)
{
	struct day_bid *g = calloc(e->n[B] + 1, sizeof(*g));

	cr_assert(g);
	for (size_t i = 0; i < e->n[B]; i++) {
		g[i].k0 = k0col < 0 ? 0 : ev_row(e, B, i)[k0col];
		g[i].day = ev_day(ev_i64(e, B, i, SC_NXB_DATE_TIME));
		g[i].i = i;
	}
	qsort(g, e->n[B], sizeof(*g), cmp_day_bid);
	return g;
}

static int
cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

/* COUNT(DISTINCT col) [FILTER (WHERE rank = rank)] over the group g[0..n)
 * (rank 0: every bid); tmp holds n values. */
static int64_t
ev_distinct(const struct events *e, const struct day_bid *g, size_t n, int col,
	    int rank, int64_t *tmp)
{
	size_t m = 0;
	int64_t d = 0;

	for (size_t j = 0; j < n; j++)
		if (rank == 0 ||
		    ev_rank(ev_i64(e, B, g[j].i, SC_NXB_PRICE)) == rank)
			tmp[m++] = ev_i64(e, B, g[j].i, col);
	qsort(tmp, m, sizeof(*tmp), cmp_i64);
	for (size_t j = 0; j < m; j++)
		d += j == 0 || tmp[j] != tmp[j - 1];
	return d;
}

/* q15's and q16's 12 counts of the group g[0..n) into o[0..12). */
static void
ev_rank_counts(const struct events *e, const struct day_bid *g, size_t n,
	       int64_t *tmp, uint64_t *o)
{
	int64_t bids[4] = {0};

	for (size_t j = 0; j < n; j++) {
		bids[0]++;
		bids[ev_rank(ev_i64(e, B, g[j].i, SC_NXB_PRICE))]++;
	}
	for (int r = 0; r < 4; r++) {
		o[r] = sc_enc_i64(bids[r]);
		o[4 + r] =
		    sc_enc_i64(ev_distinct(e, g, n, SC_NXB_BIDDER, r, tmp));
		o[8 + r] =
		    sc_enc_i64(ev_distinct(e, g, n, SC_NXB_AUCTION, r, tmp));
	}
}

/* The end of the group that starts at g[s]. */
static size_t
ev_group_end(const struct day_bid *g, size_t n, size_t s)
{
	size_t end = s;

	while (end < n && g[end].k0 == g[s].k0 && g[end].day == g[s].day)
		end++;
	return end;
}

static struct sc_batch *
eval_q15(const struct events *e)
{
	struct day_bid *g = ev_by_day(e, -1);
	int64_t *tmp = calloc(e->n[B] + 1, sizeof(*tmp));
	struct expect x;

	cr_assert(tmp);
	expect_init(&x, 13);
	for (size_t s = 0, end; s < e->n[B]; s = end) {
		uint64_t o[13] = {sc_enc_i64(g[s].day)};

		end = ev_group_end(g, e->n[B], s);
		ev_rank_counts(e, g + s, end - s, tmp, o + 1);
		expect_push(&x, o);
	}
	free(tmp);
	free(g);
	return expect_finish(&x);
}

static struct sc_batch *
eval_q16(const struct events *e)
{
	struct day_bid *g = ev_by_day(e, SC_NXB_CHANNEL);
	int64_t *tmp = calloc(e->n[B] + 1, sizeof(*tmp));
	struct expect x;

	cr_assert(tmp);
	expect_init(&x, 15);
	for (size_t s = 0, end; s < e->n[B]; s = end) {
		uint64_t o[15] = {g[s].k0, sc_enc_i64(g[s].day)};
		int64_t minute = -1;

		end = ev_group_end(g, e->n[B], s);
		for (size_t j = s; j < end; j++) {
			int64_t t = ev_i64(e, B, g[j].i, SC_NXB_DATE_TIME);
			int64_t m = (t - g[s].day * EV_DAY_MS) / 60000;

			minute = m > minute ? m : minute;
		}
		o[2] = sc_enc_i64(minute);
		ev_rank_counts(e, g + s, end - s, tmp, o + 3);
		expect_push(&x, o);
	}
	free(tmp);
	free(g);
	return expect_finish(&x);
}

static struct sc_batch *
eval_q17(const struct events *e)
{
	struct day_bid *g = ev_by_day(e, SC_NXB_AUCTION);
	struct expect x;

	expect_init(&x, 10);
	for (size_t s = 0, end; s < e->n[B]; s = end) {
		int64_t bids[4] = {0}, lo = INT64_MAX, hi = INT64_MIN, sum = 0;
		uint64_t o[10] = {g[s].k0, sc_enc_i64(g[s].day)};

		end = ev_group_end(g, e->n[B], s);
		for (size_t j = s; j < end; j++) {
			int64_t p = ev_i64(e, B, g[j].i, SC_NXB_PRICE);

			bids[0]++;
			bids[ev_rank(p)]++;
			lo = p < lo ? p : lo;
			hi = p > hi ? p : hi;
			sum += p;
		}
		for (int r = 0; r < 4; r++)
			o[2 + r] = sc_enc_i64(bids[r]);
		o[6] = sc_enc_i64(lo);
		o[7] = sc_enc_i64(hi);
		/* Both exact in a double: the quotient rounds once. */
		o[8] = sc_enc_f64((double)sum / (double)bids[0]);
		o[9] = sc_enc_i64(sum);
		expect_push(&x, o);
	}
	free(g);
	return expect_finish(&x);
}

static struct sc_batch *
eval_q9(const struct events *e)
{
	struct expect x;

	expect_init(&x, 11);
	for (size_t i = 0; i < e->n[A]; i++) {
		const uint64_t *a = ev_row(e, A, i);
		int64_t id = ev_i64(e, A, i, SC_NXA_ID), best = -1, first = 0;
		int64_t t0 = ev_i64(e, A, i, SC_NXA_DATE_TIME);
		int64_t t1 = ev_i64(e, A, i, SC_NXA_EXPIRES);

		/* the highest price, then the earliest time at it */
		for (int pass = 0; pass < 3; pass++) {
			for (size_t j = 0; j < e->n[B]; j++) {
				const uint64_t *b = ev_row(e, B, j);
				int64_t t = ev_i64(e, B, j, SC_NXB_DATE_TIME);
				int64_t p = ev_i64(e, B, j, SC_NXB_PRICE);
				uint64_t o[11] = {
				    a[SC_NXA_ID],	   a[SC_NXA_ITEM_NAME],
				    a[SC_NXA_SELLER],	   a[SC_NXA_CATEGORY],
				    a[SC_NXA_INITIAL_BID], a[SC_NXA_RESERVE],
				    a[SC_NXA_DATE_TIME],   a[SC_NXA_EXPIRES],
				    b[SC_NXB_BIDDER],	   b[SC_NXB_PRICE],
				    b[SC_NXB_DATE_TIME]};

				if (ev_i64(e, B, j, SC_NXB_AUCTION) != id ||
				    t < t0 || t > t1)
					continue;
				if (pass == 0 && p > best)
					best = p;
				else if (pass == 1 && p == best &&
					 (first == 0 || t < first))
					first = t;
				else if (pass == 2 && p == best && t == first)
					expect_push(&x, o);
			}
		}
	}
	return expect_finish(&x);
}

static struct sc_batch *
eval_q18(const struct events *e)
{
	struct expect x;

	expect_init(&x, 7);
	for (size_t i = 0; i < e->n[B]; i++) {
		int64_t t = ev_i64(e, B, i, SC_NXB_DATE_TIME);
		bool latest = true;

		for (size_t j = 0; j < e->n[B] && latest; j++)
			latest = !(ev_i64(e, B, j, SC_NXB_BIDDER) ==
				       ev_i64(e, B, i, SC_NXB_BIDDER) &&
				   ev_i64(e, B, j, SC_NXB_AUCTION) ==
				       ev_i64(e, B, i, SC_NXB_AUCTION) &&
				   ev_i64(e, B, j, SC_NXB_DATE_TIME) > t);
		if (latest)
			expect_push(&x, ev_row(e, B, i));
	}
	return expect_finish(&x);
}

static struct sc_batch *
eval_q19(const struct events *e)
{
	struct expect x;

	expect_init(&x, 7);
	for (size_t i = 0; i < e->n[B]; i++) {
		int64_t p = ev_i64(e, B, i, SC_NXB_PRICE), higher = 0;

		/* rank = 1 + the bids of the auction priced strictly higher */
		for (size_t j = 0; j < e->n[B]; j++)
			higher += ev_i64(e, B, j, SC_NXB_AUCTION) ==
				      ev_i64(e, B, i, SC_NXB_AUCTION) &&
				  ev_i64(e, B, j, SC_NXB_PRICE) > p;
		if (1 + higher <= 10)
			expect_push(&x, ev_row(e, B, i));
	}
	return expect_finish(&x);
}

/* --- the checks -------------------------------------------------------------
 */

/* The events of one case: count and the gap (a larger gap spreads them
 * over more windows). */
struct nx_case {
	uint64_t seed;
	size_t events;
	uint64_t gap_us;
	size_t chunk;	      /* events per submission chunk */
	uint64_t disorder_ms; /* the generator's disorder (0: in order) */
	uint32_t pool;	      /* string_pool (0: fresh texts, the default) */
};

static void
case_opts(const struct nx_case *c, struct sc_nexmark_opts *o)
{
	sc_nexmark_opts_default(o);
	o->seed = c->seed;
	o->gap_us = c->gap_us;
	o->disorder_ms = c->disorder_ms;
	o->string_pool = c->pool;
}

/* How single_run builds and runs the query. */
struct run_how {
	int64_t lateness; /* < 0: none declared */
	bool cleanup;	  /* with a lateness: cleanup on */
	size_t kept_rows; /* out: rows the circuit keeps at the end */
};

/* The single circuit's settled output of query `name` on case c, built
 * and run as *how says, with the events decoded into *e (same seed, a
 * table of their own). */
static struct sc_batch *
single_run(const char *name, const struct nx_case *c, struct events *e,
	   struct run_how *how)
{
	struct sc_nexmark_opts o;
	struct sc_nexmark_query_opts qo;
	struct sc_nexmark_query *q = NULL;
	struct sc_nexmark *nx = NULL;
	struct sc_circuit *cir = NULL;
	struct sc_batch *got = NULL;
	struct sc_nexmark_feed f;
	struct sc_node_state kept;
	size_t steps;

	case_opts(c, &o);
	events_make(e, &o, c->events);
	e->chunk = c->chunk;
	/* The same table: the generator interns the same texts again and
	 * gets the ids the decoded events hold. */
	sc_nexmark_query_opts_default(&qo);
	qo.lateness_ms = how->lateness;
	cr_assert_eq(sc_nexmark_query_create_opts(name, e->t, &qo, &q), 0, "%s",
		     sc_errmsg());
	cr_assert_eq(sc_nexmark_create(&o, e->t, &nx), 0);
	memset(&f, 0, sizeof(f));
	f.nx = nx;
	f.q = q;
	f.events = c->chunk;
	steps = sc_nexmark_feed_steps(&f, c->events);
	cr_assert_eq(sc_circuit_create(sc_nexmark_query_graph(q), &cir), 0);
	if (how->lateness >= 0)
		cr_assert_eq(sc_circuit_set_cleanup(cir, how->cleanup), 0);
	for (size_t i = 0; i < steps; i++) {
		struct sc_settle_step st;

		cr_assert_eq(sc_nexmark_settle_step(&f, i, &st), 0);
		cr_assert_eq(sc_circuit_feed(cir, st.input, st.batch), 0, "%s",
			     sc_errmsg());
		sc_batch_release(st.batch);
		cr_assert_eq(sc_circuit_step(cir), 0, "%s", sc_errmsg());
	}
	cr_assert_eq(sc_nexmark_count(nx), c->events);
	cr_assert_eq(sc_circuit_integral(cir, sc_nexmark_query_output(q), &got),
		     0);
	cr_assert_eq(sc_circuit_state(cir, &kept), 0);
	how->kept_rows = kept.rows;
	/* The output's ids outlive the circuit, as the events' do, so that an
	 * evaluation interning a text the query made finds the same id. */
	{
		struct sc_node_info ni;

		cr_assert_eq(sc_graph_node_info(sc_nexmark_query_graph(q),
						sc_nexmark_query_output(q),
						&ni),
			     0);
		for (size_t i = 0; i < sc_batch_count(got); i++)
			for (uint32_t col = 0; col < ni.schema->ncols; col++)
				if (ni.schema->types[col] == SC_TYPE_SYMBOL)
					cr_assert_eq(
					    sc_symtab_retain(
						e->t,
						sc_batch_row(got, i)[col]),
					    0);
	}
	sc_nexmark_feed_fini(&f);
	sc_circuit_destroy(cir);
	sc_nexmark_destroy(nx);
	cr_assert_eq(sc_nexmark_query_destroy(q), 0);
	return got;
}

static struct sc_batch *
single_output(const char *name, const struct nx_case *c, struct events *e)
{
	struct run_how how = {-1, true, 0};

	return single_run(name, c, e, &how);
}

typedef struct sc_batch *(*eval_fn)(const struct events *e);

static void
assert_same(const struct sc_batch *got, const struct sc_batch *want,
	    const char *what)
{
	if (sc_batch_equal(got, want))
		return;
	(void)fprintf(stderr, "%s: got\n", what);
	sc_batch_fprint(stderr, got, NULL);
	(void)fprintf(stderr, "want\n");
	sc_batch_fprint(stderr, want, NULL);
	cr_assert_fail("%s: %zu rows, want %zu", what, sc_batch_count(got),
		       sc_batch_count(want));
}

/* The single circuit equals the evaluation on each case, and the
 * evaluation is not empty (else the check says nothing). */
static void
check_cases(const char *name, eval_fn eval, const struct nx_case *cases,
	    size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct events e;
		struct sc_batch *got = single_output(name, &cases[i], &e);
		struct sc_batch *want = eval(&e);
		char what[128];

		(void)snprintf(
		    what, sizeof(what), "%s seed %llu disorder %llu pool %u",
		    name, (unsigned long long)cases[i].seed,
		    (unsigned long long)cases[i].disorder_ms, cases[i].pool);
		cr_assert_gt(sc_batch_count(want), 0, "%s: empty", what);
		assert_same(got, want, what);
		sc_batch_release(got);
		sc_batch_release(want);
		events_free(&e);
	}
}

/* Several seeds and sizes, events in order. */
static void
check_query_equals_its_sql(const char *name, eval_fn eval)
{
	const struct nx_case cases[] = {
	    {sc_prop_seed(1), 3000, 100, 500, 0, 0},
	    {sc_prop_seed(1) + 1, 5000, 10000, 250, 0, 0},
	    {sc_prop_seed(1) + 2, 4000, 3000, 1000, 0, 0},
	    {sc_prop_seed(1) + 3, 3000, 1000, 500, 0, 32},
	};

	check_cases(name, eval, cases, sizeof(cases) / sizeof(cases[0]));
}

/* Events out of order by up to a window (10 s) or a fraction of one, and
 * by more than an auction's life: the evaluation reads the rows as they
 * are, so the query is the same SQL on disordered events. */
static void
check_query_equals_its_sql_disordered(const char *name, eval_fn eval)
{
	const struct nx_case cases[] = {
	    {sc_prop_seed(11), 3000, 100, 500, 50, 0},
	    {sc_prop_seed(11) + 1, 5000, 10000, 250, 10000, 0},
	    {sc_prop_seed(11) + 2, 4000, 3000, 1000, 2500, 0},
	    {sc_prop_seed(11) + 3, 3000, 1000, 500, 1000, 32},
	};

	check_cases(name, eval, cases, sizeof(cases) / sizeof(cases[0]));
}

/* The settle check's extra verification: the placed output is the SQL's. */
static int
verify_against(void *ctx, int output, const struct sc_batch *got)
{
	(void)output;
	if (sc_batch_equal(got, ctx))
		return 0;
	return sc_errorf(SC_ESTATE, "placed output is not the SQL's");
}

/* Every strategy on 1..4 units (the seeded scheduler), and a pool of 2
 * and 4 workers: each settles where the single circuit does, on the
 * evaluation. */
static void
check_case_settles_under_every_placement(const char *name, eval_fn eval,
					 const struct nx_case c)
{
	static const char *const places[] = {
	    "single",	 "per-node",  "chains",	    "random:3",
	    "sharded:2", "sharded:3", "balanced:2", "balanced:3"};
	struct sc_nexmark_opts o;
	struct sc_nexmark_query *q = NULL;
	struct sc_nexmark *nx = NULL;
	struct sc_settle_work *w = NULL;
	struct sc_nexmark_feed f;
	struct sc_batch *want;
	struct events e;

	case_opts(&c, &o);
	events_make(&e, &o, c.events);
	e.chunk = c.chunk;
	want = eval(&e);
	cr_assert_eq(sc_nexmark_query_create(name, e.t, 0, &q), 0);
	cr_assert_eq(sc_nexmark_create(&o, e.t, &nx), 0);
	memset(&f, 0, sizeof(f));
	f.nx = nx;
	f.q = q;
	f.events = c.chunk;
	cr_assert_eq(sc_settle_work_generate(
			 sc_nexmark_query_graph(q), sc_nexmark_settle_step, &f,
			 sc_nexmark_feed_steps(&f, c.events), 0, &w),
		     0, "%s", sc_errmsg());
	for (size_t pi = 0; pi < sizeof(places) / sizeof(places[0]); pi++) {
		struct sc_placement *p = NULL;

		cr_assert_eq(sc_placement_parse(sc_nexmark_query_graph(q),
						places[pi], 3, &p),
			     0, "%s: %s", places[pi], sc_errmsg());
		for (uint32_t units = 1; units <= 4; units++) {
			for (int mode = 0; mode < 2; mode++) {
				struct sc_settle_opts so = {
				    .mode =
					mode ? SC_SETTLE_POOL : SC_SETTLE_SIM,
				    .seed = (uint64_t)units * 7 + pi,
				    .units = units,
				    .verify = verify_against,
				    .verify_ctx = want};
				struct sc_settle_result r;

				if (mode && units % 2)
					continue; /* pools of 2 and 4 */
				cr_assert_eq(sc_settle_run(w, p, &so, &r), 0,
					     "%s", r.why);
				cr_assert(r.ok, "%s %s on %u (%s): %s\n%s",
					  name, places[pi], units,
					  mode ? "pool" : "sim", r.why,
					  r.replay);
				sc_settle_result_fini(&r);
			}
		}
		sc_placement_destroy(p);
	}
	sc_settle_work_destroy(w);
	sc_nexmark_feed_fini(&f);
	sc_nexmark_destroy(nx);
	cr_assert_eq(sc_nexmark_query_destroy(q), 0);
	sc_batch_release(want);
	events_free(&e);
}

static void
check_query_settles_under_every_placement(const char *name, eval_fn eval)
{
	const struct nx_case c = {sc_prop_seed(5), 2500, 4000, 250, 0, 0};

	check_case_settles_under_every_placement(name, eval, c);
}

Test(nexmark, q0_equals_its_sql_evaluated_from_scratch)
{
	check_query_equals_its_sql("q0", eval_q0);
}

Test(nexmark, q0_settles_under_every_placement_on_1_to_4_units)
{
	check_query_settles_under_every_placement("q0", eval_q0);
}

Test(nexmark, q1_equals_its_sql_evaluated_from_scratch)
{
	check_query_equals_its_sql("q1", eval_q1);
}

Test(nexmark, q1_settles_under_every_placement_on_1_to_4_units)
{
	check_query_settles_under_every_placement("q1", eval_q1);
}

Test(nexmark, q2_equals_its_sql_evaluated_from_scratch)
{
	check_query_equals_its_sql("q2", eval_q2);
}

Test(nexmark, q2_settles_under_every_placement_on_1_to_4_units)
{
	check_query_settles_under_every_placement("q2", eval_q2);
}

Test(nexmark, q3_equals_its_sql_evaluated_from_scratch)
{
	check_query_equals_its_sql("q3", eval_q3);
}

Test(nexmark, q3_settles_under_every_placement_on_1_to_4_units)
{
	check_query_settles_under_every_placement("q3", eval_q3);
}

Test(nexmark, q4_equals_its_sql_evaluated_from_scratch)
{
	check_query_equals_its_sql("q4", eval_q4);
}

Test(nexmark, q4_settles_under_every_placement_on_1_to_4_units)
{
	check_query_settles_under_every_placement("q4", eval_q4);
}

Test(nexmark, q5_equals_its_sql_evaluated_from_scratch)
{
	check_query_equals_its_sql("q5", eval_q5);
}

Test(nexmark, q5_settles_under_every_placement_on_1_to_4_units)
{
	check_query_settles_under_every_placement("q5", eval_q5);
}

Test(nexmark, q6_equals_its_sql_evaluated_from_scratch)
{
	check_query_equals_its_sql("q6", eval_q6);
}

Test(nexmark, q6_settles_under_every_placement_on_1_to_4_units)
{
	check_query_settles_under_every_placement("q6", eval_q6);
}

Test(nexmark, q7_equals_its_sql_evaluated_from_scratch)
{
	check_query_equals_its_sql("q7", eval_q7);
}

Test(nexmark, q7_settles_under_every_placement_on_1_to_4_units)
{
	check_query_settles_under_every_placement("q7", eval_q7);
}

Test(nexmark, q8_equals_its_sql_evaluated_from_scratch)
{
	check_query_equals_its_sql("q8", eval_q8);
}

Test(nexmark, q8_settles_under_every_placement_on_1_to_4_units)
{
	check_query_settles_under_every_placement("q8", eval_q8);
}

Test(nexmark, q20_equals_its_sql_evaluated_from_scratch)
{
	check_query_equals_its_sql("q20", eval_q20);
}

Test(nexmark, q20_settles_under_every_placement_on_1_to_4_units)
{
	check_query_settles_under_every_placement("q20", eval_q20);
}

Test(nexmark, q12_equals_its_sql_evaluated_from_scratch)
{
	check_query_equals_its_sql("q12", eval_q12);
}

Test(nexmark, q12_settles_under_every_placement_on_1_to_4_units)
{
	check_query_settles_under_every_placement("q12", eval_q12);
}

/* With a lateness declared, p_time's waterline (a lateness of 0: the
 * clock never goes back) closes the windows: cleanup keeps the open
 * window's counts alone, and the output is the same. */
Test(nexmark, q12_with_lateness_keeps_only_the_open_windows)
{
	const struct nx_case c = {sc_prop_seed(6), 40000, 100, 500, 0, 0};
	struct run_how on = {4000, true, 0}, off = {4000, false, 0};
	struct events e1, e2;
	struct sc_batch *a = single_run("q12", &c, &e1, &on);
	struct sc_batch *b = single_run("q12", &c, &e2, &off);
	struct sc_batch *want = eval_q12(&e1);

	assert_same(a, want, "q12 with cleanup");
	sc_batch_release(want);
	want = eval_q12(&e2);
	assert_same(b, want, "q12 without cleanup");
	/* The output's integral is kept either way; the state besides. */
	cr_assert_lt((on.kept_rows - sc_batch_count(a)) * 4,
		     off.kept_rows - sc_batch_count(b),
		     "cleanup kept %zu rows of %zu (output %zu)",
		     (size_t)on.kept_rows, (size_t)off.kept_rows,
		     sc_batch_count(a));
	sc_batch_release(want);
	sc_batch_release(a);
	sc_batch_release(b);
	events_free(&e1);
	events_free(&e2);
}

/* A chunk's bids carry the clock's reading; other queries' batches and a
 * chunk without bids are left as they are. */
Test(nexmark, stamping_appends_the_reading_to_q12s_bids_alone)
{
	struct sc_symtab *t = NULL;
	struct sc_nexmark_query *q12 = NULL, *q0 = NULL;
	struct sc_nexmark *nx = NULL;
	struct sc_nexmark_opts o;
	struct sc_batch *ready[SC_NEXMARK_KINDS] = {NULL}, *bids;

	cr_assert_eq(sc_symtab_create(&t), 0);
	cr_assert_eq(sc_nexmark_query_create("q12", t, 0, &q12), 0);
	cr_assert_eq(sc_nexmark_query_create("q0", t, 0, &q0), 0);
	cr_assert(sc_nexmark_query_proctime(q12));
	cr_assert(!sc_nexmark_query_proctime(q0));
	{ /* the bids' columns, then p_time */
		const char *const *a, *const *b;

		cr_assert_eq(sc_nexmark_query_input_columns(q12, B, &a),
			     SC_NXB_NCOLS + 1);
		cr_assert_eq(sc_nexmark_query_input_columns(q0, B, &b),
			     SC_NXB_NCOLS);
		for (int c = 0; c < SC_NXB_NCOLS; c++)
			cr_assert_str_eq(a[c], b[c]);
		cr_assert_str_eq(a[SC_NXB_P_TIME], "p_time");
	}
	sc_nexmark_opts_default(&o);
	cr_assert_eq(sc_nexmark_create(&o, t, &nx), 0);
	cr_assert_eq(sc_nexmark_batches(nx, 100, ready), 0);
	bids = ready[B];
	sc_batch_retain(bids);
	cr_assert_eq(sc_nexmark_query_stamp(q0, ready, 5), 0);
	cr_assert_eq(ready[B], bids, "q0's bids untouched");
	cr_assert_eq(sc_nexmark_query_stamp(q12, ready, 123456), 0);
	cr_assert_eq(sc_batch_ncols(ready[B]), SC_NXB_NCOLS + 1);
	cr_assert_eq(sc_batch_count(ready[B]), sc_batch_count(bids));
	for (size_t i = 0; i < sc_batch_count(bids); i++) {
		cr_assert_eq(memcmp(sc_batch_row(ready[B], i),
				    sc_batch_row(bids, i),
				    (size_t)SC_NXB_NCOLS * 8),
			     0);
		cr_assert_eq(sc_batch_row(ready[B], i)[SC_NXB_P_TIME],
			     sc_enc_i64(123456));
	}
	cr_assert_eq(sc_nexmark_query_stamp(q12, ready, 1), SC_ESCHEMA,
		     "stamped twice");
	for (int k = 0; k < SC_NEXMARK_KINDS; k++)
		sc_batch_release(ready[k]);
	sc_batch_release(bids);
	sc_nexmark_destroy(nx);
	cr_assert_eq(sc_nexmark_query_destroy(q0), 0);
	cr_assert_eq(sc_nexmark_query_destroy(q12), 0);
	sc_symtab_destroy(t);
}

Test(nexmark, q13_equals_its_sql_evaluated_from_scratch)
{
	check_query_equals_its_sql("q13", eval_q13);
}

Test(nexmark, q13_settles_under_every_placement_on_1_to_4_units)
{
	check_query_settles_under_every_placement("q13", eval_q13);
}

/* A side input file that cannot be read is SC_EIO, one that is not
 * key,value CSV SC_EINVAL naming its line and column: no query either
 * way, and no text of the file left interned. */
Test(nexmark, q13_refuses_a_side_input_it_cannot_read_and_creates_nothing)
{
	char path[] = "/tmp/sc_q13_side_XXXXXX";
	struct sc_nexmark_query_opts o;
	struct sc_symtab *t = NULL;
	struct sc_nexmark_query *q = NULL;
	int fd = mkstemp(path);
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;

	cr_assert(f);
	(void)fputs("key,value\n1,\"one\"\n2,two,2\n", f);
	cr_assert_eq(fclose(f), 0);
	cr_assert_eq(sc_symtab_create(&t), 0);
	sc_nexmark_query_opts_default(&o);
	o.side_input = path;
	cr_assert_eq(sc_nexmark_query_create_opts("q13", t, &o, &q), SC_EINVAL);
	cr_assert(strstr(sc_errmsg(), path) && strstr(sc_errmsg(), ":3:"), "%s",
		  sc_errmsg());
	cr_assert_null(q);
	cr_assert_eq(sc_symtab_count(t), 0, "texts left interned");
	(void)unlink(path);
	cr_assert_eq(sc_nexmark_query_create_opts("q13", t, &o, &q), SC_EIO);
	cr_assert(strstr(sc_errmsg(), "cannot read"), "%s", sc_errmsg());
	cr_assert_null(q);
	sc_symtab_destroy(t);
}

/* The node holds the side input's texts until the query goes. */
Test(nexmark, q13_holds_its_side_inputs_texts_until_destroyed)
{
	struct sc_symtab *t = NULL;
	struct sc_nexmark_query *q = NULL;
	uint64_t id;

	cr_assert_eq(sc_symtab_create(&t), 0);
	cr_assert_eq(sc_nexmark_query_create("q13", t, 0, &q), 0, "%s",
		     sc_errmsg());
	cr_assert_eq(sc_symtab_count(t), 10000);
	cr_assert_eq(sc_symtab_find(t, "9999", 4, &id), 0);
	cr_assert_eq(sc_symtab_refs(t, id), 1);
	cr_assert_eq(sc_nexmark_query_destroy(q), 0);
	cr_assert_eq(sc_symtab_count(t), 0);
	sc_symtab_destroy(t);
}

Test(nexmark, q10_equals_its_sql_evaluated_from_scratch)
{
	check_query_equals_its_sql("q10", eval_q10);
}

/* Query q over events a minute (and 97 s) apart, which span two days:
 * every hour and every minute of a day, from seed on. */
static void
check_two_days(const char *q, eval_fn eval, uint64_t seed)
{
	const struct nx_case cases[] = {
	    {seed, 3000, 60000000, 500, 0, 0},
	    {seed + 1, 2000, 97000000, 250, 0, 32},
	};

	check_cases(q, eval, cases, sizeof(cases) / sizeof(cases[0]));
}

/* Every minute's partition. */
Test(nexmark, q10_names_the_day_and_minute_of_every_bid)
{
	check_two_days("q10", eval_q10, sc_prop_seed(10));
}

Test(nexmark, q10_settles_under_every_placement_on_1_to_4_units)
{
	check_query_settles_under_every_placement("q10", eval_q10);
}

Test(nexmark, q14_equals_its_sql_evaluated_from_scratch)
{
	check_query_equals_its_sql("q14", eval_q14);
}

/* Every hour's time of day. */
Test(nexmark, q14_names_the_time_of_day_of_every_hour)
{
	check_two_days("q14", eval_q14, sc_prop_seed(3));
}

Test(nexmark, q14_settles_under_every_placement_on_1_to_4_units)
{
	check_query_settles_under_every_placement("q14", eval_q14);
}

Test(nexmark, q21_equals_its_sql_evaluated_from_scratch)
{
	check_query_equals_its_sql("q21", eval_q21);
}

Test(nexmark, q21_settles_under_every_placement_on_1_to_4_units)
{
	check_query_settles_under_every_placement("q21", eval_q21);
}

Test(nexmark, q22_equals_its_sql_evaluated_from_scratch)
{
	check_query_equals_its_sql("q22", eval_q22);
}

Test(nexmark, q22_settles_under_every_placement_on_1_to_4_units)
{
	check_query_settles_under_every_placement("q22", eval_q22);
}

Test(nexmark, q23_equals_its_sql_evaluated_from_scratch)
{
	check_query_equals_its_sql("q23", eval_q23);
}

Test(nexmark, q23_settles_under_every_placement_on_1_to_4_units)
{
	check_query_settles_under_every_placement("q23", eval_q23);
}

/* Events a minute and more apart span two to three days (the cases of
 * check_query_equals_its_sql all fall within the first): a group per day,
 * each day's minutes 0 to 1439. */
static void
check_query_over_several_days(const char *name, eval_fn eval)
{
	const struct nx_case several_days[] = {
	    {sc_prop_seed(7), 3000, 60000000, 500, 0, 0},
	    {sc_prop_seed(7) + 1, 2000, 97000000, 250, 0, 32},
	};
	const size_t n = sizeof(several_days) / sizeof(several_days[0]);

	for (size_t i = 0; i < n; i++) {
		struct sc_nexmark_opts o;
		struct events e;

		case_opts(&several_days[i], &o);
		events_make(&e, &o, several_days[i].events);
		cr_assert_geq(
		    ev_day(ev_i64(&e, B, e.n[B] - 1, SC_NXB_DATE_TIME)) -
			ev_day(ev_i64(&e, B, 0, SC_NXB_DATE_TIME)),
		    2, "case %zu spans three days", i);
		events_free(&e);
	}
	check_cases(name, eval, several_days, n);
}

Test(nexmark, q15_equals_its_sql_evaluated_from_scratch)
{
	check_query_equals_its_sql("q15", eval_q15);
}

Test(nexmark, q15_counts_each_of_several_days_apart)
{
	check_query_over_several_days("q15", eval_q15);
}

Test(nexmark, q15_settles_under_every_placement_on_1_to_4_units)
{
	check_query_settles_under_every_placement("q15", eval_q15);
}

Test(nexmark, q16_equals_its_sql_evaluated_from_scratch)
{
	check_query_equals_its_sql("q16", eval_q16);
}

Test(nexmark, q16_counts_each_of_several_days_apart)
{
	check_query_over_several_days("q16", eval_q16);
}

Test(nexmark, q16_settles_under_every_placement_on_1_to_4_units)
{
	check_query_settles_under_every_placement("q16", eval_q16);
}

Test(nexmark, q17_equals_its_sql_evaluated_from_scratch)
{
	check_query_equals_its_sql("q17", eval_q17);
}

Test(nexmark, q17_counts_each_of_several_days_apart)
{
	check_query_over_several_days("q17", eval_q17);
}

Test(nexmark, q17_settles_under_every_placement_on_1_to_4_units)
{
	check_query_settles_under_every_placement("q17", eval_q17);
}

Test(nexmark, q11_equals_its_sql_evaluated_from_scratch)
{
	check_query_equals_its_sql("q11", eval_q11);
}

Test(nexmark, q11_settles_under_every_placement_on_1_to_4_units)
{
	check_query_settles_under_every_placement("q11", eval_q11);
}

/* Sessions of the evaluation beyond one per bidder: how many bidders
 * have two sessions or more. */
static size_t
bidders_with_several_sessions(const struct sc_batch *want)
{
	size_t n = 0;

	for (size_t i = 1; i < sc_batch_count(want); i++)
		n += sc_batch_row(want, i)[0] == sc_batch_row(want, i - 1)[0] &&
		     (i < 2 ||
		      sc_batch_row(want, i - 2)[0] != sc_batch_row(want, i)[0]);
	return n;
}

/* Events 20 to 40 ms apart (80 to 120 s of event time): a bidder
 * that is not hot bids every few seconds, so its bids fall into several
 * sessions (at least 10 bidders have two or more), in order and out of
 * order by up to 9 s (a late bid may land between two sessions and merge
 * them); the cases of check_query_equals_its_sql mostly give a bidder
 * one. Single, and placed on the disordered case. */
Test(nexmark, q11_splits_spread_bids_into_sessions_as_its_sql)
{
	const struct nx_case spread[] = {
	    {sc_prop_seed(13), 4000, 20000, 250, 0, 0},
	    {sc_prop_seed(13) + 1, 3000, 40000, 100, 0, 0},
	    {sc_prop_seed(13) + 2, 4000, 20000, 250, 9000, 0},
	    {sc_prop_seed(13) + 3, 2000, 40000, 500, 3000, 32},
	};
	const size_t n = sizeof(spread) / sizeof(spread[0]);

	for (size_t i = 0; i < n; i++) {
		struct sc_nexmark_opts o;
		struct events e;
		struct sc_batch *want;

		case_opts(&spread[i], &o);
		events_make(&e, &o, spread[i].events);
		want = eval_q11(&e);
		cr_assert_geq(bidders_with_several_sessions(want), 10,
			      "case %zu: %zu bidders with several sessions", i,
			      bidders_with_several_sessions(want));
		sc_batch_release(want);
		events_free(&e);
	}
	check_cases("q11", eval_q11, spread, n);
	check_case_settles_under_every_placement("q11", eval_q11, spread[2]);
}

Test(nexmark, q9_equals_its_sql_evaluated_from_scratch)
{
	check_query_equals_its_sql("q9", eval_q9);
}

Test(nexmark, q9_settles_under_every_placement_on_1_to_4_units)
{
	check_query_settles_under_every_placement("q9", eval_q9);
}

Test(nexmark, q18_equals_its_sql_evaluated_from_scratch)
{
	check_query_equals_its_sql("q18", eval_q18);
}

Test(nexmark, q18_settles_under_every_placement_on_1_to_4_units)
{
	check_query_settles_under_every_placement("q18", eval_q18);
}

Test(nexmark, q19_equals_its_sql_evaluated_from_scratch)
{
	check_query_equals_its_sql("q19", eval_q19);
}

Test(nexmark, q19_settles_under_every_placement_on_1_to_4_units)
{
	check_query_settles_under_every_placement("q19", eval_q19);
}

/* Events made by hand, with the ties the generator's prices almost never
 * have. Auction 1000 lives [100, 200]: three bids at its highest price
 * within its life, two of them the earliest (bidders 2 and 3), a higher
 * one before its start and one after its end. Auction 1001: three bids
 * at 100 and eight at 90 (all ranked 4: the ten highest hold eleven
 * rows) and one at 80 (rank 12). */
static void
events_by_hand(struct events *e)
{
	static const int64_t bids[][4] = {
	    /* auction, bidder, price, time */
	    {1000, 1, 50, 120},	 {1000, 2, 50, 110},  {1000, 3, 50, 110},
	    {1000, 4, 40, 105},	 {1000, 5, 60, 250},  {1000, 6, 60, 90},
	    {1001, 1, 100, 101}, {1001, 2, 100, 102}, {1001, 3, 100, 103},
	    {1001, 1, 90, 104},	 {1001, 2, 90, 105},  {1001, 3, 90, 106},
	    {1001, 4, 90, 107},	 {1001, 5, 90, 108},  {1001, 6, 90, 109},
	    {1001, 7, 90, 110},	 {1001, 8, 90, 111},  {1001, 9, 80, 112},
	    {1001, 1, 95, 113},	 {1001, 1, 95, 113}};
	const size_t nb = sizeof(bids) / sizeof(bids[0]);
	uint64_t sym;

	memset(e, 0, sizeof(*e));
	cr_assert_eq(sc_symtab_create(&e->t), 0);
	cr_assert_eq(sc_symtab_intern_cstr(e->t, "x", &sym), 0);
	for (int k = 0; k < SC_NEXMARK_KINDS; k++)
		e->rows[k] = calloc(nb * sc_nexmark_ncols(k) + 1, 8);
	for (int i = 0; i < 2; i++) {
		uint64_t *a = e->rows[A] + (size_t)i * SC_NXA_NCOLS;

		a[SC_NXA_ID] = sc_enc_i64(1000 + i);
		a[SC_NXA_ITEM_NAME] = a[SC_NXA_DESCRIPTION] = sym;
		a[SC_NXA_EXTRA] = sym;
		a[SC_NXA_INITIAL_BID] = sc_enc_i64(1);
		a[SC_NXA_RESERVE] = sc_enc_i64(2);
		a[SC_NXA_DATE_TIME] = sc_enc_i64(100);
		a[SC_NXA_EXPIRES] = sc_enc_i64(i ? 150 : 200);
		a[SC_NXA_SELLER] = sc_enc_i64(7);
		a[SC_NXA_CATEGORY] = sc_enc_i64(10);
	}
	e->n[A] = 2;
	for (size_t i = 0; i < nb; i++) {
		uint64_t *b = e->rows[B] + i * SC_NXB_NCOLS;

		b[SC_NXB_AUCTION] = sc_enc_i64(bids[i][0]);
		b[SC_NXB_BIDDER] = sc_enc_i64(bids[i][1]);
		b[SC_NXB_PRICE] = sc_enc_i64(bids[i][2]);
		b[SC_NXB_DATE_TIME] = sc_enc_i64(bids[i][3]);
		b[SC_NXB_CHANNEL] = b[SC_NXB_URL] = b[SC_NXB_EXTRA] = sym;
	}
	e->n[B] = nb;
}

/* The single circuit of query `name` fed e's rows (one step per
 * stream), settled. */
static struct sc_batch *
single_of_events(const char *name, const struct events *e)
{
	struct sc_nexmark_query *q = NULL;
	struct sc_circuit *c = NULL;
	struct sc_batch *got = NULL;

	cr_assert_eq(sc_nexmark_query_create(name, e->t, 0, &q), 0);
	cr_assert_eq(sc_circuit_create(sc_nexmark_query_graph(q), &c), 0);
	for (int k = 0; k < SC_NEXMARK_KINDS; k++) {
		struct sc_batch *b = NULL;
		int in = sc_nexmark_query_input(q, k);

		if (in < 0 || !e->n[k])
			continue;
		cr_assert_eq(sc_batch_from_records(sc_nexmark_ncols(k),
						   e->rows[k], NULL, e->n[k],
						   &b),
			     0);
		cr_assert_eq(sc_circuit_feed(c, in, b), 0);
		sc_batch_release(b);
		cr_assert_eq(sc_circuit_step(c), 0, "%s", sc_errmsg());
	}
	cr_assert_eq(sc_circuit_integral(c, sc_nexmark_query_output(q), &got),
		     0);
	sc_circuit_destroy(c);
	cr_assert_eq(sc_nexmark_query_destroy(q), 0);
	return got;
}

/* Rows of `b` whose column `col` is `v`, counted with their weights. */
static int64_t
rows_with(const struct sc_batch *b, uint32_t col, int64_t v)
{
	int64_t n = 0;

	for (size_t i = 0; i < sc_batch_count(b); i++)
		if (sc_dec_i64(sc_batch_row(b, i)[col]) == v)
			n += sc_batch_weight(b, i);
	return n;
}

Test(nexmark, q9_keeps_every_tied_winner_and_only_the_earliest)
{
	struct events e;
	struct sc_batch *got, *want;

	events_by_hand(&e);
	got = single_of_events("q9", &e);
	want = eval_q9(&e);
	assert_same(got, want, "q9 by hand");
	/* auction 1000: bidders 2 and 3 at 50, time 110 */
	cr_assert_eq(rows_with(got, 0, 1000), 2);
	for (size_t i = 0; i < sc_batch_count(got); i++)
		cr_assert(sc_dec_i64(sc_batch_row(got, i)[0]) != 1000 ||
			      sc_dec_i64(sc_batch_row(got, i)[8]) != 1,
			  "bidder 1 bid 50 on 1000 later than 2 and 3");
	/* auction 1001 (life [100, 150]): its three bids at 100, of which
	 * bidder 1's at 101 is the earliest */
	cr_assert_eq(rows_with(got, 0, 1001), 1);
	sc_batch_release(got);
	sc_batch_release(want);
	events_free(&e);
}

Test(nexmark, q19_keeps_every_bid_tied_at_the_tenth_rank)
{
	struct events e;
	struct sc_batch *got, *want;

	events_by_hand(&e);
	got = single_of_events("q19", &e);
	want = eval_q19(&e);
	assert_same(got, want, "q19 by hand");
	/* 1001: three at 100, two (one row of weight 2) at 95 ranked 4,
	 * eight at 90 ranked 6: thirteen bids, none at 80 */
	cr_assert_eq(rows_with(got, 0, 1001), 13);
	cr_assert_eq(rows_with(got, 2, 80), 0);
	cr_assert_eq(rows_with(got, 0, 1000), 6);
	sc_batch_release(got);
	sc_batch_release(want);
	events_free(&e);
}

Test(nexmark, q18_keeps_every_bid_at_the_latest_time)
{
	struct events e;
	struct sc_batch *got, *want;

	events_by_hand(&e);
	got = single_of_events("q18", &e);
	want = eval_q18(&e);
	assert_same(got, want, "q18 by hand");
	/* (bidder 1, auction 1001): the two equal bids at 113, one row of
	 * weight 2; (2, 1000) and (3, 1000): one each */
	cr_assert_eq(rows_with(got, 5, 113), 2);
	sc_batch_release(got);
	sc_batch_release(want);
	events_free(&e);
}

/*
 * q11 step by step, on bids placed by hand at gaps of 9,999 ms (one
 * session) and 10,000 ms (two): each step's rows are fed as one
 * submission (weight -1 retracts a bid), and after each the integral is
 * the sessions written out here, which the evaluation of the bag fed so
 * far gives too. Bidder 1's bids chain at 9,999 ms and break at exactly
 * 10,000; a bid landing between two sessions merges them and its
 * retraction splits them again; bidder 2's sessions 10,000 ms apart stay
 * apart until bids 9,999 ms after them bridge the gaps one at a time;
 * bidder 3's two bids at one time count twice and leave one by one.
 */
struct q11_bid {
	int step;
	int64_t bidder, t, w;
};

/* The bag of q11_bids fed up to and including `step`, as events (a bid of
 * weight w as w rows). */
static void
q11_bag(const struct q11_bid *bids, size_t nb, int step, uint64_t sym,
	struct events *e)
{
	for (size_t i = 0; i < nb; i++) {
		int64_t m = 0;
		bool first = true;

		/* a (bidder, t) once, at its first entry: its summed weight */
		for (size_t j = 0; j < nb && first; j++)
			first = j >= i || bids[j].bidder != bids[i].bidder ||
				bids[j].t != bids[i].t || bids[j].step > step;
		for (size_t j = i; j < nb && first && bids[i].step <= step; j++)
			if (bids[j].bidder == bids[i].bidder &&
			    bids[j].t == bids[i].t && bids[j].step <= step)
				m += bids[j].w;
		cr_assert_geq(m, 0);
		for (int64_t c = 0; c < m; c++) {
			uint64_t *b = e->rows[B] + e->n[B]++ * SC_NXB_NCOLS;

			b[SC_NXB_AUCTION] = sc_enc_i64(1000);
			b[SC_NXB_BIDDER] = sc_enc_i64(bids[i].bidder);
			b[SC_NXB_PRICE] = sc_enc_i64(100);
			b[SC_NXB_DATE_TIME] = sc_enc_i64(bids[i].t);
			b[SC_NXB_CHANNEL] = b[SC_NXB_URL] = b[SC_NXB_EXTRA] =
			    sym;
		}
	}
}

Test(nexmark, q11_sessions_split_and_merge_at_the_gap)
{
	static const struct q11_bid bids[] = {
	    /* step, bidder, date_time, weight */
	    {0, 1, 0, 1},	{0, 1, 9999, 1},   {0, 1, 19998, 1},
	    {0, 2, 100000, 1},	{0, 2, 120000, 1}, {0, 3, 50000, 2},
	    {1, 1, 29998, 2},	{1, 1, 39997, 1},  {1, 2, 110000, 1},
	    {2, 1, 25000, 1},	{2, 2, 109999, 1}, {2, 3, 50000, -1},
	    {3, 2, 119999, 1},	{3, 3, 50000, -1}, {4, 1, 25000, -1},
	    {4, 2, 109999, -1}, {4, 3, 59999, 1},  {5, 2, 119999, -1},
	    {5, 1, 29998, -1},	{5, 1, 59995, 1},  {6, 1, 49996, 1},
	};
	/* (bidder, bid_count, starttime, endtime) after each step; a row of
	 * zeros ends a step's */
	static const int64_t want[][8][4] = {
	    {{1, 3, 0, 29998},
	     {2, 1, 100000, 110000},
	     {2, 1, 120000, 130000},
	     {3, 2, 50000, 60000}},
	    /* 29998 is exactly 10,000 after 19998: a second session */
	    {{1, 3, 0, 29998},
	     {1, 3, 29998, 49997},
	     {2, 1, 100000, 110000},
	     {2, 1, 110000, 120000},
	     {2, 1, 120000, 130000},
	     {3, 2, 50000, 60000}},
	    /* 25000 merges bidder 1's two; 109999 bridges 100000-110000 */
	    {{1, 7, 0, 49997},
	     {2, 3, 100000, 120000},
	     {2, 1, 120000, 130000},
	     {3, 1, 50000, 60000}},
	    /* 119999 bridges the last gap; bidder 3's last bid leaves */
	    {{1, 7, 0, 49997}, {2, 5, 100000, 130000}},
	    /* the bridges leave: bidder 1 splits, bidder 2 splits after its
	     * first bid */
	    {{1, 3, 0, 29998},
	     {1, 3, 29998, 49997},
	     {2, 1, 100000, 110000},
	     {2, 3, 110000, 130000},
	     {3, 1, 59999, 69999}},
	    /* one bid of the two at 29998 leaves; 59995 is 19,998 after
	     * 39997 */
	    {{1, 3, 0, 29998},
	     {1, 2, 29998, 49997},
	     {1, 1, 59995, 69995},
	     {2, 1, 100000, 110000},
	     {2, 1, 110000, 120000},
	     {2, 1, 120000, 130000},
	     {3, 1, 59999, 69999}},
	    /* 49996 is 9,999 after 39997 and 9,999 before 59995 */
	    {{1, 3, 0, 29998},
	     {1, 4, 29998, 69995},
	     {2, 1, 100000, 110000},
	     {2, 1, 110000, 120000},
	     {2, 1, 120000, 130000},
	     {3, 1, 59999, 69999}},
	};
	const size_t nb = sizeof(bids) / sizeof(bids[0]);
	const int steps = (int)(sizeof(want) / sizeof(want[0]));
	struct sc_symtab *t = NULL;
	struct sc_nexmark_query *q = NULL;
	struct sc_circuit *c = NULL;
	uint64_t sym;

	cr_assert_eq(sc_symtab_create(&t), 0);
	cr_assert_eq(sc_symtab_intern_cstr(t, "x", &sym), 0);
	cr_assert_eq(sc_nexmark_query_create("q11", t, 0, &q), 0);
	cr_assert_eq(sc_circuit_create(sc_nexmark_query_graph(q), &c), 0);
	for (int s = 0; s < steps; s++) {
		struct sc_batch_builder bb;
		struct sc_batch *in = NULL, *got = NULL, *expect, *bag;
		struct expect x;
		struct events e;
		char what[64];

		cr_assert_eq(sc_batch_builder_init(&bb, SC_NXB_NCOLS), 0);
		for (size_t i = 0; i < nb; i++) {
			uint64_t r[SC_NXB_NCOLS] = {0};

			if (bids[i].step != s)
				continue;
			r[SC_NXB_AUCTION] = sc_enc_i64(1000);
			r[SC_NXB_BIDDER] = sc_enc_i64(bids[i].bidder);
			r[SC_NXB_PRICE] = sc_enc_i64(100);
			r[SC_NXB_DATE_TIME] = sc_enc_i64(bids[i].t);
			r[SC_NXB_CHANNEL] = r[SC_NXB_URL] = r[SC_NXB_EXTRA] =
			    sym;
			cr_assert_eq(sc_batch_builder_push(&bb, r, SC_NXB_NCOLS,
							   bids[i].w),
				     0);
		}
		cr_assert_eq(sc_batch_builder_finish(&bb, &in), 0);
		sc_batch_builder_fini(&bb);
		cr_assert_eq(
		    sc_circuit_feed(
			c, sc_nexmark_query_input(q, SC_NEXMARK_BID), in),
		    0, "%s", sc_errmsg());
		sc_batch_release(in);
		cr_assert_eq(sc_circuit_step(c), 0, "%s", sc_errmsg());
		cr_assert_eq(
		    sc_circuit_integral(c, sc_nexmark_query_output(q), &got),
		    0);
		expect_init(&x, 4);
		for (int i = 0; i < 8 && want[s][i][0]; i++) {
			uint64_t o[4];

			for (int k = 0; k < 4; k++)
				o[k] = sc_enc_i64(want[s][i][k]);
			expect_push(&x, o);
		}
		expect = expect_finish(&x);
		memset(&e, 0, sizeof(e));
		e.rows[B] = calloc(4 * nb * SC_NXB_NCOLS + 1, 8);
		cr_assert(e.rows[B]);
		q11_bag(bids, nb, s, sym, &e);
		bag = eval_q11(&e);
		(void)snprintf(what, sizeof(what), "q11 after step %d", s);
		assert_same(got, expect, what);
		assert_same(bag, expect, "the evaluation of the bag");
		free(e.rows[B]);
		sc_batch_release(bag);
		sc_batch_release(expect);
		sc_batch_release(got);
	}
	sc_circuit_destroy(c);
	cr_assert_eq(sc_nexmark_query_destroy(q), 0);
	sc_symtab_destroy(t);
}

/* A delta callback that sums what a stream output hands on. */
static int
sum_deltas(void *ctx, int node, const struct sc_batch *delta)
{
	struct sc_batch_builder *b = ctx;

	(void)node;
	return sc_batch_builder_push_batch(b, delta, 1);
}

/* With SC_NEXMARK_QUERY_STREAM the output keeps nothing (its integral is
 * refused) and its deltas, summed, are the query's result: for q0 no
 * node keeps a row, however many events. */
Test(nexmark, stream_output_keeps_nothing_and_hands_on_every_row)
{
	const struct nx_case c = {sc_prop_seed(9), 4000, 100, 500, 0, 0};
	struct sc_nexmark_opts o;
	struct sc_nexmark_query *q = NULL;
	struct sc_nexmark *nx = NULL;
	struct sc_circuit *cir = NULL;
	struct sc_batch *got = NULL, *want, *none = NULL;
	struct sc_batch_builder sum;
	struct sc_nexmark_feed f;
	struct events e;
	size_t steps;

	case_opts(&c, &o);
	events_make(&e, &o, c.events);
	want = eval_q0(&e);
	cr_assert_eq(
	    sc_nexmark_query_create("q0", e.t, SC_NEXMARK_QUERY_STREAM, &q), 0);
	cr_assert_eq(sc_nexmark_create(&o, e.t, &nx), 0);
	cr_assert_eq(sc_batch_builder_init(&sum, SC_NXB_NCOLS), 0);
	cr_assert_eq(sc_circuit_create(sc_nexmark_query_graph(q), &cir), 0);
	cr_assert_eq(sc_circuit_on_delta(cir, sc_nexmark_query_output(q),
					 sum_deltas, &sum),
		     0);
	memset(&f, 0, sizeof(f));
	f.nx = nx;
	f.q = q;
	f.events = c.chunk;
	steps = sc_nexmark_feed_steps(&f, c.events);
	for (size_t i = 0; i < steps; i++) {
		struct sc_settle_step st;

		cr_assert_eq(sc_nexmark_settle_step(&f, i, &st), 0);
		cr_assert_eq(sc_circuit_feed(cir, st.input, st.batch), 0);
		sc_batch_release(st.batch);
		cr_assert_eq(sc_circuit_step(cir), 0);
	}
	for (size_t n = 0; n < sc_graph_node_count(sc_nexmark_query_graph(q));
	     n++) {
		struct sc_node_state ns;

		cr_assert_eq(sc_circuit_node_state(cir, (int)n, &ns), 0);
		cr_assert_eq(ns.rows, 0, "node %zu keeps %zu rows", n, ns.rows);
	}
	cr_assert_eq(
	    sc_circuit_integral(cir, sc_nexmark_query_output(q), &none),
	    SC_ESTATE);
	cr_assert_eq(sc_batch_builder_finish(&sum, &got), 0);
	assert_same(got, want, "q0's summed stream");
	sc_batch_builder_fini(&sum);
	sc_batch_release(got);
	sc_batch_release(want);
	sc_nexmark_feed_fini(&f);
	sc_circuit_destroy(cir);
	sc_nexmark_destroy(nx);
	cr_assert_eq(sc_nexmark_query_destroy(q), 0);
	events_free(&e);
}

Test(nexmark, unknown_query_is_refused_with_the_known_ones)
{
	struct sc_symtab *t = NULL;
	struct sc_nexmark_query *q = NULL;

	cr_assert_eq(sc_symtab_create(&t), 0);
	cr_assert_eq(sc_nexmark_query_create("q24", t, 0, &q), SC_ENOENT);
	cr_assert(strstr(sc_errmsg(), "'q24'") &&
		      strstr(sc_errmsg(),
			     "known: q0 q1 q2 q3 q4 q5 q6 q7 q8 q9 q10 q11 "
			     "q12 q13 q14 q15 q16 q17 q18 q19 q20 q21 q22 q23"),
		  "%s", sc_errmsg());
	cr_assert_null(q);
	sc_symtab_destroy(t);
}

/* --- disorder ----------------------------------------------------------------
 */

/* The largest date_time among the events so far, whatever their kind. */
static int64_t
ev_time(const struct sc_nexmark_event *ev)
{
	static const int col[SC_NEXMARK_KINDS] = {
	    SC_NXP_DATE_TIME, SC_NXA_DATE_TIME, SC_NXB_DATE_TIME};

	return sc_dec_i64(ev->row[col[ev->kind]]);
}

/* With disorder D every date_time is at least the largest before it
 * minus D, times do go back (else the option did nothing), no event lags
 * its place's time by more than D, and the lag reaches near D. */
Test(nexmark, disorder_keeps_every_time_within_its_bound)
{
	const uint64_t d = 700;
	struct sc_nexmark_opts o;
	struct sc_symtab *t = NULL;
	struct sc_nexmark *nx = NULL, *in_order = NULL;
	int64_t most = INT64_MIN, worst = 0, back = 0;

	sc_nexmark_opts_default(&o);
	o.seed = sc_prop_seed(3);
	cr_assert_eq(sc_symtab_create(&t), 0);
	cr_assert_eq(sc_nexmark_create(&o, t, &in_order), 0);
	o.disorder_ms = d;
	cr_assert_eq(sc_nexmark_lateness(&o), (int64_t)d);
	cr_assert_eq(sc_nexmark_create(&o, t, &nx), 0);
	for (int i = 0; i < 100000; i++) {
		struct sc_nexmark_event ev, ord;
		int64_t tm, lag;

		cr_assert_eq(sc_nexmark_next(nx, &ev), 0);
		cr_assert_eq(sc_nexmark_next(in_order, &ord), 0);
		tm = ev_time(&ev);
		lag = ev_time(&ord) - tm;
		cr_assert(lag >= 0 && lag <= (int64_t)d, "event %d lags %lld",
			  i, (long long)lag);
		worst = lag > worst ? lag : worst;
		if (most != INT64_MIN) {
			cr_assert_geq(tm, most - (int64_t)d, "event %d", i);
			back += tm < most;
		}
		most = tm > most ? tm : most;
	}
	cr_assert_gt(back, 1000, "only %lld events went back", (long long)back);
	cr_assert_geq(worst, (int64_t)d - 5);
	sc_nexmark_destroy(nx);
	sc_nexmark_destroy(in_order);
	sc_symtab_destroy(t);
}

/* Disorder moves the times (an auction's expiry with its own time) and
 * nothing else: every other column is the in-order event's. */
Test(nexmark, disorder_changes_only_the_times)
{
	struct sc_nexmark_opts o;
	struct sc_symtab *t = NULL;
	struct sc_nexmark *nx = NULL, *in_order = NULL;
	int moved = 0;

	sc_nexmark_opts_default(&o);
	o.seed = sc_prop_seed(4);
	cr_assert_eq(sc_symtab_create(&t), 0);
	cr_assert_eq(sc_nexmark_create(&o, t, &in_order), 0);
	o.disorder_ms = 3000;
	cr_assert_eq(sc_nexmark_create(&o, t, &nx), 0);
	for (int i = 0; i < 20000; i++) {
		struct sc_nexmark_event ev, ord;
		uint32_t w;

		cr_assert_eq(sc_nexmark_next(nx, &ev), 0);
		cr_assert_eq(sc_nexmark_next(in_order, &ord), 0);
		cr_assert_eq(ev.kind, ord.kind);
		w = sc_nexmark_ncols(ev.kind);
		for (uint32_t c = 0; c < w; c++) {
			bool timed =
			    (ev.kind == SC_NEXMARK_PERSON &&
			     c == SC_NXP_DATE_TIME) ||
			    (ev.kind == SC_NEXMARK_AUCTION &&
			     (c == SC_NXA_DATE_TIME || c == SC_NXA_EXPIRES)) ||
			    (ev.kind == SC_NEXMARK_BID &&
			     c == SC_NXB_DATE_TIME);

			if (!timed)
				cr_assert_eq(ev.row[c], ord.row[c],
					     "event %d column %u", i, c);
		}
		if (ev.kind == SC_NEXMARK_AUCTION)
			cr_assert_eq(sc_dec_i64(ev.row[SC_NXA_EXPIRES]) -
					 sc_dec_i64(ev.row[SC_NXA_DATE_TIME]),
				     sc_dec_i64(ord.row[SC_NXA_EXPIRES]) -
					 sc_dec_i64(ord.row[SC_NXA_DATE_TIME]));
		moved += ev_time(&ev) != ev_time(&ord);
	}
	cr_assert_gt(moved, 10000);
	sc_nexmark_destroy(nx);
	sc_nexmark_destroy(in_order);
	sc_symtab_destroy(t);
}

Test(nexmark, disorder_above_its_limit_is_refused_by_name)
{
	struct sc_nexmark_opts o;
	struct sc_symtab *t = NULL;
	struct sc_nexmark *nx = NULL;

	cr_assert_eq(sc_symtab_create(&t), 0);
	sc_nexmark_opts_default(&o);
	o.disorder_ms = 1000000000001ull;
	cr_assert_eq(sc_nexmark_create(&o, t, &nx), SC_EINVAL);
	cr_assert(strstr(sc_errmsg(), "disorder_ms"), "%s", sc_errmsg());
	cr_assert_null(nx);
	sc_symtab_destroy(t);
}

Test(nexmark, q4_with_disorder_equals_its_sql_evaluated_from_scratch)
{
	check_query_equals_its_sql_disordered("q4", eval_q4);
}

Test(nexmark, q5_with_disorder_equals_its_sql_evaluated_from_scratch)
{
	check_query_equals_its_sql_disordered("q5", eval_q5);
}

Test(nexmark, q7_with_disorder_equals_its_sql_evaluated_from_scratch)
{
	check_query_equals_its_sql_disordered("q7", eval_q7);
}

Test(nexmark, q8_with_disorder_equals_its_sql_evaluated_from_scratch)
{
	check_query_equals_its_sql_disordered("q8", eval_q8);
}

Test(nexmark, q9_with_disorder_equals_its_sql_evaluated_from_scratch)
{
	check_query_equals_its_sql_disordered("q9", eval_q9);
}

Test(nexmark, q11_with_disorder_equals_its_sql_evaluated_from_scratch)
{
	check_query_equals_its_sql_disordered("q11", eval_q11);
}

/* --- lateness ---------------------------------------------------------------
 */

/*
 * With the generator's disorder declared as the lateness, the output with
 * cleanup on and with it off both equal the SQL's, and cleanup keeps fewer
 * rows than no cleanup (it did drop something: else the check says
 * nothing about it); for a query whose state lateness does not bound
 * (!bounded: q11, session.h), the same rows.
 */
static void
check_cases_with_lateness(const char *name, eval_fn eval,
			  const struct nx_case *cases, size_t n, bool bounded)
{
	for (size_t i = 0; i < n; i++) {
		const struct nx_case *c = &cases[i];
		struct run_how on = {(int64_t)c->disorder_ms, true, 0};
		struct run_how off = {(int64_t)c->disorder_ms, false, 0};
		struct events e1, e2;
		struct sc_batch *got_on = single_run(name, c, &e1, &on);
		struct sc_batch *got_off = single_run(name, c, &e2, &off);
		struct sc_batch *want = eval(&e1);
		char what[160];

		(void)snprintf(what, sizeof(what),
			       "%s seed %llu disorder %llu, cleanup on", name,
			       (unsigned long long)c->seed,
			       (unsigned long long)c->disorder_ms);
		cr_assert_gt(sc_batch_count(want), 0, "%s: empty", what);
		assert_same(got_on, want, what);
		assert_same(got_off, want, "cleanup off");
		if (bounded)
			cr_assert_lt(on.kept_rows, off.kept_rows,
				     "%s: cleanup kept %zu rows, none %zu",
				     what, on.kept_rows, off.kept_rows);
		else
			cr_assert_eq(on.kept_rows, off.kept_rows,
				     "%s: cleanup kept %zu rows, none %zu",
				     what, on.kept_rows, off.kept_rows);
		sc_batch_release(got_on);
		sc_batch_release(got_off);
		sc_batch_release(want);
		events_free(&e1);
		events_free(&e2);
	}
}

static void
check_query_with_lateness_bounded(const char *name, eval_fn eval, bool bounded)
{
	const struct nx_case cases[] = {
	    {sc_prop_seed(21), 6000, 5000, 250, 300, 0},
	    {sc_prop_seed(21) + 1, 5000, 10000, 500, 4000, 0},
	    {sc_prop_seed(21) + 2, 5000, 5000, 250, 300, 32},
	};

	check_cases_with_lateness(name, eval, cases,
				  sizeof(cases) / sizeof(cases[0]), bounded);
}

static void
check_query_with_lateness(const char *name, eval_fn eval)
{
	check_query_with_lateness_bounded(name, eval, true);
}

/* The same over two to three days: the lateness closes each day but the
 * last, and cleanup drops its groups (q15-q17 group by the day). */
static void
check_query_with_lateness_over_days(const char *name, eval_fn eval)
{
	const struct nx_case cases[] = {
	    {sc_prop_seed(27), 3000, 60000000, 250, 300, 0},
	    {sc_prop_seed(27) + 1, 2000, 97000000, 500, 4000, 32},
	};

	check_cases_with_lateness(name, eval, cases,
				  sizeof(cases) / sizeof(cases[0]), true);
}

Test(nexmark, q4_with_lateness_equals_its_sql_with_and_without_cleanup)
{
	check_query_with_lateness("q4", eval_q4);
}

Test(nexmark, q5_with_lateness_equals_its_sql_with_and_without_cleanup)
{
	check_query_with_lateness("q5", eval_q5);
}

Test(nexmark, q7_with_lateness_equals_its_sql_with_and_without_cleanup)
{
	check_query_with_lateness("q7", eval_q7);
}

Test(nexmark, q8_with_lateness_equals_its_sql_with_and_without_cleanup)
{
	check_query_with_lateness("q8", eval_q8);
}

Test(nexmark, q9_with_lateness_equals_its_sql_with_and_without_cleanup)
{
	check_query_with_lateness("q9", eval_q9);
}

Test(nexmark, q15_with_lateness_equals_its_sql_with_and_without_cleanup)
{
	check_query_with_lateness_over_days("q15", eval_q15);
}

Test(nexmark, q16_with_lateness_equals_its_sql_with_and_without_cleanup)
{
	check_query_with_lateness_over_days("q16", eval_q16);
}

Test(nexmark, q17_with_lateness_equals_its_sql_with_and_without_cleanup)
{
	check_query_with_lateness_over_days("q17", eval_q17);
}

/* q11 with lateness: its sessions are the SQL's with cleanup on and off,
 * and cleanup keeps every row (session.h: a row below the waterline may
 * still be in a session a later bid extends). The cases span 30 to 50 s,
 * so bidders have several sessions and late bids merge them. */
Test(nexmark, q11_with_lateness_equals_its_sql_with_and_without_cleanup)
{
	check_query_with_lateness_bounded("q11", eval_q11, false);
}

/* A lateness below the generator's disorder: some submission has a late
 * row, and its feed is refused with SC_ELATE, naming the rows; with
 * SC_NEXMARK_QUERY_ADMIT the same rows are admitted and counted. */
Test(nexmark,
     events_later_than_the_lateness_are_refused_or_admitted_and_counted)
{
	struct sc_nexmark_opts o;
	struct sc_symtab *t = NULL;

	sc_nexmark_opts_default(&o);
	o.seed = sc_prop_seed(23);
	o.disorder_ms = 2000;
	cr_assert_eq(sc_symtab_create(&t), 0);
	for (int admit = 0; admit < 2; admit++) {
		struct sc_nexmark_query_opts qo;
		struct sc_nexmark_query *q = NULL;
		struct sc_nexmark *nx = NULL;
		struct sc_circuit *cir = NULL;
		struct sc_nexmark_feed f;
		uint64_t admitted = 0, refused = 0;
		int refusals = 0;

		sc_nexmark_query_opts_default(&qo);
		qo.lateness_ms = 100;
		qo.flags = admit ? SC_NEXMARK_QUERY_ADMIT : 0;
		cr_assert_eq(sc_nexmark_query_create_opts("q7", t, &qo, &q), 0);
		cr_assert_eq(sc_nexmark_create(&o, t, &nx), 0);
		cr_assert_eq(sc_circuit_create(sc_nexmark_query_graph(q), &cir),
			     0);
		memset(&f, 0, sizeof(f));
		f.nx = nx;
		f.q = q;
		f.events = 500;
		for (size_t i = 0; i < 40; i++) {
			struct sc_settle_step st;
			int rc;

			cr_assert_eq(sc_nexmark_settle_step(&f, i, &st), 0);
			rc = sc_circuit_feed(cir, st.input, st.batch);
			sc_batch_release(st.batch);
			if (rc == SC_ELATE) {
				cr_assert(strstr(sc_errmsg(), "late"), "%s",
					  sc_errmsg());
				refusals++;
			} else {
				cr_assert_eq(rc, 0, "%s", sc_errmsg());
			}
			cr_assert_eq(sc_circuit_step(cir), 0);
		}
		cr_assert_eq(sc_circuit_late(
				 cir, sc_nexmark_query_input(q, SC_NEXMARK_BID),
				 &admitted, &refused),
			     0);
		if (admit) {
			cr_assert_eq(refusals, 0);
			cr_assert_gt(admitted, 0);
			cr_assert_eq(refused, 0);
		} else {
			cr_assert_gt(refusals, 0);
			cr_assert_gt(refused, 0);
			cr_assert_eq(admitted, 0);
		}
		sc_nexmark_feed_fini(&f);
		sc_circuit_destroy(cir);
		sc_nexmark_destroy(nx);
		cr_assert_eq(sc_nexmark_query_destroy(q), 0);
	}
	sc_symtab_destroy(t);
}

/*
 * With lateness declared, placed on several strategies and units (the
 * seeded scheduler), the output settles where the SQL says with cleanup
 * on and with it off: waterlines cross the units' edges (the min over a
 * sharded producer's replicas), and what each unit drops no future row
 * could reach. The replay command is printed on a failure.
 */
static void
check_case_settles_with_lateness(const char *name, eval_fn eval,
				 const struct nx_case c)
{
	static const char *const places[] = {"per-node", "chains", "sharded:2",
					     "balanced:3", "random:3"};
	struct sc_nexmark_query_opts qo;
	struct sc_nexmark_opts o;
	struct sc_nexmark_query *q = NULL;
	struct sc_nexmark *nx = NULL;
	struct sc_settle_work *w = NULL;
	struct sc_nexmark_feed f;
	struct sc_batch *want;
	struct events e;

	case_opts(&c, &o);
	events_make(&e, &o, c.events);
	want = eval(&e);
	cr_assert_gt(sc_batch_count(want), 0);
	sc_nexmark_query_opts_default(&qo);
	qo.lateness_ms = sc_nexmark_lateness(&o);
	cr_assert_eq(sc_nexmark_query_create_opts(name, e.t, &qo, &q), 0);
	cr_assert_eq(sc_nexmark_create(&o, e.t, &nx), 0);
	memset(&f, 0, sizeof(f));
	f.nx = nx;
	f.q = q;
	f.events = c.chunk;
	cr_assert_eq(sc_settle_work_generate(
			 sc_nexmark_query_graph(q), sc_nexmark_settle_step, &f,
			 sc_nexmark_feed_steps(&f, c.events), 0, &w),
		     0, "%s", sc_errmsg());
	for (size_t pi = 0; pi < sizeof(places) / sizeof(places[0]); pi++) {
		struct sc_placement *p = NULL;

		cr_assert_eq(sc_placement_parse(sc_nexmark_query_graph(q),
						places[pi], 3, &p),
			     0, "%s: %s", places[pi], sc_errmsg());
		for (uint32_t units = 1; units <= 3; units++) {
			for (int keep = 0; keep < 2; keep++) {
				struct sc_settle_opts so = {
				    .mode = SC_SETTLE_SIM,
				    .seed = (uint64_t)units * 11 + pi,
				    .units = units,
				    .verify = verify_against,
				    .verify_ctx = want,
				    .no_cleanup = keep != 0};
				struct sc_settle_result r;

				cr_assert_eq(sc_settle_run(w, p, &so, &r), 0,
					     "%s", r.why);
				cr_assert(r.ok,
					  "%s %s on %u, cleanup %s: %s\n%s",
					  name, places[pi], units,
					  keep ? "off" : "on", r.why, r.replay);
				sc_settle_result_fini(&r);
			}
		}
		sc_placement_destroy(p);
	}
	sc_settle_work_destroy(w);
	sc_nexmark_feed_fini(&f);
	sc_nexmark_destroy(nx);
	cr_assert_eq(sc_nexmark_query_destroy(q), 0);
	sc_batch_release(want);
	events_free(&e);
}

static void
check_query_settles_with_lateness(const char *name, eval_fn eval)
{
	const struct nx_case c = {sc_prop_seed(25), 4000, 4000, 200, 3000, 0};

	check_case_settles_with_lateness(name, eval, c);
}

/* Over three days: the days the waterline passes closed on every unit. */
static void
check_query_settles_with_lateness_over_days(const char *name, eval_fn eval)
{
	const struct nx_case c = {
	    sc_prop_seed(25), 3000, 60000000, 200, 3000, 0};

	check_case_settles_with_lateness(name, eval, c);
}

Test(nexmark,
     q4_with_lateness_settles_under_placements_with_and_without_cleanup)
{
	check_query_settles_with_lateness("q4", eval_q4);
}

Test(nexmark,
     q5_with_lateness_settles_under_placements_with_and_without_cleanup)
{
	check_query_settles_with_lateness("q5", eval_q5);
}

Test(nexmark,
     q7_with_lateness_settles_under_placements_with_and_without_cleanup)
{
	check_query_settles_with_lateness("q7", eval_q7);
}

Test(nexmark,
     q8_with_lateness_settles_under_placements_with_and_without_cleanup)
{
	check_query_settles_with_lateness("q8", eval_q8);
}

Test(nexmark,
     q9_with_lateness_settles_under_placements_with_and_without_cleanup)
{
	check_query_settles_with_lateness("q9", eval_q9);
}

Test(nexmark,
     q15_with_lateness_settles_under_placements_with_and_without_cleanup)
{
	check_query_settles_with_lateness_over_days("q15", eval_q15);
}

Test(nexmark,
     q16_with_lateness_settles_under_placements_with_and_without_cleanup)
{
	check_query_settles_with_lateness_over_days("q16", eval_q16);
}

Test(nexmark,
     q17_with_lateness_settles_under_placements_with_and_without_cleanup)
{
	check_query_settles_with_lateness_over_days("q17", eval_q17);
}

Test(nexmark,
     q11_with_lateness_settles_under_placements_with_and_without_cleanup)
{
	check_query_settles_with_lateness("q11", eval_q11);
}

/*
 * q4 with lateness: its AVG of the closing prices per category is declared
 * SC_AGG_NONNEGATIVE (its input is a projection of the MAX's output, one
 * row per auction), so it keeps a group per category and no row per
 * distinct (category, price), which no waterline could drop; and its input
 * never breaks that declaration once settled (sc_circuit_check). The
 * output itself is q4_with_lateness_equals_its_sql_with_and_without_cleanup's.
 */
Test(nexmark, q4_avg_keeps_a_group_per_category_and_no_row)
{
	const struct nx_case c = {sc_prop_seed(21), 6000, 5000, 250, 300, 0};
	struct sc_nexmark_opts o;
	struct sc_nexmark_query_opts qo;
	struct sc_nexmark_query *q = NULL;
	struct sc_nexmark *nx = NULL;
	struct sc_circuit *cir = NULL;
	struct sc_nexmark_feed f;
	struct sc_node_info out, avg;
	struct sc_node_state st;
	struct events e;
	size_t steps;

	case_opts(&c, &o);
	events_make(&e, &o, c.events);
	sc_nexmark_query_opts_default(&qo);
	qo.lateness_ms = (int64_t)c.disorder_ms;
	cr_assert_eq(sc_nexmark_query_create_opts("q4", e.t, &qo, &q), 0, "%s",
		     sc_errmsg());
	cr_assert_eq(sc_nexmark_create(&o, e.t, &nx), 0);
	memset(&f, 0, sizeof(f));
	f.nx = nx;
	f.q = q;
	f.events = c.chunk;
	steps = sc_nexmark_feed_steps(&f, c.events);
	cr_assert_eq(sc_circuit_create(sc_nexmark_query_graph(q), &cir), 0);
	for (size_t i = 0; i < steps; i++) {
		struct sc_settle_step s;

		cr_assert_eq(sc_nexmark_settle_step(&f, i, &s), 0);
		cr_assert_eq(sc_circuit_feed(cir, s.input, s.batch), 0, "%s",
			     sc_errmsg());
		sc_batch_release(s.batch);
		cr_assert_eq(sc_circuit_step(cir), 0, "%s", sc_errmsg());
	}
	cr_assert_eq(sc_graph_node_info(sc_nexmark_query_graph(q),
					sc_nexmark_query_output(q), &out),
		     0);
	cr_assert_eq(
	    sc_graph_node_info(sc_nexmark_query_graph(q), out.inputs[0], &avg),
	    0);
	cr_assert_eq(avg.kind, SC_NODE_AGGREGATE);
	cr_assert_eq(sc_circuit_node_state(cir, out.inputs[0], &st), 0);
	cr_assert_eq(st.rows, 0, "q4's AVG keeps %zu rows", st.rows);
	cr_assert_gt(st.bytes, 0, "the groups take room");
	cr_assert_eq(sc_circuit_check(cir, sc_nexmark_query_output(q)), 0, "%s",
		     sc_errmsg());
	sc_nexmark_feed_fini(&f);
	sc_circuit_destroy(cir);
	sc_nexmark_destroy(nx);
	cr_assert_eq(sc_nexmark_query_destroy(q), 0);
	events_free(&e);
}

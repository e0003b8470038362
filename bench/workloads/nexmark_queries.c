/*
 * nexmark_queries.c - the Nexmark queries as graphs (see
 * nexmark_queries.h). Each builder nests the graph calls, so an error of
 * any call reaches the output's id unchanged (graph.h).
 */
#include "bench/workloads/nexmark_queries.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/workloads/csv.h"
#include "operators/aggregate.h"
#include "operators/lookup.h"
#include "operators/multiagg.h"
#include "operators/schema.h"
#include "operators/session.h"
#include "operators/text.h"
#include "operators/topk.h"
#include "operators/waterline.h"
#include "operators/window.h"

#define TEN_S 10000 /* ms */
#define TWO_S 2000

struct sc_nexmark_query {
	const struct nxq_def *def;
	struct sc_graph *g;	   /* owned */
	struct sc_symtab *symbols; /* borrowed */
	int in[SC_NEXMARK_KINDS];  /* input nodes, -1 if unread */
	int out;		   /* the output node */
	unsigned flags;		   /* SC_NEXMARK_QUERY_STREAM, _ADMIT */
	int64_t lateness;	   /* ms on date_time; < 0: none */
	/* Texts the query names, held until destroy: q3's states (OR, ID,
	 * CA), q14's times of day, q21's channel ids of the known channels. */
	uint64_t consts[4];
	struct sc_regex *re;	/* q21's */
	const char *side_input; /* q13's file, borrowed while building */
};

/* A query: its name, columns, best placement and builder (which returns
 * the output's id or an error). */
struct nxq_def {
	const char *name;
	const char *placement;
	const char *const *cols;
	size_t ncols;
	int (*build)(struct sc_nexmark_query *q);
	bool proctime; /* its bids carry p_time (SC_NXB_P_TIME) */
};

/* --- helpers -------------------------------------------------------------- */

static int
nxq_input(struct sc_nexmark_query *q, enum sc_nexmark_kind k)
{
	struct sc_schema s;
	int rc;

	if (q->in[k] >= 0)
		return q->in[k];
	static const uint32_t time_col[SC_NEXMARK_KINDS] = {
	    SC_NXP_DATE_TIME, SC_NXA_DATE_TIME, SC_NXB_DATE_TIME};

	if ((rc = sc_nexmark_query_schema(q, k, &s)) != 0)
		return rc;
	if ((rc = sc_graph_input(q->g, sc_nexmark_kind_name(k), &s)) < 0)
		return rc;
	q->in[k] = rc;
	if (q->lateness >= 0 &&
	    (rc = sc_graph_lateness(
		 q->g, q->in[k], time_col[k], q->lateness,
		 (q->flags & SC_NEXMARK_QUERY_ADMIT) ? SC_LATE_ADMIT : 0)) != 0)
		return rc;
	/* Processing time never goes back (units/proctime.h): with a
	 * lateness declared, a lateness of 0 on it closes its windows. */
	if (q->lateness >= 0 && k == SC_NEXMARK_BID && q->def->proctime &&
	    (rc = sc_graph_lateness(q->g, q->in[k], SC_NXB_P_TIME, 0, 0)) != 0)
		return rc;
	return q->in[k];
}

static int
nxq_index(struct sc_nexmark_query *q, int from, const uint32_t *cols,
	  uint32_t n)
{
	return sc_graph_index_by(q->g, from, cols, n);
}

#define NXQ_INDEX(q, from, ...)                                                \
	nxq_index((q), (from), (const uint32_t[]){__VA_ARGS__},                \
		  (uint32_t)(sizeof((const uint32_t[]){__VA_ARGS__}) /         \
			     sizeof(uint32_t)))

static int
nxq_agg_flags(struct sc_nexmark_query *q, int from, uint32_t ncols, uint32_t k,
	      enum sc_agg_kind kind, uint32_t col, uint32_t flags)
{
	struct sc_aggregate_spec sp;

	memset(&sp, 0, sizeof(sp));
	sp.ncols = ncols;
	sp.k = k;
	sp.kind = kind;
	sp.col = col;
	sp.col_type = SC_TYPE_I64;
	return sc_graph_aggregate_flags(q->g, from, &sp, flags);
}

static int
nxq_agg(struct sc_nexmark_query *q, int from, uint32_t ncols, uint32_t k,
	enum sc_agg_kind kind, uint32_t col)
{
	return nxq_agg_flags(q, from, ncols, k, kind, col, 0);
}

/* q4's AVG of the closing prices per category: its input, (category,
 * price) projected from the MAX's output (one row of weight 1 per live
 * auction), never has a negative integrated weight once settled, so it
 * keeps (count, sum) per category and no row per distinct price
 * (aggregate.h, "Nonnegative inputs"). */
static int
q4_avg(struct sc_nexmark_query *q, int fin, uint32_t category, uint32_t price)
{
	return nxq_agg_flags(q, NXQ_INDEX(q, fin, category, price), 2, 1,
			     SC_AGG_AVG, 1, SC_AGG_NONNEGATIVE);
}

/* Intern the texts the query names into q->consts (held until destroy). */
static int
nxq_consts(struct sc_nexmark_query *q, const char *const *texts, size_t n)
{
	int rc;

	for (size_t i = 0; i < n; i++)
		if ((rc = sc_symtab_intern_cstr(q->symbols, texts[i],
						&q->consts[i])) != 0)
			return rc;
	return 0;
}

/* The text of symbol word w of a row, live while the row is. */
static int
nxq_text(const struct sc_nexmark_query *q, uint64_t w, const char **text,
	 size_t *len)
{
	return sc_symtab_lookup(q->symbols, sc_dec_symbol(w), text, len);
}

static int
nxq_output(struct sc_nexmark_query *q, int from)
{
	if (q->flags & SC_NEXMARK_QUERY_STREAM)
		return sc_graph_output_stream(q->g, q->def->name, from);
	return sc_graph_output(q->g, q->def->name, from);
}

/* --- callbacks -------------------------------------------------------------
 */

static int
copy_bid(void *ctx, const uint64_t *row, uint64_t *out)
{
	(void)ctx;
	memcpy(out, row, SC_NXB_NCOLS * sizeof(*row));
	return 0;
}

static int
q1_map(void *ctx, const uint64_t *row, uint64_t *out)
{
	(void)ctx;
	out[0] = row[SC_NXB_AUCTION];
	out[1] = row[SC_NXB_BIDDER];
	out[2] = sc_enc_f64(0.908 * (double)sc_dec_i64(row[SC_NXB_PRICE]));
	out[3] = row[SC_NXB_DATE_TIME];
	out[4] = row[SC_NXB_EXTRA];
	return 0;
}

static int
q2_keep(void *ctx, const uint64_t *row, bool *keep)
{
	(void)ctx;
	*keep = sc_dec_i64(row[SC_NXB_AUCTION]) % 123 == 0;
	return 0;
}

static int
category_10(void *ctx, const uint64_t *row, bool *keep)
{
	(void)ctx;
	*keep = sc_dec_i64(row[SC_NXA_CATEGORY]) == 10;
	return 0;
}

static int
q3_state(void *ctx, const uint64_t *row, bool *keep)
{
	const struct sc_nexmark_query *q = ctx;
	uint64_t s = sc_dec_symbol(row[SC_NXP_STATE]);

	*keep = s == q->consts[0] || s == q->consts[1] || s == q->consts[2];
	return 0;
}

/* q4's join rows (id, a.date_time, a.expires, category, price,
 * b.date_time): the bid falls within the auction's life. */
static int
q4_in_life(void *ctx, const uint64_t *row, bool *keep)
{
	int64_t start = sc_dec_i64(row[1]), end = sc_dec_i64(row[2]);
	int64_t t = sc_dec_i64(row[5]);

	(void)ctx;
	*keep = start <= t && t <= end;
	return 0;
}

/* --- the queries ------------------------------------------------------------
 */

static int
build_q0(struct sc_nexmark_query *q)
{
	struct sc_schema s;
	int rc;

	if ((rc = sc_nexmark_schema(SC_NEXMARK_BID, q->symbols, &s)) != 0)
		return rc;
	return nxq_output(q, sc_graph_map(q->g, nxq_input(q, SC_NEXMARK_BID),
					  &s, copy_bid, NULL));
}

static int
build_q1(struct sc_nexmark_query *q)
{
	static const enum sc_type t[5] = {SC_TYPE_I64, SC_TYPE_I64, SC_TYPE_F64,
					  SC_TYPE_I64, SC_TYPE_SYMBOL};
	struct sc_schema s;
	int rc;

	if ((rc = sc_schema_init(&s, 5, t, q->symbols)) != 0)
		return rc;
	return nxq_output(q, sc_graph_map(q->g, nxq_input(q, SC_NEXMARK_BID),
					  &s, q1_map, NULL));
}

static int
build_q2(struct sc_nexmark_query *q)
{
	int f =
	    sc_graph_filter(q->g, nxq_input(q, SC_NEXMARK_BID), q2_keep, NULL);

	return nxq_output(q, NXQ_INDEX(q, f, SC_NXB_AUCTION, SC_NXB_PRICE));
}

static int
build_q3(struct sc_nexmark_query *q)
{
	static const char *const st[3] = {"OR", "ID", "CA"};
	int a, p, j;
	int rc;

	if ((rc = nxq_consts(q, st, 3)) != 0)
		return rc;
	a = sc_graph_filter(q->g, nxq_input(q, SC_NEXMARK_AUCTION), category_10,
			    NULL);
	a = NXQ_INDEX(q, a, SC_NXA_SELLER, SC_NXA_ID);
	p = sc_graph_filter(q->g, nxq_input(q, SC_NEXMARK_PERSON), q3_state, q);
	p = NXQ_INDEX(q, p, SC_NXP_ID, SC_NXP_NAME, SC_NXP_CITY, SC_NXP_STATE);
	/* (seller, a.id, name, city, state) */
	j = sc_graph_join(q->g, a, p, 1);
	return nxq_output(q, NXQ_INDEX(q, j, 2, 3, 4, 1));
}

/* The bids within each auction's life, joined with it: rows (id,
 * a.date_time, a.expires, the auction's column `col`, price,
 * b.date_time). With a lateness by the bounded join, whose expires column
 * carries the bids' waterline; without, a join and a filter. */
static int
nxq_bids_in_life(struct sc_nexmark_query *q, uint32_t col)
{
	int a = NXQ_INDEX(q, nxq_input(q, SC_NEXMARK_AUCTION), SC_NXA_ID,
			  SC_NXA_DATE_TIME, SC_NXA_EXPIRES, col);
	int b = NXQ_INDEX(q, nxq_input(q, SC_NEXMARK_BID), SC_NXB_AUCTION,
			  SC_NXB_PRICE, SC_NXB_DATE_TIME);

	if (q->lateness >= 0)
		return sc_graph_join_within(q->g, a, b, 1, 1, 2, 2);
	return sc_graph_filter(q->g, sc_graph_join(q->g, a, b, 1), q4_in_life,
			       NULL);
}

/* q4: the closing price of each auction, then their average per category
 * (weighted by how many auctions share a price). With a lateness the
 * closing price is grouped by (expires, id, category), so that an
 * auction's group goes once no bid can reach it (expires is a function of
 * id: the same groups). */
static int
build_q4(struct sc_nexmark_query *q)
{
	int live = nxq_bids_in_life(q, SC_NXA_CATEGORY);

	if (q->lateness < 0) /* (id, category, max price) */
		return nxq_output(q,
				  q4_avg(q,
					 nxq_agg(q, NXQ_INDEX(q, live, 0, 3, 4),
						 3, 2, SC_AGG_MAX, 2),
					 1, 2));
	/* (expires, id, category, max price) */
	return nxq_output(q, q4_avg(q,
				    nxq_agg(q, NXQ_INDEX(q, live, 2, 0, 3, 4),
					    4, 3, SC_AGG_MAX, 3),
				    2, 3));
}

static int
build_q5(struct sc_nexmark_query *q)
{
	int b = NXQ_INDEX(q, nxq_input(q, SC_NEXMARK_BID), SC_NXB_AUCTION,
			  SC_NXB_DATE_TIME);
	/* (auction, date_time, start) -> (start, auction, date_time) */
	int w =
	    NXQ_INDEX(q, sc_window_hopping(q->g, b, 1, TEN_S, TWO_S), 2, 0, 1);
	/* (start, auction, num) */
	int cnt = nxq_agg(q, w, 3, 2, SC_AGG_COUNT, 0);
	/* (start, max num) */
	int top = nxq_agg(q, cnt, 3, 1, SC_AGG_MAX, 2);
	/* (start, num, auction) joined on (start, num) */
	int j = sc_graph_join(q->g, NXQ_INDEX(q, cnt, 0, 2, 1), top, 2);

	return nxq_output(q, NXQ_INDEX(q, j, 2, 1));
}

static int
build_q7(struct sc_nexmark_query *q)
{
	int w = sc_window_tumbling(q->g, nxq_input(q, SC_NEXMARK_BID),
				   SC_NXB_DATE_TIME, TEN_S);
	/* (start, price, auction, bidder, date_time, extra) */
	int b = NXQ_INDEX(q, w, SC_NXB_NCOLS, SC_NXB_PRICE, SC_NXB_AUCTION,
			  SC_NXB_BIDDER, SC_NXB_DATE_TIME, SC_NXB_EXTRA);
	/* (start, max price) */
	int top = nxq_agg(q, b, 6, 1, SC_AGG_MAX, 1);
	int j = sc_graph_join(q->g, b, top, 2);

	return nxq_output(q, NXQ_INDEX(q, j, 2, 1, 3, 4, 5));
}

static int
build_q8(struct sc_nexmark_query *q)
{
	int p = sc_window_tumbling(q->g, nxq_input(q, SC_NEXMARK_PERSON),
				   SC_NXP_DATE_TIME, TEN_S);
	int a = sc_window_tumbling(q->g, nxq_input(q, SC_NEXMARK_AUCTION),
				   SC_NXA_DATE_TIME, TEN_S);
	int j;

	/* (id, start, name) and (seller, start), each once */
	p = sc_graph_distinct(
	    q->g, NXQ_INDEX(q, p, SC_NXP_ID, SC_NXP_NCOLS, SC_NXP_NAME));
	a = sc_graph_distinct(q->g,
			      NXQ_INDEX(q, a, SC_NXA_SELLER, SC_NXA_NCOLS));
	j = sc_graph_join(q->g, p, a, 2);
	return nxq_output(q, NXQ_INDEX(q, j, 0, 2, 1));
}

static int
build_q20(struct sc_nexmark_query *q)
{
	int b = NXQ_INDEX(q, nxq_input(q, SC_NEXMARK_BID), SC_NXB_AUCTION,
			  SC_NXB_BIDDER, SC_NXB_PRICE, SC_NXB_CHANNEL,
			  SC_NXB_URL, SC_NXB_DATE_TIME);
	int a = sc_graph_filter(q->g, nxq_input(q, SC_NEXMARK_AUCTION),
				category_10, NULL);

	a = NXQ_INDEX(q, a, SC_NXA_ID, SC_NXA_ITEM_NAME, SC_NXA_INITIAL_BID,
		      SC_NXA_RESERVE, SC_NXA_DATE_TIME, SC_NXA_EXPIRES,
		      SC_NXA_SELLER, SC_NXA_CATEGORY);
	return nxq_output(q, sc_graph_join(q->g, b, a, 1));
}

/* q9's join rows (id, item_name, seller, category, initial_bid, reserve,
 * a.date_time, a.expires, bidder, price, b.date_time): the bid falls
 * within the auction's life. */
static int
q9_in_life(void *ctx, const uint64_t *row, bool *keep)
{
	int64_t start = sc_dec_i64(row[6]), end = sc_dec_i64(row[7]);
	int64_t t = sc_dec_i64(row[10]);

	(void)ctx;
	*keep = start <= t && t <= end;
	return 0;
}

/* A top-k of `from` (ncols wide): per group of its first `key` columns,
 * ranks at most `limit` by order columns o0 (desc0) then, when o1 is
 * not UINT32_MAX, o1 (desc1). */
static int
nxq_topk(struct sc_nexmark_query *q, int from, uint32_t ncols, uint32_t key,
	 uint32_t o0, bool desc0, uint32_t o1, bool desc1, uint64_t limit)
{
	struct sc_topk_spec sp;

	memset(&sp, 0, sizeof(sp));
	sp.ncols = ncols;
	sp.key = key;
	sp.order[0] = o0;
	sp.desc[0] = desc0;
	sp.norder = 1;
	if (o1 != UINT32_MAX) {
		sp.order[1] = o1;
		sp.desc[1] = desc1;
		sp.norder = 2;
	}
	sp.limit = limit;
	return sc_graph_topk(q->g, from, &sp);
}

/* q9 with a lateness: the bounded join, and the top-k grouped by
 * (expires, id) so that an auction's group goes once no bid can reach it;
 * then the output's column order. */
static int
build_q9_late(struct sc_nexmark_query *q)
{
	int a = NXQ_INDEX(q, nxq_input(q, SC_NEXMARK_AUCTION), SC_NXA_ID,
			  SC_NXA_ITEM_NAME, SC_NXA_SELLER, SC_NXA_CATEGORY,
			  SC_NXA_INITIAL_BID, SC_NXA_RESERVE, SC_NXA_DATE_TIME,
			  SC_NXA_EXPIRES);
	int b = NXQ_INDEX(q, nxq_input(q, SC_NEXMARK_BID), SC_NXB_AUCTION,
			  SC_NXB_BIDDER, SC_NXB_PRICE, SC_NXB_DATE_TIME);
	int live = sc_graph_join_within(q->g, a, b, 1, 6, 7, 3);
	/* (expires, id, item_name, seller, category, initial_bid, reserve,
	 * date_time, bidder, price, b.date_time) */
	int k = NXQ_INDEX(q, live, 7, 0, 1, 2, 3, 4, 5, 6, 8, 9, 10);
	int t = nxq_topk(q, k, 11, 2, 9, true, 10, false, 1);

	return nxq_output(q, NXQ_INDEX(q, t, 1, 2, 3, 4, 5, 6, 7, 0, 8, 9, 10));
}

static int
build_q9_plain(struct sc_nexmark_query *q)
{
	int a = NXQ_INDEX(q, nxq_input(q, SC_NEXMARK_AUCTION), SC_NXA_ID,
			  SC_NXA_ITEM_NAME, SC_NXA_SELLER, SC_NXA_CATEGORY,
			  SC_NXA_INITIAL_BID, SC_NXA_RESERVE, SC_NXA_DATE_TIME,
			  SC_NXA_EXPIRES);
	int b = NXQ_INDEX(q, nxq_input(q, SC_NEXMARK_BID), SC_NXB_AUCTION,
			  SC_NXB_BIDDER, SC_NXB_PRICE, SC_NXB_DATE_TIME);
	/* The output's columns already: the auction's eight, then bidder,
	 * price and b.date_time. */
	int live = sc_graph_filter(q->g, sc_graph_join(q->g, a, b, 1),
				   q9_in_life, NULL);

	/* per auction the highest price, and of those the earliest */
	return nxq_output(q, nxq_topk(q, live, 11, 1, 9, true, 10, false, 1));
}

static int
build_q9(struct sc_nexmark_query *q)
{
	return q->lateness >= 0 ? build_q9_late(q) : build_q9_plain(q);
}

static int
build_q18(struct sc_nexmark_query *q)
{
	/* (bidder, auction, ...) so the group leads; the swap undoes
	 * itself */
	int b = NXQ_INDEX(q, nxq_input(q, SC_NEXMARK_BID), 1, 0, 2, 3, 4, 5, 6);
	int t = nxq_topk(q, b, SC_NXB_NCOLS, 2, SC_NXB_DATE_TIME, true,
			 UINT32_MAX, false, 1);

	return nxq_output(q, NXQ_INDEX(q, t, 1, 0, 2, 3, 4, 5, 6));
}

static int
build_q19(struct sc_nexmark_query *q)
{
	/* bids lead with their auction already */
	return nxq_output(q, nxq_topk(q, nxq_input(q, SC_NEXMARK_BID),
				      SC_NXB_NCOLS, 1, SC_NXB_PRICE, true,
				      UINT32_MAX, false, 10));
}

/* --- string functions: q14, q21, q22 ----------------------------------------
 */

#define HOUR_MS 3600000

/* q14's rows: the bids with 1,000,000 < 0.908 * price < 50,000,000, as
 * (auction, bidder, 0.908 * price, the time of day of date_time's UTC hour,
 * date_time, extra, how many 'c' extra holds). */
static int
q14_row(void *ctx, const uint64_t *row, struct sc_emitter *out)
{
	const struct sc_nexmark_query *q = ctx;
	double price = 0.908 * (double)sc_dec_i64(row[SC_NXB_PRICE]);
	int64_t t = sc_dec_i64(row[SC_NXB_DATE_TIME]), hour, c = 0;
	const char *text;
	size_t len;
	uint64_t o[7];
	int rc;

	if (!(price > 1e6 && price < 5e7))
		return 0;
	hour = (t / HOUR_MS - (t % HOUR_MS < 0)) % 24;
	hour += hour < 0 ? 24 : 0;
	if ((rc = nxq_text(q, row[SC_NXB_EXTRA], &text, &len)) != 0)
		return rc;
	for (size_t i = 0; i < len; i++)
		c += text[i] == 'c';
	o[0] = row[SC_NXB_AUCTION];
	o[1] = row[SC_NXB_BIDDER];
	o[2] = sc_enc_f64(price);
	/* dayTime 8-18 h, nightTime 0-6 h and 20-23 h, otherTime 7 and 19 h */
	o[3] = sc_enc_symbol(hour >= 8 && hour <= 18   ? q->consts[0]
			     : hour <= 6 || hour >= 20 ? q->consts[1]
						       : q->consts[2]);
	o[4] = row[SC_NXB_DATE_TIME];
	o[5] = row[SC_NXB_EXTRA];
	o[6] = sc_enc_i64(c);
	return sc_emit(out, o);
}

static int
build_q14(struct sc_nexmark_query *q)
{
	static const char *const times[3] = {"dayTime", "nightTime",
					     "otherTime"};
	static const enum sc_type t[7] = {
	    SC_TYPE_I64, SC_TYPE_I64,	 SC_TYPE_F64, SC_TYPE_SYMBOL,
	    SC_TYPE_I64, SC_TYPE_SYMBOL, SC_TYPE_I64};
	struct sc_schema s;
	int rc;

	if ((rc = nxq_consts(q, times, 3)) != 0 ||
	    (rc = sc_schema_init(&s, 7, t, q->symbols)) != 0)
		return rc;
	return nxq_output(q,
			  sc_graph_flat_map(q->g, nxq_input(q, SC_NEXMARK_BID),
					    &s, q14_row, q));
}

/* q21's known channels, lower case, in the order of their ids "0".."3". */
static const char *const q21_channels[4] = {"apple", "google", "facebook",
					    "baidu"};

/* Whether text[0..len) is `lower` but for the case of ASCII letters. */
static bool
nxq_equal_nocase(const char *text, size_t len, const char *lower)
{
	size_t i = 0;

	for (; i < len && lower[i]; i++) {
		char c = text[i];

		if ((c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c) !=
		    lower[i])
			return false;
	}
	return i == len && !lower[i];
}

/* Intern text[0..len), emit o with it in column col, and hand the
 * reference to the step (graph.h, sc_emit_own). */
static int
nxq_emit_made(const struct sc_nexmark_query *q, struct sc_emitter *out,
	      uint64_t *o, size_t ncol, const char *const *text,
	      const size_t *len, const uint32_t *col)
{
	uint64_t ids[3];
	size_t made = 0, given = 0;
	int rc = 0;

	for (; made < ncol; made++) {
		if ((rc = sc_symtab_intern(q->symbols, text[made], len[made],
					   &ids[made])) != 0)
			break;
		o[col[made]] = sc_enc_symbol(ids[made]);
	}
	if (rc == 0)
		rc = sc_emit(out, o);
	while (rc == 0 && given < made &&
	       (rc = sc_emit_own(out, ids[given])) == 0)
		given++;
	/* A failure fails the step: what the step was not given is ours. */
	for (size_t i = given; i < made; i++)
		(void)sc_symtab_release(q->symbols, ids[i]);
	return rc;
}

/* q21's rows: (auction, bidder, price, channel, channel_id), channel_id
 * "0".."3" for the known channels (by lower(channel)), else the text of
 * the url's first match of `(&|^)channel_id=([^&]*)` (group 2,
 * operators/text.h); a bid
 * with neither has no row. */
static int
q21_row(void *ctx, const uint64_t *row, struct sc_emitter *out)
{
	const struct sc_nexmark_query *q = ctx;
	const char *text, *id;
	size_t len, idlen;
	uint64_t o[5] = {row[SC_NXB_AUCTION], row[SC_NXB_BIDDER],
			 row[SC_NXB_PRICE], row[SC_NXB_CHANNEL], 0};
	const uint32_t col = 4;
	int rc;

	if ((rc = nxq_text(q, row[SC_NXB_CHANNEL], &text, &len)) != 0)
		return rc;
	for (int i = 0; i < 4; i++)
		if (nxq_equal_nocase(text, len, q21_channels[i])) {
			o[4] = sc_enc_symbol(q->consts[i]);
			return sc_emit(out, o);
		}
	if ((rc = nxq_text(q, row[SC_NXB_URL], &text, &len)) != 0)
		return rc;
	if ((rc = sc_regex_extract(q->re, text, len, 2, &id, &idlen)) <= 0)
		return rc; /* 0: no channel_id, no row */
	return nxq_emit_made(q, out, o, 1, &id, &idlen, &col);
}

static int
build_q21(struct sc_nexmark_query *q)
{
	static const char *const ids[4] = {"0", "1", "2", "3"};
	static const enum sc_type t[5] = {SC_TYPE_I64, SC_TYPE_I64, SC_TYPE_I64,
					  SC_TYPE_SYMBOL, SC_TYPE_SYMBOL};
	struct sc_schema s;
	int rc;

	if ((rc = nxq_consts(q, ids, 4)) != 0 ||
	    (rc = sc_schema_init(&s, 5, t, q->symbols)) != 0)
		return rc;
	if ((rc = sc_regex_create("(&|^)channel_id=([^&]*)", &q->re)) != 0)
		return rc;
	return nxq_output(q,
			  sc_graph_flat_map(q->g, nxq_input(q, SC_NEXMARK_BID),
					    &s, q21_row, q));
}

/* q22's rows: (auction, bidder, price, channel, dir1, dir2, dir3), the
 * url's parts 3, 4 and 5 split on '/' (from 0: "https:", "",
 * "www.nexmark.com", dir1, ...), a part the url lacks the empty text. */
static int
q22_row(void *ctx, const uint64_t *row, struct sc_emitter *out)
{
	static const uint32_t col[3] = {4, 5, 6};
	const struct sc_nexmark_query *q = ctx;
	const char *url, *p, *end, *part[3];
	size_t len, plen[3];
	bool more = true;
	uint64_t o[7] = {row[SC_NXB_AUCTION],
			 row[SC_NXB_BIDDER],
			 row[SC_NXB_PRICE],
			 row[SC_NXB_CHANNEL],
			 0,
			 0,
			 0};
	int rc;

	if ((rc = nxq_text(q, row[SC_NXB_URL], &url, &len)) != 0)
		return rc;
	/* Part 3, then each next part as part 0 of what follows it: one
	 * pass over the url. A part the url lacks is the empty text. */
	p = url;
	end = url + len;
	for (size_t k = 0; k < 3; k++) {
		part[k] = "";
		plen[k] = 0;
		if (!more)
			continue;
		rc = sc_text_split_part(p, (size_t)(end - p), '/', k ? 0 : 3,
					&part[k], &plen[k]);
		if (rc < 0)
			return rc;
		p = rc ? part[k] + plen[k] : end;
		more = p < end; /* p is at a separator: a part follows */
		p += more;
	}
	return nxq_emit_made(q, out, o, 3, part, plen, col);
}

static int
build_q22(struct sc_nexmark_query *q)
{
	static const enum sc_type t[7] = {
	    SC_TYPE_I64,    SC_TYPE_I64,    SC_TYPE_I64,   SC_TYPE_SYMBOL,
	    SC_TYPE_SYMBOL, SC_TYPE_SYMBOL, SC_TYPE_SYMBOL};
	struct sc_schema s;
	int rc;

	if ((rc = sc_schema_init(&s, 7, t, q->symbols)) != 0)
		return rc;
	return nxq_output(q,
			  sc_graph_flat_map(q->g, nxq_input(q, SC_NEXMARK_BID),
					    &s, q22_row, q));
}

/* q23: every bid with its auction and the auction's seller. */
static int
build_q23(struct sc_nexmark_query *q)
{
	int b = NXQ_INDEX(q, nxq_input(q, SC_NEXMARK_BID), SC_NXB_AUCTION,
			  SC_NXB_BIDDER, SC_NXB_PRICE, SC_NXB_CHANNEL,
			  SC_NXB_URL, SC_NXB_DATE_TIME, SC_NXB_EXTRA);
	int a = NXQ_INDEX(q, nxq_input(q, SC_NEXMARK_AUCTION), SC_NXA_ID,
			  SC_NXA_SELLER, SC_NXA_ITEM_NAME, SC_NXA_INITIAL_BID,
			  SC_NXA_RESERVE, SC_NXA_EXPIRES, SC_NXA_CATEGORY);
	int p = NXQ_INDEX(q, nxq_input(q, SC_NEXMARK_PERSON), SC_NXP_ID,
			  SC_NXP_NAME, SC_NXP_CITY, SC_NXP_STATE);
	/* (auction, bidder, price, channel, url, date_time, extra, seller,
	 * item_name, initial_bid, reserve, expires, category) */
	int ba = sc_graph_join(q->g, b, a, 1);
	/* seller first, then joined: (seller, auction .. category, name,
	 * city, state) */
	int bap = sc_graph_join(
	    q->g, NXQ_INDEX(q, ba, 7, 0, 1, 2, 3, 4, 5, 6, 8, 9, 10, 11, 12), p,
	    1);

	return nxq_output(q, NXQ_INDEX(q, bap, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10,
				       11, 0, 12, 13, 14, 15));
}

/* --- q6 ---------------------------------------------------------------------
 */

/* q6: the closing price of each auction (grouped as q4's), then per
 * seller the AVG of those ranked at most 10 by date_time, latest first
 * (ties kept), over rows (seller, a.date_time, id, final). */
static int
build_q6(struct sc_nexmark_query *q)
{
	int live = nxq_bids_in_life(q, SC_NXA_SELLER), last;

	if (q->lateness < 0) /* (id, seller, a.date_time, final) */
		last = NXQ_INDEX(q,
				 nxq_agg(q, NXQ_INDEX(q, live, 0, 3, 1, 4), 4,
					 3, SC_AGG_MAX, 3),
				 1, 2, 0, 3);
	else /* (expires, id, seller, a.date_time, final) */
		last = NXQ_INDEX(q,
				 nxq_agg(q, NXQ_INDEX(q, live, 2, 0, 3, 1, 4),
					 5, 4, SC_AGG_MAX, 4),
				 2, 3, 1, 4);
	last = nxq_topk(q, last, 4, 1, 1, true, UINT32_MAX, false, 10);
	return nxq_output(q, q4_avg(q, last, 0, 3));
}

/* --- sessions: q11 -----------------------------------------------------------
 */

/* q11: per bidder, its sessions of bids less than 10 s apart, as
 * (bidder, bid_count, starttime, endtime). */
static int
build_q11(struct sc_nexmark_query *q)
{
	struct sc_session_spec sp = {2, 1, 1, TEN_S};
	int b = NXQ_INDEX(q, nxq_input(q, SC_NEXMARK_BID), SC_NXB_BIDDER,
			  SC_NXB_DATE_TIME);

	return nxq_output(
	    q, NXQ_INDEX(q, sc_graph_session(q->g, b, &sp), 0, 3, 1, 2));
}

/* --- processing time: q12 ---------------------------------------------------
 */

/* (bidder, start, count) -> (bidder, count, start, start + 10 s). */
static int
q12_row(void *ctx, const uint64_t *row, uint64_t *out)
{
	(void)ctx;
	out[0] = row[0];
	out[1] = row[2];
	out[2] = row[1];
	out[3] = sc_enc_i64(sc_dec_i64(row[1]) + TEN_S);
	return 0;
}

/* q12: per bidder, its bids per tumbling 10 s window of processing time,
 * as (bidder, bid_count, starttime, endtime). */
static int
build_q12(struct sc_nexmark_query *q)
{
	static const enum sc_type t[4] = {SC_TYPE_I64, SC_TYPE_I64, SC_TYPE_I64,
					  SC_TYPE_I64};
	struct sc_schema s;
	int rc, b, w;

	if ((rc = sc_schema_init(&s, 4, t, q->symbols)) != 0)
		return rc;
	/* (bidder, p_time) -> (bidder, p_time, start) -> (bidder, start) */
	b = NXQ_INDEX(q, nxq_input(q, SC_NEXMARK_BID), SC_NXB_BIDDER,
		      SC_NXB_P_TIME);
	w = NXQ_INDEX(q, sc_window_tumbling(q->g, b, 1, TEN_S), 0, 2, 1);
	return nxq_output(q, sc_graph_map(q->g,
					  nxq_agg(q, w, 3, 2, SC_AGG_COUNT, 0),
					  &s, q12_row, NULL));
}

/* --- the side input: q13 ----------------------------------------------------
 */

#define Q13_KEYS 10000 /* the side input's keys, and the auction's modulus */

static const char *const side_cols[2] = {"key", "value"};

/* (auction, bidder, price, date_time, auction % 10000): SQL's mod, whose
 * sign is the dividend's, as C's %. */
static int
q13_row(void *ctx, const uint64_t *row, uint64_t *out)
{
	(void)ctx;
	out[0] = row[SC_NXB_AUCTION];
	out[1] = row[SC_NXB_BIDDER];
	out[2] = row[SC_NXB_PRICE];
	out[3] = row[SC_NXB_DATE_TIME];
	out[4] = sc_enc_i64(sc_dec_i64(row[SC_NXB_AUCTION]) % Q13_KEYS);
	return 0;
}

/* The standard side input, as the suites load it: key k with the value
 * k's decimal text, for k in 0 .. 9,999. */
static int
q13_standard(struct sc_nexmark_query *q, struct sc_csv_rows *r)
{
	memset(r, 0, sizeof(*r));
	r->ncols = 2;
	r->symbols = q->symbols;
	r->nsym = 1;
	r->sym_cols[0] = 1;
	r->rows = malloc((size_t)Q13_KEYS * 2 * sizeof(uint64_t));
	if (!r->rows)
		return sc_errorf(SC_ENOMEM,
				 "q13: no memory for the side input");
	r->cap = Q13_KEYS;
	for (int64_t k = 0; k < Q13_KEYS; k++) {
		char text[8];
		uint64_t id;
		int rc;

		(void)snprintf(text, sizeof(text), "%lld", (long long)k);
		if ((rc = sc_symtab_intern_cstr(q->symbols, text, &id)) != 0)
			return rc; /* r holds what was made: fini frees it */
		r->rows[2 * k] = sc_enc_i64(k);
		r->rows[2 * k + 1] = sc_enc_symbol(id);
		r->n++;
	}
	return 0;
}

/* q13: every bid with the side input's value of key auction % 10000, a
 * lookup join (lookup.h) with the table read once, from the file the
 * options name or the standard one. */
static int
build_q13(struct sc_nexmark_query *q)
{
	static const enum sc_type t[5] = {SC_TYPE_I64, SC_TYPE_I64, SC_TYPE_I64,
					  SC_TYPE_I64, SC_TYPE_I64};
	static const enum sc_type side[2] = {SC_TYPE_I64, SC_TYPE_SYMBOL};
	static const uint32_t key = 4, pick[5] = {0, 1, 2, 3, 6};
	struct sc_schema s, ts;
	struct sc_csv_rows rows = {0};
	int rc;

	if ((rc = sc_schema_init(&s, 5, t, q->symbols)) != 0 ||
	    (rc = sc_schema_init(&ts, 2, side, q->symbols)) != 0)
		return rc;
	rc = q->side_input ? sc_csv_read_file(q->side_input, &ts, side_cols, 0,
					      &rows, NULL)
			   : q13_standard(q, &rows);
	if (rc == 0) {
		struct sc_lookup_spec sp = {.nkey = 1,
					    .stream_key = &key,
					    .table = &ts,
					    .rows = rows.rows,
					    .n = rows.n,
					    .out_cols = pick,
					    .nout = 5};

		rc = nxq_output(
		    q, sc_graph_lookup(
			   q->g,
			   sc_graph_map(q->g, nxq_input(q, SC_NEXMARK_BID), &s,
					q13_row, NULL),
			   &sp));
	}
	sc_csv_rows_fini(&rows); /* the node holds its own references */
	return rc;
}

/* --- per-day counts: q15, q16, q17 ------------------------------------------
 *
 * Each groups the bids by day (DATE_FORMAT(date_time, 'yyyy-MM-dd'), here
 * the day's number since 1970-01-01 UTC, which orders as the text does)
 * and computes every aggregate of its SELECT in one multi-aggregate
 * (multiagg.h): the price ranks are 0/1 columns a map computes ahead, the
 * FILTER of each COUNT. The map declares the day monotone in date_time, so
 * a declared lateness closes a day's groups and cleanup drops them.
 */

#define DAY_MS	  86400000
#define MINUTE_MS 60000

static int64_t
floor_div(int64_t a, int64_t b)
{
	return a / b - (a % b < 0);
}

static int64_t
day_of(void *ctx, int64_t t)
{
	(void)ctx;
	return floor_div(t, DAY_MS);
}

/* The price ranks of q15-q17: < 10,000; 10,000 to < 1,000,000; the rest.
 * Bools: a multi-aggregate's filter passes a row whose word is not 0, and
 * an i64's 0 is the word 1 << 63. */
static void
price_ranks(int64_t price, uint64_t *r)
{
	r[0] = sc_enc_bool(price < 10000);
	r[1] = sc_enc_bool(price >= 10000 && price < 1000000);
	r[2] = sc_enc_bool(price >= 1000000);
}

/* A term of a multi-aggregate over i64 columns. */
static struct sc_magg_term
nxq_term(enum sc_magg_kind kind, uint32_t col, uint32_t filter)
{
	struct sc_magg_term t = {kind, col, SC_TYPE_I64, filter};

	return t;
}

/* The 12 counts of q15 and q16 into terms[0..12), over rows whose
 * bidder, auction and ranks are at columns b, b + 1, b + 2..b + 4. */
static void
rank_counts(struct sc_magg_term *terms, uint32_t b)
{
	uint32_t n = 0;

	terms[n++] = nxq_term(SC_MAGG_COUNT, 0, SC_MAGG_ALL);
	for (uint32_t r = 0; r < 3; r++)
		terms[n++] = nxq_term(SC_MAGG_COUNT, 0, b + 2 + r);
	for (uint32_t c = 0; c < 2; c++) {
		terms[n++] =
		    nxq_term(SC_MAGG_COUNT_DISTINCT, b + c, SC_MAGG_ALL);
		for (uint32_t r = 0; r < 3; r++)
			terms[n++] =
			    nxq_term(SC_MAGG_COUNT_DISTINCT, b + c, b + 2 + r);
	}
}

/* A map of the bids into rows of `ncols` columns, i64 but for a text at
 * text_col (UINT32_MAX: none) and the three price ranks' bools from
 * rank_col, the day at day_col; then the aggregate. */
static int
nxq_daily(struct sc_nexmark_query *q, uint32_t ncols, uint32_t text_col,
	  uint32_t rank_col, sc_map_fn fn, uint32_t day_col,
	  const struct sc_multiagg_spec *sp)
{
	enum sc_type t[SC_SCHEMA_MAX_COLS];
	struct sc_schema s;
	int m, rc;

	for (uint32_t i = 0; i < ncols; i++)
		t[i] = i == text_col			   ? SC_TYPE_SYMBOL
		       : i >= rank_col && i < rank_col + 3 ? SC_TYPE_BOOL
							   : SC_TYPE_I64;
	if ((rc = sc_schema_init(&s, ncols, t, q->symbols)) != 0)
		return rc;
	m = sc_graph_map(q->g, nxq_input(q, SC_NEXMARK_BID), &s, fn, q);
	if (m < 0)
		return m;
	if ((rc = sc_graph_monotone(q->g, m, day_col, SC_NXB_DATE_TIME, day_of,
				    NULL)) != 0)
		return rc;
	return nxq_output(q, sc_graph_multiagg(q->g, m, sp));
}

/* q15's rows: (day, bidder, auction, rank1, rank2, rank3). */
static int
q15_row(void *ctx, const uint64_t *row, uint64_t *out)
{
	(void)ctx;
	out[0] = sc_enc_i64(day_of(NULL, sc_dec_i64(row[SC_NXB_DATE_TIME])));
	out[1] = row[SC_NXB_BIDDER];
	out[2] = row[SC_NXB_AUCTION];
	price_ranks(sc_dec_i64(row[SC_NXB_PRICE]), out + 3);
	return 0;
}

static int
build_q15(struct sc_nexmark_query *q)
{
	struct sc_multiagg_spec sp;

	memset(&sp, 0, sizeof(sp));
	sp.ncols = 6;
	sp.k = 1;
	sp.nterms = 12;
	rank_counts(sp.terms, 1);
	return nxq_daily(q, 6, UINT32_MAX, 3, q15_row, 0, &sp);
}

/* q16's rows: (channel, day, bidder, auction, rank1, rank2, rank3, the
 * minute of the day). */
static int
q16_row(void *ctx, const uint64_t *row, uint64_t *out)
{
	int64_t t = sc_dec_i64(row[SC_NXB_DATE_TIME]);

	(void)ctx;
	out[0] = row[SC_NXB_CHANNEL];
	out[1] = sc_enc_i64(day_of(NULL, t));
	out[2] = row[SC_NXB_BIDDER];
	out[3] = row[SC_NXB_AUCTION];
	price_ranks(sc_dec_i64(row[SC_NXB_PRICE]), out + 4);
	out[7] =
	    sc_enc_i64(floor_div(t - floor_div(t, DAY_MS) * DAY_MS, MINUTE_MS));
	return 0;
}

static int
build_q16(struct sc_nexmark_query *q)
{
	struct sc_multiagg_spec sp;

	memset(&sp, 0, sizeof(sp));
	sp.ncols = 8;
	sp.k = 2;
	sp.nterms = 13;
	sp.terms[0] = nxq_term(SC_MAGG_MAX, 7, SC_MAGG_ALL);
	rank_counts(sp.terms + 1, 2);
	return nxq_daily(q, 8, 0, 4, q16_row, 1, &sp);
}

/* q17's rows: (auction, day, price, rank1, rank2, rank3). */
static int
q17_row(void *ctx, const uint64_t *row, uint64_t *out)
{
	(void)ctx;
	out[0] = row[SC_NXB_AUCTION];
	out[1] = sc_enc_i64(day_of(NULL, sc_dec_i64(row[SC_NXB_DATE_TIME])));
	out[2] = row[SC_NXB_PRICE];
	price_ranks(sc_dec_i64(row[SC_NXB_PRICE]), out + 3);
	return 0;
}

static int
build_q17(struct sc_nexmark_query *q)
{
	struct sc_multiagg_spec sp;

	memset(&sp, 0, sizeof(sp));
	sp.ncols = 6;
	sp.k = 2;
	sp.nterms = 8;
	sp.terms[0] = nxq_term(SC_MAGG_COUNT, 0, SC_MAGG_ALL);
	for (uint32_t r = 0; r < 3; r++)
		sp.terms[1 + r] = nxq_term(SC_MAGG_COUNT, 0, 3 + r);
	sp.terms[4] = nxq_term(SC_MAGG_MIN, 2, SC_MAGG_ALL);
	sp.terms[5] = nxq_term(SC_MAGG_MAX, 2, SC_MAGG_ALL);
	sp.terms[6] = nxq_term(SC_MAGG_AVG, 2, SC_MAGG_ALL);
	sp.terms[7] = nxq_term(SC_MAGG_SUM, 2, SC_MAGG_ALL);
	return nxq_daily(q, 6, UINT32_MAX, 3, q17_row, 1, &sp);
}

/* --- the partitioned sink: q10 ----------------------------------------------
 *
 * Every bid with its day and minute, which name its partition (the sink
 * partitions on date_time: SC_NEXMARK_Q10_*); date_time is copied, so its
 * waterline passes to the output and closes the partitions behind it.
 */

/* q10's rows: (auction, bidder, price, date_time, extra, day, minute). */
static int
q10_row(void *ctx, const uint64_t *row, uint64_t *out)
{
	int64_t t = sc_dec_i64(row[SC_NXB_DATE_TIME]), day = day_of(NULL, t);

	(void)ctx;
	out[0] = row[SC_NXB_AUCTION];
	out[1] = row[SC_NXB_BIDDER];
	out[2] = row[SC_NXB_PRICE];
	out[3] = row[SC_NXB_DATE_TIME];
	out[4] = row[SC_NXB_EXTRA];
	out[5] = sc_enc_i64(day);
	/* t - day * DAY_MS is in [0, DAY_MS): a plain division floors it */
	out[6] = sc_enc_i64((t - day * DAY_MS) / MINUTE_MS);
	return 0;
}

static int
build_q10(struct sc_nexmark_query *q)
{
	static const enum sc_type t[7] = {
	    SC_TYPE_I64,    SC_TYPE_I64, SC_TYPE_I64, SC_TYPE_I64,
	    SC_TYPE_SYMBOL, SC_TYPE_I64, SC_TYPE_I64};
	struct sc_schema s;
	int m, rc;

	if ((rc = sc_schema_init(&s, 7, t, q->symbols)) != 0)
		return rc;
	m = sc_graph_map(q->g, nxq_input(q, SC_NEXMARK_BID), &s, q10_row, q);
	if (m < 0)
		return m;
	if ((rc = sc_graph_monotone_offset(q->g, m, SC_NEXMARK_Q10_TIME_COL,
					   SC_NXB_DATE_TIME, 0)) != 0 ||
	    (rc = sc_graph_monotone(q->g, m, 5, SC_NXB_DATE_TIME, day_of,
				    NULL)) != 0)
		return rc;
	return nxq_output(q, m);
}

/* --- the table -------------------------------------------------------------
 */

static const char *const q0_cols[] = {
    "auction", "bidder", "price", "channel", "url", "date_time", "extra"};
static const char *const q1_cols[] = {"auction", "bidder", "price", "date_time",
				      "extra"};
static const char *const q2_cols[] = {"auction", "price"};
static const char *const q3_cols[] = {"name", "city", "state", "id"};
static const char *const q4_cols[] = {"category", "avg_price"};
static const char *const q5_cols[] = {"auction", "num"};
static const char *const q6_cols[] = {"seller", "avg_price"};
static const char *const q7_cols[] = {"auction", "price", "bidder", "date_time",
				      "extra"};
static const char *const q8_cols[] = {"id", "name", "starttime"};
static const char *const q9_cols[] = {
    "id",	 "item_name", "seller", "category", "initial_bid",  "reserve",
    "date_time", "expires",   "bidder", "price",    "bid_date_time"};
static const char *const q18_cols[] = {
    "auction", "bidder", "price", "channel", "url", "date_time", "extra"};
static const char *const q19_cols[] = {
    "auction", "bidder", "price", "channel", "url", "date_time", "extra"};
static const char *const q10_cols[] = {
    "auction", "bidder", "price", "date_time", "extra", "day", "minute"};
static const char *const q11_cols[] = {"bidder", "bid_count", "starttime",
				       "endtime"};
static const char *const q12_cols[] = {"bidder", "bid_count", "starttime",
				       "endtime"};
static const char *const q13_cols[] = {"auction", "bidder", "price",
				       "date_time", "value"};
static const char *const q14_cols[] = {"auction",	"bidder",    "price",
				       "bid_time_type", "date_time", "extra",
				       "c_counts"};
static const char *const q15_cols[] = {
    "day",	     "total_bids",     "rank1_bids",	 "rank2_bids",
    "rank3_bids",    "total_bidders",  "rank1_bidders",	 "rank2_bidders",
    "rank3_bidders", "total_auctions", "rank1_auctions", "rank2_auctions",
    "rank3_auctions"};
static const char *const q16_cols[] = {"channel",	 "day",
				       "minute",	 "total_bids",
				       "rank1_bids",	 "rank2_bids",
				       "rank3_bids",	 "total_bidders",
				       "rank1_bidders",	 "rank2_bidders",
				       "rank3_bidders",	 "total_auctions",
				       "rank1_auctions", "rank2_auctions",
				       "rank3_auctions"};
static const char *const q17_cols[] = {
    "auction",	  "day",       "total_bids", "rank1_bids", "rank2_bids",
    "rank3_bids", "min_price", "max_price",  "avg_price",  "sum_price"};
static const char *const q21_cols[] = {"auction", "bidder", "price", "channel",
				       "channel_id"};
static const char *const q22_cols[] = {"auction", "bidder", "price", "channel",
				       "dir1",	  "dir2",   "dir3"};
static const char *const q23_cols[] = {
    "auction",	   "bidder",	  "price",	 "channel",
    "url",	   "date_time",	  "extra",	 "item_name",
    "initial_bid", "reserve",	  "expires",	 "seller",
    "category",	   "seller_name", "seller_city", "seller_state"};
static const char *const q20_cols[] = {
    "auction",	 "bidder",    "price",	     "channel", "url",
    "date_time", "item_name", "initial_bid", "reserve", "auction_date_time",
    "expires",	 "seller",    "category"};

#define NXQ_DEF(n, place)                                                      \
	{                                                                      \
#n, place, n##_cols, sizeof(n##_cols) / sizeof(n##_cols[0]),   \
		    build_##n, false                                           \
	}
/* A query whose bids carry their processing time. */
#define NXQ_DEF_PROCTIME(n, place)                                             \
	{                                                                      \
#n, place, n##_cols, sizeof(n##_cols) / sizeof(n##_cols[0]),   \
		    build_##n, true                                            \
	}

/* The default placements: the best events/s measured on 2 workers among
 * chains, per-node, sharded:2 and balanced (bench/README.md, Nexmark;
 * `subcirc place --workload nexmark:Q` measures them again). */
static const struct nxq_def defs[] = {
    NXQ_DEF(q0, "per-node"),
    NXQ_DEF(q1, "chains"),
    NXQ_DEF(q2, "per-node"),
    NXQ_DEF(q3, "chains"),
    NXQ_DEF(q4, "sharded:2"),
    NXQ_DEF(q5, "chains"),
    NXQ_DEF(q6, "balanced"),
    NXQ_DEF(q7, "chains"),
    NXQ_DEF(q8, "per-node"),
    NXQ_DEF(q9, "sharded:2"),
    NXQ_DEF(q10, "chains"),
    NXQ_DEF(q11, "balanced"),
    NXQ_DEF_PROCTIME(q12, "balanced"),
    NXQ_DEF(q13, "sharded:2"),
    NXQ_DEF(q14, "chains"),
    NXQ_DEF(q15, "balanced"),
    NXQ_DEF(q16, "per-node"),
    NXQ_DEF(q17, "sharded:2"),
    NXQ_DEF(q18, "sharded:2"),
    NXQ_DEF(q19, "balanced"),
    NXQ_DEF(q20, "chains"),
    NXQ_DEF(q21, "sharded:2"),
    NXQ_DEF(q22, "sharded:2"),
    NXQ_DEF(q23, "chains"),
};
#define NDEFS (sizeof(defs) / sizeof(defs[0]))

size_t
sc_nexmark_query_names(const char *const **names)
{
	static const char *n[NDEFS];

	for (size_t i = 0; i < NDEFS; i++)
		n[i] = defs[i].name;
	if (names)
		*names = n;
	return NDEFS;
}

/* --- names ----------------------------------------------------------------
 *
 * The builders leave operators unnamed ("join#7"); a trace or a unit table
 * of "join#7" says nothing to someone who knows the query. So each
 * unnamed node is named after the query, its kind and the inputs it
 * derives from: "q4 join auction⋈bid", "q4 aggregate auction+bid". A name
 * that repeats gets " 2", " 3" (names are unique in a graph).
 */

#define NXQ_NAME_MAX 64

/* The inputs (a bit per kind) each node derives from, into src[id]. */
static void
nxq_sources(const struct sc_nexmark_query *q, unsigned *src, size_t n)
{
	for (size_t id = 0; id < n; id++) {
		struct sc_node_info ni;

		src[id] = 0;
		for (int k = 0; k < SC_NEXMARK_KINDS; k++)
			if (q->in[k] == (int)id)
				src[id] |= 1u << k;
		if (sc_graph_node_info(q->g, (int)id, &ni) != 0)
			continue;
		for (uint32_t p = 0; p < ni.ninputs; p++)
			if (ni.inputs[p] >= 0 && (size_t)ni.inputs[p] < id)
				src[id] |= src[ni.inputs[p]];
	}
}

/* "auction+bid" for a set of inputs. */
static void
nxq_source_text(unsigned set, char *buf, size_t n)
{
	size_t len = 0;

	buf[0] = '\0';
	for (int k = 0; k < SC_NEXMARK_KINDS; k++)
		if (set & (1u << k))
			len += (size_t)snprintf(
			    buf + len, len < n ? n - len : 0, "%s%s",
			    len ? "+" : "", sc_nexmark_kind_name(k));
}

/* Whether node id still has the graph's default name "<kind>#<id>". */
static bool
nxq_unnamed(const struct sc_node_info *ni, size_t id)
{
	char def[48];

	(void)snprintf(def, sizeof(def), "%s#%zu", sc_node_kind_name(ni->kind),
		       id);
	return !strcmp(ni->name, def);
}

/* Node id's name: its kind and sources, a join's sides apart. */
static void
nxq_node_name(const struct sc_nexmark_query *q, const unsigned *src,
	      const struct sc_node_info *ni, char *buf, size_t n)
{
	char a[32], b[32];

	if (ni->ninputs == 2 && ni->inputs[0] >= 0 && ni->inputs[1] >= 0) {
		nxq_source_text(src[ni->inputs[0]], a, sizeof(a));
		nxq_source_text(src[ni->inputs[1]], b, sizeof(b));
		/* Cut, if need be: the name is for people. */
		if (snprintf(buf, n, "%s %s %s\u22c8%s", q->def->name,
			     sc_node_kind_name(ni->kind), a, b) >= (int)n)
			buf[n - 1] = '\0';
		return;
	}
	nxq_source_text(ni->ninputs && ni->inputs[0] >= 0 ? src[ni->inputs[0]]
							  : 0,
			a, sizeof(a));
	(void)snprintf(buf, n, "%s %s %s", q->def->name,
		       sc_node_kind_name(ni->kind), a);
}

static int
nxq_name_nodes(struct sc_nexmark_query *q)
{
	size_t n = sc_graph_node_count(q->g);
	unsigned *src = calloc(n ? n : 1, sizeof(*src));
	int rc = 0;

	if (!src)
		return sc_errorf(SC_ENOMEM,
				 "sc_nexmark_query_create: out of memory");
	nxq_sources(q, src, n);
	for (size_t id = 0; id < n && !rc; id++) {
		struct sc_node_info ni;
		char base[NXQ_NAME_MAX], name[NXQ_NAME_MAX + 16];

		if (sc_graph_node_info(q->g, (int)id, &ni) != 0 ||
		    !nxq_unnamed(&ni, id))
			continue;
		nxq_node_name(q, src, &ni, base, sizeof(base));
		(void)snprintf(name, sizeof(name), "%s", base);
		for (int k = 2; sc_graph_find(q->g, name) >= 0; k++)
			if (snprintf(name, sizeof(name), "%s %d", base, k) >=
			    (int)sizeof(name))
				break; /* cannot happen: base is shorter */
		rc = sc_graph_set_name(q->g, (int)id, name);
	}
	free(src);
	return rc;
}

static const struct nxq_def *
nxq_find(const char *name)
{
	for (size_t i = 0; i < NDEFS; i++)
		if (!strcmp(defs[i].name, name))
			return &defs[i];
	return NULL;
}

void
sc_nexmark_query_opts_default(struct sc_nexmark_query_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->lateness_ms = -1;
}

int
sc_nexmark_query_create(const char *name, struct sc_symtab *symbols,
			unsigned flags, struct sc_nexmark_query **out)
{
	struct sc_nexmark_query_opts o;

	sc_nexmark_query_opts_default(&o);
	o.flags = flags;
	return sc_nexmark_query_create_opts(name, symbols, &o, out);
}

int
sc_nexmark_query_create_opts(const char *name, struct sc_symtab *symbols,
			     const struct sc_nexmark_query_opts *o,
			     struct sc_nexmark_query **out)
{
	struct sc_nexmark_query_opts def;
	const struct nxq_def *d;
	struct sc_nexmark_query *q;
	int rc;

	if (!o) {
		sc_nexmark_query_opts_default(&def);
		o = &def;
	}
	if (!name || !symbols || !out ||
	    (o->flags & ~(SC_NEXMARK_QUERY_STREAM | SC_NEXMARK_QUERY_ADMIT)) ||
	    ((o->flags & SC_NEXMARK_QUERY_ADMIT) && o->lateness_ms < 0))
		return sc_errorf(SC_EINVAL,
				 "sc_nexmark_query_create: NULL argument, "
				 "unknown flags, or admit without a lateness");
	if (!(d = nxq_find(name))) {
		char known[128];
		size_t len = 0;

		for (size_t i = 0; i < NDEFS && len < sizeof(known); i++)
			len += (size_t)snprintf(known + len,
						sizeof(known) - len, "%s%s",
						i ? " " : "", defs[i].name);
		return sc_errorf(SC_ENOENT,
				 "sc_nexmark_query_create: no query '%s' "
				 "(known: %s)",
				 name, known);
	}
	if (!(q = calloc(1, sizeof(*q))))
		return sc_errorf(SC_ENOMEM,
				 "sc_nexmark_query_create: out of memory");
	q->def = d;
	q->symbols = symbols;
	q->flags = o->flags;
	q->lateness = o->lateness_ms < 0 ? -1 : o->lateness_ms;
	q->side_input = o->side_input;
	for (int k = 0; k < SC_NEXMARK_KINDS; k++)
		q->in[k] = -1;
	if ((rc = sc_graph_create(&q->g)) != 0)
		goto fail;
	if ((rc = d->build(q)) < 0)
		goto fail;
	q->out = rc;
	if ((rc = nxq_name_nodes(q)) != 0)
		goto fail;
	q->side_input = NULL; /* borrowed for the build only */
	*out = q;
	return 0;
fail:
	(void)sc_nexmark_query_destroy(q);
	return rc;
}

int
sc_nexmark_query_destroy(struct sc_nexmark_query *q)
{
	int rc;

	if (!q)
		return 0;
	if ((rc = sc_graph_destroy(q->g)) != 0)
		return rc;
	for (int i = 0; i < 4; i++)
		if (q->consts[i])
			(void)sc_symtab_release(q->symbols, q->consts[i]);
	sc_regex_destroy(q->re);
	free(q);
	return 0;
}

int64_t
sc_nexmark_query_lateness(const struct sc_nexmark_query *q)
{
	return q->lateness;
}

const char *
sc_nexmark_query_name(const struct sc_nexmark_query *q)
{
	return q->def->name;
}

struct sc_graph *
sc_nexmark_query_graph(const struct sc_nexmark_query *q)
{
	return q->g;
}

int
sc_nexmark_query_output(const struct sc_nexmark_query *q)
{
	return q->out;
}

int
sc_nexmark_query_input(const struct sc_nexmark_query *q,
		       enum sc_nexmark_kind kind)
{
	return (unsigned)kind < SC_NEXMARK_KINDS ? q->in[kind] : -1;
}

size_t
sc_nexmark_query_columns(const struct sc_nexmark_query *q,
			 const char *const **names)
{
	if (names)
		*names = q->def->cols;
	return q->def->ncols;
}

const char *
sc_nexmark_query_placement(const struct sc_nexmark_query *q)
{
	return q->def->placement;
}

bool
sc_nexmark_query_proctime(const struct sc_nexmark_query *q)
{
	return q && q->def->proctime;
}

/* The bids' columns (nexmark.c's) with p_time last: constant, so any
 * thread may read them (test_nexmark.c checks they match). */
static const char *const bid_proctime_cols[SC_NXB_NCOLS + 1] = {
    "auction", "bidder",    "price", "channel",
    "url",     "date_time", "extra", "p_time"};

int
sc_nexmark_query_schema(const struct sc_nexmark_query *q,
			enum sc_nexmark_kind k, struct sc_schema *out)
{
	int rc;

	if (!q || !out)
		return sc_errorf(SC_EINVAL,
				 "sc_nexmark_query_schema: %s is NULL",
				 q ? "out" : "q");
	if ((rc = sc_nexmark_schema(k, q->symbols, out)) != 0)
		return rc;
	if (k == SC_NEXMARK_BID && q->def->proctime)
		out->types[out->ncols++] = SC_TYPE_I64;
	return 0;
}

size_t
sc_nexmark_query_input_columns(const struct sc_nexmark_query *q,
			       enum sc_nexmark_kind k,
			       const char *const **names)
{
	bool p = q && q->def->proctime && k == SC_NEXMARK_BID;

	if (names)
		*names = p ? bid_proctime_cols : sc_nexmark_columns(k);
	return sc_nexmark_ncols(k) + (p ? 1 : 0);
}

int
sc_nexmark_query_stamp(const struct sc_nexmark_query *q,
		       struct sc_batch **batches, int64_t p_time)
{
	struct sc_batch_builder b;
	struct sc_batch *in, *out = NULL;
	uint64_t row[SC_NXB_NCOLS + 1];
	int rc;

	if (!q || !batches)
		return sc_errorf(SC_EINVAL,
				 "sc_nexmark_query_stamp: %s is NULL",
				 q ? "batches" : "q");
	in = batches[SC_NEXMARK_BID];
	if (!q->def->proctime || !in)
		return 0;
	if (sc_batch_ncols(in) != SC_NXB_NCOLS)
		return sc_errorf(SC_ESCHEMA,
				 "sc_nexmark_query_stamp: bids of %u columns, "
				 "want %d",
				 sc_batch_ncols(in), SC_NXB_NCOLS);
	if ((rc = sc_batch_builder_init(&b, SC_NXB_NCOLS + 1)) != 0)
		return rc;
	rc = sc_batch_builder_reserve(&b, sc_batch_count(in));
	row[SC_NXB_P_TIME] = sc_enc_i64(p_time);
	for (size_t i = 0; !rc && i < sc_batch_count(in); i++) {
		memcpy(row, sc_batch_row(in, i), SC_NXB_NCOLS * sizeof(row[0]));
		rc = sc_batch_builder_push(&b, row, SC_NXB_NCOLS + 1,
					   sc_batch_weight(in, i));
	}
	if (!rc)
		rc = sc_batch_builder_finish(&b, &out);
	sc_batch_builder_fini(&b);
	if (rc)
		return rc;
	sc_batch_release(in);
	batches[SC_NEXMARK_BID] = out;
	return 0;
}

/* --- the settle feed --------------------------------------------------------
 */

/* The chunk's processing time, from the feed's clock or the stepped one
 * (chunk i at i s), on its bids. */
static int
sc_nexmark_feed_stamp(struct sc_nexmark_feed *f)
{
	int64_t t = (int64_t)f->chunks * 1000;
	int rc;

	if (!f->q->def->proctime)
		return 0;
	if (f->clock && (rc = sc_proctime_read(f->clock, &t)) != 0)
		return rc;
	f->chunks++;
	return sc_nexmark_query_stamp(f->q, f->ready, t);
}

int
sc_nexmark_settle_step(void *ctx, size_t i, struct sc_settle_step *out)
{
	struct sc_nexmark_feed *f = ctx;
	int rc;

	(void)i; /* the chunks come in sequence */
	if (!f || !out || !f->nx || !f->q || !f->events)
		return sc_errorf(SC_EINVAL, "sc_nexmark_settle_step: NULL");
	for (;;) {
		for (int k = 0; k < SC_NEXMARK_KINDS; k++) {
			if (!f->ready[k])
				continue;
			if (f->q->in[k] < 0) { /* a stream it does not read */
				sc_batch_release(f->ready[k]);
				f->ready[k] = NULL;
				continue;
			}
			out->input = f->q->in[k];
			out->batch = f->ready[k];
			f->ready[k] = NULL;
			return 0;
		}
		if ((rc = sc_nexmark_batches(f->nx, f->events, f->ready)) != 0)
			return rc;
		if ((rc = sc_nexmark_feed_stamp(f)) != 0)
			return rc;
	}
}

void
sc_nexmark_feed_fini(struct sc_nexmark_feed *f)
{
	for (int k = 0; f && k < SC_NEXMARK_KINDS; k++) {
		sc_batch_release(f->ready[k]);
		f->ready[k] = NULL;
	}
}

size_t
sc_nexmark_feed_steps(const struct sc_nexmark_feed *f, uint64_t total)
{
	size_t steps = 0;

	for (uint64_t c = 0; c < total; c += f->events) {
		bool seen[SC_NEXMARK_KINDS] = {false};

		for (uint64_t n = c; n < c + f->events && n < total; n++)
			seen[sc_nexmark_kind_of(n)] = true;
		for (int k = 0; k < SC_NEXMARK_KINDS; k++)
			steps += seen[k] && f->q->in[k] >= 0;
	}
	return steps;
}

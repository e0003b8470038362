/*
 * nexmark_queries.h - the Nexmark queries as graphs of Z-set operators
 * (operators/graph.h), over the streams of the generator (nexmark.h).
 *
 * Each query is the SQL below over the person, auction and bid streams,
 * read as Z-sets (bags): its output's integral is the query applied to the
 * integrals of its inputs, so it is exact under any placement and any
 * order of turns (units/settle.h). Where the standard suite picks one row
 * of several tied ones, every tied row is kept, so each result is
 * deterministic. Window starts are ms since the epoch, windows [s, s + w).
 *
 *   q0   SELECT auction, bidder, price, channel, url, date_time, extra
 *        FROM bid                             (map: a copy of each row)
 *   q1   SELECT auction, bidder, 0.908 * price, date_time, extra FROM bid
 *        (the product as an IEEE double)      (map)
 *   q2   SELECT auction, price FROM bid WHERE auction % 123 = 0
 *                                             (filter, index_by)
 *   q3   SELECT P.name, P.city, P.state, A.id FROM auction A JOIN person P
 *        ON A.seller = P.id WHERE A.category = 10
 *        AND P.state IN ('OR', 'ID', 'CA')    (two filters, a join)
 *   q4   per category, AVG of each auction's closing price, the highest
 *        price of its bids with A.date_time <= B.date_time <= A.expires:
 *        (category, avg f64)                  (join, filter, MAX, AVG)
 *   q5   hopping windows 10 s wide every 2 s over bid.date_time: per
 *        window the bids per auction; (auction, num) for every auction
 *        whose count is its window's maximum, one row per such window and
 *        auction (a row's weight counts the windows)
 *                                             (window, COUNT, MAX, join)
 *   q6   per seller, the AVG of the closing prices (as q4's) of its
 *        auctions ranked at most 10 by A.date_time, latest first (ties
 *        kept): (seller, avg f64)       (join, filter, MAX, top-k 10, AVG)
 *   q7   tumbling 10 s windows over bid.date_time: (auction, price,
 *        bidder, date_time, extra) of every bid whose price is its
 *        window's maximum                     (window, MAX, join)
 *   q8   (id, name, starttime) of every person who registered and opened
 *        an auction (as seller) in the same tumbling 10 s window, once
 *        per window                           (windows, distinct, join)
 *   q9   winning bids: per auction, of its bids with A.date_time <=
 *        B.date_time <= A.expires, those with the highest price and, of
 *        them, the earliest date_time: (A.id, A.item_name, A.seller,
 *        A.category, A.initial_bid, A.reserve, A.date_time, A.expires,
 *        B.bidder, B.price, B.date_time)    (join, filter, top-k 1)
 *   q10  (auction, bidder, price, date_time, extra, day, minute) of
 *        every bid: day and minute (DATE_FORMAT's 'yyyy-MM-dd' and
 *        'HH:mm', as q15's and q16's numbers) name the partition the
 *        suite's file sink writes it to (bench/workloads/partsink.h,
 *        partitions of SC_NEXMARK_Q10_WIDTH_MS on date_time named
 *        SC_NEXMARK_Q10_FORMAT; `subcirc run --sink DIR`)   (map)
 *   q11  per bidder, its sessions: the bids less than 10 s apart in
 *        date_time, as (bidder, bid_count, starttime, endtime), endtime
 *        the last bid's date_time + 10 s (SESSION_END)
 *                                (session windows: session.h; its state
 *                                 is not bounded by lateness)
 *   q12  per bidder, its bids per tumbling 10 s window of processing
 *        time (B.p_time, below): (bidder, bid_count, starttime,
 *        endtime)                       (window, COUNT, map)
 *   q13  (B.auction, B.bidder, B.price, B.date_time, S.value) FROM bid B
 *        JOIN side_input S ON B.auction % 10000 = S.key: the side input
 *        a table read once (the standard one: key k, value k's decimal
 *        text, k in 0..9,999; or a CSV file, sc_nexmark_query_opts)
 *                                   (map, lookup join: lookup.h)
 *   q14  (auction, bidder, 0.908 * price, bid_time_type, date_time, extra,
 *        c_counts) for the bids with 1,000,000 < 0.908 * price <
 *        50,000,000: bid_time_type 'dayTime' for a UTC hour of date_time
 *        in 8..18, 'nightTime' in 0..6 or 20..23, else 'otherTime';
 *        c_counts the 'c's in extra        (flat_map reading a text)
 *   q15  per day (the day's number since 1970-01-01 UTC, in the order of
 *        DATE_FORMAT's 'yyyy-MM-dd'): (day, total_bids, rank1_bids,
 *        rank2_bids, rank3_bids, total_bidders, rank1..3_bidders,
 *        total_auctions, rank1..3_auctions), COUNT(*) and COUNT(DISTINCT
 *        bidder), COUNT(DISTINCT auction), each overall and filtered on
 *        the price's rank (< 10,000; 10,000 to < 1,000,000; the rest)
 *                                     (map, multi-aggregate: multiagg.h)
 *   q16  per (channel, day): (channel, day, minute, then q15's 12
 *        counts), minute the latest minute of the day (0..1439, in the
 *        order of DATE_FORMAT's 'HH:mm') of the group's bids
 *                                             (map, multi-aggregate)
 *   q17  per (auction, day): (auction, day, total_bids, rank1_bids,
 *        rank2_bids, rank3_bids, min_price, max_price, avg_price f64,
 *        sum_price)                           (map, multi-aggregate)
 *   q18  last bid: per (bidder, auction), every bid with the latest
 *        date_time; all bid columns           (top-k 1)
 *   q19  top bids: per auction, every bid whose rank is at most 10, a
 *        bid's rank being 1 + the bids of its auction priced strictly
 *        higher; all bid columns              (top-k 10)
 *   q20  (B.auction, B.bidder, B.price, B.channel, B.url, B.date_time,
 *        A.item_name, A.initial_bid, A.reserve, A.date_time, A.expires,
 *        A.seller, A.category) for B.auction = A.id AND A.category = 10
 *                                             (filter, join)
 *   q21  (auction, bidder, price, channel, channel_id): channel_id '0',
 *        '1', '2', '3' where lower(channel) is apple, google, facebook,
 *        baidu, else group 2 of the url's first match of the regular
 *        expression `(&|^)channel_id=([^&]*)`; a bid with neither has
 *        no row          (flat_map making texts: text.h, sc_emit_own)
 *   q22  (auction, bidder, price, channel, dir1, dir2, dir3): the url's
 *        parts 3, 4 and 5 when split on '/' (from 0), a part it lacks
 *        the empty text                      (flat_map making texts)
 *   q23  every bid with its auction and the auction's seller:
 *        (B.auction, B.bidder, B.price, B.channel, B.url, B.date_time,
 *        B.extra, A.item_name, A.initial_bid, A.reserve, A.expires,
 *        A.seller, A.category, P.name, P.city, P.state) for B.auction =
 *        A.id AND A.seller = P.id              (two joins)
 *
 * A query creates input nodes only for the streams it reads (named
 * "person", "auction", "bid") and one output node named after the query.
 *
 * Processing time (q12). A query that reads it (sc_nexmark_query_proctime)
 * takes its bids with one more column, p_time (i64, ms since the epoch,
 * SC_NXB_P_TIME): when the host took them, read once a chunk from a clock
 * the host owns (units/proctime.h: wall time live, stepped in tests) and
 * stamped on each bid of the chunk (sc_nexmark_query_stamp). So the time
 * is input, the same for every placement, and a dump of the stamped bids
 * replays the same windows. The clock never goes back: with a lateness
 * declared, the query also declares a lateness of 0 on p_time.
 * Its callbacks read only constants, so any number of circuits of the
 * graph may run at once.
 */
#ifndef SC_BENCH_WORKLOADS_NEXMARK_QUERIES_H
#define SC_BENCH_WORKLOADS_NEXMARK_QUERIES_H

#include <stddef.h>
#include <stdint.h>

#include "bench/workloads/nexmark.h"
#include "operators/graph.h"
#include "operators/symbol.h"
#include "units/proctime.h"
#include "units/settle.h"

#ifdef __cplusplus
extern "C" {
#endif

struct sc_nexmark_query;

/* The most output columns of a query (q23's 16). Top-k (q9, q18, q19)
 * is operators/topk.h: ranks with ties kept (SQL's RANK()). */
#define SC_NEXMARK_QUERY_MAX_COLS 16

/*
 * sc_nexmark_query_names - the names of the queries built here, in order
 * ("q0", "q1", ...; static), and their count.
 */
size_t sc_nexmark_query_names(const char *const **names);

/* Flags of sc_nexmark_query_create. */
#define SC_NEXMARK_QUERY_STREAM                                                \
	1u /* the output keeps nothing (graph.h's                              \
	      sc_graph_output_stream): its deltas                              \
	      go to the node's delta callback and                              \
	      its integral cannot be read */

/*
 * sc_nexmark_query_create - the graph of query `name` over streams whose
 * symbols are in `symbols` (borrowed; q3, q14 and q21 intern the texts
 * they name there and hold them until destroy). flags: 0 (a materialized
 * output, whose integral is kept and readable) or
 * SC_NEXMARK_QUERY_STREAM. Returns:
 *   0            *out is the query
 *   SC_ENOENT    no query of that name (the message lists the known ones)
 *   SC_EINVAL    NULL argument, unknown flags; q13's side input file is
 *                not such CSV (the message names file, line, column)
 *   SC_EIO       q13's side input file cannot be read
 *   SC_ENOMEM, or an error of a graph call (by its code)
 */
int sc_nexmark_query_create(const char *name, struct sc_symtab *symbols,
			    unsigned flags, struct sc_nexmark_query **out);

/*
 * How a query is built (sc_nexmark_query_create_opts). With a lateness
 * (>= 0, ms) the query declares it (operators/waterline.h) on date_time of
 * every stream it reads, and q4 and q9 use the time-bounded join
 * (sc_graph_join_within: bids within the auction's life) with the
 * auction's expiry in their groups' keys (q6 too), so that with cleanup
 * on, q4, q5, q7, q8 and q9 keep only the auctions and windows a future
 * row can still reach (q6's top-k per seller keeps every closed auction). The
 * output is the same rows either way; the generator made with disorder_ms = D
 * respects a lateness of D (sc_nexmark_lateness). A submission with rows later
 * than that is refused (SC_ELATE), or with SC_NEXMARK_QUERY_ADMIT admitted and
 * counted (sc_circuit_late).
 */
#define SC_NEXMARK_QUERY_ADMIT                                                 \
	2u /* with a lateness: admit late rows                                 \
	      (SC_LATE_ADMIT) instead of refusing                              \
	      their submission */

struct sc_nexmark_query_opts {
	unsigned flags;		/* SC_NEXMARK_QUERY_STREAM, _ADMIT; default 0 */
	int64_t lateness_ms;	/* < 0 (the default, -1): none declared */
	const char *side_input; /* q13's table: a CSV file with the header
				 * key,value (i64, text), read once; NULL
				 * (the default): the standard one */
};

/* sc_nexmark_query_opts_default - flags 0, no lateness, the standard side
 * input. */
void sc_nexmark_query_opts_default(struct sc_nexmark_query_opts *o);

/*
 * sc_nexmark_query_create_opts - as sc_nexmark_query_create, built as o
 * says (NULL: the defaults). Returns as sc_nexmark_query_create, and
 * SC_EINVAL for SC_NEXMARK_QUERY_ADMIT without a lateness.
 */
int sc_nexmark_query_create_opts(const char *name, struct sc_symtab *symbols,
				 const struct sc_nexmark_query_opts *o,
				 struct sc_nexmark_query **out);

/* sc_nexmark_query_lateness - the lateness the query declared (ms), or
 * -1 for none. */
int64_t sc_nexmark_query_lateness(const struct sc_nexmark_query *q);

/*
 * sc_nexmark_query_destroy - free the query and its graph. Returns 0, or
 * SC_EBUSY (nothing freed) while a circuit or runtime of the graph lives.
 * NULL is allowed.
 */
int sc_nexmark_query_destroy(struct sc_nexmark_query *q);

/* The query's name ("q4"), graph (owned by the query) and output node. */
const char *sc_nexmark_query_name(const struct sc_nexmark_query *q);
struct sc_graph *sc_nexmark_query_graph(const struct sc_nexmark_query *q);
int sc_nexmark_query_output(const struct sc_nexmark_query *q);

/* The input node of stream `kind`, or -1 when the query does not read it. */
int sc_nexmark_query_input(const struct sc_nexmark_query *q,
			   enum sc_nexmark_kind kind);

/* q10's partitions (partsink.h): a minute of date_time (its output's
 * column SC_NEXMARK_Q10_TIME_COL) each, in a folder per day and minute. */
#define SC_NEXMARK_Q10_TIME_COL 3
#define SC_NEXMARK_Q10_WIDTH_MS 60000
#define SC_NEXMARK_Q10_FORMAT	"dt=%Y-%m-%d/hm=%H:%M"

/* The column of the bids' processing time, for a query that reads it. */
#define SC_NXB_P_TIME SC_NXB_NCOLS

/* sc_nexmark_query_proctime - whether q's bids carry p_time (q12). */
bool sc_nexmark_query_proctime(const struct sc_nexmark_query *q);

/*
 * sc_nexmark_query_schema - the schema of q's input of stream k: the
 * stream's (sc_nexmark_schema), with p_time last for the bids of a query
 * that reads processing time. 0, SC_EINVAL (NULL, or an unknown kind).
 */
int sc_nexmark_query_schema(const struct sc_nexmark_query *q,
			    enum sc_nexmark_kind k, struct sc_schema *out);

/* The names of the columns of q's input of stream k (static), as its
 * schema, and how many there are. */
size_t sc_nexmark_query_input_columns(const struct sc_nexmark_query *q,
				      enum sc_nexmark_kind k,
				      const char *const **names);

/*
 * sc_nexmark_query_stamp - for a query that reads processing time, replace
 * batches[SC_NEXMARK_BID] (the generator's bids of one chunk, if any) by
 * its rows with p_time appended (the old batch released); for any other
 * query, nothing. Returns 0, SC_EINVAL (NULL), SC_ESCHEMA (bids that are
 * not SC_NXB_NCOLS wide: nothing changed), SC_ENOMEM (nothing changed).
 */
int sc_nexmark_query_stamp(const struct sc_nexmark_query *q,
			   struct sc_batch **batches, int64_t p_time);

/* The names of the output's columns (static) and how many there are. */
size_t sc_nexmark_query_columns(const struct sc_nexmark_query *q,
				const char *const **names);

/*
 * sc_nexmark_query_placement - the placement (sc_placement_parse's
 * syntax) measured best for this query on 2 workers (README, Nexmark).
 * Static.
 */
const char *sc_nexmark_query_placement(const struct sc_nexmark_query *q);

/*
 * The generator and a query as a settle workload (units/settle.h):
 * sc_nexmark_settle_step is an sc_settle_gen_fn whose ctx is a struct
 * sc_nexmark_feed. It makes `events` events at a time (sc_nexmark_batches)
 * and hands out, one submission per call, the batches of the streams the
 * query reads (streams it does not read are dropped), q12's bids stamped
 * with the chunk's processing time. Start a feed zeroed but for its three
 * first fields (and clock, if any), and call sc_nexmark_feed_fini after.
 */
struct sc_nexmark_feed {
	struct sc_nexmark *nx;		  /* borrowed */
	const struct sc_nexmark_query *q; /* borrowed */
	size_t events;			  /* events per chunk, >= 1 */
	struct sc_proctime *clock; /* q12's, read once a chunk (borrowed);
				    * NULL: chunk i at i * 1000 ms */
	struct sc_batch *ready[SC_NEXMARK_KINDS]; /* private: not handed out */
	uint64_t chunks;			  /* private: chunks made */
};
int sc_nexmark_settle_step(void *ctx, size_t i, struct sc_settle_step *out);

/* sc_nexmark_feed_fini - release the batches not handed out. */
void sc_nexmark_feed_fini(struct sc_nexmark_feed *f);

/*
 * sc_nexmark_feed_steps - how many submissions sc_nexmark_settle_step
 * makes for the first `total` events (a multiple of f->events): the
 * number to pass to sc_settle_work_generate. It runs a copy of the
 * arithmetic, not the generator.
 */
size_t sc_nexmark_feed_steps(const struct sc_nexmark_feed *f, uint64_t total);

#ifdef __cplusplus
}
#endif

#endif /* SC_BENCH_WORKLOADS_NEXMARK_QUERIES_H */

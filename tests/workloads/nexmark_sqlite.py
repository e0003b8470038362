#!/usr/bin/env python3
"""nexmark_sqlite.py - a Nexmark query's settled output against SQLite.

Usage: nexmark_sqlite.py SUBCIRC QUERY [EVENTS] [-- RUN ARGS]

Runs `SUBCIRC run --workload nexmark --query QUERY --events EVENTS --dump
DIR` (with RUN ARGS), loads the dumped input (person.csv, auction.csv,
bid.csv) into an in-memory SQLite database, evaluates the query's SQL
there, and compares the result, as a bag of rows, with DIR/QUERY.csv (the
settled output, a weight column last: a row of weight w is w copies).
Doubles compare to 1e-9 relative. q13's side input is the file RUN ARGS
name with --side-input, else the standard table (key k, value k's text,
k in 0..9,999), loaded here on its own. q10 also runs with --sink: its
files must hold the output, each row in the folder of its date_time's UTC
day and minute, nothing left uncommitted. The SQL below is written from the
query's definition (bench/workloads/nexmark_queries.h), not from the
circuit: SQLite is the independent evaluator. Exits 0 when they are equal,
1 with the first differences and the command that replays the run.
"""

import collections
import csv
import datetime
import math
import os
import re
import sqlite3
import subprocess
import sys
import tempfile

# q15's and q16's 12 counts: COUNT(*), COUNT(DISTINCT bidder) and
# COUNT(DISTINCT auction), each overall and then filtered on the price's
# rank (< 10,000; 10,000 to < 1,000,000; the rest).
RANKS = ("price < 10000", "price >= 10000 AND price < 1000000",
         "price >= 1000000")
RANK_COUNTS = ",".join(
    " %s, " % what + ", ".join("%s FILTER (WHERE %s)" % (what, r)
                               for r in RANKS)
    for what in ("COUNT(*)", "COUNT(DISTINCT bidder)",
                 "COUNT(DISTINCT auction)"))

SQL = {
    "q0": "SELECT auction, bidder, price, channel, url, date_time, extra "
          "FROM bid",
    "q1": "SELECT auction, bidder, 0.908 * price, date_time, extra FROM bid",
    "q2": "SELECT auction, price FROM bid WHERE auction % 123 = 0",
    "q3": "SELECT P.name, P.city, P.state, A.id FROM auction A "
          "JOIN person P ON A.seller = P.id WHERE A.category = 10 "
          "AND P.state IN ('OR', 'ID', 'CA')",
    "q4": "SELECT category, AVG(final) FROM ("
          " SELECT A.id, A.category, MAX(B.price) AS final"
          " FROM auction A JOIN bid B ON B.auction = A.id"
          " WHERE B.date_time BETWEEN A.date_time AND A.expires"
          " GROUP BY A.id, A.category) GROUP BY category",
    # Hopping windows 10 s wide every 2 s: a bid at t is in the 5 windows
    # starting at the multiples of 2 s in (t - 10 s, t].
    "q5": "WITH hop(k) AS (VALUES (0), (1), (2), (3), (4)),"
          " w AS (SELECT (B.date_time / 2000 - hop.k) * 2000 AS start,"
          "              B.auction FROM bid B, hop),"
          " c AS (SELECT start, auction, COUNT(*) AS num FROM w"
          "       GROUP BY start, auction),"
          " m AS (SELECT start, MAX(num) AS top FROM c GROUP BY start)"
          " SELECT c.auction, c.num FROM c JOIN m"
          " ON c.start = m.start AND c.num = m.top",
    # Per seller, the average final price of its 10 latest auctions
    # (ties kept: RANK).
    "q6": "WITH f AS (SELECT A.id, A.seller, A.date_time,"
          "                  MAX(B.price) AS final"
          "           FROM auction A JOIN bid B ON B.auction = A.id"
          "           WHERE B.date_time BETWEEN A.date_time AND A.expires"
          "           GROUP BY A.id, A.seller, A.date_time),"
          " r AS (SELECT seller, final, RANK() OVER (PARTITION BY seller"
          "       ORDER BY date_time DESC) AS k FROM f)"
          " SELECT seller, AVG(final) FROM r WHERE k <= 10 GROUP BY seller",
    "q7": "SELECT B.auction, B.price, B.bidder, B.date_time, B.extra"
          " FROM bid B JOIN (SELECT date_time / 10000 AS w,"
          "                         MAX(price) AS top FROM bid GROUP BY w) M"
          " ON B.date_time / 10000 = M.w AND B.price = M.top",
    "q8": "SELECT DISTINCT P.id, P.name, P.date_time / 10000 * 10000"
          " FROM person P JOIN auction A ON A.seller = P.id"
          " AND P.date_time / 10000 = A.date_time / 10000",
    "q9": "SELECT id, item_name, seller, category, initial_bid, reserve,"
          "       date_time, expires, bidder, price, bdt FROM ("
          " SELECT A.*, B.bidder, B.price, B.date_time AS bdt,"
          "  RANK() OVER (PARTITION BY A.id"
          "               ORDER BY B.price DESC, B.date_time ASC) AS r"
          " FROM auction A JOIN bid B ON B.auction = A.id"
          " WHERE B.date_time BETWEEN A.date_time AND A.expires)"
          " WHERE r = 1",
    # Session windows with a gap of 10 s per bidder: a bid starts a
    # session when it is the bidder's first or 10,000 ms or more after
    # the one before (LAG's NULL takes the ELSE); the running SUM of those
    # starts numbers the sessions. Its frame is the default RANGE one, so
    # bids tied in date_time (one of which LAG may see as a start) share
    # a number whichever order the two windows give them.
    # Every bid with its day (as q15's) and its minute of the day (as
    # q16's): the partition q10's file sink writes it to.
    "q10": "SELECT auction, bidder, price, date_time, extra,"
           " CAST(date_time / 86400000 AS INTEGER),"
           " CAST((date_time % 86400000) / 60000 AS INTEGER) FROM bid",
    "q11": "WITH s AS (SELECT bidder, date_time,"
           "   CASE WHEN date_time - LAG(date_time) OVER (PARTITION BY bidder"
           "          ORDER BY date_time) < 10000 THEN 0 ELSE 1 END AS new"
           "   FROM bid),"
           " g AS (SELECT bidder, date_time, SUM(new) OVER (PARTITION BY"
           "   bidder ORDER BY date_time) AS sid FROM s)"
           " SELECT bidder, COUNT(*), MIN(date_time), MAX(date_time) + 10000"
           " FROM g GROUP BY bidder, sid",
    # The UTC hour of date_time picks the time of day; count_char(extra,
    # 'c') is the length extra loses without its 'c's.
    # Tumbling 10 s windows of the processing time the run stamped on each
    # bid (p_time, in the dump).
    "q12": "SELECT bidder, COUNT(*), p_time / 10000 * 10000,"
           " p_time / 10000 * 10000 + 10000 FROM bid"
           " GROUP BY bidder, p_time / 10000",
    "q13": "SELECT B.auction, B.bidder, B.price, B.date_time, S.value"
           " FROM bid B JOIN side_input S ON B.auction % 10000 = S.key",
    "q14": "WITH b AS (SELECT *, (date_time / 3600000) % 24 AS h FROM bid)"
           " SELECT auction, bidder, 0.908 * price,"
           " CASE WHEN h >= 8 AND h <= 18 THEN 'dayTime'"
           "      WHEN h <= 6 OR h >= 20 THEN 'nightTime'"
           "      ELSE 'otherTime' END,"
           " date_time, extra,"
           " length(extra) - length(replace(extra, 'c', ''))"
           " FROM b WHERE 0.908 * price > 1000000"
           " AND 0.908 * price < 50000000",
    # The day (DATE_FORMAT 'yyyy-MM-dd') is the day's number since
    # 1970-01-01 UTC: date_time / 86400000, floored (the times are not
    # negative, so the integer division is the floor). FILTER on COUNT and
    # COUNT(DISTINCT) as the suite's SQL writes it.
    "q15": "SELECT CAST(date_time / 86400000 AS INTEGER) AS day,"
           + RANK_COUNTS + " FROM bid GROUP BY day",
    # The minute (DATE_FORMAT 'HH:mm') is the minute of the day, 0..1439.
    "q16": "SELECT channel, CAST(date_time / 86400000 AS INTEGER) AS day,"
           " MAX(CAST((date_time % 86400000) / 60000 AS INTEGER)),"
           + RANK_COUNTS + " FROM bid GROUP BY channel, day",
    "q17": "SELECT auction, CAST(date_time / 86400000 AS INTEGER) AS day,"
           " COUNT(*),"
           " COUNT(*) FILTER (WHERE price < 10000),"
           " COUNT(*) FILTER (WHERE price >= 10000 AND price < 1000000),"
           " COUNT(*) FILTER (WHERE price >= 1000000),"
           " MIN(price), MAX(price), AVG(price), SUM(price)"
           " FROM bid GROUP BY auction, day",
    "q18": "SELECT auction, bidder, price, channel, url, date_time, extra"
           " FROM (SELECT *, RANK() OVER (PARTITION BY bidder, auction"
           "                              ORDER BY date_time DESC) AS r"
           "       FROM bid) WHERE r = 1",
    "q19": "SELECT auction, bidder, price, channel, url, date_time, extra"
           " FROM (SELECT *, RANK() OVER (PARTITION BY auction"
           "                              ORDER BY price DESC) AS r"
           "       FROM bid) WHERE r <= 10",
    "q20": "SELECT B.auction, B.bidder, B.price, B.channel, B.url,"
           " B.date_time, A.item_name, A.initial_bid, A.reserve,"
           " A.date_time, A.expires, A.seller, A.category"
           " FROM bid B JOIN auction A ON B.auction = A.id"
           " WHERE A.category = 10",
    # regexp_extract and split_index are Python's (re, str.split),
    # registered below: SQLite has neither.
    "q21": "SELECT auction, bidder, price, channel,"
           " CASE lower(channel) WHEN 'apple' THEN '0'"
           "      WHEN 'google' THEN '1' WHEN 'facebook' THEN '2'"
           "      WHEN 'baidu' THEN '3'"
           "      ELSE regexp_extract(url, '(&|^)channel_id=([^&]*)', 2)"
           " END FROM bid"
           " WHERE regexp_extract(url, '(&|^)channel_id=([^&]*)', 2)"
           " IS NOT NULL"
           " OR lower(channel) IN ('apple', 'google', 'facebook', 'baidu')",
    # A part the url lacks is the empty text (the rows carry no NULL).
    "q22": "SELECT auction, bidder, price, channel,"
           " coalesce(split_index(url, '/', 3), ''),"
           " coalesce(split_index(url, '/', 4), ''),"
           " coalesce(split_index(url, '/', 5), '') FROM bid",
    "q23": "SELECT B.auction, B.bidder, B.price, B.channel, B.url,"
           " B.date_time, B.extra, A.item_name, A.initial_bid, A.reserve,"
           " A.expires, A.seller, A.category, P.name, P.city, P.state"
           " FROM bid B JOIN auction A ON B.auction = A.id"
           " JOIN person P ON A.seller = P.id",
}


def value(text):
    """A CSV field as SQLite should hold it: an integer, a double or text
    (the dump quotes every text, so a bare field is a number)."""
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        return text


def read_csv(path):
    """(header, rows) of a dumped CSV file, fields typed by value()."""
    with open(path, newline="") as f:
        r = csv.reader(f)
        header = next(r)
        rows = [tuple(value(x) for x in row) for row in r]
    return header, rows


def load(db, d, table):
    path = os.path.join(d, table + ".csv")
    if not os.path.exists(path):
        return
    header, rows = read_csv(path)
    db.execute("CREATE TABLE %s (%s)" % (table, ", ".join(header)))
    db.executemany("INSERT INTO %s VALUES (%s)" % (
        table, ", ".join("?" * len(header))), rows)


def side_input(db, extra):
    """q13's table: the file after --side-input in the run's arguments,
    or the standard one."""
    db.execute("CREATE TABLE side_input (key, value)")
    if "--side-input" in extra:
        header, rows = read_csv(extra[extra.index("--side-input") + 1])
        rows = [(k, str(v)) for k, v in rows]  # value is a text column
    else:
        rows = [(k, str(k)) for k in range(10000)]
    db.executemany("INSERT INTO side_input VALUES (?, ?)", rows)


def regexp_extract(text, pattern, group):
    m = re.search(pattern, text) if isinstance(text, str) else None
    return m.group(group) if m else None


def split_index(text, sep, index):
    parts = str(text).split(sep)
    return parts[index] if 0 <= index < len(parts) else None


def field(x):
    """A field as a bag key: integers, and doubles of integral value, as
    their text (the dump writes a double 42.0 as 42, and the CSV reader
    reads a quoted "123" as the number where SQLite's functions return
    the text); other doubles rounded to 9 significant digits."""
    if isinstance(x, float):
        if x.is_integer() and abs(x) < 2.0 ** 53:
            return str(int(x))
        return float("%.9g" % x)
    return str(x) if isinstance(x, int) else x


def key(row):
    return tuple(field(x) for x in row)


SINK_FILE = re.compile(r"dt=(\d{4}-\d\d-\d\d)/hm=(\d\d:\d\d)/part-\d+\.csv")


def read_sink(root, header):
    """The bag of rows in q10's sink under root, after checking that
    every file is a committed partition whose rows all belong to it.
    Returns (bag, files) or raises AssertionError naming what is wrong."""
    bag, files = collections.Counter(), 0
    for d, _, names in os.walk(root):
        for n in names:
            rel = os.path.relpath(os.path.join(d, n), root)
            m = SINK_FILE.fullmatch(rel)
            assert m, "not a committed partition file: %s" % rel
            h, rows = read_csv(os.path.join(root, rel))
            assert h == header, "%s: header %s" % (rel, h)
            files += 1
            for r in rows:
                t = datetime.datetime.fromtimestamp(
                    r[3] // 1000, datetime.timezone.utc)
                where = (t.strftime("%Y-%m-%d"), t.strftime("%H:%M"))
                assert where == m.groups(), \
                    "%s holds a row of %s %s" % (rel, *where)
                bag[key(r[:-1])] += r[-1]
    return +bag, files


def main(argv):
    extra = []
    if "--" in argv:
        i = argv.index("--")
        argv, extra = argv[:i], argv[i + 1:]
    if len(argv) not in (2, 3) or argv[1] not in SQL:
        sys.exit(__doc__)
    exe, q = argv[0], argv[1]
    events = argv[2] if len(argv) == 3 else "30000"
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "dump")
        cmd = [exe, "run", "--workload", "nexmark", "--query", q,
               "--events", events, "--quiet", "--dump", out] + extra
        sink = os.path.join(d, "sink")
        if q == "q10":
            cmd += ["--sink", sink]
        replay = " ".join(cmd).replace(out, "DIR").replace(sink, "SINK")
        p = subprocess.run(cmd, stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, text=True)
        if p.returncode != 0:
            print("FAIL %s: exit %d\n%s\nreplay: %s"
                  % (q, p.returncode, p.stderr, replay))
            return 1
        db = sqlite3.connect(":memory:")
        db.create_function("regexp_extract", 3, regexp_extract,
                           deterministic=True)
        db.create_function("split_index", 3, split_index,
                           deterministic=True)
        for t in ("person", "auction", "bid"):
            load(db, out, t)
        side_input(db, extra)
        want = collections.Counter(key(r) for r in db.execute(SQL[q]))
        _, rows = read_csv(os.path.join(out, q + ".csv"))
        got = collections.Counter()
        for r in rows:
            got[key(r[:-1])] += r[-1]
        got = +got  # rows whose weights cancelled are no rows
        missing, extra_rows = want - got, got - want
        if missing or extra_rows:
            print("FAIL %s: %d rows of SQLite's result missing, %d rows "
                  "not in it (of %d expected)"
                  % (q, sum(missing.values()), sum(extra_rows.values()),
                     sum(want.values())))
            for r, n in list(missing.items())[:5]:
                print("  missing x%d: %s" % (n, r))
            for r, n in list(extra_rows.items())[:5]:
                print("  extra   x%d: %s" % (n, r))
            print("replay: %s (then compare with SQLite: %s)"
                  % (replay, " ".join(sys.argv)))
            return 1
        if q == "q10":
            header, _ = read_csv(os.path.join(out, q + ".csv"))
            try:
                files_bag, files = read_sink(sink, header)
            except AssertionError as e:
                print("FAIL %s: --sink: %s\nreplay: %s" % (q, e, replay))
                return 1
            if files_bag != got:
                print("FAIL %s: --sink files hold %d rows, the output %d"
                      "\nreplay: %s" % (q, sum(files_bag.values()),
                                        sum(got.values()), replay))
                return 1
            print("%s: --sink: %d files, every row in its partition"
                  % (q, files))
        print("%s: %d rows, equal to SQLite's (%s)"
              % (q, sum(want.values()), sqlite3.sqlite_version))
        return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

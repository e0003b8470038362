#!/usr/bin/env python3
"""cli_check.py - checks the JSON of `subcirc run` or `subcirc stress`
under mpirun (tests/mpi/cli.cmake): KIND FILE NRANKS. The report must
validate against tools/report.schema.json first; the checks below read
its "results".

run:    the output check passed, one entry of figures per rank, the frames
        (and bytes) sent over MPI add up to those received across the
        ranks, and some crossed.
stress: runs were made, none failed, diverged, lost a frame or erred, and
        the per-rank figures add up as for run.
backpressure: run's, and the ranks waited on credits (a window of one).
Prints what it read; exits non-zero with the reason otherwise.
"""
import json
import os
import sys

# The report's validator (tests/tools/report_check.py) and its schema.
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tools"))
import report_check  # noqa: E402
SCHEMA = os.path.join(HERE, "..", "..", "tools", "report.schema.json")


def ranks_add_up(d, n):
    r = d["ranks"]
    assert isinstance(r, list) and len(r) == n, ("ranks", r)
    assert [x["rank"] for x in r] == list(range(n)), r
    sent = sum(x["frames_sent"] for x in r)
    recv = sum(x["frames_recv"] for x in r)
    assert sent == recv and sent > 0, ("frames sent/received", sent, recv)
    bs = sum(x["bytes_sent"] for x in r)
    br = sum(x["bytes_recv"] for x in r)
    assert bs == br and bs > 0, ("bytes sent/received", bs, br)
    assert all(x["undeliverable"] == 0 for x in r), r
    assert all("credit_waits" in x for x in r), r
    return sent, bs


def main():
    kind, path, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    doc = json.load(open(path))
    schema = json.load(open(SCHEMA))
    report_check.check(schema, schema, doc, "$")
    d = doc["results"]
    if kind in ("run", "backpressure"):
        assert d["ok"] is True, d
        sent, bs = ranks_add_up(d, n)
        waits = sum(x["credit_waits"] for x in d["ranks"])
        assert kind == "run" or waits > 0, ("no credit waits", d["ranks"])
        print("ok: run over", n, "ranks,", sent, "frames,", bs, "bytes,",
              waits, "credit waits")
    elif kind == "stress":
        for k in ("failures", "divergences", "frames_lost", "hangs", "errors"):
            assert d[k] == 0, (k, d[k])
        assert d["runs"] > 0 and d["nranks"] == n, d
        assert d["first_failure"] is None, d["first_failure"]
        sent, bs = ranks_add_up(d, n)
        print("ok: stress over", n, "ranks,", d["runs"], "runs,", sent, "frames")
    else:
        sys.exit("unknown kind " + kind)


if __name__ == "__main__":
    main()

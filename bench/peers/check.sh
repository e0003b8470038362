#!/usr/bin/env bash
# bench/peers/check.sh TOP BUILD: the ctest bench.peers_output_parses. Runs
# bench/peers/run.sh at its smallest (one round of bench_pipeline's --quick
# sizes) on BUILD's bench_pipeline and whichever peers build here, then
# reads back its table and its --json cells: both cases; subcirc and
# bench_pipeline's baselines with a figure each; each of the three peers
# with a figure and a ratio, or skipped; every JSON key the table's reader
# needs; every table row as wide as the header and agreeing with the
# JSON. Fails naming what is missing, so that a renamed case or field in
# bench_pipeline or a peer fails here and not in `tools/bench peers`.
set -euo pipefail
top=${1:?usage: check.sh TOP BUILD}
build=${2:?usage: check.sh TOP BUILD}
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
"$top/bench/peers/run.sh" "$top" --build "$build" --rounds 1 \
	--json "$d/cells.json" >"$d/table.txt"
cat "$d/table.txt"
python3 - "$d/table.txt" "$d/cells.json" <<'PY'
import json, re, sys

CASES = ["pipeline 1-row", "pipeline 256-row"]
PEERS = ["oneTBB flow_graph", "Go channels", "Rust crossbeam-channel"]
KEYS = {"bench", "case", "side", "unit", "better", "value", "ratio",
        "skipped", "rounds", "threads", "budget"}
NUM = r"[0-9.]+(e[+-][0-9]+)?[kMGT]?"
problems = []

def need(ok, why):
    if not ok:
        problems.append(why)

cells = [json.loads(l) for l in open(sys.argv[2]) if l.strip()]
for c in cells:
    need(KEYS <= c.keys(), "a JSON cell lacks %s: %s" % (sorted(KEYS - c.keys()), c))
cells = [c for c in cells if KEYS <= c.keys()]
sides = {}
for case in CASES:
    row = [c for c in cells if c["case"] == case]
    sides[case] = [c["side"] for c in row]
    need(row, "no JSON cells for '%s'" % case)
    by = {c["side"]: c for c in row}
    ours = by.get("subcirc")
    need(ours and not ours["skipped"] and ours["value"] and ours["value"] > 0,
         "'%s': no subcirc figure" % case)
    others = [c for c in row if c["side"] not in PEERS and c["side"] != "subcirc"]
    need(len(others) >= 2, "'%s': bench_pipeline's two baselines are missing "
         "(sides: %s)" % (case, sides[case]))
    for c in others:
        need(not c["skipped"] and c["value"] and c["value"] > 0 and c["ratio"],
             "'%s': no figure for the baseline '%s'" % (case, c["side"]))
    for p in PEERS:
        c = by.get(p)
        need(c is not None, "'%s': the peer '%s' is neither measured nor skipped"
             % (case, p))
        if c and not c["skipped"]:
            need(c["value"] and c["value"] > 0 and c["ratio"],
                 "'%s': the peer '%s' has no figure" % (case, p))
need(sides[CASES[0]] == sides[CASES[1]], "the cases have different sides: %s" % sides)

lines = open(sys.argv[1]).read().splitlines()
head = [l for l in lines if l.startswith("| case |")]
need(len(head) == 1, "the table has no header row")
if head:
    names = [x.strip() for x in head[0].strip("|").split("|")][1:]
    need(names == sides[CASES[0]], "the table's columns %s are not the JSON sides %s"
         % (names, sides[CASES[0]]))
    for case in CASES:
        row = [l for l in lines if l.startswith("| %s |" % case)]
        need(len(row) == 1, "the table has no row for '%s'" % case)
        if not row:
            continue
        got = [x.strip() for x in row[0].strip("|").split("|")][1:]
        need(len(got) == len(names), "'%s': %d cells under %d columns"
             % (case, len(got), len(names)))
        for n, cell in zip(names, got):
            c = next((c for c in cells if c["case"] == case and c["side"] == n), None)
            if n == "subcirc":
                ok = re.fullmatch(NUM, cell)
            elif c and c["skipped"]:
                ok = cell == "skipped"
            else:
                ok = re.fullmatch(NUM + r" \([0-9.]+\)", cell)
            need(ok, "'%s', '%s': unexpected cell '%s'" % (case, n, cell))

for p in problems:
    print("bench.peers_output_parses: " + p, file=sys.stderr)
if problems:
    sys.exit(1)
skipped = sorted({c["side"] for c in cells if c["skipped"]})
print("bench.peers_output_parses: table and JSON agree; skipped: %s"
      % (", ".join(skipped) or "none"))
PY

# The tests of `subcirc place` (the sweep, its JSON, DOT and plot) and of
# `subcirc run --units`, included by tests/tools/cli.cmake (sc_cli_test is
# defined there). Performance is never asserted: these check structure.

# --json holds every case with every repetition, the medians agree with
# the repetitions, and there is one ranking per worker count.
add_test(NAME cli.place_json_holds_every_case_with_its_repetitions
         COMMAND sh -c [=[d=$(mktemp -d) && trap 'rm -rf "$d"' EXIT
           timeout 120 "$0" place --placements single,chains,balanced --workers 1,2 --budgets 16,64 --reps 3 --time-per-case 0.05 --warmup 0.01 --json "$d/p.json" --csv "$d/p.csv" || { echo "exit $?"; exit 1; }
           python3 - "$d/p.json" "$d/p.csv" <<'PY'
import json, statistics, sys
doc = json.load(open(sys.argv[1]))
assert doc["schema"] == "subcirc-report" and doc["command"] == "place", doc["schema"]
assert doc["workload"] == "grid" and doc["host"]["cores"] >= 1, doc["host"]
c = doc["config"]
for k, v in (("placements", ["single", "chains", "balanced"]), ("workers", [1, 2]), ("budgets", [16, 64]), ("reps", 3), ("time_per_case_s", 0.05), ("warmup_s", 0.01), ("events", None)):
    assert c[k] == v, (k, c[k], v)
for k in ("rows", "cols", "batch", "seed", "capacity"):
    assert k in c, k
r = doc["results"]
assert r["calibrated"] is True
cases = r["cases"]
want = {(p, w, b) for p in ("single", "chains", "balanced:1", "balanced:2") for w in (1, 2) for b in (16, 64)
        if not p.startswith("balanced:") or p == "balanced:%d" % w}
got = {(c["placement"], c["workers"], c["budget"]) for c in cases}
assert got == want, (got, want)
for c in cases:
    reps = c["reps"]
    assert len(reps) == 3, (c["case"], len(reps))
    eps = [x["events_per_s"] for x in reps]
    assert all(e > 0 for e in eps), eps
    assert abs(statistics.median(eps) - c["median_events_per_s"]) < 1, c
    assert c["min_events_per_s"] == min(eps) and c["max_events_per_s"] == max(eps), c
    for x in reps:
        for k in ("events", "seconds", "p50_us", "p99_us", "turns", "kicks", "frames", "frames_per_turn", "ok"):
            assert k in x, k
        assert x["ok"] is True
assert sorted(g["workers"] for g in r["rankings"]) == [1, 2]
for g in r["rankings"]:
    assert len(g["order"]) == 6, g
    med = [e["median_events_per_s"] for e in g["order"]]
    assert med == sorted(med, reverse=True), med
    assert g["order"][0]["tie_with_above"] is False
lines = open(sys.argv[2]).read().splitlines()
assert lines[0].startswith("case,placement,workers,budget,rep,"), lines[0]
assert len(lines) == 1 + 3 * len(cases), len(lines)
print(len(cases), "cases, 3 repetitions each")
PY
]=] $<TARGET_FILE:subcirc_cli>)

# --dot: one digraph per placement of the sweep, each with every node of
# the grid declared once, a cluster per unit, every edge between declared
# nodes, and bold exactly where an edge crosses clusters.
add_test(NAME cli.place_dot_output_parses
         COMMAND sh -c [=[d=$(mktemp -d) && trap 'rm -rf "$d"' EXIT
           timeout 120 "$0" place --placements single,per-node,chains,sharded:2,balanced --workers 2 --budgets 64 --reps 1 --time-per-case 0.02 --warmup 0 --dot "$d/p.dot" >/dev/null || { echo "exit $?"; exit 1; }
           cat "$d/p.dot"
           python3 - "$d/p.dot" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
assert text.count("{") == text.count("}"), "unbalanced braces"
graphs = re.split(r"(?m)^// (.*)\n", text)[1:]
specs = graphs[0::2]
assert specs == ["single", "per-node", "chains", "sharded:2", "balanced:2"], specs
units = {"single": 1, "per-node": 10}
for spec, body in zip(specs, graphs[1::2]):
    assert body.startswith("digraph placement {") and body.rstrip().endswith("}"), spec
    node_of = {}
    clusters = re.findall(r"subgraph cluster_u(\d+) \{(.*?)\n\t\}", body, re.S)
    assert clusters, spec
    for u, inner in clusters:
        for n in re.findall(r"\b(n\d+) \[label=", inner):
            assert n not in node_of, (spec, n)
            node_of[n] = u
    assert sorted(node_of) == sorted("n%d" % i for i in range(10)), (spec, node_of)
    if spec in units:
        assert len(clusters) == units[spec], (spec, len(clusters))
    edges = re.findall(r"^\t(n\d+) -> (n\d+)( \[style=bold\])?", body, re.M)
    assert len(edges) == 10, (spec, len(edges))
    for a, b, bold in edges:
        assert a in node_of and b in node_of, (spec, a, b)
        assert bool(bold) == (node_of[a] != node_of[b]), (spec, a, b, bold)
print(len(specs), "digraphs")
PY
]=] $<TARGET_FILE:subcirc_cli>)

# --plot without gnuplot (a PATH without it) says so and exits 2 before
# any run (the sweep asked for would take minutes).
add_test(NAME cli.place_plot_without_gnuplot_says_so
         COMMAND sh -c [=[out=$(PATH=/nonexistent-bin "$0" place --time-per-case 60 --reps 99 --plot /tmp/subcirc-place-never.png 2>&1); rc=$?; echo "$out"; echo "exit $rc"
           test $rc -eq 2 && echo "$out" | grep -q -e "--plot: gnuplot is not installed (no gnuplot in PATH)"]=]
                 $<TARGET_FILE:subcirc_cli>)

# With gnuplot: the plot is a PNG (its magic) or an SVG.
find_program(GNUPLOT_EXECUTABLE gnuplot)
if(GNUPLOT_EXECUTABLE)
  add_test(NAME cli.place_plot_writes_a_png_and_an_svg
           COMMAND sh -c [=[d=$(mktemp -d) && trap 'rm -rf "$d"' EXIT
             for f in p.png p.svg; do
               timeout 120 "$0" place --placements single,chains --workers 1 --budgets 64 --reps 2 --time-per-case 0.02 --plot "$d/$f" >/dev/null || { echo "$f: exit $?"; exit 1; }
             done
             head -c 8 "$d/p.png" | od -An -tx1 | grep -q "89 50 4e 47 0d 0a 1a 0a" || { echo "not a PNG"; exit 1; }
             grep -q "<svg" "$d/p.svg" || { echo "not an SVG"; exit 1; }]=]
                   $<TARGET_FILE:subcirc_cli>)
  set_tests_properties(cli.place_plot_writes_a_png_and_an_svg PROPERTIES
    LABELS "units;threaded" TIMEOUT 120)
endif()

set_tests_properties(cli.place_json_holds_every_case_with_its_repetitions
                     cli.place_dot_output_parses
                     cli.place_plot_without_gnuplot_says_so
                     PROPERTIES LABELS "units;threaded" TIMEOUT 180)

# Every bad option of place is refused by name (exit 2), before any run.
sc_cli_test(place_reps_zero_is_refused 2 "--reps: '0'"
            place --reps 0)
sc_cli_test(place_reps_too_many_is_refused 2 "--reps: '100'"
            place --reps 100)
sc_cli_test(place_time_per_case_zero_is_refused 2 "--time-per-case: '0'"
            place --time-per-case 0)
sc_cli_test(place_time_per_case_not_a_number_is_refused 2
            "--time-per-case: 'soon' is not a number"
            place --time-per-case soon)
sc_cli_test(place_warmup_negative_is_refused 2 "--warmup: '-1'"
            place --warmup -1)
sc_cli_test(place_budgets_zero_is_refused 2 "--budgets: '0'"
            place --budgets 64,0)
sc_cli_test(place_rate_zero_is_refused 2 "--rate: '0'"
            place --rate 0)
sc_cli_test(place_unknown_workload_is_refused 2
            "--workload: unknown workload 'nexmark' (built in: grid .*nexmark:q4"
            place --workload nexmark)
sc_cli_test(place_bad_workload_arg_is_refused 2
            "--workload nexmark:q4: .*takes no argument 'bogus'"
            place --workload nexmark:q4 --workload-arg bogus=1)
sc_cli_test(place_workload_arg_without_a_value_is_refused 2
            "--workload-arg: .*'noeq': not KEY=VALUE"
            place --workload nexmark:q4 --workload-arg noeq)
sc_cli_test(place_missing_plugin_file_is_refused 2
            "--workload ./no-such-plugin.so: .*'./no-such-plugin.so'"
            place --workload ./no-such-plugin.so)
sc_cli_test(place_workload_arg_on_the_grid_is_refused 2
            "--workload-arg: the grid takes none"
            place --workload-arg rows=4)
sc_cli_test(place_rate_on_a_workload_is_refused 2
            "--rate: only the grid runs open loop"
            place --workload nexmark:q4 --rate 1000)
sc_cli_test(place_events_and_time_per_case_are_refused_together 2
            "--events and --time-per-case: give one, not both"
            place --events 1000 --time-per-case 1)
sc_cli_test(place_plot_of_an_unknown_kind_is_refused 2
            "--plot: 'p.jpg': the file must end in .png or .svg"
            place --plot p.jpg)
sc_cli_test(place_balanced_zero_is_refused 2
            "'balanced:0': .*balanced:K takes a whole number in 1..4096"
            place --placements single,balanced:0)
sc_cli_test(place_dot_path_that_cannot_be_created_is_refused 2
            "--dot: cannot create '/nonexistent-dir/p.dot'"
            place --time-per-case 60 --dot /nonexistent-dir/p.dot)
# A --plot path that cannot be created is refused (exit 2) before any
# run: by name where gnuplot is in PATH; where it is not (tools/deps
# installs it only with --optional), the refusal that comes first is the
# missing gnuplot's. The test looks for gnuplot as it runs, in the PATH
# the CLI searches.
add_test(NAME cli.place_plot_path_that_cannot_be_created_is_refused
         COMMAND sh -c [=[if command -v gnuplot >/dev/null 2>&1; then
             pat="--plot: cannot create '/nonexistent-dir/p.svg'"
           else
             pat="--plot: gnuplot is not installed (no gnuplot in PATH)"
           fi
           out=$(timeout 60 "$0" place --time-per-case 60 --plot /nonexistent-dir/p.svg 2>&1); rc=$?
           echo "$out"; echo "exit $rc (want 2), looked for: $pat"
           test $rc -eq 2 && echo "$out" | grep -q -e "$pat"]=]
                 $<TARGET_FILE:subcirc_cli>)
set_tests_properties(cli.place_plot_path_that_cannot_be_created_is_refused
                     PROPERTIES LABELS "units" TIMEOUT 120)
# The figures read in units people use: throughput in k or M events/s,
# p99 in ms, a legend entry for each worker count's colour and for the
# min-max lines, and a caption with the report's date (UTC), host, load
# and version. --replot draws the same figure from the saved report,
# captioned from it, nothing run. Without gnuplot (tools/deps installs it
# only with --optional) the replot of a good report is refused by name.
add_test(NAME cli.place_plot_reads_in_units_with_a_legend_and_caption
         COMMAND sh -c [=[d=$(mktemp -d) && trap 'rm -rf "$d"' EXIT
           if command -v gnuplot >/dev/null 2>&1; then plot="--plot $d/p.svg"; else plot=""; fi
           timeout 120 "$0" place --placements single,chains --workers 1,2 --budgets 64 --reps 2 --time-per-case 0.02 --warmup 0 --quiet --json "$d/p.json" $plot >/dev/null || { echo "place: exit $?"; exit 1; }
           if ! command -v gnuplot >/dev/null 2>&1; then
             out=$(PATH=/nonexistent-bin "$0" place --replot "$d/p.json" --plot "$d/r.svg" 2>&1); rc=$?; echo "$out"
             test $rc -eq 2 && echo "$out" | grep -q -e "--plot: gnuplot is not installed"; exit $?
           fi
           out=$(timeout 60 "$0" place --replot "$d/p.json" --plot "$d/r.svg" 2>&1) || { echo "$out"; echo "replot: exit $?"; exit 1; }
           echo "$out" | grep -q "plot written to $d/r.svg" || { echo "$out"; exit 1; }
           timeout 60 "$0" place --replot "$d/p.json" --plot "$d/r.png" >/dev/null || { echo "replot png: exit $?"; exit 1; }
           head -c 8 "$d/r.png" | od -An -tx1 | grep -q "89 50 4e 47 0d 0a 1a 0a" || { echo "not a PNG"; exit 1; }
           python3 - "$d/p.json" "$d/p.svg" "$d/r.svg" <<'PY'
import json, re, sys
doc = json.load(open(sys.argv[1]))
def texts(path):
    return " ".join(re.sub(r"<[^>]+>", "", t) for t in re.findall(r"<text[^>]*>.*?</text>", open(path).read(), re.S))
d, t = doc["started"], doc["subcirc"]["version"]
want = ["1 worker (median)", "2 workers (median)", "min-max of the reps", "p99 latency, ms (lower is better)",
        "report of %s %s UTC" % (d[:10], d[11:16]), "subcirc %s" % t, "load "]
if doc["host"]["hostname"]:
    want.append(" on %s " % doc["host"]["hostname"])
for path in sys.argv[2:]:
    text = texts(path)
    for w in want:
        assert w in text, (path, w, text[:400])
    assert re.search(r"[kM] events/s \(higher is better\)", text), (path, text[:400])
    # The caption's commit and host name may hold "3e5": only the rest is
    # axes, titles and legend.
    marks = re.sub(r"report of .*?\(commit [0-9a-f]+(-dirty)?\)", "", text)
    assert not re.search(r"\d\s*x\s*10\^?\d|\d[eE]\+?\d", marks), ("raw exponent on an axis", path)
print("both figures read in units, with a legend and a caption")
PY
]=] $<TARGET_FILE:subcirc_cli>)
set_tests_properties(cli.place_plot_reads_in_units_with_a_legend_and_caption
                     PROPERTIES LABELS "units;threaded" TIMEOUT 240)
# --replot refuses, exit 2 and naming the file, what it cannot draw: a
# file that is missing, not JSON, of another schema, or another command's
# report; and it runs nothing, so it takes no sweep option.
add_test(NAME cli.place_replot_refuses_what_is_not_a_place_report
         COMMAND sh -c [=[d=$(mktemp -d) && trap 'rm -rf "$d"' EXIT
           printf '{"schema": "subcirc-report",}' > "$d/bad.json"
           printf '{"schema": "other", "schema_version": 1}' > "$d/other.json"
           printf '{"schema": "subcirc-report", "schema_version": 1, "command": "run"}' > "$d/run.json"
           check() { want=$1; shift; out=$(timeout 60 "$0" place "$@" 2>&1); rc=$?; echo "$out"
             test $rc -eq 2 || { echo "exit $rc, want 2"; exit 1; }
             echo "$out" | grep -q -F -e "$want" || { echo "lacks: $want"; exit 1; }; }
           check "cannot read '$d/none.json'" --replot "$d/none.json" --plot "$d/x.svg"
           check "'$d/bad.json' is not a place report this subcirc can draw: not JSON (at byte 28: expected a key)" --replot "$d/bad.json" --plot "$d/x.svg"
           check "'$d/other.json' is not a place report this subcirc can draw: its schema is not \"subcirc-report\" version 1" --replot "$d/other.json" --plot "$d/x.svg"
           check "'$d/run.json' is not a place report this subcirc can draw: its command is \"run\", not place" --replot "$d/run.json" --plot "$d/x.svg"
           check "--replot: '--reps': --replot takes only --plot" --replot "$d/run.json" --plot "$d/x.svg" --reps 2
           check "--replot: give --plot" --replot "$d/run.json"
           echo "every refusal named"]=]
         $<TARGET_FILE:subcirc_cli>)
set_tests_properties(cli.place_replot_refuses_what_is_not_a_place_report
                     PROPERTIES LABELS "units" TIMEOUT 120)

# run --plot: the latency histogram of an open-loop run, per event in ms
# on a log axis, with its percentiles in the legend and the caption; a
# missing gnuplot is refused before the run (exit 2), as a path that
# cannot be created is (where gnuplot is there to get that far).
add_test(NAME cli.run_plot_draws_the_latency_histogram
         COMMAND sh -c [=[d=$(mktemp -d) && trap 'rm -rf "$d"' EXIT
           if ! command -v gnuplot >/dev/null 2>&1; then
             out=$(PATH=/nonexistent-bin "$0" run --rate 50000 --seconds 60 --plot "$d/h.svg" 2>&1); rc=$?; echo "$out"
             test $rc -eq 2 && echo "$out" | grep -q -e "--plot: gnuplot is not installed"; exit $?
           fi
           out=$(timeout 60 "$0" run --rate 50000 --seconds 0.5 --quiet --json "$d/r.json" --plot "$d/h.svg" 2>&1) || { echo "$out"; echo "exit $?"; exit 1; }
           echo "$out" | grep -q "plot written to $d/h.svg" || { echo "$out"; exit 1; }
           out=$(timeout 60 "$0" run --rate 50000 --seconds 60 --plot /nonexistent-dir/h.svg 2>&1); rc=$?
           test $rc -eq 2 && echo "$out" | grep -q -e "--plot: cannot create '/nonexistent-dir/h.svg'" || { echo "$out"; echo "exit $rc"; exit 1; }
           python3 - "$d/r.json" "$d/h.svg" <<'PY'
import json, re, sys
doc = json.load(open(sys.argv[1]))
text = " ".join(re.sub(r"<[^>]+>", "", t) for t in re.findall(r"<text[^>]*>.*?</text>", open(sys.argv[2]).read(), re.S))
d = doc["started"]
for w in ("latency per event, ms (log scale)", "p50 = ", "p99 = ", "p99.9 = ", "max = ", "open loop at 50 k events/s",
          "report of %s %s UTC" % (d[:10], d[11:16]), "subcirc %s" % doc["subcirc"]["version"]):
    assert w in text, (w, text[:400])
assert doc["config"]["plot"] == sys.argv[2], doc["config"]
print("a histogram with its percentiles and caption")
PY
]=] $<TARGET_FILE:subcirc_cli>)
set_tests_properties(cli.run_plot_draws_the_latency_histogram
                     PROPERTIES LABELS "units;threaded" TIMEOUT 180)
sc_cli_test(run_plot_of_an_unknown_kind_is_refused 2
            "--plot: 'h.jpg': the file must end in .png or .svg"
            run --rate 1000 --plot h.jpg)
sc_cli_test(place_unknown_option_is_refused 2
            "unknown argument '--repetitions'"
            place --repetitions 3)

# run --units: the per-unit table at the end; --units-every also while
# it runs.
sc_cli_test(run_units_prints_the_table_at_the_end 0
            "units at .* (idle, the end): 6 units"
            run --workers 2 --events 20000 --quiet --units)
sc_cli_test(run_units_every_prints_the_table_while_it_runs 0
            "units at .* (running)"
            run --workers 2 --seconds 0.6 --quiet --units-every 0.2)
sc_cli_test(run_units_every_zero_is_refused 2 "--units-every: '0'"
            run --units-every 0)
sc_cli_test(run_units_takes_no_value 2 "--units takes no value"
            run --units=yes)
set_tests_properties(cli.run_units_prints_the_table_at_the_end
                     cli.run_units_every_prints_the_table_while_it_runs
                     PROPERTIES LABELS "units;threaded;tsan")

# Place on a built-in workload runs the library's sweep (units/sweep.h):
# every case ranked per worker count, balanced calibrated, and the report
# validates against the schema in the tree.
add_test(NAME cli.place_on_a_builtin_ranks_and_its_json_validates
         COMMAND sh -c [=[d=$(mktemp -d) && trap 'rm -rf "$d"' EXIT
           timeout 120 "$0" place --workload nexmark:q4 --workload-arg events=4000 --placements single,chains,balanced --workers 1,2 --budgets 64 --reps 2 --time-per-case 0.05 --warmup 0.01 --quiet --json "$d/p.json" --csv "$d/p.csv" >"$d/out" 2>&1 || { cat "$d/out"; echo "exit $?"; exit 1; }
           grep -q "ranking with 2 workers" "$d/out" || { cat "$d/out"; echo "no ranking"; exit 1; }
           python3 "$2" "$1" "$d/p.json" || exit 1
           python3 - "$d/p.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
assert doc["workload"] == "nexmark:q4", doc["workload"]
r = doc["results"]
assert r["calibrated"] is True
got = {(c["placement"], c["workers"]) for c in r["cases"]}
want = {(p, w) for p in ("single", "chains") for w in (1, 2)} | {("balanced:1", 1), ("balanced:2", 2)}
assert got == want, (got, want)
for c in r["cases"]:
    assert len(c["reps"]) == 2 and all(x["events"] > 0 for x in c["reps"]), c
ranks = {k["workers"]: [o["case"] for o in k["order"]] for k in r["rankings"]}
assert sorted(ranks) == [1, 2] and all(len(v) == 3 for v in ranks.values()), ranks
print("ok")
PY
]=] $<TARGET_FILE:subcirc_cli> ${PROJECT_SOURCE_DIR}/tools/report.schema.json
    ${CMAKE_CURRENT_LIST_DIR}/report_check.py)
set_tests_properties(cli.place_on_a_builtin_ranks_and_its_json_validates
                     PROPERTIES LABELS "units;threaded" TIMEOUT 180)

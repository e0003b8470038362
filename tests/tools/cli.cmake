# tests/tools/cli.cmake: the tests of the `subcirc` command line (the
# target subcirc_cli, tools/), included by tools/CMakeLists.txt once the
# program is defined. Each test runs the program as a user does and pins
# its exit code and what it says; place's and run --units' are in
# place.cmake beside this file, those under mpirun in tests/mpi/cli.cmake.

# Smoke tests of the program as a user runs it (label "units": it drives
# the units layer end to end).
add_test(NAME cli.run_smoke
         COMMAND subcirc_cli run --workers 2 --events 20000 --quiet)
add_test(NAME cli.stress_smoke
         COMMAND subcirc_cli stress --seeds 1..3 --workers 1,2)
add_test(NAME cli.stress_pool_panics_smoke
         COMMAND subcirc_cli stress --seeds 1..3 --workers 2 --pool
                 --panic-rate 0.05)
add_test(NAME cli.place_smoke
         COMMAND subcirc_cli place --workers 1 --events 5000
                 --placements single,sharded:2)
# --version prints the library's version, which CMake read from
# operators/version.h, and the commit of the tree it was built from
# (tools/commit.cmake); every command takes it and says the same.
add_test(NAME cli.version_is_the_project_version
         COMMAND sh -c [=[out=$("$0" --version) && echo "$out" || exit 1
           echo "$out" | grep -qE "^subcirc $1 \(commit ([0-9a-f]{7,40}(-dirty)?|unknown)\)$" || { echo "not the version and commit"; exit 1; }
           for c in "run" "run --workload nexmark" "place" "stress"; do
             o=$("$0" $c --version) || { echo "$c --version: exit $?"; exit 1; }
             test "$o" = "$out" || { echo "$c --version: $o"; exit 1; }
           done]=]
                 $<TARGET_FILE:subcirc_cli> ${PROJECT_VERSION})
# A bad argument is refused by name, with exit code 2.
add_test(NAME cli.bad_argument_is_refused
         COMMAND sh -c [=[out=$("$0" run --workers zero 2>&1); rc=$?; echo "$out"; test $rc -eq 2 && echo "$out" | grep -q "workers: 'zero' is not a whole number"]=]
                 $<TARGET_FILE:subcirc_cli>)
set_tests_properties(cli.stress_smoke cli.place_smoke
                     cli.version_is_the_project_version
                     cli.bad_argument_is_refused
                     PROPERTIES LABELS "units" TIMEOUT 120)

# sc_cli_test(NAME RC PATTERN ARGS...): `subcirc ARGS...` must exit RC
# within 60 s with PATTERN (grep) in its output. The timeout is inside the
# test, so a hang fails the test rather than hanging ctest.
function(sc_cli_test name rc pattern)
  add_test(NAME cli.${name}
           COMMAND sh -c [=[exe=$1 want=$2 pat=$3; shift 3; out=$(timeout 60 "$exe" "$@" 2>&1); rc=$?; echo "$out"; echo "exit $rc (want $want)"; test $rc -eq "$want" && echo "$out" | grep -q -e "$pat"]=]
                   sh $<TARGET_FILE:subcirc_cli> ${rc} ${pattern} ${ARGN})
  set_tests_properties(cli.${name} PROPERTIES LABELS "units" TIMEOUT 120)
endfunction()

# Numbers are strict: digits only, no sign, no spaces (strtoull took
# ' -1' as 2^64 - 1), no empty list entries (strtok_r skipped them).
sc_cli_test(number_with_a_leading_space_is_refused 2
            "--seed: ' -1' is not a whole number"
            run --events 1 --seed " -1")
sc_cli_test(number_with_a_plus_sign_is_refused 2
            "--events: '+5' is not a whole number"
            run --events +5)
sc_cli_test(decimal_with_a_space_is_refused 2
            "--seconds: ' 1' is not a number"
            run --seconds " 1")
sc_cli_test(decimal_that_is_not_plain_is_refused 2
            "--rate: '0x10' is not a number"
            run --events 1 --rate 0x10)
sc_cli_test(list_with_an_empty_entry_is_refused 2
            "--workers: '1,,2' has an empty entry"
            place --events 1 --workers 1,,2)
sc_cli_test(placement_list_with_an_empty_entry_is_refused 2
            "--placements: 'single,,chains' has an empty entry"
            stress --seeds 1 --placements single,,chains)
# A placement's parameter states its range, rather than "unknown strategy".
sc_cli_test(sharded_zero_states_the_range 2
            "'sharded:0': sharded:K takes a whole number in 1..64"
            run --events 1 --placement sharded:0)
sc_cli_test(sharded_negative_states_the_range 2
            "'sharded:-1': sharded:K takes a whole number in 1..64"
            run --events 1 --placement sharded:-1)
sc_cli_test(random_zero_states_the_range 2
            "'random:0': random:N takes a whole number in 1..4294967295"
            place --events 1 --placements random:0)
sc_cli_test(placement_parameter_with_a_space_is_refused 2
            "'random: 5': random:N takes a whole number"
            run --events 1 --placement "random: 5")

# Output files are created before the run: a bad path is refused at once
# (exit 2, naming it) rather than after a run of 600 s.
sc_cli_test(json_path_that_cannot_be_created_is_refused_before_the_run 2
            "--json: cannot create '/nonexistent-dir/run.json'"
            run --workers 1 --seconds 600 --quiet
                --json /nonexistent-dir/run.json)
sc_cli_test(csv_path_that_cannot_be_created_is_refused_before_the_run 2
            "--csv: cannot create '/nonexistent-dir/place.csv'"
            place --workers 1 --placements single --events 100000000
                  --csv /nonexistent-dir/place.csv)
# A write that fails is an error (exit 3) naming the file.
sc_cli_test(json_write_error_exits_3 3 "writing '/dev/full' failed"
            run --workers 1 --events 1000 --quiet --json /dev/full)
sc_cli_test(csv_write_error_exits_3 3 "writing '/dev/full' failed"
            run --workers 1 --events 1000 --quiet --csv /dev/full)
sc_cli_test(place_json_write_error_exits_3 3 "writing '/dev/full' failed"
            place --workers 1 --placements single --events 1000
                  --reps 1 --json /dev/full)

# A unit that dies ends the run soon, naming it, with exit 3: every
# projection row fails (--panic-rate 1), and batches of one fill the ring
# of in-flight batches at once, where the host used to wait for ever.
sc_cli_test(run_ends_soon_after_a_unit_dies 3 "unit .* panicked"
            run --workers 2 --panic-rate 1 --seconds 600 --batch 1 --quiet)
# --seconds bounds an open-loop run at any rate (one batch of 256 events
# at 1 event/s is due every 256 s).
sc_cli_test(run_at_a_low_rate_stops_at_its_seconds 0
            "output equals the reference"
            run --workers 1 --rate 1 --seconds 1 --quiet)
set_tests_properties(cli.run_ends_soon_after_a_unit_dies
                     cli.run_at_a_low_rate_stops_at_its_seconds
                     PROPERTIES LABELS "units;threaded;tsan")

# Outputs users can keep: "-" is stdout (JSON that parses, the text on
# stderr), once; the JSON is the report (tools/report.schema.json): its
# schema, the run's configuration and the host; an open-loop run adds per-event percentiles, its rate and the
# machine's floor; an offered rate the host cannot keep is warned about
# (stderr and JSON), and its events' latencies count from their arrivals,
# not from the late submits: p50 over 500 ms in a run of 2 s whose events
# all arrived in its first millisecond (from the submits, as closed loop,
# it was 16-22 ms on this machine).
add_test(NAME cli.run_json_to_stdout_holds_the_schema_config_and_host
         COMMAND sh -c [=[timeout 60 "$0" run --workers 1 --events 20000 --seed 7 --json - 2>/dev/null | python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["schema"] == "subcirc-report" and d["schema_version"] == 1, d
assert d["command"] == "run" and d["workload"] == "grid", d
assert d["subcirc"]["version"] and d["subcirc"]["commit"], d["subcirc"]
c = d["config"]
for k, v in (("seed", 7), ("workers", 1), ("placement", "chains"), ("budget", 64), ("capacity", 64), ("outbox_bound", 4096), ("events", 20000), ("rate", None), ("batch", 256), ("json", "-")):
    assert c[k] == v, (k, c[k], v)
h = d["host"]
assert h["cores"] >= 1 and len(h["load_before"]) == 3 and len(h["load_after"]) == 3, h
assert d["started"] <= d["ended"], d
r = d["results"]
assert d["interrupted"] is False and d["signal"] is None and r["ok"] is True, d
assert r["latency"]["from"] == "submit" and r["floor"] is None, r
print("ok")']=] $<TARGET_FILE:subcirc_cli>)
add_test(NAME cli.run_open_loop_json_has_percentiles_rate_and_floor
         COMMAND sh -c [=[f=$(mktemp) && trap 'rm -f "$f"' EXIT
           timeout 60 "$0" run --workers 1 --rate 200000 --seconds 0.5 --quiet --json "$f" || exit 1
           python3 - "$f" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
l, r, f = d["results"]["latency"], d["results"]["rate"], d["results"]["floor"]
assert l["per"] == "event" and l["from"].startswith("arrival"), l
assert 0 < l["p50_us"] <= l["p90_us"] <= l["p99_us"] <= l["p999_us"] <= l["max_us"], l
assert r["offered_events_per_s"] == 200000 and r["achieved_events_per_s"] > 0, r
assert f["sleeps"] >= 50 and f["service_batches"] == 21, f
assert f["sleep_us"] == 1280 and f["service_p50_us"] > 0, f
assert d["config"]["rate"] == 200000 and d["config"]["seconds"] == 0.5, d["config"]
print("ok")
PY
]=] $<TARGET_FILE:subcirc_cli>)
add_test(NAME cli.place_json_to_stdout_parses_with_the_table_on_stderr
         COMMAND sh -c [=[out=$(timeout 60 "$0" place --workers 1 --placements single,chains --events 5000 --reps 1 --json - 2>/dev/null) || exit 1
           echo "$out" | python3 -c 'import json, sys; doc = json.load(sys.stdin); places = sorted({c["placement"] for c in doc["results"]["cases"]}); print(places); assert places == ["chains", "single"]']=]
         $<TARGET_FILE:subcirc_cli>)
set_tests_properties(cli.place_json_to_stdout_parses_with_the_table_on_stderr
                     PROPERTIES LABELS "units" TIMEOUT 120)
# Every command and workload writes the one report, which validates
# against the schema in the tree (tools/report.schema.json, by
# tests/tools/report_check.py): grid run closed and open loop, Nexmark
# checked and with lateness, place, stress passing and failing. Nexmark
# takes --csv as the grid does (no latency: empty fields).
add_test(NAME cli.report_of_every_command_validates_against_the_schema
         COMMAND sh -c [=[d=$(mktemp -d) && trap 'rm -rf "$d"' EXIT
           exe=$0 schema=$1 check=$2
           run() { name=$1 want=$2; shift 2; timeout 120 "$exe" "$@" --json "$d/$name.json" >"$d/$name.out" 2>&1; rc=$?; test $rc -eq "$want" || { cat "$d/$name.out"; echo "$name: exit $rc, want $want"; exit 1; }; }
           run grid 0 run --workers 1 --events 20000 --quiet --csv "$d/grid.csv"
           run grid_open 0 run --workers 1 --rate 100000 --seconds 0.3 --quiet
           run nexmark 0 run --workload nexmark --query q4 --workers 2 --events 20000 --check --quiet --csv "$d/nexmark.csv"
           run nexmark_late 0 run --workload nexmark --query q7 --workers 2 --events 20000 --disorder 500 --capacity 128 --quiet
           run place 0 place --workers 1 --placements single,balanced --events 2000 --reps 1 --warmup 0 --quiet
           run stress 0 stress --seeds 1..2 --workers 1,2 --quiet
           run stress_failing 1 stress --seeds 3..3 --workers 2 --placements chains --workloads random --plant-difference --quiet
           python3 "$check" "$schema" "$d"/*.json || exit 1
           head -1 "$d/nexmark.csv" | grep -q '^kind,t_s,events,events_per_s,p50_us,p99_us,edge_fill$' || { echo "nexmark csv header"; exit 1; }
           grep -qE '^total,[0-9.]+,20000,[0-9.]+,,,$' "$d/nexmark.csv" || { cat "$d/nexmark.csv"; echo "nexmark csv total"; exit 1; }
           python3 - "$d" <<'PY'
import json, sys
d = sys.argv[1]
n = json.load(open(d + "/nexmark_late.json"))
assert n["config"]["capacity"] == 128 and n["config"]["lateness_ms"] == 4000, n["config"]
assert n["results"]["lateness"]["disorder_ms"] == 500, n["results"]
f = json.load(open(d + "/stress_failing.json"))["results"]
assert f["failures"] > 0 and " stress " in f["first_failure"]["replay"], f
print("ok")
PY
]=] $<TARGET_FILE:subcirc_cli> ${PROJECT_SOURCE_DIR}/tools/report.schema.json
    ${CMAKE_CURRENT_LIST_DIR}/report_check.py)
set_tests_properties(cli.report_of_every_command_validates_against_the_schema
                     PROPERTIES LABELS "units;threaded" TIMEOUT 300)
# --warmup S leaves the events of the batches submitted in the first S
# seconds out of the latency: an open-loop run of 1 s at 100,000 events/s
# with a warm-up of 0.5 s counts about half its events (every one without
# a warm-up), says so in the summary and the report (which validates), and
# a warm-up that outlasts a run of --events counts none, with no
# percentile.
add_test(NAME cli.run_warmup_leaves_the_start_out_of_the_latency
         COMMAND sh -c [=[d=$(mktemp -d) && trap 'rm -rf "$d"' EXIT
           exe=$0 schema=$1 check=$2
           timeout 60 "$exe" run --workers 1 --rate 100000 --seconds 1 --warmup 0.5 --json "$d/warm.json" >"$d/warm.out" 2>&1 || { cat "$d/warm.out"; exit 1; }
           grep -qE "latency counted after a warm-up of 0.5 s: [0-9]+ of the events$" "$d/warm.out" || { cat "$d/warm.out"; echo "no warm-up line"; exit 1; }
           timeout 60 "$exe" run --workers 1 --rate 100000 --seconds 1 --json "$d/all.json" >/dev/null 2>&1 || exit 1
           timeout 60 "$exe" run --workers 1 --events 20000 --warmup 100 --json "$d/none.json" >"$d/none.out" 2>&1 || { cat "$d/none.out"; exit 1; }
           grep -q "warm-up of 100 s: 0 of the events (the run ended first)" "$d/none.out" || { cat "$d/none.out"; exit 1; }
           ! grep -q "latency per event" "$d/none.out" || { cat "$d/none.out"; echo "percentiles of no event"; exit 1; }
           python3 "$check" "$schema" "$d"/*.json || exit 1
           python3 - "$d" <<'PY'
import json, sys
d = sys.argv[1]
w, a, n = (json.load(open("%s/%s.json" % (d, k))) for k in ("warm", "all", "none"))
wl, al, nl = w["results"]["latency"], a["results"]["latency"], n["results"]["latency"]
print(w["results"]["events"], wl["events"], a["results"]["events"], al["events"])
assert w["config"]["warmup_s"] == 0.5 and wl["warmup_s"] == 0.5, (w["config"], wl)
assert 0.2 * w["results"]["events"] < wl["events"] < 0.8 * w["results"]["events"], wl
assert 0 < wl["p50_us"] <= wl["p99_us"] <= wl["max_us"], wl
assert a["config"]["warmup_s"] is None and al["warmup_s"] == 0, (a["config"], al)
assert al["events"] == a["results"]["events"], (al, a["results"]["events"])
assert nl["events"] == 0 and nl["p50_us"] is None and nl["max_us"] is None, nl
print("ok")
PY
]=] $<TARGET_FILE:subcirc_cli> ${PROJECT_SOURCE_DIR}/tools/report.schema.json
    ${CMAKE_CURRENT_LIST_DIR}/report_check.py)
set_tests_properties(cli.run_warmup_leaves_the_start_out_of_the_latency
                     PROPERTIES LABELS "units;threaded" TIMEOUT 180)
sc_cli_test(run_warmup_as_long_as_the_run_is_refused 2
            "--warmup 3: the run lasts 3 s (--seconds), and a warm-up must end before it"
            run --warmup 3)
sc_cli_test(run_warmup_that_is_not_a_number_is_refused 2
            "--warmup: '-1' is not a number"
            run --seconds 1 --warmup -1)
# One flag for one thing: --capacity is the edge capacity of every
# workload, and --edge-capacity the same option under another name.
sc_cli_test(nexmark_capacity_must_be_a_power_of_two 2
            "--capacity: 3 is not a power of two"
            run --workload nexmark --capacity 3 --events 1)
sc_cli_test(grid_takes_edge_capacity_as_capacity 2
            "--edge-capacity: 3 is not a power of two"
            run --edge-capacity 3 --events 1)
# Nexmark takes --units as the grid does.
sc_cli_test(nexmark_units_prints_the_table_at_the_end 0
            "units at .* (idle, the end)"
            run --workload nexmark --query q4 --workers 2 --events 20000
                --quiet --units)
# --units shows each unit's longest turn, and under --trace the operator
# and activity of its longest phase; the --json report has them too
# (longest_turns: one object per unit).
add_test(NAME cli.run_units_shows_each_units_longest_turn_and_the_json_has_it
         COMMAND sh -c [=[d=$(mktemp -d) && trap 'rm -rf "$d"' EXIT
           out=$(timeout 60 "$0" run --workload nexmark --query q4 --workers 2 --events 20000 --quiet --units --trace "$d/t.json" --json "$d/r.json") || { echo "$out"; exit 1; }
           echo "$out" | grep -qE '^ +id +unit .* longest ms +pending' || { echo "$out"; echo "no longest-turn column"; exit 1; }
           echo "$out" | grep -qE "longest in '[^']+' \((step|grow|merge|sort|output)\) [0-9.]+ ms" || { echo "$out"; echo "no longest phase"; exit 1; }
           python3 - "$d/r.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["results"]
lt = r["longest_turns"]
assert len(lt) == r["units"], (len(lt), r["units"])
assert all(u["longest_ms"] >= 0 and u["turns"] >= 0 for u in lt), lt
assert any(u["doing"] in ("step", "grow", "merge", "sort", "output") and u["op"] for u in lt), lt
print("ok", lt[0])
PY]=]
         $<TARGET_FILE:subcirc_cli>)
set_tests_properties(cli.run_units_shows_each_units_longest_turn_and_the_json_has_it
                     PROPERTIES LABELS "units;threaded" TIMEOUT 120)
# --trace: the file is a Chrome trace (trace event format) that Perfetto
# opens: a named track per thread that ran turns, slices named after their
# units that never overlap on a track, the edges' fill as counters; the
# host's submits and its drain on a track of their own; the run's report
# (version, commit, host, configuration) in otherData; and the summary
# says where the trace went.
add_test(NAME cli.run_trace_is_a_trace_event_file_with_a_track_per_worker
         COMMAND sh -c [=[f=$(mktemp) && trap 'rm -f "$f"' EXIT
           out=$(timeout 60 "$0" run --workers 2 --events 50000 --quiet --trace "$f") || { echo "$out"; exit 1; }
           echo "$out" | grep -q "^trace written to $f\$" || { echo "$out"; echo "the summary does not say where the trace went"; exit 1; }
           python3 - "$f" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
ev = d["traceEvents"]
names = {e["tid"]: e["args"]["name"] for e in ev if e.get("name") == "thread_name"}
host = [e for e in ev if e["ph"] == "X" and e["name"].startswith("host: ")]
xs = [e for e in ev if e["ph"] == "X" and not e["name"].startswith("host: ")]
assert xs, "no slice"
assert any(e["name"] == "host: submit" for e in host), "no submit on the host's track"
assert any(e["name"].startswith("host: wait until idle") for e in host), "no drain on the host's track"
assert {e["tid"] for e in host}.isdisjoint({e["tid"] for e in xs}), "the host's slices share a worker's track"
rep = d["otherData"]["report"]
assert rep["schema"] == "subcirc-report" and rep["command"] == "run", rep["schema"]
assert rep["subcirc"]["version"] and rep["subcirc"]["commit"], rep["subcirc"]
assert rep["host"]["cores"] >= 1 and "load_before" in rep["host"], rep["host"]
assert rep["config"]["workers"] == 2 and rep["config"]["trace"] == sys.argv[1], rep["config"]
assert rep["results"]["events"] >= 50000 and rep["results"]["ok"] is True, rep["results"]
last = {}
for e in xs:
    t = e["tid"]
    assert t in names, "slice on an unnamed track %d" % t
    assert e["name"].startswith("u"), "slice not named after a unit: %s" % e["name"]
    assert e["ts"] * 1000 + 0.5 >= last.get(t, -1), "slices overlap on track %d" % t
    last[t] = (e["ts"] + e["dur"]) * 1000
assert len({e["tid"] for e in xs}) <= 2, "more tracks with turns than workers"
assert any(e["ph"] == "C" and e["name"].startswith("fill ") for e in ev), "no edge fill"
assert d["otherData"]["slices"] == len(xs) + len(host)
print(len(xs), "slices on", len(last), "tracks,", len(host), "of the host")
PY]=]
         $<TARGET_FILE:subcirc_cli>)
set_tests_properties(cli.run_trace_is_a_trace_event_file_with_a_track_per_worker
                     PROPERTIES LABELS "units;threaded" TIMEOUT 120)
# The same for a Nexmark run: the worker tracks are named sc-worker-N,
# units are named after the query's operators ("q4 join auction⋈bid"),
# never the graph's default "join#4", and the host submits on its own.
add_test(NAME cli.run_nexmark_trace_has_a_named_track_per_worker
         COMMAND sh -c [=[f=$(mktemp) && trap 'rm -f "$f"' EXIT
           out=$(timeout 60 "$0" run --workload nexmark --query q4 --workers 2 --events 200000 --quiet --trace "$f") || { echo "$out"; exit 1; }
           echo "$out" | grep -q "^trace written to $f\$" || { echo "$out"; exit 1; }
           python3 - "$f" <<'PY'
import json, re, sys
d = json.load(open(sys.argv[1]))
ev = d["traceEvents"]
names = {e["tid"]: e["args"]["name"] for e in ev if e.get("name") == "thread_name"}
units = [e for e in ev if e["ph"] == "X" and not e["name"].startswith("host: ")]
tids = {e["tid"] for e in units}
assert tids, "no slice"
assert all(names[t].startswith("sc-worker-") for t in tids), names
un = {e["name"] for e in units}
assert any(re.match(r"u\d+(\.\d+)? q4 join auction\u22c8bid$", n) for n in un), un
assert not any("#" in n for n in un), un
assert any(e["ph"] == "X" and e["name"] == "host: submit" for e in ev), "no submit on the host's track"
rep = d["otherData"]["report"]
assert rep["workload"] == "nexmark" and rep["config"]["query"] == "q4", rep["config"]
print(len(tids), "worker tracks:", sorted(names[t] for t in tids), sorted(un))
PY]=]
         $<TARGET_FILE:subcirc_cli>)
set_tests_properties(cli.run_nexmark_trace_has_a_named_track_per_worker
                     PROPERTIES LABELS "units;threaded" TIMEOUT 120)
sc_cli_test(run_trace_path_that_cannot_be_created_is_refused 2
            "--trace: cannot create"
            run --events 1 --trace /nonexistent/dir/t.json)
# The progress line: redrawn in place on a terminal (script(1) gives the
# run one), a plain line a second into a pipe.
add_test(NAME cli.run_progress_redraws_in_place_on_a_terminal_only
         COMMAND sh -c [=[cr=$(printf '\r')
           tty=$(timeout 60 script -qc "$0 run --workers 1 --seconds 2.3" /dev/null) || exit 1
           echo "$tty" | grep -q "${cr}.\[K\[ *[0-9.]*s\] events" || { echo "no redraw on a terminal: $tty"; exit 1; }
           pipe=$(timeout 60 "$0" run --workers 1 --seconds 2.3 2>&1 | cat) || exit 1
           echo "$pipe" | grep -q "$cr" && { echo "a redraw into a pipe: $pipe"; exit 1; }
           echo "$pipe" | grep -qE '^\[ *[0-9.]+s\] events [0-9]+ .* p50 +[0-9.]+ (us|ms)' || { echo "no progress line: $pipe"; exit 1; }
           echo ok]=]
         $<TARGET_FILE:subcirc_cli>)
set_tests_properties(cli.run_progress_redraws_in_place_on_a_terminal_only
                     PROPERTIES LABELS "units;threaded" TIMEOUT 120)
sc_cli_test(run_json_and_csv_cannot_both_be_stdout 2
            "--csv: '-': stdout is taken"
            run --events 1 --json - --csv -)
add_test(NAME cli.run_at_an_offered_rate_it_cannot_keep_warns
         COMMAND sh -c [=[f=$(mktemp) && trap 'rm -f "$f"' EXIT
           err=$(timeout 60 "$0" run --workers 1 --rate 1e10 --seconds 2 --quiet --json "$f" 2>&1 >/dev/null) || exit 1
           echo "$err"
           echo "$err" | grep -q "warning: offered 10000000000 events/s, achieved" || exit 1
           python3 -c 'import json, sys; d = json.load(open(sys.argv[1]))["results"]; r = d["rate"]; print(r, d["latency"], d["seconds"]); assert r["short"] is True and r["achieved_events_per_s"] < 0.95e10 and d["seconds"] < 30 and d["latency"]["p50_us"] > 500000' "$f"]=]
         $<TARGET_FILE:subcirc_cli>)
# An event waits for its batch too: at 1,000 events/s in batches of 100,
# a batch is due every 100 ms and its events arrived over the 99 ms
# before, so p50 is at least 40 ms and p90 at least 80 ms (stamped per
# batch at its submit, both would be one batch's service time).
add_test(NAME cli.run_open_loop_latency_counts_the_wait_for_the_batch
         COMMAND sh -c [=[f=$(mktemp) && trap 'rm -f "$f"' EXIT
           timeout 60 "$0" run --workers 1 --rate 1000 --batch 100 --seconds 1.5 --quiet --json "$f" || exit 1
           python3 -c 'import json, sys; d = json.load(open(sys.argv[1]))["results"]; l = d["latency"]; print(l); assert d["events"] >= 1000 and l["p50_us"] >= 40000 and l["p90_us"] >= 80000 and l["p50_us"] < 500000' "$f"]=]
         $<TARGET_FILE:subcirc_cli>)
set_tests_properties(cli.run_open_loop_latency_counts_the_wait_for_the_batch
                     PROPERTIES LABELS "units;threaded" TIMEOUT 120)
# --linger: at 100,000 events/s a batch that waits at most 100 us holds
# at most 11 events (10 us apart), not 256; it needs an open-loop run.
add_test(NAME cli.run_with_linger_submits_batches_of_what_arrived
         COMMAND sh -c [=[f=$(mktemp) && trap 'rm -f "$f"' EXIT
           timeout 60 "$0" run --workers 1 --rate 100000 --linger 100 --seconds 0.5 --quiet --json "$f" || exit 1
           python3 -c 'import json, sys; j = json.load(open(sys.argv[1])); d = j["results"]; print(d["events"], d["batches"], j["config"]["linger_us"]); assert d["ok"] and j["config"]["linger_us"] == 100 and d["batches"] > 0 and d["events"] <= 11 * d["batches"]' "$f"]=]
         $<TARGET_FILE:subcirc_cli>)
sc_cli_test(run_linger_without_a_rate_is_refused 2
            "--linger needs --rate"
            run --events 1 --linger 100)
# SIGINT and SIGTERM end a run of 60 s cleanly: exit 0, the summary, and
# the JSON and CSV for what ran, saying which signal.
foreach(sig INT TERM)
  add_test(NAME cli.run_ended_by_sig${sig}_writes_its_summary_and_files
           COMMAND sh -c [=[d=$(mktemp -d) && trap 'rm -rf "$d"' EXIT
             "$0" run --workers 1 --rate 100000 --seconds 60 --quiet --json "$d/r.json" --csv "$d/r.csv" >"$d/out" 2>&1 &
             pid=$!; sleep 2; kill -$1 $pid; wait $pid; rc=$?; cat "$d/out"
             test $rc -eq 0 || { echo "exit $rc"; exit 1; }
             grep -q "interrupted by SIG$1" "$d/out" && grep -q "output equals the reference" "$d/out" || exit 1
             grep -q "^total," "$d/r.csv" || { echo "no CSV total"; exit 1; }
             python3 -c 'import json, sys; j = json.load(open(sys.argv[1])); d = j["results"]; print(j["interrupted"], j["signal"], d["events"], d["seconds"]); assert j["interrupted"] is True and j["signal"] == "SIG" + sys.argv[2] and d["ok"] and d["events"] > 0 and d["seconds"] < 30' "$d/r.json" $1]=]
           $<TARGET_FILE:subcirc_cli> ${sig})
endforeach()
# The open-loop run is a threaded scenario (the callback's histogram on
# the workers, the host's arrivals): the TSan pass runs it too.
set_tests_properties(cli.run_open_loop_json_has_percentiles_rate_and_floor
                     cli.run_ended_by_sigINT_writes_its_summary_and_files
                     PROPERTIES LABELS "units;threaded;tsan" TIMEOUT 120)
set_tests_properties(cli.run_json_to_stdout_holds_the_schema_config_and_host
                     cli.run_at_an_offered_rate_it_cannot_keep_warns
                     cli.run_with_linger_submits_batches_of_what_arrived
                     cli.run_ended_by_sigTERM_writes_its_summary_and_files
                     PROPERTIES LABELS "units;threaded" TIMEOUT 120)

# Running out of memory at any allocation ends a small case with a library
# error (exit 3 and a message) or lets it pass: sc_cli_sweep(NAME ARGS...)
# runs `subcirc ARGS...` once to count its allocations, then once per
# allocation N with N failed (the preload tests/tools/failalloc_preload.c, SQLite's
# fault tests' way). Each run must exit with one of EXITS (a list such as
# "0 3"; an exit 3 with a message), and its output must not match FORBID
# (grep -E). Not under a sanitizer, which owns malloc.
function(sc_cli_sweep name exits forbid)
  add_test(NAME cli.${name}
           COMMAND sh -c [=[
exe=$1 lib=$2 exits=" $3 " forbid=$4; shift 4
total=$(SC_FAILALLOC_REPORT=1 LD_PRELOAD=$lib "$exe" "$@" 2>&1 >/dev/null | awk '$1 == "failalloc:" { print $2 }')
test -n "$total" || { echo "the preload did not count"; exit 1; }
n=1 bad=0 failed=0
while [ $n -le $((total + 5)) ]; do
  out=$(SC_FAILALLOC_NTH=$n LD_PRELOAD=$lib timeout 60 "$exe" "$@" 2>&1); rc=$?
  case "$exits" in *" $rc "*) ;; *) echo "allocation $n: exit $rc: $out"; bad=1 ;; esac
  if [ $rc -eq 3 ]; then
    failed=$((failed + 1))
    echo "$out" | grep -q "^subcirc" || { echo "allocation $n: exit 3 without a message"; bad=1; }
  fi
  echo "$out" | grep -Eq -e "$forbid" && { echo "allocation $n: $out"; bad=1; }
  n=$((n + 1))
done
echo "$total allocations swept, $failed ended in exit 3"
test $failed -gt 0 && exit $bad
]=] sh $<TARGET_FILE:subcirc_cli> $<TARGET_FILE:subcirc_failalloc>
      ${exits} ${forbid} ${ARGN})
  set_tests_properties(cli.${name} PROPERTIES LABELS "units;threaded"
                       TIMEOUT 300)
endfunction()
if(SC_SANITIZE STREQUAL "")
  add_library(subcirc_failalloc MODULE
              ${CMAKE_CURRENT_LIST_DIR}/failalloc_preload.c)
  target_link_libraries(subcirc_failalloc PRIVATE ${CMAKE_DL_LIBS})
  # run: never a usage error (a placement's SC_ENOMEM read as a bad
  # --placement), never "DIFFERS" (an SC_ENOMEM of the final check), and
  # an exit 0 only with a verified output.
  sc_cli_sweep(run_out_of_memory_is_a_library_error "0 3" "DIFFERS"
               run --workers 1 --events 1 --batch 1 --rows 1 --cols 1
                   --placement single)
  # stress: a case that could not be set up is an error, not a FAIL of
  # the schedule (in-run failures are the settle check's verdict).
  sc_cli_sweep(stress_out_of_memory_in_setup_is_a_library_error "0 1 3"
               "^FAIL .*: setup:"
               stress --seeds 1 --workers 1 --placements single
                      --workloads grid)
  # Under an address-space limit the shipped build (jemalloc) must end in
  # a clear error (exit 3) or succeed, never die of a signal inside the
  # allocator (tools/subcirc.c: malloc_conf). Each limit from 30 to 120 MB
  # in 5 MB steps; the sanitizers need far more address space, so only
  # this build runs it.
  add_test(NAME cli.run_under_an_address_space_limit_ends_in_a_clear_error
           COMMAND sh -c [=[
             for v in $(seq 30000 5000 120000); do
               out=$( (ulimit -v $v; exec "$0" run --workers 2 --events 200000 --quiet) 2>&1 )
               rc=$?
               case $rc in
               0) ;;
               3) echo "$out" | grep -qE "SC_ENOMEM|panicked|not started|no thread" ||
                    { echo "limit $v KB: exit 3 without a reason: $out"; exit 1; } ;;
               *) echo "limit $v KB: exit $rc: $out"; exit 1 ;;
               esac
             done]=] $<TARGET_FILE:subcirc_cli>)
  # Alone: it measures how memory runs out, so no other test should take
  # the machine's memory meanwhile.
  set_tests_properties(cli.run_under_an_address_space_limit_ends_in_a_clear_error
                       PROPERTIES LABELS "units;threaded" TIMEOUT 300
                       RUN_SERIAL TRUE)
  # Under a limit the CLI runs again with jemalloc's thread caches off
  # (the rarer crash inside jemalloc under load needs them: subcirc.c), and
  # only then: the environment of the running process says which; a
  # MALLOC_CONF of the user's is kept.
  add_test(NAME cli.under_a_memory_limit_jemalloc_runs_without_thread_caches
           COMMAND sh -c [=[
             conf() { # ENV-PREFIX ULIMIT: the running CLI's MALLOC_CONF
               sh -c 'ulimit -v "$2"; exec env $1 "$0" run --seconds 3 --quiet' "$0" "$1" "$2" >/dev/null 2>&1 &
               pid=$!
               sleep 1
               v=$(grep -a -z '^MALLOC_CONF=' /proc/$pid/environ | tr -d '\000')
               echo "${v:-none}"
               kill $pid; wait $pid 2>/dev/null
             }
             got=$(conf "" 400000); [ "$got" = "MALLOC_CONF=tcache:false" ] ||
               { echo "under ulimit -v: $got"; exit 1; }
             got=$(conf "" unlimited); [ "$got" = none ] ||
               { echo "without a limit: $got"; exit 1; }
             got=$(conf "MALLOC_CONF=narenas:1" 400000); [ "$got" = "MALLOC_CONF=narenas:1" ] ||
               { echo "the user's MALLOC_CONF: $got"; exit 1; }
             echo ok]=] $<TARGET_FILE:subcirc_cli>)
  set_tests_properties(cli.under_a_memory_limit_jemalloc_runs_without_thread_caches
                       PROPERTIES LABELS "units;threaded" TIMEOUT 60)
  # From the loader's minimum upwards in 2 MB steps, every subcommand
  # (small) exits 0 or 3 with a message, never a signal: below ~26 MB the
  # re-execution itself must not allocate (tools/subcirc.c).
  add_test(NAME cli.every_command_under_small_memory_limits_ends_in_0_or_3
           COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/memlimit_sweep.sh
                   $<TARGET_FILE:subcirc_cli>)
  set_tests_properties(cli.every_command_under_small_memory_limits_ends_in_0_or_3
                       PROPERTIES LABELS "units;threaded" TIMEOUT 120
                       RUN_SERIAL TRUE)
endif()
# The runs on real threads are threaded scenarios: the TSan pass runs them.
set_tests_properties(cli.run_smoke cli.stress_pool_panics_smoke
                     PROPERTIES LABELS "units;threaded;tsan" TIMEOUT 120)

# The campaign (`subcirc stress` with --faults): a small one writes --json,
# whose keys and zero counts are checked; a planted difference (the
# reference misses the last submission) fails, is shrunk, and the shrunk
# replay fails again; the bounded campaign of tools/test runs 57,344 (under
# a sanitizer 12,544)
# seeded schedules with every fault kind (the seeded scheduler, a real
# pool, and stalls behind the watchdog) and checks its JSON; then the same
# faults that kill a unit with --restart 3/0 (every output must settle,
# none skipped) and a grid that dies again past --restart 1/0.
add_test(NAME cli.stress_campaign_writes_its_json
         COMMAND sh -c [=[f=$(mktemp) && timeout 120 "$0" stress --seeds 1..2 --workers 1,2 --modes sim,pool --faults none,panic,segv,stall,slow,burst --json "$f" --quiet || exit 1
           cat "$f"
           for k in '"runs": [1-9]' '"failures": 0,' '"divergences": 0,' '"frames_lost": 0,' '"hangs": 0,' '"faults_injected": {"panic": [1-9][0-9]*, "segv": [1-9][0-9]*, "stall": [1-9][0-9]*, "slow": [1-9][0-9]*, "burst": [1-9][0-9]*, "alloc": 0}' '"stalls_reported": [1-9]' '"first_failure": null'; do
             grep -qE "$k" "$f" || { echo "missing: $k"; rm -f "$f"; exit 1; }
           done; rm -f "$f"]=] $<TARGET_FILE:subcirc_cli>)
add_test(NAME cli.stress_shrinks_a_failing_case_to_a_replay_that_fails
         COMMAND sh -c [=[f=$(mktemp); out=$(timeout 120 "$0" stress --seeds 3..5 --workers 2,3 --placements per-node,chains --workloads random --faults panic,slow --plant-difference --keep-going --shrink --json "$f" 2>&1); rc=$?; echo "$out"; cat "$f"
           test $rc -eq 1 || { echo "exit $rc, want 1"; exit 1; }
           grep -qE '"divergences": [1-9]' "$f" && grep -qE '"first_failure": \{"why"' "$f" || { echo "json lacks the failure"; exit 1; }
           rm -f "$f"
           line=$(echo "$out" | sed -n 's/^shrunk after [0-9]* tries: //p'); test -n "$line" || { echo "no shrunk replay"; exit 1; }
           echo "$line" | grep -q -- '--events 1 ' || { echo "not shrunk to one event: $line"; exit 1; }
           set -- $line; "$@" >/dev/null; rc=$?; test $rc -eq 1 || { echo "the shrunk replay exits $rc, want 1"; exit 1; }]=]
                 $<TARGET_FILE:subcirc_cli>)
# alloc joins the draw where the CLI has its hook (not under TSan).
if(SC_SANITIZE STREQUAL "thread")
  set(sc_campaign_alloc "")
else()
  set(sc_campaign_alloc ",alloc")
endif()
# Under a sanitizer (5 to 10 times slower) the seeded part is a fifth.
if(SC_SANITIZE STREQUAL "")
  set(sc_campaign_seeds 1000)
else()
  set(sc_campaign_seeds 200)
endif()
add_test(NAME cli.campaign_bounded
         COMMAND sh -c [=[d=$(mktemp -d) && trap 'rm -rf "$d"' EXIT
           run() { name=$1; shift; timeout 300 "$exe" stress "$@" --quiet --json "$d/$name.json" || { echo "$name: exit $?"; exit 1; }; }
           exe=$0
           run sim --seeds 1..$1 --modes sim --faults none,panic,segv,slow,burst$2
           run pool --seeds 1..20 --modes pool --faults none,panic,segv,slow,burst$2
           run stall --seeds 1..2 --modes sim,pool --faults stall
           run restart_sim --seeds 1..$(($1 / 10)) --modes sim --faults panic,segv$2 --restart 3/0
           run restart_pool --seeds 1..10 --modes pool --faults panic,segv$2 --restart 3/0
           run restart_bound --seeds 1..10 --workloads grid --panic-rate 0.05 --modes sim,pool --restart 1/0
           run ticks --seeds 1..50 --modes sim,pool --faults none,slow,burst --ticks
           python3 - "$d" "$2" <<'PY'
import json, sys
d = sys.argv[1]
# Restarts: a unit a fault kills comes back, and every output settles to
# the single circuit's (none skipped as downstream of a dead unit); a grid
# whose callbacks fail on their rows dies again past the bound of 1 and
# stays dead, which is then the only exception.
rs = {n: json.load(open(f"{d}/{n}.json"))["results"] for n in ("restart_sim", "restart_pool", "restart_bound")}
for n, x in rs.items():
    for k in ("failures", "divergences", "frames_lost", "hangs", "errors"):
        assert x[k] == 0, (n, k, x[k])
    assert x["restarts"] > 0, (n, x["restarts"])
for n in ("restart_sim", "restart_pool"):
    assert rs[n]["outputs_dead"] == 0 and rs[n]["units_given_up"] == 0, rs[n]
    assert all(rs[n]["faults_injected"][k] > 0 for k in ("panic", "segv") + (("alloc",) if sys.argv[2] else ())), rs[n]
assert rs["restart_bound"]["units_given_up"] > 0, rs["restart_bound"]
print("restart runs", sum(x["runs"] for x in rs.values()), "restarts", sum(x["restarts"] for x in rs.values()), "given up", rs["restart_bound"]["units_given_up"])
r = {n: json.load(open(f"{d}/{n}.json"))["results"] for n in ("sim", "pool", "stall")}
runs = sum(x["runs"] for x in r.values())
inj = {k: sum(x["faults_injected"][k] for x in r.values()) for k in r["sim"]["faults_injected"]}
print("runs", runs, "faults injected", inj)
assert runs >= 10000, runs
for n, x in r.items():
    for k in ("failures", "divergences", "frames_lost", "hangs", "errors"):
        assert x[k] == 0, (n, k, x[k])
assert all(v > 0 for k, v in inj.items() if k != "alloc" or sys.argv[2]), inj
assert r["stall"]["stalls_reported"] >= r["stall"]["faults_injected"]["stall"] > 0
# Tick mode: every output's delta at every tick, slow edges and bursts.
t = json.load(open(f"{d}/ticks.json"))["results"]
for k in ("failures", "divergences", "frames_lost", "hangs", "errors"):
    assert t[k] == 0, ("ticks", k, t[k])
assert t["runs"] > 0 and t["ticks_compared"] > t["runs"], t
assert t["faults_injected"]["slow"] > 0 and t["faults_injected"]["burst"] > 0, t
print("tick runs", t["runs"], "ticks compared", t["ticks_compared"])
PY
]=] $<TARGET_FILE:subcirc_cli> ${sc_campaign_seeds} ${sc_campaign_alloc})
# --ticks: seeds 1..20 in tick mode on the seeded scheduler and the pool
# pass, and the JSON counts the ticks compared; with the reference missing
# the last submission, the failure names the output and its tick.
add_test(NAME cli.stress_ticks_compares_every_tick_and_names_a_planted_one
         COMMAND sh -c [=[d=$(mktemp -d) && trap 'rm -rf "$d"' EXIT
           timeout 120 "$0" stress --ticks --seeds 1..20 --modes sim,pool --quiet --json "$d/t.json" || { echo "exit $?"; cat "$d/t.json"; exit 1; }
           cat "$d/t.json"
           python3 - "$d/t.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["results"]
for k in ("failures", "divergences", "frames_lost", "hangs", "errors"):
    assert r[k] == 0, (k, r[k])
assert r["runs"] > 0 and r["ticks_compared"] > r["runs"], r
PY
           test $? -eq 0 || exit 1
           out=$(timeout 60 "$0" stress --ticks --seeds 1..5 --workloads random --plant-difference --quiet); rc=$?
           echo "$out"
           test $rc -eq 1 || { echo "planted: exit $rc, want 1"; exit 1; }
           echo "$out" | grep -qE "first failure: output '[^']+' \(node [0-9]+\) at tick [0-9]+ its delta differs" || { echo "no tick named"; exit 1; }
           echo "$out" | grep -qE '^replay: .* --ticks' || { echo "no replay with --ticks"; exit 1; }]=]
                 $<TARGET_FILE:subcirc_cli>)
set_tests_properties(cli.stress_ticks_compares_every_tick_and_names_a_planted_one
                     PROPERTIES LABELS "units;threaded" TIMEOUT 200)
# --panic-at UNIT:N panics unit UNIT at its Nth step in every case that
# has that unit, and the summary counts the panics.
sc_cli_test(stress_panic_at_a_unit_and_step_is_injected 0
            "faults injected: panic [1-9]"
            stress --seeds 1..3 --workers 1,2 --placements per-node,chains
                   --panic-at 1:1 --modes sim,pool)
if(SC_SANITIZE STREQUAL "thread")
  # Built without the wrap (tools/cli_alloc.c): refused by name.
  sc_cli_test(stress_alloc_fault_is_refused_with_the_reason 2
              "alloc is not injected in-process"
              stress --seeds 1 --faults panic,alloc)
else()
  # The Nth allocation of each run fails in-process: every run ends in
  # success, SC_ENOMEM or a unit panic, with no divergence, frame lost or
  # hang, and some allocation actually failed.
  add_test(NAME cli.stress_alloc_fault_is_injected_and_settles
           COMMAND sh -c [=[f=$(mktemp) && trap 'rm -f "$f"' EXIT
             timeout 120 "$0" stress --seeds 1..4 --workers 1,2 --modes sim,pool --faults alloc --keep-going --json "$f" --quiet || { echo "exit $?"; cat "$f"; exit 1; }
             cat "$f"
             python3 - "$f" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["results"]
assert r["runs"] > 0, r
assert r["faults_injected"]["alloc"] > 0, r
for k in ("failures", "divergences", "frames_lost", "hangs", "errors"):
    assert r[k] == 0, (k, r[k])
PY
]=] $<TARGET_FILE:subcirc_cli>)
  set_tests_properties(cli.stress_alloc_fault_is_injected_and_settles
                       PROPERTIES LABELS "units;threaded" TIMEOUT 120)
endif()
# The pool part on its own, smaller, for the TSan pass (336 runs, every
# fault kind).
add_test(NAME cli.campaign_pool_tsan
         COMMAND sh -c [=[f=$(mktemp) && timeout 500 "$0" stress --seeds 1..8 --workers 2,3,4 --modes pool --faults none,panic,segv,stall,slow,burst --json "$f" --quiet; rc=$?; cat "$f"; grep -qE '"frames_lost": 0,' "$f" && grep -qE '"hangs": 0,' "$f"; ok=$?; rm -f "$f"; test $rc -eq 0 -a $ok -eq 0]=]
                 $<TARGET_FILE:subcirc_cli>)
set_tests_properties(cli.stress_campaign_writes_its_json
                     cli.stress_shrinks_a_failing_case_to_a_replay_that_fails
                     cli.campaign_bounded
                     PROPERTIES LABELS "units;threaded" TIMEOUT 400)
set_tests_properties(cli.campaign_pool_tsan
                     PROPERTIES LABELS "units;threaded;tsan" TIMEOUT 600)
# The Nexmark queries as a workload of the campaign: the
# seeded scheduler and the pool with every fault kind, restarts and tick
# mode, each case against the single circuit; about 25 s in the normal
# build, a fifth of the seeded part under a sanitizer.
if(SC_SANITIZE STREQUAL "")
  set(sc_nexmark_seeds 500)
else()
  set(sc_nexmark_seeds 100)
endif()
add_test(NAME cli.campaign_nexmark
         COMMAND sh -c [=[d=$(mktemp -d) && trap 'rm -rf "$d"' EXIT
           run() { name=$1; shift; timeout 300 "$exe" stress --workloads nexmark "$@" --quiet --json "$d/$name.json" || { echo "$name: exit $?"; exit 1; }; }
           exe=$0
           run sim --seeds 1..$1 --modes sim --faults none,panic,segv,slow,burst$2
           run pool --seeds 1..20 --modes pool --faults none,panic,segv,slow,burst$2
           run stall --seeds 1..1 --modes sim,pool --faults stall
           run restart --seeds 1..20 --modes sim,pool --faults panic,segv$2 --restart 3/0
           run ticks --seeds 1..20 --modes sim,pool --faults none,slow,burst --ticks
           python3 - "$d" "$2" <<'PY'
import json, sys
d = sys.argv[1]
r = {n: json.load(open(f"{d}/{n}.json"))["results"] for n in ("sim", "pool", "stall", "restart", "ticks")}
for n, x in r.items():
    for k in ("failures", "divergences", "frames_lost", "hangs", "errors"):
        assert x[k] == 0, (n, k, x[k])
    # Tick mode skips the placements whose units would cycle at no delay.
    assert x["runs"] > 0 and (n == "ticks" or x["skipped"] == 0), (n, x["runs"], x["skipped"])
inj = {k: sum(x["faults_injected"][k] for x in r.values()) for k in r["sim"]["faults_injected"]}
assert all(v > 0 for k, v in inj.items() if k != "alloc" or sys.argv[2]), inj
assert r["stall"]["stalls_reported"] >= r["stall"]["faults_injected"]["stall"] > 0, r["stall"]
assert r["restart"]["restarts"] > 0 and r["restart"]["outputs_dead"] == 0, r["restart"]
assert r["ticks"]["ticks_compared"] > r["ticks"]["runs"], r["ticks"]
print("nexmark runs", sum(x["runs"] for x in r.values()), "faults injected", inj,
      "restarts", r["restart"]["restarts"], "ticks compared", r["ticks"]["ticks_compared"])
PY
]=] $<TARGET_FILE:subcirc_cli> ${sc_nexmark_seeds} ${sc_campaign_alloc})
set_tests_properties(cli.campaign_nexmark
                     PROPERTIES LABELS "units;threaded" TIMEOUT 400)
# Its pool part, small, for the TSan pass.
add_test(NAME cli.campaign_nexmark_pool_tsan
         COMMAND sh -c [=[f=$(mktemp) && timeout 500 "$0" stress --workloads nexmark --seeds 1..3 --workers 2,4 --modes pool --faults none,panic,segv,slow,burst --json "$f" --quiet; rc=$?; cat "$f"; grep -qE '"frames_lost": 0,' "$f" && grep -qE '"hangs": 0,' "$f"; ok=$?; rm -f "$f"; test $rc -eq 0 -a $ok -eq 0]=]
                 $<TARGET_FILE:subcirc_cli>)
set_tests_properties(cli.campaign_nexmark_pool_tsan
                     PROPERTIES LABELS "units;threaded;tsan" TIMEOUT 600)
# Tick mode's pool hosts (a barrier around each close) and workers, for
# the TSan pass: small.
add_test(NAME cli.stress_ticks_pool_tsan
         COMMAND sh -c [=[timeout 300 "$0" stress --ticks --seeds 1..6 --workers 2,4 --modes pool --faults none,burst --quiet]=]
                 $<TARGET_FILE:subcirc_cli>)
set_tests_properties(cli.stress_ticks_pool_tsan
                     PROPERTIES LABELS "units;threaded;tsan" TIMEOUT 300)

# run --workload nexmark (tools/cli_nexmark.c): every query runs live
# on 2 workers and --check finds its output equal to the single circuit's.
foreach(q q0 q1 q2 q3 q4 q5 q6 q7 q8 q9 q10 q11 q12 q13 q14 q15 q16 q17
           q18 q19 q20 q21 q22 q23)
  sc_cli_test(nexmark_${q}_equals_the_single_circuit 0
              "output equals the single circuit"
              run --workload nexmark --query ${q} --events 30000
                  --workers 2 --check --quiet)
  set_tests_properties(cli.nexmark_${q}_equals_the_single_circuit
                       PROPERTIES LABELS "units;threaded;tsan")
endforeach()
# --rate paces the chunks (one of 1000 events is due each second here) and
# --seconds ends the run at any rate: the second chunk, due at the end,
# is not made.
sc_cli_test(nexmark_rate_stops_at_its_seconds 0 "events 1000 in 1\\."
            run --workload nexmark --query q0 --rate 1000 --seconds 1
                --workers 1)
# --check fails (exit 1, naming the first differing row) when the single
# circuit misses the last chunk.
sc_cli_test(nexmark_check_fails_on_a_planted_difference 1
            "DIFFERS from the single circuit"
            run --workload nexmark --query q4 --events 20000 --workers 2
                --check --plant-difference --quiet)
# --string-pool 0 (the default): every random text fresh, the
# standard's; --string-pool 32 draws them from pools: both checked.
sc_cli_test(nexmark_fresh_strings_equal_the_single_circuit 0
            "output equals the single circuit"
            run --workload nexmark --query q3 --events 20000 --workers 2
                --string-pool 0 --check --quiet)
sc_cli_test(nexmark_pooled_strings_equal_the_single_circuit 0
            "output equals the single circuit"
            run --workload nexmark --query q9 --events 20000 --workers 2
                --string-pool 32 --check --quiet)
# --disorder: events out of date_time order, the matching lateness
# declared: placed on 2 workers with cleanup, still equal to the
# single circuit; a lateness below the disorder refuses late submissions
# whole, says how many rows were late and how many on time went with them,
# and exits 4 (input refused); --admit-late needs a lateness. q11's
# sessions merge as late bids land between them (its state keeps every
# bid: no cleanup, session.h).
foreach(q q4 q5 q6 q7 q8 q9 q10 q11 q12 q15 q16 q17)
  sc_cli_test(nexmark_${q}_with_disorder_equals_the_single_circuit 0
              "output equals the single circuit"
              run --workload nexmark --query ${q} --events 40000
                  --disorder 500 --workers 2 --check --quiet)
  set_tests_properties(cli.nexmark_${q}_with_disorder_equals_the_single_circuit
                       PROPERTIES LABELS "units;threaded;tsan")
endforeach()
sc_cli_test(nexmark_lateness_below_the_disorder_refuses_late_rows 4
            "lateness 100 ms on date_time (disorder 2000 ms), cleanup on: late rows admitted 0, refused [1-9][0-9]* (in [1-9][0-9]* submissions, refused whole: [1-9][0-9]* rows, [0-9][0-9]* on time dropped with the late)"
            run --workload nexmark --query q7 --events 30000 --disorder 2000
                --lateness 100 --workers 2 --quiet)
# Refused rows are no input: --dump writes only the rows the run took, so
# its files replayed without a lateness give the very same output; the
# JSON counts the refused submissions' rows and the on-time ones among
# them (late_refused + dropped_on_time = refused_rows).
add_test(NAME cli.nexmark_refused_rows_are_counted_and_not_dumped_as_input
         COMMAND sh -c [=[
           d=$(mktemp -d) || exit 1; trap 'rm -rf "$d"' EXIT
           "$0" run --workload nexmark --query q7 --events 30000 --disorder 2000 --lateness 100 --workers 2 --quiet --check --dump "$d/a" --json "$d/a.json" >/dev/null
           rc=$?; [ $rc -eq 4 ] || { echo "refusing run: exit $rc, want 4"; exit 1; }
           python3 - "$d/a.json" <<'PY' || exit 1
import json, sys
l = json.load(open(sys.argv[1]))["results"]["lateness"]
assert l["refused_submissions"] > 0, l
assert l["late_refused"] + l["dropped_on_time"] == l["refused_rows"], l
PY
           bids=$(($(wc -l <"$d/a/bid.csv") - 1))
           "$0" run --workload nexmark --query q7 --from "$d/a" --lateness none --workers 2 --quiet --check --dump "$d/b" >/dev/null ||
             { echo "the replay of the dump: exit $?"; exit 1; }
           cmp "$d/a/q7.csv" "$d/b/q7.csv" || { echo "the dump's replay gives another output"; exit 1; }
           echo "ok: $bids bids taken"]=] $<TARGET_FILE:subcirc_cli>)
set_tests_properties(cli.nexmark_refused_rows_are_counted_and_not_dumped_as_input
                     PROPERTIES LABELS "units" TIMEOUT 120)
sc_cli_test(nexmark_admit_late_needs_a_lateness 2
            "--admit-late without a lateness"
            run --workload nexmark --query q7 --events 10 --lateness none
                --admit-late)
# By default the run declares the standard suite's 4 s lateness.
sc_cli_test(nexmark_declares_the_standard_lateness_by_default 0
            "lateness 4000 ms on date_time"
            run --workload nexmark --query q0 --events 1000 --workers 1)
sc_cli_test(nexmark_unknown_query_is_refused 2 "--query: .*no query 'q24' (known: q0"
            run --workload nexmark --query q24 --events 1)
sc_cli_test(nexmark_edge_capacity_must_be_a_power_of_two 2
            "--edge-capacity: 3 is not a power of two"
            run --workload nexmark --edge-capacity 3 --events 1)
sc_cli_test(nexmark_unknown_argument_is_refused 2
            "unknown argument '--rows'"
            run --workload nexmark --rows 3 --events 1)
sc_cli_test(nexmark_dump_that_cannot_be_created_is_refused 2
            "--dump: cannot create '/nonexistent-dir/d'"
            run --workload nexmark --events 1 --dump /nonexistent-dir/d)
sc_cli_test(nexmark_from_a_missing_directory_is_refused 2
            "cannot read '/nonexistent-dir/bid.csv'"
            run --workload nexmark --query q0 --from /nonexistent-dir)
# q13's side input: a file that cannot be read, or is not key,value
# CSV, is refused before the run by file, line and column (exit 2), and
# so is a side input for a query that reads none.
sc_cli_test(nexmark_side_input_that_cannot_be_read_is_refused 2
            "--side-input: .*cannot read '/nonexistent-dir/side.csv'"
            run --workload nexmark --query q13 --events 1
                --side-input /nonexistent-dir/side.csv)
# q10's file sink (bench/workloads/partsink.h): for q10 alone, a folder
# that can be made, and the JSON counts what it committed (two replicas
# of the output writing at once, for the TSan pass).
sc_cli_test(nexmark_sink_for_another_query_is_refused 2
            "--sink writes q10.s partitioned files. q4 has none"
            run --workload nexmark --query q4 --events 1 --sink /tmp/x)
sc_cli_test(nexmark_sink_that_cannot_be_made_is_refused 2
            "--sink: partsink: cannot make the folder ./dev/null/x.: Not a directory"
            run --workload nexmark --query q10 --events 1 --sink /dev/null/x)
add_test(NAME cli.nexmark_q10_sink_commits_every_row_and_says_so
         COMMAND sh -c [=[d=$(mktemp -d) && trap 'rm -rf "$d"' EXIT
           "$0" run --workload nexmark --query q10 --events 30000 --workers 2 --placement sharded:2 --quiet --sink "$d/s" --json "$d/r.json" >"$d/out" || exit 1
           cat "$d/out"; grep -q "sink $d/s: 27600 rows in 1 files committed" "$d/out" || exit 1
           test "$(find "$d/s" -name '*.tmp' | wc -l)" -eq 0 || { echo "a temporary file is left"; exit 1; }
           test "$(cat "$d"/s/dt=*/hm=*/part-*.csv | grep -vc '^auction,')" -eq 27600 || { echo "not every row is in the files"; exit 1; }
           python3 -c 'import json, sys; j = json.load(open(sys.argv[1])); s = j["results"]["sink"]; print(s); assert s == {"rows": 27600, "files": 1, "reopened": 0} and j["config"]["sink"].endswith("/s"), s' "$d/r.json"]=]
         $<TARGET_FILE:subcirc_cli>)
set_tests_properties(cli.nexmark_q10_sink_commits_every_row_and_says_so
                     PROPERTIES LABELS "units;threaded;tsan" TIMEOUT 120)
sc_cli_test(nexmark_side_input_for_another_query_is_refused 2
            "--side-input is q13.s table. q4 reads none"
            run --workload nexmark --query q4 --events 1
                --side-input /dev/null)
add_test(NAME cli.nexmark_side_input_not_csv_is_refused_by_line_and_column
         COMMAND sh -c [=[d=$(mktemp -d) && trap 'rm -rf "$d"' EXIT
           printf 'key,value\n1,one\n2x,two\n' > "$d/side.csv"
           timeout 60 "$0" run --workload nexmark --query q13 --events 1000 --side-input "$d/side.csv" --quiet 2> "$d/err"
           rc=$?; cat "$d/err"; [ $rc -eq 2 ] || { echo "exit $rc, want 2"; exit 1; }
           grep -q -- "--side-input: .*side.csv:3:1: " "$d/err"]=] $<TARGET_FILE:subcirc_cli>)
set_tests_properties(cli.nexmark_side_input_not_csv_is_refused_by_line_and_column
                     PROPERTIES LABELS "units" TIMEOUT 120)
# q12's processing-time clock: wall or step:MS, for q12 alone, and not
# with input made ahead of the host (threads, preload).
sc_cli_test(nexmark_proc_clock_that_is_neither_wall_nor_a_step_is_refused 2
            "--proc-clock: .*step:-5"
            run --workload nexmark --query q12 --events 1 --proc-clock step:-5)
sc_cli_test(nexmark_proc_clock_for_another_query_is_refused 2
            "--proc-clock is q12.s processing time. q7 reads none"
            run --workload nexmark --query q7 --events 1 --proc-clock wall)
# --check replays the run's input into the single circuit: q12's chunks
# keep the times the run stamped, however far the clock moved since (a
# stepped clock reads on from where the run left it).
sc_cli_test(nexmark_q12_check_replays_the_times_the_run_stamped 0
            "output equals the single circuit"
            run --workload nexmark --query q12 --events 30000
                --proc-clock step:4000 --workers 2 --check --quiet)
set_tests_properties(cli.nexmark_q12_check_replays_the_times_the_run_stamped
                     PROPERTIES LABELS "units;threaded;tsan")
sc_cli_test(nexmark_q12_with_input_threads_is_refused 2
            "q12 stamps each chunk with the time the host takes it: not with --input-threads"
            run --workload nexmark --query q12 --events 1 --input-threads 2)
sc_cli_test(unknown_workload_is_refused 2
            "--workload: unknown workload 'tpch'"
            run --workload tpch --events 1)
# A dump replayed with --from gives the same settled output (rows sorted:
# symbol ids, and so the rows' order, differ between the two runs), for a
# join with strings (q3), an average (q4), doubles (q1), texts the query
# makes (q21, q22) or reads (q14), two joins (q23), the per-day counts
# and averages of a multi-aggregate (q15, q16 by channel, q17), session
# windows (q11), the processing times stamped on the bids, replayed as
# they were taken (q12), and the side input's texts (q13).
foreach(q q1 q3 q4 q9 q10 q11 q12 q13 q14 q15 q16 q17 q21 q22 q23)
  add_test(NAME cli.nexmark_${q}_dump_replayed_gives_the_same_output
           COMMAND sh -c [=[d=$(mktemp -d) && trap 'rm -rf "$d"' EXIT
             timeout 120 "$0" run --workload nexmark --query $1 --events 40000 --workers 2 --dump "$d/a" --quiet || exit 1
             for f in person auction bid $1; do test -s "$d/a/$f.csv" || { echo "no $f.csv"; exit 1; }; done
             head -1 "$d/a/$1.csv" | grep -q ',weight$' || { echo "no weight column"; exit 1; }
             timeout 120 "$0" run --workload nexmark --query $1 --from "$d/a" --workers 2 --check --dump "$d/b" --quiet || exit 1
             sort "$d/a/$1.csv" > "$d/x"; sort "$d/b/$1.csv" > "$d/y"
             test $(wc -l < "$d/x") -gt 1 || { echo "empty output"; exit 1; }
             cmp "$d/x" "$d/y"]=] $<TARGET_FILE:subcirc_cli> ${q})
  set_tests_properties(cli.nexmark_${q}_dump_replayed_gives_the_same_output
                       PROPERTIES LABELS "units;threaded" TIMEOUT 240)
endforeach()
# q22 over urls of every shape, read with --from: a part the url lacks
# is the empty text, as is an empty part; placed on 2 workers, equal to
# the single circuit.
add_test(NAME cli.nexmark_q22_reads_parts_a_url_lacks_as_empty
         COMMAND sh -c [=[d=$(mktemp -d) && trap 'rm -rf "$d"' EXIT && mkdir "$d/in"
           printf '%s\n' 'auction,bidder,price,channel,url,date_time,extra' '1,2,3,"c","https://h/a/b/c/d",1000,"x"' '4,5,6,"c","https://h/a",1001,"x"' '7,8,9,"c","no slashes",1002,"x"' '10,11,12,"c","https://h/a/",1003,"x"' > "$d/in/bid.csv"
           printf '%s\n' 'auction,bidder,price,channel,dir1,dir2,dir3,weight' '1,2,3,"c","a","b","c",1' '4,5,6,"c","a","","",1' '7,8,9,"c","","","",1' '10,11,12,"c","a","","",1' > "$d/want"
           timeout 60 "$0" run --workload nexmark --query q22 --from "$d/in" --workers 2 --check --dump "$d/out" --quiet || exit 1
           sort "$d/out/q22.csv" > "$d/got"; sort "$d/want" > "$d/w"
           cmp "$d/got" "$d/w" || { cat "$d/got"; exit 1; }]=] $<TARGET_FILE:subcirc_cli>)
set_tests_properties(cli.nexmark_q22_reads_parts_a_url_lacks_as_empty
                     PROPERTIES LABELS "units;threaded" TIMEOUT 120)
# q11 over bids read with --from: bidder 1's bids 9,999 ms apart chain into
# one session, and the next, exactly 10,000 ms on, starts another (two
# bids at its time, each counted); bidder 2's two bids 10,000 ms apart are
# two sessions. The generator's bidders never make a session end: each
# bids only while among the last 1000 people, 5 s at its rate.
add_test(NAME cli.nexmark_q11_cuts_sessions_at_a_gap_of_10_s
         COMMAND sh -c [=[d=$(mktemp -d) && trap 'rm -rf "$d"' EXIT && mkdir "$d/in"
           printf '%s\n' 'auction,bidder,price,channel,url,date_time,extra' '1,1,5,"c","u",0,"x"' '1,1,5,"c","u",9999,"x"' '1,1,5,"c","u",19998,"x"' '1,1,5,"c","u",29998,"x"' '2,1,5,"c","u",29998,"x"' '1,1,5,"c","u",39997,"x"' '1,2,5,"c","u",100000,"x"' '1,2,5,"c","u",110000,"x"' > "$d/in/bid.csv"
           printf '%s\n' 'bidder,bid_count,starttime,endtime,weight' '1,3,0,29998,1' '1,3,29998,49997,1' '2,1,100000,110000,1' '2,1,110000,120000,1' > "$d/want"
           timeout 60 "$0" run --workload nexmark --query q11 --from "$d/in" --workers 2 --check --dump "$d/out" --quiet || exit 1
           sort "$d/out/q11.csv" > "$d/got"; sort "$d/want" > "$d/w"
           cmp "$d/got" "$d/w" || { cat "$d/got"; exit 1; }]=] $<TARGET_FILE:subcirc_cli>)
set_tests_properties(cli.nexmark_q11_cuts_sessions_at_a_gap_of_10_s
                     PROPERTIES LABELS "units;threaded" TIMEOUT 120)
# Bad CSV is refused naming file, line and column (exit 2): each error
# path of bench/workloads/csv.h through --from.
function(sc_cli_bad_csv name content pattern)
  add_test(NAME cli.nexmark_from_${name}_is_refused
           COMMAND sh -c [=[d=$(mktemp -d) && trap 'rm -rf "$d"' EXIT
             printf "$1" > "$d/bid.csv"
             out=$(timeout 60 "$0" run --workload nexmark --query q0 --from "$d" 2>&1); rc=$?; echo "$out"
             test $rc -eq 2 && echo "$out" | grep -q -e "$2"]=]
                   $<TARGET_FILE:subcirc_cli> ${content} ${pattern})
  set_tests_properties(cli.nexmark_from_${name}_is_refused PROPERTIES
                       LABELS "units" TIMEOUT 120)
endfunction()
set(bid_header "auction,bidder,price,channel,url,date_time,extra\\n")
sc_cli_bad_csv(a_wrong_column_count
  "${bid_header}1,2,3,\"a\",\"u\",4,\"e\"\\n1,2,3\\n"
  "bid.csv:3:4: 3 fields, expected 7")
sc_cli_bad_csv(a_non_number
  "${bid_header}1,2,x3,\"a\",\"u\",4,\"e\"\\n"
  "bid.csv:2:3: 'x3' is not an i64")
sc_cli_bad_csv(an_unterminated_quote
  "${bid_header}1,2,3,\"a\",\"u,4,e\\n"
  "bid.csv:2:5: a quote opened here is never closed")
sc_cli_bad_csv(a_bad_header
  "auction,bidder,cost,channel,url,date_time,extra\\n"
  "bid.csv:1:3: header column 'cost', expected 'price'")
add_test(NAME cli.nexmark_from_a_line_over_the_limit_is_refused
         COMMAND sh -c [=[d=$(mktemp -d) && trap 'rm -rf "$d"' EXIT
           { echo "auction,bidder,price,channel,url,date_time,extra"; printf '1,2,3,"a","'; head -c 70000 /dev/zero | tr '\\0' u; echo '",4,"e"'; } > "$d/bid.csv"
           out=$(timeout 60 "$0" run --workload nexmark --query q0 --from "$d" 2>&1); rc=$?; echo "$out"
           test $rc -eq 2 && echo "$out" | grep -q "bid.csv:2:5: line longer than 65536 bytes"]=]
                 $<TARGET_FILE:subcirc_cli>)
set_tests_properties(cli.nexmark_from_a_line_over_the_limit_is_refused
                     PROPERTIES LABELS "units" TIMEOUT 120)
# The histogram's unit tests (tests/tools/test_hist.c), a Criterion suite
# registered as the others are (sc_criterion_suite); they link the CLI's
# own tools/cli_hist.c.
if(NOT TARGET PkgConfig::CRITERION)
  pkg_check_modules(CRITERION REQUIRED IMPORTED_TARGET criterion)
endif()
add_library(sc_cli_hist STATIC ${PROJECT_SOURCE_DIR}/tools/cli_hist.c)
target_include_directories(sc_cli_hist PUBLIC ${PROJECT_SOURCE_DIR})
target_link_libraries(sc_cli_hist PUBLIC m)
sc_criterion_suite(${CMAKE_CURRENT_LIST_DIR}/test_hist.c
                   "sc_cli_hist;sc_testprop")
# The strict JSON reader that place --replot reads reports with
# (tests/tools/test_json_read.c), on the CLI's own tools/cli_json_read.c.
add_library(sc_cli_json_read STATIC ${PROJECT_SOURCE_DIR}/tools/cli_json_read.c)
target_include_directories(sc_cli_json_read PUBLIC ${PROJECT_SOURCE_DIR})
sc_criterion_suite(${CMAKE_CURRENT_LIST_DIR}/test_json_read.c
                   "sc_cli_json_read")
# CSV in and out of a circuit (tests/tools/test_io.c): the stream reader
# of bench/workloads/csv.c and the CLI's tools/cli_io.c with the core it
# calls (option parsing, output files, signals).
add_library(sc_cli_io STATIC
  ${PROJECT_SOURCE_DIR}/tools/cli_io.c ${PROJECT_SOURCE_DIR}/tools/cli_out.c
  ${PROJECT_SOURCE_DIR}/tools/cli_args.c ${PROJECT_SOURCE_DIR}/tools/cli_exit.c
  ${PROJECT_SOURCE_DIR}/tools/cli_signal.c)
target_include_directories(sc_cli_io PUBLIC ${PROJECT_SOURCE_DIR})
target_link_libraries(sc_cli_io PUBLIC sc_bench subcirc)
sc_criterion_suite(${CMAKE_CURRENT_LIST_DIR}/test_io.c
                   "sc_cli_io;sc_testrt;sc_testprop")
# place's and run --units' tests (tests/tools/place.cmake).
include(${CMAKE_CURRENT_LIST_DIR}/place.cmake)
# run --workload SPEC's tests (tests/tools/workload.cmake).
include(${CMAKE_CURRENT_LIST_DIR}/workload.cmake)
# The signal and exit matrix (tests/tools/exit.cmake).
include(${CMAKE_CURRENT_LIST_DIR}/exit.cmake)
# The example workload plugins under the CLI (tests/tools/examples.cmake).
include(${CMAKE_CURRENT_LIST_DIR}/examples.cmake)
# Across ranks: outside mpirun a placement over several ranks is refused
# (exit 2), saying how to run it, or that subcirc was built without MPI.
if(TARGET sc_mpi)
  set(sc_ranks_refusal "run one process per rank, `mpirun -np 2 subcirc")
else()
  set(sc_ranks_refusal "subcirc was built without MPI")
endif()
sc_cli_test(run_over_ranks_outside_mpirun_is_refused 2 "${sc_ranks_refusal}"
            run --placement ranks:2 --events 1000)
sc_cli_test(run_sharded_over_ranks_outside_mpirun_is_refused 2
            "${sc_ranks_refusal}"
            run --placement sharded:2@ranks:2 --events 1000)
sc_cli_test(nexmark_over_ranks_outside_mpirun_is_refused 2
            "${sc_ranks_refusal}"
            run --workload nexmark --placement ranks:2 --events 1000)
sc_cli_test(stress_over_ranks_outside_mpirun_is_refused 2
            "${sc_ranks_refusal}"
            stress --seeds 1 --placements chains@ranks:2)
# --input-threads: threads make the generator's chunks, the host submits
# them in order; the run still equals the single circuit fed by one
# generator (exit 1 otherwise), and the summary says who made the input.
sc_cli_test(nexmark_input_threads_equal_the_single_circuit 0
            "input made by 3 threads (the host submits it)"
            run --workload nexmark --query q4 --workers 2 --events 30000
            --batch 700 --input-threads 3 --check --quiet)
set_tests_properties(cli.nexmark_input_threads_equal_the_single_circuit
                     PROPERTIES LABELS "units;threaded;tsan")
sc_cli_test(nexmark_input_threads_over_seconds_end_on_time 0
            "input made by 2 threads"
            run --workload nexmark --query q0 --workers 1 --seconds 0.5
            --input-threads 2 --quiet)
sc_cli_test(nexmark_input_threads_with_dump_are_refused 2
            "--dump writes them on the host"
            run --workload nexmark --input-threads 2 --dump x --events 10)
# With --from, the threads read the files: a replay read by 3 threads
# (2 MiB and more of bids, so the reader cuts them) settles where the
# single circuit does, and a file cut short is refused by line and column
# as one reader refuses it.
add_test(NAME cli.nexmark_from_read_by_threads_equals_the_single_circuit
         COMMAND sh -c [=[d=$(mktemp -d); trap 'rm -rf "$d"' EXIT
           "$0" run --workload nexmark --query q4 --events 60000 --workers 1 --quiet --dump "$d/a" >/dev/null || exit 1
           test $(wc -c < "$d/a/bid.csv") -gt 2097152 || { echo "bid.csv too small to cut"; exit 1; }
           "$0" run --workload nexmark --query q4 --from "$d/a" --input-threads 3 --workers 2 --check --quiet || exit 1
           head -c 3000000 "$d/a/bid.csv" > "$d/a/cut" && mv "$d/a/cut" "$d/a/bid.csv"
           one=$("$0" run --workload nexmark --query q4 --from "$d/a" --quiet 2>&1); rc1=$?
           many=$("$0" run --workload nexmark --query q4 --from "$d/a" --input-threads 3 --quiet 2>&1); rc3=$?
           echo "$one"; echo "$many"
           test $rc1 -eq 2 && test $rc3 -eq 2 && test "$one" = "$many"]=]
                 $<TARGET_FILE:subcirc_cli>)
set_tests_properties(cli.nexmark_from_read_by_threads_equals_the_single_circuit
                     PROPERTIES LABELS "units" TIMEOUT 180)
# --preload: every chunk made before the run's clock starts, then
# submitted in order; the run settles where the single circuit does, from
# the generator (q9: 2 workers, a top-k) and from files (q4), and the
# report says how many events were made before it and how long that took
# (and validates).
add_test(NAME cli.nexmark_preload_equals_the_single_circuit
         COMMAND sh -c [=[d=$(mktemp -d); trap 'rm -rf "$d"' EXIT
           exe=$0 schema=$1 check=$2
           timeout 60 "$exe" run --workload nexmark --query q9 --events 50000 --batch 700 --workers 2 --preload --check --json "$d/gen.json" >"$d/gen.out" 2>&1 || { cat "$d/gen.out"; exit 1; }
           grep -q "input made before the run by the host: 50000 events in" "$d/gen.out" || { cat "$d/gen.out"; exit 1; }
           grep -q "output equals the single circuit" "$d/gen.out" || { cat "$d/gen.out"; exit 1; }
           timeout 60 "$exe" run --workload nexmark --query q4 --events 30000 --workers 1 --quiet --dump "$d/a" >/dev/null || exit 1
           timeout 60 "$exe" run --workload nexmark --query q4 --from "$d/a" --workers 2 --preload --check --json "$d/from.json" >"$d/from.out" 2>&1 || { cat "$d/from.out"; exit 1; }
           python3 "$check" "$schema" "$d/gen.json" "$d/from.json" || exit 1
           python3 - "$d" <<'PY'
import json, sys
d = sys.argv[1]
g, f = (json.load(open("%s/%s.json" % (d, k))) for k in ("gen", "from"))
for j, n in ((g, 50000), (f, f["results"]["events"])):
    p = j["results"]["input"]["preloaded"]
    assert j["config"]["preload"] is True and j["results"]["ok"] is True, j["results"]
    assert p["events"] == n == j["results"]["events"] and p["seconds"] >= 0, p
assert g["results"]["input"]["cpu_s"] == 0, g["results"]["input"]
assert f["results"]["events"] > 0
print("ok")
PY
]=] $<TARGET_FILE:subcirc_cli> ${PROJECT_SOURCE_DIR}/tools/report.schema.json
    ${CMAKE_CURRENT_LIST_DIR}/report_check.py)
set_tests_properties(cli.nexmark_preload_equals_the_single_circuit
                     PROPERTIES LABELS "units;threaded" TIMEOUT 180)
sc_cli_test(nexmark_preload_over_seconds_is_refused 2
            "--preload makes every event before the run: give --events N"
            run --workload nexmark --preload --seconds 1)
sc_cli_test(nexmark_preload_without_events_is_refused 2
            "--preload makes every event before the run: give --events N"
            run --workload nexmark --preload)
sc_cli_test(nexmark_preload_with_input_threads_is_refused 2
            "--input-threads makes it on threads during the run"
            run --workload nexmark --preload --events 10 --input-threads 2)
sc_cli_test(nexmark_preload_with_dump_is_refused 2
            "--preload and --dump"
            run --workload nexmark --preload --events 10 --dump x)
sc_cli_test(nexmark_input_threads_past_256_are_refused 2
            "--input-threads"
            run --workload nexmark --input-threads 257 --events 10)
# Symbols follow the state, not the events: after a run of fresh texts
# the table holds the generator's bounded sets (20,124 ids: channels,
# their urls, names, cities, states), what the 4-second lateness keeps
# (40,000 events' texts at most, some 48,000) and each unit's last delta
# (held until its next step: a chunk's 920 fresh texts a frame it summed),
# not the texts made. Edges of one frame (--capacity 1) keep those last
# deltas to a frame or two whatever the timing. q0 (stateless) after
# 400,000 events (some 470,000 texts made): the sets and a few chunks;
# q4 (a join and an aggregate) and q9 (a top-k) after 1,200,000 events
# (some 1,400,000): the sets, a window and a few chunks. A hold that
# leaked 2% of the texts (5% on the long runs) would break its bound.
add_test(NAME cli.nexmark_symbols_follow_the_state_not_the_events
         COMMAND sh -c [=[for run in q0:400000:26000 q4:1200000:80000 q9:1200000:80000; do
             q=${run%%:*}; rest=${run#*:}; n=${rest%%:*}; most=${rest#*:}
             out=$("$0" run --workload nexmark --query $q --workers 1 --capacity 1 --events $n --quiet 2>&1)
             rc=$?
             live=$(echo "$out" | awk '/symbols live at the end/ {print $6}')
             echo "$q, $n events: exit $rc, $live ids live (at most $most)"
             test $rc -eq 0 && test -n "$live" && test "$live" -le "$most" || { echo "$out"; exit 1; }
           done]=]
                 $<TARGET_FILE:subcirc_cli>)
set_tests_properties(cli.nexmark_symbols_follow_the_state_not_the_events
                     PROPERTIES LABELS "units" TIMEOUT 300)
# Under mpirun (tests/mpi/cli.cmake), when MPI and mpirun are there.
if(TARGET sc_mpi AND MPIEXEC_EXECUTABLE)
  include(${PROJECT_SOURCE_DIR}/tests/mpi/cli.cmake)
endif()

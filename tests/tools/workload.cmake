# The tests of `subcirc run --workload SPEC` (tools/cli_wrun.c): any
# workload of the workload interface but grid and nexmark, included by
# tests/tools/cli.cmake (sc_cli_test is defined there). Performance is
# never asserted: these check what the run says and writes.

# A built-in Nexmark query through the interface settles where the single
# circuit fed the same submissions does.
sc_cli_test(run_workload_nexmark_q4_check_equals_the_single_circuit 0
            "every output equals the single circuit"
            run --workload nexmark:q4 --workers 2 --events 20000 --check
            --quiet)
# A random circuit, to the workload's end (its steps), checked.
sc_cli_test(run_workload_random_check_equals_the_single_circuit 0
            "every output equals the single circuit"
            run --workload random --workers 2 --check --quiet)
# A tick workload settles where the single circuit stepped per tick does
# (the runtime in tick mode, its ticks counted: the JSON test below).
sc_cli_test(run_workload_random_ticks_check_equals_the_single_circuit 0
            "every output equals the single circuit"
            run --workload random-ticks --workers 2 --check --quiet)
set_tests_properties(cli.run_workload_nexmark_q4_check_equals_the_single_circuit
                     cli.run_workload_random_ticks_check_equals_the_single_circuit
                     PROPERTIES LABELS "units;threaded;tsan")
# A workload that never ends stops once --events rows were submitted.
sc_cli_test(run_workload_events_stops_the_run 0
            "(--events)"
            run --workload random --workload-arg steps=0 --workers 1
            --events 300 --quiet)

# Refused before anything runs, exit 2, naming what was wrong.
sc_cli_test(run_workload_unknown_name_is_refused 2
            "--workload: unknown workload 'no-such-workload'"
            run --workload no-such-workload --events 10)
sc_cli_test(run_workload_missing_plugin_file_is_refused 2
            "--workload ./no-such-plugin.so: .*'./no-such-plugin.so'"
            run --workload ./no-such-plugin.so --events 10)
sc_cli_test(run_workload_unread_argument_is_refused_by_name 2
            "--workload random: .*'no_such_key'"
            run --workload random --workload-arg no_such_key=1 --events 10)
sc_cli_test(run_workload_events_and_seconds_are_refused 2
            "--events and --seconds: give one, not both"
            run --workload nexmark:q4 --events 10 --seconds 1)
sc_cli_test(run_workload_unknown_option_is_refused 2
            "unknown argument '--query'"
            run --workload nexmark:q4 --query q4)

# --help of a built-in and of a plugin path is this command's.
sc_cli_test(run_workload_help_of_a_builtin_is_this_commands 0
            "usage: subcirc run --workload SPEC"
            run --workload nexmark:q4 --help)
sc_cli_test(run_workload_help_of_a_plugin_path_is_this_commands 0
            "usage: subcirc run --workload SPEC"
            run --workload ./x.so --help)

# --json: the report, validated against the schema, with every field of
# the results and the workload's own name.
add_test(NAME cli.run_workload_json_report_holds_every_field
         COMMAND sh -c [=[d=$(mktemp -d) && trap 'rm -rf "$d"' EXIT
           timeout 120 "$0" run --workload nexmark:q4 --workers 2 --events 20000 --check --quiet --json "$d/r.json" || { echo "exit $?"; exit 1; }
           timeout 120 "$0" run --workload random-ticks --workers 1 --quiet --json "$d/t.json" || { echo "exit $?"; exit 1; }
           python3 "$2" "$1" "$d/r.json" "$d/t.json" || exit 1
           python3 - "$d/r.json" "$d/t.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
assert r["command"] == "run" and r["workload"] == "nexmark:q4", (r["command"], r["workload"])
assert r["interrupted"] is False and r["signal"] is None, r["interrupted"]
c = r["config"]
assert c["workload"] == "nexmark:q4" and c["events"] == 20000 and c["check"] is True, c
x = r["results"]
for k in ("events", "submissions", "ticks", "seconds", "cpu_seconds", "events_per_s",
          "events_per_cpu_s", "workers", "placement", "units", "edges", "turns", "efull",
          "refused_submissions", "stopped_by", "check", "why", "interrupted"):
    assert k in x, k
# q4 reads auctions and bids: the 20000 events' people are not submitted
assert 0 < x["events"] <= 20000 and x["submissions"] > 0, x
assert x["stopped_by"] == "the workload's end", x
assert x["events_per_s"] > 0 and x["events_per_cpu_s"] > 0, x
assert x["workers"] == 2 and x["units"] >= 1 and x["check"] == "ok", x
t = json.load(open(sys.argv[2]))["results"]
assert t["ticks"] > 0 and t["submissions"] > t["ticks"] and t["check"] == "skipped" and t["stopped_by"] == "the workload's end", t
print("ok")
PY
]=] $<TARGET_FILE:subcirc_cli> ${PROJECT_SOURCE_DIR}/tools/report.schema.json
    ${CMAKE_CURRENT_LIST_DIR}/report_check.py)
set_tests_properties(cli.run_workload_json_report_holds_every_field
                     PROPERTIES LABELS "units;threaded" TIMEOUT 240)

# SIGINT mid-run: what was submitted settles, the summary says so, exit
# 0, and the report is written, interrupted by SIGINT.
add_test(NAME cli.run_workload_sigint_ends_with_summary_and_report
         COMMAND sh -c [=[d=$(mktemp -d) && trap 'rm -rf "$d"' EXIT
           "$0" run --workload nexmark:q4 --workers 1 --seconds 60 --json "$d/r.json" >"$d/out" 2>&1 &
           p=$!
           i=0; while ! grep -q "ev/s" "$d/out" && [ $i -lt 300 ]; do sleep 0.1; i=$((i+1)); done
           kill -INT $p; wait $p; rc=$?
           cat "$d/out"
           test $rc -eq 0 || { echo "exit $rc, want 0"; exit 1; }
           grep -q "interrupted by SIGINT" "$d/out" || { echo "no interrupted line"; exit 1; }
           python3 - "$d/r.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
assert r["interrupted"] is True and r["signal"] == "SIGINT", (r["interrupted"], r["signal"])
x = r["results"]
assert x["interrupted"] is True and x["stopped_by"] == "interrupted" and x["events"] > 0, x
print("ok")
PY
]=] $<TARGET_FILE:subcirc_cli>)
set_tests_properties(cli.run_workload_sigint_ends_with_summary_and_report
                     PROPERTIES LABELS "units;threaded" TIMEOUT 120)

# A plugin, built as a user builds one (a shared object exporting
# sc_workload_entry, its library calls bound to the executable's copy):
# tests/tools/plugin_counter.c.
add_library(sc_test_plugin_counter MODULE
            ${CMAKE_CURRENT_LIST_DIR}/plugin_counter.c)
target_include_directories(sc_test_plugin_counter PRIVATE
                           ${PROJECT_SOURCE_DIR})
add_dependencies(subcirc_cli sc_test_plugin_counter)
# Its run settles where the single circuit does, and its own reference
# agrees.
sc_cli_test(run_workload_plugin_check_passes_its_reference 0
            "every output equals the single circuit and the workload's reference"
            run --workload $<TARGET_FILE:sc_test_plugin_counter>
            --workers 2 --check --quiet)
# A reference that disagrees fails the check, exit 1, naming the output.
sc_cli_test(run_workload_plugin_check_failure_names_the_output 1
            "check FAILED: output all_keys: the workload's reference"
            run --workload $<TARGET_FILE:sc_test_plugin_counter>
            --workload-arg wrong=true --workers 2 --check --quiet)
# An error from the workload's next stops the run, exit 3, naming the
# submission and the workload's message.
sc_cli_test(run_workload_plugin_error_stops_the_run 3
            "submission 5: .*fail_at=5 reached"
            run --workload $<TARGET_FILE:sc_test_plugin_counter>
            --workload-arg fail_at=5 --workers 2 --quiet)

# CSV in and out (--input, --output, --integral: tools/cli_io.h) on the
# counter plugin and the tick example, one ctest test a case of
# tests/tools/run_io.py, which says what each checks.
find_package(Python3 COMPONENTS Interpreter QUIET)
if(Python3_Interpreter_FOUND)
  foreach(case
      stream_output_adds_up_to_the_input
      integral_output_holds_the_final_rows
      bad_row_names_file_line_column_and_keeps_the_rows_before
      short_line_is_refused_by_line
      unknown_input_name_is_refused_listing_the_inputs
      unknown_output_name_is_refused
      missing_input_file_is_refused
      directory_input_is_refused
      fifo_closing_mid_line_keeps_the_rows_before
      pipe_output_appears_before_the_writer_closes
      sigint_while_reading_a_pipe_settles_what_came
      output_to_a_full_disk_is_a_library_error
      closed_pipe_on_the_output_stops_the_run
      tick_workload_closes_a_tick_per_submission)
    add_test(NAME cli.run_io_${case}
             COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/run_io.py
                     $<TARGET_FILE:subcirc_cli>
                     $<TARGET_FILE:sc_test_plugin_counter>
                     $<TARGET_FILE:example_running> ${case})
    set_tests_properties(cli.run_io_${case} PROPERTIES
                         LABELS "units;threaded" TIMEOUT 120)
  endforeach()
  # The delta sinks write from the workers while the host reads the
  # inputs: these run in the TSan pass too.
  set_tests_properties(cli.run_io_stream_output_adds_up_to_the_input
                       cli.run_io_pipe_output_appears_before_the_writer_closes
                       cli.run_io_closed_pipe_on_the_output_stops_the_run
                       cli.run_io_tick_workload_closes_a_tick_per_submission
                       PROPERTIES LABELS "units;threaded;tsan")
endif()

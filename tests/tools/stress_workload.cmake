# The tests of `subcirc stress --workload SPEC`: one workload of the
# interface (units/workload.h), built in or a plugin, stressed over seeds
# x workers x placements; included by tools/CMakeLists.txt after
# tests/tools/cli.cmake (sc_cli_test is defined there).

# A plugin as a user builds one: public headers only, no library linked
# (its references bind to the copy the executable exports, ENABLE_EXPORTS
# in tools/CMakeLists.txt).
add_library(sc_plugin_tiny MODULE ${PROJECT_SOURCE_DIR}/tests/support/plugin_tiny.c)
target_include_directories(sc_plugin_tiny PRIVATE ${PROJECT_SOURCE_DIR})
set(sc_tiny $<TARGET_FILE:sc_plugin_tiny>)

# Built-ins settle: a Nexmark query, random circuits, and a tick workload
# (checked per tick: the summary counts the ticks compared).
sc_cli_test(stress_workload_nexmark_q4_settles 0
            "subcirc stress: 8 runs, 8 passed"
            stress --workload nexmark:q4 --workload-arg batch=100
            --seeds 1..2 --workers 1,2 --placements single,chains
            --steps 8 --quiet)
sc_cli_test(stress_workload_random_settles 0
            "subcirc stress: 12 runs, 12 passed"
            stress --workload random --seeds 1..3 --workers 1,2
            --placements single,per-node --steps 16 --quiet)
sc_cli_test(stress_workload_random_ticks_settles_per_tick 0
            "tick mode: [1-9][0-9]* ticks compared"
            stress --workload random-ticks --seeds 1..3 --workers 1,2
            --placements single,chains --steps 16 --quiet)
# The grid through the interface: every case passes its reference too
# (2 outputs a case).
sc_cli_test(stress_workload_grid_settles_with_its_reference 0
            "the workload's reference held on 16 outputs"
            stress --workload grid --workload-arg rows=4
            --workload-arg cols=4 --workload-arg batch=8 --seeds 1..2
            --workers 1,2 --placements single,per-node --steps 6
            --modes sim --quiet)

# A plugin settles, under the scheduler and a real pool, and its
# reference holds.
add_test(NAME cli.stress_workload_plugin_settles
         COMMAND sh -c [=[out=$(timeout 60 "$0" stress --workload "$1" --seeds 1..3 --workers 1,3 --placements single,per-node,chains --modes sim,pool --steps 12 --quiet 2>&1); rc=$?; echo "$out"; test $rc -eq 0 && echo "$out" | grep -q "subcirc stress: 36 runs, 36 passed" && echo "$out" | grep -q "reference held on 36 outputs"]=]
                 $<TARGET_FILE:subcirc_cli> ${sc_tiny})
# A plugin whose reference always disagrees is caught: exit 1, the seed,
# and a replay command that fails the same way.
add_test(NAME cli.stress_workload_plugin_wrong_reference_is_caught
         COMMAND sh -c [=[out=$(timeout 60 "$0" stress --workload "$1" --workload-arg wrong=true --seeds 4..5 --workers 2 --placements chains --steps 6 --quiet 2>&1); rc=$?; echo "$out"; test $rc -eq 1 || { echo "exit $rc, want 1"; exit 1; }
           echo "$out" | grep -q "^FAIL seed 4, " || { echo "no seed"; exit 1; }
           echo "$out" | grep -q "wrong=true: the reference disagrees" || { echo "no reason"; exit 1; }
           replay=$(echo "$out" | sed -n 's/^replay: //p' | head -1)
           case "$replay" in *"--workload $1 --workload-arg wrong=true "*"--steps 6"*) ;; *) echo "replay: $replay"; exit 1;; esac
           again=$(eval "timeout 60 $replay --quiet" 2>&1); rc=$?; echo "$again"; test $rc -eq 1 && echo "$again" | grep -q "^FAIL seed 4, "]=]
                 $<TARGET_FILE:subcirc_cli> ${sc_tiny})
# A planted difference in a plugin's work is caught the same way.
sc_cli_test(stress_workload_planted_difference_is_caught 1
            "^replay: .* --workload .* --steps 5 .*--plant-difference"
            stress --workload random --seeds 2 --workers 2
            --placements single --steps 5 --plant-difference --quiet)
set_tests_properties(cli.stress_workload_plugin_settles
                     cli.stress_workload_plugin_wrong_reference_is_caught
                     PROPERTIES LABELS "units;threaded" TIMEOUT 120)

# Bad input is refused by name, with exit code 2.
sc_cli_test(stress_workload_unknown_is_refused_by_name 2
            "--workload: unknown workload 'nexmark:q99'"
            stress --workload nexmark:q99 --seeds 1)
sc_cli_test(stress_workload_with_workloads_is_refused 2
            "--workload and --workloads: one or the other"
            stress --workload random --workloads grid --seeds 1)
sc_cli_test(stress_workload_unread_argument_is_refused_by_name 2
            "colour"
            stress --workload random --workload-arg colour=blue --seeds 1)
sc_cli_test(stress_workload_plugin_missing_is_refused 2
            "--workload ./no_such_plugin.so"
            stress --workload ./no_such_plugin.so --seeds 1)
sc_cli_test(stress_steps_without_workload_is_refused 2
            "--steps: only with --workload"
            stress --steps 4 --seeds 1)
sc_cli_test(stress_workload_events_is_refused_for_steps 2
            "--events: with --workload, --steps N"
            stress --workload random --events 4 --seeds 1)

# The report of a --workload campaign validates against the schema and
# names the workload, its arguments and its steps.
add_test(NAME cli.stress_workload_report_validates_and_names_the_workload
         COMMAND sh -c [=[d=$(mktemp -d) && trap 'rm -rf "$d"' EXIT
           timeout 60 "$0" stress --workload nexmark:q4 --workload-arg batch=50 --seeds 1 --workers 2 --placements chains --steps 4 --quiet --json "$d/s.json" || { echo "exit $?"; exit 1; }
           python3 "$2" "$1" "$d/s.json" || exit 1
           python3 - "$d/s.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
c, r = doc["config"], doc["results"]
assert doc["workload"] == "nexmark:q4", doc["workload"]
assert c["workload"] == "nexmark:q4" and c["workload_args"] == ["batch=50"], c
assert c["steps"] == 4 and c["workloads"] == [] and c["events"] is None, c
assert r["runs"] == 1 and r["failures"] == 0 and r["outputs_compared"] >= 1, r
assert r["references_checked"] == 0, r  # nexmark:q4 has no reference
print("ok")
PY
]=] $<TARGET_FILE:subcirc_cli> ${PROJECT_SOURCE_DIR}/tools/report.schema.json
    ${CMAKE_CURRENT_LIST_DIR}/report_check.py)
set_tests_properties(cli.stress_workload_report_validates_and_names_the_workload
                     PROPERTIES LABELS "units" TIMEOUT 120)

# Across ranks (a placement over ranks, or mpirun) --workload is refused
# by name, as --workloads nexmark is.
sc_cli_test(stress_workload_across_ranks_is_refused 2
            "--workload: not across ranks"
            stress --workload random --seeds 1 --placements chains@ranks:2)

# Tick mode: a tick workload takes the faults tick mode takes, and
# --ticks draws host ticks between a plain workload's submissions (the
# plugin's), every output's delta compared at each.
sc_cli_test(stress_workload_tick_workload_refuses_a_panic_fault 2
            "--workload (a tick workload): fault 'panic' is not checked in tick mode"
            stress --workload random-ticks --faults panic --seeds 1)
add_test(NAME cli.stress_workload_host_ticks_on_a_plugin_settle_per_tick
         COMMAND sh -c [=[out=$(timeout 60 "$0" stress --workload "$1" --ticks --seeds 1..3 --workers 1,2 --placements single,per-node,chains --steps 12 --quiet 2>&1); rc=$?; echo "$out"; test $rc -eq 0 && echo "$out" | grep -q "subcirc stress: 18 runs, 18 passed" && echo "$out" | grep -qE "tick mode: [1-9][0-9]* ticks compared"]=]
                 $<TARGET_FILE:subcirc_cli> ${sc_tiny})
set_tests_properties(cli.stress_workload_host_ticks_on_a_plugin_settle_per_tick
                     PROPERTIES LABELS "units" TIMEOUT 120)

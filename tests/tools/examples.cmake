# The example workload plugins (tests/examples/payments.c, running.c)
# under the CLI, loaded from their files as a user's are; included by
# tests/tools/cli.cmake (sc_cli_test is defined there).

# place ranks a plugin's placements as it does a built-in's; balanced is
# calibrated over the plugin's first submissions, a tick workload's
# boundaries among them.
sc_cli_test(place_ranks_the_payments_plugin 0
            "decision: [a-z:0-9-]* x1 b[0-9]* leads"
            place --workload $<TARGET_FILE:example_payments> --workers 1
            --placements single,chains,balanced --reps 1)
sc_cli_test(place_ranks_the_running_plugin_in_ticks 0
            "decision: [a-z:0-9-]* x2 b[0-9]* leads"
            place --workload $<TARGET_FILE:example_running> --workers 1,2
            --placements single,chains,balanced --reps 1)
# --workload-arg reaches the plugin's create.
sc_cli_test(place_passes_arguments_to_the_plugin 0
            "decision:"
            place --workload $<TARGET_FILE:example_payments>
            --workload-arg users=7 --workload-arg payments=300
            --workers 1 --placements single --reps 1)
# A plugin's own message reaches the user whole: the plugin's call to the
# argument reader bound to the CLI's copy of the library, whose error
# state the CLI reads (tests/examples/CMakeLists.txt).
sc_cli_test(place_keeps_the_plugin_s_message 2
            "workload 'payments': sc_workload_arg_u64: users=0: not a whole number in 1..16777216"
            place --workload $<TARGET_FILE:example_payments>
            --workload-arg users=0 --reps 1)
sc_cli_test(place_names_an_argument_the_plugin_never_read 2
            "workload 'payments' takes no argument 'usres'"
            place --workload $<TARGET_FILE:example_payments>
            --workload-arg usres=3 --reps 1)
sc_cli_test(place_refuses_a_plugin_of_another_version 2
            "built for interface version 999, this library has version"
            place --workload $<TARGET_FILE:toy_version> --reps 1)

# A plugin finds the whole API in the CLI: the executable exports every
# symbol libsubcirc.so does (ENABLE_EXPORTS), so none binds to a second
# copy of the library.
add_test(NAME cli.exports_every_library_symbol_for_plugins
         COMMAND sh -c [=[d=$(mktemp -d) && trap 'rm -rf "$d"' EXIT &&
           nm -D --defined-only "$0" | awk '{print $3}' | sort -u >"$d/lib" &&
           nm -D --defined-only "$1" | awk '{print $3}' | sort -u >"$d/cli" &&
           test -s "$d/lib" && missing=$(comm -23 "$d/lib" "$d/cli") &&
           echo "$(wc -l <"$d/lib") symbols; missing from $1: ${missing:-none}" &&
           test -z "$missing"]=]
                 $<TARGET_FILE:subcirc_shared> $<TARGET_FILE:subcirc_cli>)
set_tests_properties(cli.exports_every_library_symbol_for_plugins
                     PROPERTIES LABELS "units")

# run: each example live across two workers settles where the single
# circuit fed the same submissions does, and its own reference (verify)
# agrees; the tick one in tick mode.
sc_cli_test(run_checks_the_payments_plugin 0
            "every output equals the single circuit and the workload's reference"
            run --workload $<TARGET_FILE:example_payments> --workers 2
            --check --quiet)
sc_cli_test(run_checks_the_running_plugin_in_ticks 0
            "every output equals the single circuit and the workload's reference"
            run --workload $<TARGET_FILE:example_running> --workers 2
            --check --quiet)
# stress: every seed's submissions replayed to every placement, worker
# count and mode, each case checked by the example's reference.
sc_cli_test(stress_passes_on_the_payments_plugin 0
            "70 runs, 70 passed"
            stress --workload $<TARGET_FILE:example_payments>
            --seeds 1..5 --workers 1,2)
sc_cli_test(stress_passes_on_the_running_plugin_in_ticks 0
            "66 runs, 66 passed"
            stress --workload $<TARGET_FILE:example_running>
            --seeds 1..5 --workers 1,2)

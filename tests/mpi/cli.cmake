# `subcirc` under mpirun (tools/cli_ranks.c, tools/cli_stress_ranks.c):
# included by tests/tools/cli.cmake when sc_mpi was built and mpirun found
# (tests/CMakeLists.txt finds it). Label "mpi", as tests/mpi/'s: run on
# loopback, oversubscribed (2 cores here), as root when need be; a hang
# fails the test through the timeout inside it rather than hanging ctest.
set(sc_cli_mpirun ${MPIEXEC_EXECUTABLE} --oversubscribe --allow-run-as-root
    --mca btl self,vader)
set(sc_cli_check ${PROJECT_SOURCE_DIR}/tests/mpi/cli_check.py)

# sc_mpi_cli_json(NAME NP KIND ARGS...): `mpirun -np NP subcirc ARGS
# --json F` exits 0 and tests/mpi/cli_check.py KIND F NP passes (the check
# passed; per-rank figures whose frames and bytes sent add up to those
# received across the ranks).
function(sc_mpi_cli_json name np kind)
  add_test(NAME mpi.cli_${name}
           COMMAND sh -c [=[f=$(mktemp) && trap 'rm -f "$f"' EXIT
             np=$1 kind=$2 check=$3 exe=$4; shift 4
             mpirun=""; while [ "$1" != "--subcirc" ]; do mpirun="$mpirun $1"; shift; done; shift
             timeout 280 $mpirun -np "$np" "$exe" "$@" --json "$f"; rc=$?
             test $rc -eq 0 || { echo "exit $rc"; exit 1; }
             python3 "$check" "$kind" "$f" "$np"]=]
                   sh ${np} ${kind} ${sc_cli_check} $<TARGET_FILE:subcirc_cli>
                   ${sc_cli_mpirun} --subcirc ${ARGN})
  set_tests_properties(mpi.cli_${name} PROPERTIES LABELS "mpi;units"
    TIMEOUT 300 ENVIRONMENT "ASAN_OPTIONS=detect_leaks=0:abort_on_error=1")
endfunction()

# sc_mpi_cli_exits(NAME NP RC PATTERN ARGS...): `mpirun -np NP subcirc
# ARGS` exits RC with PATTERN (grep) in its output.
function(sc_mpi_cli_exits name np want pattern)
  add_test(NAME mpi.cli_${name}
           COMMAND sh -c [=[np=$1 want=$2 pat=$3 exe=$4; shift 4
             mpirun=""; while [ "$1" != "--subcirc" ]; do mpirun="$mpirun $1"; shift; done; shift
             out=$(timeout 280 $mpirun -np "$np" "$exe" "$@" 2>&1); rc=$?
             echo "$out"; echo "exit $rc (want $want)"
             test $rc -eq "$want" && echo "$out" | grep -q -e "$pat"]=]
                   sh ${np} ${want} ${pattern} $<TARGET_FILE:subcirc_cli>
                   ${sc_cli_mpirun} --subcirc ${ARGN})
  set_tests_properties(mpi.cli_${name} PROPERTIES LABELS "mpi;units"
    TIMEOUT 300 ENVIRONMENT "ASAN_OPTIONS=detect_leaks=0:abort_on_error=1")
endfunction()

# run: the grid over ranks:N and sharded:2@ranks:N, by events and by time,
# and a Nexmark query with --check.
sc_mpi_cli_json(run_ranks_np2 2 run
                run --placement ranks:2 --workers 1 --events 60000 --quiet)
sc_mpi_cli_json(run_sharded_ranks_np2 2 run
                run --placement sharded:2@ranks:2 --workers 2 --seconds 1)
sc_mpi_cli_json(run_ranks_np3 3 run
                run --placement ranks:3 --workers 1 --events 60000 --quiet)
sc_mpi_cli_json(run_sharded_ranks_np3 3 run
                run --placement sharded:3@ranks:3 --workers 1
                    --events 60000 --quiet)
sc_mpi_cli_json(run_nexmark_q4_ranks_np2 2 run
                run --workload nexmark --query q4 --placement ranks:2
                    --workers 1 --events 30000 --check --quiet)
sc_mpi_cli_json(run_nexmark_q5_sharded_ranks_np3 3 run
                run --workload nexmark --query q5
                    --placement sharded:3@ranks:3 --workers 1
                    --events 30000 --check --quiet)
# A window of one credit per remote edge: the ranks wait on credits and
# the output still equals the reference (nothing lost). Small batches and
# two-frame edges make 100-200 frames cross (with the defaults, 12-16
# coalesced frames, which once all found credit waiting: a pass of 15
# ended with no credit wait).
sc_mpi_cli_json(run_one_credit_backpressures_and_loses_nothing_np2 2
                backpressure
                run --placement ranks:2 --workers 1 --events 60000
                    --credits 1 --capacity 2 --batch 16 --quiet)
# The summary (rank 0 only): the per-rank table, the output check.
sc_mpi_cli_exits(run_summary_has_a_line_per_rank_np2 2 0
                 "per rank:  rank  units   turns  frames sent  frames recv"
                 run --placement ranks:2 --workers 1 --events 20000 --quiet)
# stress: every seed's cases across the ranks, none diverging.
sc_mpi_cli_json(stress_np2 2 stress
                stress --seeds 1..8 --workers 1,2 --quiet)
sc_mpi_cli_json(stress_np3 3 stress
                stress --seeds 1..4 --workers 2 --quiet)
# The campaign itself can fail: a reference missing the last submission
# (exit 1, the case named with its replay).
sc_mpi_cli_exits(stress_planted_difference_fails_with_its_replay_np2 2 1
                 "replay: mpirun .* stress --seeds 1 --workloads grid"
                 stress --seeds 1..3 --workloads grid --placements chains
                        --plant-difference --quiet)
sc_mpi_cli_exits(run_planted_difference_fails_np2 2 1
                 "DIFFERS from the single circuit"
                 run --workload nexmark --query q4 --placement ranks:2
                     --events 20000 --check --plant-difference --quiet)
# Refused, on every rank, before MPI starts (exit 2, saying why).
sc_mpi_cli_exits(run_with_another_rank_count_is_refused_np3 3 2
                 "the placement spans 2 ranks, but mpirun started 3"
                 run --placement ranks:2 --events 1000)
sc_mpi_cli_exits(run_on_one_rank_under_mpirun_is_refused_np2 2 2
                 "mpirun started 2 ranks, but the placement runs on one"
                 run --placement chains --events 1000)
sc_mpi_cli_exits(stress_fault_across_ranks_is_refused_np2 2 2
                 "--faults panic: not across ranks"
                 stress --seeds 1 --faults panic)
sc_mpi_cli_exits(stress_sim_across_ranks_is_refused_np2 2 2
                 "--modes sim: the seeded scheduler"
                 stress --seeds 1 --modes sim)
sc_mpi_cli_exits(place_under_mpirun_is_refused_np2 2 2
                 "place: not under mpirun (2 ranks)"
                 place --placements single --events 1000)
# The same run through the kernel's TCP stack (Open MPI's tcp BTL).
set(sc_cli_mpirun ${MPIEXEC_EXECUTABLE} --oversubscribe --allow-run-as-root
    --mca btl self,tcp)
sc_mpi_cli_json(run_sharded_ranks_over_tcp_np2 2 run
                run --placement sharded:2@ranks:2 --workers 1
                    --events 60000 --quiet)
sc_mpi_cli_json(stress_over_tcp_np3 3 stress
                stress --seeds 1..2 --workers 1 --quiet)
# A rank killed mid-run: rank 0 reports it dead and ends on its own
# (tests/mpi/kill_cli.sh), within 75 s of the kill (the link takes a peer
# silent for 20 s for dead; the gathers after a failed run wait 5 s).
add_test(NAME mpi.cli_run_killed_rank_is_reported_and_rank_0_ends_np2
         COMMAND bash ${PROJECT_SOURCE_DIR}/tests/mpi/kill_cli.sh
                 $<TARGET_FILE:subcirc_cli> ${MPIEXEC_EXECUTABLE}
                 --oversubscribe --allow-run-as-root)
set_tests_properties(mpi.cli_run_killed_rank_is_reported_and_rank_0_ends_np2
  PROPERTIES LABELS "mpi;units" TIMEOUT 200
  ENVIRONMENT "ASAN_OPTIONS=detect_leaks=0:abort_on_error=1")

# One mpirun job at a time (ctest -j still runs other tests beside it):
# two jobs of 3 or 4 ranks each, with their link threads and workers, on
# a 2-core machine starve each other's ranks past the link's deadlines.
get_property(sc_cli_mpi_tests DIRECTORY PROPERTY TESTS)
list(FILTER sc_cli_mpi_tests INCLUDE REGEX "^mpi\\.")
set_tests_properties(${sc_cli_mpi_tests} PROPERTIES RESOURCE_LOCK mpirun)

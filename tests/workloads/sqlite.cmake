# Every Nexmark query's settled output against SQLite (Python's sqlite3,
# Debian's libsqlite3): tests/workloads/nexmark_sqlite.py evaluates the
# query's SQL over the dumped input and compares bags. Each query twice:
# the defaults, and 2 workers per node with disordered input (the declared
# lateness then matches the disorder, so nothing is refused). Windowed
# queries read more events, so that they span several windows.
# Normal build only: the sanitizer builds run the same queries in
# workloads.* and cli.*, and SQLite's share of the time would dominate.
if(TARGET subcirc_cli AND SC_SANITIZE STREQUAL "")
  foreach(q q0 q1 q2 q3 q4 q5 q6 q7 q8 q9 q10 q11 q12 q13 q14 q15 q16 q17
           q18 q19 q20 q21 q22 q23)
    set(events 30000)
    if(q MATCHES "^q(5|7)$")
      set(events 150000)
    endif()
    add_test(NAME workloads.nexmark_sqlite_${q}
             COMMAND python3 ${CMAKE_CURRENT_LIST_DIR}/nexmark_sqlite.py
                     $<TARGET_FILE:subcirc_cli> ${q} ${events})
    add_test(NAME workloads.nexmark_sqlite_${q}_disordered_per_node
             COMMAND python3 ${CMAKE_CURRENT_LIST_DIR}/nexmark_sqlite.py
                     $<TARGET_FILE:subcirc_cli> ${q} ${events} --
                     --workers 2 --placement per-node --disorder 300)
    set_tests_properties(workloads.nexmark_sqlite_${q}
      workloads.nexmark_sqlite_${q}_disordered_per_node
      PROPERTIES LABELS "workloads;sqlite" TIMEOUT 300)
  endforeach()
  # q12 on a stepped clock: each chunk of 1,000 events 1 s after the last,
  # so 30,000 events span three windows of processing time.
  add_test(NAME workloads.nexmark_sqlite_q12_stepped_clock
           COMMAND python3 ${CMAKE_CURRENT_LIST_DIR}/nexmark_sqlite.py
                   $<TARGET_FILE:subcirc_cli> q12 30000 --
                   --workers 2 --placement per-node --proc-clock step:1000)
  set_tests_properties(workloads.nexmark_sqlite_q12_stepped_clock
    PROPERTIES LABELS "workloads;sqlite" TIMEOUT 300)
  # q10's file sink past a minute of event time (10,000 events a second),
  # so a partition is committed mid-run, written by both replicas of the
  # sharded output as their waterlines pass it.
  add_test(NAME workloads.nexmark_sqlite_q10_sink_across_minutes_sharded
           COMMAND python3 ${CMAKE_CURRENT_LIST_DIR}/nexmark_sqlite.py
                   $<TARGET_FILE:subcirc_cli> q10 620000 --
                   --workers 2 --placement sharded:2 --disorder 300)
  set_tests_properties(workloads.nexmark_sqlite_q10_sink_across_minutes_sharded
    PROPERTIES LABELS "workloads;sqlite" TIMEOUT 300)
  # q13 with a side input read from a file: keys of the auctions the run
  # makes and keys none has, a key three times, quoted texts.
  add_test(NAME workloads.nexmark_sqlite_q13_side_input_from_a_file
           COMMAND python3 ${CMAKE_CURRENT_LIST_DIR}/nexmark_sqlite.py
                   $<TARGET_FILE:subcirc_cli> q13 30000 --
                   --workers 2 --placement sharded:2 --side-input
                   ${CMAKE_CURRENT_LIST_DIR}/q13_side_input.csv)
  set_tests_properties(workloads.nexmark_sqlite_q13_side_input_from_a_file
    PROPERTIES LABELS "workloads;sqlite" TIMEOUT 300)
endif()

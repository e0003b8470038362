# tools/commit.cmake: writes OUT (cli_commit.h) with the commit of the
# source tree SRC, for `subcirc --version` and the reports
# (tools/cli_report.c). Run at every build (tools/CMakeLists.txt), it
# rewrites OUT only when the commit changed, so a build at the same commit
# recompiles nothing. Outside git (a release tarball) the commit is
# "unknown"; a tree with changes to tracked files adds "-dirty".
set(commit unknown)
find_package(Git QUIET)
if(GIT_FOUND)
  execute_process(COMMAND ${GIT_EXECUTABLE} -C ${SRC} rev-parse --short=12 HEAD
                  OUTPUT_VARIABLE head RESULT_VARIABLE rc
                  OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  if(rc EQUAL 0 AND head MATCHES "^[0-9a-f]+$")
    set(commit ${head})
    execute_process(COMMAND ${GIT_EXECUTABLE} -C ${SRC} status --porcelain
                            --untracked-files=no
                    OUTPUT_VARIABLE changes RESULT_VARIABLE rc
                    OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    if(rc EQUAL 0 AND NOT changes STREQUAL "")
      string(APPEND commit "-dirty")
    endif()
  endif()
endif()
set(text "/* Written by tools/commit.cmake at build time. */\n#define CLI_COMMIT \"${commit}\"\n")
if(EXISTS ${OUT})
  file(READ ${OUT} old)
else()
  set(old "")
endif()
if(NOT old STREQUAL text)
  file(WRITE ${OUT} "${text}")
endif()

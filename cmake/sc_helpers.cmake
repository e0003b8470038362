# Helpers shared by the layer folders, tests and benchmarks.

# sc_layer(NAME DEPS [SOURCES file...]): the object library sc_NAME_obj and
# the static library sc_NAME, linked to DEPS, from the SOURCES given (paths
# relative to the top) or else from every NAME/*.c that no earlier layer
# took (so the base, sc_base, can be carved out of operators/). A layer with
# no sources yet is an interface library so that dependants still configure.
#
# The objects are position-independent because the same objects make
# libsubcirc.so (a PIE object's thread-local accesses, TPOFF32, cannot go
# into a shared object). -fno-semantic-interposition keeps what -fPIC would
# otherwise cost the hot path: GCC may still inline and call directly a
# global function defined in the same file.
#
# No layer links an allocator (SC_ALLOCATOR): executables choose theirs.
set(SC_LAYERS)
set(SC_LAYER_SOURCES)
function(sc_layer name deps)
  cmake_parse_arguments(PARSE_ARGV 2 arg "" "" "SOURCES")
  if(arg_SOURCES)
    list(TRANSFORM arg_SOURCES PREPEND ${PROJECT_SOURCE_DIR}/ OUTPUT_VARIABLE srcs)
  else()
    file(GLOB srcs CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/${name}/*.c)
    if(srcs AND SC_LAYER_SOURCES)
      list(REMOVE_ITEM srcs ${SC_LAYER_SOURCES})
    endif()
  endif()
  if(srcs)
    add_library(sc_${name}_obj OBJECT ${srcs})
    set_target_properties(sc_${name}_obj PROPERTIES POSITION_INDEPENDENT_CODE ON)
    target_compile_options(sc_${name}_obj PRIVATE -fno-semantic-interposition)
    target_include_directories(sc_${name}_obj PUBLIC ${PROJECT_SOURCE_DIR})
    target_link_libraries(sc_${name}_obj PUBLIC ${deps} PkgConfig::CK m)
    add_library(sc_${name} STATIC $<TARGET_OBJECTS:sc_${name}_obj>)
    target_link_libraries(sc_${name} PUBLIC ${deps} PkgConfig::CK m)
    target_include_directories(sc_${name} PUBLIC ${PROJECT_SOURCE_DIR})
    set(SC_LAYERS ${SC_LAYERS} ${name} PARENT_SCOPE)
    set(SC_LAYER_SOURCES ${SC_LAYER_SOURCES} ${srcs} PARENT_SCOPE)
  else()
    add_library(sc_${name} INTERFACE)
    target_link_libraries(sc_${name} INTERFACE ${deps})
    target_include_directories(sc_${name} INTERFACE ${PROJECT_SOURCE_DIR})
  endif()
endfunction()

# sc_criterion_suite(FILE LIBS): build one Criterion test program from FILE and
# register each Test(suite, name) in it with ctest, one by one, as
# "suite.name", so `ctest -N` names every test and `ctest -R` picks any one.
# A file that contains the marker SC_THREADED marks its tests with the label
# "threaded"; every test gets a label for its layer folder.
#
# Criterion exits 0 when its --filter matches nothing; every suite links
# tests/support/nothing_ran.c, whose report hook exits 2 then, and the
# FAIL_REGULAR_EXPRESSION below also turns "Tested: 0" into a failure, so a
# renamed test can never pass silently.
function(sc_criterion_suite file libs)
  get_filename_component(exe ${file} NAME_WE)
  get_filename_component(dir ${file} DIRECTORY)
  get_filename_component(layer ${dir} NAME)
  add_executable(${exe} ${file} ${PROJECT_SOURCE_DIR}/tests/support/nothing_ran.c)
  target_link_libraries(${exe} PRIVATE ${libs} PkgConfig::CRITERION ${SC_ALLOCATOR})
  target_include_directories(${exe} PRIVATE ${PROJECT_SOURCE_DIR})
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${file})
  file(READ ${file} text)
  set(labels ${layer})
  if(text MATCHES "SC_THREADED")
    list(APPEND labels threaded)
  endif()
  string(REGEX MATCHALL "\nTest\\([ \t]*[A-Za-z0-9_]+[ \t]*,[ \t\n]*[A-Za-z0-9_]+" decls "${text}")
  foreach(decl IN LISTS decls)
    string(REGEX REPLACE "\nTest\\([ \t]*([A-Za-z0-9_]+)[ \t]*,[ \t\n]*([A-Za-z0-9_]+)" "\\1;\\2" pair "${decl}")
    list(GET pair 0 suite)
    list(GET pair 1 name)
    add_test(NAME ${suite}.${name}
             COMMAND ${exe} --filter ${suite}/${name} --ascii -j1)
    set_tests_properties(${suite}.${name} PROPERTIES
      LABELS "${labels}"
      FAIL_REGULAR_EXPRESSION "Tested: 0 "
      ENVIRONMENT "SC_TEST_EXE=$<TARGET_FILE:${exe}>")
    # A file marked SC_BOTH_EXECUTORS runs every test on each executor
    # kind (runtime/executor.h, $SC_EXECUTOR): suite.name on the default,
    # suite.name.queue on the one-queue reference.
    if(text MATCHES "SC_BOTH_EXECUTORS")
      add_test(NAME ${suite}.${name}.queue
               COMMAND ${exe} --filter ${suite}/${name} --ascii -j1)
      set_tests_properties(${suite}.${name}.queue PROPERTIES
        LABELS "${labels}"
        FAIL_REGULAR_EXPRESSION "Tested: 0 "
        ENVIRONMENT "SC_TEST_EXE=$<TARGET_FILE:${exe}>;SC_EXECUTOR=queue")
    endif()
  endforeach()
endfunction()

# sc_program_test(FILE LIBS LABELS): a plain test program (no Criterion), for
# the threaded suites under ThreadSanitizer: Criterion's sandbox maps its
# arena at addresses TSan reserves for itself and aborts before any test runs
# (Criterion issue #274), so the TSan pass runs the same scenarios through a
# plain driver instead. Exit status 0 is a pass.
function(sc_program_test file libs labels)
  get_filename_component(exe ${file} NAME_WE)
  add_executable(${exe} ${file})
  target_link_libraries(${exe} PRIVATE ${libs} ${SC_ALLOCATOR})
  target_include_directories(${exe} PRIVATE ${PROJECT_SOURCE_DIR})
  add_test(NAME program.${exe} COMMAND ${exe})
  set_tests_properties(program.${exe} PROPERTIES LABELS "${labels}")
endfunction()

# The public surface, checked at configure time (included by the top
# CMakeLists.txt after it sets the three lists):
#   SC_PUBLIC_HEADERS    libsubcirc's headers: installed, in <subcirc/subcirc.h>;
#   SC_MPI_HEADERS       libsubcirc-mpi's: installed with it, in
#                        <subcirc/subcirc_mpi.h>;
#   SC_INTERNAL_HEADERS  headers of the tree that are not public although
#                        their names do not end in _int.h.
# What installs is what those lists say, never what a file's name suggests;
# so every header of operators/, runtime/ and units/ must be named by
# exactly one list, or end in _int.h (internal by its name) and be named by
# none. Anything else stops the configure with a message that names the
# header and the lists, because a header left out would be silently
# missing from an install, and one put in by a rule would be silently
# promised to users.
#
# It also writes ${PROJECT_BINARY_DIR}/sc_surface.txt, one "KIND PATH" a
# line (KIND public, mpi or internal; CMakeLists.txt adds "library
# subcirc-mpi" when it builds that), which tests/install/check.sh compares
# with what an install holds.

set(sc_surface_lists SC_PUBLIC_HEADERS SC_MPI_HEADERS SC_INTERNAL_HEADERS)

# The headers of the layer folders: configure runs again when one is added
# or removed, so the check below sees it.
file(GLOB sc_tree_headers CONFIGURE_DEPENDS RELATIVE ${PROJECT_SOURCE_DIR}
     ${PROJECT_SOURCE_DIR}/operators/*.h ${PROJECT_SOURCE_DIR}/runtime/*.h
     ${PROJECT_SOURCE_DIR}/units/*.h)

set(sc_surface_errors "")
set(sc_surface_named "")
set(sc_surface_manifest "")
foreach(list IN LISTS sc_surface_lists)
  string(TOLOWER ${list} kind)
  string(REGEX REPLACE "^sc_([a-z]+)_headers$" "\\1" kind ${kind})
  foreach(h IN LISTS ${list})
    if(NOT EXISTS ${PROJECT_SOURCE_DIR}/${h} OR IS_DIRECTORY ${PROJECT_SOURCE_DIR}/${h})
      string(APPEND sc_surface_errors
             "  ${h}: named in ${list}, but there is no such file\n")
    endif()
    if(h MATCHES "_int\\.h$")
      string(APPEND sc_surface_errors
             "  ${h}: named in ${list}, but a *_int.h is internal by its name;"
             " name no list for it\n")
    endif()
    if(h IN_LIST sc_surface_named)
      string(APPEND sc_surface_errors
             "  ${h}: named twice (a header is in exactly one list)\n")
    endif()
    list(APPEND sc_surface_named ${h})
    string(APPEND sc_surface_manifest "${kind} ${h}\n")
  endforeach()
endforeach()
foreach(h IN LISTS sc_tree_headers)
  if(NOT h MATCHES "_int\\.h$" AND NOT h IN_LIST sc_surface_named)
    string(APPEND sc_surface_errors
           "  ${h}: in no list; add it to SC_PUBLIC_HEADERS (libsubcirc's"
           " API), SC_MPI_HEADERS (libsubcirc-mpi's) or SC_INTERNAL_HEADERS,"
           " or name it *_int.h\n")
  endif()
endforeach()
if(sc_surface_errors)
  message(FATAL_ERROR "The public surface (CMakeLists.txt, SC_PUBLIC_HEADERS"
          " and the lists after it) does not match the tree:\n"
          "${sc_surface_errors}")
endif()
file(WRITE ${PROJECT_BINARY_DIR}/sc_surface.txt "${sc_surface_manifest}")

# sc_umbrella(OUT TEMPLATE HEADERS...): configure TEMPLATE into
# ${PROJECT_BINARY_DIR}/include/subcirc/OUT with @SC_UMBRELLA_INCLUDES@ an
# #include line per header, in the order given.
function(sc_umbrella out template)
  set(SC_UMBRELLA_INCLUDES "")
  foreach(h IN LISTS ARGN)
    string(APPEND SC_UMBRELLA_INCLUDES "#include \"${h}\"\n")
  endforeach()
  configure_file(${template} ${PROJECT_BINARY_DIR}/include/subcirc/${out} @ONLY)
endfunction()

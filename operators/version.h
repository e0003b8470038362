/*
 * version.h - which subcirc this is.
 *
 * The three numbers below are the one place the version is written: the
 * top CMakeLists.txt reads them for project(VERSION), so the SONAME
 * (libsubcirc.so.MAJOR), subcirc.pc and the CMake package config all follow
 * this file, and the numbers a program was compiled against can be compared
 * with the library it runs with:
 *
 *	if (strcmp(sc_version_string(), SC_VERSION_STRING) != 0) ...
 *
 * While MAJOR is 0 the interface may still change between minor versions.
 */
#ifndef SC_VERSION_H
#define SC_VERSION_H

#ifdef __cplusplus
extern "C" {
#endif

#define SC_VERSION_MAJOR 0
#define SC_VERSION_MINOR 1
#define SC_VERSION_PATCH 0

#define SC__VERSION_STR(x)  #x
#define SC__VERSION_XSTR(x) SC__VERSION_STR(x)
/* "MAJOR.MINOR.PATCH" of the headers being compiled, e.g. "0.1.0". */
#define SC_VERSION_STRING                                                      \
	SC__VERSION_XSTR(SC_VERSION_MAJOR)                                     \
	"." SC__VERSION_XSTR(SC_VERSION_MINOR) "." SC__VERSION_XSTR(           \
	    SC_VERSION_PATCH)

/*
 * sc_version_string - "MAJOR.MINOR.PATCH" of the library this program runs
 * with (which may differ from SC_VERSION_STRING of the headers it was
 * compiled with, when a shared library was replaced). Returns a static
 * string. Any thread may call it.
 */
const char *sc_version_string(void);

#ifdef __cplusplus
}
#endif

#endif /* SC_VERSION_H */

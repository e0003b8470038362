/*
 * version.c - the version compiled into the library (see version.h).
 */
#include "operators/version.h"

const char *
sc_version_string(void)
{
	return SC_VERSION_STRING;
}

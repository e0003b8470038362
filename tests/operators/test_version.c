/*
 * test_version.c - the version: the library says the numbers of its header.
 */
#include <criterion/criterion.h>
#include <stdio.h>

#include "operators/version.h"

Test(version, string_is_major_minor_patch_of_the_header)
{
	char want[32];

	(void)snprintf(want, sizeof want, "%d.%d.%d", SC_VERSION_MAJOR,
		       SC_VERSION_MINOR, SC_VERSION_PATCH);
	cr_assert_str_eq(SC_VERSION_STRING, want);
	cr_assert_str_eq(sc_version_string(), want);
}

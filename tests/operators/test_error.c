/*
 * test_error.c - the error convention: codes, words, per-thread detail.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "operators/error.h"

Test(error, every_code_has_distinct_words_and_name)
{
	for (int c = 0; c >= SC__ELAST; c--) {
		cr_assert_str_neq(sc_strerror(c), "unknown error", "code %d",
				  c);
		cr_assert(strncmp(sc_errname(c), "SC_", 3) == 0);
		for (int d = c - 1; d >= SC__ELAST; d--)
			cr_assert_str_neq(sc_strerror(c), sc_strerror(d));
	}
}

Test(error, unknown_code_is_named_unknown)
{
	cr_assert_str_eq(sc_strerror(1), "unknown error");
	cr_assert_str_eq(sc_strerror(SC__ELAST - 1), "unknown error");
}

Test(error, errorf_returns_its_code_and_keeps_the_detail)
{
	sc_error_clear();
	cr_assert_str_eq(sc_errmsg(), "");
	cr_assert_eq(
	    sc__fail(SC_ESCHEMA, "row has %d columns, schema has %d", 3, 2),
	    SC_ESCHEMA);
	cr_assert_str_eq(sc_errmsg(),
			 "SC_ESCHEMA: row has 3 columns, schema has 2");
}

Test(error, errdetail_is_the_message_without_the_codes_name)
{
	cr_assert_eq(sc_errorf(SC_EINVAL, "bad %d", 7), SC_EINVAL);
	cr_assert_str_eq(sc_errmsg(), "SC_EINVAL: bad 7");
	cr_assert_str_eq(sc_errdetail(), "bad 7");
	sc_error_clear();
	cr_assert_str_eq(sc_errdetail(), "");
	cr_assert_str_eq(sc_errmsg(), "");
}

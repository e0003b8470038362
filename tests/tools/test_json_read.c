/*
 * test_json_read.c - the CLI's strict JSON reader (tools/cli_json_read.c):
 * the shapes of a report read back whole, strings unescaped to UTF-8,
 * and every laxness RFC 8259 does not allow refused with the byte where
 * it was found.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "tools/cli.h"

#define SUITE "json_read"

static struct cli_jv *
parse_ok(const char *text)
{
	struct cli_jv *v = NULL;
	char err[160];

	cr_assert_eq(cli_json_parse(text, strlen(text), &v, err, sizeof(err)),
		     0, "%s: %s", text, err);
	return v;
}

static void
refused(const char *text, const char *why)
{
	struct cli_jv *v = NULL;
	char err[160];

	cr_assert_eq(cli_json_parse(text, strlen(text), &v, err, sizeof(err)),
		     -1, "accepted: %s", text);
	cr_assert_null(v);
	cr_assert(strstr(err, why), "%s: '%s' lacks '%s'", text, err, why);
	cr_assert(!strncmp(err, "at byte ", 8), "%s", err);
}

Test(json_read, a_report_envelope_reads_back_whole)
{
	struct cli_jv *v = parse_ok(
	    "{\"schema\": \"subcirc-report\", \"schema_version\": 1,\n"
	    " \"subcirc\": {\"version\": \"0.1.0\", \"commit\": \"abc1234\"},\n"
	    " \"host\": {\"cores\": 2, \"hostname\": null,\n"
	    "          \"load_before\": [0.5, 1.25e0, -0.0]},\n"
	    " \"interrupted\": false, \"ok\": true,\n"
	    " \"results\": {\"cases\": [{\"case\": \"single x1 b64\", "
	    "\"median_events_per_s\": 1650000.5}]}}");
	const struct cli_jv *host = cli_jv_get(v, "host");
	const struct cli_jv *load = cli_jv_get(host, "load_before");
	const struct cli_jv *cases =
	    cli_jv_get(cli_jv_get(v, "results"), "cases");
	double d = 0;

	cr_assert_eq(v->kind, CLI_JV_OBJ);
	cr_assert_str_eq(cli_jv_str(v, "schema"), "subcirc-report");
	cr_assert(cli_jv_num(v, "schema_version", &d) && d == 1);
	cr_assert_str_eq(cli_jv_str(cli_jv_get(v, "subcirc"), "commit"),
			 "abc1234");
	cr_assert_eq(cli_jv_get(host, "hostname")->kind, CLI_JV_NULL);
	cr_assert_null(cli_jv_str(host, "hostname"));
	cr_assert_eq(load->kind, CLI_JV_ARR);
	cr_assert_eq(load->n, 3);
	cr_assert_eq(load->items[1].num, 1.25);
	cr_assert_eq(cli_jv_get(v, "interrupted")->b, false);
	cr_assert_eq(cli_jv_get(v, "ok")->b, true);
	cr_assert_eq(cases->n, 1);
	cr_assert(cli_jv_num(&cases->items[0], "median_events_per_s", &d));
	cr_assert_eq(d, 1650000.5);
	cr_assert_null(cli_jv_get(v, "absent"));
	cr_assert(!cli_jv_num(v, "schema", &d), "a string read as a number");
	cli_jv_free(v);
}

Test(json_read, strings_are_unescaped_to_utf8)
{
	struct cli_jv *v =
	    parse_ok("[\"a\\\"b\\\\c\\/d\\n\\t\", \"\\u00e9\\u22c8\", "
		     "\"\\ud83d\\ude00\", \"\xe2\x8b\x88\"]");

	cr_assert_str_eq(v->items[0].str, "a\"b\\c/d\n\t");
	cr_assert_str_eq(v->items[1].str, "\xc3\xa9\xe2\x8b\x88");
	cr_assert_str_eq(v->items[2].str, "\xf0\x9f\x98\x80");
	cr_assert_str_eq(v->items[3].str, "\xe2\x8b\x88");
	cli_jv_free(v);
}

Test(json_read, empty_containers_and_scalars_at_the_top)
{
	struct cli_jv *v = parse_ok(" { } ");

	cr_assert_eq(v->kind, CLI_JV_OBJ);
	cr_assert_eq(v->n, 0);
	cli_jv_free(v);
	v = parse_ok("[]");
	cr_assert_eq(v->kind, CLI_JV_ARR);
	cli_jv_free(v);
	v = parse_ok("-0.5e-3");
	cr_assert_eq(v->num, -0.5e-3);
	cli_jv_free(v);
}

Test(json_read, what_rfc_8259_does_not_allow_is_refused)
{
	refused("{\"a\": 1,}", "expected a key");
	refused("[1, 2,]", "not a JSON value");
	refused("{\"a\": 1, \"a\": 2}", "a duplicate key");
	refused("[01]", "expected ','");
	refused("[+1]", "not a JSON value");
	refused("[1.]", "digits after '.'");
	refused("[1e]", "exponent digits");
	refused("[.5]", "not a JSON value");
	refused("[\"a\tb\"]", "a control character");
	refused("[\"\\x\"]", "bad escape");
	refused("[\"\\ud800\"]", "a high surrogate without its low one");
	refused("[\"\\udc00\"]", "a lone low surrogate");
	refused("[\"\\u0000\"]", "\\u0000 in a string");
	refused("[\"open", "without its closing quote");
	refused("{\"a\" 1}", "expected ':'");
	refused("[1] [2]", "text after the value");
	refused("[tru]", "not a JSON value");
	refused("// no\n{}", "not a JSON value");
	refused("", "ends before its value");
	refused("[1", "expected ','");
}

Test(json_read, nesting_is_bounded)
{
	char deep[200];

	memset(deep, '[', 100);
	memset(deep + 100, ']', 99);
	deep[199] = '\0';
	refused(deep, "nested deeper than 64");
	memset(deep, '[', 64);
	memset(deep + 64, ']', 64);
	deep[128] = '\0';
	cli_jv_free(parse_ok(deep));
}

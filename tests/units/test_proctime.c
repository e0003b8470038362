/*
 * test_proctime.c - the processing-time clock (units/proctime.h): the
 * texts that name a clock, stepped and wall readings, overflow and NULLs.
 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "units/proctime.h"

/* A clock no call has set, to see that a refused call leaves it so. */
static const struct sc_proctime untouched = {.kind = SC_PROCTIME_STEPPED,
					     .start_ms = 7,
					     .step_ms = 3,
					     .last_ms = 11,
					     .reads = 2};

static bool
same_clock(const struct sc_proctime *a, const struct sc_proctime *b)
{
	return a->kind == b->kind && a->start_ms == b->start_ms &&
	       a->step_ms == b->step_ms && a->last_ms == b->last_ms &&
	       a->reads == b->reads;
}

static int64_t
realtime_ms(void)
{
	struct timespec ts;

	cr_assert_eq(clock_gettime(CLOCK_REALTIME, &ts), 0);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

Test(proctime, parse_takes_wall_and_step_ms_and_refuses_the_rest_naming_why)
{
	static const struct {
		const char *text;
		int rc;
		enum sc_proctime_kind kind; /* when rc is 0 */
		int64_t step_ms;	    /* when rc is 0 and stepped */
		const char *word;	    /* in the message when rc != 0 */
	} cases[] = {
	    {"wall", 0, SC_PROCTIME_WALL, 0, NULL},
	    {"step:0", 0, SC_PROCTIME_STEPPED, 0, NULL},
	    {"step:1000", 0, SC_PROCTIME_STEPPED, 1000, NULL},
	    {"step:9223372036854775807", 0, SC_PROCTIME_STEPPED, INT64_MAX,
	     NULL},
	    {"step:", SC_EINVAL, 0, 0, "empty"},
	    {"step:-1", SC_EINVAL, 0, 0, "not a digit"},
	    {"step:1x", SC_EINVAL, 0, 0, "not a digit"},
	    {"step: 5", SC_EINVAL, 0, 0, "not a digit"},
	    {"step:9223372036854775808", SC_EINVAL, 0, 0, "past int64"},
	    {"step:99999999999999999999", SC_EINVAL, 0, 0, "past int64"},
	    {"", SC_EINVAL, 0, 0, "names no clock"},
	    {"walls", SC_EINVAL, 0, 0, "names no clock"},
	    {"Step:5", SC_EINVAL, 0, 0, "names no clock"},
	    {"WALL", SC_EINVAL, 0, 0, "names no clock"},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct sc_proctime c = untouched;
		int rc = sc_proctime_parse(cases[i].text, &c);

		cr_assert_eq(rc, cases[i].rc, "'%s': %d (%s), want %d",
			     cases[i].text, rc, sc_errmsg(), cases[i].rc);
		if (rc) {
			const char *m = sc_errmsg();

			cr_expect(strstr(m, "sc_proctime_parse"), "%s", m);
			cr_expect(strstr(m, cases[i].word),
				  "'%s': message '%s' lacks '%s'",
				  cases[i].text, m, cases[i].word);
			cr_expect(strstr(m, "\"wall\" or \"step:MS\""),
				  "'%s': message '%s' says not what is "
				  "accepted",
				  cases[i].text, m);
			if (cases[i].text[0])
				cr_expect(strstr(m, cases[i].text),
					  "message '%s' quotes not '%s'", m,
					  cases[i].text);
			cr_expect(same_clock(&c, &untouched),
				  "'%s' refused but changed the clock",
				  cases[i].text);
			continue;
		}
		cr_expect_eq(c.kind, cases[i].kind, "'%s'", cases[i].text);
		cr_expect_eq(c.reads, 0, "'%s': no reading yet", cases[i].text);
		cr_expect_eq(c.last_ms, INT64_MIN, "'%s'", cases[i].text);
		if (c.kind == SC_PROCTIME_STEPPED) {
			cr_expect_eq(c.start_ms, 0, "'%s'", cases[i].text);
			cr_expect_eq(c.step_ms, cases[i].step_ms, "'%s'",
				     cases[i].text);
		}
	}
}

Test(proctime, a_parsed_step_clock_reads_0_then_ms_apart)
{
	struct sc_proctime c;
	int64_t ms = -1;

	cr_assert_eq(sc_proctime_parse("step:250", &c), 0, "%s", sc_errmsg());
	for (int64_t i = 0; i < 5; i++) {
		cr_assert_eq(sc_proctime_read(&c, &ms), 0, "%s", sc_errmsg());
		cr_expect_eq(ms, i * 250, "reading %lld: %lld", (long long)i,
			     (long long)ms);
	}
}

Test(proctime, stepped_reading_i_is_start_plus_i_times_step)
{
	static const int64_t starts[] = {0, 1, 1700000000000};
	static const int64_t steps[] = {0, 1, 10000};

	for (size_t a = 0; a < 3; a++)
		for (size_t b = 0; b < 3; b++) {
			struct sc_proctime c;

			cr_assert_eq(
			    sc_proctime_init_stepped(&c, starts[a], steps[b]),
			    0, "%s", sc_errmsg());
			for (int64_t i = 0; i < 100; i++) {
				int64_t ms = -1;

				cr_assert_eq(sc_proctime_read(&c, &ms), 0, "%s",
					     sc_errmsg());
				cr_assert_eq(ms, starts[a] + i * steps[b],
					     "start %lld step %lld reading "
					     "%lld: %lld",
					     (long long)starts[a],
					     (long long)steps[b], (long long)i,
					     (long long)ms);
				cr_assert_eq(c.last_ms, ms);
				cr_assert_eq(c.reads, (uint64_t)i + 1);
			}
		}
}

Test(proctime, a_step_of_zero_reads_start_forever)
{
	struct sc_proctime c;
	int64_t ms = -1;

	cr_assert_eq(sc_proctime_init_stepped(&c, INT64_MAX, 0), 0);
	for (int i = 0; i < 3; i++) {
		cr_assert_eq(sc_proctime_read(&c, &ms), 0, "%s", sc_errmsg());
		cr_expect_eq(ms, INT64_MAX);
	}
}

Test(proctime, a_reading_past_int64_max_is_eoverflow_and_changes_nothing)
{
	struct sc_proctime c, before;
	int64_t ms = -1;

	/* Readings INT64_MAX - 10, INT64_MAX - 3; the third would pass. */
	cr_assert_eq(sc_proctime_init_stepped(&c, INT64_MAX - 10, 7), 0);
	cr_assert_eq(sc_proctime_read(&c, &ms), 0, "%s", sc_errmsg());
	cr_assert_eq(ms, INT64_MAX - 10);
	cr_assert_eq(sc_proctime_read(&c, &ms), 0, "%s", sc_errmsg());
	cr_assert_eq(ms, INT64_MAX - 3);
	before = c;
	for (int i = 0; i < 2; i++) {
		ms = 42;
		cr_assert_eq(sc_proctime_read(&c, &ms), SC_EOVERFLOW, "try %d",
			     i);
		cr_expect(strstr(sc_errmsg(), "sc_proctime_read"), "%s",
			  sc_errmsg());
		cr_expect(strstr(sc_errmsg(), "INT64_MAX"), "%s", sc_errmsg());
		cr_expect_eq(ms, 42, "nothing read");
		cr_expect(same_clock(&c, &before), "the clock changed");
		cr_expect_eq(c.last_ms, INT64_MAX - 3);
		cr_expect_eq(c.reads, 2);
	}
}

Test(proctime, a_reading_landing_on_int64_max_is_taken)
{
	struct sc_proctime c;
	int64_t ms = -1;

	cr_assert_eq(sc_proctime_init_stepped(&c, INT64_MAX - 10, 10), 0);
	cr_assert_eq(sc_proctime_read(&c, &ms), 0, "%s", sc_errmsg());
	cr_assert_eq(sc_proctime_read(&c, &ms), 0, "%s", sc_errmsg());
	cr_expect_eq(ms, INT64_MAX);
	cr_expect_eq(sc_proctime_read(&c, &ms), SC_EOVERFLOW);
}

Test(proctime, a_negative_start_or_step_is_einval_naming_it)
{
	struct sc_proctime c = untouched;

	cr_assert_eq(sc_proctime_init_stepped(&c, 0, -1), SC_EINVAL);
	cr_expect(strstr(sc_errmsg(), "step_ms -1"), "%s", sc_errmsg());
	cr_expect(same_clock(&c, &untouched));
	cr_assert_eq(sc_proctime_init_stepped(&c, -5, 1), SC_EINVAL);
	cr_expect(strstr(sc_errmsg(), "start_ms -5"), "%s", sc_errmsg());
	cr_expect(same_clock(&c, &untouched));
	cr_assert_eq(sc_proctime_init_stepped(&c, 0, INT64_MIN), SC_EINVAL);
	cr_expect(strstr(sc_errmsg(), "step_ms"), "%s", sc_errmsg());
}

Test(proctime, wall_reads_are_within_a_second_of_realtime_and_never_decrease)
{
	struct sc_proctime c;
	int64_t prev = INT64_MIN;

	cr_assert_eq(sc_proctime_init_wall(&c), 0);
	cr_expect_eq(c.kind, SC_PROCTIME_WALL);
	cr_expect_eq(c.last_ms, INT64_MIN);
	for (int i = 0; i < 1000; i++) {
		int64_t lo = realtime_ms(), ms = INT64_MIN, hi;

		cr_assert_eq(sc_proctime_read(&c, &ms), 0, "%s", sc_errmsg());
		hi = realtime_ms();
		cr_assert_geq(ms, prev, "reading %d: %lld after %lld", i,
			      (long long)ms, (long long)prev);
		cr_assert(ms > lo - 1000 && ms < hi + 1000,
			  "reading %d: %lld, realtime %lld..%lld", i,
			  (long long)ms, (long long)lo, (long long)hi);
		prev = ms;
	}
	cr_expect_eq(c.reads, 1000);
	cr_expect_eq(c.last_ms, prev);
}

Test(proctime, a_wall_clock_stepped_back_reads_as_its_last_reading)
{
	struct sc_proctime c;
	int64_t ahead = realtime_ms() + 3600000, ms = -1;

	/* As if the last reading came before NTP set the clock back by an
	 * hour: the next readings stay there. */
	cr_assert_eq(sc_proctime_init_wall(&c), 0);
	c.last_ms = ahead;
	for (int i = 0; i < 3; i++) {
		cr_assert_eq(sc_proctime_read(&c, &ms), 0, "%s", sc_errmsg());
		cr_expect_eq(ms, ahead, "reading %d: %lld", i, (long long)ms);
	}
}

Test(proctime, null_arguments_are_einval_naming_them)
{
	struct sc_proctime c = untouched;
	int64_t ms = 42;

	cr_expect_eq(sc_proctime_init_wall(NULL), SC_EINVAL);
	cr_expect(strstr(sc_errmsg(), "sc_proctime_init_wall: NULL c"), "%s",
		  sc_errmsg());
	cr_expect_eq(sc_proctime_init_stepped(NULL, 0, 1), SC_EINVAL);
	cr_expect(strstr(sc_errmsg(), "sc_proctime_init_stepped: NULL c"), "%s",
		  sc_errmsg());
	cr_expect_eq(sc_proctime_read(NULL, &ms), SC_EINVAL);
	cr_expect(strstr(sc_errmsg(), "sc_proctime_read: NULL c"), "%s",
		  sc_errmsg());
	cr_expect_eq(sc_proctime_read(&c, NULL), SC_EINVAL);
	cr_expect(strstr(sc_errmsg(), "sc_proctime_read: NULL ms"), "%s",
		  sc_errmsg());
	cr_expect(same_clock(&c, &untouched), "a refused read counted");
	cr_expect_eq(sc_proctime_parse(NULL, &c), SC_EINVAL);
	cr_expect(strstr(sc_errmsg(), "sc_proctime_parse: NULL text"), "%s",
		  sc_errmsg());
	cr_expect_eq(sc_proctime_parse("wall", NULL), SC_EINVAL);
	cr_expect(strstr(sc_errmsg(), "sc_proctime_parse: NULL c"), "%s",
		  sc_errmsg());
	cr_expect(same_clock(&c, &untouched));
	cr_expect_eq(ms, 42);
}

Test(proctime, a_clock_of_unknown_kind_is_einval_on_read)
{
	struct sc_proctime c = untouched;
	int64_t ms = 42;

	c.kind = (enum sc_proctime_kind)7;
	cr_expect_eq(sc_proctime_read(&c, &ms), SC_EINVAL);
	cr_expect(strstr(sc_errmsg(), "kind 7"), "%s", sc_errmsg());
	cr_expect_eq(ms, 42);
	cr_expect_eq(c.reads, 2);
}

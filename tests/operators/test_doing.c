/*
 * test_doing.c - the thread's activity word (operators/doing_int.h): a
 * row table's growth is published as grow of the node the circuit named,
 * and the word is the node's again after it; outside a turn the marks
 * touch nothing.
 */
#include <criterion/criterion.h>

#include "operators/base.h"
#include "operators/doing_int.h"
#include "operators/rowhash_int.h"

Test(doing, rowhash_growth_is_published_as_grow_of_the_node)
{
	struct sc__doing d = {0};
	struct sc__rowhash h;

	sc__rowhash_init(&h, 2);
	/* Timed, so that the marks are seen and the longest phase kept. */
	sc__doing_begin(&d, 0, true, sc_clock_ns());
	sc__doing_node(7, SC__ACT_STEP);
	/* Four million rows: the growth dwarfs the two empty stretches of
	 * the step around it. */
	cr_assert_eq(sc__rowhash_reserve(&h, (size_t)4 << 20), 0);
	cr_assert_eq(sc__doing_read(&d), sc__doing_word(7, SC__ACT_STEP),
		     "after the growth the word is the node's step again");
	sc__doing_end(&d);
	cr_assert(d.seen & (1u << SC__ACT_GROW), "no grow was published");
	cr_assert_eq(sc__doing_word_node(d.long_word), 7);
	cr_assert_str_eq(sc__doing_act_name(sc__doing_word_act(d.long_word)),
			 "grow");
	cr_assert_eq(sc__doing_read(&d), 0, "the end clears the word");
	cr_assert_null(sc__doing_now, "the end leaves no current word");
	sc__rowhash_fini(&h);
}

Test(doing, reserve_that_fits_publishes_nothing)
{
	struct sc__doing d = {0};
	struct sc__rowhash h;

	sc__rowhash_init(&h, 2);
	cr_assert_eq(sc__rowhash_reserve(&h, 1000), 0);
	/* Drain whatever that growth left, so that the next reserve fits. */
	for (int i = 0; i < 64; i++)
		cr_assert_eq(sc__rowhash_reserve(&h, 0), 0);
	sc__doing_begin(&d, sc__doing_word(3, SC__ACT_STEP), true,
			sc_clock_ns());
	cr_assert_eq(sc__rowhash_reserve(&h, 10), 0);
	sc__doing_end(&d);
	cr_assert_not(d.seen & (1u << SC__ACT_GROW),
		      "a reserve that fits was published as grow");
	sc__rowhash_fini(&h);
}

Test(doing, marks_outside_a_turn_touch_nothing)
{
	struct sc__doing d = {0};
	uint64_t was;

	cr_assert_null(sc__doing_now);
	sc__doing_node(5, SC__ACT_STEP);
	was = sc__doing_act(SC__ACT_SORT);
	cr_assert_eq(was, 0, "no word to give back outside a turn");
	sc__doing_back(was);
	cr_assert_eq(sc__doing_read(&d), 0);
	sc__doing_begin(&d, sc__doing_word(-1, SC__ACT_OUTPUT), false, 0);
	cr_assert_eq(sc__doing_word_node(sc__doing_read(&d)), -1);
	was = sc__doing_act(SC__ACT_MERGE);
	cr_assert_eq(sc__doing_read(&d), sc__doing_word(-1, SC__ACT_MERGE));
	sc__doing_back(was);
	cr_assert_eq(sc__doing_read(&d), sc__doing_word(-1, SC__ACT_OUTPUT));
	sc__doing_drop();
	cr_assert_null(sc__doing_now, "a panic's drop forgets the word");
	sc__doing_node(2, SC__ACT_STEP);
	cr_assert_eq(sc__doing_read(&d), sc__doing_word(-1, SC__ACT_OUTPUT),
		     "after the drop a mark touches nothing");
}

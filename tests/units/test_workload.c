/*
 * test_workload.c - the workload interface (units/workload.h) as a plugin
 * author meets it: the loader's refusals, each with a message that names
 * what was wrong (small plugins of tests/support/plugins/toy.c, one thing
 * wrong in each), the argument readers, and the example plugins of
 * tests/examples/ (payments.c, running.c) loaded, run to their end and
 * settled over placements under the seeded scheduler, their references
 * checked on every placed run.
 *
 * The plugins are built without the library: they bind to this
 * executable's copy (ENABLE_EXPORTS, tests/CMakeLists.txt), as they bind
 * to the CLI's. The paths come from compile definitions (SC_TOY_*,
 * SC_EXAMPLE_*).
 */
#include <criterion/criterion.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "operators/error.h"
#include "units/placement.h"
#include "units/settle.h"
#include "units/workload.h"

/* Up to 4 "key=value" arguments, parsed into env (storage static: one
 * environment at a time). */
static struct sc_workload_env
env_of(const char *const *kv)
{
	static char bufs[4][64];
	static struct sc_workload_arg args[4];
	struct sc_workload_env env = {.seed = 5, .args = args};

	for (; kv && *kv; kv++, env.nargs++) {
		cr_assert_lt(env.nargs, 4);
		cr_assert_eq(sc_workload_parse_arg(*kv, bufs[env.nargs], 64,
						   &args[env.nargs]),
			     0, "%s", *kv);
	}
	return env;
}

/* Loading `path` is refused with SC_EINVAL and a message holding each of
 * the NULL-ended `words`. */
static void
refused(const char *path, const char *const *kv, const char *const *words)
{
	struct sc_workload_env env = env_of(kv);
	struct sc_workload *w = NULL;
	int rc = sc_workload_load(path, &env, &w);

	cr_assert_eq(rc, SC_EINVAL, "%s: %s (%s)", path, sc_errname(rc),
		     sc_errmsg());
	cr_assert_null(w);
	for (; *words; words++)
		cr_assert_not_null(strstr(sc_errmsg(), *words),
				   "'%s' not in: %s", *words, sc_errmsg());
}

#define WORDS(...) ((const char *const[]){__VA_ARGS__, NULL})

/* --- the loader's refusals ------------------------------------------------ */

Test(workload, load_refuses_a_file_that_does_not_exist)
{
	refused(SC_TOY_OK ".gone", NULL,
		WORDS("sc_workload_load", ".gone", "No such file"));
}

Test(workload, load_refuses_a_file_that_is_not_a_shared_object)
{
	refused(SC_NOT_A_PLUGIN, NULL, WORDS("toy.c", "invalid ELF header"));
}

Test(workload, load_refuses_an_object_without_the_entry)
{
	refused(SC_TOY_NO_ENTRY, NULL,
		WORDS("exports no sc_workload_entry", "libtoy_no_entry.so"));
}

Test(workload, load_refuses_an_entry_that_returns_null)
{
	refused(SC_TOY_NULL_ENTRY, NULL,
		WORDS("sc_workload_entry() returned NULL"));
}

Test(workload, load_refuses_another_version_naming_both)
{
	char mine[64];

	(void)snprintf(mine, sizeof(mine), "this library has version %u",
		       SC_WORKLOAD_VERSION);
	refused(SC_TOY_VERSION, NULL,
		WORDS("built for interface version 999", mine));
}

Test(workload, load_refuses_a_definition_without_next)
{
	refused(SC_TOY_NO_NEXT, NULL,
		WORDS("workload 'toy' lacks a required callback (next)"));
}

Test(workload, load_keeps_a_failing_create_s_message_with_the_name)
{
	refused(SC_TOY_CREATE_FAILS, NULL,
		WORDS("workload 'toy': toy: the widget is missing"));
}

Test(workload, load_refuses_a_graph_without_an_output)
{
	refused(SC_TOY_NO_OUTPUT, NULL,
		WORDS("workload 'toy''s graph has no output"));
}

Test(workload, load_refuses_an_argument_never_read_naming_it)
{
	refused(SC_TOY_OK, WORDS("speed=3"),
		WORDS("workload 'toy' takes no argument 'speed'"));
	refused(SC_EXAMPLE_PAYMENTS, WORDS("users=3", "usres=3"),
		WORDS("workload 'payments' takes no argument 'usres'"));
}

Test(workload, load_of_a_valid_toy_names_it_and_ends_at_once)
{
	struct sc_workload_env env = env_of(NULL);
	struct sc_workload *w = NULL;
	struct sc_settle_step s;

	cr_assert_eq(sc_workload_load(SC_TOY_OK, &env, &w), 0, "%s",
		     sc_errmsg());
	cr_assert_str_eq(sc_workload_name(w), "toy");
	cr_assert_eq(sc_workload_next(w, &s), SC_EEMPTY);
	sc_workload_destroy(w);
}

/* A create that fails with a bad argument's own message: the plugin's
 * call to the reader reached this executable's error state. */
Test(workload, example_s_bad_argument_is_refused_with_the_reader_s_words)
{
	refused(SC_EXAMPLE_PAYMENTS, WORDS("users=0"),
		WORDS("workload 'payments'", "users=0",
		      "not a whole number in 1..16777216"));
}

/* --- the argument readers ------------------------------------------------- */

Test(workload, arg_u64_takes_the_default_and_checks_the_range)
{
	struct sc_workload_env env =
	    env_of(WORDS("n=7", "big=11", "neg=-1", "empty="));
	uint64_t x = 0;

	cr_assert_eq(sc_workload_arg_u64(&env, "absent", 42, 0, 100, &x), 0);
	cr_assert_eq(x, 42);
	cr_assert_eq(sc_workload_arg_u64(&env, "n", 0, 7, 7, &x), 0);
	cr_assert_eq(x, 7);
	cr_assert_eq(sc_workload_arg_u64(&env, "big", 0, 0, 10, &x), SC_EINVAL);
	cr_assert_not_null(strstr(sc_errmsg(), "big=11"), "%s", sc_errmsg());
	cr_assert_not_null(strstr(sc_errmsg(), "0..10"), "%s", sc_errmsg());
	cr_assert_eq(x, 7, "a refused value leaves *out as it was");
	cr_assert_eq(sc_workload_arg_u64(&env, "neg", 0, 0, 10, &x), SC_EINVAL);
	cr_assert_eq(sc_workload_arg_u64(&env, "empty", 0, 0, 10, &x),
		     SC_EINVAL);
	cr_assert_eq(env.read_, 0xfu, "every key asked for counts as read");
}

Test(workload, arg_bool_takes_six_spellings_and_refuses_others)
{
	static const char *const yes[] = {"true", "1", "yes"};
	static const char *const no[] = {"false", "0", "no"};
	char kv[32];
	bool b;

	for (int i = 0; i < 3; i++) {
		(void)snprintf(kv, sizeof(kv), "b=%s", yes[i]);
		struct sc_workload_env env = env_of(WORDS(kv));
		cr_assert_eq(sc_workload_arg_bool(&env, "b", false, &b), 0);
		cr_assert(b, "%s", kv);
		(void)snprintf(kv, sizeof(kv), "b=%s", no[i]);
		env = env_of(WORDS(kv));
		cr_assert_eq(sc_workload_arg_bool(&env, "b", true, &b), 0);
		cr_assert_not(b, "%s", kv);
	}
	struct sc_workload_env env = env_of(WORDS("b=on"));
	cr_assert_eq(sc_workload_arg_bool(&env, "b", false, &b), SC_EINVAL);
	cr_assert_not_null(strstr(sc_errmsg(), "b=on"), "%s", sc_errmsg());
	cr_assert_eq(sc_workload_arg_bool(&env, "absent", true, &b), 0);
	cr_assert(b, "an absent key gives the default");
}

/* --- the examples --------------------------------------------------------- */

#define MAX_STEPS 64

/* Every submission of the plugin at `path` with arguments kv, until
 * SC_EEMPTY: into steps, their count returned. */
static size_t
run_to_end(const char *path, const char *const *kv, struct sc_workload **w,
	   struct sc_settle_step *steps)
{
	struct sc_workload_env env = env_of(kv);
	size_t n = 0;
	int rc;

	cr_assert_eq(sc_workload_load(path, &env, w), 0, "%s: %s", path,
		     sc_errmsg());
	while ((rc = sc_workload_next(*w, &steps[n])) == 0)
		cr_assert_lt(++n, MAX_STEPS, "%s: no end", path);
	cr_assert_eq(rc, SC_EEMPTY, "%s: %s", path, sc_errmsg());
	cr_assert_eq(sc_workload_next(*w, &steps[n]), SC_EEMPTY,
		     "the end stays the end");
	cr_assert_eq(sc_workload_count(*w), n);
	return n;
}

static int
verify_reference(void *ctx, int output, const struct sc_batch *got)
{
	struct sc_workload *w = ctx;

	return sc_workload_verify(w, output, sc_workload_count(w), got);
}

/* Settles the submissions over placements, each placed run's outputs
 * checked against the workload's reference too. */
static void
settle(struct sc_workload *w, const struct sc_settle_step *steps, size_t n)
{
	static const char *const places[] = {"single", "per-node", "chains",
					     "sharded:2"};
	unsigned flags =
	    sc_workload_def(w)->flags & SC_WORKLOAD_TICKS ? SC_SETTLE_TICKS : 0;
	struct sc_settle_work *work = NULL;

	cr_assert_eq(
	    sc_settle_work_create(sc_workload_graph(w), steps, n, flags, &work),
	    0, "%s", sc_errmsg());
	for (size_t pi = 0; pi < sizeof(places) / sizeof(places[0]); pi++) {
		for (uint64_t seed = 1; seed <= 3; seed++) {
			struct sc_placement *p = NULL;
			struct sc_settle_opts so = {.mode = SC_SETTLE_SIM,
						    .seed = seed,
						    .units = 2,
						    .verify = verify_reference,
						    .verify_ctx = w};
			struct sc_settle_result r;

			cr_assert_eq(sc_placement_parse(sc_workload_graph(w),
							places[pi], 2, &p),
				     0, "%s: %s", places[pi], sc_errmsg());
			cr_assert_eq(sc_settle_run(work, p, &so, &r), 0,
				     "%s seed %llu: %s", places[pi],
				     (unsigned long long)seed, r.why);
			cr_assert(r.ok, "%s seed %llu: %s\n%s", places[pi],
				  (unsigned long long)seed, r.why, r.replay);
			sc_settle_result_fini(&r);
			sc_placement_destroy(p);
		}
	}
	sc_settle_work_destroy(work);
}

static void
release_steps(struct sc_settle_step *steps, size_t n)
{
	for (size_t i = 0; i < n; i++)
		sc_batch_release(steps[i].batch);
}

Test(workload, payments_runs_to_its_end_users_first)
{
	struct sc_settle_step steps[MAX_STEPS];
	struct sc_workload *w = NULL;
	size_t n =
	    run_to_end(SC_EXAMPLE_PAYMENTS,
		       WORDS("users=25", "payments=55", "batch=10"), &w, steps);
	struct sc_graph *g = sc_workload_graph(w);

	/* 3 batches of users, then 6 of payments (the last one of 5). */
	cr_assert_eq(n, 9);
	for (size_t i = 0; i < n; i++)
		cr_assert_eq(steps[i].input,
			     sc_graph_find(g, i < 3 ? "users" : "payments"),
			     "submission %zu", i);
	cr_assert_eq(sc_batch_count(steps[2].batch), 5, "users 20..24");
	/* The last batch: its 5 payments and 2 rows per refund of the
	 * batch before. */
	cr_assert_geq(sc_batch_count(steps[8].batch), 5);
	cr_assert_eq((sc_batch_count(steps[8].batch) - 5) % 2, 0);
	release_steps(steps, n);
	sc_workload_destroy(w);
}

Test(workload, payments_settles_over_placements_and_passes_its_reference)
{
	struct sc_settle_step steps[MAX_STEPS];
	struct sc_workload *w = NULL;
	size_t n = run_to_end(SC_EXAMPLE_PAYMENTS,
			      WORDS("users=30", "payments=120", "batch=20"), &w,
			      steps);

	settle(w, steps, n);
	release_steps(steps, n);
	sc_workload_destroy(w);
}

Test(workload, running_settles_over_placements_and_passes_its_reference)
{
	struct sc_settle_step steps[MAX_STEPS];
	struct sc_workload *w = NULL;
	size_t n = run_to_end(SC_EXAMPLE_RUNNING,
			      WORDS("accounts=6", "ticks=5"), &w, steps);

	cr_assert_eq(n, 10, "a batch and a boundary per tick");
	cr_assert_eq(steps[1].input, SC_SETTLE_TICK);
	cr_assert_null(steps[1].batch);
	settle(w, steps, n);
	release_steps(steps, n);
	sc_workload_destroy(w);
}

/* balanced's calibration feeds the single circuit the workload's first
 * submissions: a tick workload's boundaries are no input of it. */
Test(workload, running_calibrates_balanced_over_its_ticks)
{
	struct sc_workload_env env = env_of(WORDS("accounts=4", "ticks=3"));
	struct sc_workload *w = NULL;
	struct sc_placement *p = NULL;
	double cost[16];

	cr_assert_eq(sc_workload_load(SC_EXAMPLE_RUNNING, &env, &w), 0, "%s",
		     sc_errmsg());
	size_t n = sc_graph_node_count(sc_workload_graph(w));
	cr_assert_leq(n, 16);
	cr_assert_eq(sc_placement_calibrate(sc_workload_graph(w),
					    sc_workload_gen, w, 6, cost, n),
		     0, "%s", sc_errmsg());
	cr_assert_eq(sc_workload_count(w), 6, "3 batches, 3 boundaries");
	cr_assert_gt(cost[sc_graph_find(sc_workload_graph(w), "transfers")],
		     0.0, "the input's rows counted");
	cr_assert_eq(
	    sc_placement_balanced(sc_workload_graph(w), 2, cost, n, &p), 0,
	    "%s", sc_errmsg());
	sc_placement_destroy(p);
	sc_workload_destroy(w);
}

/* The references can fail: a total off by one, and a missing group. */
Test(workload, examples_references_name_a_wrong_row)
{
	struct sc_settle_step steps[MAX_STEPS];
	struct sc_workload *w = NULL;
	size_t n = run_to_end(SC_EXAMPLE_RUNNING,
			      WORDS("accounts=3", "ticks=2"), &w, steps);
	int balance = sc_graph_find(sc_workload_graph(w), "balance");
	uint64_t row[2] = {sc_enc_i64(0), sc_enc_i64(1 << 20)};
	struct sc_batch *wrong = NULL;

	cr_assert_eq(sc_batch_from_records(2, row, NULL, 1, &wrong), 0);
	cr_assert_eq(sc_workload_verify(w, balance, n, wrong), SC_ECALLBACK);
	cr_assert_not_null(strstr(sc_errmsg(), "running: row (0, 1048576)"),
			   "%s", sc_errmsg());
	sc_batch_release(wrong);
	release_steps(steps, n);
	sc_workload_destroy(w);

	n = run_to_end(SC_EXAMPLE_PAYMENTS,
		       WORDS("users=4", "payments=10", "batch=5"), &w, steps);
	cr_assert_eq(sc_batch_from_records(2, row, NULL, 0, &wrong), 0);
	cr_assert_eq(sc_workload_verify(
			 w, sc_graph_find(sc_workload_graph(w), "per_country"),
			 n, wrong),
		     SC_ECALLBACK);
	cr_assert_not_null(strstr(sc_errmsg(), "per_country has 0 rows"), "%s",
			   sc_errmsg());
	sc_batch_release(wrong);
	release_steps(steps, n);
	sc_workload_destroy(w);
}

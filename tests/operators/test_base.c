/*
 * test_base.c - the base (operators/base.h, base_int.h): the seeded
 * generator is splitmix64, the clocks are monotonic, a deadline saturates
 * instead of wrapping, a timed wait runs on the monotonic clock, and a
 * failing SC_ASSERT names its file, line and condition.
 *
 * This file turns SC_ASSERT on for itself (the macro is checked where
 * SC_DEBUG_ASSERTS is defined), after noting whether the build had it on.
 */
#if defined(SC_DEBUG_ASSERTS)
#define BUILD_ASSERTS 1
#else
#define BUILD_ASSERTS	 0
#define SC_DEBUG_ASSERTS 1
#endif

#include <criterion/criterion.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "operators/base.h"
#include "operators/base_int.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SANITIZER_BUILD 1
#else
#define SANITIZER_BUILD 0
#endif

#define MS 1000000ULL

Test(base, splitmix_next_gives_the_reference_sequence)
{
	/* The first outputs of splitmix64 from state 0 (Vigna's
	 * splitmix64.c), so every seeded schedule, placement and workload
	 * replays on every machine. */
	uint64_t s = 0;

	cr_assert_eq(sc_splitmix_next(&s), 0xe220a8397b1dcdafULL);
	cr_assert_eq(sc_splitmix_next(&s), 0x6e789e6aa1b965f4ULL);
	cr_assert_eq(sc_splitmix_next(&s), 0x06c45d188009454fULL);
	cr_assert_eq(s, 3 * 0x9e3779b97f4a7c15ULL);
}

Test(base, splitmix_mix_is_next_on_a_state_of_its_argument)
{
	for (uint64_t x = 0; x < 1000; x += 7) {
		uint64_t s = x * 0x12345ULL;

		cr_assert_eq(sc_splitmix_mix(x * 0x12345ULL),
			     sc_splitmix_next(&s));
	}
}

Test(base, clocks_never_step_back_and_agree)
{
	uint64_t last = sc_clock_ns();

	for (int i = 0; i < 10000; i++) {
		uint64_t t = sc_clock_ns();

		cr_assert_geq(t, last);
		last = t;
	}
	/* The coarse clock is the same clock at the tick's resolution: it
	 * lags the precise one by at most a few ticks. */
	uint64_t c = sc_clock_coarse_ns(), p = sc_clock_ns();

	cr_assert_leq(c, p + 1 * MS);
	cr_assert_lt(p - c, 50 * MS, "coarse %llu, precise %llu",
		     (unsigned long long)c, (unsigned long long)p);
}

Test(base, deadline_saturates_instead_of_wrapping)
{
	struct timespec ts;
	uint64_t now = sc_clock_ns();

	cr_assert_eq(sc__deadline_add(5, 7), 12);
	cr_assert_eq(sc__deadline_add(5, UINT64_MAX), UINT64_MAX);
	cr_assert_eq(sc__deadline_add(UINT64_MAX - 1, 1), UINT64_MAX);
	cr_assert_eq(sc__deadline_add(UINT64_MAX - 1, 2), UINT64_MAX);

	sc__clock_deadline(&ts, UINT64_MAX);
	cr_assert_eq((uint64_t)ts.tv_sec, UINT64_MAX / 1000000000ULL);
	cr_assert_eq((uint64_t)ts.tv_nsec, UINT64_MAX % 1000000000ULL);

	sc__clock_deadline(&ts, 2000 * MS);
	uint64_t at =
	    (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
	cr_assert_geq(at, now + 2000 * MS);
	cr_assert_lt(at, now + 3000 * MS);
}

struct waiter {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int signalled;
};

static void
waiter_init(struct waiter *w)
{
	cr_assert_eq(pthread_mutex_init(&w->mu, NULL), 0);
	cr_assert_eq(sc__cond_init(&w->cv), 0);
	w->signalled = 0;
}

static void
waiter_fini(struct waiter *w)
{
	pthread_cond_destroy(&w->cv);
	pthread_mutex_destroy(&w->mu);
}

Test(base, timed_wait_runs_on_the_monotonic_clock)
{
	/* Were the condvar on CLOCK_REALTIME, a deadline read from the
	 * monotonic clock (time since boot) would lie decades in the past,
	 * and the wait would return at once. */
	struct waiter w;
	struct timespec ts;
	uint64_t t0;
	int rc;

	waiter_init(&w);
	pthread_mutex_lock(&w.mu);
	t0 = sc_clock_ns();
	sc__clock_deadline(&ts, 30 * MS);
	do
		rc = pthread_cond_timedwait(&w.cv, &w.mu, &ts);
	while (rc == 0);
	pthread_mutex_unlock(&w.mu);
	cr_assert_eq(rc, ETIMEDOUT);
	cr_assert_geq(sc_clock_ns() - t0, 30 * MS);
	cr_assert_lt(sc_clock_ns() - t0, 10000 * MS);
	waiter_fini(&w);
}

static void *
signal_later(void *arg)
{
	struct waiter *w = arg;
	struct timespec nap = {0, 30L * 1000 * 1000};

	nanosleep(&nap, NULL);
	pthread_mutex_lock(&w->mu);
	w->signalled = 1;
	pthread_cond_signal(&w->cv);
	pthread_mutex_unlock(&w->mu);
	return NULL;
}

Test(base, huge_timeout_waits_instead_of_timing_out_at_once)
{
	/* now + UINT64_MAX wraps to just before now: without the
	 * saturation the wait would time out at once. */
	struct waiter w;
	struct timespec ts;
	pthread_t th;
	int rc = 0;

	waiter_init(&w);
	sc__clock_deadline(&ts, UINT64_MAX);
	cr_assert_eq(pthread_create(&th, NULL, signal_later, &w), 0);
	pthread_mutex_lock(&w.mu);
	while (!w.signalled && rc == 0)
		rc = pthread_cond_timedwait(&w.cv, &w.mu, &ts);
	pthread_mutex_unlock(&w.mu);
	cr_assert_eq(pthread_join(th, NULL), 0);
	if (rc != 0) {
		char why[128] = "";

		(void)strerror_r(rc, why, sizeof(why));
		cr_assert_fail("timedwait returned %d (%s)", rc, why);
	}
	cr_assert(w.signalled);
	waiter_fini(&w);
}

static void
fail_an_assert(void)
{
	SC_ASSERT(1 + 1 == 3);
}
static const int fail_line = __LINE__ - 2; /* the SC_ASSERT's line */

Test(base, failing_assert_names_file_line_and_condition)
{
	char buf[512], want[128];
	int fds[2], status;
	ssize_t n;
	pid_t pid;

	cr_assert_eq(pipe(fds), 0);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		dup2(fds[1], 2);
		fail_an_assert();
		_exit(0); /* reached only if the assert did not fire */
	}
	close(fds[1]);
	n = read(fds[0], buf, sizeof(buf) - 1);
	close(fds[0]);
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT,
		  "status %d", status);
	cr_assert_gt(n, 0);
	buf[n] = '\0';
	(void)snprintf(want, sizeof(want),
		       "test_base.c:%d: assertion failed: 1 + 1 == 3\n",
		       fail_line);
	cr_assert(strstr(buf, want), "got '%s', want '%s'", buf, want);
}

Test(base, asserts_are_on_in_sanitizer_and_debug_builds)
{
	/* tools/test's ASan and TSan passes must run with the asserts on;
	 * an optimised build without a sanitizer must have them off. */
#if defined(__OPTIMIZE__)
	int optimised = 1;
#else
	int optimised = 0;
#endif
	cr_assert_eq(BUILD_ASSERTS, SANITIZER_BUILD || !optimised,
		     "asserts %s in a %s%s build", BUILD_ASSERTS ? "on" : "off",
		     optimised ? "optimised" : "unoptimised",
		     SANITIZER_BUILD ? " sanitizer" : "");
}

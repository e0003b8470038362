/*
 * test_panic.c - a panic kills the unit whose turn raised it and nothing
 * else (SC_THREADED: some scenarios run on a real pool).
 *
 * SC_BOTH_EXECUTORS: every test here runs on each executor kind (ctest
 * registers NAME and NAME.queue, cmake/sc_helpers.cmake).
 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "operators/base_int.h"
#include "operators/error.h"
#include "runtime/panic.h"
#include "runtime/pool.h"
#include "tests/support/rt_toys.h"

static void
sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	nanosleep(&ts, NULL);
}

static struct sc_exec *
new_exec(void)
{
	struct sc_exec *ex = NULL;

	cr_assert_eq(sc_exec_create(NULL, &ex), 0);
	return ex;
}

static void
panic_now(struct rt_probe *p, void *ctx)
{
	sc_panic("%s gives up (%d)", p->name, 42);
}

/* --- the guard itself ---------------------------------------------------- */

static void
assert_fn(void *arg)
{
	int three = *(int *)arg;

	SC_UNIT_ASSERT(three == 2, "three is %d", three);
}

Test(panic, unit_assert_reports_the_condition_and_the_place, .timeout = 20)
{
	struct sc_panic_record rec;
	int three = 3;

	cr_assert_eq(sc_panic_guard(assert_fn, &three, &rec), SC_EPANIC);
	cr_expect(strstr(rec.message, "three == 2"), "%s", rec.message);
	cr_expect(strstr(rec.message, "test_panic.c"), "%s", rec.message);
	cr_expect(strstr(rec.message, "three is 3"), "%s", rec.message);
	cr_expect_eq(rec.signo, 0);
	cr_expect(!sc_panic_guarded(), "the guard is popped");
}

static void
outer_fn(void *arg)
{
	struct sc_panic_record inner;

	/* A panic goes to the innermost guard; the outer one goes on. */
	cr_assert_eq(sc_panic_guard(assert_fn, arg, &inner), SC_EPANIC);
	sc_panic("outer after inner: %.20s", inner.message);
}

Test(panic, guards_nest, .timeout = 20)
{
	struct sc_panic_record rec;
	int three = 3;

	cr_assert_eq(sc_panic_guard(outer_fn, &three, &rec), SC_EPANIC);
	cr_expect(strstr(rec.message, "outer after inner"), "%s", rec.message);
}

Test(panic, panic_outside_any_unit_aborts, .signal = SIGABRT, .timeout = 20)
{
	sc_panic("nobody to catch this");
}

static void
xmalloc_fails(struct rt_probe *p, void *ctx)
{
	sc__xmalloc_fail_after(0);
	free(sc_xmalloc(64));
}

Test(panic, allocation_failure_in_a_turn_kills_the_unit, .timeout = 20)
{
	struct sc_exec *ex = new_exec();
	struct sc_panic_record rec;
	struct rt_probe *p;
	struct sc_claim c;
	uint32_t id;

	p = rt_probe_add(ex, &id);
	p->on_turn = xmalloc_fails;
	cr_assert_eq(sc_exec_kick(ex, id), 0);
	sc_claim_init(&c);
	cr_assert_eq(sc_exec_claim(ex, 0, &c), 0);
	cr_expect_eq(sc_exec_run(ex, &c, 1), SC_EPANIC);
	cr_expect_null(c.unit);
	cr_expect_eq(sc_exec_unit_state(ex, id), SC_UNIT_DEAD);
	cr_expect_eq(sc_exec_panic(ex, 0, &rec), 0);
	cr_expect(strstr(rec.message, "out of memory"), "%s", rec.message);
	sc_claim_fini(&c);
	sc_exec_destroy(ex);
}

/* --- the executor's side ------------------------------------------------- */

Test(panic, dead_unit_is_never_run_or_kicked_again, .timeout = 20)
{
	struct sc_exec *ex = new_exec();
	struct sc_exec_info info;
	struct rt_probe *p, *n;
	atomic_int destroyed = 0;
	struct sc_claim c;
	uint32_t id, in;

	p = rt_probe_add(ex, &id);
	p->on_turn = panic_now;
	p->destroyed = &destroyed;
	n = rt_probe_add(ex, &in);
	n->nbrs[0] = id;
	n->n_nbrs = 1;
	n->result = (struct sc_turn){1, false};
	sc_claim_init(&c);
	cr_assert_eq(sc_exec_kick(ex, id), 0);
	cr_assert_eq(sc_exec_claim(ex, 0, &c), 0);
	cr_assert_eq(sc_exec_run(ex, &c, 1), SC_EPANIC);
	cr_expect_eq(sc_exec_unit_state(ex, id), SC_UNIT_DEAD);
	cr_expect_eq(atomic_load(&destroyed), 1, "destroyed once, at once");
	/* Kicked by the host and by a neighbour's progress: ignored. */
	cr_expect_eq(sc_exec_kick(ex, id), 0);
	cr_expect_eq(sc_exec_kick(ex, in), 0);
	cr_assert_eq(sc_exec_claim(ex, 0, &c), 0);
	cr_expect_eq(c.id, in);
	cr_assert_eq(sc_exec_run(ex, &c, 1), 0);
	cr_assert_eq(sc_exec_finish(ex, &c), 0);
	cr_expect_eq(sc_exec_claim(ex, 0, &c), SC_EEMPTY);
	cr_expect_eq(sc_exec_unit_state(ex, id), SC_UNIT_DEAD);
	sc_exec_info(ex, &info);
	cr_expect_eq(info.queue_len, 0);
	cr_expect_eq(info.panics, 1);
	sc_claim_fini(&c);
	cr_expect_eq(sc_exec_destroy(ex), 0);
	cr_expect_eq(atomic_load(&destroyed), 1, "not destroyed twice");
}

Test(panic, neighbours_naming_a_missing_unit_kills_the_unit, .timeout = 20)
{
	struct sc_exec *ex = new_exec();
	struct sc_panic_record rec;
	struct rt_probe *p;
	uint32_t id;

	p = rt_probe_add(ex, &id);
	p->nbrs[0] = 99;
	p->n_nbrs = 1;
	p->result = (struct sc_turn){1, false};
	cr_assert_eq(sc_exec_kick(ex, id), 0);
	cr_expect_eq(sc_exec_wait_idle(ex, 1, NULL), SC_ETIMEDOUT);
	{
		struct sc_claim c;

		sc_claim_init(&c);
		cr_assert_eq(sc_exec_claim(ex, 0, &c), 0);
		cr_expect_eq(sc_exec_run(ex, &c, 1), SC_EPANIC);
		sc_claim_fini(&c);
	}
	cr_expect_eq(sc_exec_wait_idle(ex, 0, &rec), SC_EPANIC);
	cr_expect(strstr(rec.message, "unit 99"), "%s", rec.message);
	cr_expect_eq(sc_exec_unit_state(ex, id), SC_UNIT_DEAD);
	sc_exec_destroy(ex);
}

Test(panic, panic_kills_that_unit_only, .timeout = 20)
{
	struct sc_pool_opts o = {.workers = 2, .budget = 3};
	struct sc_exec *ex = new_exec();
	struct sc_panic_record rec;
	struct rt_net *bad, *good;
	struct sc_pool *pool;
	char why[128];

	cr_assert_eq(rt_chain_create(ex, 3, 4, 500, &bad), 0);
	cr_assert_eq(rt_chain_create(ex, 3, 4, 2000, &good), 0);
	rt_net_faults(bad, 1)->panic_at_turn = 3;
	cr_assert_eq(sc_pool_create(ex, &o, &pool), 0);
	/* The bad chain's host edge fills once its middle is dead: feed the
	 * good chain, and the bad one only what it can take. */
	for (int i = 0; i < 200; i++)
		(void)rt_net_host_step(bad, ex, 3);
	cr_assert_eq(rt_net_feed_all(good, ex), 0);
	cr_expect_eq(sc_exec_wait_idle(ex, 0, &rec), SC_EPANIC);
	cr_expect_eq(rec.unit, rt_net_id(bad, 1));
	cr_expect_str_eq(rec.name, "chain1");
	cr_expect(strstr(rec.message, "injected panic in turn 3"), "%s",
		  rec.message);
	cr_expect_geq(rec.worker, 0);
	cr_expect_eq(sc_exec_unit_state(ex, rt_net_id(bad, 1)), SC_UNIT_DEAD);
	for (uint32_t i = 0; i < 3; i++) {
		if (i != 1)
			cr_expect_neq(sc_exec_unit_state(ex, rt_net_id(bad, i)),
				      SC_UNIT_DEAD);
		cr_expect_neq(sc_exec_unit_state(ex, rt_net_id(good, i)),
			      SC_UNIT_DEAD);
	}
	cr_expect(rt_net_check(good, why, sizeof(why)), "%s", why);
	cr_expect_eq(sc_pool_finish(pool, NULL), SC_EPANIC);
	cr_expect_eq(sc_exec_destroy(ex), 0);
	rt_net_destroy(bad);
	rt_net_destroy(good);
}

Test(panic, destroy_that_panics_does_not_kill_the_worker, .timeout = 20)
{
	struct sc_pool_opts o = {.workers = 1};
	struct sc_exec *ex = new_exec();
	struct sc_panic_record rec;
	struct sc_exec_info info;
	struct rt_net *net, *other;
	struct sc_pool *pool;
	char why[128];

	cr_assert_eq(rt_chain_create(ex, 1, 4, 4, &net), 0);
	cr_assert_eq(rt_chain_create(ex, 2, 4, 100, &other), 0);
	rt_net_faults(net, 0)->panic_at_turn = 1;
	rt_net_faults(net, 0)->panic_in_destroy = true;
	cr_assert_eq(sc_pool_create(ex, &o, &pool), 0);
	cr_assert_eq(rt_net_feed_all(net, ex), 0);
	cr_expect_eq(sc_exec_wait_idle(ex, 0, NULL), SC_EPANIC);
	sc_exec_info(ex, &info);
	cr_expect_eq(info.workers_live, 1, "the only worker is still there");
	cr_expect_eq(info.panics, 2);
	cr_assert_eq(sc_exec_panic(ex, 1, &rec), 0);
	cr_expect(rec.in_destroy);
	cr_expect(strstr(rec.message, "injected panic in destroy"), "%s",
		  rec.message);
	/* The same worker runs the rest. */
	cr_assert_eq(rt_net_feed_all(other, ex), 0);
	cr_expect_eq(sc_exec_wait_idle(ex, 0, NULL), SC_EPANIC);
	cr_expect(rt_net_check(other, why, sizeof(why)), "%s", why);
	cr_expect_eq(sc_pool_finish(pool, &rec), SC_EPANIC);
	cr_expect(!rec.in_destroy, "the first panic is the turn's");
	sc_exec_destroy(ex);
	rt_net_destroy(net);
	rt_net_destroy(other);
}

struct waiter {
	struct sc_exec *ex;
	struct sc_panic_record rec;
	atomic_int rc;
	atomic_bool done;
};

static void *
wait_thread(void *arg)
{
	struct waiter *w = arg;

	atomic_store(&w->rc, sc_exec_wait_idle(w->ex, 0, &w->rec));
	atomic_store(&w->done, true);
	return NULL;
}

static void
hold_until_open(struct rt_probe *p, void *ctx)
{
	while (!atomic_load((atomic_bool *)ctx))
		sleep_ms(1);
}

Test(panic, wait_idle_reports_the_first_panic_once_quiet, .timeout = 20)
{
	struct sc_pool_opts o = {.workers = 2};
	struct sc_exec *ex = new_exec();
	struct waiter w = {.ex = ex};
	struct rt_probe *busy, *bad, *worse;
	atomic_bool open = false;
	struct sc_pool *pool;
	uint32_t ib, ip, iw;
	pthread_t t;

	busy = rt_probe_add(ex, &ib);
	busy->on_turn = hold_until_open;
	busy->ctx = &open;
	bad = rt_probe_add(ex, &ip);
	bad->on_turn = panic_now;
	worse = rt_probe_add(ex, &iw);
	worse->on_turn = panic_now;
	cr_assert_eq(sc_pool_create(ex, &o, &pool), 0);
	cr_assert_eq(sc_exec_kick(ex, ib), 0);
	cr_assert_eq(sc_exec_kick(ex, ip), 0);
	while (sc_exec_unit_state(ex, ip) != SC_UNIT_DEAD)
		sleep_ms(1);
	cr_assert_eq(sc_exec_kick(ex, iw), 0);
	while (sc_exec_unit_state(ex, iw) != SC_UNIT_DEAD)
		sleep_ms(1);
	/* Nothing queued now, one unit still running: not quiet yet. */
	cr_assert_eq(pthread_create(&t, NULL, wait_thread, &w), 0);
	sleep_ms(30);
	cr_expect(!atomic_load(&w.done), "returned while a unit still ran");
	atomic_store(&open, true);
	pthread_join(t, NULL);
	cr_expect_eq(atomic_load(&w.rc), SC_EPANIC);
	cr_expect_eq(w.rec.unit, ip, "the first panic, not the second");
	cr_expect_str_eq(w.rec.name, "probe1");
	cr_expect(strstr(w.rec.message, "probe1 gives up (42)"), "%s",
		  w.rec.message);
	cr_expect_eq(atomic_load(&busy->turns), 1);
	cr_expect_eq(sc_pool_finish(pool, NULL), SC_EPANIC);
	sc_exec_destroy(ex);
}

Test(panic, segfault_in_a_turn_becomes_a_panic_when_catch_faults, .timeout = 20)
{
	struct sc_pool_opts o = {.workers = 2, .catch_faults = true};
	struct sc_exec *ex = new_exec();
	struct sc_panic_record rec;
	struct rt_net *bad, *good;
	struct sc_exec_info info;
	struct sc_pool *pool;
	char why[128];

	cr_assert_eq(rt_chain_create(ex, 2, 4, 4, &bad), 0);
	cr_assert_eq(rt_chain_create(ex, 3, 4, 1000, &good), 0);
	rt_net_faults(bad, 0)->segv_at_turn = 1;
	cr_assert_eq(sc_pool_create(ex, &o, &pool), 0);
	cr_assert_eq(rt_net_feed_all(bad, ex), 0);
	cr_assert_eq(rt_net_feed_all(good, ex), 0);
	cr_expect_eq(sc_exec_wait_idle(ex, 0, &rec), SC_EPANIC);
	cr_expect_eq(rec.signo, SIGSEGV);
	cr_expect(strstr(rec.message, "SIGSEGV"), "%s", rec.message);
	cr_expect(strstr(rec.message, "0x8"), "%s", rec.message);
	cr_expect_eq(rec.unit, rt_net_id(bad, 0));
	sc_exec_info(ex, &info);
	cr_expect_eq(info.workers_live, 2);
	cr_expect(rt_net_check(good, why, sizeof(why)), "%s", why);
	cr_expect_eq(sc_pool_finish(pool, NULL), SC_EPANIC);
	sc_exec_destroy(ex);
	rt_net_destroy(bad);
	rt_net_destroy(good);
}

/* --- which signals become panics ---------------------------------------------
 *
 * The fault handler is process wide and installed once, so each scenario
 * runs in a forked child that first sets the disposition the handler will
 * chain to (SIG_DFL, SIG_IGN or a handler of the test's own: also what
 * makes the scenarios the same under ASan, whose own SIGSEGV handler would
 * otherwise be the previous one). A child reports with its exit status
 * (no Criterion assertion runs there): 0 when every step held, 10 + the
 * step that did not; a child that should die must die by the signal.
 */

/* Volatile so that the compiler cannot see the write is to page 0. */
static volatile uintptr_t bad_address = 8;

static void
segv_fn(void *arg)
{
	(void)arg;
	*(volatile int *)bad_address = 1; /* a hard fault, si_code > 0 */
}

static void
raise_fn(void *arg)
{
	(void)raise(*(int *)arg);
}

static void
kill_fn(void *arg)
{
	(void)kill(getpid(), *(int *)arg);
}

/* The disposition the handler finds and chains to. */
static void
child_prev(int signo, void (*handler)(int))
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = handler;
	sigemptyset(&sa.sa_mask);
	if (sigaction(signo, &sa, NULL) != 0)
		_exit(2);
}

static void
child_catch(void)
{
	if (sc_panic_catch_faults(true) != 0)
		_exit(3);
}

/* Run fn in a forked child with its stderr in err[cap]; its wait status. */
static int
in_child(void (*fn)(void *), void *arg, char *err, size_t cap)
{
	size_t n = 0;
	int fds[2], st = 0;
	ssize_t got;
	pid_t pid;

	cr_assert_eq(pipe(fds), 0);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		close(fds[0]);
		if (dup2(fds[1], STDERR_FILENO) < 0)
			_exit(4);
		fn(arg);
		_exit(0);
	}
	close(fds[1]);
	while (n + 1 < cap && (got = read(fds[0], err + n, cap - 1 - n)) > 0)
		n += (size_t)got;
	err[n] = '\0';
	close(fds[0]);
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	return st;
}

static void
expect_exit_0(int st, const char *err)
{
	cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 0,
		  "child: %s %d; stderr: %s", WIFEXITED(st) ? "exit" : "signal",
		  WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st), err);
}

static void
expect_killed_by(int st, int signo, const char *err)
{
	cr_expect(WIFSIGNALED(st) && WTERMSIG(st) == signo,
		  "child should die by signal %d: %s %d; stderr: %s", signo,
		  WIFEXITED(st) ? "exit" : "signal",
		  WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st), err);
}

/* Two faulting turns in a row both panic: one fault does not disarm. */
static void
two_faults_child(void *arg)
{
	struct sc_panic_record rec;

	(void)arg;
	child_prev(SIGSEGV, SIG_DFL);
	child_catch();
	for (int i = 0; i < 3; i++) {
		memset(&rec, 0, sizeof(rec));
		if (sc_panic_guard(segv_fn, NULL, &rec) != SC_EPANIC)
			_exit(10 + i);
		if (rec.signo != SIGSEGV || !strstr(rec.message, "SIGSEGV"))
			_exit(20 + i);
	}
	_exit(0);
}

Test(panic, successive_faults_in_guards_all_become_panics, .timeout = 20)
{
	char err[512];

	expect_exit_0(in_child(two_faults_child, NULL, err, sizeof(err)), err);
}

/* A turn that blocked the fault signals and then faulted leaves them
 * unblocked after the jump: a blocked fault signal would kill the process
 * at the next fault instead of reaching the handler. */
static void
block_then_segv_fn(void *arg)
{
	sigset_t set;

	(void)arg;
	sigemptyset(&set);
	sigaddset(&set, SIGBUS);
	sigaddset(&set, SIGFPE);
	(void)pthread_sigmask(SIG_BLOCK, &set, NULL);
	segv_fn(NULL);
}

static void
unblock_child(void *arg)
{
	struct sc_panic_record rec;
	sigset_t now;

	(void)arg;
	child_prev(SIGSEGV, SIG_DFL);
	child_catch();
	if (sc_panic_guard(block_then_segv_fn, NULL, &rec) != SC_EPANIC)
		_exit(10);
	if (pthread_sigmask(SIG_BLOCK, NULL, &now) != 0)
		_exit(11);
	if (sigismember(&now, SIGBUS) || sigismember(&now, SIGFPE))
		_exit(12);
	_exit(0);
}

Test(panic, fault_signals_are_unblocked_after_a_caught_fault, .timeout = 20)
{
	char err[512];

	expect_exit_0(in_child(unblock_child, NULL, err, sizeof(err)), err);
}

/* A SIGSEGV sent while the previous disposition was SIG_IGN is ignored, as
 * it would have been, and the handler stays armed for the real faults. */
static void
sent_then_faults_child(void *arg)
{
	struct sc_panic_record rec;

	(void)arg;
	child_prev(SIGSEGV, SIG_IGN);
	child_catch();
	if (kill(getpid(), SIGSEGV) != 0)
		_exit(5);
	for (int i = 0; i < 2; i++)
		if (sc_panic_guard(segv_fn, NULL, &rec) != SC_EPANIC ||
		    rec.signo != SIGSEGV)
			_exit(10 + i);
	_exit(0);
}

Test(panic, sent_signal_outside_a_guard_leaves_the_handler_armed, .timeout = 20)
{
	char err[512];

	expect_exit_0(in_child(sent_then_faults_child, NULL, err, sizeof(err)),
		      err);
}

/* raise or kill of a fault signal from inside a guard (si_code <= 0) is
 * not a fault of the turn: with SIG_DFL before, the process dies by it. */
struct sent_case {
	void (*fn)(void *); /* raise_fn or kill_fn */
	int signo;
};

static void
sent_in_guard_child(void *arg)
{
	struct sent_case *c = arg;
	struct sc_panic_record rec;
	int signo = c->signo;

	child_prev(signo, SIG_DFL);
	child_catch();
	(void)sc_panic_guard(c->fn, &signo, &rec);
	_exit(0); /* survived: the signal was swallowed or made a panic */
}

Test(panic, signal_sent_inside_a_guard_is_not_a_panic, .timeout = 20)
{
	struct sent_case cases[] = {
	    {raise_fn, SIGSEGV},
	    {kill_fn, SIGSEGV},
	    {raise_fn, SIGBUS},
	    {kill_fn, SIGFPE},
	};
	char err[512];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		expect_killed_by(
		    in_child(sent_in_guard_child, &cases[i], err, sizeof(err)),
		    cases[i].signo, err);
}

/* With a handler of the user's before, a sent signal goes to it, in a
 * guard or not, and the real faults still become panics. */
static atomic_int user_handler_calls;

static void
user_handler(int signo)
{
	(void)signo;
	atomic_fetch_add(&user_handler_calls, 1);
}

static void
previous_handler_child(void *arg)
{
	struct sc_panic_record rec;
	int signo = SIGSEGV;

	(void)arg;
	child_prev(SIGSEGV, user_handler);
	child_catch();
	if (sc_panic_guard(raise_fn, &signo, &rec) != 0)
		_exit(10); /* made a panic */
	if (atomic_load(&user_handler_calls) != 1)
		_exit(11);
	if (kill(getpid(), SIGSEGV) != 0 ||
	    atomic_load(&user_handler_calls) != 2)
		_exit(12);
	if (sc_panic_guard(segv_fn, NULL, &rec) != SC_EPANIC)
		_exit(13);
	if (atomic_load(&user_handler_calls) != 2)
		_exit(14); /* a real fault in a guard is ours */
	_exit(0);
}

Test(panic, sent_signal_goes_to_the_previous_handler, .timeout = 20)
{
	char err[512];

	expect_exit_0(in_child(previous_handler_child, NULL, err, sizeof(err)),
		      err);
}

/* Outside any guard the handler changes nothing: a fault, or a signal
 * sent, kills the process by that signal. */
static void
outside_child(void *arg)
{
	int signo = SIGSEGV;

	child_prev(SIGSEGV, SIG_DFL);
	child_catch();
	if (arg)
		kill_fn(&signo);
	else
		segv_fn(NULL);
	_exit(0);
}

Test(panic, fault_outside_a_guard_kills_the_process_by_its_signal,
     .timeout = 20)
{
	char err[512];

	expect_killed_by(in_child(outside_child, NULL, err, sizeof(err)),
			 SIGSEGV, err);
	expect_killed_by(in_child(outside_child, "kill", err, sizeof(err)),
			 SIGSEGV, err);
}

/* A fault while the thread holds a lock of subcirc (sc__lock_depth > 0)
 * would leave the lock held for ever: the process dies by the signal,
 * saying why, instead of making it a panic. */
static void
segv_holding_fn(void *arg)
{
	(void)arg;
	sc__lock_enter();
	segv_fn(NULL);
}

static void
fault_holding_child(void *arg)
{
	struct sc_panic_record rec;

	(void)arg;
	child_prev(SIGSEGV, SIG_DFL);
	child_catch();
	(void)sc_panic_guard(segv_holding_fn, NULL, &rec);
	_exit(0); /* made a panic, lock and all */
}

Test(panic, fault_while_holding_a_lock_kills_the_process_with_a_message,
     .timeout = 20)
{
	char err[512];

	expect_killed_by(in_child(fault_holding_child, NULL, err, sizeof(err)),
			 SIGSEGV, err);
	cr_expect(strstr(err, "fault inside subcirc while holding a lock: "
			      "cannot recover"),
		  "stderr: %s", err);
	cr_expect(strstr(err, "SIGSEGV at address 0x8"), "stderr: %s", err);
}

static void
panic_holding_fn(void *arg)
{
	(void)arg;
	sc__lock_enter();
	sc_panic("under a lock");
}

static void
panic_holding_child(void *arg)
{
	struct sc_panic_record rec;

	(void)arg;
	(void)sc_panic_guard(panic_holding_fn, NULL, &rec);
	_exit(0);
}

Test(panic, panic_while_holding_a_lock_aborts_with_a_message, .timeout = 20)
{
	char err[512];

	expect_killed_by(in_child(panic_holding_child, NULL, err, sizeof(err)),
			 SIGABRT, err);
	cr_expect(strstr(err, "while holding a lock: cannot recover"),
		  "stderr: %s", err);
	cr_expect(strstr(err, "under a lock"), "stderr: %s", err);
}

/* The executor's own guard, on one worker: each faulting turn is a panic,
 * the worker survives them all, and the other units run to the end. */
Test(panic, successive_faulting_turns_on_one_worker_all_become_panics,
     .timeout = 20)
{
	struct sc_pool_opts o = {.workers = 1, .catch_faults = true};
	struct sc_exec *ex = new_exec();
	struct rt_net *bad[3], *good;
	struct sc_panic_record rec;
	struct sc_exec_info info;
	struct sc_pool *pool;
	char why[128];

	for (int i = 0; i < 3; i++) {
		cr_assert_eq(rt_chain_create(ex, 1, 4, 4, &bad[i]), 0);
		rt_net_faults(bad[i], 0)->segv_at_turn = 1;
	}
	cr_assert_eq(rt_chain_create(ex, 2, 4, 100, &good), 0);
	cr_assert_eq(sc_pool_create(ex, &o, &pool), 0);
	for (int i = 0; i < 3; i++) {
		cr_assert_eq(rt_net_feed_all(bad[i], ex), 0);
		/* One at a time, so the same worker takes each fault. */
		while (sc_exec_unit_state(ex, rt_net_id(bad[i], 0)) !=
		       SC_UNIT_DEAD)
			sleep_ms(1);
	}
	cr_assert_eq(rt_net_feed_all(good, ex), 0);
	cr_expect_eq(sc_exec_wait_idle(ex, 0, &rec), SC_EPANIC);
	sc_exec_info(ex, &info);
	cr_expect_eq(info.panics, 3);
	cr_expect_eq(info.workers_live, 1);
	for (uint32_t i = 0; i < 3; i++) {
		cr_assert_eq(sc_exec_panic(ex, i, &rec), 0);
		cr_expect_eq(rec.signo, SIGSEGV, "%s", rec.message);
	}
	cr_expect(rt_net_check(good, why, sizeof(why)), "%s", why);
	cr_expect_eq(sc_pool_finish(pool, NULL), SC_EPANIC);
	sc_exec_destroy(ex);
	for (int i = 0; i < 3; i++)
		rt_net_destroy(bad[i]);
	rt_net_destroy(good);
}

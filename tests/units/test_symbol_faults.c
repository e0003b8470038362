/*
 * test_symbol_faults.c - a unit that passes a bad pointer to the symbol
 * table dies alone: the table's mutex is never held while it reads the
 * caller's memory, so every later intern, from other units and other
 * threads, completes; and a fault inside the table's own
 * locked code ends the process with a message instead of a hang.
 * SC_THREADED: a real pool; each wait has a deadline, so a hang fails
 * instead of blocking the suite.
 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "operators/base.h"
#include "operators/symbol.h"
#include "runtime/panic.h"
#include "runtime/pool.h"
#include "tests/support/rt_toys.h"

#define WAIT_NS (5ULL * 1000000000ULL)

/* Volatile so that the compiler cannot see the pointer is into page 0. */
static volatile uintptr_t bad_text = 8;

struct intern_job {
	struct sc_symtab *t;
	const char *text;
	size_t len;
	uint64_t id;
	atomic_int rc;
	atomic_bool done;
};

static void
intern_job_run(struct intern_job *j)
{
	uint64_t id = 0;
	int rc = sc_symtab_intern(j->t, j->text, j->len, &id);

	j->id = id;
	atomic_store(&j->rc, rc);
	atomic_store(&j->done, true);
}

static void
intern_turn(struct rt_probe *p, void *ctx)
{
	(void)p;
	intern_job_run(ctx);
}

static void *
intern_thread(void *arg)
{
	intern_job_run(arg);
	return NULL;
}

static void
sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	nanosleep(&ts, NULL);
}

/* Whether the job finished within WAIT_NS. */
static bool
wait_done(struct intern_job *j)
{
	uint64_t end = sc_clock_ns() + WAIT_NS;

	while (!atomic_load(&j->done) && sc_clock_ns() < end)
		sleep_ms(1);
	return atomic_load(&j->done);
}

static bool
wait_dead(struct sc_exec *ex, uint32_t id)
{
	uint64_t end = sc_clock_ns() + WAIT_NS;

	while (sc_exec_unit_state(ex, id) != SC_UNIT_DEAD &&
	       sc_clock_ns() < end)
		sleep_ms(1);
	return sc_exec_unit_state(ex, id) == SC_UNIT_DEAD;
}

Test(symbol_faults, bad_pointer_in_intern_kills_the_unit_and_not_the_table,
     .timeout = 30)
{
	struct sc_pool_opts o = {.workers = 2, .catch_faults = true};
	/* A short text (copied on the stack) and a long one (to the heap). */
	struct intern_job bad = {.len = 5}, bad_long = {.len = 300};
	struct intern_job unit = {.text = "alive", .len = 5};
	struct intern_job host = {.text = "alive", .len = 5};
	struct intern_job fresh = {.text = "fresh", .len = 5};
	struct sc_panic_record rec;
	struct rt_probe *pb, *pl, *pu;
	struct sc_exec *ex = NULL;
	struct sc_symtab *t;
	struct sc_pool *pool;
	uint32_t ib, il, iu;
	pthread_t th;

	cr_assert_eq(sc_symtab_create(&t), 0);
	bad.t = bad_long.t = unit.t = host.t = fresh.t = t;
	bad.text = bad_long.text = (const char *)bad_text;
	cr_assert_eq(sc_exec_create(NULL, &ex), 0);
	pb = rt_probe_add(ex, &ib);
	pb->on_turn = intern_turn;
	pb->ctx = &bad;
	pl = rt_probe_add(ex, &il);
	pl->on_turn = intern_turn;
	pl->ctx = &bad_long;
	pu = rt_probe_add(ex, &iu);
	pu->on_turn = intern_turn;
	pu->ctx = &unit;
	cr_assert_eq(sc_pool_create(ex, &o, &pool), 0);

	cr_assert_eq(sc_exec_kick(ex, ib), 0);
	cr_assert(wait_dead(ex, ib), "the unit with the bad pointer lives");
	cr_assert_eq(sc_exec_kick(ex, il), 0);
	cr_assert(wait_dead(ex, il), "the unit with the bad long text lives");
	cr_expect(!atomic_load(&bad.done) && !atomic_load(&bad_long.done),
		  "intern returned from a fault");

	/* Another unit, then another thread, then a new string: none hangs. */
	cr_assert_eq(sc_exec_kick(ex, iu), 0);
	cr_assert(wait_done(&unit), "a later intern from a unit hangs");
	cr_expect_eq(atomic_load(&unit.rc), 0);
	cr_assert_eq(pthread_create(&th, NULL, intern_thread, &host), 0);
	cr_assert(wait_done(&host), "a later intern from a thread hangs");
	pthread_join(th, NULL);
	cr_expect_eq(atomic_load(&host.rc), 0);
	cr_expect_eq(host.id, unit.id);
	intern_job_run(&fresh);
	cr_expect_eq(atomic_load(&fresh.rc), 0);

	cr_expect_eq(sc_exec_wait_idle(ex, WAIT_NS, &rec), SC_EPANIC);
	cr_expect_eq(rec.unit, ib);
	cr_expect_eq(rec.signo, SIGSEGV);
	cr_expect(strstr(rec.message, "SIGSEGV"), "%s", rec.message);
	/* The faulting call left nothing behind in the table. */
	cr_expect_eq(sc_symtab_count(t), 2);
	cr_expect_eq(sc_symtab_refs(t, unit.id), 2);
	cr_expect_eq(sc_pool_finish(pool, NULL), SC_EPANIC);
	sc_exec_destroy(ex);
	sc_symtab_destroy(t);
}

/* A fault while the table's mutex is held (here: a bad table pointer, the
 * mutex itself unreadable) cannot become a panic, since the mutex would
 * stay held: the process dies by the signal and says why. Forked, since
 * the handler is process wide and the child must die. */
static void
intern_in_bad_table(void *arg)
{
	uint64_t id;

	(void)arg;
	(void)sc_symtab_intern((struct sc_symtab *)bad_text, "x", 1, &id);
}

static void
bad_table_child(void)
{
	struct sc_panic_record rec;
	struct sigaction sa;

	/* SIG_DFL before, whatever a sanitizer installed. */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_DFL;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGSEGV, &sa, NULL) != 0 ||
	    sc_panic_catch_faults(true) != 0)
		_exit(2);
	(void)sc_panic_guard(intern_in_bad_table, NULL, &rec);
	_exit(0); /* made a panic while the table was locked */
}

Test(symbol_faults, fault_inside_the_locked_table_kills_with_a_message,
     .timeout = 30)
{
	char err[512];
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
		bad_table_child();
	}
	close(fds[1]);
	while (n + 1 < sizeof(err) &&
	       (got = read(fds[0], err + n, sizeof(err) - 1 - n)) > 0)
		n += (size_t)got;
	err[n] = '\0';
	close(fds[0]);
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	cr_expect(WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV,
		  "child: %s %d; stderr: %s", WIFEXITED(st) ? "exit" : "signal",
		  WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st), err);
	cr_expect(strstr(err, "fault inside subcirc while holding a lock: "
			      "cannot recover"),
		  "stderr: %s", err);
}

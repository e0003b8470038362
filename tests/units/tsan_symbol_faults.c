/*
 * tsan_symbol_faults.c - units that pass a bad pointer to the symbol table
 * while other threads intern, as a plain program for the ThreadSanitizer
 * pass (the Criterion version is test_symbol_faults.c). Two workers catch
 * faults; every other turn of one unit interns from page 0 and dies, the
 * others and three host threads intern all along. Checks that every
 * faulting unit died of SIGSEGV, that every good intern completed with one
 * id per string, and that the table holds exactly the good strings. Exits
 * 0 on success; alarm() is the watchdog: a hang dies by SIGALRM.
 */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "operators/base.h"
#include "operators/symbol.h"
#include "runtime/pool.h"
#include "tests/support/rt_toys.h"

/*
 * A failed check ends the program with _exit, not exit: other threads are
 * still running, and exit tears down stdio and runs atexit handlers under
 * them (not thread-safe). stdout is flushed first; stderr is unbuffered.
 */
#define CHECK(cond, ...)                                                       \
	do {                                                                   \
		if (!(cond)) {                                                 \
			(void)fprintf(stderr,                                  \
				      "tsan_symbol_faults: %s:%d: %s: ",       \
				      __FILE__, __LINE__, #cond);              \
			(void)fprintf(stderr, __VA_ARGS__);                    \
			(void)fprintf(stderr, "\n");                           \
			(void)fflush(stdout);                                  \
			_exit(1);                                              \
		}                                                              \
	} while (0)

#define NBAD	 4   /* units that fault in intern */
#define NGOOD	 4   /* units that intern good strings */
#define NHOST	 3   /* host threads interning meanwhile */
#define NSTRINGS 200 /* good strings */

/* Volatile so that the compiler cannot see the pointer is into page 0. */
static volatile uintptr_t bad_text = 8;

struct job {
	struct sc_symtab *t;
	bool bad;	   /* intern from page 0 */
	atomic_int failed; /* a good intern that failed */
	atomic_int done;   /* good strings interned */
};

static void
intern_all(struct job *j)
{
	char buf[32];
	uint64_t id;

	if (j->bad) {
		(void)sc_symtab_intern(j->t, (const char *)bad_text, 40, &id);
		return; /* not reached: the unit dies */
	}
	for (int i = 0; i < NSTRINGS; i++) {
		int n = snprintf(buf, sizeof(buf), "good-%d", i);

		if (sc_symtab_intern(j->t, buf, (size_t)n, &id) != 0 ||
		    sc_symtab_release(j->t, id) != 0)
			atomic_fetch_add(&j->failed, 1);
		else
			atomic_fetch_add(&j->done, 1);
	}
}

static void
job_turn(struct rt_probe *p, void *ctx)
{
	(void)p;
	intern_all(ctx);
}

static void *
host_main(void *arg)
{
	intern_all(arg);
	return NULL;
}

int
main(void)
{
	struct sc_pool_opts o = {.workers = 2, .catch_faults = true};
	struct job bad[NBAD], good[NGOOD], host[NHOST];
	struct sc_exec *ex = NULL;
	struct sc_symtab *t;
	struct sc_pool *pool;
	uint32_t ids[NBAD + NGOOD];
	pthread_t th[NHOST];
	uint64_t keep;

	alarm(60);
	CHECK(sc_symtab_create(&t) == 0, "create");
	/* One reference kept, so the good strings stay interned. */
	CHECK(sc_symtab_intern_cstr(t, "good-0", &keep) == 0, "keep");
	CHECK(sc_exec_create(NULL, &ex) == 0, "exec");
	for (int i = 0; i < NBAD + NGOOD; i++) {
		struct job *j = i < NBAD ? &bad[i] : &good[i - NBAD];
		struct rt_probe *p;

		*j = (struct job){.t = t, .bad = i < NBAD};
		p = rt_probe_add(ex, &ids[i]);
		CHECK(p, "probe %d", i);
		p->on_turn = job_turn;
		p->ctx = j;
	}
	CHECK(sc_pool_create(ex, &o, &pool) == 0, "pool");
	for (int i = 0; i < NHOST; i++) {
		host[i] = (struct job){.t = t};
		CHECK(pthread_create(&th[i], NULL, host_main, &host[i]) == 0,
		      "thread");
	}
	/* Bad and good units interleaved, while the hosts intern. */
	for (int i = 0; i < NBAD; i++) {
		CHECK(sc_exec_kick(ex, ids[i]) == 0, "kick");
		CHECK(sc_exec_kick(ex, ids[NBAD + i]) == 0, "kick");
	}
	for (int i = 0; i < NHOST; i++)
		pthread_join(th[i], NULL);
	CHECK(sc_exec_wait_idle(ex, 0, NULL) == SC_EPANIC, "no panic");
	for (int i = 0; i < NBAD; i++) {
		struct sc_panic_record rec;

		CHECK(sc_exec_unit_state(ex, ids[i]) == SC_UNIT_DEAD,
		      "bad unit %d lives", i);
		CHECK(sc_exec_panic(ex, (uint32_t)i, &rec) == 0, "panic %d", i);
		CHECK(rec.signo == SIGSEGV, "panic %d: %s", i, rec.message);
	}
	for (int i = 0; i < NGOOD; i++) {
		CHECK(sc_exec_unit_state(ex, ids[NBAD + i]) != SC_UNIT_DEAD,
		      "good unit %d died", i);
		CHECK(atomic_load(&good[i].done) == NSTRINGS &&
			  !atomic_load(&good[i].failed),
		      "good unit %d interned %d", i,
		      atomic_load(&good[i].done));
	}
	for (int i = 0; i < NHOST; i++)
		CHECK(atomic_load(&host[i].done) == NSTRINGS &&
			  !atomic_load(&host[i].failed),
		      "host %d interned %d", i, atomic_load(&host[i].done));
	CHECK(sc_symtab_count(t) == 1, "%zu symbols left, want 1",
	      sc_symtab_count(t));
	CHECK(sc_symtab_refs(t, keep) == 1, "refs %llu",
	      (unsigned long long)sc_symtab_refs(t, keep));
	CHECK(sc_pool_finish(pool, NULL) == SC_EPANIC, "finish");
	sc_exec_destroy(ex);
	CHECK(sc_symtab_release(t, keep) == 0, "release");
	sc_symtab_destroy(t);
	printf("tsan_symbol_faults: all scenarios passed\n");
	return 0;
}

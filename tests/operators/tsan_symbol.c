/*
 * tsan_symbol.c - the symbol table under real threads, as a plain program
 * for the ThreadSanitizer pass (Criterion cannot run under TSan). Threads
 * intern overlapping strings, look them up, retain and release them at
 * once; the program checks one id per string and exact counts, and exits
 * 0 on success. alarm() is the watchdog: a hang dies by SIGALRM.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "operators/symbol.h"

#define NTHREADS 4
#define NSTRINGS 500
#define ROUNDS	 20

struct worker {
	struct sc_symtab *t;
	int start;		/* first string this thread interns */
	uint64_t ids[NSTRINGS]; /* the id it got for string i */
	int rc;			/* first failure */
};

static void *
run(void *arg)
{
	struct worker *w = arg;
	char buf[32];

	for (int round = 0; round < ROUNDS && !w->rc; round++) {
		for (int k = 0; k < NSTRINGS && !w->rc; k++) {
			int i = (w->start + k) % NSTRINGS;
			int n = snprintf(buf, sizeof(buf), "str-%d", i);
			const char *text;
			uint64_t id;

			w->rc = sc_symtab_intern(w->t, buf, (size_t)n, &id);
			if (!w->rc)
				w->rc = sc_symtab_lookup(w->t, id, &text, NULL);
			if (!w->rc && strcmp(text, buf) != 0)
				w->rc = -100;
			if (!w->rc && round + 1 < ROUNDS)
				w->rc = sc_symtab_release(w->t, id);
			w->ids[i] = id;
		}
	}
	return NULL;
}

int
main(void)
{
	static struct worker w[NTHREADS];
	pthread_t th[NTHREADS];
	struct sc_symtab *t;
	int bad = 0;

	alarm(60);
	if (sc_symtab_create(&t))
		return 1;
	for (int i = 0; i < NTHREADS; i++) {
		w[i] = (struct worker){.t = t, .start = i * 97};
		if (pthread_create(&th[i], NULL, run, &w[i]))
			return 1;
	}
	for (int i = 0; i < NTHREADS; i++)
		pthread_join(th[i], NULL);
	for (int i = 0; i < NTHREADS; i++)
		if (w[i].rc) {
			(void)fprintf(stderr, "thread %d failed: %d %s\n", i,
				      w[i].rc, sc_errmsg());
			bad = 1;
		}
	/* Every thread keeps its last-round reference to every string. */
	for (int s = 0; s < NSTRINGS && !bad; s++) {
		for (int i = 1; i < NTHREADS; i++)
			if (w[i].ids[s] != w[0].ids[s])
				bad = 1;
		if (sc_symtab_refs(t, w[0].ids[s]) != NTHREADS)
			bad = 1;
	}
	if (sc_symtab_count(t) != NSTRINGS)
		bad = 1;
	sc_symtab_destroy(t);
	if (bad)
		(void)fprintf(stderr, "tsan_symbol: ids or counts disagree\n");
	else
		printf("tsan_symbol: ok\n");
	return bad;
}

/*
 * tsan_nexmark_par.c - the Nexmark generator over threads
 * (bench/workloads/nexmark_par.h) as a plain program for the
 * ThreadSanitizer pass (Criterion cannot run under TSan): 4 threads make
 * 20,000 events in chunks of 250 while this thread takes them in order,
 * then an endless stream is destroyed with chunks made ahead and one
 * held. Checks the chunks' order and that every reference is given back;
 * exits 0 on success. alarm() is the watchdog: a hang dies by SIGALRM.
 */
#include <stdio.h>
#include <unistd.h>

#include "bench/workloads/nexmark_par.h"
#include "operators/error.h"
#include "operators/symbol.h"

static int
fail(const char *what)
{
	(void)fprintf(stderr, "tsan_nexmark_par: %s (%s)\n", what, sc_errmsg());
	return 1;
}

int
main(void)
{
	struct sc_nexmark_opts o;
	struct sc_symtab *t;
	struct sc_nexmark_par *par;
	struct sc_nexmark_chunk *c;
	uint64_t events = 0;
	int rc;

	alarm(120);
	sc_nexmark_opts_default(&o);
	if (sc_symtab_create(&t))
		return fail("sc_symtab_create");
	if (sc_nexmark_par_create(&o, t, 4, 250, 20000, 7, &par))
		return fail("sc_nexmark_par_create");
	while ((rc = sc_nexmark_par_next(par, &c)) == 0) {
		if (c->first != events || c->events != 250)
			return fail("a chunk out of order");
		events += c->events;
		sc_nexmark_par_done(par, c);
	}
	if (rc != 1 || events != 20000)
		return fail("the stream did not end at 20,000 events");
	sc_nexmark_par_destroy(par);
	if (sc_nexmark_par_create(&o, t, 3, 100, 0, 4, &par))
		return fail("sc_nexmark_par_create, endless");
	for (int i = 0; i < 30; i++) {
		if (sc_nexmark_par_next(par, &c))
			return fail("sc_nexmark_par_next, endless");
		if (i < 29)
			sc_nexmark_par_done(par, c);
	}
	sc_nexmark_par_destroy(par);
	if (sc_symtab_count(t) != 0)
		return fail("ids still live after destroy");
	sc_symtab_destroy(t);
	(void)printf("tsan_nexmark_par: ok\n");
	return 0;
}

/*
 * tsan_timeline.c - the timeline's threaded scenario as a plain program,
 * for the ThreadSanitizer pass (Criterion cannot run under TSan): four
 * threads record slices and samples (each claiming its track and naming
 * it on its first record) while this thread writes the trace again and
 * again, then every record is counted. An alarm is the watchdog: no
 * executor is involved, so a hang ends the program by SIGALRM. Exit 0 is
 * a pass.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "operators/base.h"
#include "operators/error.h"
#include "runtime/timeline.h"

#define THREADS 4
#define TURNS	20000

static atomic_bool done;

struct arg {
	struct sc_timeline *tl;
	uint32_t unit;
};

static void *
run(void *p)
{
	struct arg *a = p;
	char name[16];

	(void)snprintf(name, sizeof(name), "sc-tsan-%u", a->unit);
	(void)pthread_setname_np(pthread_self(), name);
	for (int i = 0; i < TURNS; i++) {
		struct sc_timeline_slice s = {0};

		s.start_ns = sc_clock_ns();
		s.unit = a->unit;
		s.end_ns = sc_clock_ns();
		sc_timeline_slice(a->tl, &s);
		if (i % 64 == 0)
			sc_timeline_sample(a->tl, a->unit, s.end_ns, i);
	}
	return NULL;
}

int
main(void)
{
	struct sc_timeline *tl;
	struct sc_timeline_info info;
	struct arg a[THREADS];
	pthread_t th[THREADS];
	FILE *null = fopen("/dev/null", "w");
	int writes = 0;

	(void)alarm(120);
	if (!null || sc_timeline_create(NULL, &tl) != 0 ||
	    sc_timeline_start(tl) != 0) {
		(void)fprintf(stderr, "setup failed: %s\n", sc_errmsg());
		return 1;
	}
	for (uint32_t i = 0; i < THREADS; i++) {
		a[i] = (struct arg){tl, i};
		if (pthread_create(&th[i], NULL, run, &a[i]) != 0)
			return 1;
	}
	while (writes < 20 && !atomic_load(&done)) {
		if (sc_timeline_write(tl, null) != 0) {
			(void)fprintf(stderr, "write: %s\n", sc_errmsg());
			return 1;
		}
		writes++;
	}
	for (int i = 0; i < THREADS; i++)
		(void)pthread_join(th[i], NULL);
	atomic_store(&done, true);
	if (sc_timeline_info(tl, &info) != 0 ||
	    info.slices != (uint64_t)THREADS * TURNS || info.dropped != 0 ||
	    info.tracks_used != THREADS) {
		(void)fprintf(
		    stderr, "FAIL: %llu slices, %llu dropped, %u tracks\n",
		    (unsigned long long)info.slices,
		    (unsigned long long)info.dropped, info.tracks_used);
		return 1;
	}
	sc_timeline_destroy(tl);
	(void)fclose(null);
	(void)printf("tsan_timeline: %d writes during the run, all records "
		     "counted\n",
		     writes);
	return 0;
}

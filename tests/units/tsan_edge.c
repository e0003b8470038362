/*
 * tsan_edge.c - the two-thread edge scenario as a plain program, for the
 * ThreadSanitizer pass (Criterion cannot run under TSan, issue #274).
 * Exit status 0 is a pass. An alarm is the watchdog: a hang dies by
 * SIGALRM, named by ctest, instead of hanging the pass.
 */
#include <stdio.h>
#include <unistd.h>

#include "tests/support/edge_duo.h"

int
main(void)
{
	static struct edge_duo d[3] = {
	    {.capacity = 64, .outbox_bound = 256, .rows_per_frame = 1},
	    {.capacity = 2, .outbox_bound = 64, .rows_per_frame = 8},
	    {.capacity = 1, .outbox_bound = 0, .rows_per_frame = 3},
	};
	uint64_t seed = sc_prop_seed(0xd00);

	alarm(120);
	for (int i = 0; i < 3; i++) {
		d[i].seed = seed + (uint64_t)i;
		d[i].frames = 200000;
		d[i].max_ns = 2000000000ull;
		if (edge_duo_run(&d[i]) != 0) {
			(void)fprintf(stderr,
				      "tsan_edge: case %d failed; replay with "
				      "SC_SEED=%llu\n",
				      i, (unsigned long long)seed);
			return 1;
		}
		printf("tsan_edge: case %d: %llu frames sent, %llu got, "
		       "%llu coalesced\n",
		       i, (unsigned long long)d[i].frames_sent,
		       (unsigned long long)d[i].frames_got,
		       (unsigned long long)d[i].coalesced);
	}
	for (uint64_t c = 0; c < 20; c++) {
		struct edge_close_duo cd = {
		    .seed = seed + c,
		    .close_after = 1 + (seed + c) % 200,
		    .capacity = c % 2 ? 4 : 64,
		};

		if (edge_close_duo_run(&cd) != 0) {
			(void)fprintf(
			    stderr,
			    "tsan_edge: close race %llu failed; replay "
			    "with SC_SEED=%llu\n",
			    (unsigned long long)c, (unsigned long long)seed);
			return 1;
		}
	}
	printf("tsan_edge: 20 close races balanced\n");
	return 0;
}

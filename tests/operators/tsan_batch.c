/*
 * tsan_batch.c - batches shared between threads, as a plain program for the
 * ThreadSanitizer pass (Criterion cannot run under TSan). One batch is
 * read by every thread at once, each holding its own reference (the count
 * is atomic, the rows immutable); meanwhile each thread builds and frees
 * large batches, so the shared large-buffer cache is taken from and given
 * to concurrently. Exits 0 on success; alarm() is the watchdog.
 */
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

#include "operators/batch.h"

#define NTHREADS 4
#define ROUNDS	 3
#define BIG_ROWS 180000 /* 180k rows x 3 words = 4.3 MB: a cached size */

struct worker {
	struct sc_batch *shared; /* a reference this thread owns */
	int id;			 /* seeds this thread's rows */
	int rc;			 /* first failure, 0 if none */
};

/* Sum of the shared batch's weights, read concurrently by every thread. */
static int64_t
weight_sum(const struct sc_batch *b)
{
	int64_t s = 0;

	for (size_t i = 0; i < sc_batch_count(b); i++)
		s += sc_batch_weight(b, i);
	return s;
}

static void *
run(void *arg)
{
	struct worker *w = arg;
	struct sc_batch_builder bld;

	if (sc_batch_builder_init(&bld, 2))
		goto fail;
	for (int r = 0; r < ROUNDS; r++) {
		struct sc_batch *big, *sum;

		for (uint64_t i = 0; i < BIG_ROWS; i++) {
			uint64_t row[2] = {(i * 2654435761u) % BIG_ROWS,
					   (uint64_t)w->id};

			if (sc_batch_builder_push(&bld, row, 2, 1))
				goto fini;
		}
		if (sc_batch_builder_finish(&bld, &big))
			goto fini;
		if (sc_batch_add(big, big, &sum)) {
			sc_batch_release(big);
			goto fini;
		}
		if (sc_batch_count(sum) != BIG_ROWS ||
		    weight_sum(w->shared) != 1000) {
			sc_batch_release(big);
			sc_batch_release(sum);
			goto fini;
		}
		sc_batch_release(big);
		sc_batch_release(sum);
	}
	sc_batch_builder_fini(&bld);
	sc_batch_release(w->shared);
	return NULL;

fini:
	sc_batch_builder_fini(&bld);
fail:
	w->rc = 1;
	sc_batch_release(w->shared);
	return NULL;
}

int
main(void)
{
	static struct worker w[NTHREADS];
	pthread_t th[NTHREADS];
	uint64_t rows[1000];
	struct sc_batch *shared;
	int bad = 0;

	alarm(120);
	for (uint64_t i = 0; i < 1000; i++)
		rows[i] = i;
	if (sc_batch_from_records(1, rows, NULL, 1000, &shared))
		return 1;
	for (int i = 0; i < NTHREADS; i++) {
		w[i] =
		    (struct worker){.shared = sc_batch_retain(shared), .id = i};
		if (pthread_create(&th[i], NULL, run, &w[i]))
			return 1;
	}
	for (int i = 0; i < NTHREADS; i++)
		pthread_join(th[i], NULL);
	for (int i = 0; i < NTHREADS; i++)
		bad |= w[i].rc;
	if (__atomic_load_n(&shared->refs, __ATOMIC_ACQUIRE) != 1)
		bad = 1;
	sc_batch_release(shared);
	sc_batch_cache_trim();
	if (bad)
		(void)fprintf(stderr, "tsan_batch: a thread failed\n");
	else
		printf("tsan_batch: ok\n");
	return bad;
}

/*
 * test_nexmark_par.c - the Nexmark generator over several threads
 * (bench/workloads/nexmark_par.h): whatever the thread count and chunk
 * size, the chunks come out in order and each equals, row for row, what
 * one generator makes for the same events; the references of its texts
 * are all given back; bad arguments are refused by name.
 *
 * Real threads: every test runs under Criterion's timeout, so a lost
 * wake-up fails by name instead of hanging.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "bench/workloads/nexmark.h"
#include "bench/workloads/nexmark_par.h"
#include "operators/batch.h"
#include "operators/error.h"
#include "operators/symbol.h"

/* The rows of two batches are the same words (both NULL counts too). */
static void
assert_same_batch(const struct sc_batch *a, const struct sc_batch *b,
		  uint64_t chunk, int kind)
{
	size_t na = a ? sc_batch_count(a) : 0, nb = b ? sc_batch_count(b) : 0;

	cr_assert_eq(na, nb, "chunk %llu, kind %d: %zu rows, want %zu",
		     (unsigned long long)chunk, kind, na, nb);
	for (size_t i = 0; i < na; i++) {
		const uint64_t *ra = sc_batch_row(a, i),
			       *rb = sc_batch_row(b, i);

		cr_assert(!memcmp(ra, rb,
				  sc_nexmark_ncols((enum sc_nexmark_kind)kind) *
				      sizeof(uint64_t)),
			  "chunk %llu, kind %d, row %zu differs",
			  (unsigned long long)chunk, kind, i);
		cr_assert_eq(sc_batch_weight(a, i), sc_batch_weight(b, i));
	}
}

/*
 * Every chunk of `total` events against one generator's batches of the
 * same events. Both hold their texts while compared, so a text both make
 * has one id in the shared table and rows compare word for word.
 */
static void
check_against_one_generator(unsigned threads, uint64_t chunk, uint64_t total,
			    uint32_t kinds)
{
	struct sc_nexmark_opts o;
	struct sc_symtab *t;
	struct sc_nexmark *seq;
	struct sc_nexmark_par *par;
	struct sc_nexmark_chunk *c;
	uint64_t events = 0, i = 0;
	int rc;

	sc_nexmark_opts_default(&o);
	o.seed = 7;
	o.disorder_ms = 500;
	cr_assert_eq(sc_symtab_create(&t), 0);
	cr_assert_eq(sc_nexmark_create(&o, t, &seq), 0);
	cr_assert_eq(
	    sc_nexmark_par_create(&o, t, threads, chunk, total, kinds, &par), 0,
	    "%s", sc_errmsg());
	while ((rc = sc_nexmark_par_next(par, &c)) == 0) {
		struct sc_batch *want[SC_NEXMARK_KINDS];

		cr_assert_eq(c->first, events, "chunk %llu starts at %llu",
			     (unsigned long long)i,
			     (unsigned long long)c->first);
		cr_assert_eq(c->events,
			     total - events < chunk ? total - events : chunk);
		cr_assert_eq(sc_nexmark_batches(seq, c->events, want), 0);
		for (int k = 0; k < SC_NEXMARK_KINDS; k++) {
			if (!(kinds >> k & 1)) {
				cr_assert_null(c->b[k]);
				sc_batch_release(want[k]);
				want[k] = NULL;
			}
			assert_same_batch(c->b[k], want[k], i, k);
			sc_batch_release(want[k]);
		}
		events += c->events;
		sc_nexmark_release_texts(seq);
		sc_nexmark_par_done(par, c);
		i++;
	}
	cr_assert_eq(rc, 1, "next ended with %d: %s", rc, sc_errmsg());
	cr_assert_eq(events, total);
	cr_assert_eq(sc_nexmark_par_next(par, &c), 1, "past the end, still 1");
	sc_nexmark_par_destroy(par);
	sc_nexmark_destroy(seq);
	cr_assert_eq(sc_symtab_count(t), 0,
		     "%zu ids still live after both are gone",
		     sc_symtab_count(t));
	sc_symtab_destroy(t);
}

Test(nexmark_par, chunks_equal_one_generators_for_any_thread_count,
     .timeout = 120)
{
	static const unsigned threads[] = {1, 2, 3, 4};
	static const uint64_t chunks[] = {1, 7, 1000};

	for (size_t a = 0; a < sizeof(threads) / sizeof(threads[0]); a++)
		for (size_t b = 0; b < sizeof(chunks) / sizeof(chunks[0]); b++)
			check_against_one_generator(threads[a], chunks[b],
						    chunks[b] == 1 ? 300 : 5003,
						    7);
}

Test(nexmark_par, only_the_streams_asked_for_are_kept, .timeout = 60)
{
	check_against_one_generator(3, 100, 2000, 1u << SC_NEXMARK_BID);
	check_against_one_generator(
	    2, 50, 1000, 1u << SC_NEXMARK_PERSON | 1u << SC_NEXMARK_AUCTION);
}

Test(nexmark_par, an_endless_stream_stops_at_destroy_and_lets_go, .timeout = 60)
{
	struct sc_nexmark_opts o;
	struct sc_symtab *t;
	struct sc_nexmark_par *par;
	struct sc_nexmark_chunk *c;

	sc_nexmark_opts_default(&o);
	cr_assert_eq(sc_symtab_create(&t), 0);
	cr_assert_eq(sc_nexmark_par_create(&o, t, 3, 500, 0, 7, &par), 0);
	for (int i = 0; i < 20; i++) {
		cr_assert_eq(sc_nexmark_par_next(par, &c), 0);
		cr_assert_eq(c->first, (uint64_t)i * 500);
		cr_assert_eq(c->events, 500);
		sc_nexmark_par_done(par, c);
	}
	/* One chunk kept out, others made ahead: destroy gives all back. */
	cr_assert_eq(sc_nexmark_par_next(par, &c), 0);
	cr_assert_gt(sc_nexmark_par_cpu_ns(par), 0);
	sc_nexmark_par_destroy(par);
	cr_assert_eq(sc_symtab_count(t), 0, "%zu ids live after destroy",
		     sc_symtab_count(t));
	sc_symtab_destroy(t);
}

/* A bad call, its code and the words its message must hold. */
struct bad_case {
	const char *name;
	unsigned threads;
	uint64_t chunk;
	uint32_t kinds;
	bool null_opts;
	int rc;
	const char *says;
};

Test(nexmark_par, bad_arguments_are_refused_by_name)
{
	static const struct bad_case cases[] = {
	    {"no threads", 0, 10, 7, false, SC_EINVAL, "0 threads"},
	    {"too many threads", 257, 10, 7, false, SC_EINVAL, "257 threads"},
	    {"empty chunks", 2, 0, 7, false, SC_EINVAL, "chunks of 0"},
	    {"no stream", 2, 10, 0, false, SC_EINVAL, "kinds 0"},
	    {"a stream past the three", 2, 10, 8, false, SC_EINVAL, "kinds 8"},
	    {"no options", 2, 10, 7, true, SC_EINVAL, "NULL"},
	};
	struct sc_nexmark_opts o;
	struct sc_symtab *t;

	sc_nexmark_opts_default(&o);
	cr_assert_eq(sc_symtab_create(&t), 0);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct bad_case *bc = &cases[i];
		struct sc_nexmark_par *par = (void *)&o; /* must be left */
		int rc = sc_nexmark_par_create(bc->null_opts ? NULL : &o, t,
					       bc->threads, bc->chunk, 100,
					       bc->kinds, &par);

		cr_assert_eq(rc, bc->rc, "%s: %d", bc->name, rc);
		cr_assert(strstr(sc_errmsg(), bc->says), "%s: '%s'", bc->name,
			  sc_errmsg());
		cr_assert_eq(par, (void *)&o, "%s: *out written", bc->name);
	}
	/* Options the generator refuses are refused with its words. */
	o.gap_us = 0;
	{
		struct sc_nexmark_par *par = NULL;

		cr_assert_eq(sc_nexmark_par_create(&o, t, 2, 10, 100, 7, &par),
			     SC_EINVAL);
		cr_assert(strstr(sc_errmsg(), "gap_us"), "'%s'", sc_errmsg());
		cr_assert_null(par);
	}
	cr_assert_eq(sc_symtab_count(t), 0);
	sc_symtab_destroy(t);
}

Test(nexmark_par, next_before_the_last_chunk_is_given_back_is_refused,
     .timeout = 60)
{
	struct sc_nexmark_opts o;
	struct sc_symtab *t;
	struct sc_nexmark_par *par;
	struct sc_nexmark_chunk *c, *d = (void *)1;

	sc_nexmark_opts_default(&o);
	cr_assert_eq(sc_symtab_create(&t), 0);
	cr_assert_eq(sc_nexmark_par_create(&o, t, 2, 100, 1000, 7, &par), 0);
	cr_assert_eq(sc_nexmark_par_next(par, &c), 0);
	cr_assert_eq(sc_nexmark_par_next(par, &d), SC_EINVAL);
	cr_assert(strstr(sc_errmsg(), "chunk 0 was not given back"), "'%s'",
		  sc_errmsg());
	cr_assert_null(d);
	sc_nexmark_par_done(par, c);
	cr_assert_eq(sc_nexmark_par_next(par, &c), 0);
	cr_assert_eq(c->first, 100, "the refusal moved nothing on");
	sc_nexmark_par_done(par, c);
	cr_assert_eq(sc_nexmark_par_next(NULL, &c), SC_EINVAL);
	cr_assert_eq(sc_nexmark_par_next(par, NULL), SC_EINVAL);
	sc_nexmark_par_destroy(par);
	sc_nexmark_par_destroy(NULL);
	sc_nexmark_par_done(NULL, NULL);
	cr_assert_eq(sc_symtab_count(t), 0);
	sc_symtab_destroy(t);
}

/*
 * test_symbol.c - the interning table: one id per string, even from many
 * threads at once (SC_THREADED: real threads, each test behind a timeout),
 * reference counts that free text and reuse ids, memory that follows the
 * live set, and bad input.
 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "operators/base_int.h"
#include "operators/symbol.h"

Test(symbol, interning_a_string_twice_gives_one_id)
{
	struct sc_symtab *t;
	uint64_t a, b, c;

	cr_assert_eq(sc_symtab_create(&t), 0);
	cr_assert_eq(sc_symtab_intern_cstr(t, "hello", &a), 0);
	cr_assert_eq(sc_symtab_intern(t, "hello", 5, &b), 0);
	cr_assert_eq(sc_symtab_intern_cstr(t, "world", &c), 0);
	cr_assert_eq(a, b);
	cr_assert_neq(a, c);
	cr_assert_neq(a, SC_SYMBOL_NONE);
	cr_assert_eq(sc_symtab_refs(t, a), 2);
	cr_assert_eq(sc_symtab_count(t), 2);
	sc_symtab_destroy(t);
}

Test(symbol, lookup_returns_the_text_including_embedded_nul)
{
	struct sc_symtab *t;
	const char *text;
	size_t len;
	uint64_t id, empty, other;

	cr_assert_eq(sc_symtab_create(&t), 0);
	cr_assert_eq(sc_symtab_intern(t, "a\0b", 3, &id), 0);
	cr_assert_eq(sc_symtab_intern(t, "a", 1, &other), 0);
	cr_assert_neq(id, other, "text after a NUL must count");
	cr_assert_eq(sc_symtab_lookup(t, id, &text, &len), 0);
	cr_assert_eq(len, 3);
	cr_assert_eq(memcmp(text, "a\0b", 3), 0);
	cr_assert_eq(sc_symtab_intern(t, NULL, 0, &empty), 0);
	cr_assert_eq(sc_symtab_lookup(t, empty, &text, &len), 0);
	cr_assert_eq(len, 0);
	cr_assert_str_eq(text, "");
	sc_symtab_destroy(t);
}

Test(symbol, find_does_not_intern_or_take_a_reference)
{
	struct sc_symtab *t;
	uint64_t id, found = 99;

	cr_assert_eq(sc_symtab_create(&t), 0);
	cr_assert_eq(sc_symtab_find(t, "x", 1, &found), SC_ENOENT);
	cr_assert_eq(found, 99, "id written on failure");
	cr_assert_eq(sc_symtab_intern_cstr(t, "x", &id), 0);
	cr_assert_eq(sc_symtab_find(t, "x", 1, &found), 0);
	cr_assert_eq(found, id);
	cr_assert_eq(sc_symtab_refs(t, id), 1);
	sc_symtab_destroy(t);
}

Test(symbol, last_release_frees_the_text_and_the_id_is_reused)
{
	struct sc_symtab *t;
	const char *text;
	uint64_t a, b;

	cr_assert_eq(sc_symtab_create(&t), 0);
	cr_assert_eq(sc_symtab_intern_cstr(t, "gone", &a), 0);
	cr_assert_eq(sc_symtab_retain(t, a), 0);
	cr_assert_eq(sc_symtab_release(t, a), 0);
	cr_assert_eq(sc_symtab_lookup(t, a, &text, NULL), 0, "still held");
	cr_assert_eq(sc_symtab_release(t, a), 0);
	cr_assert_eq(sc_symtab_lookup(t, a, &text, NULL), SC_ENOENT);
	cr_assert(strstr(sc_errmsg(), "is not live"), "%s", sc_errmsg());
	cr_assert_eq(sc_symtab_count(t), 0);
	cr_assert_eq(sc_symtab_find(t, "gone", 4, &b), SC_ENOENT);
	cr_assert_eq(sc_symtab_intern_cstr(t, "new", &b), 0);
	cr_assert_eq(b, a, "a freed id is handed out again");
	cr_assert_eq(sc_symtab_release(t, 12345), SC_ENOENT);
	cr_assert_eq(sc_symtab_retain(t, SC_SYMBOL_NONE), SC_ENOENT);
	sc_symtab_destroy(t);
}

/* A stream of unique strings, each released after use (as a trace drops a
 * row): the table's memory stays that of the live set, not the history. */
Test(symbol, memory_follows_the_live_set_not_the_history)
{
	struct sc_symtab *t;
	uint64_t live[64];
	size_t peak = 0, after_warmup = 0;
	char buf[64];

	cr_assert_eq(sc_symtab_create(&t), 0);
	for (int i = 0; i < 200000; i++) {
		int n =
		    snprintf(buf, sizeof(buf), "https://example.com/%d/x", i);

		if (i >= 64)
			cr_assert_eq(sc_symtab_release(t, live[i % 64]), 0);
		cr_assert_eq(sc_symtab_intern(t, buf, (size_t)n, &live[i % 64]),
			     0);
		if (i == 1000)
			after_warmup = sc_symtab_bytes(t);
		if (sc_symtab_bytes(t) > peak)
			peak = sc_symtab_bytes(t);
		/* Each of the 16 shards reuses its own ids, and none ever
		 * holds more than the 64 live: an id is its local id (at
		 * most 64) times 16 plus its shard. */
		cr_assert_lt(live[i % 64], (uint64_t)65 * 16,
			     "ids not reused: %llu",
			     (unsigned long long)live[i % 64]);
	}
	cr_assert_eq(sc_symtab_count(t), 64);
	cr_assert_leq(peak, after_warmup + 4096,
		      "grew from %zu to %zu bytes with 64 live strings",
		      after_warmup, peak);
	sc_symtab_destroy(t);
}

Test(symbol, null_arguments_are_einval)
{
	struct sc_symtab *t;
	const char *text = "unchanged";
	uint64_t id = 7;

	cr_assert_eq(sc_symtab_create(NULL), SC_EINVAL);
	cr_assert_eq(sc_symtab_create(&t), 0);
	cr_assert_eq(sc_symtab_intern(NULL, "a", 1, &id), SC_EINVAL);
	cr_assert(strstr(sc_errmsg(), "table is NULL"), "%s", sc_errmsg());
	cr_assert_eq(sc_symtab_intern(t, NULL, 3, &id), SC_EINVAL);
	cr_assert(strstr(sc_errmsg(), "text is NULL"), "%s", sc_errmsg());
	cr_assert_eq(sc_symtab_intern(t, "a", 1, NULL), SC_EINVAL);
	cr_assert_eq(sc_symtab_intern_cstr(t, NULL, &id), SC_EINVAL);
	cr_assert_eq(sc_symtab_lookup(t, 1, NULL, NULL), SC_EINVAL);
	cr_assert_eq(sc_symtab_lookup(t, 1, &text, NULL), SC_ENOENT);
	cr_assert_str_eq(text, "unchanged");
	cr_assert_eq(id, 7);
	cr_assert_eq(sc_symtab_count(t), 0);
	sc_symtab_destroy(t);
	sc_symtab_destroy(NULL);
}

/* --- threads (SC_THREADED) -------------------------------------------------
 */

#define NTHREADS 4
#define NSTRINGS 2000

struct worker {
	struct sc_symtab *t;
	int start;		/* each thread walks the strings from here */
	uint64_t ids[NSTRINGS]; /* id it got for string i */
	int rc;			/* first failure, 0 if none */
};

static void *
intern_all(void *arg)
{
	struct worker *w = arg;
	char buf[32];

	for (int k = 0; k < NSTRINGS; k++) {
		int i = (w->start + k) % NSTRINGS;
		int n = snprintf(buf, sizeof(buf), "s%d", i);
		int rc = sc_symtab_intern(w->t, buf, (size_t)n, &w->ids[i]);

		if (rc && !w->rc)
			w->rc = rc;
	}
	return NULL;
}

Test(symbol, concurrent_interning_gives_one_id_per_string, .timeout = 20)
{
	static struct worker w[NTHREADS];
	pthread_t th[NTHREADS];
	struct sc_symtab *t;

	cr_assert_eq(sc_symtab_create(&t), 0);
	for (int i = 0; i < NTHREADS; i++) {
		w[i] = (struct worker){.t = t, .start = i * NSTRINGS / 3};
		cr_assert_eq(pthread_create(&th[i], NULL, intern_all, &w[i]),
			     0);
	}
	for (int i = 0; i < NTHREADS; i++)
		cr_assert_eq(pthread_join(th[i], NULL), 0);
	for (int i = 0; i < NTHREADS; i++)
		cr_assert_eq(w[i].rc, 0, "thread %d: %d", i, w[i].rc);
	for (int s = 0; s < NSTRINGS; s++) {
		const char *text;
		char want[32];

		for (int i = 1; i < NTHREADS; i++)
			cr_assert_eq(w[i].ids[s], w[0].ids[s],
				     "string %d: thread %d got %llu, thread 0 "
				     "%llu",
				     s, i, (unsigned long long)w[i].ids[s],
				     (unsigned long long)w[0].ids[s]);
		cr_assert_eq(sc_symtab_refs(t, w[0].ids[s]), NTHREADS);
		cr_assert_eq(sc_symtab_lookup(t, w[0].ids[s], &text, NULL), 0);
		(void)snprintf(want, sizeof(want), "s%d", s);
		cr_assert_str_eq(text, want);
	}
	cr_assert_eq(sc_symtab_count(t), NSTRINGS);
	sc_symtab_destroy(t);
}

/* Interning and releasing the same few strings from several threads: the
 * counts end exactly where they started. */
static void *
churn(void *arg)
{
	struct worker *w = arg;
	char buf[8];

	for (int k = 0; k < 20000 && !w->rc; k++) {
		int n = snprintf(buf, sizeof(buf), "c%d", k % 7);
		uint64_t id;

		w->rc = sc_symtab_intern(w->t, buf, (size_t)n, &id);
		if (!w->rc)
			w->rc = sc_symtab_release(w->t, id);
	}
	return NULL;
}

Test(symbol, concurrent_intern_and_release_keep_counts_exact, .timeout = 20)
{
	static struct worker w[NTHREADS];
	pthread_t th[NTHREADS];
	struct sc_symtab *t;
	uint64_t keep;

	cr_assert_eq(sc_symtab_create(&t), 0);
	cr_assert_eq(sc_symtab_intern_cstr(t, "c3", &keep), 0);
	for (int i = 0; i < NTHREADS; i++) {
		w[i] = (struct worker){.t = t};
		cr_assert_eq(pthread_create(&th[i], NULL, churn, &w[i]), 0);
	}
	for (int i = 0; i < NTHREADS; i++)
		cr_assert_eq(pthread_join(th[i], NULL), 0);
	for (int i = 0; i < NTHREADS; i++)
		cr_assert_eq(w[i].rc, 0, "thread %d: %d", i, w[i].rc);
	cr_assert_eq(sc_symtab_count(t), 1);
	cr_assert_eq(sc_symtab_refs(t, keep), 1);
	sc_symtab_destroy(t);
}

/* Each call takes the mutex through the counted wrapper and gives it back
 * on every path, so the fault handler's "holds a lock of subcirc" count
 * (operators/base_int.h) is back to zero after each, failures included. */
Test(symbol, every_call_leaves_the_lock_count_as_it_found_it)
{
	char long_text[300];
	struct sc_symtab *t;
	const char *text;
	uint64_t id, other;

	memset(long_text, 'x', sizeof(long_text));
	cr_assert_eq(sc__lock_depth(), 0);
	cr_assert_eq(sc_symtab_create(&t), 0);
	cr_assert_eq(sc_symtab_intern_cstr(t, "a", &id), 0);
	cr_assert_eq(sc__lock_depth(), 0);
	cr_assert_eq(sc_symtab_intern(t, long_text, sizeof(long_text), &other),
		     0);
	cr_assert_eq(sc_symtab_intern(t, long_text, sizeof(long_text), &other),
		     0, "a known long text");
	cr_assert_eq(sc__lock_depth(), 0);
	cr_assert_eq(sc_symtab_find(t, "a", 1, &other), 0);
	cr_assert_eq(sc_symtab_find(t, "zz", 2, &other), SC_ENOENT);
	cr_assert_eq(sc__lock_depth(), 0);
	cr_assert_eq(sc_symtab_lookup(t, id, &text, NULL), 0);
	cr_assert_eq(sc_symtab_lookup(t, 999, &text, NULL), SC_ENOENT);
	cr_assert_eq(sc__lock_depth(), 0);
	cr_assert_eq(sc_symtab_retain(t, id), 0);
	cr_assert_eq(sc_symtab_retain(t, 999), SC_ENOENT);
	cr_assert_eq(sc_symtab_release(t, id), 0);
	cr_assert_eq(sc_symtab_release(t, 999), SC_ENOENT);
	cr_assert_eq(sc__lock_depth(), 0);
	cr_assert_eq(sc_symtab_count(t), 2);
	cr_assert_eq(sc_symtab_refs(t, id), 1);
	cr_assert_gt(sc_symtab_bytes(t), 0);
	cr_assert_eq(sc__lock_depth(), 0);
	sc_symtab_destroy(t);
}

/*
 * bench_text.c - a regular expression's extract, operators/text.h's
 * (PCRE2, JIT-compiled) against glibc's POSIX regexec, the other engine
 * a C program has at hand, on Nexmark q21's pattern
 * `(&|^)channel_id=([^&]*)` over urls made as the standard generator
 * makes a bid's (bench/workloads/nexmark.c: three path parts of 3-4
 * letters, nine in ten with "&channel_id=N" appended).
 *
 * Case: ns of this thread's CPU per url (lower is better), group 2 of
 * each url's first match, 10,000 urls (2,000 with --quick) read 20 times
 * a repetition, the median of 5 repetitions (3 with --quick). Both sides
 * must find the same spans, or the benchmark fails.
 */
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/harness.h"
#include "operators/text.h"

#define PATTERN "(&|^)channel_id=([^&]*)"
#define ROUNDS	20
#define REPS	5

struct urls {
	char (*text)[96];
	size_t *len;
	size_t n;
};

static void
urls_make(struct urls *u, size_t n)
{
	uint64_t rng = 42;

	u->text = calloc(n, sizeof(*u->text));
	u->len = calloc(n, sizeof(*u->len));
	if (!u->text || !u->len)
		sc_bench_fail("out of memory");
	u->n = n;
	for (size_t i = 0; i < n; i++) {
		char *p = u->text[i];
		int len = sprintf(p, "https://www.nexmark.com/");

		for (int k = 0; k < 3; k++) {
			int parts = 3 + (int)(sc_splitmix_next(&rng) % 2);

			for (int c = 0; c < parts; c++)
				p[len++] =
				    (char)('a' + sc_splitmix_next(&rng) % 26);
			p[len++] = '/';
		}
		len += sprintf(p + len, "item.htm?query=1");
		if (sc_splitmix_next(&rng) % 10)
			len +=
			    sprintf(p + len, "&channel_id=%u",
				    (unsigned)(sc_splitmix_next(&rng) >> 33));
		u->len[i] = (size_t)len;
	}
}

/* ns per url of ROUNDS passes with PCRE2; the spans' total length. */
static double
run_pcre2(const struct sc_regex *re, const struct urls *u, size_t *total)
{
	uint64_t t0 = sc_bench_cpu_ns();

	*total = 0;
	for (int r = 0; r < ROUNDS; r++)
		for (size_t i = 0; i < u->n; i++) {
			const char *s;
			size_t len;
			int rc = sc_regex_extract(re, u->text[i], u->len[i], 2,
						  &s, &len);

			if (rc < 0)
				sc_bench_fail("sc_regex_extract");
			*total += rc ? len : 0;
		}
	return (double)(sc_bench_cpu_ns() - t0) / (double)(ROUNDS * u->n);
}

static double
run_posix(const regex_t *re, const struct urls *u, size_t *total)
{
	uint64_t t0 = sc_bench_cpu_ns();

	*total = 0;
	for (int r = 0; r < ROUNDS; r++)
		for (size_t i = 0; i < u->n; i++) {
			regmatch_t m[3];

			if (regexec(re, u->text[i], 3, m, 0) == 0)
				*total += (size_t)(m[2].rm_eo - m[2].rm_so);
		}
	return (double)(sc_bench_cpu_ns() - t0) / (double)(ROUNDS * u->n);
}

int
main(int argc, char **argv)
{
	bool quick = sc_bench_init(argc, argv);
	int reps = quick ? 3 : REPS;
	struct sc_regex *re = NULL;
	regex_t posix;
	struct urls u;
	double a[REPS], b[REPS];
	size_t ta = 0, tb = 0;

	urls_make(&u, quick ? 2000 : 10000);
	if (sc_regex_create(PATTERN, &re) != 0)
		sc_bench_fail("sc_regex_create");
	if (regcomp(&posix, PATTERN, REG_EXTENDED) != 0)
		sc_bench_fail("regcomp");
	for (int r = 0; r < reps; r++) {
		a[r] = run_pcre2(re, &u, &ta);
		b[r] = run_posix(&posix, &u, &tb);
		if (ta != tb) {
			(void)fprintf(stderr,
				      "bench_text: the engines disagree: %zu "
				      "bytes of spans against %zu\n",
				      ta, tb);
			return 1;
		}
	}
	sc_bench_emit("text", "regex extract, q21's pattern on its urls",
		      "ns per url", sc_bench_median(a, (size_t)reps),
		      "glibc regexec", sc_bench_median(b, (size_t)reps));
	regfree(&posix);
	sc_regex_destroy(re);
	free(u.text);
	free(u.len);
	return 0;
}

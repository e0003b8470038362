/*
 * harness.c - timing, medians and JSON lines for bench/ (see harness.h).
 */
#include "bench/harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static bool sc_bench_quick_mode;
static const char *sc_bench_prog = "bench"; /* argv[0]'s last part */

uint64_t
sc_bench_now_ns(void)
{
	return sc_clock_ns();
}

static uint64_t
cpu_clock_ns(clockid_t id)
{
	struct timespec ts = {0, 0};

	(void)clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

uint64_t
sc_bench_cpu_ns(void)
{
	return cpu_clock_ns(CLOCK_THREAD_CPUTIME_ID);
}

uint64_t
sc_bench_process_cpu_ns(void)
{
	return cpu_clock_ns(CLOCK_PROCESS_CPUTIME_ID);
}

bool
sc_bench_init(int argc, char **argv)
{
	const char *env = getenv("SC_BENCH_QUICK");

	sc_bench_quick_mode = env && *env && strcmp(env, "0") != 0;
	if (argc > 0 && argv[0]) {
		const char *slash = strrchr(argv[0], '/');

		sc_bench_prog = slash ? slash + 1 : argv[0];
	}
	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], "--quick") == 0)
			sc_bench_quick_mode = true;
	return sc_bench_quick_mode;
}

void
sc_bench_fail(const char *what)
{
	const char *msg = sc_errmsg();

	(void)fprintf(stderr, "%s: %s%s%s%s\n", sc_bench_prog, what,
		      *msg ? " (" : "", msg, *msg ? ")" : "");
	_Exit(1);
}

bool
sc_bench_quick(void)
{
	return sc_bench_quick_mode;
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

double
sc_bench_median(double *v, size_t n)
{
	if (n == 0)
		return 0.0;
	qsort(v, n, sizeof(*v), cmp_double);
	if (n % 2)
		return v[n / 2];
	return (v[n / 2 - 1] + v[n / 2]) / 2.0;
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

void
sc_bench_sort_u64(uint64_t *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_u64);
}

void
sc_bench_percentiles_us(uint64_t *ns, size_t n, double *p50, double *p99)
{
	size_t i50 = n / 2, i99 = n * 99 / 100; /* ranks, rounded down */

	sc_bench_sort_u64(ns, n);
	*p50 = (double)ns[i50] / 1e3;
	*p99 = (double)ns[i99] / 1e3;
}

static void
print_json_string(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			putchar('\\');
		putchar(*s);
	}
	putchar('"');
}

/* Whether unit starts with word w, followed by its end, '/' or ' '. */
static bool
unit_starts(const char *unit, const char *w)
{
	size_t n = strlen(w);

	return !strncmp(unit, w, n) &&
	       (unit[n] == 0 || unit[n] == '/' || unit[n] == ' ');
}

const char *
sc_bench_better(const char *unit)
{
	static const char *const lower[] = {"ns",    "us", "ms",	  "s",
					    "bytes", "Ir", "instructions"};
	size_t n = strlen(unit);

	if (n > 2 && !strcmp(unit + n - 2, "/s"))
		return "higher";
	for (size_t i = 0; i < sizeof(lower) / sizeof(lower[0]); i++)
		if (unit_starts(unit, lower[i]))
			return "lower";
	return NULL;
}

void
sc_bench_emit(const char *bench, const char *kase, const char *unit,
	      double value, const char *baseline, double baseline_value)
{
	printf("{\"bench\": ");
	print_json_string(bench);
	printf(", \"case\": ");
	print_json_string(kase);
	printf(", \"unit\": ");
	print_json_string(unit);
	printf(", \"better\": ");
	if (sc_bench_better(unit))
		print_json_string(sc_bench_better(unit));
	else
		printf("null");
	printf(", \"value\": %.6g, \"baseline\": ", value);
	if (baseline) {
		print_json_string(baseline);
		printf(", \"baseline_value\": %.6g, \"ratio\": %.4g}\n",
		       baseline_value,
		       baseline_value != 0 ? value / baseline_value : 0.0);
	} else {
		printf("null, \"baseline_value\": null, \"ratio\": null}\n");
	}
	(void)fflush(stdout);
}

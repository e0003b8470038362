/*
 * prop.c - seeds and the RNG for property tests (see prop.h).
 */
#include "tests/support/prop.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "operators/base.h"

void
sc_rng_seed(struct sc_rng *r, uint64_t seed)
{
	uint64_t x = seed;

	for (int i = 0; i < 4; i++)
		r->s[i] = sc_splitmix_next(&x);
}

static inline uint64_t
rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

uint64_t
sc_rng_next(struct sc_rng *r)
{
	uint64_t *s = r->s;
	uint64_t result = rotl(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return result;
}

uint64_t
sc_rng_below(struct sc_rng *r, uint64_t n)
{
	/* Lemire's multiply-shift; the tiny bias is irrelevant for tests. */
	return (uint64_t)(((unsigned __int128)sc_rng_next(r) * n) >> 64);
}

int64_t
sc_rng_range(struct sc_rng *r, int64_t lo, int64_t hi)
{
	uint64_t span = (uint64_t)hi - (uint64_t)lo + 1;

	if (span == 0) /* the whole int64 range */
		return (int64_t)sc_rng_next(r);
	return (int64_t)((uint64_t)lo + sc_rng_below(r, span));
}

double
sc_rng_unit(struct sc_rng *r)
{
	return (double)(sc_rng_next(r) >> 11) * 0x1.0p-53;
}

uint64_t
sc_prop_seed(uint64_t fallback)
{
	const char *s = getenv("SC_SEED");

	if (s && *s)
		return strtoull(s, NULL, 0);
	return fallback;
}

uint64_t
sc_prop_count(uint64_t dflt)
{
	const char *seed = getenv("SC_SEED");
	const char *scale = getenv("SC_SEEDS_SCALE");

	if (seed && *seed)
		return 1;
	if (scale && *scale) {
		double f = strtod(scale, NULL);

		if (f > 0)
			return (uint64_t)((double)dflt * f) + 1;
	}
	return dflt;
}

const char *
sc_prop_replay(char *buf, size_t len, uint64_t seed, const char *suite,
	       const char *test)
{
	char exe[256];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n < 0)
		n = 0;
	exe[n] = '\0';
	(void)snprintf(buf, len,
		       "seed %llu: replay with SC_SEED=%llu %s --filter %s/%s",
		       (unsigned long long)seed, (unsigned long long)seed, exe,
		       suite, test);
	return buf;
}

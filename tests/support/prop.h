/*
 * prop.h - seeds, a fast deterministic RNG and replay messages for property
 * tests.
 *
 * A property test draws its seed with sc_prop_seed(): SC_SEED from the
 * environment if set (to replay a failure), else a fixed default per test so
 * that the suite is deterministic. SC_SEEDS scales how many seeds a test
 * runs (sc_prop_count). On a failure, sc_prop_replay() formats the line a
 * user pastes to run exactly that case again:
 *
 *     seed 1234: replay with SC_SEED=1234 ./build/tests/test_batch \
 *         --filter batch/group_laws
 *
 * The RNG is xoshiro256** seeded through splitmix64 (sc_splitmix_next,
 * operators/base.h): fast, and the same sequence on every machine.
 */
#ifndef SC_TEST_PROP_H
#define SC_TEST_PROP_H

#include <stddef.h>
#include <stdint.h>

struct sc_rng {
	uint64_t s[4]; /* xoshiro256** state; never all zero */
};

/* Seed the generator; any seed, including 0, gives a valid state. */
void sc_rng_seed(struct sc_rng *r, uint64_t seed);

/* The next 64 random bits. */
uint64_t sc_rng_next(struct sc_rng *r);

/* A uniform integer in [0, n); n must be > 0. */
uint64_t sc_rng_below(struct sc_rng *r, uint64_t n);

/* A uniform integer in [lo, hi] (inclusive). */
int64_t sc_rng_range(struct sc_rng *r, int64_t lo, int64_t hi);

/* A uniform double in [0, 1). */
double sc_rng_unit(struct sc_rng *r);

/*
 * sc_prop_seed - the base seed for a property test: SC_SEED if set, else
 * `fallback`.
 */
uint64_t sc_prop_seed(uint64_t fallback);

/*
 * sc_prop_count - how many cases to run: `dflt` scaled by SC_SEEDS_SCALE if
 * set, or exactly 1 when SC_SEED is set (replaying one seed).
 */
uint64_t sc_prop_count(uint64_t dflt);

/*
 * sc_prop_replay - write "seed S: replay with SC_SEED=S <exe> --filter
 * <suite>/<test>" into buf (NUL-terminated, truncated to len) and return buf.
 */
const char *sc_prop_replay(char *buf, size_t len, uint64_t seed,
			   const char *suite, const char *test);

/*
 * SC_PROP_ASSERT - a Criterion assertion that names the seed and the replay
 * command when it fails. Use inside Test(suite, test) bodies.
 */
#define SC_PROP_ASSERT(seed, suite, test, cond, ...)                           \
	do {                                                                   \
		if (!(cond)) {                                                 \
			char sc_replay_[512];                                  \
			cr_log_error(__VA_ARGS__);                             \
			cr_assert_fail(                                        \
			    "%s",                                              \
			    sc_prop_replay(sc_replay_, sizeof(sc_replay_),     \
					   (seed), (suite), (test)));          \
		}                                                              \
	} while (0)

#endif /* SC_TEST_PROP_H */

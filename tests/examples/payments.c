/*
 * payments.c - a workload plugin (units/workload.h): a circuit of your own
 * and the input that drives it, which `subcirc run`, `place` and `stress`
 * load from a shared object without a line of subcirc changed.
 *
 * The circuit. Users (user, country) and payments (id, user, amount,
 * refunded) come in as changes. A refund retracts the payment's row
 * (weight -1) and inserts it again with refunded = 1, so the circuit sees
 * what a database's change feed would show. The payments not refunded
 * are summed per user (output `per_user`: user, total); those sums joined
 * with the users and summed again per country (output `per_country`:
 * country, total).
 *
 * The input. First the users, then the payments, `batch` rows per
 * submission; a payment chosen for a refund is refunded in the submission
 * after its own. Every row is a pure function of the seed and its index
 * (mix() below), so `verify` recomputes the expected totals from scratch
 * for any number of submissions, without keeping what `next` handed out.
 *
 * Arguments (--workload-arg K=V): users (default 100), countries (5),
 * payments (in all; default the host's event count, else 2000), batch
 * (rows per submission, 100).
 *
 * Build against an installed subcirc and run:
 *   cc -shared -fPIC payments.c $(pkg-config --cflags --libs subcirc) \
 *      -Wl,-rpath,$(pkg-config --variable=libdir subcirc) -o libpayments.so
 *   subcirc run --workload ./libpayments.so --check
 */
#include <inttypes.h>
#include <stdlib.h>

#include <subcirc/subcirc.h>

struct payments {
	struct sc_graph *g;
	int users_in, payments_in; /* input nodes */
	int per_user, per_country; /* output nodes */
	uint64_t seed; /* the host's: the same seed, the same rows */
	uint64_t users, countries; /* arguments */
	uint64_t payments, batch;  /* arguments */
	uint64_t user_submissions; /* submissions that carry the users */
};

/* --- the rows: pure functions of the seed and an index ------------------- */

/* splitmix64's finaliser: a well-mixed word from any index. */
static uint64_t
mix(uint64_t seed, uint64_t x)
{
	uint64_t z = seed + (x + 1) * 0x9e3779b97f4a7c15ull;

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static int64_t
country_of(const struct payments *p, uint64_t user)
{
	/* The top bit keeps users' words apart from payments'. */
	return (int64_t)(mix(p->seed, user | 1ull << 63) % p->countries);
}

/* Payment j: its user, its amount (1..1000) and whether it is refunded
 * (one in ten). */
static void
payment(const struct payments *p, uint64_t j, int64_t *user, int64_t *amount,
	bool *refunded)
{
	uint64_t h = mix(p->seed, j);

	*user = (int64_t)(h % p->users);
	*amount = 1 + (int64_t)((h >> 24) % 1000);
	*refunded = (h >> 48) % 10 == 0;
}

/* --- the circuit ---------------------------------------------------------- */

/* The filter's callback runs on worker threads: it reads only its row. */
static int
not_refunded(void *ctx, const uint64_t *row, bool *keep)
{
	(void)ctx;
	*keep = sc_dec_i64(row[3]) == 0;
	return 0;
}

/* The graph; each call passes an earlier one's error on, so a check of
 * the two outputs finds the first (operators/graph.h). */
static int
build(struct payments *p)
{
	enum sc_type user_t[2] = {SC_TYPE_I64, SC_TYPE_I64};
	enum sc_type pay_t[4] = {SC_TYPE_I64, SC_TYPE_I64, SC_TYPE_I64,
				 SC_TYPE_I64};
	struct sc_schema users, pays;
	int rc;

	if ((rc = sc_schema_init(&users, 2, user_t, NULL)) != 0 ||
	    (rc = sc_schema_init(&pays, 4, pay_t, NULL)) != 0)
		return rc;
	struct sc_graph *g = p->g;
	p->users_in = sc_graph_input(g, "users", &users);
	p->payments_in = sc_graph_input(g, "payments", &pays);
	/* (id, user, amount, refunded) -> (user, amount), then the sum. */
	const uint32_t by_user[2] = {1, 2};
	struct sc_aggregate_spec sum = {.ncols = 2,
					.k = 1,
					.kind = SC_AGG_SUM,
					.col = 1,
					.col_type = SC_TYPE_I64};
	int kept = sc_graph_filter(g, p->payments_in, not_refunded, NULL);
	int totals =
	    sc_graph_aggregate(g, sc_graph_index_by(g, kept, by_user, 2), &sum);
	p->per_user = sc_graph_output(g, "per_user", totals);
	/* (user, total) join (user, country) -> (user, total, country). */
	const uint32_t by_country[2] = {2, 1};
	int joined = sc_graph_join(g, totals, p->users_in, 1);
	int countries = sc_graph_aggregate(
	    g, sc_graph_index_by(g, joined, by_country, 2), &sum);
	p->per_country = sc_graph_output(g, "per_country", countries);
	if (p->per_user < 0)
		return p->per_user;
	return p->per_country < 0 ? p->per_country : 0;
}

/* --- the definition's callbacks ------------------------------------------ */

static void
payments_destroy(void *self)
{
	struct payments *p = self;

	(void)sc_graph_destroy(p->g);
	free(p);
}

static int
payments_create(struct sc_workload_env *env, void **self)
{
	struct payments *p = calloc(1, sizeof(*p));
	int rc;

	if (!p)
		return sc_errorf(SC_ENOMEM, "payments: the instance");
	p->seed = env->seed;
	/* Every argument is read here: one create never reads is refused by
	 * name, so a misspelt key cannot be silently ignored. */
	if ((rc = sc_workload_arg_u64(env, "users", 100, 1, 1u << 24,
				      &p->users)) != 0 ||
	    (rc = sc_workload_arg_u64(env, "countries", 5, 1, 1u << 16,
				      &p->countries)) != 0 ||
	    (rc = sc_workload_arg_u64(env, "payments",
				      env->events ? env->events : 2000, 0,
				      1ull << 40, &p->payments)) != 0 ||
	    (rc = sc_workload_arg_u64(env, "batch", 100, 1, 1u << 20,
				      &p->batch)) != 0 ||
	    (rc = sc_graph_create(&p->g)) != 0 || (rc = build(p)) != 0) {
		payments_destroy(p);
		return rc;
	}
	p->user_submissions = (p->users + p->batch - 1) / p->batch;
	*self = p;
	return 0;
}

static struct sc_graph *
payments_graph(void *self)
{
	return ((struct payments *)self)->g;
}

/* Submission i: a batch of users, or a batch of payments with the refunds
 * of the batch before. */
static int
payments_next(void *self, size_t i, struct sc_settle_step *out)
{
	struct payments *p = self;
	struct sc_batch_builder b;
	uint64_t lo, hi, row[4];
	int rc = 0;

	if (i < p->user_submissions) {
		lo = i * p->batch;
		hi = lo + p->batch < p->users ? lo + p->batch : p->users;
		out->input = p->users_in;
		(void)sc_batch_builder_init(&b, 2);
		for (uint64_t u = lo; u < hi && rc == 0; u++) {
			row[0] = sc_enc_i64((int64_t)u);
			row[1] = sc_enc_i64(country_of(p, u));
			rc = sc_batch_builder_push(&b, row, 2, 1);
		}
	} else {
		lo = (i - p->user_submissions) * p->batch;
		if (lo >= p->payments)
			return SC_EEMPTY;
		hi = lo + p->batch < p->payments ? lo + p->batch : p->payments;
		out->input = p->payments_in;
		(void)sc_batch_builder_init(&b, 4);
		/* The previous batch's payments, for their refunds (a row
		 * retracted and inserted again, refunded), then this one's. */
		for (uint64_t j = lo >= p->batch ? lo - p->batch : lo;
		     j < hi && rc == 0; j++) {
			int64_t user, amount;
			bool refunded;

			payment(p, j, &user, &amount, &refunded);
			row[0] = sc_enc_i64((int64_t)j);
			row[1] = sc_enc_i64(user);
			row[2] = sc_enc_i64(amount);
			row[3] = sc_enc_i64(0);
			if (j >= lo) {
				rc = sc_batch_builder_push(&b, row, 4, 1);
			} else if (refunded) {
				rc = sc_batch_builder_push(&b, row, 4, -1);
				row[3] = sc_enc_i64(1);
				if (rc == 0)
					rc = sc_batch_builder_push(&b, row, 4,
								   1);
			}
		}
	}
	if (rc == 0)
		rc = sc_batch_builder_finish(&b, &out->batch);
	sc_batch_builder_fini(&b);
	return rc;
}

/* --- the reference -------------------------------------------------------- */

/* A group's expected total, and how many rows made it (0: no group). */
struct expect {
	int64_t total;
	uint64_t rows;
};

/* Whether `got` holds exactly the groups of want[0..n) with rows: one row
 * (key, total) of weight 1 each. */
static int
compare(const char *what, const struct expect *want, uint64_t n,
	const struct sc_batch *got)
{
	uint64_t live = 0;

	for (uint64_t k = 0; k < n; k++)
		live += want[k].rows > 0;
	for (size_t i = 0; i < sc_batch_count(got); i++) {
		const uint64_t *row = sc_batch_row(got, i);
		int64_t key = sc_dec_i64(row[0]), total = sc_dec_i64(row[1]);

		if (key < 0 || (uint64_t)key >= n || want[key].rows == 0 ||
		    want[key].total != total || sc_batch_weight(got, i) != 1)
			return sc_errorf(
			    SC_ECALLBACK,
			    "payments: %s row (%" PRId64 ", %" PRId64
			    ") x %" PRId64 " is not expected",
			    what, key, total, sc_batch_weight(got, i));
	}
	if (sc_batch_count(got) != live)
		return sc_errorf(SC_ECALLBACK,
				 "payments: %s has %zu rows, expected %" PRIu64,
				 what, sc_batch_count(got), live);
	return 0;
}

/* The totals after the first n submissions, from the rows' definitions
 * alone: a refunded payment counts until the batch after its own is in. */
static int
payments_verify(void *self, int output, size_t n,
		const struct sc_batch *integral)
{
	struct payments *p = self;
	uint64_t us = p->user_submissions;
	uint64_t fed = (n < us ? n : us) * p->batch;
	uint64_t made = n > us ? (n - us) * p->batch : 0;
	struct expect *user = calloc(p->users, sizeof(*user));
	struct expect *country = calloc(p->countries, sizeof(*country));
	int rc;

	if (made > p->payments)
		made = p->payments;
	if (!user || !country) {
		rc = sc_errorf(SC_ENOMEM, "payments: the reference");
		goto out;
	}
	for (uint64_t j = 0; j < made; j++) {
		int64_t u, amount;
		bool refunded;

		payment(p, j, &u, &amount, &refunded);
		if (refunded && (j / p->batch + 1) * p->batch < made)
			continue;
		user[u].total += amount;
		user[u].rows++;
	}
	for (uint64_t u = 0; u < p->users && u < fed; u++) {
		if (user[u].rows == 0)
			continue;
		country[country_of(p, u)].total += user[u].total;
		country[country_of(p, u)].rows++;
	}
	if (output == p->per_user)
		rc = compare("per_user", user, p->users, integral);
	else if (output == p->per_country)
		rc = compare("per_country", country, p->countries, integral);
	else
		rc = sc_errorf(SC_EINVAL, "payments: node %d is no output",
			       output);
out:
	free(user);
	free(country);
	return rc;
}

/* --- the definition ------------------------------------------------------- */

static const struct sc_workload_def payments_def = {
    .version = SC_WORKLOAD_VERSION, /* what this file was compiled with */
    .name = "payments",
    .about = "payments, refunds and users -> totals per user and per "
	     "country (args users, countries, payments, batch)",
    .create = payments_create,
    .destroy = payments_destroy,
    .graph = payments_graph,
    .next = payments_next,
    .verify = payments_verify,
};

/* What the host looks up in this shared object (SC_WORKLOAD_ENTRY). */
const struct sc_workload_def *sc_workload_entry(void);

const struct sc_workload_def *
sc_workload_entry(void)
{
	return &payments_def;
}

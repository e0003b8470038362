/* running.c - a workload plugin in ticks: in, each account's net transfer
 * (account, amount) a tick; out, the balances and, through delay, those
 * each tick opened with, which verify recomputes from the seed. */
#include <inttypes.h>
#include <stdlib.h>
#include <subcirc/subcirc.h>

struct running {
	struct sc_graph *g;
	int in, balance, opening; /* nodes */
	uint64_t seed, accounts, ticks;
};

/* Account a's net transfer in tick t, in -500..499. */
static int64_t
amount(const struct running *r, uint64_t t, uint64_t a)
{
	uint64_t h = (r->seed ^ (t << 32 | a)) * 0x9e3779b97f4a7c15ull;

	return (int64_t)(h >> 40) % 1000 - 500;
}

static void
running_destroy(void *self)
{
	(void)sc_graph_destroy(((struct running *)self)->g);
	free(self);
}

static int
running_create(struct sc_workload_env *env, void **self)
{
	struct running *r = calloc(1, sizeof(*r));
	enum sc_type types[2] = {SC_TYPE_I64, SC_TYPE_I64};
	struct sc_aggregate_spec sum = {2, 1, SC_AGG_SUM, 1, SC_TYPE_I64};
	struct sc_schema s;
	int rc;

	if (!r)
		return sc_errorf(SC_ENOMEM, "running: the instance");
	r->seed = env->seed; /* every argument read, or create is refused */
	if ((rc = sc_workload_arg_u64(env, "accounts", 16, 1, 1u << 20,
				      &r->accounts)) ||
	    (rc = sc_workload_arg_u64(env, "ticks", 20, 1, 1u << 20,
				      &r->ticks)) ||
	    (rc = sc_schema_init(&s, 2, types, NULL)) ||
	    (rc = sc_graph_create(&r->g)))
		goto fail;
	r->in = sc_graph_input(r->g, "transfers", &s);
	int sums = sc_graph_aggregate(r->g, r->in, &sum);
	/* delay is a tick operator: hence SC_WORKLOAD_TICKS below. */
	r->opening =
	    sc_graph_output(r->g, "opening", sc_graph_delay(r->g, sums));
	r->balance = sc_graph_output(r->g, "balance", sums);
	if ((rc = r->opening < 0 ? r->opening : r->balance) >= 0) {
		*self = r;
		return 0;
	}
fail:
	running_destroy(r);
	return rc;
}

static struct sc_graph *
running_graph(void *self)
{
	return ((struct running *)self)->g;
}

/* Submission 2t: tick t's transfers; 2t + 1: the boundary closing it. */
static int
running_next(void *self, size_t i, struct sc_settle_step *out)
{
	struct running *r = self;
	struct sc_batch_builder b;
	int rc = 0;

	if (i >= 2 * r->ticks)
		return SC_EEMPTY;
	*out = (struct sc_settle_step){.input = SC_SETTLE_TICK};
	if (i % 2)
		return 0;
	(void)sc_batch_builder_init(&b, 2);
	for (uint64_t a = 0; a < r->accounts && rc == 0; a++) {
		uint64_t row[2] = {sc_enc_i64((int64_t)a),
				   sc_enc_i64(amount(r, i / 2, a))};
		rc = sc_batch_builder_push(&b, row, 2, 1);
	}
	out->input = r->in;
	if (rc == 0)
		rc = sc_batch_builder_finish(&b, &out->batch);
	sc_batch_builder_fini(&b);
	return rc;
}

/* After n submissions (n + 1) / 2 ticks are closed (the host closes a
 * trailing one); `opening` holds all but the last. */
static int
running_verify(void *self, int output, size_t n, const struct sc_batch *got)
{
	struct running *r = self;
	uint64_t ticks = (n + 1) / 2 - (output == r->opening && n > 0);
	size_t want_rows = ticks ? r->accounts : 0;

	for (size_t i = 0; i < sc_batch_count(got); i++) {
		int64_t a = sc_dec_i64(sc_batch_row(got, i)[0]), want = 0;
		int64_t v = sc_dec_i64(sc_batch_row(got, i)[1]);
		bool ok = a >= 0 && (uint64_t)a < r->accounts &&
			  sc_batch_weight(got, i) == 1;

		for (uint64_t t = 0; ok && t < ticks; t++)
			want += amount(r, t, (uint64_t)a);
		if (!ok || v != want)
			return sc_errorf(SC_ECALLBACK,
					 "running: row (%" PRId64 ", %" PRId64
					 "), wanted balance %" PRId64,
					 a, v, want);
	}
	if (sc_batch_count(got) != want_rows)
		return sc_errorf(SC_ECALLBACK, "running: %zu accounts, not %zu",
				 sc_batch_count(got), want_rows);
	return 0;
}

static const struct sc_workload_def running_def = {
    .version = SC_WORKLOAD_VERSION, /* as compiled; checked when loaded */
    .flags = SC_WORKLOAD_TICKS,
    .name = "running",
    .about = "transfers per tick -> balances (args accounts, ticks)",
    .create = running_create,
    .destroy = running_destroy,
    .graph = running_graph,
    .next = running_next,
    .verify = running_verify,
};

/* The one name the host looks up in this shared object. */
const struct sc_workload_def *sc_workload_entry(void);
const struct sc_workload_def *
sc_workload_entry(void)
{
	return &running_def;
}

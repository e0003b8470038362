// tbb_pipeline.cpp - the peer pipeline in oneTBB's flow graph: the same
// 4 stages as bench/bench_pipeline.c's "pipeline R-row" case (source ->
// stage -> stage -> sink), frames of R rows from a pool built in advance,
// the sink reading every row's weight.
//
// Backpressure: the stages are serial function_nodes, and a limiter_node
// after the source (an input_node, which TBB pulls from only while its
// successor accepts) lets at most 3 x 256 frames into the stages, the
// room of the C pipeline's three edges; the sink's continue_msg to the
// limiter's decrementer opens room for the next (the flow graph's usual
// way to bound a pipeline). The
// graph runs in a task_arena of --threads threads, the calling thread
// included, so it uses as many threads as subcirc runs workers.
//
// usage: tbb_pipeline --frames N --rows R --threads T --reps K
// prints one JSON line: the median items/s (rows) of K runs.
#include <oneapi/tbb/flow_graph.h>
#include <oneapi/tbb/task_arena.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

constexpr std::size_t kPool = 4096; // frames built in advance, as in C
// Frames in flight between the source and the sink: the room of the C
// pipeline's three edges of 256 frames.
constexpr std::size_t kInFlight = 3 * 256;

struct Frame {
	std::vector<std::uint64_t> keys;
	std::vector<std::int64_t> weights;
};

std::vector<Frame> build_pool(std::uint32_t rows)
{
	std::vector<Frame> pool(kPool);

	for (std::size_t f = 0; f < kPool; f++) {
		pool[f].keys.resize(rows);
		pool[f].weights.assign(rows, 1);
		for (std::uint32_t i = 0; i < rows; i++)
			pool[f].keys[i] = f * 256 + i;
	}
	return pool;
}

double run_once(const std::vector<Frame> &pool, std::uint64_t frames,
		std::uint32_t rows, int threads)
{
	using namespace oneapi::tbb::flow;
	oneapi::tbb::task_arena arena(threads);
	std::uint64_t items = 0;
	double secs = 0;

	arena.execute([&] {
		graph g;
		std::uint64_t next = 0;
		input_node<const Frame *> source(
		    g, [&](oneapi::tbb::flow_control &fc) -> const Frame * {
			    if (next == frames) {
				    fc.stop();
				    return nullptr;
			    }
			    return &pool[next++ % kPool];
		    });
		auto pass = [](const Frame *f) { return f; };
		limiter_node<const Frame *> limit(g, kInFlight);
		function_node<const Frame *, const Frame *> s1(g, serial, pass);
		function_node<const Frame *, const Frame *> s2(g, serial, pass);
		function_node<const Frame *, continue_msg> sink(
		    g, serial, [&](const Frame *f) {
			    std::int64_t w = 0;

			    for (std::int64_t x : f->weights)
				    w += x;
			    items += static_cast<std::uint64_t>(w);
			    return continue_msg();
		    });
		make_edge(source, limit);
		make_edge(limit, s1);
		make_edge(s1, s2);
		make_edge(s2, sink);
		make_edge(sink, limit.decrementer());
		auto t0 = std::chrono::steady_clock::now();
		source.activate();
		g.wait_for_all();
		secs = std::chrono::duration<double>(
			   std::chrono::steady_clock::now() - t0)
			   .count();
	});
	if (items != frames * rows) {
		std::fprintf(stderr, "tbb_pipeline: %llu of %llu items\n",
			     (unsigned long long)items,
			     (unsigned long long)(frames * rows));
		std::exit(1);
	}
	return static_cast<double>(items) / secs;
}

std::uint64_t arg(int argc, char **argv, const char *name, std::uint64_t dflt)
{
	for (int i = 1; i + 1 < argc; i++)
		if (!std::strcmp(argv[i], name))
			return std::strtoull(argv[i + 1], nullptr, 10);
	return dflt;
}

} // namespace

int main(int argc, char **argv)
{
	std::uint64_t frames = arg(argc, argv, "--frames", 100000);
	auto rows = static_cast<std::uint32_t>(arg(argc, argv, "--rows", 1));
	int threads = static_cast<int>(arg(argc, argv, "--threads", 2));
	int reps = static_cast<int>(arg(argc, argv, "--reps", 3));
	std::vector<double> v;

	if (rows < 1 || rows > 256 || threads < 1 || reps < 1 || frames < 1) {
		std::fprintf(stderr, "tbb_pipeline: bad arguments\n");
		return 2;
	}
	auto pool = build_pool(rows);
	for (int r = 0; r < reps; r++)
		v.push_back(run_once(pool, frames, rows, threads));
	std::sort(v.begin(), v.end());
	std::printf("{\"bench\": \"peers\", \"peer\": \"oneTBB flow_graph\", "
		    "\"rows\": %u, \"frames\": %llu, \"threads\": %d, "
		    "\"unit\": \"items/s\", \"value\": %.1f}\n",
		    rows, (unsigned long long)frames, threads, v[v.size() / 2]);
	return 0;
}

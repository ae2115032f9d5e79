// The graph planner (include/cush/graph.hpp) against the least any planner must do: one pass that
// reads owner[col] for every entry of the graph (spec rbffd.md goal 6: the decomposition in at most
// 3 x that pass, memory O(N + entries)). Host code only; timed on the GPU host with the others.
//
// Names: graph/<what>/<parts>part/<log2 N>
//   what  owner_pass  sum of owner[cols[e]] over every entry e (the floor)
//         decompose   GraphDecomposition(graph, owner, parts): every part's sets, order, maps, messages
//         localize    GraphDecomposition::localize of every part (the rows in local indices)
// The graph: N nodes of a Fibonacci sphere's index order, 31 entries per row at the index offsets
// 0, +-1, +-2, +-3, +-5, ..., +-610 (mod N): a Fibonacci lattice's neighbours lie at Fibonacci index
// differences, so the pattern crosses slab boundaries as a kNN stencil of that lattice does. Owners:
// equal consecutive ranges (latitude slabs). Counter: entries per second.
// Environment: CUSH_BENCH_GRAPH_MAX_LOG2 (default 24) caps N.

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "cush/graph.hpp"
#include "harness.hpp"

namespace {

struct Graph {
  std::vector<std::int64_t> row_ptr, cols;
  std::vector<int> owner;
};

std::unique_ptr<Graph> make_graph(std::size_t n, std::size_t parts) {
  auto g = std::make_unique<Graph>();
  static const std::int64_t fib[] = {1, 2, 3, 5, 8, 13, 21, 34, 55, 89, 144, 233, 377, 610, 987};
  const auto nodes = static_cast<std::int64_t>(n);
  g->row_ptr.reserve(n + 1);
  g->cols.reserve(n * 31);
  g->row_ptr.push_back(0);
  for (std::int64_t i = 0; i < nodes; ++i) {
    g->cols.push_back(i);
    for (std::int64_t d : fib) {
      g->cols.push_back(((i + d) % nodes + nodes) % nodes);
      g->cols.push_back(((i - d) % nodes + nodes) % nodes);
    }
    g->row_ptr.push_back(static_cast<std::int64_t>(g->cols.size()));
  }
  g->owner.resize(n);
  for (std::size_t i = 0; i < n; ++i) g->owner[i] = static_cast<int>(i * parts / n);
  return g;
}

std::size_t max_log2() {
  const char* v = std::getenv("CUSH_BENCH_GRAPH_MAX_LOG2");
  return v != nullptr ? std::strtoull(v, nullptr, 10) : 24;
}

enum class What { owner_pass, decompose, localize };

void run(benchmark::State& state, What what, std::size_t n, std::size_t parts) {
  const Graph* g = cush_bench::kept<Graph>("graph/" + std::to_string(n) + "/" + std::to_string(parts),
                                          [&] { return make_graph(n, parts); });
  const cush::Adjacency adj{g->row_ptr, g->cols};
  std::unique_ptr<cush::GraphDecomposition> dec;
  if (what == What::localize) dec = std::make_unique<cush::GraphDecomposition>(adj, g->owner, parts);
  std::int64_t sink = 0;
  for (auto _ : state) {
    switch (what) {
      case What::owner_pass:
        for (const std::int64_t c : g->cols) sink += g->owner[static_cast<std::size_t>(c)];
        break;
      case What::decompose: {
        const cush::GraphDecomposition d(adj, g->owner, parts);
        sink += static_cast<std::int64_t>(d.messages().size());
        break;
      }
      case What::localize:
        for (std::size_t p = 0; p < parts; ++p) sink += static_cast<std::int64_t>(dec->localize(p, adj).cols.size());
        break;
    }
    benchmark::DoNotOptimize(sink);
  }
  state.counters["entries_per_s"] =
      benchmark::Counter(static_cast<double>(g->cols.size()), benchmark::Counter::kIsIterationInvariantRate);
  state.counters["N"] = static_cast<double>(n);
}

void register_all() {
  const std::pair<What, const char*> whats[] = {
      {What::owner_pass, "owner_pass"}, {What::decompose, "decompose"}, {What::localize, "localize"}};
  for (std::size_t lg = 16; lg <= max_log2(); lg += 4)
    for (std::size_t parts : {2U, 4U, 8U})
      for (const auto& [what, name] : whats) {
        const std::string row = std::string("graph/") + name + "/" + std::to_string(parts) + "part/" + std::to_string(lg);
        benchmark::RegisterBenchmark(row.c_str(), [=](benchmark::State& s) { run(s, what, std::size_t{1} << lg, parts); })
            ->Unit(benchmark::kMillisecond)
            ->UseRealTime()
            ->MinTime(cush_bench::min_time());
      }
}

}  // namespace

int main(int argc, char** argv) { return cush_bench::run(argc, argv, "bench_graph", register_all); }

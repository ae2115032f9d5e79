// Graph fields on the GPUs: scatter/gather round trips, exchanges by every transport and call
// (exchange(), start/finish, overlapped) over random graphs on every device order, every value
// of every part's buffer compared with the global array it stands for; an overlapped sparse
// product equal bit for bit to the bulk one; odd element sizes; capture into a CUDA graph; misuse.

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "cush/cush.hpp"
#include "support/gpu.hpp"
#include "support/kernels.hpp"
#include "support/random_graphs.hpp"

namespace {

using cush::GraphDecomposition;
using cush::GraphField;
using cush::GraphTransport;

std::vector<double> random_values(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<double> v(n);
  for (double& x : v) x = u(rng);
  return v;
}

// A random graph of the generator's with its owners folded onto `parts` parts (each owns a node).
struct Problem {
  cush_test::Graph graph;
  std::vector<int> owner;
  std::string what;
};

bool random_problem(std::mt19937_64& rng, int trial, std::size_t parts, Problem& out) {
  cush_test::Coverage seen;
  cush_test::Case c = random_case(rng, trial, seen);
  if (c.graph.nodes() < parts) return false;
  std::vector<int> owner(c.owner.size());
  std::vector<char> used(parts, 0);
  for (std::size_t i = 0; i < owner.size(); ++i) {
    owner[i] = c.owner[i] % static_cast<int>(parts);
    used[static_cast<std::size_t>(owner[i])] = 1;
  }
  for (char u : used)
    if (u == 0) return false;
  out = Problem{std::move(c.graph), std::move(owner), c.what};
  return true;
}

// Every value of every part's buffer (owned and ghost, every component) against `global`.
template <class T>
void expect_parts_hold(const GraphField<T>& f, const std::vector<T>& global, const std::string& how) {
  f.wait();
  const std::size_t n = f.decomposition().nodes();
  for (std::size_t k = 0; k < f.devices().size(); ++k) {
    const cush::GraphBlock<T> b = f.block(k);
    std::vector<T> buf(b.component_stride() * b.components());
    {
      const cush::DeviceGuard guard(b.device());
      ASSERT_EQ(cudaMemcpy(buf.data(), b.data(), buf.size() * sizeof(T), cudaMemcpyDeviceToHost), cudaSuccess);
    }
    for (std::size_t c = 0; c < b.components(); ++c)
      for (std::size_t i = 0; i < b.size(); ++i) {
        const std::size_t g = static_cast<std::size_t>(b.part().global(i));
        ASSERT_EQ(std::memcmp(&buf[c * b.component_stride() + i], &global[c * n + g], sizeof(T)), 0)
            << how << ": part " << k << " component " << c << " local " << i << " (node " << g
            << (i < b.part().owned().count ? ", owned)" : ", ghost)");
      }
  }
}

std::vector<GraphTransport> transports_for(const cush::DeviceSet& d) {
  std::vector<GraphTransport> t{GraphTransport::automatic, GraphTransport::staged, GraphTransport::host_staging};
  bool reach = true;
  for (std::size_t a = 0; a < d.size(); ++a)
    for (std::size_t b = 0; b < d.size(); ++b) {
      int can = 1;
      if (d.physical(a) != d.physical(b)) EXPECT_EQ(cudaDeviceCanAccessPeer(&can, d.physical(a), d.physical(b)), cudaSuccess);
      reach = reach && can != 0;
    }
  if (reach) t.push_back(GraphTransport::peer);
  bool distinct = true;
  for (std::size_t a = 0; a < d.size(); ++a)
    for (std::size_t b = a + 1; b < d.size(); ++b) distinct = distinct && d.physical(a) != d.physical(b);
  if (distinct) t.push_back(GraphTransport::nccl);
  return t;
}

TEST(GraphField, RandomGraphsExchangeEveryGhostOnEveryTransport) {
  CUSH_REQUIRE_GPUS(1);
  std::mt19937_64 rng(2050);
  int checked = 0;
  for (const std::vector<int>& ids : cush_test::device_orders())
    for (int trial = 0; trial < 24; ++trial) {
      Problem p;
      if (!random_problem(rng, trial, ids.size(), p)) continue;
      const std::size_t components = 1 + static_cast<std::size_t>(trial % 3);
      const cush::DeviceSet devices(ids);
      GraphField<double> f(devices, GraphDecomposition(p.graph.adjacency(), p.owner, ids.size()), components);
      const std::string where = p.what + " on " + cush_test::to_string(ids) + ", " + std::to_string(components) + " components";
      const std::size_t n = p.graph.nodes() * components;
      std::vector<double> back(n, 0.0);
      for (GraphTransport t : transports_for(devices)) {
        f.set_transport(t);
        for (int call = 0; call < 3; ++call) {
          const std::vector<double> values = random_values(n, static_cast<unsigned>(trial * 10 + call));
          f.scatter(values);
          if (call == 0) f.exchange();
          if (call == 1) {
            f.exchange_start();
            f.exchange_finish();
          }
          if (call == 2) f.exchange_overlapped([](const cush::GraphBlock<double>&, cush::Range) {});
          const std::string how = where + ", " + cush::to_string(t) + ", call " + std::to_string(call);
          expect_parts_hold(f, values, how);
          f.gather(back);
          f.wait();
          ASSERT_EQ(back, values) << how << ": gather";
          ++checked;
        }
      }
    }
  EXPECT_GT(checked, 40);
}

// y = A x over the localized rows, overlapped with the exchange (interior rows during it, boundary
// rows after), equal bit for bit to the bulk product and close to the host's; split by columns
// (every row's owned-column entries during it, the ghost-column entries added after), within
// 1e-13 of the sum of the terms' magnitudes.
TEST(GraphField, OverlappedProductMatchesBulkBitForBit) {
  CUSH_REQUIRE_GPUS(1);
  std::mt19937_64 rng(77);
  for (const std::vector<int>& ids : cush_test::device_orders())
    for (int trial = 0; trial < 6; ++trial) {
      Problem p;
      if (!random_problem(rng, 2 * trial, ids.size(), p)) continue;  // kNN graphs
      const GraphDecomposition dec(p.graph.adjacency(), p.owner, ids.size());
      const std::vector<double> w = random_values(p.graph.cols.size(), 5);
      const std::vector<double> x = random_values(p.graph.nodes(), 6);
      GraphField<double> xf(cush::DeviceSet(ids), dec);
      auto yf = GraphField<double>::alike(xf);
      // Each part's localized rows and their weights, on its device.
      std::vector<cush::DeviceBuffer> rows, cols, weights;
      std::array<std::vector<cush::DeviceBuffer>, 2> half_rows, half_cols, half_weights;  // split: owned, ghost columns
      for (std::size_t k = 0; k < ids.size(); ++k) {
        const cush::LocalAdjacency a = dec.localize(k, p.graph.adjacency());
        const cush::SplitAdjacency split = cush::split_columns(a, dec.part(k));
        std::vector<double> wk;
        const cush::GraphPart& part = dec.part(k);
        for (std::size_t r = 0; r < part.owned().count; ++r) {
          const auto g = static_cast<std::size_t>(part.global(r));
          for (std::int64_t e = p.graph.row_ptr[g]; e < p.graph.row_ptr[g + 1]; ++e) wk.push_back(w[static_cast<std::size_t>(e)]);
        }
        const int dev = xf.block(k).device();
        const auto upload = [&](const void* src, std::size_t bytes) {
          cush::DeviceBuffer b(dev, bytes + 8);
          const cush::DeviceGuard guard(dev);
          EXPECT_EQ(cudaMemcpy(b.data(), src, bytes, cudaMemcpyHostToDevice), cudaSuccess);
          return b;
        };
        rows.push_back(upload(a.row_ptr.data(), a.row_ptr.size() * sizeof(std::int64_t)));
        cols.push_back(upload(a.cols.data(), a.cols.size() * sizeof(std::int32_t)));
        weights.push_back(upload(wk.data(), wk.size() * sizeof(double)));
        for (int h = 0; h < 2; ++h) {
          const cush::LocalAdjacency& half = h == 0 ? split.owned : split.ghosts;
          std::vector<double> wh;
          for (std::int64_t e : half.entries) wh.push_back(w[static_cast<std::size_t>(e)]);
          half_rows[h].push_back(upload(half.row_ptr.data(), half.row_ptr.size() * sizeof(std::int64_t)));
          half_cols[h].push_back(upload(half.cols.data(), half.cols.size() * sizeof(std::int32_t)));
          half_weights[h].push_back(upload(wh.data(), wh.size() * sizeof(double)));
        }
      }
      const auto product = [&](const cush::GraphBlock<double>& b, cush::Range r) {
        cush_test::csr_rows(b.data(), static_cast<const std::int64_t*>(rows[b.pos()].data()),
                            static_cast<const std::int32_t*>(cols[b.pos()].data()),
                            static_cast<const double*>(weights[b.pos()].data()), r.offset, r.count, yf.block(b.pos()).data(),
                            b.stream());
      };
      const auto half_product = [&](int h) {
        return [&, h](const cush::GraphBlock<double>& b, cush::Range r) {
          (h == 0 ? cush_test::csr_rows : cush_test::csr_rows_add)(
              b.data(), static_cast<const std::int64_t*>(half_rows[h][b.pos()].data()),
              static_cast<const std::int32_t*>(half_cols[h][b.pos()].data()),
              static_cast<const double*>(half_weights[h][b.pos()].data()), r.offset, r.count, yf.block(b.pos()).data(),
              b.stream());
        };
      };
      std::vector<double> bulk(p.graph.nodes()), overlapped(p.graph.nodes()), split(p.graph.nodes());
      xf.scatter(x);
      xf.exchange();
      xf.for_each([&](const cush::GraphBlock<double>& b) { product(b, b.part().owned()); });
      yf.gather(bulk);
      xf.scatter(x);
      xf.exchange_overlapped(product);
      yf.gather(overlapped);
      xf.scatter(x);
      xf.exchange_overlapped_split(half_product(0), half_product(1));
      yf.gather(split);
      yf.wait();
      ASSERT_EQ(std::memcmp(bulk.data(), overlapped.data(), bulk.size() * sizeof(double)), 0)
          << p.what << " on " << cush_test::to_string(ids);
      for (std::size_t i = 0; i < bulk.size(); ++i) {
        double sum = 0;
        for (std::int64_t e = p.graph.row_ptr[i]; e < p.graph.row_ptr[i + 1]; ++e)
          sum += w[static_cast<std::size_t>(e)] * x[static_cast<std::size_t>(p.graph.cols[static_cast<std::size_t>(e)])];
        ASSERT_NEAR(bulk[i], sum, 1e-12) << p.what << " row " << i;
        double scale = 0;
        for (std::int64_t e = p.graph.row_ptr[i]; e < p.graph.row_ptr[i + 1]; ++e)
          scale += std::fabs(w[static_cast<std::size_t>(e)] * x[static_cast<std::size_t>(p.graph.cols[static_cast<std::size_t>(e)])]);
        ASSERT_LE(std::fabs(split[i] - bulk[i]), 1e-13 * scale) << p.what << " row " << i << ", split by columns";
      }
    }
}

// Elements of 1 and 12 bytes (the gather's byte and 4-byte words), two components.
TEST(GraphField, OddElementSizes) {
  CUSH_REQUIRE_GPUS(1);
  struct Triple {
    float a, b, c;
  };
  std::mt19937_64 rng(3);
  const std::vector<int> ids = cush_test::device_orders().back();
  Problem p;
  int trial = 0;
  while (!random_problem(rng, trial, ids.size(), p)) ++trial;
  const GraphDecomposition dec(p.graph.adjacency(), p.owner, ids.size());
  const std::size_t n = 2 * p.graph.nodes();
  for (GraphTransport t : {GraphTransport::automatic, GraphTransport::staged, GraphTransport::host_staging}) {
    GraphField<std::uint8_t> bytes(cush::DeviceSet(ids), dec, 2);
    GraphField<Triple> triples(cush::DeviceSet(ids), dec, 2);
    bytes.set_transport(t);
    triples.set_transport(t);
    std::vector<std::uint8_t> b(n);
    std::vector<Triple> tr(n);
    for (std::size_t i = 0; i < n; ++i) {
      b[i] = static_cast<std::uint8_t>(i * 37 + 11);
      tr[i] = Triple{static_cast<float>(i), static_cast<float>(i) + 0.5F, -static_cast<float>(i)};
    }
    bytes.scatter(b);
    triples.scatter(tr);
    bytes.exchange();
    triples.exchange();
    expect_parts_hold(bytes, b, std::string("uint8, ") + cush::to_string(t));
    expect_parts_hold(triples, tr, std::string("12-byte struct, ") + cush::to_string(t));
  }
}

// exchange() and start/finish captured into a CUDA graph (the blocks' streams joined by events)
// and replayed after the owned values changed.
TEST(GraphField, ExchangeCanBeCapturedAndReplayed) {
  CUSH_REQUIRE_GPUS(1);
  std::mt19937_64 rng(11);
  const std::vector<int> ids = cush_test::device_orders().back();
  if (ids.size() < 2) GTEST_SKIP() << "needs 2 devices (GPUs or virtual GPUs) for messages between parts";
  Problem p;
  int trial = 0;
  while (!random_problem(rng, 2 * trial, ids.size(), p)) ++trial;
  const GraphDecomposition dec(p.graph.adjacency(), p.owner, ids.size());
  for (GraphTransport t : {GraphTransport::automatic, GraphTransport::staged, GraphTransport::host_staging})
    for (bool split : {false, true}) {
      GraphField<double> f(cush::DeviceSet(ids), dec);
      f.set_transport(t);
      f.exchange();
      f.wait();
      const cudaStream_t s0 = f.block(0).stream();
      std::vector<cush::Event> fork, join;
      for (std::size_t k = 0; k < ids.size(); ++k) {
        fork.emplace_back(f.block(0).device());
        join.emplace_back(f.block(k).device());
      }
      cudaGraph_t graph = nullptr;
      {
        const cush::DeviceGuard guard(f.block(0).device());
        ASSERT_EQ(cudaStreamBeginCapture(s0, cudaStreamCaptureModeRelaxed), cudaSuccess);
        for (std::size_t k = 1; k < ids.size(); ++k) {
          fork[k].record(s0);
          fork[k].wait_in(f.block(k).stream());
        }
        if (split) {
          f.exchange_start();
          f.exchange_finish();
        } else {
          f.exchange();
        }
        for (std::size_t k = 1; k < ids.size(); ++k) {
          join[k].record(f.block(k).stream());
          join[k].wait_in(s0);
        }
        ASSERT_EQ(cudaStreamEndCapture(s0, &graph), cudaSuccess);
      }
      cudaGraphExec_t exec = nullptr;
      ASSERT_EQ(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);
      for (unsigned replay = 0; replay < 2; ++replay) {
        const std::vector<double> values = random_values(p.graph.nodes(), 300 + replay);
        f.scatter(values);
        f.wait();
        {
          const cush::DeviceGuard guard(f.block(0).device());
          ASSERT_EQ(cudaGraphLaunch(exec, s0), cudaSuccess);
          ASSERT_EQ(cudaStreamSynchronize(s0), cudaSuccess);
        }
        expect_parts_hold(f, values, std::string("replay, ") + cush::to_string(t) + (split ? ", start/finish" : ""));
      }
      EXPECT_EQ(cudaGraphExecDestroy(exec), cudaSuccess);
      EXPECT_EQ(cudaGraphDestroy(graph), cudaSuccess);
    }
}

void expect_invalid(const std::function<void()>& call, const std::string& argument) {
  try {
    call();
    ADD_FAILURE() << "no exception, expected InvalidArgument about " << argument;
  } catch (const cush::InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find(argument), std::string::npos) << e.what();
  }
}

// nccl needs a GPU per device and is not captured: both refused before anything is enqueued.
TEST(GraphField, NcclIsRefusedOnSharedGpusAndUnderCapture) {
  CUSH_REQUIRE_GPUS(1);
  const cush_test::Graph g = cush_test::csr({{0, 1}, {0, 1, 2}, {1, 2, 3}, {3, 4, 5}, {1, 3, 4}, {4, 5}});
  const std::vector<int> owner{0, 0, 0, 1, 1, 1};
  const GraphDecomposition dec(g.adjacency(), owner, 2);
  const std::vector<int> ids = cush_test::device_orders().back();
  if (ids.size() < 2) GTEST_SKIP() << "needs 2 devices (GPUs or virtual GPUs)";
  GraphField<double> f(cush::DeviceSet(std::vector<int>{ids[0], ids[1]}), dec);
  if (f.devices().physical(0) == f.devices().physical(1)) {
    expect_invalid([&] { f.set_transport(GraphTransport::nccl); }, "share one GPU");
    EXPECT_EQ(f.transport(), GraphTransport::automatic);
    return;
  }
  f.set_transport(GraphTransport::nccl);
  f.exchange();
  f.wait();
  const cudaStream_t s0 = f.block(0).stream();
  const cush::DeviceGuard guard(f.block(0).device());
  ASSERT_EQ(cudaStreamBeginCapture(s0, cudaStreamCaptureModeRelaxed), cudaSuccess);
  expect_invalid([&] { f.exchange(); }, "capture");
  cudaGraph_t graph = nullptr;
  ASSERT_EQ(cudaStreamEndCapture(s0, &graph), cudaSuccess);
  if (graph != nullptr) EXPECT_EQ(cudaGraphDestroy(graph), cudaSuccess);
}

TEST(GraphField, MisuseIsRejected) {
  CUSH_REQUIRE_GPUS(1);
  const cush_test::Graph g = cush_test::csr({{0, 1}, {0, 1, 2}, {1, 2, 3}, {3, 4, 5}, {1, 3, 4}, {4, 5}});
  const std::vector<int> owner{0, 0, 0, 1, 1, 1};
  const GraphDecomposition dec(g.adjacency(), owner, 2);
  expect_invalid([&] { GraphField<double> f(cush::DeviceSet{0}, dec); }, "devices");
  const std::vector<int> two = cush_test::device_orders().back().size() >= 2 ? cush_test::device_orders().back()
                                                                               : std::vector<int>{0, 0};
  if (two.size() < 2 || (two[0] == two[1])) GTEST_SKIP() << "needs 2 devices (GPUs or virtual GPUs)";
  const cush::DeviceSet devices(std::vector<int>{two[0], two[1]});
  expect_invalid([&] { GraphField<double> f(devices, dec, 0); }, "components");
  GraphField<double> f(devices, dec);
  std::vector<double> wrong(5);
  expect_invalid([&] { f.scatter(wrong); }, "host");
  expect_invalid([&] { f.gather(wrong); }, "host");
  expect_invalid([&] { f.exchange_finish(); }, "no exchange is in flight");
  f.exchange_start();
  expect_invalid([&] { f.exchange_start(); }, "in flight");
  expect_invalid([&] { f.exchange(); }, "in flight");
  expect_invalid([&] { f.set_transport(GraphTransport::staged); }, "in flight");
  std::vector<double> six(6);
  expect_invalid([&] { f.scatter(six); }, "in flight");
  f.exchange_finish();
  f.wait();
  GraphField<double> moved = std::move(f);
  expect_invalid([&] { f.exchange(); }, "moved from");  // NOLINT(bugprone-use-after-move): the test
  EXPECT_TRUE(f.done());
  EXPECT_EQ(f.components(), 0U);
  moved.scatter(six);
  moved.exchange();
  moved.wait();
}

}  // namespace

// A time step on a GraphField with the halo exchange hidden behind interior work: diffusion on an
// unstructured graph (each node averages toward its neighbours) split over every GPU. The nodes
// lie on a ring; node i reads i-2 .. i+2 and one far node, so every part sends to its neighbours
// along the ring and to a few parts across it. While the exchange fills the ghosts, each GPU
// updates the rows that read none (interior()); then the rows that do (boundary()). The result
// after every step is compared with the same steps on the host.
//
// With "graph", two steps (u -> v -> u: the pointers are back where they started) are captured
// once into a CUDA graph (cush::CapturedWork) and replayed: one host call per two steps instead
// of several per GPU, which matters when the parts are small.
//
// Usage: cush_graph_step [nodes=1000003] [steps=10] [graph]

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <utility>
#include <vector>

#include "cush/cush.hpp"

namespace {

// out[r] = in[r] + 0.2 (mean of in over row r's columns - in[r]) for the rows [first, first + count)
// of a part, columns in its local order (GraphDecomposition::localize).
__global__ void diffuse(const double* in, double* out, const std::int64_t* row_ptr, const std::int32_t* cols,
                        std::size_t first, std::size_t count) {
  const std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i >= count) return;
  const std::size_t r = first + i;
  double sum = 0;
  for (std::int64_t k = row_ptr[r]; k < row_ptr[r + 1]; ++k) sum += in[cols[k]];
  out[r] = in[r] + 0.2 * (sum / static_cast<double>(row_ptr[r + 1] - row_ptr[r]) - in[r]);
}

// The same on the host over the global graph.
std::vector<double> host_steps(std::vector<double> u, const std::vector<std::int64_t>& row_ptr,
                               const std::vector<std::int64_t>& cols, std::size_t steps) {
  std::vector<double> v(u.size());
  for (std::size_t s = 0; s < steps; ++s) {
    for (std::size_t r = 0; r < u.size(); ++r) {
      double sum = 0;
      for (std::int64_t k = row_ptr[r]; k < row_ptr[r + 1]; ++k) sum += u[static_cast<std::size_t>(cols[k])];
      v[r] = u[r] + 0.2 * (sum / static_cast<double>(row_ptr[r + 1] - row_ptr[r]) - u[r]);
    }
    std::swap(u, v);
  }
  return u;
}

template <class T>
cush::DeviceBuffer upload(int device, const std::vector<T>& host) {
  cush::DeviceBuffer b(device, host.size() * sizeof(T));
  const cush::DeviceGuard guard(device);
  if (cudaMemcpy(b.data(), host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice) != cudaSuccess)
    throw cush::Error("cudaMemcpy failed");
  return b;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    if (cush::DeviceSet::available() == 0) {
      std::printf("  SKIPPED: no GPU (%s)\n", cush::DeviceSet::unavailable_reason().c_str());
      return 0;
    }
    const std::size_t n = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 1000003;
    const std::size_t steps = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 10;
    const bool captured = argc > 3 && std::strcmp(argv[3], "graph") == 0;
    const cush::DeviceSet gpus = cush::DeviceSet::all();

    // The graph: centre, two neighbours each way along the ring, and node (7 i + n / 3) mod n.
    std::vector<std::int64_t> row_ptr{0}, cols;
    const auto nodes = static_cast<std::int64_t>(n);
    for (std::int64_t i = 0; i < nodes; ++i) {
      for (std::int64_t d : {0, -2, -1, 1, 2}) cols.push_back((i + d + nodes) % nodes);
      cols.push_back((7 * i + nodes / 3) % nodes);
      row_ptr.push_back(static_cast<std::int64_t>(cols.size()));
    }
    const cush::Adjacency graph{row_ptr, cols};
    // Consecutive ranges of nodes, one per GPU, as a Plan would split them.
    const cush::Layout layout = cush::Layout::make(n, cush::Distribution::uniform(), gpus.topology().devices());
    cush::GraphField<double> a(gpus, cush::GraphDecomposition(graph, layout));
    cush::GraphField<double> b = cush::GraphField<double>::alike(a);
    const cush::GraphDecomposition& dec = a.decomposition();
    std::printf("cush graph step: %zu nodes, %zu entries on %zu GPU(s), %zu messages, %zu steps%s\n", n, cols.size(),
                gpus.size(), dec.messages().size(), steps, captured ? ", two at a time from a CUDA graph" : "");

    // Each part's rows with local columns, on its device.
    std::vector<cush::DeviceBuffer> rows, local_cols;
    for (std::size_t k = 0; k < gpus.size(); ++k) {
      const cush::LocalAdjacency local = dec.localize(k, graph);
      rows.push_back(upload(gpus[k], local.row_ptr));
      local_cols.push_back(upload(gpus[k], local.cols));
    }
    std::vector<double> start(n);
    for (std::size_t i = 0; i < n; ++i) start[i] = std::sin(0.001 * static_cast<double>(i % 7919));
    a.scatter(start);

    cush::GraphField<double>* u = &a;
    cush::GraphField<double>* v = &b;
    const auto step = [&] {
      u->exchange_overlapped([&](const cush::GraphBlock<double>& in, cush::Range r) {
        diffuse<<<static_cast<unsigned>((r.count + 255) / 256), 256, 0, in.stream()>>>(
            in.data(), v->block(in.pos()).data(), static_cast<const std::int64_t*>(rows[in.pos()].data()),
            static_cast<const std::int32_t*>(local_cols[in.pos()].data()), r.offset, r.count);
      });
      std::swap(u, v);
    };
    std::size_t s = 0;
    if (captured) {
      cush::CapturedWork two_steps(a.streams(), [&] {  // a and b share their streams
        step();
        step();
      });
      for (; s + 2 <= steps; s += 2) two_steps.launch();
    }
    for (; s < steps; ++s) step();
    if (cudaGetLastError() != cudaSuccess) throw cush::Error("a kernel launch failed");
    std::vector<double> result(n);
    u->gather(result);
    u->wait();

    const std::vector<double> want = host_steps(start, row_ptr, cols, steps);
    double worst = 0.0;
    for (std::size_t i = 0; i < n; ++i) worst = std::max(worst, std::abs(result[i] - want[i]));
    const bool ok = worst <= 1e-12;
    std::printf("  largest difference from the host: %.3g  %s\n", worst, ok ? "ok" : "WRONG");
    return ok ? 0 : 1;
  } catch (const cush::Error& e) {
    std::fprintf(stderr, "cush_graph_step: %s\n", e.what());
    return 1;
  }
}

#pragma once
// Case "rbffd" (spec rbffd.md §3): RK4 on u_t = A u over N nodes on the sphere, A the combined
// RBF-FD matrix of weights.hpp (n entries per row), in three variants behind one interface, so one
// test checks all and one benchmark times all:
//
//     Variant v(problem, gpus, options);   // builds each GPU's matrix, allocates (a cases::Devices)
//     v.upload(u0);                        // N values, node order
//     v.run(steps);                        // `steps` RK4 steps of problem.dt (asynchronous)
//     v.wait();
//     v.download(u);                       // N values; returns when they are there
//
// Each step is four fused stages (kernels.hpp): y = A x, k = dt y, acc += b k and the next stage's
// input u + alpha k, the fourth stage writing u + acc. The multi-GPU variants split the nodes into
// latitude slabs (equal consecutive ranges of the node order, which is latitude order) and fill
// each GPU's ghosts (the nodes its rows read on other GPUs) before each stage. Every variant
// computes each row's sum in the same entry order with the same kernel, so the multi-GPU results
// equal the single GPU's bit for bit. The single-GPU reference ignores `gpus` beyond the first
// and `options`.

#include <cuda_runtime_api.h>

#include <cstddef>
#include <memory>
#include <optional>
#include <vector>

#include "cush/captured_work.hpp"
#include "cush/device_buffer.hpp"
#include "cush/graph_field.hpp"
#include "devices.hpp"
#include "ell.hpp"
#include "kernels.hpp"
#include "weights.hpp"

namespace cases {
namespace rbffd {

/// What every variant solves: A (CSR, one row per node; not copied, must outlive the variant's
/// constructor) and the time step.
struct Problem {
  const Matrix* a = nullptr;
  double dt = 0;
};

/// How a stage meets the exchange of its input.
enum class Schedule {
  bulk,     ///< exchange, then every owned row
  overlap,  ///< interior rows (no ghost read) during the exchange, boundary rows after it
  /// as overlap, and the boundary rows' owned-column entries during the exchange too, their
  /// ghost-column entries added after it (PETSc's MatMult; sums in another order there: equal to
  /// the others within rounding, not bit for bit)
  split,
};

struct Options {
  Schedule schedule = Schedule::bulk;
  /// The cush variant's transport (cush::GraphTransport; automatic: peer where peer access).
  cush::GraphTransport transport = cush::GraphTransport::automatic;
  /// Multi-GPU variants: capture one RK4 step (four stages, their exchanges) into a CUDA graph
  /// the first time run() is called, and replay it once per step: one host call per step
  /// instead of several per GPU and stage, for sizes where enqueueing sets the pace.
  bool graph = false;
};

/// Single-GPU reference on gpus.cuda[0]: the whole matrix, no exchange.
class Single {
 public:
  Single(const Problem& p, const Devices& gpus, Options options = {});
  ~Single();
  Single(const Single&) = delete;
  Single& operator=(const Single&) = delete;
  void upload(const double* u0);
  void run(std::size_t steps);
  void wait();
  void download(double* u);

 private:
  std::size_t n_;
  double dt_;
  int device_;
  cudaStream_t stream_ = nullptr;
  std::unique_ptr<DeviceEll> a_;
  double* x_[2] = {nullptr, nullptr};  // stage inputs (ping-pong)
  double* u_ = nullptr;
  double* acc_ = nullptr;
};

/// Multi-GPU raw CUDA: per GPU its own owned / boundary / sent / ghost sets and local order, a
/// local ELL matrix, index lists on the senders, a gather kernel that stores straight into the
/// receiver's ghosts (peer access; else into a buffer, then cudaMemcpyPeerAsync), a second stream
/// per GPU for the exchange and events between them.
class MultiCuda {
 public:
  MultiCuda(const Problem& p, const Devices& gpus, Options options = {});
  ~MultiCuda();
  MultiCuda(const MultiCuda&) = delete;
  MultiCuda& operator=(const MultiCuda&) = delete;
  void upload(const double* u0);
  void run(std::size_t steps);
  void wait();
  void download(double* u);
  /// One exchange of the current stage input alone (for the exchange benchmark).
  void exchange();

  struct Gpu;  // one GPU's part (multi_cuda.cpp)

 private:
  void exchange_start(std::size_t input);
  void exchange_finish();
  void stage(int stage);
  void capture();
  void launch();
  std::size_t n_;
  double dt_;
  Options options_;
  std::vector<std::unique_ptr<Gpu>> gpus_;
  std::size_t current_ = 0;  // which x buffer holds the stage input
  cudaGraphExec_t step_ = nullptr;  // Options::graph: one RK4 step, captured
};

/// Multi-GPU cush: a cush::GraphDecomposition of A's pattern and cush::GraphFields.
class MultiCush {
 public:
  MultiCush(const Problem& p, const Devices& gpus, Options options = {});
  void upload(const double* u0);
  void run(std::size_t steps);
  void wait();
  void download(double* u);
  /// One exchange of the current stage input alone (for the exchange benchmark).
  void exchange();

 private:
  cush::GraphField<double>& x(std::size_t i) { return i == 0 ? x0_ : x1_; }
  void stage(int stage);
  double dt_;
  Options options_;
  cush::GraphField<double> x0_, x1_;           // stage inputs (ping-pong), with ghosts
  cush::GraphField<double> u_, acc_;
  std::vector<std::unique_ptr<DeviceEll>> a_;  // each part's rows, local columns
  // Schedule::split, each part's boundary rows: owned-column and ghost-column entries, partial sums
  std::vector<std::unique_ptr<DeviceEll>> own_, ghosts_;
  std::vector<cush::DeviceBuffer> partial_;
  std::size_t current_ = 0;
  std::optional<cush::CapturedWork> step_;     // Options::graph: one RK4 step
};

}  // namespace rbffd
}  // namespace cases

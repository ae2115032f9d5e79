// cush::transpose (include/cush/transpose.hpp): the host side that every instantiation of the
// kernel in cush/transpose.cuh shares (checks, stream ordering, targets, staged copies), and the
// plain transpose for elements of 1 to 16 bytes.
//
// Ordering: a source device's kernel writes into every target device's part of dst, so its
// stream first waits for the earlier work of each target (which may still read the old dst), and
// each target's stream finally waits for every source that wrote into it (OpStreams).

#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <vector>

#include "core/peer_access.hpp"
#include "cush/device_guard.hpp"
#include "core/cuda_devices.hpp"
#include "cush/error.hpp"
#include "cush/transpose.cuh"
#include "host/plan_impl.hpp"
#include "ops/op_streams.hpp"

namespace cush::detail {

namespace {

using PlanImpl = PlanAccess::Impl;

void check_plans(const PlanImpl& src, const PlanImpl& dst, std::size_t rows, std::size_t cols, const char* where) {
  if (&src == &dst) throw InvalidArgument(where, "dst", "is the source plan; a transpose needs two plans");
  if (rows == 0 || cols == 0)
    throw InvalidArgument(where, rows == 0 ? "rows" : "cols", "is 0; the matrix needs at least one element");
  if (cols > src.layout.size() / rows || rows * cols != src.layout.size())
    throw InvalidArgument(where, "src", "holds " + std::to_string(src.layout.size()) + " elements, not rows * cols = " +
                                            std::to_string(rows) + " * " + std::to_string(cols));
  if (dst.layout.size() != src.layout.size())
    throw InvalidArgument(where, "dst", "holds " + std::to_string(dst.layout.size()) + " elements, src " +
                                            std::to_string(src.layout.size()));
  if (src.layout.is_replicated() || dst.layout.is_replicated())
    throw InvalidArgument(where, src.layout.is_replicated() ? "src" : "dst",
                          "is replicated; a transpose moves a matrix split by rows");
  if (src.element_size != dst.element_size)
    throw InvalidArgument(where, "dst", "has elements of " + std::to_string(dst.element_size) + " bytes, src of " +
                                            std::to_string(src.element_size));
  if (dst.devices.size() > static_cast<std::size_t>(transpose_max_targets))
    throw InvalidArgument(where, "dst", "spans " + std::to_string(dst.devices.size()) + " devices; at most " +
                                            std::to_string(transpose_max_targets));
  const auto whole_rows = [&](const PlanImpl& plan, std::size_t row, const char* name, const char* what) {
    for (std::size_t pos = 0; pos < plan.devices.size(); ++pos) {
      const Range& r = plan.layout.segment(pos);
      if (r.count % row != 0 || r.offset % row != 0)
        throw InvalidArgument(where, name, "segment " + std::to_string(pos) + " (elements " + std::to_string(r.offset) +
                                               " + " + std::to_string(r.count) + ") does not hold whole " + what +
                                               " of " + std::to_string(row) +
                                               " elements; use a distribution with that granularity");
    }
  };
  whole_rows(src, cols, "src", "rows");
  whole_rows(dst, rows, "dst", "rows of the transpose");
}

/// Whether source device `from` stores straight into device `to`.
bool direct(int from, int to, TransposeOptions::Path path, const char* where) {
  if (from == to) return true;
  if (path == TransposeOptions::Path::staged) return false;
  const bool reach = can_access(from, to);
  if (path == TransposeOptions::Path::direct && !reach)
    throw InvalidArgument(where, "options", "path direct, but device " + std::to_string(from) +
                                                " cannot store into device " + std::to_string(to) + " (no peer access)");
  return reach;
}

}  // namespace

struct TransposeOp::Impl {
  Impl(const Endpoint& src, const Endpoint& dst) : ops(src, dst) {}
  OpStreams ops;
  std::vector<TransposeSource> sources;
  struct Staged {
    void* scratch = nullptr;
    cudaStream_t stream = nullptr;
    int device = -1;
    // The 2D copy into the target names both devices (a cudaMemcpy2DAsync inferring them from
    // the pointers was refused between two GPUs); between devices that reach each other (peer
    // access enabled, the scratch pool shared) it runs over the links, else through the host.
    void* dst = nullptr;
    int dst_device = -1;
    std::size_t dpitch = 0, width = 0, height = 0;
    bool released = false;
  };
  std::vector<std::vector<Staged>> staged;  // per source
  bool finished = false;                     // finish() ran: the operation was enqueued whole

  void plan_sources(const PlanImpl& src, const PlanImpl& dst, std::size_t rows, std::size_t cols,
                    std::size_t element_size, const std::vector<char>& straight, const char* where);
  void abandon() noexcept;
  void release(Staged& s) noexcept {
    if (s.released || s.scratch == nullptr) return;
    s.released = true;
    // No DeviceGuard: the stream names the device, and a guard may throw (a noexcept function
    // would terminate; found by fault injection).
    CUSH_CUDA_CHECK_NOEXCEPT(cudaFreeAsync(s.scratch, s.stream));
  }
};

TransposeOp::TransposeOp(const PlanBase& src_plan, PlanBase& dst_plan, std::size_t rows, std::size_t cols,
                         std::size_t element_size, const TransposeOptions& options, const char* where) {
  PlanImpl& src = PlanAccess::impl(src_plan);
  PlanImpl& dst = PlanAccess::impl(dst_plan);
  check_plans(src, dst, rows, cols, where);
  if (element_size != src.element_size)
    throw InvalidArgument(where, "src", "has elements of " + std::to_string(src.element_size) + " bytes, the kernel " +
                                            std::to_string(element_size));
  // Every pair's way, and peer access for the direct ones, before anything is enqueued.
  const std::size_t nsrc = src.devices.size(), ndst = dst.devices.size();
  std::vector<char> straight(nsrc * ndst, 1);
  for (std::size_t g = 0; g < nsrc; ++g)
    for (std::size_t h = 0; h < ndst; ++h) {
      if (src.layout.segment(g).count == 0 || dst.layout.segment(h).count == 0) continue;
      const int from = src.devices[g], to = dst.devices[h];
      straight[g * ndst + h] = direct(from, to, options.path, where) ? 1 : 0;
      if (straight[g * ndst + h] && from != to && !enable_peer_access_once(from, to))
        throw Error(std::string(where) + ": enabling peer access from device " + std::to_string(from) + " to " +
                    std::to_string(to) + " failed");
    }

  impl_ = std::make_unique<Impl>(src.endpoint(), dst.endpoint());
  try {
    impl_->plan_sources(src, dst, rows, cols, element_size, straight, where);
  } catch (...) {
    // A constructor that throws runs no destructor: free the staging buffers made so far, and
    // let what was enqueued finish (fault injection found both missing).
    impl_->abandon();
    throw;
  }
}

void TransposeOp::Impl::abandon() noexcept {
  try {
    finish_devices(ops.devices());
  } catch (...) {  // out of host memory listing the devices: the frees below still wait in order
  }
  for (auto& list : staged)
    for (auto& s : list) release(s);
}

void TransposeOp::Impl::plan_sources(const PlanImpl& src, const PlanImpl& dst, std::size_t rows, std::size_t cols,
                                     std::size_t element_size, const std::vector<char>& straight, const char* where) {
  const std::size_t nsrc = src.devices.size(), ndst = dst.devices.size();
  for (std::size_t g = 0; g < nsrc; ++g) {
    const Range& mine = src.layout.segment(g);
    if (mine.count == 0) continue;
    const std::size_t sg = ops.of_src(g);
    TransposeSource s;
    s.device = src.devices[g];
    s.stream = ops.work(sg);
    s.data = src.data[g];
    s.row0 = mine.offset / cols;
    s.rows = mine.count / cols;
    std::vector<Staged>& kept = staged.emplace_back();
    for (std::size_t h = 0; h < ndst; ++h) {
      const Range& theirs = dst.layout.segment(h);
      if (theirs.count == 0) continue;
      const std::size_t th = ops.of_dst(h);
      ops.order(sg, th);       // h's earlier work is done with its part of dst
      ops.after_done(th, sg);  // and its later work sees what g wrote
      TransposeTarget t;
      t.col0 = theirs.offset / rows;
      t.cols = theirs.count / rows;
      if (straight[g * ndst + h]) {
        t.data = dst.data[h];
        t.pitch = rows;
      } else {
        Staged& st = kept.emplace_back();
        st.device = s.device;
        st.stream = s.stream;
        {
          DeviceGuard guard(s.device);
          // From cush's pool, which the destination may read (the application's default pool
          // gives no other device access: a copy from it to another device is refused).
          CUSH_CUDA_CHECK_AT(cudaMallocFromPoolAsync(&st.scratch, s.rows * t.cols * element_size,
                                                     shared_pool(s.device, dst.devices[h]), s.stream),
                             std::string(where) + ": the staging buffer for device " + std::to_string(dst.devices[h]));
        }
        t.data = st.scratch;
        t.pitch = s.rows;
        t.row_base = s.row0;
        st.dst = static_cast<char*>(dst.data[h]) + s.row0 * element_size;
        st.dst_device = dst.devices[h];
        if (can_reach(s.device, st.dst_device)) (void)enable_peer_access_once(s.device, st.dst_device);
        st.dpitch = rows * element_size;
        st.width = s.rows * element_size;
        st.height = t.cols;
      }
      s.targets.max_cols = std::max(s.targets.max_cols, t.cols);
      s.targets.t[s.targets.count++] = t;
    }
    sources.push_back(s);
  }
}

TransposeOp::~TransposeOp() {
  if (!impl_) return;
  if (!impl_->finished) {
    impl_->abandon();  // a launch failed: finish what did start before freeing its buffers
    return;
  }
  for (auto& list : impl_->staged)
    for (auto& s : list) impl_->release(s);
}

std::size_t TransposeOp::sources() const noexcept { return impl_->sources.size(); }

const TransposeSource& TransposeOp::source(std::size_t i) const { return impl_->sources.at(i); }

void TransposeOp::launched(std::size_t i) {
  for (Impl::Staged& s : impl_->staged.at(i)) {
    copy_2d_between_devices(s.dst, s.dpitch, s.dst_device, s.scratch, s.width, s.device, s.width, s.height, s.stream);
    impl_->release(s);
  }
}

void TransposeOp::finish() {
  impl_->ops.finish();
  impl_->finished = true;
}

namespace {
struct Same {
  template <class T>
  __device__ T operator()(T v, std::size_t, std::size_t) const {
    return v;
  }
};
}  // namespace

void transpose_bytes(const PlanBase& src, PlanBase& dst, std::size_t rows, std::size_t cols, std::size_t element_size,
                     const TransposeOptions& options, const char* where) {
  switch (element_size) {
    case 1: return transpose_with<std::uint8_t>(src, dst, rows, cols, Same{}, options, where);
    case 2: return transpose_with<std::uint16_t>(src, dst, rows, cols, Same{}, options, where);
    case 4: return transpose_with<std::uint32_t>(src, dst, rows, cols, Same{}, options, where);
    case 8: return transpose_with<uint2>(src, dst, rows, cols, Same{}, options, where);
    case 16: return transpose_with<uint4>(src, dst, rows, cols, Same{}, options, where);
    default:
      throw InvalidArgument(where, "src", "has elements of " + std::to_string(element_size) +
                                              " bytes; cush::transpose takes 1, 2, 4, 8 or 16 (cush/transpose.cuh "
                                              "takes any type)");
  }
}

}  // namespace cush::detail

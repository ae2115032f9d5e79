#pragma once
// Executes a GPU<->GPU transfer list (device_transfers.hpp) on host arrays standing in for the
// buffers of two plans, and checks that every pair of transfers that touch the same elements is
// ordered by `after` chains (what the executors rely on to run the rest concurrently).

#include <cstddef>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "host/transfer.hpp"

namespace cush_test {

template <class T>
using Buffers = std::vector<std::vector<T>>;

/// Runs `list` from `src` to `dst` (which may be the same object). `combine(a, b)` gives the
/// new value of a destination element a combined with source element b. Returns how many times
/// each destination element was written.
template <class T>
std::vector<std::vector<unsigned>> simulate_devices(const cush::TransferList& list, const Buffers<T>& src,
                                                    Buffers<T>& dst,
                                                    const std::function<T(T, T)>& combine = nullptr) {
  std::vector<std::vector<unsigned>> writes(dst.size());
  for (std::size_t d = 0; d < dst.size(); ++d) writes[d].assign(dst[d].size(), 0);
  for (std::size_t i = 0; i < list.size(); ++i) {
    const cush::Transfer& t = list[i];
    if (t.after >= static_cast<int>(i)) throw std::logic_error("transfer " + std::to_string(i) + " waits for a later one");
    if (t.src.is_host() || t.dst.is_host()) throw std::logic_error("a device list names the host");
    const auto& from = src.at(static_cast<std::size_t>(t.src.pos));
    auto& to = dst.at(static_cast<std::size_t>(t.dst.pos));
    if (t.src.offset + t.count > from.size() || t.dst.offset + t.count > to.size())
      throw std::out_of_range("transfer " + std::to_string(i) + " leaves its buffers");
    // Read everything first: a copy within one buffer behaves like a copy between two.
    const std::vector<T> data(from.begin() + static_cast<std::ptrdiff_t>(t.src.offset),
                              from.begin() + static_cast<std::ptrdiff_t>(t.src.offset + t.count));
    for (std::size_t k = 0; k < t.count; ++k) {
      T& out = to[t.dst.offset + k];
      if (t.combine) {
        if (!combine) throw std::logic_error("a combine transfer without a combine function");
        out = combine(out, data[k]);
      } else {
        out = data[k];
      }
      ++writes[static_cast<std::size_t>(t.dst.pos)][t.dst.offset + k];
    }
  }
  return writes;
}

/// Empty if every two transfers with a conflicting access are ordered by `after` chains; else
/// the first conflict in words. `same_plan`: source and destination positions name the same
/// buffers.
inline std::string unordered_conflict(const cush::TransferList& list, bool same_plan) {
  struct Access {
    int plan;  // 0 source, 1 destination
    int pos;
    std::size_t lo, hi;
    bool write;
  };
  auto accesses = [&](const cush::Transfer& t) {
    std::vector<Access> a;
    const int dst_plan = same_plan ? 0 : 1;
    a.push_back({0, t.src.pos, t.src.offset, t.src.offset + t.count, false});
    a.push_back({dst_plan, t.dst.pos, t.dst.offset, t.dst.offset + t.count, true});
    return a;
  };
  auto precedes = [&](std::size_t a, std::size_t b) {  // a before b through b's chain
    for (int k = list[b].after; k >= 0; k = list[static_cast<std::size_t>(k)].after)
      if (static_cast<std::size_t>(k) == a) return true;
    return false;
  };
  for (std::size_t b = 0; b < list.size(); ++b) {
    if (list[b].count == 0) continue;
    for (std::size_t a = 0; a < b; ++a) {
      if (list[a].count == 0) continue;
      for (const Access& x : accesses(list[a]))
        for (const Access& y : accesses(list[b])) {
          if (!(x.write || y.write) || x.plan != y.plan || x.pos != y.pos) continue;
          if (x.hi <= y.lo || y.hi <= x.lo) continue;
          if (!precedes(a, b))
            return "transfers " + std::to_string(a) + " and " + std::to_string(b) + " touch device position " +
                   std::to_string(x.pos) + " without an order";
        }
    }
  }
  return {};
}

}  // namespace cush_test

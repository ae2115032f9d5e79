#pragma once
// Executes a transfer list on host arrays, the way a transport would on devices.

#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

#include "host/transfer.hpp"

namespace cush_test {

/// Host memory standing in for a plan's buffers: one array per device, plus the host buffer.
/// Counts writes per element so a test can check that each is written exactly once.
template <class T>
struct Memory {
  std::vector<T> host;
  std::vector<std::vector<T>> devices;
  std::vector<unsigned> host_writes;
  std::vector<std::vector<unsigned>> device_writes;
};

template <class T>
void simulate(const cush::TransferList& list, Memory<T>& m) {
  m.host_writes.assign(m.host.size(), 0);
  m.device_writes.resize(m.devices.size());
  for (std::size_t d = 0; d < m.devices.size(); ++d) m.device_writes[d].assign(m.devices[d].size(), 0);
  std::vector<bool> done(list.size(), false);
  for (std::size_t i = 0; i < list.size(); ++i) {
    const cush::Transfer& t = list[i];
    if (t.after >= 0 && (static_cast<std::size_t>(t.after) >= i || !done[static_cast<std::size_t>(t.after)]))
      throw std::logic_error("transfer " + std::to_string(i) + " waits for a later transfer");
    auto& src = t.src.is_host() ? m.host : m.devices.at(static_cast<std::size_t>(t.src.pos));
    auto& dst = t.dst.is_host() ? m.host : m.devices.at(static_cast<std::size_t>(t.dst.pos));
    auto& writes = t.dst.is_host() ? m.host_writes : m.device_writes.at(static_cast<std::size_t>(t.dst.pos));
    if (t.src.offset + t.count > src.size() || t.dst.offset + t.count > dst.size())
      throw std::out_of_range("transfer " + std::to_string(i) + " leaves its buffers");
    for (std::size_t k = 0; k < t.count; ++k) {
      dst[t.dst.offset + k] = src[t.src.offset + k];
      ++writes[t.dst.offset + k];
    }
    done[i] = true;
  }
}

}  // namespace cush_test

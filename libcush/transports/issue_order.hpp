#pragma once
// The order in which the copy engines' transport issues an operation's transfers (pure host code,
// tests/transports/test_issue_order.cpp).
//
// A transfer list says what each device's stream runs in which order; the host still issues the
// calls one after another, a few microseconds each. On 4 x H200 the all-to-all of 16 MiB issued
// its four local copies first, so its first copy between GPUs started 19 µs into the operation,
// and the operation took 95 µs where NCCL took 67 (docs/results/records/profiles_2026-11-27.md). Issuing
// the transfers that cross a link first starts the links sooner; the local copies, short and on
// their own streams where they are large, follow.

#include <cstddef>
#include <vector>

#include "host/transfer.hpp"

namespace cush::detail {

/// The indices of `list` in the order to issue them: the transfers marked `remote` in list order,
/// each preceded by what it waits for (`after`, directly or through others) where that is not yet
/// issued; then the rest in list order. No transfer comes before one it waits for. `remote` has one
/// entry per transfer (mark transfers of count 0 as not remote). InvalidArgument if the sizes
/// differ or a transfer waits for one that is not earlier in the list.
[[nodiscard]] std::vector<std::size_t> issue_order(const TransferList& list, const std::vector<bool>& remote);

}  // namespace cush::detail

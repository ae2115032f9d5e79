#include "transports/issue_order.hpp"

#include <string>

#include "cush/error.hpp"

namespace cush::detail {

std::vector<std::size_t> issue_order(const TransferList& list, const std::vector<bool>& remote) {
  if (remote.size() != list.size())
    throw InvalidArgument("cush::detail::issue_order", "remote",
                          "has " + std::to_string(remote.size()) + " entries for " + std::to_string(list.size()) +
                              " transfers");
  for (std::size_t i = 0; i < list.size(); ++i)
    if (list[i].after >= static_cast<int>(i))
      throw InvalidArgument("cush::detail::issue_order", "list",
                            "transfer " + std::to_string(i) + " waits for transfer " + std::to_string(list[i].after) +
                                ", which is not earlier");
  std::vector<std::size_t> order;
  order.reserve(list.size());
  std::vector<bool> issued(list.size(), false);
  // Issues transfer i, first what it waits for (an earlier index: the recursion ends).
  const auto issue = [&](auto&& self, std::size_t i) -> void {
    if (issued[i]) return;
    if (list[i].after >= 0) self(self, static_cast<std::size_t>(list[i].after));
    issued[i] = true;
    order.push_back(i);
  };
  for (std::size_t i = 0; i < list.size(); ++i)
    if (remote[i]) issue(issue, i);
  for (std::size_t i = 0; i < list.size(); ++i) issue(issue, i);
  return order;
}

}  // namespace cush::detail

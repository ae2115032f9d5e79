#pragma once
// The environment parameters (CUSH_*): one table of every variable cush and its benchmarks read,
// parsed in one place, with units, and cached. A malformed or out-of-range value is an
// InvalidArgument naming the variable, thrown where the value is first needed; never a silent 0.
// docs/guide.md ("Environment variables") lists the same table; a host test keeps the two equal.

#include <cstddef>
#include <span>
#include <string>
#include <string_view>

namespace cush::detail::env {

/// How a variable's text is read.
enum class Unit {
  count,    ///< a whole number
  kib,      ///< a whole number of KiB, returned in bytes
  mib,      ///< a whole number of MiB, returned in bytes
  seconds,  ///< a positive decimal number of seconds
  path,     ///< a file path, returned as given
  text,     ///< a text its reader parses (and rejects with an InvalidArgument of its own)
};

/// Who reads a variable.
enum class Scope { library, benchmarks, tests };

struct Variable {
  const char* name;
  Unit unit;
  Scope scope;
  double fallback;  ///< the value when unset or empty, in the variable's unit (ignored for paths)
  double min;       ///< smallest accepted value, in the variable's unit
  double max;       ///< largest accepted value, in the variable's unit
  const char* meaning;
};

/// Every variable, in the order docs/guide.md lists them.
[[nodiscard]] std::span<const Variable> variables() noexcept;

/// The value of a count, kib or mib variable (in bytes for kib and mib), or its fallback.
/// Throws InvalidArgument naming the variable if the text is not a whole number or lies
/// outside [min, max]; std::logic_error if `name` is not in the table or not of such a unit.
[[nodiscard]] std::size_t size(std::string_view name);
/// The value of a seconds variable, or its fallback.
[[nodiscard]] double seconds(std::string_view name);
/// The text of a path or text variable; empty when unset.
[[nodiscard]] std::string text(std::string_view name);

/// True if the variable is set to a non-empty text.
[[nodiscard]] bool is_set(std::string_view name);

/// Forgets the cached values, so the next read sees the environment as it is now (tests that
/// change a variable at run time).
void refresh();

}  // namespace cush::detail::env

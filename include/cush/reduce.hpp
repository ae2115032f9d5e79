#pragma once
/// @file reduce.hpp
/// @brief Element types and operators of the reductions (cush::reduce, cush::all_reduce).

#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace cush {

/// @brief How a reduction combines the values of the devices, element by element.
///
/// `min` and `max` compare with `<`; with a NaN among the values the result is unspecified (as
/// in NCCL). Integer sums wrap around modulo 2^bits.
enum class ReduceOp { sum, min, max };

/// @brief The element types a reduction supports: the standard arithmetic types of 8, 32 and
/// 64 bits (the ones every transport, NCCL included, can reduce).
enum class ElementType { int8, uint8, int32, uint32, int64, uint64, float32, float64 };

[[nodiscard]] const char* to_string(ReduceOp op) noexcept;
[[nodiscard]] const char* to_string(ElementType type) noexcept;

/// The ElementType of T, checked at compile time.
template <class T>
[[nodiscard]] constexpr ElementType element_type_of() noexcept {
  using U = std::remove_cv_t<T>;
  if constexpr (std::is_same_v<U, float>) {
    return ElementType::float32;
  } else if constexpr (std::is_same_v<U, double>) {
    return ElementType::float64;
  } else {
    static_assert(std::is_integral_v<U> && !std::is_same_v<U, bool> &&
                      (sizeof(U) == 1 || sizeof(U) == 4 || sizeof(U) == 8),
                  "cush reductions support float, double and 8-, 32- and 64-bit integers");
    if constexpr (sizeof(U) == 1) return std::is_signed_v<U> ? ElementType::int8 : ElementType::uint8;
    if constexpr (sizeof(U) == 4) return std::is_signed_v<U> ? ElementType::int32 : ElementType::uint32;
    if constexpr (sizeof(U) == 8) return std::is_signed_v<U> ? ElementType::int64 : ElementType::uint64;
  }
}

/// Bytes of one element of `type`.
[[nodiscard]] constexpr std::size_t size_of(ElementType type) noexcept {
  switch (type) {
    case ElementType::int8:
    case ElementType::uint8: return 1;
    case ElementType::int32:
    case ElementType::uint32:
    case ElementType::float32: return 4;
    default: return 8;
  }
}

}  // namespace cush

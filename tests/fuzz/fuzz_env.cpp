// Fuzz harness of the environment parameters (libcush/core/env.hpp, env.cpp).
//
// Decodes: a variable of the table and two settings for it, each unset or a text built from
// pieces that parsers trip on (digits, signs, spaces, '.', exponents, "0x", "inf", "nan", 2^64,
// the edges of the variable's range) or from raw bytes; sometimes a name that is not in the table.
//
// Checks, with the variable set in the environment: a count, kib or mib variable reads (size()) as its
// fallback when unset or empty, as the value strtoull gives when the text is nothing but decimal
// digits and that value lies in [min, max] (times 2^10 or 2^20 for kib and mib), and otherwise
// throws cush::InvalidArgument naming the variable and quoting the text; a seconds variable
// (seconds()) the same way for the texts std::from_chars reads whole as a finite double (the
// counts' syntax: no leading space, no '+', no hex); text() gives the text; is_set() says whether it
// is non-empty; a value read stays cached until refresh() while a rejected one is not kept; reading
// with the wrong function, or an unknown name, is a std::logic_error.

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>

#include "core/env.hpp"
#include "fuzz.hpp"

namespace {

namespace env = cush::detail::env;
using env::Unit;
using env::Variable;
using Setting = std::optional<std::string>;  // nullopt: unset

bool numeric(const Variable& v) { return v.unit != Unit::path && v.unit != Unit::text; }

std::string quote(const std::string& s) {
  std::string q = "'";
  for (const unsigned char c : s) {
    if (std::isprint(c)) {
      q += static_cast<char>(c);
    } else {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02x", c);
      q += hex;
    }
  }
  return q + "'";
}

// --- decoding ------------------------------------------------------------------------------------

// The texts just inside and outside v's range.
std::string range_edge(cush_fuzz::Bytes& in, const Variable& v) {
  const double edge = in.flag() ? v.min : v.max;
  if (v.unit == Unit::seconds) {
    const double x = in.flag() ? edge : std::nextafter(edge, in.flag() ? INFINITY : -INFINITY);
    char text[32];
    std::snprintf(text, sizeof text, in.flag() ? "%.17g" : "%g", x);
    return text;
  }
  const auto whole = static_cast<unsigned long long>(edge);
  return std::to_string(whole + in.in<int>(0, 2) - (whole > 0 ? 1 : 0));
}

std::string decode_text(cush_fuzz::Bytes& in, const Variable& v) {
  static const char* const pieces[] = {"0",   "1",   "9",        "00", "-", "+", " ", "\t", "\n", ".",
                                       "e",   "E",   "e-",       "e+", "x", "0x", "p", ",",  "_",  "\xef\xbc\x91",
                                       "inf", "nan", "infinity", "1e15", "0.25", "1000000000000001",
                                       "9007199254740993", "18446744073709551615", "18446744073709551616"};
  std::string text;
  if (in.in<int>(0, 3) == 0) {  // raw bytes (setenv stops at a 0)
    const int length = in.in<int>(0, 24);
    for (int i = 0; i < length; ++i) text += static_cast<char>(in.in<int>(1, 255));
    return text;
  }
  const int count = in.in<int>(1, 6);
  for (int i = 0; i < count; ++i) {
    switch (in.in<int>(0, 3)) {
      case 0:
      case 1: text += in.pick(pieces); break;
      case 2: {  // a run of one digit
        const std::size_t length = in.in<std::size_t>(1, 25);
        text += std::string(length, static_cast<char>('0' + in.in<int>(0, 9)));
        break;
      }
      default: text += range_edge(in, v); break;
    }
    if (in.in<int>(0, 3) == 0) text.back() = static_cast<char>('0' + in.in<int>(0, 9));  // vary the digits
  }
  return text;
}

Setting decode_setting(cush_fuzz::Bytes& in, const Variable& v) {
  switch (in.in<int>(0, 7)) {
    case 0: return std::nullopt;
    case 1: return std::string();
    default: return decode_text(in, v);
  }
}

// Sets or unsets v. Not with setenv: glibc keeps every value setenv was ever given, which grows
// without bound over millions of inputs; putenv points the environment at a buffer of ours.
void apply(const Variable& v, const Setting& s) {
  static std::map<std::string, std::string> entries;  // "NAME=value" of each variable set
  ::unsetenv(v.name);                                 // the environment forgets our buffer first
  if (!s) return;
  std::string& entry = entries[v.name];
  entry = std::string(v.name) + "=" + *s;
  ::putenv(entry.data());
}

// --- the documented reading ----------------------------------------------------------------------

// What a numeric read of `text` must give (bytes for kib and mib), or nullopt where it must throw.
std::optional<long double> expected(const Variable& v, const std::string& text) {
  const long double scale = v.unit == Unit::kib ? 1024.0L : v.unit == Unit::mib ? 1024.0L * 1024.0L : 1.0L;
  if (text.empty()) return v.fallback * scale;
  long double x = 0;
  if (v.unit == Unit::seconds) {
    double d = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), d);
    if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(d)) return std::nullopt;
    x = d;
  } else {
    if (!std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; })) return std::nullopt;
    errno = 0;
    const unsigned long long n = std::strtoull(text.c_str(), nullptr, 10);
    if (errno == ERANGE) return std::nullopt;
    x = static_cast<long double>(n);  // exact
  }
  if (x < v.min || x > v.max) return std::nullopt;
  return x * scale;
}

struct Read {
  bool rejected = false;
  long double value = 0;
};

// Reads v with its own function. A rejection must be an InvalidArgument that names the variable
// and quotes the text; any other exception fails the harness.
Read read(const Variable& v, const std::string& text) {
  const auto what = [&] { return std::string(v.name) + " = " + quote(text); };
  try {
    if (v.unit == Unit::seconds) return {false, env::seconds(v.name)};
    return {false, static_cast<long double>(env::size(v.name))};
  } catch (const cush::InvalidArgument& e) {
    FUZZ_CHECK(e.argument() == v.name, what() + ": names " + e.argument());
    FUZZ_CHECK(std::string(e.what()).find("'" + text + "'") != std::string::npos,
               what() + ": the message does not quote it: " + e.what());
    return {true, 0};
  } catch (const std::exception& e) {
    cush_fuzz::fail(FUZZ_NAME, __FILE__, __LINE__, what() + ": an exception other than InvalidArgument: " + e.what());
  } catch (...) {
    cush_fuzz::fail(FUZZ_NAME, __FILE__, __LINE__, what() + ": a non-standard exception");
  }
}

void check_read(const Variable& v, const std::string& text, const Read& got, const std::optional<long double>& want,
                const char* when) {
  const std::string what = std::string(v.name) + " = " + quote(text) + " (" + when + ")";
  FUZZ_CHECK(got.rejected == !want.has_value(),
             what + (got.rejected ? ": rejected" : ": accepted as " + std::to_string(static_cast<double>(got.value))));
  if (want) FUZZ_CHECK(got.value == *want, what + ": read as " + std::to_string(static_cast<double>(got.value)) +
                                               ", expected " + std::to_string(static_cast<double>(*want)));
}

template <class F>
bool is_logic_error(F&& f) {
  try {
    f();
  } catch (const std::logic_error&) {
    return true;
  } catch (...) {
    return false;
  }
  return false;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  cush_fuzz::Bytes in(data, size);
  const auto table = env::variables();
  const Variable& v = table[in.in<std::size_t>(0, table.size() - 1)];
  const Setting first = decode_setting(in, v), second = decode_setting(in, v);
  const std::string first_text = first.value_or(""), second_text = second.value_or("");
  const bool misuse = in.in<int>(0, 3) == 3;  // also try the wrong readers and an unknown name

  // Programming errors: the wrong reader, or a name that is not in the table.
  if (misuse) {
    const bool seconds = v.unit == Unit::seconds;
    FUZZ_CHECK(is_logic_error([&] { (void)env::size(v.name); }) == (!numeric(v) || seconds), v.name);
    FUZZ_CHECK(is_logic_error([&] { (void)env::seconds(v.name); }) == !seconds, v.name);
    FUZZ_CHECK(is_logic_error([&] { (void)env::text(v.name); }) == numeric(v), v.name);
    const std::string name = in.flag() ? first_text : "CUSH_" + first_text;
    if (std::none_of(table.begin(), table.end(), [&](const Variable& t) { return name == t.name; })) {
      FUZZ_CHECK(is_logic_error([&] { (void)env::size(name); }), quote(name));
      FUZZ_CHECK(is_logic_error([&] { (void)env::seconds(name); }), quote(name));
      FUZZ_CHECK(is_logic_error([&] { (void)env::text(name); }), quote(name));
      FUZZ_CHECK(is_logic_error([&] { (void)env::is_set(name); }), quote(name));
    }
  }

  // The first setting, read fresh.
  apply(v, first);
  env::refresh();
  FUZZ_CHECK(env::is_set(v.name) == !first_text.empty(), std::string(v.name) + " = " + quote(first_text));
  if (!numeric(v)) {
    FUZZ_CHECK(env::text(v.name) == first_text, std::string(v.name) + " = " + quote(first_text));
    apply(v, second);
    FUZZ_CHECK(env::text(v.name) == first_text, std::string(v.name) + ": text() is cached until refresh()");
    env::refresh();
    FUZZ_CHECK(env::text(v.name) == second_text, std::string(v.name) + " = " + quote(second_text) + " after refresh()");
    return 0;
  }
  const Read got = read(v, first_text);
  check_read(v, first_text, got, expected(v, first_text), "fresh");

  // The second setting: a value read stays cached, a rejected one was not kept; refresh() reads anew.
  apply(v, second);
  FUZZ_CHECK(env::is_set(v.name) == !second_text.empty(), std::string(v.name) + " = " + quote(second_text));
  const std::optional<long double> cached = got.rejected ? expected(v, second_text) : got.value;
  check_read(v, second_text, read(v, second_text), cached, got.rejected ? "after a rejected value" : "cached");
  env::refresh();
  check_read(v, second_text, read(v, second_text), expected(v, second_text), "after refresh()");
  return 0;
}

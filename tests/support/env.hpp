#pragma once
// Sets a CUSH_* environment variable for a scope and puts the old value back; cush's cache of
// the variables is refreshed both ways (the tests run on one thread). Needs cush_internal.

#include <cstdlib>
#include <string>

#include "core/env.hpp"

namespace cush_test {

class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) {
      had_ = true;
      old_ = old;
    }
    ::setenv(name, value, 1);
    cush::detail::env::refresh();
  }
  ~ScopedEnv() {
    if (had_) {
      ::setenv(name_.c_str(), old_.c_str(), 1);
    } else {
      ::unsetenv(name_.c_str());
    }
    cush::detail::env::refresh();
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  std::string name_;
  std::string old_;
  bool had_ = false;
};

}  // namespace cush_test

// Internal invariants, checked in every build type: a broken one is a bug in weakscale, reported
// as an InternalError naming the file, line and condition (the programs print it on one line and
// exit 1), never a crash or a silently wrong answer in a Release build where assert() vanishes.
#pragma once

#include <stdexcept>
#include <string>

namespace ws {

class InternalError : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

[[noreturn]] void fail_check(const char* file, int line, const char* condition, const char* why);

}  // namespace ws

// WS_CHECK(condition, "why it must hold"): cheap enough for inner loops (one predicted branch).
#define WS_CHECK(condition, why)                                                   \
  do {                                                                             \
    if (!(condition)) [[unlikely]] ::ws::fail_check(__FILE__, __LINE__, #condition, why); \
  } while (false)

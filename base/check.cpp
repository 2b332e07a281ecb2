#include "base/check.hpp"

#include <fmt/format.h>

namespace ws {

void fail_check(const char* file, int line, const char* condition, const char* why) {
  throw InternalError(fmt::format("internal error (a bug in weakscale; please report it with the command that "
                                  "caused it): {} ({}:{}: {})",
                                  why, file, line, condition));
}

}  // namespace ws

// The processes a study is spread over: this one's rank, how many there are, and how rank 0
// collects one string from each. The CLI fills it from MPI; a serial run is one rank.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace ws {

struct RankGroup {
  int rank = 0;
  int size = 1;
  // Called once by every rank with its share; on rank 0 returns every rank's string in rank
  // order, elsewhere an empty list. Unset means serial: the one string is returned as is.
  std::function<std::vector<std::string>(const std::string& mine)> gather_to_root;
};

}  // namespace ws

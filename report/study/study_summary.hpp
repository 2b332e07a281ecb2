// Text summary of a finished study, one line per point, for the terminal after `weakscale study`.
#pragma once

#include <string>
#include <vector>

#include "sim/study/study_run.hpp"

namespace ws {

// Which figure a study reports first, and what its band means. The headline is the prediction
// from the machine file as written, every value with its source; the band is the 10th-90th
// percentile of the draws across the file's `uncertainty:` ranges. Ranges whose written value is
// the best case a run sees (RangeSpan::best_to_typical) pull the band below the headline; the
// others are errors around it.
struct Headline {
  std::vector<std::string> best_case_ranges, error_ranges;
  std::string statement;  // one paragraph, for the summary and the JSON
};
Headline study_headline(const StudyResult& result);

std::string format_study_summary(const StudyResult& result);

}  // namespace ws

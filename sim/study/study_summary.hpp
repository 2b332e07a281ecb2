// Text summary of a finished study, one line per point, for the terminal after `weakscale study`.
#pragma once

#include <string>

#include "sim/study/study_run.hpp"

namespace ws {

std::string format_study_summary(const StudyResult& result);

}  // namespace ws

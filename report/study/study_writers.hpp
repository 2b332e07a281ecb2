// Writes a study's results as CSV (one row per point, byte-deterministic: fixed-precision,
// locale-independent numbers) and JSON (the same rows plus metadata: spec, machine file, step
// options, weakscale version and git commit).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "report/text_file.hpp"  // write_text_file, program_version: the writers' callers use them too
#include "sim/study/study_run.hpp"

namespace ws {

// Column names in CSV order, with units in the name (step_s, memory_gib, ...).
const std::vector<std::string>& study_csv_columns();

std::string format_study_csv(const StudyResult& result);
std::string format_study_json(const StudyResult& result);

// Write <out_dir>/<name>.csv and .json (creating out_dir) and return the path written.
std::filesystem::path write_study_csv(const StudyResult& result, const std::filesystem::path& out_dir);
std::filesystem::path write_study_json(const StudyResult& result, const std::filesystem::path& out_dir);

}  // namespace ws

// The study's side tables as CSV (byte-deterministic like the main one):
//   <name>-candidates.csv         the top k layouts of every point: how much the choice matters
//   <name>-placement-routing.csv  node allocation x routing at the largest points, with the spread
//   <name>-sensitivity.csv        each uncertain parameter at its low / high end, largest effect first
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "sim/study/study_run.hpp"

namespace ws {

std::string format_candidates_csv(const StudyResult& result);
std::string format_placement_routing_csv(const StudyResult& result);
std::string format_sensitivity_csv(const StudyResult& result);

// Writes the tables the result has (candidates always; the others when computed) into out_dir.
std::vector<std::filesystem::path> write_study_tables(const StudyResult& result, const std::filesystem::path& out_dir);

}  // namespace ws

// What the study-run tests share: a two-point study, its machine, options with every side table,
// all of a result's outputs as one string, a fresh directory per test.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>

#include "sim/machine/machine_loader.hpp"
#include "sim/study/study_run.hpp"
#include "report/study/study_tables.hpp"
#include "report/study/study_writers.hpp"

namespace ws::study_test {

inline const std::string kResumeSource = WEAKSCALE_SOURCE_DIR;

inline std::filesystem::path resume_temp_dir() {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  const auto dir = std::filesystem::temp_directory_path() /
                   (std::string("weakscale-") + info->test_suite_name() + "-" + info->name() + "-" +
                    std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

// perlmutter-small without its 20B point on 256 GPUs, which costs more than the other two together:
// what these tests check (resume, ranks, threads, seeds, tables) needs two points, not three.
inline StudySpec small_spec() {
  StudySpec spec = load_study_spec(kResumeSource + "/benchmarks/studies/perlmutter-small.yaml");
  spec.points.pop_back();
  return spec;
}
inline Machine perlmutter() { return load_machine(kResumeSource + "/machines/perlmutter.yaml"); }

inline StudyRunOptions full_options() {
  StudyRunOptions o;
  o.top_k = 5;
  o.samples = 6;
  o.seed = 42;
  o.placement_routing = true;
  o.sensitivity = true;
  return o;
}

// Every output a study writes, as text, in one string.
inline std::string all_outputs(const StudyResult& r) {
  return format_study_csv(r) + format_study_json(r) + format_candidates_csv(r) +
         format_placement_routing_csv(r) + format_sensitivity_csv(r);
}

struct Interrupted : std::runtime_error {
  Interrupted() : std::runtime_error("interrupted") {}
};

inline std::string file_text(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace ws::study_test

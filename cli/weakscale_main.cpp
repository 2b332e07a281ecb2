#include "cli/weakscale_main.hpp"

#include <yaml-cpp/exceptions.h>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <filesystem>
#include <iostream>

#include "cli/calibrate_command.hpp"
#include "cli/collective_command.hpp"
#include "cli/plan_command.hpp"
#include "cli/study_command.hpp"
#include "cli/validate_command.hpp"
#include "base/input_error.hpp"
#include "base/input_file.hpp"
#include "base/output_file.hpp"

namespace ws::cli {

namespace {

// ./machines wins so that a checkout's edited machine files are used from its root; otherwise the
// source tree this binary was built from.
std::string default_machines_dir() {
  if (std::filesystem::is_directory("machines")) return "machines";
  return std::string(WEAKSCALE_SOURCE_DIR) + "/machines";
}

// Messages are printed on one line (a multi-line message would be split by log tooling), with
// whatever they echo from files or the command line escaped and the whole kept short.
std::string one_line(std::string text) {
  for (char& c : text) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  return ws::printable(text, 1000);
}

int fail(std::ostream& err, int code, const std::string& message) {
  err << "weakscale: error: " << one_line(message) << std::endl;
  return code;
}

// An option given with an empty value ("--layout ''") is an error, not the option left out: the
// defaults apply only to options that are absent.
void refuse_empty_values(const CLI::App& app) {
  for (const CLI::App* command : app.get_subcommands()) {
    for (const CLI::Option* option : command->get_options()) {
      if (option->count() == 0 || option->get_expected_min() == 0) continue;
      for (const std::string& value : option->results()) {
        if (value.empty())
          throw CLI::ValidationError(option->get_name(), "an empty value; give one or leave the option out");
      }
    }
  }
}

// The first argument that is not an option must name a command: CLI11 alone would answer
// "A subcommand is required" for a misspelt one.
void check_command_name(const CLI::App& app, int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--machines-dir") {
      ++i;
      continue;
    }
    if (arg.rfind("-", 0) == 0) continue;
    std::string names;
    for (const CLI::App* command : app.get_subcommands({})) {
      if (command->get_name() == arg) return;
      names += (names.empty() ? "" : ", ") + command->get_name();
    }
    throw ws::InputError(fmt::format("unknown command '{}': expected one of {} (weakscale --help)", arg, names));
  }
}

}  // namespace

int run_weakscale(int argc, char** argv, std::ostream& out, std::ostream& err) {
  CLI::App app{"weakscale: weak-scaling studies of 4D-parallel LLM training on Slingshot machines"};
  app.require_subcommand(1);
  std::string machines_dir = default_machines_dir();
  app.add_option("--machines-dir", machines_dir, "where machine names are looked up")->capture_default_str();
  PlanArgs plan_args;
  StudyArgs study_args;
  CLI::App* plan = add_plan_command(app, plan_args);
  CLI::App* study = add_study_command(app, study_args);
  CompareStudiesArgs compare_args;
  CLI::App* compare = add_compare_studies_command(app, compare_args);
  CollectiveArgs collective_args;
  CLI::App* collective = add_collective_command(app, collective_args);
  CollectivesVsPublishedArgs vs_published_args;
  CLI::App* vs_published = add_collectives_vs_published_command(app, vs_published_args);
  EndToEndArgs end_to_end_args;
  CLI::App* end_to_end = add_end_to_end_command(app, end_to_end_args);
  CalibrateArgs calibrate_args;
  CLI::App* calibrate = add_calibrate_command(app, calibrate_args);
  ws::ValidateOptions validate_options;
  std::string validate_netns_rate;
  CLI::App* validate = add_validate_command(app, validate_options, validate_netns_rate);

  try {
    check_command_name(app, argc, argv);
    app.parse(argc, argv);
    refuse_empty_values(app);
  } catch (const ws::InputError& e) {
    return fail(err, kInputErrorExit, e.what());
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) return app.exit(e, out, err);
    return fail(err, kInputErrorExit, e.what());
  }

  bool feasible = true;
  try {
    if (plan->parsed()) feasible = run_plan_command(plan_args, machines_dir, out);
    if (study->parsed()) feasible = run_study_command(study_args, machines_dir, out, err);
    if (compare->parsed()) run_compare_studies_command(compare_args, out);
    if (collective->parsed()) run_collective_command(collective_args, machines_dir, out);
    if (vs_published->parsed()) {
      run_collectives_vs_published_command(vs_published_args, machines_dir, out);
    }
    if (end_to_end->parsed()) run_end_to_end_command(end_to_end_args, machines_dir, out);
    if (calibrate->parsed()) run_calibrate_command(calibrate_args, out);
    if (validate->parsed()) run_validate_command(validate_options, validate_netns_rate, validate->count("--repeat") > 0, out);
  } catch (const ws::InputError& e) {
    return fail(err, kInputErrorExit, e.what());
  } catch (const ws::OutputError& e) {
    return fail(err, kOutputErrorExit, e.what());
  } catch (const YAML::Exception& e) {
    return fail(err, kInputErrorExit, e.what());
  } catch (const std::exception& e) {
    return fail(err, kFailureExit, e.what());
  }
  // A table lost on a full or closed stdout is a failed run, not a silent success.
  out.flush();
  if (!out) return fail(err, kOutputErrorExit, "cannot write to standard output");
  return feasible ? 0 : kNothingFeasibleExit;
}

}  // namespace ws::cli

// `weakscale plan`: ranks every 4D layout of one (machine, model, devices, batch) point and prints
// the table. The arguments as parsed; the work is done by sim/layout_search and sim/study.
#pragma once

#include <CLI/CLI.hpp>
#include <iosfwd>
#include <string>
#include <vector>

namespace ws::cli {

struct PlanArgs {
  std::string machine;
  std::string model;  // a preset's name (5B, ..., llama3-70b); empty when the model is given by --layers etc.
  long long layers = 0, hidden = 0, heads = 0;
  long long sequence_length = 2048;  // the GPT family's, so --layers/--hidden/--heads suffice
  long long vocabulary = 50304;
  // A custom model's architecture (--family gpt|llama and the choices it sets; "" and 0: the family's).
  std::string family, activation, norm, position, tied_embeddings, biases;
  long long kv_heads = 0, ffn_hidden = 0;
  int devices = 0;
  int ranks_per_node = 0;  // 0: every device of each node
  long long batch_sequences = 0;
  int top = 10;
  bool show_invalid = false;
  std::string precision = "bf16";
  std::string library;  // "": the machine file's default collective library
  bool no_recompute = false, no_oar = false, no_ors = false, no_oag = false;
  bool overlap_data = false;
  std::string evaluator = "closed-form";  // or "flow": the top layouts re-ranked by the step simulator
  int simulate_top = 16;
  std::string trace;   // write the first-ranked (or the asked) layout's simulated step here (Perfetto JSON)
  std::string layout;  // "": rank every layout; else this one, with its rank and its distance to the fastest
  std::string strategy = "4d";  // whose layouts are ranked: 4d, megatron, fsdp or all
  std::vector<std::string> settings;  // --set NAME=VALUE: uncertain parameters of the machine fixed
  std::string csv;  // write the ranked rows here too (format_plan_csv)
};

CLI::App* add_plan_command(CLI::App& app, PlanArgs& args);
// Returns whether any layout fits, or with --layout whether that one does (the table says so either way).
bool run_plan_command(const PlanArgs& args, const std::string& machines_dir, std::ostream& out);

}  // namespace ws::cli

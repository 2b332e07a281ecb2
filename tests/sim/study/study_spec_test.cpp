// Study spec validation: every class of bad input is rejected with InputError naming file, line,
// key and what was expected; a good spec round-trips into the plain struct.
#include "sim/study/study_spec.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "base/input_error.hpp"
#include "sim/machine/machine_loader.hpp"

namespace ws {
namespace {

using ::testing::HasSubstr;

constexpr const char* kFile = "studies/frontier-test.yaml";

// A valid spec with one line replaced or appended, so each test shows only what it breaks.
std::string spec_with(const std::string& points, const std::string& extra = "") {
  return "machine: frontier\n" + extra + "points:\n" + points;
}

InputError rejection(const std::string& text, const std::string& file = kFile) {
  try {
    parse_study_spec(text, file);
  } catch (const InputError& e) {
    return e;
  }
  ADD_FAILURE() << "spec was accepted:\n" << text;
  return InputError({}, "", "");
}

TEST(StudySpec, ParsesPointsOptionsAndDefaultsNameToFileStem) {
  const auto spec = parse_study_spec(
      "machine: frontier\nprecision: fp16\noptions: {recompute: false, overlap_data_parallel: true}\n"
      "points:\n"
      "  - {devices: 512, model: 5B, batch_sequences: 512}\n"
      "  - devices: 1024\n"
      "    model: {layers: 2, hidden: 256, heads: 4, sequence_length: 128, vocabulary: 1024}\n"
      "    batch_sequences: 64\n",
      kFile);
  EXPECT_EQ(spec.name, "frontier-test");
  EXPECT_EQ(spec.machine, "frontier");
  EXPECT_EQ(spec.options.precision, Precision::fp16);
  EXPECT_FALSE(spec.options.recompute);
  EXPECT_TRUE(spec.options.overlap_data_parallel);
  EXPECT_TRUE(spec.options.overlap_all_gather);  // untouched default
  ASSERT_EQ(spec.points.size(), 2u);
  EXPECT_EQ(spec.points[0].model.name, "5B");
  EXPECT_EQ(spec.points[0].batch.sequences, 512);
  EXPECT_EQ(spec.points[1].devices, 1024);
  EXPECT_EQ(spec.points[1].model.hidden, 256);
  EXPECT_EQ(spec.points[1].model.name, "l2-h256");
  EXPECT_EQ(spec.points[1].line, 6);
}

TEST(StudySpec, LibraryIsKeptWithWhereItIsWritten) {
  const std::string point = "  - {devices: 8, model: 5B, batch_sequences: 8}\n";
  const auto spec = parse_study_spec(spec_with(point, "library: rccl-eager\n"), kFile);
  EXPECT_EQ(spec.library, "rccl-eager");
  EXPECT_EQ(spec.library_at.file, kFile);
  EXPECT_EQ(spec.library_at.line, 2);
  EXPECT_EQ(spec.library_at.key, "library");
  EXPECT_TRUE(parse_study_spec(spec_with(point), kFile).library.empty());
  EXPECT_EQ(rejection(spec_with(point, "library: [rccl]\n")).where().key, "library");
}

TEST(StudySpec, StrategiesApplyToEveryPointAndPinnedLayoutsMaySpeakTheirs) {
  const std::string point = "  - {devices: 8, model: 5B, batch_sequences: 8}\n";
  const auto spec = parse_study_spec(spec_with(point + point, "strategies: [megatron, fsdp]\n"), kFile);
  for (const StudyPoint& p : spec.points)
    EXPECT_EQ(p.strategies, (std::vector<Strategy>{Strategy::megatron, Strategy::fsdp}));
  EXPECT_EQ(parse_study_spec(spec_with(point), kFile).points[0].strategies, std::vector<Strategy>{Strategy::four_d});
  EXPECT_EQ(rejection(spec_with(point, "strategies: [4d, 4d]\n")).where().key, "strategies[1]");
  EXPECT_THAT(rejection(spec_with(point, "strategies: [zero]\n")).what(), HasSubstr("4d, megatron, fsdp"));
  EXPECT_EQ(rejection(spec_with(point, "strategies: []\n")).where().key, "strategies");
  const auto pinned = parse_study_spec(
      spec_with("  - {devices: 8, model: 5B, batch_sequences: 8, layout: \"tp=2,pp=2,dp=2,mb=4,sp\"}\n"), kFile);
  EXPECT_EQ(to_string(*pinned.points[0].layout), "tp=2,pp=2,dp=2,mb=4,sp");
}

TEST(StudySpec, MachineGivenAsPathUsesItsStemForTheNameCheck) {
  const auto spec = parse_study_spec(
      "machine: machines/frontier.yaml\npoints:\n  - {devices: 8, model: 5B, batch_sequences: 8}\n", kFile);
  EXPECT_EQ(machine_short_name(spec.machine), "frontier");
}

TEST(StudySpec, RejectsUnknownTopLevelKeyNamingAllowedKeys) {
  const auto e = rejection(spec_with("  - {devices: 8, model: 5B, batch_sequences: 8}\n", "colour: red\n"));
  EXPECT_EQ(e.where().file, kFile);
  EXPECT_EQ(e.where().line, 2);
  EXPECT_EQ(e.where().key, "colour");
  EXPECT_THAT(e.expected(), HasSubstr("machine"));
  EXPECT_THAT(e.expected(), HasSubstr("points"));
}

// points[i].ranks_per_node shapes the job as srun --ntasks-per-node does; absent: full nodes.
TEST(StudySpec, RanksPerNodeIsReadPerPoint) {
  const auto spec = parse_study_spec(spec_with("  - {devices: 8, model: 5B, batch_sequences: 8}\n"
                                               "  - {devices: 8, model: 5B, batch_sequences: 8, ranks_per_node: 1}\n"),
                                     kFile);
  EXPECT_EQ(spec.points[0].ranks_per_node, 0);
  EXPECT_EQ(spec.points[1].ranks_per_node, 1);
  const auto e = rejection(spec_with("  - {devices: 8, model: 5B, batch_sequences: 8, ranks_per_node: 0}\n"));
  EXPECT_EQ(e.where().key, "points[0].ranks_per_node");
}

TEST(StudySpec, RejectsUnknownPointKey) {
  const auto e = rejection(spec_with("  - {devices: 8, model: 5B, batch_sequences: 8, gpus: 8}\n"));
  EXPECT_EQ(e.where().key, "points[0].gpus");
  EXPECT_THAT(e.expected(), HasSubstr("batch_sequences"));
}

// points[i].layout pins the point's layout; it must parse, hold the point's devices and be able
// to run the model and batch, each refused where it is written with what was expected.
TEST(StudySpec, PinnedLayoutIsParsedAndCheckedAgainstThePoint) {
  const StudySpec spec = parse_study_spec(
      spec_with("  - {devices: 64, model: 5B, batch_sequences: 64, layout: 2x1x2x16}\n"
                "  - {devices: 64, model: 5B, batch_sequences: 64}\n"),
      kFile);
  ASSERT_TRUE(spec.points[0].layout.has_value());
  EXPECT_EQ(*spec.points[0].layout, (Layout{2, 1, 2, 16}));
  EXPECT_FALSE(spec.points[1].layout.has_value());
  struct Bad {
    const char* layout;
    const char* expected;
  };
  for (const Bad& bad : {Bad{"2x1x1x16", "the point's devices (64)"}, Bad{"1x1x64x1", "heads 32 not divisible by Gy=64"},
                         Bad{"2x1x2", "a layout Gdata x Gx x Gy x Gz"}, Bad{"[2, 1]", "a layout Gdata x Gx x Gy x Gz"}}) {
    const auto e = rejection(spec_with(std::string("  - {devices: 64, model: 5B, batch_sequences: 64, layout: ") +
                                       bad.layout + "}\n"));
    EXPECT_EQ(e.where().key, "points[0].layout") << bad.layout;
    EXPECT_EQ(e.where().line, 3) << bad.layout;
    EXPECT_THAT(e.expected(), HasSubstr(bad.expected)) << bad.layout;
  }
}

TEST(StudySpec, RejectsMissingDevices) {
  const auto e =
      rejection(spec_with("  - {devices: 8, model: 5B, batch_sequences: 8}\n"
                          "  - {model: 10B, batch_sequences: 16}\n"));
  EXPECT_EQ(e.where().key, "points[1]");
  EXPECT_EQ(e.where().line, 4);
  EXPECT_THAT(e.expected(), HasSubstr("devices"));
}

TEST(StudySpec, RejectsUnknownModelNameListingTheFamily) {
  const auto e = rejection(spec_with("  - {devices: 8, model: 7B, batch_sequences: 8}\n"));
  EXPECT_EQ(e.where().key, "points[0].model");
  EXPECT_EQ(e.value(), "7B");
  EXPECT_THAT(e.expected(), HasSubstr(model_names()));
}

TEST(StudySpec, RejectsInlineModelWithMissingOrBadField) {
  auto e = rejection(spec_with(
      "  - {devices: 8, model: {layers: 2, hidden: 256, heads: 4, vocabulary: 10}, batch_sequences: 8}\n"));
  EXPECT_THAT(e.expected(), HasSubstr("sequence_length"));
  e =
      rejection(spec_with("  - {devices: 8, model: {layers: 2, hidden: 250, heads: 4, "
                          "sequence_length: 16, vocabulary: 10}, batch_sequences: 8}\n"));
  EXPECT_EQ(e.where().key, "points[0].model.hidden");
  EXPECT_THAT(e.expected(), HasSubstr("multiple of heads"));
}

// A Llama preset by name; an inline Llama by its family, whose defaults the keys override.
TEST(StudySpec, LlamaModelsByPresetOrFamily) {
  const auto spec = parse_study_spec(spec_with("  - {devices: 8, model: llama3-8b, batch_sequences: 8}\n"
                                               "  - devices: 16\n"
                                               "    model: {family: llama, layers: 2, hidden: 4096, heads: 32, "
                                               "kv_heads: 8, sequence_length: 128, vocabulary: 1024}\n"
                                               "    batch_sequences: 8\n"
                                               "  - devices: 32\n"
                                               "    model: {layers: 2, hidden: 256, heads: 4, sequence_length: 128, "
                                               "vocabulary: 1024, activation: swiglu, ffn_hidden: 512, "
                                               "tied_embeddings: false}\n"
                                               "    batch_sequences: 8\n"),
                                     kFile);
  ASSERT_EQ(spec.points.size(), 3u);
  EXPECT_EQ(spec.points[0].model, *find_model("llama3-8b"));
  const ModelSpec& inline_llama = spec.points[1].model;
  EXPECT_EQ(inline_llama.name, "llama-l2-h4096");
  EXPECT_EQ(inline_llama.kv_head_count(), 8);
  EXPECT_EQ(inline_llama.ffn(), 11008);  // the Llama rule: 2/3 of 4h, up to a multiple of 256
  EXPECT_EQ(inline_llama.norm, NormKind::rmsnorm);
  EXPECT_EQ(inline_llama.position, Position::rope);
  EXPECT_FALSE(inline_llama.biases);
  const ModelSpec& mixed = spec.points[2].model;  // GPT defaults but for the keys given
  EXPECT_EQ(mixed.activation, Activation::swiglu);
  EXPECT_EQ(mixed.ffn(), 512);
  EXPECT_FALSE(mixed.tied_embeddings);
  EXPECT_EQ(mixed.norm, NormKind::layernorm);
  EXPECT_TRUE(mixed.biases);
}

TEST(StudySpec, RejectsBadArchitectureNamingKeyAndAllowedValues) {
  const std::string model = "{layers: 2, hidden: 256, heads: 4, sequence_length: 16, vocabulary: 64, ";
  struct Bad {
    std::string extra, key, expected;
  };
  for (const Bad& bad : {Bad{"family: mistral}", "points[0].model.family", "gpt, llama"},
                         Bad{"activation: relu}", "points[0].model.activation", "gelu, swiglu"},
                         Bad{"norm: batchnorm}", "points[0].model.norm", "layernorm, rmsnorm"},
                         Bad{"position: alibi}", "points[0].model.position", "learned, rope"},
                         Bad{"kv_heads: 3}", "points[0].model.kv_heads", "a divisor of heads (4)"},
                         Bad{"kv_heads: 8}", "points[0].model.kv_heads", "at most 4"},
                         Bad{"tied_embeddings: maybe}", "points[0].model.tied_embeddings", "true or false"},
                         Bad{"ffn_hidden: -1}", "points[0].model.ffn_hidden", "a positive integer"}}) {
    const auto e = rejection(spec_with("  - {devices: 8, model: " + model + bad.extra + ", batch_sequences: 8}\n"));
    EXPECT_EQ(e.where().key, bad.key) << bad.extra;
    EXPECT_THAT(e.expected(), HasSubstr(bad.expected)) << bad.extra;
  }
}

TEST(StudySpec, RejectsNameNotStartingWithTheMachine) {
  auto e = rejection(spec_with("  - {devices: 8, model: 5B, batch_sequences: 8}\n", "name: weak-frontier\n"));
  EXPECT_EQ(e.where().key, "name");
  EXPECT_EQ(e.value(), "weak-frontier");
  EXPECT_THAT(e.expected(), HasSubstr("'frontier'"));
  // The default name (the file stem) is checked too.
  e = rejection(spec_with("  - {devices: 8, model: 5B, batch_sequences: 8}\n"), "studies/small.yaml");
  EXPECT_EQ(e.value(), "small");
}

TEST(StudySpec, RejectsNamesThatAreNotPlainFileNames) {
  const auto e =
      rejection(spec_with("  - {devices: 8, model: 5B, batch_sequences: 8}\n", "name: frontier/../../x\n"));
  EXPECT_EQ(e.where().key, "name");
}

TEST(StudySpec, RejectsBadBatch) {
  for (const char* bad : {"0", "-4", "1.5", "many", "[1, 2]", "99999999999"}) {
    const auto e =
        rejection(spec_with(std::string("  - {devices: 8, model: 5B, batch_sequences: ") + bad + "}\n"));
    EXPECT_EQ(e.where().key, "points[0].batch_sequences") << bad;
    EXPECT_THAT(e.expected(), HasSubstr("positive integer")) << bad;
  }
}

TEST(StudySpec, RejectsDecreasingDevices) {
  const auto e =
      rejection(spec_with("  - {devices: 16, model: 5B, batch_sequences: 8}\n"
                          "  - {devices: 8, model: 5B, batch_sequences: 8}\n"));
  EXPECT_EQ(e.where().key, "points[1].devices");
  EXPECT_THAT(e.expected(), HasSubstr("non-decreasing"));
}

TEST(StudySpec, RejectsBadPrecisionAndOptionValues) {
  auto e = rejection(spec_with("  - {devices: 8, model: 5B, batch_sequences: 8}\n", "precision: fp8\n"));
  EXPECT_EQ(e.where().key, "precision");
  EXPECT_THAT(e.expected(), HasSubstr("bf16"));
  e = rejection(
      spec_with("  - {devices: 8, model: 5B, batch_sequences: 8}\n", "options: {recompute: yes}\n"));
  EXPECT_EQ(e.where().key, "options.recompute");
  e = rejection(spec_with("  - {devices: 8, model: 5B, batch_sequences: 8}\n", "options: {overlap: true}\n"));
  EXPECT_EQ(e.where().key, "options.overlap");
}

TEST(StudySpec, RejectsMissingMachineEmptyPointsAndBrokenYaml) {
  auto e = rejection("points:\n  - {devices: 8, model: 5B, batch_sequences: 8}\n");
  EXPECT_THAT(e.expected(), HasSubstr("'machine'"));
  e = rejection("machine: frontier\npoints: []\n");
  EXPECT_EQ(e.where().key, "points");
  e = rejection("machine: frontier\npoints: [\n  {devices: 8\n");
  EXPECT_EQ(e.where().file, kFile);
  EXPECT_GT(e.where().line, 0);
  EXPECT_THAT(e.expected(), HasSubstr("valid YAML"));
}

TEST(StudySpec, MessageIsOneLineNamingFileLineAndKey) {
  const auto e = rejection(spec_with("  - {devices: 8, model: 7B, batch_sequences: 8}\n"));
  const std::string message = e.what();
  EXPECT_EQ(message.find('\n'), std::string::npos);
  EXPECT_THAT(message, HasSubstr("studies/frontier-test.yaml:3"));
  EXPECT_THAT(message, HasSubstr("points[0].model"));
}

// Every checked-in spec loads, says why its triples, and names a library its machine has.
TEST(StudySpec, LoadsTheCheckedInStudies) {
  const std::filesystem::path dir = std::filesystem::path(WEAKSCALE_SOURCE_DIR) / "benchmarks" / "studies";
  int specs = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".yaml") continue;
    const std::string name = entry.path().stem().string();
    const auto spec = load_study_spec(entry.path().string());
    ++specs;
    EXPECT_EQ(spec.name, name);
    EXPECT_FALSE(spec.points.empty());
    EXPECT_FALSE(spec.rationale.empty()) << name << ": a study must say why its triples";
    const Machine machine =
        study_machine(spec, load_machine_by_name(spec.machine, std::string(WEAKSCALE_SOURCE_DIR) + "/machines"));
    if (!spec.library.empty()) {
      EXPECT_EQ(machine.collective_libraries.front().name, spec.library);
    }
  }
  EXPECT_GE(specs, 6);
}

TEST(StudySpec, MissingFileIsAnInputError) {
  EXPECT_THROW(load_study_spec("/nonexistent/frontier-x.yaml"), InputError);
}

}  // namespace
}  // namespace ws

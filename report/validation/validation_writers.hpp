// results/validation.csv (one row per run: configuration, measured and simulated step time, error,
// and the per-phase breakdown of both) and results/validation.json (the same plus the statistics
// and how the file was made).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "harness/validate/validate.hpp"  // ValidationProvenance
#include "harness/validate/validation_record.hpp"

namespace ws {

const std::vector<std::string>& validation_csv_columns();

// Simulated columns are empty for a run without a simulation. Times print in shortest round-trip
// form, so parse_validation_csv(format_validation_csv(r)) == r.
std::string format_validation_csv(const std::vector<ValidationRecord>& records);

// Inverse of format_validation_csv; throws std::runtime_error naming the line and column.
std::vector<ValidationRecord> parse_validation_csv(const std::string& text);

std::string format_validation_json(const std::vector<ValidationRecord>& records,
                                   const std::optional<ErrorSummary>& errors, const ValidationProvenance& provenance);

}  // namespace ws

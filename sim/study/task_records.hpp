// One finished study task as a line of JSON: {"study": hash, "task": key, "result": {...}}. Used
// for the partial file (<out>/<name>.partial.jsonl: a resumed study reuses its lines) and to send
// results from ranks to rank 0. Numbers round-trip exactly (times in integer picoseconds, doubles
// in shortest round-trip form), so a reloaded result writes the same bytes as a computed one.
#pragma once

#include <filesystem>
#include <map>
#include <string>

#include "sim/study/point_evaluation.hpp"

namespace ws {

std::string format_task_record(const std::string& study_hash, const std::string& task_key,
                               const PointEvaluation& result);

// Every complete, well-formed line of `text` whose hash is `study_hash`, by task key (a later line
// for the same key wins). Lines of other studies, and a torn last line, are skipped.
std::map<std::string, PointEvaluation> parse_task_records(const std::string& text, const std::string& study_hash);

// Appends one record line to the partial file and flushes it to the kernel in one write (O_APPEND),
// so that ranks appending to the same file never interleave within a line.
void append_task_record(const std::filesystem::path& partial_file, const std::string& line);

// The records of a partial file (none when it does not exist).
std::map<std::string, PointEvaluation> load_task_records(const std::filesystem::path& partial_file,
                                                         const std::string& study_hash);

}  // namespace ws

// Reading an input file whole, refusing what would hang or exhaust memory before reading it: a
// FIFO, device or directory where a file is expected, or a file above a documented size limit.
// Every loader of a user's file (machine files, study specs, tables, measured runs) reads here.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace ws {

// Size limits of the inputs (README "Reliability"): far above any real file, far below memory.
inline constexpr std::uint64_t kMaxMachineFileBytes = 4ULL << 20;   // 4 MiB (Frontier's file: 20 KiB)
inline constexpr std::uint64_t kMaxSpecFileBytes = 4ULL << 20;      // 4 MiB of study spec
inline constexpr std::uint64_t kMaxTableFileBytes = 64ULL << 20;    // 64 MiB of CSV rows

// Reads the regular file at `path` into `text`, or says why not without reading it: "cannot open
// the file: ...", "is a directory", "is not a regular file (a device, FIFO or socket)", "is N
// bytes, above the limit of 4 MiB", ... A FIFO is refused without a blocking open or read.
std::optional<std::string> read_regular_file(const std::filesystem::path& path, std::uint64_t max_bytes,
                                             std::string& text);

// The bytes of the regular file at `path`; throws InputError naming the file and `what` it should
// be (e.g. "a machine file (YAML)") when it is missing, unreadable, not a regular file, or larger
// than `max_bytes`. A FIFO is refused without opening it for a blocking read.
std::string read_input_file(const std::filesystem::path& path, std::string_view what, std::uint64_t max_bytes);

// `text` made safe for a one-line message: control characters, bidirectional overrides and bytes
// that are not UTF-8 shown as \xNN or \u{NNNN} escapes, and cut to `max_chars` characters with
// "..." when longer. For any text from a file or a command line that an error message echoes.
std::string printable(std::string_view text, std::size_t max_chars = 80);

}  // namespace ws

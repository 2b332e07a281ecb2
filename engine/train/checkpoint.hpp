// Sharded checkpoints. Each rank writes its shard (parameters, AdamW moments and step, the data
// position, its GEMM variant choices; under the distributed optimizer the moments of its shards of
// the buckets only, and the parameters as its shards' last update left them) to a temporary file and renames it into place; after a
// barrier rank 0 writes manifest.json (model, layout, step, each shard's file, size and FNV-1a
// checksum) the same way. A checkpoint therefore exists only once all of it exists; an older
// manifest never names a newer shard. Loading checks everything on every rank and agrees on one
// verdict: a missing, truncated, corrupt or mismatched (other model, layout, batch, seed, data or
// precision) checkpoint throws the same CheckpointError, naming the file and the problem, on
// every rank, before any state is touched.
#pragma once

#include <cstdint>
#include <string>

#include "engine/train/run_config.hpp"
#include "engine/train/trainer.hpp"

namespace ws {

class CheckpointError : public InputError {
 public:
  using InputError::InputError;
};

// `data` names the token source ("synthetic" or the text file) so a resume on other data is caught.
// Collective over the trainer's world. Writes the checkpoint of trainer.steps_done() into `dir`
// (created if needed) and removes this rank's shards of older steps. Under the distributed
// optimizer it first gathers the last update into every rank's parameters
// (Trainer::gather_parameters: the values the next step's gathers would bring anyway).
template <class T>
void save_checkpoint(Trainer<T>& trainer, const std::string& data, const std::string& dir);

// Collective. Restores parameters, optimizer state, step and GEMM choices from `dir`.
template <class T>
void load_checkpoint(Trainer<T>& trainer, const std::string& data, const std::string& dir);

}  // namespace ws

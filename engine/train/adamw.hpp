// AdamW (decoupled weight decay, Loshchilov & Hutter) with global gradient-norm clipping, over the
// flat parameter buffer of one rank.
#pragma once

#include <vector>

#include "engine/model/parameters.hpp"
#include "engine/train/run_config.hpp"

namespace ws {

// This rank's share of the squared global gradient norm: each tensor's sum of squares divided by
// its number of copies in the X x Y x Z grid, so that summing the shares over X, Y and Z counts
// every element once, and over the pipeline stages (each holds its own blocks; a tensor marked out
// of the norm, the last stage's tied-embedding copy, is left to the first stage). (Data-parallel
// replicas hold identical reduced gradients: not summed.)
template <class T>
double gradient_square_share(const ParameterStore<T>& store);

// Multiplies every gradient of this rank by `factor`.
template <class T>
void scale_gradients(ParameterStore<T>& store, T factor);

// A run of parameters AdamW updates in place, with their gradients and where their moments are.
template <class T>
struct AdamWSegment {
  T* value = nullptr;
  const T* grad = nullptr;
  std::size_t moments = 0;  // offset of the run's first and second moments
  std::size_t size = 0;
  bool weight_decay = false;
};

template <class T>
class AdamW {
 public:
  // `parameters`: the elements it updates (the store's, or a distributed optimizer's shard).
  AdamW(const AdamWConfig& config, std::size_t parameters);
  // One update; gradients are multiplied by `grad_scale` first (the clipping factor).
  void step(ParameterStore<T>& store, double grad_scale);
  // One update of the segments (their moments within this optimizer's).
  void step(const std::vector<AdamWSegment<T>>& segments, double grad_scale);
  long long steps() const { return step_; }
  // First and second moments, element for element with the parameter store (for checkpoints).
  std::vector<T>& first_moment() { return m_; }
  std::vector<T>& second_moment() { return v_; }
  const std::vector<T>& first_moment() const { return m_; }
  const std::vector<T>& second_moment() const { return v_; }
  void set_steps(long long steps) { step_ = steps; }

 private:
  AdamWConfig config_;
  std::vector<T> m_, v_;
  long long step_ = 0;
};

// The factor that scales a gradient of norm `norm` down to `clip_norm` (1 if already below).
double clip_factor(double norm, double clip_norm);

}  // namespace ws

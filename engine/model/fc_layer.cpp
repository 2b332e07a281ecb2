#include "engine/model/fc_layer.hpp"

#include <algorithm>
#include <cassert>
#include <vector>

#include "base/random.hpp"
#include "workload/step_schedule.hpp"

namespace ws {

namespace {
// dW row tiles while a collective is in flight: the schedule's default, which the simulator prices.
constexpr int kProgressTiles = StepScheduleOptions{}.weight_gradient_tiles;

int coordinate(const RankCoords& c, CommGroup kind) {
  switch (kind) {
    case CommGroup::x: return c.x;
    case CommGroup::y: return c.y;
    case CommGroup::z: return c.z;
    case CommGroup::data: return c.data;
    case CommGroup::data_z:
    case CommGroup::pipeline:
    case CommGroup::world: assert(false && "an FC layer is sharded over the grid's axes only"); break;
  }
  return 0;
}
}  // namespace

template <class T>
FcLayer<T>::FcLayer(ParameterStore<T>& store, const std::string& name, int in_features, int out_features,
                    FcOrientation orientation, const ProcessGrid& grid, int column_groups, bool bias)
    : k_(in_features),
      n_(out_features),
      orientation_(orientation),
      column_groups_(column_groups) {
  const int in_size = group_size(grid.layout(), in_group());
  const int out_size = group_size(grid.layout(), out_group());
  assert(k_ % in_size == 0 && n_ % (out_size * column_groups) == 0);
  k_local_ = k_ / in_size;
  n_local_ = n_ / out_size;
  k_first_ = coordinate(grid.coords(), in_group()) * k_local_;
  out_coordinate_ = coordinate(grid.coords(), out_group());
  const int chunk = n_local_ / column_groups_;
  tensor_index_ = store.tensors().size();
  z_size_ = grid.layout().z;
  const std::size_t block = static_cast<std::size_t>(k_local_) * n_local_;
  assert(block % z_size_ == 0);
  const std::size_t shard = block / z_size_;
  const ShardMap weight_map{k_,    n_, k_first_, n_local_, chunk, n_ / column_groups_, out_coordinate_ * chunk,
                            shard * grid.coords().z};
  weight_ = store.add(name + ".weight", shard, true, Replication::z_sharded, 1, weight_map);
  // The bias follows the output features and is replicated over the in-group and Z.
  if (!bias) return;
  ShardMap bias_map = weight_map;
  bias_map.full_rows = 1, bias_map.first_row = 0, bias_map.block_offset = 0;
  bias_ = store.add(name + ".bias", static_cast<std::size_t>(n_local_), false, Replication::replicated,
                    in_size * z_size_, bias_map);
}

template <class T>
void FcLayer<T>::init(ParameterStore<T>& store, std::uint64_t seed, std::uint64_t stream_id, double stddev) const {
  SplitMix64 rng(seed, stream_id);
  // Every element of the full matrix is drawn, so every layout starts from the same weights.
  std::vector<double> full(static_cast<std::size_t>(k_) * n_);
  for (double& v : full) v = rng.normal() * stddev;
  T* w = store.value(weight_);
  const ShardMap& map = store.tensors()[tensor_index_].shard;
  for (std::size_t i = 0; i < weight_.size; ++i) w[i] = static_cast<T>(full[map.global_index(i)]);
  if (bias_.size > 0) std::fill(store.value(bias_), store.value(bias_) + bias_.size, T(0));
}

template <class T>
const T* FcLayer<T>::block_weight(const ParameterStore<T>& store) const {
  return z_size_ == 1 ? store.value(weight_) : block_.data();
}

template <class T>
CollectiveBuffers<T> FcLayer<T>::weight_gather(ParameterStore<T>& store) {
  block_.resize(weight_.size * z_size_);
  return {store.value(weight_), block_.data(), weight_.size};
}

template <class T>
void FcLayer<T>::forward_gemm(const LayerContext<T>& ctx, const T* x, T* y, int m) const {
  ctx.tuner.run(Op::n, Op::n, m, n_local_, k_local_, T(1), x, block_weight(ctx.store), T(0), y);
}

template <class T>
void FcLayer<T>::add_bias(const ParameterStore<T>& store, T* y, int m) const {
  const T* b = store.value(bias_);  // added after the sum so that it counts once
  for (int i = 0; i < m; ++i) {
    T* row = y + static_cast<std::size_t>(i) * n_local_;
    for (int j = 0; j < n_local_; ++j) row[j] += b[j];
  }
}

template <class T>
void FcLayer<T>::dx_gemm(const LayerContext<T>& ctx, const T* dy, T* dx, int m) const {
  ctx.tuner.run(Op::n, Op::t, m, k_local_, n_local_, T(1), dy, block_weight(ctx.store), T(0), dx);
}

// Open MPI advances a non-blocking collective only inside MPI calls, so on more than one rank
// (where the dX sum, reduce-scatters and data-parallel sums may be in flight) the product runs in
// row tiles of dW with a progress() between tiles: our choice of granularity. The tiling depends
// only on the job size, never on timing, so runs reproduce bit for bit.
template <class T>
void FcLayer<T>::dw_gemm(const LayerContext<T>& ctx, const T* x, const T* dy, int m) {
  // Each Z rank saw different tokens: with Gz > 1 the block gradient is summed over Z first.
  T* dw = ctx.store.grad(weight_);
  T beta = T(1);
  if (z_size_ > 1) {
    block_grad_.resize(weight_.size * z_size_);
    dw = block_grad_.data();
    beta = T(0);
  }
  Timeline& timeline = ctx.grid.timeline();
  const int tiles = ctx.grid.world().size() > 1 ? std::min(kProgressTiles, k_local_) : 1;
  for (int t = 0; t < tiles; ++t) {
    const int first = k_local_ * t / tiles, last = k_local_ * (t + 1) / tiles;
    if (t > 0) timeline.progress();
    ctx.tuner.run(GemmArgs<T>{Op::t, Op::n, last - first, n_local_, m, T(1), x + first, k_local_, dy, n_local_, beta,
                              dw + static_cast<std::size_t>(first) * n_local_, n_local_});
  }
}

template <class T>
CollectiveBuffers<T> FcLayer<T>::dw_scatter() {
  shard_grad_.resize(weight_.size);
  return {block_grad_.data(), shard_grad_.data(), weight_.size};
}

template <class T>
void FcLayer<T>::add_gradient_shard(ParameterStore<T>& store) const {
  T* grad = store.grad(weight_);
  for (std::size_t i = 0; i < weight_.size; ++i) grad[i] += shard_grad_[i];
}

template <class T>
void FcLayer<T>::bias_grad(ParameterStore<T>& store, const T* dy, int m) const {
  T* db = store.grad(bias_);
  for (int i = 0; i < m; ++i) {
    const T* row = dy + static_cast<std::size_t>(i) * n_local_;
    for (int j = 0; j < n_local_; ++j) db[j] += row[j];
  }
}

template class FcLayer<float>;
template class FcLayer<double>;

}  // namespace ws

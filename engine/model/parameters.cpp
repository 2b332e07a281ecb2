#include "engine/model/parameters.hpp"

#include <algorithm>

namespace ws {

template <class T>
Tensor ParameterStore<T>::add(std::string name, std::size_t size, bool weight_decay, Replication replication,
                              int grid_replicas, const ShardMap& shard) {
  const Tensor t{values_.size(), size};
  values_.resize(values_.size() + size, T(0));
  grads_.resize(values_.size(), T(0));
  tensors_.push_back(TensorInfo{std::move(name), t, weight_decay, replication, grid_replicas, shard});
  return t;
}

template <class T>
void ParameterStore<T>::zero_grads() {
  std::fill(grads_.begin(), grads_.end(), T(0));
}

template class ParameterStore<float>;
template class ParameterStore<double>;

}  // namespace ws

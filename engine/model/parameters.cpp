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

template <class T>
const TensorInfo* ParameterStore<T>::find(std::string_view name) const {
  const auto it = std::find_if(tensors_.begin(), tensors_.end(), [&](const TensorInfo& t) { return t.name == name; });
  return it == tensors_.end() ? nullptr : &*it;
}

template <class T>
void ParameterStore<T>::exclude_from_norm(Tensor t) {
  for (TensorInfo& info : tensors_)
    if (info.tensor.offset == t.offset && info.tensor.size == t.size) info.in_norm = false;
}

template class ParameterStore<float>;
template class ParameterStore<double>;

}  // namespace ws

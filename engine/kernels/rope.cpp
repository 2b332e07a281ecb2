#include "engine/kernels/rope.hpp"

#include <cmath>
#include <cstddef>

namespace ws {

template <class T>
void rope_rotate(T* data, int sequences, int seq, int row_stride, const std::vector<int>& head_columns, int head_dim,
                 double base, bool inverse) {
  const int half = head_dim / 2;
  std::vector<T> cosines(static_cast<std::size_t>(half)), sines(cosines.size());
  for (int p = 0; p < seq; ++p) {
    // The angles of position p, in double so that fp32 runs turn by the same angles.
    for (int i = 0; i < half; ++i) {
      const double angle = p * std::pow(base, -2.0 * i / head_dim);
      cosines[static_cast<std::size_t>(i)] = static_cast<T>(std::cos(angle));
      sines[static_cast<std::size_t>(i)] = static_cast<T>(inverse ? -std::sin(angle) : std::sin(angle));
    }
    for (int s = 0; s < sequences; ++s) {
      T* row = data + (static_cast<std::size_t>(s) * seq + p) * static_cast<std::size_t>(row_stride);
      for (int column : head_columns) {
        T* a = row + column;
        T* b = a + half;
        for (int i = 0; i < half; ++i) {
          const T c = cosines[static_cast<std::size_t>(i)], sn = sines[static_cast<std::size_t>(i)];
          const T x = a[i], y = b[i];
          a[i] = x * c - y * sn;
          b[i] = x * sn + y * c;
        }
      }
    }
  }
}

template void rope_rotate<float>(float*, int, int, int, const std::vector<int>&, int, double, bool);
template void rope_rotate<double>(double*, int, int, int, const std::vector<int>&, int, double, bool);

}  // namespace ws

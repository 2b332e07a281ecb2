// Rotary position embedding (Su et al. 2021, "RoFormer"; Llama) on the query and key heads of a
// row-major activation. Each head's d features are turned in pairs (i, i + d/2) by the angle
// p * base^(-2i/d), p the token's position in its sequence (the "rotate half" pairing of the
// GPT-NeoX and Hugging Face implementations).
#pragma once

#include <vector>

namespace ws {

// Turns, in place, the heads whose first columns are `head_columns` in every row of `data`
// ([sequences * seq rows x row_stride]). `inverse` turns back by the opposite angle: the gradient
// of a rotation is the inverse rotation of the output gradient.
template <class T>
void rope_rotate(T* data, int sequences, int seq, int row_stride, const std::vector<int>& head_columns, int head_dim,
                 double base, bool inverse);

}  // namespace ws

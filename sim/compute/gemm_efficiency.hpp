// Shape-dependent GEMM efficiency and time from the machine file's table. Sharded 3D-parallel
// GEMMs have unusual shapes (thin k, tall m), which is why one peak number is not enough.
#pragma once

#include "base/units.hpp"
#include "sim/machine/machine.hpp"

namespace ws {

// Efficiency (achieved / peak, in (0, 1]) at shape m x n x k, interpolated from the table in
// log2 space: multilinear between neighbours and clamped at the edges when the table is a full grid
// (make_gemm_table), else inverse-distance weighting over the samples. A sample's own shape
// returns it as is.
double gemm_efficiency(const GemmEfficiencyTable& table, double m, double n, double k);

// Time of C[m x n] = A[m x k] B[k x n]: 2 m n k flops at efficiency x peak.
Time gemm_time(const DeviceSpec& device, Precision precision, double m, double n, double k);

}  // namespace ws

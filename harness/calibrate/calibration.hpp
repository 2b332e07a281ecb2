// Everything one `weakscale calibrate` run measured on this host, with how and when: the input of
// calibrated_machine() and of the machine-file writer. Plain data; tests build it by hand.
#pragma once

#include <string>

#include "harness/calibrate/elementwise_probe.hpp"
#include "harness/calibrate/gemm_probe.hpp"
#include "harness/calibrate/host_facts.hpp"
#include "harness/calibrate/memory_probe.hpp"
#include "harness/calibrate/mpi_probe.hpp"

namespace ws {

struct Calibration {
  std::string machine_name = "local";
  std::string command_line;  // as typed, for the file header ("regenerate with")
  std::string date_utc;      // ISO 8601, when the measurements started
  std::string note;          // free text for the header (e.g. "host shared with other jobs")
  HostFacts host;
  GemmMeasurements gemm;
  BusyNodeGemm busy_node;
  CoreVariability variability;  // threads == 0: not measured (the file gets no variability)
  MemoryMeasurements memory;
  ElementwiseMeasurements elementwise;
  MpiMeasurements mpi;
  // Empty: the ranks talked through this host's shared memory (one node of mpi.ranks cores).
  // Else how they were separated (harness/netns: a namespace per rank, shaped veth links): the file
  // then has one node per rank behind one switch, with the measured link as each node's NIC.
  std::string shaped_network;
};

}  // namespace ws

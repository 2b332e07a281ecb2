// Built until sim/step provides weakscale_step_sim: no simulator, measured times only.
#include "sim/validate/step_simulation.hpp"

namespace ws {

StepSimulator make_step_simulator(const Machine&) { return {}; }

}  // namespace ws

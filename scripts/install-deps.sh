#!/usr/bin/env bash
# Installs every Debian 12 package weakscale needs to build, test and plot.
# Idempotent: packages already present are skipped, and apt-get runs only when something is missing.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config git
  openmpi-bin libopenmpi-dev          # engine communication; mpirun for tests
  libopenblas-dev                     # GEMMs (CBLAS) for the engine and calibration
  libeigen3-dev                       # dense matrices in the engine (BLAS back end)
  libnlopt-cxx-dev                    # derivative-free fits of collective-library terms to published figures
  libbenchmark-dev libgtest-dev libgmock-dev
  libboost-graph-dev libboost-iostreams-dev libboost-filesystem-dev libboost-system-dev
  libgnuplot-iostream-dev gnuplot-nox # plots of studies (PNG via pngcairo, SVG)
  libyaml-cpp-dev                     # machine files and study specs
  libcli11-dev                        # the weakscale command line
  nlohmann-json3-dev                  # JSON results and traces
  libfmt-dev                          # formatting of tables and messages
  iproute2                            # ip and tc for calibrate/validate --netns-rate (shaped veth links)
  clang libclang-rt-dev               # libFuzzer + ASan/UBSan runtimes for scripts/fuzz.sh
  python3                             # test golden_gpu_gemm_table re-derives the measured GPU table
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages already installed" >&2
  exit 0
fi

echo "install-deps: installing ${missing[*]}" >&2
sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then sudo_cmd=(sudo); fi
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"

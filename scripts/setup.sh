# Shared by scripts/demo, scripts/test and scripts/bench (sourced, not run): installs the Debian packages
# ultrasim needs when they are missing, then configures and builds into build/.
set -euo pipefail

ULTRASIM_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
ULTRASIM_BUILD="${ULTRASIM_BUILD:-$ULTRASIM_ROOT/build}"
ULTRASIM_PACKAGES=(cmake make g++ pkg-config git libsimgrid-dev libboost-graph-dev libboost-context-dev nlohmann-json3-dev
                   catch2 libcli11-dev zlib1g-dev libspdlog-dev python3 python3-pandas python3-matplotlib python3-nbformat
                   python3-nbclient python3-ipykernel python3-jsonschema jupyter-nbconvert)
# scripts/test --sanitize builds with g++'s ASan/UBSan (libasan8 and libubsan1 come with g++); scripts/fuzz
# needs clang and its libFuzzer/sanitizer runtimes.
ULTRASIM_PACKAGES+=(clang-14 libclang-rt-14-dev)
# The cluster-sweep tests (test/scripts/sweep_cluster_test.sh): GNU parallel, and a one-node Slurm.
ULTRASIM_PACKAGES+=(parallel slurm-wlm munge)
# Chakra execution traces: the schema compiled with protoc, and scripts/make_chakra_trace.py writes them.
ULTRASIM_PACKAGES+=(libprotobuf-dev protobuf-compiler python3-protobuf)

ultrasim_install_missing() {
  local missing=()
  for package in "${ULTRASIM_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "ok installed" || missing+=("$package")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "ultrasim: installing missing packages: ${missing[*]}" >&2
  local sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
}

# Extra arguments go to CMake's configure step (scripts/test --sanitize: -DULTRASIM_SANITIZE=ON).
ultrasim_build() {
  cmake -S "$ULTRASIM_ROOT" -B "$ULTRASIM_BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >/dev/null
  cmake --build "$ULTRASIM_BUILD" -j "$(nproc)" -- --no-print-directory >&2
}

# Shared set-up of tools/test and tools/compare (sourced, not run).
#
# ensure_packages: installs, on Debian 12 or 13 as root, every Debian package the
# build, the tests and the comparison need and that is not there yet. Not
# root and something missing: says what to install, and fails.

SSTFILTER_PACKAGES=(
  g++ cmake ninja-build pkg-config clang-format-19 clang libclang-rt-dev
  libxxhash-dev libgtest-dev libbenchmark-dev libgflags-dev
  librocksdb-dev rocksdb-tools libleveldb-dev
  gnuplot-nox
  nlohmann-json3-dev
)

ensure_packages() {
  local missing=() p
  for p in "${SSTFILTER_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
      missing+=("$p")
  done
  ((${#missing[@]} == 0)) && return 0
  if [[ $(id -u) != 0 ]]; then
    echo "sstfilter: missing Debian packages: ${missing[*]}" >&2
    echo "sstfilter: run as root, or: sudo apt-get install ${missing[*]}" >&2
    return 1
  fi
  echo "sstfilter: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q
  apt-get install -y -q --no-install-recommends "${missing[@]}"
}

# configure_and_build DIR [cmake args...]: configure (once) and build DIR.
configure_and_build() {
  local dir=$1
  shift
  cmake -S . -B "$dir" -G Ninja "$@"
  cmake --build "$dir" -j "$(nproc)"
}

# configure_and_build_targets DIR "TARGET..." [cmake args...]: configure DIR
# and build only the listed targets.
configure_and_build_targets() {
  local dir=$1 targets=$2
  shift 2
  cmake -S . -B "$dir" -G Ninja "$@"
  # shellcheck disable=SC2086
  cmake --build "$dir" -j "$(nproc)" --target $targets
}

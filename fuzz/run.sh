#!/usr/bin/env bash
# Runs every fuzz target (or the ones named) for SECONDS each, two at a time,
# and fails if any target finds a crash. New corpus entries go to a scratch
# directory; fuzz/corpus/<target> holds the seeds, which are not committed:
# examples/seed_corpus.rs writes them (valid encodings of every filter kind
# for the decoder targets), and this script runs it when they are absent.
# Targets it writes no seeds for start from an empty corpus. Crashing inputs
# are kept in fuzz/artifacts/<target>/.
#
#   fuzz/run.sh SECONDS [TARGET...]
#
# Needs cargo-fuzz (`cargo install cargo-fuzz --locked`); a stable toolchain
# works with RUSTC_BOOTSTRAP=1, set here.
set -euo pipefail
cd "$(dirname "$0")"
seconds=${1:?usage: fuzz/run.sh SECONDS [TARGET...]}
shift
export RUSTC_BOOTSTRAP=1
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  mapfile -t targets < <(cargo fuzz list)
fi
cargo fuzz build -O >/dev/null 2>&1 || cargo fuzz build -O
# The seeds, unless an earlier run wrote them: every decoder target gets
# seeds, so any of them left empty (a target added since) means writing them.
for t in "${targets[@]}"; do
  if [[ $t == decode_* ]] && [ -z "$(ls -A "corpus/$t" 2>/dev/null)" ]; then
    cargo run --quiet --example seed_corpus
    break
  fi
done
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
# FUZZ_LOGS=DIR keeps each target's libFuzzer log there.
logs=${FUZZ_LOGS:-$scratch}
mkdir -p "$logs"
run_one() {
  local t=$1 seconds=$2 scratch=$3 logs=$4
  mkdir -p "$scratch/$t" "corpus/$t"
  if cargo fuzz run -O "$t" "$scratch/$t" "corpus/$t" -- \
      -max_total_time="$seconds" -rss_limit_mb=2048 -print_final_stats=1 \
      >"$logs/$t.log" 2>&1; then
    local execs cov
    execs=$(grep -m1 'stat::number_of_executed_units' "$logs/$t.log" | awk '{print $2}')
    cov=$(grep -E '^#[0-9]+.*(DONE|pulse)' "$logs/$t.log" | tail -1 | grep -oE 'cov: [0-9]+ ft: [0-9]+' || true)
    echo "ok     $t: ${execs:-?} execs, ${cov:-cov ?}"
  else
    echo "CRASH  $t (log below; input in fuzz/artifacts/$t/)"
    tail -40 "$logs/$t.log"
    return 1
  fi
}
export -f run_one
printf '%s\n' "${targets[@]}" | xargs -P 2 -I{} bash -c 'run_one "$@"' _ {} "$seconds" "$scratch" "$logs"

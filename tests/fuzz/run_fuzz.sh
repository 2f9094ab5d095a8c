#!/usr/bin/env bash
# Builds tests/fuzz/safetensors_fuzz.cpp with clang's libFuzzer + ASan + UBSan and runs it for a
# bounded time on a seed corpus it writes itself.
#   tests/fuzz/run_fuzz.sh [WORK_DIR] [SECONDS]      (defaults: build/fuzz, 30)
# Exit 0: no crash found. 77: skipped, clang++ absent. 1: a crash (input saved in WORK_DIR), or
# clang++ present but unable to link libFuzzer (Debian: libclang-rt-<llvm version>-dev).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
WORK="${1:-$ROOT/build/fuzz}"
SECONDS_TO_RUN="${2:-30}"
CXX="${CLANGXX:-clang++}"
mkdir -p "$WORK"

if ! command -v "$CXX" >/dev/null 2>&1; then
  echo "run_fuzz.sh: skipped: $CXX not found (Debian: apt install clang libclang-rt-14-dev)"
  exit 77
fi
printf 'extern "C" int LLVMFuzzerTestOneInput(const unsigned char*, unsigned long) { return 0; }\n' \
  >"$WORK/probe.cpp"
if ! "$CXX" -fsanitize=fuzzer,address,undefined "$WORK/probe.cpp" -o "$WORK/probe" \
     >"$WORK/probe.log" 2>&1; then
  echo "run_fuzz.sh: ERROR: $CXX is installed but cannot link libFuzzer with ASan/UBSan." >&2
  echo "  Install the clang runtime (Debian: libclang-rt-<llvm version>-dev). Compiler said:" >&2
  sed 's/^/  /' "$WORK/probe.log" >&2
  exit 1
fi

SOURCES=(
  "$ROOT/tests/fuzz/safetensors_fuzz.cpp"
  "$ROOT/engine/core/safetensors_dtype.cpp"
  "$ROOT/engine/core/safetensors_header.cpp"
  "$ROOT/engine/core/safetensors_finite.cpp"
  "$ROOT/engine/core/safetensors_writer.cpp"
)
echo "run_fuzz.sh: compiling with $("$CXX" --version | head -1)"
"$CXX" -std=c++17 -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
  -I"$ROOT" "${SOURCES[@]}" -o "$WORK/safetensors_fuzz"

# Seeds: valid files of each kind, so mutations start near the interesting boundaries.
SEEDS="$WORK/seeds"
rm -rf "$SEEDS"
mkdir -p "$SEEDS" "$WORK/corpus"
write_seed() {  # NAME JSON DATA_BYTES (printf escapes)
  local length=${#2} i
  {
    for i in 0 1 2 3 4 5 6 7; do
      printf "\\$(printf '%03o' $(((length >> (8 * i)) & 255)))"
    done
    printf '%s' "$2"
    printf "$3"
  } >"$SEEDS/$1"
}
write_seed empty '{}' ''
write_seed padded '{}      ' ''
write_seed metadata '{"__metadata__":{"format":"pt"}}' ''
write_seed f32 '{"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}' \
  '\000\000\200\077\000\000\000\300'
write_seed mixed '{"__metadata__":{"k":"v"},"a":{"dtype":"I64","shape":[1],"data_offsets":[0,8]},"b":{"dtype":"BF16","shape":[2,1],"data_offsets":[8,12]},"c":{"dtype":"BOOL","shape":[],"data_offsets":[12,13]}}' \
  '\001\000\000\000\000\000\000\000\200\077\300\177\001'
write_seed f16_inf '{"h":{"dtype":"F16","shape":[2],"data_offsets":[0,4]},"z":{"dtype":"U8","shape":[0],"data_offsets":[4,4]}}' \
  '\000\074\000\174'
write_seed f64 '{"d":{"dtype":"F64","shape":[1,1],"data_offsets":[0,8]}}' \
  '\000\000\000\000\000\000\360\177'

cat >"$WORK/safetensors.dict" <<'DICT'
"\"dtype\""
"\"shape\""
"\"data_offsets\""
"\"__metadata__\""
"\"F64\""
"\"F32\""
"\"F16\""
"\"BF16\""
"\"I64\""
"\"I32\""
"\"I16\""
"\"I8\""
"\"U8\""
"\"BOOL\""
"18446744073709551615"
"-1"
DICT

echo "run_fuzz.sh: fuzzing for ${SECONDS_TO_RUN}s"
"$WORK/safetensors_fuzz" -max_total_time="$SECONDS_TO_RUN" -max_len=4096 -timeout=10 \
  -rss_limit_mb=2048 -print_final_stats=1 -dict="$WORK/safetensors.dict" \
  -artifact_prefix="$WORK/" "$WORK/corpus" "$SEEDS"

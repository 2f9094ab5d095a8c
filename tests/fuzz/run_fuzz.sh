#!/usr/bin/env bash
# Builds one libFuzzer target of tests/fuzz with clang's ASan + UBSan and runs it on a seed corpus
# it writes itself, for at most SECONDS or RUNS inputs, whichever comes first; then checks that
# it ran at least MIN_RUNS inputs (a target too slow to be searched well fails, as a crash does).
#   tests/fuzz/run_fuzz.sh TARGET [WORK_DIR] [SECONDS] [RUNS]
#   TARGET: safetensors, action_script, codebook, tile_book, json, train_config, index or
#   plugin_abi
#   (plugin_abi also needs PLUGIN_LIBRARY)   (defaults: build/fuzz/TARGET, 120, 120000)
# Exit 0: no crash found. 77: skipped, clang++ absent. 1: a crash (input saved in WORK_DIR), too
# few inputs run, or clang++ present but unable to link libFuzzer (Debian:
# libclang-rt-<llvm version>-dev).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
TARGET="${1:?usage: run_fuzz.sh TARGET [WORK_DIR] [SECONDS] [RUNS]}"
WORK="${2:-$ROOT/build/fuzz/$TARGET}"
SECONDS_TO_RUN="${3:-120}"
RUNS="${4:-120000}"
MIN_RUNS="${MIN_RUNS:-100000}"
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

# Seeds: valid inputs of each kind, so mutations start near the interesting boundaries. Every
# run starts from them alone: a corpus grown by earlier runs in a long-lived build folder would
# take the run's time to load and make its count of inputs depend on that folder's history.
SEEDS="$WORK/seeds"
rm -rf "$SEEDS" "$WORK/corpus"
mkdir -p "$SEEDS" "$WORK/corpus"
DICT="$WORK/$TARGET.dict"
MAX_LEN=4096
EXTRA_FLAGS=()
RUN_FLAGS=()
case "$TARGET" in
safetensors)
SOURCES=(
  "$ROOT/tests/fuzz/safetensors_fuzz.cpp"
  "$ROOT/engine/core/safetensors_dtype.cpp"
  "$ROOT/engine/core/safetensors_header.cpp"
  "$ROOT/engine/core/safetensors_finite.cpp"
  "$ROOT/engine/core/safetensors_writer.cpp"
)
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

cat >"$DICT" <<'DICT'
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

  ;;
action_script)
  SOURCES=("$ROOT/tests/fuzz/action_script_fuzz.cpp" "$ROOT/engine/game/action_script.cpp"
           "$ROOT/engine/game/action.cpp")
  printf '# a walk\nright 12\nup\n\n  left 3  # back\nnone 1000000\ndown 2\n' >"$SEEDS/walk"
  printf 'right\r\nup 0\n' >"$SEEDS/bad_count"
  printf 'r\xc3\xa9ght 2\n' >"$SEEDS/utf8"
  printf '%s\n' '"right"' '"left"' '"up"' '"down"' '"none"' '"1000000"' '"1000001"' '"#"' \
    '"\x0a"' '"\x0d"' '"\x00"' >"$DICT"
  ;;
codebook)
  SOURCES=("$ROOT/tests/fuzz/codebook_fuzz.cpp" "$ROOT/engine/model/codebook.cpp"
           "$ROOT/engine/model/book_text.cpp" "$ROOT/engine/core/atomic_file.cpp"
           "$ROOT/engine/core/bounded_read.cpp")
  printf 'worldcast codebook 1\npatch 2 colours 2 entries 3\ncolours #62b24a #2e66cc\naaab\nabba\nbbbb\n' \
    >"$SEEDS/small"
  printf 'worldcast codebook 1\npatch 1 colours 3 entries 3\ncolours #000000 #ffffff #ff0000\na\nb\nc\n' \
    >"$SEEDS/pixels"
  printf '%s\n' '"worldcast codebook 1"' '"patch"' '"colours"' '"entries"' '"#ffffff"' \
    '"131072"' '"32"' '"64"' '"-1"' >"$DICT"
  ;;
tile_book)
  SOURCES=("$ROOT/tests/fuzz/tile_book_fuzz.cpp" "$ROOT/engine/model/tile_book.cpp"
           "$ROOT/engine/model/book_text.cpp" "$ROOT/engine/core/atomic_file.cpp"
           "$ROOT/engine/core/bounded_read.cpp")
  printf 'worldcast tilebook 1\ntile 2 frame 4 4 colours 2 ground 2 layers 1\ncolours #62b24a #2e66cc\naaab\nabba\nlayer sprite 1 1 2 2 images 2\n.a.b\nbb..\n' \
    >"$SEEDS/small"
  printf '%s\n' '"worldcast tilebook 1"' '"tile"' '"frame"' '"colours"' '"ground"' '"layers"' \
    '"layer"' '"images"' '"#ffffff"' '"."' '"16"' '"128"' '"-1"' >"$DICT"
  ;;
json)
  SOURCES=("$ROOT/tests/fuzz/json_fuzz.cpp" "$ROOT/engine/core/json_text.cpp")
  printf '{"hidden": 256, "eps": 1e-6, "flag": true, "name": "tiny", "patch": [1, 8, 8], "sampler": {"steps": 3, "shift": 1.0}}' \
    >"$SEEDS/config"
  printf '{"a": {"b": [1, 2.5, -3, null, "x\\u00e9"]}, "a2": 1e308}' >"$SEEDS/nested"
  printf '%s\n' '"1e400"' '"-1e400"' '"18446744073709551616"' '"-9223372036854775809"' \
    '"\"hidden\""' '"\"sampler\""' '"\"steps\""' '"\"patch\""' '"NaN"' '"\\ud800"' \
    >"$DICT"
  ;;
train_config)
  SOURCES=("$ROOT/tests/fuzz/train_config_fuzz.cpp" "$ROOT/engine/train/train_config.cpp"
           "$ROOT/engine/core/json_text.cpp" "$ROOT/engine/core/bounded_read.cpp")
  # The bundled training configs, and every key they use as a dictionary word.
  for f in "$ROOT"/assets/train/*.json; do cp "$f" "$SEEDS/"; done
  grep -ho '"[a-z_0-9]*":' "$ROOT"/assets/train/*.json | sort -u | sed 's/:$//; s/"/\\"/g; s/.*/"&"/' \
    >"$DICT"
  printf '%s\n' '"1e400"' '"-1"' '"0"' '"NaN"' '"18446744073709551616"' '"\"bf16\""' \
    '"\"f32\""' >>"$DICT"
  ;;
index)
  SOURCES=("$ROOT/tests/fuzz/index_fuzz.cpp")
  for f in safetensors_dtype safetensors_header safetensors_finite safetensors_writer \
           safetensors_file safetensors_checkpoint atomic_file bounded_read json_text log \
           printable; do
    SOURCES+=("$ROOT/engine/core/$f.cpp")
  done
  printf '{"metadata": {"total_size": 32}, "weight_map": {"a": "model-00001-of-00002.safetensors", "b": "model-00002-of-00002.safetensors"}}' \
    >"$SEEDS/both"
  printf '{"metadata": {}, "weight_map": {"a": "model-00001-of-00002.safetensors"}}' >"$SEEDS/one"
  printf '%s\n' '"\"weight_map\""' '"\"metadata\""' '"\"total_size\""' \
    '"model-00001-of-00002.safetensors"' '"model-00002-of-00002.safetensors"' '"../"' '"/"' \
    '"18446744073709551615"' '"1e400"' >"$DICT"
  ;;
plugin_abi)
  # The harness against the built library (PLUGIN_LIBRARY, set by CMake), which loads LibTorch:
  # LibTorch's lazily made caches are not leaks, and its pages need more than 2 GB of RSS.
  SOURCES=("$ROOT/tests/fuzz/plugin_abi_fuzz.cpp")
  : "${PLUGIN_LIBRARY:?run_fuzz.sh: plugin_abi needs PLUGIN_LIBRARY=path/to/libworldcast_plugin.so}"
  EXTRA_FLAGS=(-I"$ROOT/plugin/include" "$PLUGIN_LIBRARY" -Wl,-rpath,"$(dirname "$PLUGIN_LIBRARY")")
  RUN_FLAGS=(-detect_leaks=0 -rss_limit_mb=6144)
  MAX_LEN=256
  # Sequences: create a game session, step, copy a frame; create a model session, save, load.
  printf '\x00\x01\x00\x01\x04\x00\x01\x04\x00\x03\x00\x00\xff\xff' >"$SEEDS/game"
  printf '\x00\x00\x00\x00\x00\x00\x04\x00\x01\x04\x00\x0a\x04\x00\x0b\x01' >"$SEEDS/model"
  printf '%s\n' '"{\"theta_sink\": 0.9}"' '"{\"budget_frames\": 2}"' '"headcast"' '"tempcache"' \
    '"fast-ar"' '"{\"ann_bits\": 4}"' '"right 3"' '"worldcast state"' >"$DICT"
  ;;
*)
  echo "run_fuzz.sh: unknown target '$TARGET' (safetensors, action_script, codebook, tile_book, json, train_config, index, plugin_abi)" >&2
  exit 2
  ;;
esac

echo "run_fuzz.sh: compiling $TARGET with $("$CXX" --version | head -1)"
"$CXX" -std=c++17 -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
  -I"$ROOT" "${SOURCES[@]}" "${EXTRA_FLAGS[@]}" -o "$WORK/${TARGET}_fuzz"

echo "run_fuzz.sh: fuzzing $TARGET for at most ${SECONDS_TO_RUN}s or $RUNS inputs"
"$WORK/${TARGET}_fuzz" -max_total_time="$SECONDS_TO_RUN" -runs="$RUNS" -max_len="$MAX_LEN" \
  -timeout=10 -rss_limit_mb=2048 "${RUN_FLAGS[@]}" -print_final_stats=1 -dict="$DICT" \
  -artifact_prefix="$WORK/" "$WORK/corpus" "$SEEDS" 2>&1 | tee "$WORK/run.log"
ran=$(sed -n 's/^stat::number_of_executed_units: *//p' "$WORK/run.log" | tail -1)
if [ -z "$ran" ] || [ "$ran" -lt "$MIN_RUNS" ]; then
  echo "run_fuzz.sh: $TARGET ran ${ran:-no} inputs, fewer than $MIN_RUNS" >&2
  exit 1
fi
echo "run_fuzz.sh: $TARGET ran $ran inputs without a finding"

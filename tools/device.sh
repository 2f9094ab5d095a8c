#!/usr/bin/env bash
# The one runner for work on the GPU machine (../shared/device/README.md), from the repository
# root, carrying .gpu-deps (and, where a task says so, its inputs). One task per run:
#
#   bash tools/device.sh verify [SNAPSHOT]    build, every CUDA test, the benches (below)
#   bash tools/device.sh train SECONDS [FLAGS] train for a wall time, resumably (below)
#   bash tools/device.sh world                the world metric under several settings
#   bash tools/device.sh stability            the 10 000-frame stability run on several seeds
#
# Every task builds worldcast (build/gpu) when it is not built, so a later run on the same machine
# reuses its build, and writes its results under $OUT. BUILD=DIR and DEVICE=cpu
# run a task against another build on another device (a check of the script on a CPU machine).
set -u
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 1
ROOT=$(pwd)
BUILD=${BUILD:-build/gpu}
DEVICE=${DEVICE:-cuda}
W=$BUILD/ui/cli/worldcast
START=$SECONDS

case ${1:-} in
  verify | train | world | stability) ;;
  *)
    echo "usage: bash tools/device.sh verify [SNAPSHOT] | train SECONDS [FLAGS] | world | stability" >&2
    exit 2
    ;;
esac

# The carried Debian packages, LibTorch 2.11, the NVIDIA EGL Vulkan ICD and the Khronos validation
# layer (tools/device_env.sh says how .gpu-deps is made); not needed for DEVICE=cpu.
[ "$DEVICE" = cpu ] || source "$ROOT/tools/device_env.sh"

# build_worldcast LOGDIR: configure and build the GPU preset's worldcast when it is not built yet
# (another BUILD must be built already).
build_worldcast() {
  [ -x "$W" ] && return 0
  [ "$BUILD" = build/gpu ] || { echo "device.sh: no $W (BUILD=$BUILD is not built)"; exit 1; }
  [ -f build/gpu/CMakeCache.txt ] || cmake --preset gpu > "$1/configure.log" 2>&1
  cmake --build --preset gpu -j 16 --target worldcast > "$1/build.log" 2>&1 ||
    { tail -40 "$1/build.log"; exit 1; }
}

# ---------------------------------------------------------------------------------------------
# world: the world metric (Note [World content]) of a token model under several play settings,
# 8 held-out seeds each: one `worldcast eval --metrics world` per line of RUNS ("LABEL
# [WEIGHTS=DIR] FLAGS...", flags as eval takes them), each JSON and log in $OUT/res (packed into
# $OUT/world.tar after each run) and one summary line printed.
#   RUNS=$'dense_w7 --window 7\nheadcast_w32 --policy headcast --window 32' \
#   [WEIGHTS=DIR] [SEEDS=8] bash tools/device.sh world
task_world() {
  local R="$OUT/res"
  mkdir -p "$R"
  build_worldcast "$R"
  echo "built at $((SECONDS - START)) s"
  local label flags weights seeds
  while read -r label flags; do
    [ -z "$label" ] && continue
    weights=${WEIGHTS:-assets/models/game-tokens}
    case $flags in WEIGHTS=*) weights=${flags%% *}; weights=${weights#WEIGHTS=}; flags=${flags#* } ;; esac
    seeds=(--seeds "${SEEDS:-8}")
    case " $flags " in *" --seeds "*) seeds=() ;; esac  # a line's own count wins
    # shellcheck disable=SC2086  # the flags are words
    $W eval --device "$DEVICE" --weights "$weights" "${seeds[@]}" \
      --metrics world --quiet $flags --json "$R/$label.json" > "$R/$label.log" 2>&1 ||
      { echo "$label failed:"; tail -5 "$R/$label.log"; continue; }
    python3 tools/eval_summary.py "$R/$label.json" "$label"
    echo "  at $((SECONDS - START)) s"
    tar -cf "$OUT/world.tar" -C "$R" .  # after every run: a command cut short keeps what it did
  done <<< "${RUNS:-dense_w7 --window 7}"
}

# ---------------------------------------------------------------------------------------------
# stability: the 10 000-frame stability run on several seeds, with both idle probes (generated
# and true frames) kept as PNG, so one can see what the model's world looks like at the end and
# where its idle frames move. Results come back as $OUT/results.tar.
#   [SEEDS="1000000 1000001"] [CONFIG=FILE] [WEIGHTS=DIR] [EXTRA="--policy headcast"] \
#   bash tools/device.sh stability
task_stability() {
  local R="$OUT/res"
  mkdir -p "$R"
  build_worldcast "$R"
  echo "built at $((SECONDS - START)) s"
  local weights=${WEIGHTS:-assets/models/game-tokens}
  local config=${CONFIG:-$weights/config.json}
  local seed
  for seed in ${SEEDS:-1000000 1000001 1000002 1000003 1000004}; do
    [ $((SECONDS - START)) -gt 540 ] && { echo "skip $seed: time"; continue; }
    # shellcheck disable=SC2086  # EXTRA is words
    $W eval --device "$DEVICE" --weights "$weights" --config "$config" --seeds 1 \
      --seed-start "$seed" --metrics stability ${EXTRA:-} --frames-dir "$R/frames_$seed" \
      --json "$R/stability_$seed.json" > "$R/stability_$seed.log" 2>&1
    python3 -c "import json;s=json.load(open('$R/stability_$seed.json'))['stability'];print($seed, 'start', round(s['idle_self_psnr_start_db'],2), 'end', round(s['idle_self_psnr_end_db'],2), 'delta', round(s['delta_db'],2), 'detail', round(s['detail_ratio'],2))"
  done
  (cd "$OUT" && tar -cf results.tar res && rm -rf res)
  echo "done at $((SECONDS - START)) s"
}

# ---------------------------------------------------------------------------------------------
# train SECONDS [FLAGS]: train a model (by default the token model game-tokens) for a fixed wall
# time, as a loop of short processes: a crash loses at most one process's steps since its last
# checkpoint, and each process resumes from the state the previous one saved. The exported
# model, the training state (bf16 shards of at most 16 MB each) and the logs
# are copied to $OUT.
#   [TRAIN_CONFIG=assets/train/X.json] bash tools/device.sh train SECONDS [train flags...]
# A previous run continues when run/state exists (put a saved state there first, or run again on
# the same machine); otherwise INIT=DIR starts from the exported model in DIR.
# STATE_BACK=0 returns the model and logs only (a state too large to copy out stays in run/ on the
# machine). With WORLD_RUNS (RUNS as the world task takes them, "WEIGHTS=run/model" for
# the trained weights), the world metric runs after training within the time, on the exported
# model given PLAY_CONFIG's play settings (default: the bundled model's config; "exported": the
# trained one's own), so one run trains and judges a trial. TRACE=1 first traces one step's
# kernels (kernel_table.txt).
task_train() {
  local budget=${1:-300}
  shift
  local config=${TRAIN_CONFIG:-assets/train/game-tokens.json}
  mkdir -p "$OUT" run
  build_worldcast "$OUT"
  echo "built in $((SECONDS - START)) s" | tee "$OUT/train_summary.txt"
  local smi=
  if command -v nvidia-smi > /dev/null; then
    (while sleep 20; do nvidia-smi --query-gpu=utilization.gpu,memory.used --format=csv,noheader; done) \
      > "$OUT/smi.txt" 2>&1 &
    smi=$!
  fi
  local init=()
  # TRACE=1: first a kernel trace of one training step of the same config (a throwaway run),
  # summed by kernel into kernel_table.txt (tools/kernel_table.py), so a step's time can be
  # attributed.
  if [ "${TRACE:-0}" = 1 ]; then
    [ -n "${INIT:-}" ] && init=(--init "$INIT")
    $W train --config "$config" --out /tmp/trace_run --device "$DEVICE" --max-steps 3 --quiet \
      --trace "$OUT/trace.json" "${init[@]}" "$@" >> "$OUT/train.log" 2>&1 &&
      python3 tools/kernel_table.py "$OUT/trace.json" --top 40 > "$OUT/kernel_table.txt"
    rm -rf /tmp/trace_run "$OUT/trace.json"
    head -30 "$OUT/kernel_table.txt" 2>/dev/null
  fi
  # Seconds kept back for the world metric: about 45 a run of 8 seeds at 600 frames.
  local eval_seconds=0
  [ -n "${WORLD_RUNS:-}" ] && eval_seconds=$((45 * $(grep -c . <<< "$WORLD_RUNS")))
  # Each process trains for at most 2.5 minutes (one checkpoint at 2 minutes, one at its end).
  local left minutes began
  while [ $((budget - eval_seconds - (SECONDS - START))) -gt 45 ]; do
    left=$((budget - eval_seconds - (SECONDS - START) - 20))
    minutes=$(python3 -c "print(min(2.5, $left / 60.0))")
    began=$SECONDS
    init=()
    [ ! -d run/state ] && [ -n "${INIT:-}" ] && init=(--init "$INIT")
    $W train --config "$config" --out run --device "$DEVICE" --minutes "$minutes" --quiet \
      "${init[@]}" "$@" >> "$OUT/train.log" 2>&1
    echo "process exit $? at $((SECONDS - START)) s" | tee -a "$OUT/train_summary.txt"
    [ $((SECONDS - began)) -lt 30 ] && break  # the step target is reached (or it cannot start)
  done
  [ -n "$smi" ] && kill "$smi"
  tail -2 run/log.jsonl | tee -a "$OUT/train_summary.txt"
  if [ -n "${WORLD_RUNS:-}" ]; then
    # The exported config is the training one; play reads its policy and sampler from this one
    # (PLAY_CONFIG=exported: the training one).
    [ "${PLAY_CONFIG:-}" = exported ] ||
      cp "${PLAY_CONFIG:-assets/models/game-tokens/config.json}" run/model/config.json
    RUNS="$WORLD_RUNS" task_world | tee -a "$OUT/train_summary.txt"
    rm -rf "$OUT/res"  # world.tar holds it: the returned files stay few
  fi
  # Few files, each at most 16 MB: the shards as they are, the small files in one tar.
  cp run/model/*.safetensors "$OUT/" 2> /dev/null
  [ "${STATE_BACK:-1}" = 1 ] && cp run/state/*.safetensors "$OUT/" 2> /dev/null
  cp run/log.jsonl "$OUT/"
  (cd "$OUT" && tar -cf small.tar --remove-files -- *.txt *.log log.jsonl)
  tar -rf "$OUT/small.tar" run/model/*.json run/model/*.txt run/state/*.json 2> /dev/null
  ls -la "$OUT"
}

# ---------------------------------------------------------------------------------------------
# verify [SNAPSHOT]: one bounded pass: build the GPU-facing targets, run every CUDA test, the
# presentation bench, the bundled model's speed and the 720P model bench, in SNAPSHOT (a copy of
# the tree carried in, default the tree itself). Each step has its own time limit so a slow or
# failing step still leaves the others' results. Every log and JSON lands in a scratch folder
# packed into $OUT/results.tgz at the end; $OUT/summary.txt has the step lines.
# WITH_FLATNESS=1 adds the 10 000-frame play run (about 2 minutes with CUDA graphs);
# WITH_MODEL_BENCH=0 drops the 720P whole-DiT bench; WITH_ROLLOUT=1 adds the attention-only
# rollout benches (480P over 10 200 frames, all policies; 720P, five calls per block); TESTS="a b"
# picks the test binaries (default: all five); WITH_PRESENT=0 / WITH_EVAL=0 drop the presentation
# bench and the bundled model's speed. EVAL_WEIGHTS / EVAL_CONFIG point the speed run (and the
# stability run) at other weights and config (default: the bundled model); WITH_STABILITY=1 adds
# the 10 000-frame stability metric of `worldcast eval`.
task_verify() {
  cd "${1:-.}" || exit 1
  local final=${OUT:-$ROOT/out}
  local scratch
  scratch=$(mktemp -d /tmp/gpu_verify.XXXX)
  mkdir -p "$final"
  # shellcheck disable=SC2064  # the folders are fixed now
  trap "tar czf '$final/results.tgz' -C '$scratch' . && cp '$scratch/summary.txt' '$final/'" EXIT
  step() {  # step NAME SECONDS COMMAND...
    local name=$1 limit=$2
    shift 2
    local began=$SECONDS
    timeout "$limit" stdbuf -oL -eL "$@" > "$scratch/$name.log" 2>&1
    echo "== $name: exit $? in $((SECONDS - began)) s" | tee -a "$scratch/summary.txt"
  }
  local tests=${TESTS:-gpu_tests model_gpu_tests present_gpu_tests plugin_gpu_tests plugin_vulkan_tests}
  if [ "$BUILD" = build/gpu ]; then
    step configure 60 cmake --preset gpu
    # shellcheck disable=SC2086  # the targets are words
    step build 200 cmake --build --preset gpu -j 16 --target worldcast $tests -- -k 0
    grep -m8 -B2 -A6 "error:" "$scratch/build.log" >> "$scratch/summary.txt"
  fi
  local t bin
  for t in $tests; do
    bin=$(find "$BUILD" -name "$t" -type f -perm -u+x | head -1)
    [ -n "$bin" ] && step "$t" 60 "$bin" --gtest_brief=1
    tail -3 "$scratch/$t.log" >> "$scratch/summary.txt" 2> /dev/null
  done
  [ "${WITH_PRESENT:-1}" = 1 ] && step bench_present 40 $W bench present \
    --res 128x128,1280x720 --frames 300 --json "$scratch/present.json"
  local weights=${EVAL_WEIGHTS:-assets/models/game-tokens}
  local config_flag=()
  [ -n "${EVAL_CONFIG:-}" ] && config_flag=(--config "$EVAL_CONFIG")
  # The bundled model's speed with whole-block CUDA graphs (the default) and without.
  local graphs
  for graphs in ${EVAL_GRAPHS:-on off}; do
    [ "${WITH_EVAL:-1}" = 1 ] || break
    # shellcheck disable=SC2086  # EVAL_POLICIES is words
    step eval_speed_$graphs 90 $W eval --weights "$weights" "${config_flag[@]}" --device "$DEVICE" \
      --metrics speed --seeds 1 --speed-frames 400 --policies ${EVAL_POLICIES:-headcast} \
      --cuda-graphs $graphs --json "$scratch/eval_speed_$graphs.json"
  done
  if [ "${WITH_STABILITY:-0}" = 1 ]; then
    step eval_stability 300 $W eval --weights "$weights" "${config_flag[@]}" --device "$DEVICE" \
      --metrics stability --seeds 1 --json "$scratch/eval_stability.json"
    tail -12 "$scratch/eval_stability.log" >> "$scratch/summary.txt"
  fi
  if [ "${WITH_FLATNESS:-0}" = 1 ]; then
    # Live play's frame-time flatness: 10 000 played frames with the default policy and
    # random-walk keys; the summary is rewritten every 1000 frames, so a run cut by its time
    # limit keeps its numbers.
    python3 -c "
import random
r = random.Random(7); n = 0; lines = []
while n < 10000:
    k = min(r.randint(1, 20), 10000 - n); n += k
    lines.append(f'{r.choice([\"up\", \"down\", \"left\", \"right\", \"none\"])} {k}')
open('/tmp/random_walk.actions', 'w').write('\\n'.join(lines) + '\\n')"
    step flatness 300 $W play --headless --device "$DEVICE" --frame-path cuda --frames 10000 \
      --actions /tmp/random_walk.actions --png-every 0 --summary-every 1000 --out "$scratch/flatness"
    cat "$scratch/flatness/summary.json" >> "$scratch/summary.txt"
  fi
  if [ "${WITH_ROLLOUT:-0}" = 1 ]; then
    step rollout_480p 240 $W bench rollout --device "$DEVICE" --res 480p --blocks 3400 --every 20 \
      --dense-max-blocks 150 --json "$scratch/rollout_480p.json"
    tail -8 "$scratch/rollout_480p.log" >> "$scratch/summary.txt"
    step rollout_720p 120 $W bench rollout --device "$DEVICE" --res 720p --blocks 350 --every 10 \
      --policies headcast,combined --budget-frames 7 --steps 5 --json "$scratch/rollout_720p.json"
    tail -5 "$scratch/rollout_720p.log" >> "$scratch/summary.txt"
  fi
  # The whole-DiT bench, one run per word of MODEL_RUNS (RES:WARMUP:BLOCKS:SPLIT, default
  # 720p:9:3:3; SPLIT = blocks with the attention paths timed), MODEL_LIMIT seconds each; TRACE=1
  # adds one kernel trace per policy (tools/kernel_table.py sums them).
  if [ "${WITH_MODEL_BENCH:-1}" = 1 ]; then
    local trace=() run res warmup blocks split
    if [ "${TRACE:-0}" = 1 ]; then
      mkdir -p "$scratch/traces"
      trace=(--trace "$scratch/traces")
    fi
    for run in ${MODEL_RUNS:-720p:9:3:3}; do
      IFS=: read -r res warmup blocks split <<< "$run"
      step bench_model_$res "${MODEL_LIMIT:-90}" $W bench model \
        --config assets/configs/wan2.1-1.3b.json --device "$DEVICE" --resolution "$res" \
        --policies dense,headcast,dummy --warmup "$warmup" --blocks "$blocks" \
        --split-blocks "$split" "${trace[@]}" --json "$scratch/bench_model_$res.json"
      tail -6 "$scratch/bench_model_$res.log" >> "$scratch/summary.txt"
    done
  fi
  cat "$scratch/summary.txt"
}

OUT=${OUT:-$ROOT/out}
task=$1
shift
case $task in
  verify) task_verify "$@" ;;
  train) task_train "$@" ;;
  world) task_world ;;
  stability) task_stability ;;
esac

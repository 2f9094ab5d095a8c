#!/usr/bin/env bash
# Train a model (by default the token model game-tokens) on the GPU machine for a fixed wall time, as a loop of short processes: a
# crash loses at most one process's steps since its last checkpoint, and each process resumes
# from the state the previous one saved. The exported model, the training state (bf16 shards,
# each under the device tool's 16 MB limit) and the logs are copied to $OUT.
# Usage (device tool, from the project root, carry .gpu-deps and, to continue, run):
#   [TRAIN_CONFIG=assets/train/X.json] bash tools/gpu_train.sh SECONDS [extra `worldcast train` flags...]
# A previous run continues when run/state exists (put a returned state there first, or call again
# while the machine is warm); otherwise INIT=DIR starts from the exported model in DIR. On a
# machine still warm from an earlier call the build is reused. STATE_BACK=0 returns the model and
# logs only (a state too large for the returned files stays on the warm machine). With WORLD_RUNS
# (RUNS as tools/gpu_world.sh takes them, "WEIGHTS=run/model" for the trained weights), the world
# metric runs after training within BUDGET, on the exported model given PLAY_CONFIG's play
# settings (default: the bundled model's config; "exported": the trained one's own), so one call
# trains and judges a trial. TRACE=1 first traces one step's kernels (kernel_table.txt).
set -u
source tools/device_env.sh
BUDGET=${1:-300}
shift
OUT=${OUT:-$(pwd)/out}
mkdir -p "$OUT" run
START=$SECONDS
if [ ! -x build/gpu/ui/cli/worldcast ]; then
  cmake --preset gpu > "$OUT/configure.log" 2>&1
  cmake --build --preset gpu -j 16 --target worldcast > "$OUT/build.log" 2>&1 ||
    { tail -40 "$OUT/build.log"; exit 1; }
fi
W=build/gpu/ui/cli/worldcast
echo "built in $((SECONDS - START)) s" | tee "$OUT/train_summary.txt"
( while sleep 20; do nvidia-smi --query-gpu=utilization.gpu,memory.used --format=csv,noheader; done ) \
  > "$OUT/smi.txt" 2>&1 &
SMI=$!
# TRACE=1: first a kernel trace of one training step of the same config (a throwaway run), summed
# by kernel into kernel_table.txt (tools/kernel_table.py), so a step's time can be attributed.
if [ "${TRACE:-0}" = 1 ]; then
  init=()
  [ -n "${INIT:-}" ] && init=(--init "$INIT")
  $W train --config "${TRAIN_CONFIG:-assets/train/game-tokens.json}" --out /tmp/trace_run \
    --device cuda --max-steps 3 --quiet --trace "$OUT/trace.json" "${init[@]}" "$@" \
    >> "$OUT/train.log" 2>&1 &&
    python3 tools/kernel_table.py "$OUT/trace.json" --top 40 > "$OUT/kernel_table.txt"
  rm -rf /tmp/trace_run "$OUT/trace.json"
  head -30 "$OUT/kernel_table.txt" 2>/dev/null
fi
# Seconds kept back for the world metric: about 45 a run of 8 seeds at 600 frames.
EVAL_SECONDS=0
[ -n "${WORLD_RUNS:-}" ] && EVAL_SECONDS=$((45 * $(grep -c . <<< "$WORLD_RUNS")))
# Each process trains for at most 2.5 minutes (one checkpoint at 2 minutes, one at its end).
while [ $((BUDGET - EVAL_SECONDS - (SECONDS - START))) -gt 45 ]; do
  left=$((BUDGET - EVAL_SECONDS - (SECONDS - START) - 20))
  minutes=$(python3 -c "print(min(2.5, $left / 60.0))")
  began=$SECONDS
  init=()
  [ ! -d run/state ] && [ -n "${INIT:-}" ] && init=(--init "$INIT")
  $W train --config "${TRAIN_CONFIG:-assets/train/game-tokens.json}" --out run --device cuda --minutes "$minutes" \
    --quiet "${init[@]}" "$@" >> "$OUT/train.log" 2>&1
  echo "process exit $? at $((SECONDS - START)) s" | tee -a "$OUT/train_summary.txt"
  [ $((SECONDS - began)) -lt 30 ] && break  # the step target is reached (or it cannot start)
done
kill $SMI
tail -2 run/log.jsonl | tee -a "$OUT/train_summary.txt"
if [ -n "${WORLD_RUNS:-}" ]; then
  # The exported config is the training one; play reads its policy and sampler from this one
  # (PLAY_CONFIG=exported: the training one).
  [ "${PLAY_CONFIG:-}" = exported ] ||
    cp "${PLAY_CONFIG:-assets/models/game-tokens/config.json}" run/model/config.json
  RUNS="$WORLD_RUNS" bash tools/gpu_world.sh | tee -a "$OUT/train_summary.txt"
  rm -rf "$OUT/res"  # world.tar holds it: the returned files stay few
fi
# At most 8 files come back, each under 16 MB: the shards as they are, the small files in a tar.
cp run/model/*.safetensors "$OUT/" 2>/dev/null
[ "${STATE_BACK:-1}" = 1 ] && cp run/state/*.safetensors "$OUT/" 2>/dev/null
cp run/log.jsonl "$OUT/"
( cd "$OUT" && tar -cf small.tar --remove-files *.txt *.log log.jsonl )
tar -rf "$OUT/small.tar" run/model/*.json run/model/*.txt run/state/*.json 2>/dev/null
ls -la "$OUT"

#!/usr/bin/env bash
# One pass on the GPU machine (see ../shared/device/README.md): build the GPU-facing targets, run
# every CUDA test, the presentation bench, the bundled model's speed and the 720P model bench.
# Each step has its own time limit so a slow or failing step still leaves the others' results.
# Usage (device tool, carry .gpu-deps and a snapshot in .snap): bash tools/gpu_verify.sh .snap
# Every log and JSON lands in a scratch folder that is packed into $OUT/results.tgz at the end
# (the device tool brings back at most 8 files); $OUT/summary.txt has the step lines.
# WITH_FLATNESS=1 adds the 10 000-frame play run (about 2 minutes with CUDA graphs); WITH_MODEL_BENCH=0
# drops the 720P whole-DiT bench; WITH_ROLLOUT=1 adds the attention-only rollout benches
# (480P over 10 200 frames, all policies; 720P, five calls per block); TESTS="a b" picks the test
# binaries (default: all five); WITH_PRESENT=0 / WITH_EVAL=0 drop the presentation bench and the
# bundled model's speed. EVAL_WEIGHTS / EVAL_CONFIG point the speed run (and the stability run)
# at other weights and config (default: the bundled model); WITH_STABILITY=1 adds the
# 10 000-frame stability metric of `worldcast eval` on the GPU.
set -u
ROOT=$(pwd)
source "$ROOT/tools/device_env.sh"
cd "${1:-.}"
FINAL=${OUT:-$ROOT/out}
OUT=$(mktemp -d /tmp/gpu_verify.XXXX)
mkdir -p "$FINAL"
pack() { tar czf "$FINAL/results.tgz" -C "$OUT" . && cp "$OUT/summary.txt" "$FINAL/"; }
trap pack EXIT
step() {  # step NAME SECONDS COMMAND...
  local name=$1 limit=$2
  shift 2
  local start=$SECONDS
  timeout "$limit" stdbuf -oL -eL "$@" > "$OUT/$name.log" 2>&1
  echo "== $name: exit $? in $((SECONDS - start)) s" | tee -a "$OUT/summary.txt"
}
step configure 60 cmake --preset gpu
TESTS=${TESTS:-gpu_tests model_gpu_tests present_gpu_tests plugin_gpu_tests plugin_vulkan_tests}
step build 200 cmake --build --preset gpu -j 16 --target worldcast $TESTS -- -k 0
grep -m8 -B2 -A6 "error:" "$OUT/build.log" >> "$OUT/summary.txt"
B=build/gpu
W=$B/ui/cli/worldcast
for t in $TESTS; do
  bin=$(find $B -name "$t" -type f -perm -u+x | head -1)
  [ -n "$bin" ] && step "$t" 60 "$bin" --gtest_brief=1
  tail -3 "$OUT/$t.log" >> "$OUT/summary.txt" 2>/dev/null
done
[ "${WITH_PRESENT:-1}" = 1 ] && step bench_present 40 $W bench present --res 128x128,1280x720 --frames 300 --json "$OUT/present.json"
EVAL_WEIGHTS=${EVAL_WEIGHTS:-assets/models/game-tokens}
EVAL_CONFIG_FLAG=()
[ -n "${EVAL_CONFIG:-}" ] && EVAL_CONFIG_FLAG=(--config "$EVAL_CONFIG")
# The bundled model's speed with whole-block CUDA graphs (the default) and without, same machine.
for graphs in ${EVAL_GRAPHS:-on off}; do
  [ "${WITH_EVAL:-1}" = 1 ] || break
  step eval_speed_$graphs 90 $W eval --weights $EVAL_WEIGHTS "${EVAL_CONFIG_FLAG[@]}" --device cuda \
    --metrics speed --seeds 1 --speed-frames 400 --policies ${EVAL_POLICIES:-headcast} --cuda-graphs $graphs \
    --json "$OUT/eval_speed_$graphs.json"
done
if [ "${WITH_STABILITY:-0}" = 1 ]; then
  step eval_stability 300 $W eval --weights $EVAL_WEIGHTS "${EVAL_CONFIG_FLAG[@]}" --device cuda \
    --metrics stability --seeds 1 --json "$OUT/eval_stability.json"
  tail -12 "$OUT/eval_stability.log" >> "$OUT/summary.txt"
fi
if [ "${WITH_FLATNESS:-0}" = 1 ]; then
  # Live play's frame-time flatness: 10 000 played frames with the default policy and random-walk
  # keys; the summary is rewritten every 1000 frames, so a run cut by its time limit keeps its
  # numbers.
  python3 -c "
import random
r = random.Random(7); n = 0; lines = []
while n < 10000:
    k = min(r.randint(1, 20), 10000 - n); n += k
    lines.append(f'{r.choice([\"up\", \"down\", \"left\", \"right\", \"none\"])} {k}')
open('/tmp/random_walk.actions', 'w').write('\\n'.join(lines) + '\\n')"
  step flatness 300 $W play --headless --device cuda --frame-path cuda --frames 10000 \
    --actions /tmp/random_walk.actions --png-every 0 --summary-every 1000 --out "$OUT/flatness"
  cat "$OUT/flatness/summary.json" >> "$OUT/summary.txt"
fi
if [ "${WITH_ROLLOUT:-0}" = 1 ]; then
  step rollout_480p 240 $W bench rollout --device cuda --res 480p --blocks 3400 --every 20 \
    --dense-max-blocks 150 --json "$OUT/rollout_480p.json"
  tail -8 "$OUT/rollout_480p.log" >> "$OUT/summary.txt"
  step rollout_720p 120 $W bench rollout --device cuda --res 720p --blocks 350 --every 10 \
    --policies headcast,combined --budget-frames 7 --steps 5 --json "$OUT/rollout_720p.json"
  tail -5 "$OUT/rollout_720p.log" >> "$OUT/summary.txt"
fi
# The whole-DiT bench, one run per word of MODEL_RUNS (RES:WARMUP:BLOCKS:SPLIT, default
# 720p:9:3:3; SPLIT = blocks with the attention paths timed), MODEL_LIMIT seconds each; TRACE=1
# adds one kernel trace per policy (tools/kernel_table.py sums them).
if [ "${WITH_MODEL_BENCH:-1}" = 1 ]; then
  trace=()
  if [ "${TRACE:-0}" = 1 ]; then mkdir -p "$OUT/traces"; trace=(--trace "$OUT/traces"); fi
  for run in ${MODEL_RUNS:-720p:9:3:3}; do
    IFS=: read -r res warmup blocks split <<< "$run"
    step bench_model_$res ${MODEL_LIMIT:-90} $W bench model \
      --config assets/configs/wan2.1-1.3b.json --device cuda --resolution $res \
      --policies dense,headcast,dummy --warmup $warmup --blocks $blocks --split-blocks $split \
      "${trace[@]}" --json "$OUT/bench_model_$res.json"
    tail -6 "$OUT/bench_model_$res.log" >> "$OUT/summary.txt"
  done
fi
cat "$OUT/summary.txt"

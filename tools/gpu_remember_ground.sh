#!/usr/bin/env bash
# Remembered ground on the GPU machine (Note [Remembered ground]), the model config
# CONFIG (default: the bundled one) with the memory on, in passes that each fit one 10-minute
# device command:
#   PHASE=A: build worldcast and model_gpu_tests, run model_gpu_tests, then the 10 000-frame
#            stability run on the seeds in SEEDS (probes as PNG).
#   PHASE=B: with the memory on and off: responsiveness, idle fidelity and the return trip on
#            8 seeds; the policies against dense (8 seeds, 48 frames); the speed of dense and
#            headcast (400 frames, CUDA graphs on).
#   PHASE=AB: the stability run on SEEDS, then the 8-seed eval and the policies with the memory on.
# Results come back as $OUT/results.tar (the device tool returns at most 8 files).
# Usage (device tool, carry .gpu-deps): PHASE=A [SEEDS="1000000 1000001"] [CONFIG=FILE]
# bash tools/gpu_remember_ground.sh
set -u
source tools/device_env.sh
START=$SECONDS
R="$OUT/res"; mkdir -p "$R"
[ -f build/gpu/CMakeCache.txt ] || cmake --preset gpu > "$R/configure.log" 2>&1
cmake --build --preset gpu -j 16 --target worldcast model_gpu_tests > "$R/build.log" 2>&1 \
  || { tail -40 "$R/build.log"; exit 1; }
echo "built at $((SECONDS - START)) s"
W=build/gpu/ui/cli/worldcast
M=assets/models/game-small-moves
CONFIG=${CONFIG:-$M/config.json}
summary() {  # summary FILE LABEL: one line of the eval JSON's numbers
  python3 tools/eval_summary.py "$1" "$2"
}
if [ "${PHASE:-A}" = A ]; then
  bin=$(find build/gpu -name model_gpu_tests -type f -perm -u+x | head -1)
  timeout 120 "$bin" --gtest_brief=1 > "$R/model_gpu_tests.log" 2>&1
  echo "model_gpu_tests exit $?"; tail -4 "$R/model_gpu_tests.log"
fi
if [ "${PHASE:-A}" != B ]; then
  for seed in ${SEEDS:-1000000 1000001 1000002 1000003 1000004}; do
    [ $((SECONDS - START)) -gt ${STAB_LIMIT:-530} ] && { echo "skip $seed: time"; continue; }
    $W eval --device cuda --weights $M --config $CONFIG --seeds 1 --seed-start "$seed" --metrics stability \
      --remember-ground on --frames-dir "$R/frames_$seed" --json "$R/stability_on_$seed.json" \
      > "$R/stability_on_$seed.log" 2>&1
    summary "$R/stability_on_$seed.json" "on $seed"
  done
fi
if [ "${PHASE:-A}" = AB ]; then
  $W eval --device cuda --weights $M --config $CONFIG --seeds 8 \
    --metrics responsiveness,idle,memory --responsiveness-frames 64 --remember-ground on \
    --json "$R/eval_on.json" > "$R/eval_on.log" 2>&1
  summary "$R/eval_on.json" "on"
  $W eval --device cuda --weights $M --config $CONFIG --seeds 8 --metrics policies \
    --policy-frames 48 --remember-ground on --json "$R/policies_on.json" > "$R/policies_on.log" 2>&1
  tail -12 "$R/policies_on.log"
fi
if [ "${PHASE:-A}" = B ]; then
  for mem in on off; do
    $W eval --device cuda --weights $M --config $CONFIG --seeds 8 --metrics responsiveness,idle,memory \
      --responsiveness-frames 64 --remember-ground $mem --json "$R/eval_$mem.json" \
      > "$R/eval_$mem.log" 2>&1
    summary "$R/eval_$mem.json" "$mem"
  done
  $W eval --device cuda --weights $M --config $CONFIG --seeds 8 --metrics policies --policy-frames 48 \
    --remember-ground on --json "$R/policies_on.json" > "$R/policies_on.log" 2>&1
  tail -12 "$R/policies_on.log"
  for mem in on off; do
    $W eval --device cuda --weights $M --config $CONFIG --seeds 1 --metrics speed --speed-frames 400 \
      --policies dense,headcast --remember-ground $mem --json "$R/speed_$mem.json" \
      > "$R/speed_$mem.log" 2>&1
    tail -8 "$R/speed_$mem.log"
  done
fi
(cd "$OUT" && tar -cf results.tar res && rm -rf res)
echo "done at $((SECONDS - START)) s"

#!/usr/bin/env bash
# Two play settings of the bundled model side by side on the GPU machine (such as Note [Patch
# snap] on and off), in passes that each fit one 10-minute device command:
#   PHASE=A: build worldcast and model_gpu_tests, run model_gpu_tests, then the 10 000-frame
#            stability run under ON on the seeds in SEEDS (idle probes kept as PNG).
#   PHASE=AB: A, then B (when both fit in ten minutes).
#   PHASE=B: under ON and OFF: responsiveness, idle fidelity and the return trip on 8 seeds; the
#            policies against dense under ON (8 seeds, 48 frames); the speed of dense and headcast
#            under each (400 frames, CUDA graphs on).
# Results come back as $OUT/results.tar (the device tool returns at most 8 files).
# Usage (device tool, carry .gpu-deps): PHASE=A ON="--patch-snap on" OFF="--patch-snap off"
# [SEEDS="1000000 1000001"] [CONFIG=FILE] bash tools/gpu_compare.sh
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
ON=${ON:-}
OFF=${OFF:-}
eval_as() {  # eval_as LABEL FLAGS EVAL-ARGS...: one eval, its log and JSON kept, one line printed
  local label=$1 flags=$2; shift 2
  $W eval --device cuda --weights $M --config $CONFIG $flags "$@" --json "$R/$label.json" \
    > "$R/$label.log" 2>&1 || { echo "$label failed:"; tail -5 "$R/$label.log"; return; }
  python3 tools/eval_summary.py "$R/$label.json" "$label"
}
if [ "${PHASE:-A}" != B ]; then
  bin=$(find build/gpu -name model_gpu_tests -type f -perm -u+x | head -1)
  timeout 120 "$bin" --gtest_brief=1 > "$R/model_gpu_tests.log" 2>&1
  echo "model_gpu_tests exit $?"; tail -4 "$R/model_gpu_tests.log"
  for seed in ${SEEDS:-1000000 1000001 1000002 1000003 1000004}; do
    [ $((SECONDS - START)) -gt ${STAB_LIMIT:-530} ] && { echo "skip $seed: time"; continue; }
    eval_as "stability_$seed" "$ON" --seeds 1 --seed-start "$seed" --metrics stability \
      --frames-dir "$R/frames_$seed"
  done
fi
if [ "${PHASE:-A}" != A ]; then
  eval_as eval_on "$ON" --seeds 8 --metrics responsiveness,idle,memory --responsiveness-frames 64
  eval_as eval_off "$OFF" --seeds 8 --metrics responsiveness,idle,memory --responsiveness-frames 64
  eval_as policies_on "$ON" --seeds 8 --metrics policies --policy-frames 48
  tail -12 "$R/policies_on.log"
  for side in on off; do
    flags=$ON; [ $side = off ] && flags=$OFF
    $W eval --device cuda --weights $M --config $CONFIG $flags --seeds 1 --metrics speed \
      --speed-frames 400 --policies dense,headcast --json "$R/speed_$side.json" > "$R/speed_$side.log" 2>&1
    tail -8 "$R/speed_$side.log"
  done
fi
(cd "$OUT" && tar -cf results.tar res && rm -rf res)
echo "done at $((SECONDS - START)) s"

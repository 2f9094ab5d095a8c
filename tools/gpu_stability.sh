#!/usr/bin/env bash
# The 10 000-frame stability run on the GPU machine, on several seeds, with both idle probes
# (generated and true frames) kept as PNG, so one can see what the model's world looks like at
# the end and where its idle frames move. Results come back as $OUT/results.tar (the device tool
# returns at most 8 files).
# Usage (device tool, carry .gpu-deps): [SEEDS="1000000 1000001"] [CONFIG=FILE] [WEIGHTS=DIR]
# [EXTRA="--policy headcast"] bash tools/gpu_stability.sh
set -u
source tools/device_env.sh
START=$SECONDS
R="$OUT/res"; mkdir -p "$R"
if [ ! -x build/gpu/ui/cli/worldcast ]; then
  cmake --preset gpu > "$R/configure.log" 2>&1
  cmake --build --preset gpu -j 16 --target worldcast > "$R/build.log" 2>&1 || { tail -40 "$R/build.log"; exit 1; }
fi
echo "built at $((SECONDS - START)) s"
W=build/gpu/ui/cli/worldcast
WEIGHTS=${WEIGHTS:-assets/models/game-tokens}
CONFIG=${CONFIG:-$WEIGHTS/config.json}
for seed in ${SEEDS:-1000000 1000001 1000002 1000003 1000004}; do
  [ $((SECONDS - START)) -gt 540 ] && { echo "skip $seed: time"; continue; }
  $W eval --device cuda --weights "$WEIGHTS" --config "$CONFIG" --seeds 1 --seed-start "$seed" \
    --metrics stability ${EXTRA:-} --frames-dir "$R/frames_$seed" --json "$R/stability_$seed.json" \
    > "$R/stability_$seed.log" 2>&1
  python3 -c "import json;s=json.load(open('$R/stability_$seed.json'))['stability'];print($seed, 'start', round(s['idle_self_psnr_start_db'],2), 'end', round(s['idle_self_psnr_end_db'],2), 'delta', round(s['delta_db'],2), 'detail', round(s['detail_ratio'],2))"
done
(cd "$OUT" && tar -cf results.tar res && rm -rf res)
echo "done at $((SECONDS - START)) s"

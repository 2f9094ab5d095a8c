#!/usr/bin/env bash
# Overlay repair on the GPU machine (Note [Overlay repair]): train uncovered-finish's network on
# history whose sprite and HUD carry play's damage, then measure it like any candidate
# (responsiveness, idle fidelity, return trip on 8 seeds), the stability run on SEEDS with its
# probes, and the 400-frame random walk of the stability diagnosis as PNGs for this model and for
# the one it started from. The paint rows are grown and trained afterwards by tools/gpu_new_ground.sh
# (INIT=<this run's model>). Results come back as $OUT/results.tar next to the exported model
# (the device tool returns at most 8 files).
# Usage (device tool, carry .gpu-deps and the INIT folder): INIT=DIR [TRAIN_MIN=4.6]
# [TRAIN_CONFIG=assets/train/game-small-moves-repair.json]
# [SEEDS="1000000 1000001"] bash tools/gpu_repair.sh, where DIR holds uncovered-finish (commit
# 05de873's assets/models/game-small-moves; tools/gpu_new_ground.sh says how to get it).
set -u
source tools/device_env.sh
START=$SECONDS
R="$OUT/res"; mkdir -p "$R"
if [ ! -x build/gpu/ui/cli/worldcast ]; then
  cmake --preset gpu > "$R/configure.log" 2>&1
  cmake --build --preset gpu -j 16 --target worldcast > "$R/build.log" 2>&1 || { tail -40 "$R/build.log"; exit 1; }
fi
cmake --build --preset gpu -j 16 --target worldcast > "$R/build_incremental.log" 2>&1 || { tail -40 "$R/build_incremental.log"; exit 1; }
echo "built at $((SECONDS - START)) s"
W=build/gpu/ui/cli/worldcast
INIT=${INIT:?the uncovered-finish model folder}
$W train --config ${TRAIN_CONFIG:-assets/train/game-small-moves-repair.json} --out run/repair --device cuda --minutes ${TRAIN_MIN:-4.6} --quiet --init "$INIT" > "$R/train.log" 2>&1
echo "trained at $((SECONDS - START)) s"; tail -1 run/repair/log.jsonl
cp run/repair/log.jsonl "$R/repair.log.jsonl"; cp run/repair/model/*.safetensors run/repair/model/*.json "$OUT/"
M=run/repair/model
$W eval --device cuda --weights $M --seeds 8 --metrics responsiveness,idle,memory --responsiveness-frames 64 --json "$R/eval_repair.json" > "$R/eval_repair.log" 2>&1
python3 -c "import json;d=json.load(open('$R/eval_repair.json'));r=d['responsiveness'];print('repair', round(r['share'],4), 'late', round(r['late_share'],3), 'idle', round(d['idle']['psnr_db'],2), 'mem', round(d['memory']['psnr_db'],2), 'detail', round(r['early_detail_ratio'],2), round(r['late_detail_ratio'],2))"
for w in "repair:$M" "init:$INIT"; do
  IFS=: read name dir <<< "$w"
  $W play --headless --source model --device cuda --weights "$dir" --frames 400 --actions docs/models/game-small-moves-rand400.actions --png-every 20 --seed 1000001 --out "$R/rand400_$name" > /dev/null 2>&1
done
echo "walked at $((SECONDS - START)) s"
for seed in ${SEEDS:-1000000 1000001}; do
  [ $((SECONDS - START)) -gt 540 ] && { echo "skip $seed: time"; continue; }
  $W eval --device cuda --weights $M --seeds 1 --seed-start "$seed" --metrics stability \
    --frames-dir "$R/frames_$seed" --json "$R/stability_$seed.json" > "$R/stability_$seed.log" 2>&1
  python3 -c "import json;s=json.load(open('$R/stability_$seed.json'))['stability'];print($seed, 'start', round(s['idle_self_psnr_start_db'],2), 'end', round(s['idle_self_psnr_end_db'],2), 'delta', round(s['delta_db'],2), 'detail', round(s['detail_ratio'],2), 'overlay', s['idle_change_in_overlays_start'], s['idle_change_in_overlays_end'])"
done
(cd "$OUT" && tar -cf results.tar res && rm -rf res)
echo "done at $((SECONDS - START)) s"

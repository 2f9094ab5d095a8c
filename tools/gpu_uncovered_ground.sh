#!/usr/bin/env bash
# Uncovered ground on the GPU machine (Note [Uncovered ground]): measure the bundled model playing
# with uncovered ground as new ground, as it is and after its paint rows are trained on the same
# pixels (`assets/train/game-small-moves-uncovered-ground.json`, from the bundled weights, no new
# rows). For each: responsiveness, idle fidelity and the return trip on 8 seeds,
# the 10 000-frame stability on the seeds in STAB_SEEDS with its probes as PNG, and a 48-frame
# walk. Everything comes back as $OUT/results.tar next to the trained model.
# The model GPU tests run first.
# Usage (device tool, carry .gpu-deps): [TRAIN_MIN=2.6] [STAB_SEEDS="1000000 1000001 1000004"]
# [RULE_SEEDS=""] (stability seeds of the untrained run) bash tools/gpu_uncovered_ground.sh
set -u
source tools/device_env.sh
START=$SECONDS
R="$OUT/res"; mkdir -p "$R" cfg
[ -d build/gpu ] || cmake --preset gpu > "$R/configure.log" 2>&1
cmake --build --preset gpu -j 16 --target worldcast model_gpu_tests > "$R/build.log" 2>&1 || { tail -40 "$R/build.log"; exit 1; }
echo "built at $((SECONDS - START)) s"
build/gpu/tests/gpu/model_gpu_tests > "$R/model_gpu_tests.log" 2>&1; tail -1 "$R/model_gpu_tests.log"
W=build/gpu/ui/cli/worldcast
printf 'right 12\nup 12\nleft 12\ndown 12\n' > walk48.actions
measure() {  # name weights config [stability seeds]
  local name=$1 weights=$2 config=$3 seeds=${4-${STAB_SEEDS:-1000000 1000001 1000004}}
  $W eval --device cuda --weights "$weights" --config "$config" --seeds 8 --metrics responsiveness,idle,memory --responsiveness-frames 64 --json "$R/eval_$name.json" > "$R/eval_$name.log" 2>&1
  python3 -c "import json;d=json.load(open('$R/eval_$name.json'));r=d['responsiveness'];print('$name', round(r['share'],4), 'idle', round(d['idle']['psnr_db'],2), 'mem', round(d['memory']['psnr_db'],2), 'detail', round(r['early_detail_ratio'],2), round(r['late_detail_ratio'],2))"
  $W play --headless --source model --device cuda --weights "$weights" --config "$config" --frames 48 --actions walk48.actions --png-every 4 --seed 1000001 --out "$R/w48_$name" > /dev/null 2>&1
  for seed in $seeds; do
    [ $((SECONDS - START)) -gt 545 ] && { echo "skip $name $seed: time"; continue; }
    $W eval --device cuda --weights "$weights" --config "$config" --seeds 1 --seed-start "$seed" --metrics stability --frames-dir "$R/frames_${name}_$seed" --json "$R/stability_${name}_$seed.json" > "$R/stability_${name}_$seed.log" 2>&1
    python3 -c "import json;s=json.load(open('$R/stability_${name}_$seed.json'))['stability'];print('$name', $seed, 'start', round(s['idle_self_psnr_start_db'],2), 'end', round(s['idle_self_psnr_end_db'],2), 'delta', round(s['delta_db'],2), 'detail', round(s['detail_ratio'],2))"
  done
  echo "$name measured at $((SECONDS - START)) s"
}
M=assets/models/game-small-moves
measure rule $M assets/configs/game-small-moves-uncovered-ground.json "${RULE_SEEDS-}"
$W train --config assets/train/game-small-moves-uncovered-ground.json --out run --device cuda --minutes ${TRAIN_MIN:-2.6} --quiet --init $M > "$R/train.log" 2>&1
echo "trained at $((SECONDS - START)) s"; tail -1 run/log.jsonl
cp run/log.jsonl "$R/uncovered_ground.log.jsonl"; cp run/model/*.safetensors run/model/*.json "$OUT/"
measure trained run/model run/model/config.json
(cd "$OUT" && tar -cf results.tar res && rm -rf res)
echo "done at $((SECONDS - START)) s"

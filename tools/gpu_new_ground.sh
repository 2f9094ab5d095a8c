#!/usr/bin/env bash
# New ground on the GPU machine: grow uncovered-finish's head by the paint logits, train only
# those rows for new ground (Note [New ground likelihood]), then measure play at several draw
# temperatures: responsiveness, idle fidelity and the return trip on 8 seeds, a 48-frame walk as
# PNGs, and for the temperatures in DEEP the policies against dense and the 10 000-frame
# stability. Everything comes back as $OUT/results.tar next to the exported model (the device
# tool returns at most 8 files).
# Usage (device tool, carry .gpu-deps): INIT=DIR [TRAIN_MIN=3.8] [VARIANTS="name:floor:temperature
# ..."] [DEEP="name ..."] bash tools/gpu_new_ground.sh, where DIR holds uncovered-finish, the
# weights the bundled ones grew from (commit 05de873's assets/models/game-small-moves: `mkdir
# uncovered-finish && for f in config.json model.safetensors.index.json
# model-00001-of-00001.safetensors; do git show 05de873:assets/models/game-small-moves/$f >
# uncovered-finish/$f; done`).
set -u
source tools/device_env.sh
START=$SECONDS
R="$OUT/res"; mkdir -p "$R" cfg
if [ ! -x build/gpu/ui/cli/worldcast ]; then
  cmake --preset gpu > "$R/configure.log" 2>&1
  cmake --build --preset gpu -j 16 --target worldcast > "$R/build.log" 2>&1 || { tail -40 "$R/build.log"; exit 1; }
fi
echo "built at $((SECONDS - START)) s"
W=build/gpu/ui/cli/worldcast
$W train --config assets/train/game-small-moves-new-ground.json --out run --device cuda --minutes ${TRAIN_MIN:-4.5} --quiet --init "${INIT:?the uncovered-finish model folder}" --grow-head > "$R/train.log" 2>&1
echo "trained at $((SECONDS - START)) s"; tail -1 run/log.jsonl
cp run/log.jsonl "$R/new_ground.log.jsonl"; cp run/model/*.safetensors run/model/*.json "$OUT/"
printf 'right 12\nup 12\nleft 12\ndown 12\n' > walk48.actions
for v in ${VARIANTS:-"t06:0:0.6" "t05:0:0.5" "t04:0:0.4" "t03:0:0.3"}; do
  IFS=: read name floor temp <<< "$v"
  python3 - "$name" "$floor" "$temp" <<'PY'
import json,sys
c=json.load(open('run/model/config.json'))
c['prediction']['choice_floor']=float(sys.argv[2]); c['prediction']['choice_temperature']=float(sys.argv[3])
json.dump(c,open('cfg/%s.json'%sys.argv[1],'w'),indent=1)
PY
  $W eval --device cuda --weights run/model --config cfg/$name.json --seeds 8 --metrics responsiveness,idle,memory --responsiveness-frames 64 --json "$R/eval_$name.json" > "$R/eval_$name.log" 2>&1
  python3 -c "import json;d=json.load(open('$R/eval_$name.json'));r=d['responsiveness'];print('$name', round(r['share'],4), 'late', round(r['late_share'],3), 'idle', round(d['idle']['psnr_db'],2), 'mem', round(d['memory']['psnr_db'],2), 'detail', round(r['early_detail_ratio'],2), round(r['late_detail_ratio'],2), 'blocked_still', round(r['blocked_still_share'],2))"
  $W play --headless --source model --device cuda --weights run/model --config cfg/$name.json --frames 48 --actions walk48.actions --png-every 4 --seed 1000001 --out "$R/w48_$name" > /dev/null 2>&1
done
for name in ${DEEP:-t05 t04}; do
  [ $((SECONDS - START)) -gt 470 ] && { echo "skip $name: time"; continue; }
  $W eval --device cuda --weights run/model --config cfg/$name.json --seeds 8 --metrics policies --policy-frames 48 --json "$R/eval_policies_$name.json" > "$R/eval_policies_$name.log" 2>&1
  python3 -c "import json;d=json.load(open('$R/eval_policies_$name.json'));p=d['policies'];print('$name', [(r['policy'], round(r.get('psnr_db',0),2)) for r in p['rows']])" 2>&1 | tail -1
  $W eval --device cuda --weights run/model --config cfg/$name.json --seeds 1 --metrics stability --json "$R/eval_stability_$name.json" > "$R/eval_stability_$name.log" 2>&1
  python3 -c "import json;d=json.load(open('$R/eval_stability_$name.json'));s=d['stability'];print('$name', {k:v for k,v in s.items() if not isinstance(v,(list,dict))})" 2>&1 | tail -1
  echo "at $((SECONDS - START)) s"
done
(cd "$OUT" && tar -cf results.tar res && rm -rf res)
echo "done at $((SECONDS - START)) s"

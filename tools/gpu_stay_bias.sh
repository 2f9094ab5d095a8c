#!/usr/bin/env bash
# The stay bias on the GPU machine (Note [Stay bias]): the bundled model played with
# each bias in BIASES: responsiveness, idle fidelity and the return trip on 8 seeds, and the
# 10 000-frame stability on the seeds in STAB_SEEDS (probes as PNG). Results come back as
# $OUT/results.tar.
# Usage (device tool, carry .gpu-deps): [BIASES="0.5 1"] [STAB_SEEDS="1000000 1000001"]
# bash tools/gpu_stay_bias.sh
set -u
source tools/device_env.sh
START=$SECONDS
R="$OUT/res"; mkdir -p "$R" cfg
[ -d build/gpu ] || cmake --preset gpu > "$R/configure.log" 2>&1
cmake --build --preset gpu -j 16 --target worldcast > "$R/build.log" 2>&1 || { tail -40 "$R/build.log"; exit 1; }
echo "built at $((SECONDS - START)) s"
W=build/gpu/ui/cli/worldcast
M=assets/models/game-small-moves
for b in ${BIASES:-0.5 1}; do
  python3 - "$b" <<'PY'
import json, sys
c = json.load(open('assets/models/game-small-moves/config.json'))
c['prediction']['stay_bias'] = float(sys.argv[1])
json.dump(c, open('cfg/b%s.json' % sys.argv[1], 'w'), indent=1)
PY
  $W eval --device cuda --weights $M --config cfg/b$b.json --seeds 8 --metrics responsiveness,idle,memory --responsiveness-frames 64 --json "$R/eval_b$b.json" > "$R/eval_b$b.log" 2>&1
  python3 -c "import json;d=json.load(open('$R/eval_b$b.json'));r=d['responsiveness'];print('b $b', round(r['share'],4), 'idle', round(d['idle']['psnr_db'],2), 'mem', round(d['memory']['psnr_db'],2), 'detail', round(r['early_detail_ratio'],2), round(r['late_detail_ratio'],2))"
  for seed in ${STAB_SEEDS:-1000000 1000001}; do
    [ $((SECONDS - START)) -gt 540 ] && { echo "skip $b $seed: time"; continue; }
    $W eval --device cuda --weights $M --config cfg/b$b.json --seeds 1 --seed-start "$seed" --metrics stability --frames-dir "$R/frames_b${b}_$seed" --json "$R/stability_b${b}_$seed.json" > "$R/stability_b${b}_$seed.log" 2>&1
    python3 -c "import json;s=json.load(open('$R/stability_b${b}_$seed.json'))['stability'];print('b $b', $seed, 'start', round(s['idle_self_psnr_start_db'],2), 'end', round(s['idle_self_psnr_end_db'],2), 'delta', round(s['delta_db'],2), 'detail', round(s['detail_ratio'],2), 'overlays', s['idle_change_in_overlays_start'], s['idle_change_in_overlays_end'])"
  done
  echo "b $b at $((SECONDS - START)) s"
done
(cd "$OUT" && tar -cf results.tar res && rm -rf res)
echo "done at $((SECONDS - START)) s"

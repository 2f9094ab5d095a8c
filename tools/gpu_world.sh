#!/usr/bin/env bash
# The world metric (Note [World content]) of a token model under several play settings on the GPU
# machine, 8 held-out seeds each, in one device command: builds worldcast when it is not built,
# then one `worldcast eval --metrics world` per line of RUNS ("LABEL [WEIGHTS=DIR] FLAGS...", flags
# as eval takes them), each JSON and log in $OUT/res (packed into $OUT/world.tar after each run)
# and one summary line printed.
# Usage (device tool, carry .gpu-deps and, for other weights, their folder):
#   RUNS=$'dense_w7 --window 7\nheadcast_w32 --policy headcast --window 32' \
#   [WEIGHTS=DIR] [SEEDS=8] bash tools/gpu_world.sh
set -u
source tools/device_env.sh
START=$SECONDS
R="$OUT/res"
mkdir -p "$R"
if [ ! -x build/gpu/ui/cli/worldcast ]; then
  [ -f build/gpu/CMakeCache.txt ] || cmake --preset gpu > "$R/configure.log" 2>&1
  cmake --build --preset gpu -j 16 --target worldcast > "$R/build.log" 2>&1 ||
    { tail -40 "$R/build.log"; exit 1; }
fi
echo "built at $((SECONDS - START)) s"
W=build/gpu/ui/cli/worldcast
while read -r label flags; do
  [ -z "$label" ] && continue
  weights=${WEIGHTS:-assets/models/game-tokens}
  case $flags in WEIGHTS=*) weights=${flags%% *}; weights=${weights#WEIGHTS=}; flags=${flags#* } ;; esac
  seeds=(--seeds "${SEEDS:-8}")
  case " $flags " in *" --seeds "*) seeds=() ;; esac  # a line's own count wins
  # shellcheck disable=SC2086  # the flags are words
  $W eval --device cuda --weights "$weights" "${seeds[@]}" \
    --metrics world --quiet $flags --json "$R/$label.json" > "$R/$label.log" 2>&1 ||
    { echo "$label failed:"; tail -5 "$R/$label.log"; continue; }
  python3 tools/eval_summary.py "$R/$label.json" "$label"
  echo "  at $((SECONDS - START)) s"
  tar -cf "$OUT/world.tar" -C "$R" .  # after every run: a command cut short keeps what it did
done <<< "${RUNS:-dense_w7 --window 7}"

#!/bin/sh
# Note [Memory budget] end to end: a giant but valid model config (hidden 65 536, 1 024 layers,
# MLP 2^20) is refused by `play` and by `train` before anything is allocated, in one line naming
# the file and the memory it needs, with no backtrace, "internal error" or output folder.
# Usage: cli_memory_budget.sh WORLDCAST SOURCE_DIR WORK_DIR
set -u
worldcast=$1 src=$2 work=$3
rm -rf "$work" && mkdir -p "$work" || exit 1
sed -e 's/"hidden": 192/"hidden": 65536/' -e 's/"layers": 8/"layers": 1024/' \
    -e 's/"heads": 4/"heads": 512/' -e 's/"head_dim": 48/"head_dim": 128/' \
    -e 's/"mlp": 768/"mlp": 1048576/' "$src/assets/configs/game-small.json" > "$work/giant.json"
sed -e "s|\"model_config\": \"[^\"]*\"|\"model_config\": \"$work/giant.json\"|" \
    "$src/assets/train/game-small.json" > "$work/train.json"
grep -q '"hidden": 65536' "$work/giant.json" && grep -q "$work/giant.json" "$work/train.json" ||
  { echo "could not write the giant config"; exit 1; }
check() {
  name=$1 out=$2 rc=$3 dir=$4
  if [ "$rc" -eq 0 ] || [ "$rc" -eq 124 ]; then echo "$name: not refused (rc $rc): $out"; exit 1; fi
  echo "$out" | grep -q 'giant.json: needs [0-9.]* [GT]B' || { echo "$name: no need named: $out"; exit 1; }
  echo "$out" | grep -qi 'internal error\|backtrace\|c10::' && { echo "$name: $out"; exit 1; }
  [ "$(echo "$out" | grep -vc '^\[worldcast info\]')" -eq 1 ] || { echo "$name: not one line: $out"; exit 1; }
  [ -e "$dir" ] && { echo "$name: left $dir behind"; exit 1; }
  return 0
}
out=$(timeout 20 "$worldcast" play --headless --source model --config "$work/giant.json" \
  --device cpu --frames 2 --out "$work/play" 2>&1)
check play "$out" $? "$work/play/frame_000000.png"
out=$(timeout 20 "$worldcast" train --config "$work/train.json" --out "$work/run" --device cpu 2>&1)
check train "$out" $? "$work/run/state"
echo "both refused"

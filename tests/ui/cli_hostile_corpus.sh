#!/bin/sh
# The hostile corpus (tests/data/hostile, listed in its expect.tsv): every model config, action
# script and checkpoint there is refused by the command a user would give it, with exit status 1
# (not a signal, a timeout or the internal-error status 2), in one error line that names the file
# and says the expected words, with no "internal error", backtrace or raw control character, and
# nothing left in the output folder. Its saved states are the rollout tests' (a state loads only
# into a session, through the plugin): SessionTest.HostileStateCorpusIsRefusedByFileAndField.
# Usage: cli_hostile_corpus.sh WORLDCAST SOURCE_DIR WORK_DIR
set -u
worldcast=$1 src=$2 work=$3
corpus="$src/tests/data/hostile"
rm -rf "$work" && mkdir -p "$work" || exit 1
tab=$(printf '\t')
failures=0 cases=0
while IFS="$tab" read -r kind path expect; do
  case $kind in ''|'#'*|state) continue ;; esac
  file="$corpus/$path"
  out_dir="$work/out"
  rm -rf "$out_dir"
  case $kind in
    config) out=$(timeout 30 "$worldcast" play --headless --source model --config "$file" \
                    --device cpu --frames 1 --out "$out_dir" 2>&1) ;;
    actions) out=$(timeout 30 "$worldcast" play --headless --source game --actions "$file" \
                     --frames 3 --out "$out_dir" 2>&1) ;;
    checkpoint) out=$(timeout 30 "$worldcast" inspect --check-finite "$file" 2>&1) ;;
    *) echo "expect.tsv: unknown kind '$kind'"; exit 1 ;;
  esac
  rc=$?
  cases=$((cases + 1))
  said=$(printf '%s\n' "$out" | grep -v '^\[worldcast info\]')
  why=""
  if [ "$rc" -ne 1 ]; then
    why="exit status $rc"
  elif [ "$(printf '%s\n' "$said" | wc -l)" -ne 1 ]; then
    why="not one line"
  elif ! printf '%s' "$said" | grep -qF "$file"; then
    why="the file is not named"
  elif ! printf '%s' "$said" | grep -qF -- "$expect"; then
    why="'$expect' not said"
  elif printf '%s' "$said" | grep -qi 'internal error\|backtrace\|c10::\|terminate'; then
    why="an internal error"
  elif printf '%s' "$said" | LC_ALL=C grep -q "$(printf '[\001-\010\013-\037\177]')"; then
    why="a raw control character"
  elif [ -n "$(ls -A "$out_dir" 2>/dev/null)" ]; then
    why="left files in the output folder"
  fi
  if [ -n "$why" ]; then
    failures=$((failures + 1))
    echo "FAIL $kind $path: $why:"
    printf '%s\n' "$out" | sed 's/^/  /' | cut -c1-300
  fi
done < "$corpus/expect.tsv"
echo "$cases hostile inputs, $failures not refused as they should be"
[ "$cases" -ge 80 ] && [ "$failures" -eq 0 ]

#!/bin/sh
# Fails, listing them, where a source file includes a header of a higher layer. The layers, lowest
# first: engine/core, engine/game, engine/attention, engine/model, engine/rollout, bench,
# engine/eval, engine/train, then ui and plugin. A file may include its own layer and those below.
# Usage: tools/check_layers.sh [ROOT] (default: the repository this script is in).
root="${1:-$(dirname "$0")/..}"
cd "$root" || exit 2
find engine bench ui plugin -type f \( -name '*.cpp' -o -name '*.h' -o -name '*.cu' \) | sort |
  xargs awk '
    function rank(path) {
      if (path ~ /^engine\/core\//) return 0
      if (path ~ /^engine\/game\//) return 1
      if (path ~ /^engine\/attention\//) return 2
      if (path ~ /^engine\/model\//) return 3
      if (path ~ /^engine\/rollout\//) return 4
      if (path ~ /^bench\//) return 5
      if (path ~ /^engine\/eval\//) return 6
      if (path ~ /^engine\/train\//) return 7
      if (path ~ /^(ui|plugin)\//) return 8
      return -1
    }
    /^#include "/ {
      header = $2
      gsub(/"/, "", header)
      if (rank(header) > rank(FILENAME)) {
        print FILENAME ": includes " header ", a higher layer"
        bad++
      }
    }
    END { exit bad > 0 }'

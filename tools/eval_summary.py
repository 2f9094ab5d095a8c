#!/usr/bin/env python3
"""One line of an eval JSON's headline numbers: eval_summary.py FILE LABEL (device scripts)."""
import json
import sys

d = json.load(open(sys.argv[1]))
out = [sys.argv[2]]
if 'responsiveness' in d:
    out += ['resp', round(d['responsiveness']['share'], 4)]
if 'idle' in d:
    out += ['idle', round(d['idle']['psnr_db'], 2)]
if 'memory' in d:
    out += ['mem', round(d['memory']['psnr_db'], 2)]
if 'stability' in d:
    s = d['stability']
    out += ['start', round(s['idle_self_psnr_start_db'], 2), 'end', round(s['idle_self_psnr_end_db'], 2),
            'delta', round(s['delta_db'], 2), 'detail', round(s['detail_ratio'], 2),
            'sprite', s.get('sprite_psnr_vs_truth_start_db'), s.get('sprite_psnr_vs_truth_end_db')]
print(*out)

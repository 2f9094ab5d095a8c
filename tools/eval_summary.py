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
if 'world' in d:
    w = d['world']
    def r(key, digits=3, within=None):
        v = (w if within is None else w.get(within) or {}).get(key)
        return None if v is None else round(v, digits)
    band = (w.get('game_mix') or {}).get('band') or {}
    out += ['mix_tv', r('terrain_mix_tv'), 'mix_ratio', r('terrain_mix_ratio', 2),
            'game_band_tv', None if 'tv_max' not in band else round(band['tv_max'], 3),
            'tv', r('terrain_tv'), 'other_tv', r('terrain_tv', within='another_world'),
            'ratio', r('non_grass_ratio', 2), 'structure', r('structure_share'),
            'sprite', r('sprite_share'), 'hud', r('hud_share'), 'own_walls', r('own_blocked_still_share'),
            'own_free', r('own_free_scrolled_share'), 'game_walls', r('blocked_still_share'),
            'scrolled', r('walk_scrolled_share'), 'return', r('return_patch_share'),
            'return_all', r('return_all_patch_share')]
    # Note [Ground flow]: the model's edge and carried ground against the game's; Note [Structure
    # flow]: where its broken blocks are made.
    flow = w.get('ground_flow') or {}
    sflow = w.get('structure_flow') or {}
    def f(within, key):
        v = within.get(key)
        return None if v is None else round(v, 3)
    if flow:
        out += ['invented', f(flow, 'invented_non_grass_share'), 'game_invented',
                f(flow, 'truth_invented_non_grass_share'), 'kept', f(flow, 'kept_ground_share'),
                'game_kept', f(flow, 'truth_kept_ground_share')]
    if sflow:
        out += ['edge_whole', f(sflow, 'edge_structure_share'), 'edge_first_half',
                f(sflow, 'edge_broken_first_half_share'), 'carried_broken',
                f(sflow, 'carried_broken_per_step'), 'carried_made',
                f(sflow, 'carried_broken_made_per_step')]
print(*out)

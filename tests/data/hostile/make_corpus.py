# Writes the hostile corpus of tests/data/hostile (configs, action scripts, checkpoints, saved
# states), each input broken in one way; expect.tsv lists what its refusal must say (reviewed by hand).
#   python3 tests/data/hostile/make_corpus.py tests/data/hostile
import json, os, struct, shutil, sys
root = sys.argv[1]
for sub in ('configs', 'actions', 'checkpoints'):
    shutil.rmtree(os.path.join(root, sub), ignore_errors=True)
C = os.path.join(root, 'configs'); A = os.path.join(root, 'actions'); K = os.path.join(root, 'checkpoints')
for d in (C, A, K): os.makedirs(d)
base = {"name": "hostile", "description": "a tiny valid config the corpus breaks one field at a time",
        "channels": 3, "frame": {"height": 32, "width": 32}, "resolutions": {}, "video_frames_per_frame": 1,
        "autoencoder": None, "patch": [1, 8, 8], "frames_per_block": 1, "hidden": 64, "layers": 2,
        "heads": 2, "head_dim": 32, "mlp": 128, "num_actions": 6, "freq_dim": 32, "norm_eps": 1e-6,
        "rope_theta": 10000.0, "sampler": {"steps": 2, "shift": 1.0, "context_noise": 0.0}}
def dump(o): return json.dumps(o, indent=2)
def cfg(name, text):
    with open(os.path.join(C, name + '.json'), 'w' if isinstance(text, str) else 'wb') as f: f.write(text)
def edit(name, **kw):
    c = json.loads(json.dumps(base))
    for k, v in kw.items():
        if v is DEL: del c[k]
        else: c[k] = v
    cfg(name, dump(c))
DEL = object()
def raw_edit(name, old, new):
    t = dump(base); assert old in t, old; cfg(name, t.replace(old, new, 1))
# a small valid codebook of 2x... patch 8 needs 64 letters per entry
book = "worldcast codebook 1\npatch 8 colours 2 entries 3\ncolours #62b24a #2e66cc\n" + "a"*64 + "\n" + "b"*64 + "\n" + "ab"*32 + "\n"
open(os.path.join(C, 'book.txt'), 'w').write(book)
open(os.path.join(C, 'book_truncated.txt'), 'w').write(book[:len(book)//2])
open(os.path.join(C, 'book_bad_letter.txt'), 'w').write(book.replace("ab"*32, "az"*32))
open(os.path.join(C, 'book_repeated.txt'), 'w').write(book.replace("ab"*32, "a"*64))
tok = lambda **kw: dict({"codebook": "book.txt", "vocab": 3, "passes": 2}, **kw)
cfg('not_json', '{"hidden": 64,')
cfg('empty', '')
cfg('top_level_array', '[1, 2, 3]')
raw_edit('hidden_overflow', '"hidden": 64', '"hidden": 1e400')
edit('hidden_negative', hidden=-64)
edit('hidden_fraction', hidden=64.5)
edit('hidden_string', hidden="64")
raw_edit('hidden_beyond_uint64', '"hidden": 64', '"hidden": 18446744073709551616')
edit('layers_zero', layers=0)
edit('heads_do_not_make_hidden', heads=3)
raw_edit('duplicate_key', '"hidden": 64,', '"hidden": 64,\n  "hidden": 128,')
edit('unknown_key', hiden=64)
edit('missing_layers', layers=DEL)
edit('frame_not_patch_multiple', frame={"height": 30, "width": 32})
edit('patch_two_numbers', patch=[8, 8])
edit('frame_zero', frame={"height": 0, "width": 32})
edit('frame_huge', frame={"height": 1000000000, "width": 1000000000})
edit('frame_a_string', frame="128x128")
edit('sampler_steps_zero', sampler={"steps": 0, "shift": 1.0, "context_noise": 0.0})
raw_edit('sampler_shift_nan', '"shift": 1.0', '"shift": NaN')
edit('sampler_a_number', sampler=3)
edit('num_actions_zero', num_actions=0)
edit('rope_theta_negative', rope_theta=-1.0)
raw_edit('norm_eps_infinite', '"norm_eps": 1e-06', '"norm_eps": 1e999')
edit('channels_zero', channels=0)
edit('frames_per_block_zero', frames_per_block=0)
edit('resolution_empty', resolutions={"wide": {"height": 0, "width": 32}})
edit('prediction_unknown', prediction={"reference": "future", "spread": 0.5})
edit('policies_window_negative', policies={"dense": {"window": -5}})
edit('policies_unknown_policy', policies={"sparse_magic": {"window": 4}})
edit('tokens_codebook_dev_zero', tokens=tok(codebook="/dev/zero"))
edit('tokens_codebook_outside', tokens=tok(codebook="../" * 40 + "etc/passwd"))
edit('tokens_codebook_missing', tokens=tok(codebook="nowhere.txt"))
edit('tokens_vocab_differs', tokens=tok(vocab=4))
edit('tokens_codebook_truncated', tokens=tok(codebook="book_truncated.txt"))
edit('tokens_codebook_bad_letter', tokens=tok(codebook="book_bad_letter.txt"))
edit('tokens_codebook_repeated_entry', tokens=tok(codebook="book_repeated.txt"))
edit('tokens_passes_zero', tokens=tok(passes=0))
edit('tokens_temperature_negative', tokens=tok(temperature=-1.0))
edit('tokens_codebook_a_folder', tokens=tok(codebook="."))
edit('tile_quarters_on_pixels', tile_quarters=[1, 1])
edit('tile_quarters_out_of_range', tokens=tok(), tile_quarters=[2, 0])
edit('tile_quarters_one_number', tokens=tok(), tile_quarters=[1])
raw_edit('escape_in_string', '"hostile"', '"\x1b]0;pwned\x07\x1b[2J"')
edit('escape_in_key', **{"\x1b[2Jhidden": 64})
cfg('invalid_utf8', dump(base).replace('"hostile"', '"host\udcffile"').encode('utf-8', 'surrogateescape'))
cfg('deep_nesting', '{"sampler": ' + '[' * 200000 + ']' * 200000 + '}')
edit('giant_but_valid', hidden=65536, layers=1024, heads=512, head_dim=128, mlp=1048576)

# action scripts
def act(name, data):
    with open(os.path.join(A, name + '.txt'), 'wb') as f: f.write(data if isinstance(data, bytes) else data.encode())
act('unknown_action', 'right 3\njump 2\n')
act('count_zero', 'up 0\n')
act('count_negative', 'up -1\n')
act('count_too_large', 'left 1000001\n')
act('count_exponent', 'left 1e3\n')
act('count_beyond_uint64', 'down 99999999999999999999999\n')
act('count_with_letters', 'right 12abc\n')
act('extra_token', 'right 2 3\n')
act('nul_byte', b'right 2\nup\x00 1\n')
act('invalid_utf8', b'right 2\nup \xff\xfe\n')
act('overlong_utf8', b'\xc0\xafright\n')
act('surrogate_utf8', b'right\n\xed\xa0\x80 2\n')
act('terminal_escape', 'right\n\x1b[2J\x1b]0;pwned\x07 1\n')
act('too_many_actions', 'right 1000000\n' * 11)
act('png_bytes', b'\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR' + bytes(range(256)))
act('long_token', 'r' * 100000 + '\n')
act('count_only', '  12\n')
act('empty_count_after_name', 'left \t x\n')
act('comment_then_garbage', '# fine\nright # fine\nright, left\n')
act('cyrillic_lookalike', 'r\u0456ght 2\n')

# checkpoints
def st(name, header, data=b'', length=None, raw_header=None):
    h = raw_header if raw_header is not None else json.dumps(header).encode()
    n = len(h) if length is None else length
    with open(os.path.join(K, name + '.safetensors'), 'wb') as f: f.write(struct.pack('<Q', n) + h + data)
w = lambda dtype, shape, a, b: {"dtype": dtype, "shape": shape, "data_offsets": [a, b]}
with open(os.path.join(K, 'too_short.safetensors'), 'wb') as f: f.write(b'\x01\x02\x03')
st('header_length_huge', {}, length=1 << 63)
st('header_length_beyond_file', {"w": w("F32", [1], 0, 4)}, b'\0' * 4, length=4096)
st('header_not_json', None, raw_header=b'{"w": {"dtype": ')
st('header_an_array', None, raw_header=b'[1, 2, 3]')
st('dtype_unknown', {"w": w("F8", [1], 0, 1)}, b'\0')
st('shape_negative', {"w": w("F32", [-1], 0, 4)}, b'\0' * 4)
st('offsets_beyond_file', {"w": w("F32", [4], 0, 16)}, b'\0' * 8)
st('offsets_overlap', {"a": w("F32", [2], 0, 8), "b": w("F32", [2], 4, 12)}, b'\0' * 12)
st('offsets_leave_a_gap', {"a": w("F32", [1], 0, 4), "b": w("F32", [1], 8, 12)}, b'\0' * 12)
st('offsets_reversed', {"w": w("F32", [1], 4, 0)}, b'\0' * 4)
st('shape_disagrees_with_bytes', {"w": w("F32", [3], 0, 8)}, b'\0' * 8)
st('metadata_not_strings', {"__metadata__": {"config": {"hidden": 64}}, "w": w("F32", [1], 0, 4)}, b'\0' * 4)
st('duplicate_tensor', None, raw_header=b'{"w": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}, "w": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}}', data=b'\0' * 4)
st('nan_values', {"w": w("F32", [2], 0, 8)}, struct.pack('<2f', 1.0, float('nan')))
st('shape_overflow', {"w": w("F32", [1 << 40, 1 << 40], 0, 4)}, b'\0' * 4)
st('offset_number_overflow', None, raw_header=b'{"w": {"dtype": "F32", "shape": [1], "data_offsets": [0, 1e400]}}', data=b'\0' * 4)
def folder(name, index=None, index_raw=None, shards=()):
    d = os.path.join(K, name); os.makedirs(d)
    if index is not None or index_raw is not None:
        with open(os.path.join(d, 'model.safetensors.index.json'), 'wb') as f:
            f.write(index_raw if index_raw is not None else json.dumps(index).encode())
    for s in shards:
        h = json.dumps({"w": w("F32", [1], 0, 4)}).encode()
        with open(os.path.join(d, s), 'wb') as f: f.write(struct.pack('<Q', len(h)) + h + b'\0' * 4)
folder('index_shard_outside', {"metadata": {}, "weight_map": {"w": "../nan_values.safetensors"}})
folder('index_shard_missing', {"metadata": {}, "weight_map": {"w": "model-00001-of-00001.safetensors"}})
folder('index_not_json', index_raw=b'{"weight_map": ')
folder('index_weight_map_a_list', {"metadata": {}, "weight_map": ["model-00001-of-00001.safetensors"]}, shards=['model-00001-of-00001.safetensors'])
folder('index_names_a_tensor_its_shard_lacks', {"metadata": {}, "weight_map": {"w": "model-00001-of-00001.safetensors", "v": "model-00001-of-00001.safetensors"}}, shards=['model-00001-of-00001.safetensors'])
# Note [Inspect checks what play loads]: well-formed files whose tensors the config beside them
# (or in their metadata) does not describe.
def model_file(path, header):
    h = json.dumps(header).encode()
    with open(path, 'wb') as f: f.write(struct.pack('<Q', len(h)) + h + b'\0' * (64 * 32 * 4))
os.makedirs(os.path.join(K, 'config_beside_disagrees'))
open(os.path.join(K, 'config_beside_disagrees', 'config.json'), 'w').write(dump(base))
model_file(os.path.join(K, 'config_beside_disagrees', 'model.safetensors'),
           {"time_embed.fc1.weight": w("F32", [64, 32], 0, 64 * 32 * 4)})
model_file(os.path.join(K, 'metadata_config_disagrees.safetensors'),
           {"__metadata__": {"config": json.dumps(base)}, "time_embed.fc1.weight": w("F32", [32, 64], 0, 64 * 32 * 4)})

# saved states of a Session of tests/model/model_test_util.h's tiny config ("tiny", 16x16, one
# seed frame, the test policy "test_full_history"): two blocks played, their hashes zero
S = os.path.join(root, 'states')
shutil.rmtree(S, ignore_errors=True)
os.makedirs(S)
good_meta = {"format": "worldcast-session-state", "version": "2", "config": "tiny", "resolution": "16x16",
             "frames_per_block": "1", "seed_frames": "1", "policy": "test_full_history",
             "policy_settings": "{}", "seed": "3", "frame_index": "2"}
def state(name, meta=None, tensors=None, raw=None):
    if raw is not None:
        open(os.path.join(S, name + '.wcs'), 'wb').write(raw); return
    m = dict(good_meta); m.update(meta or {})
    m = {k: v for k, v in m.items() if v is not None}
    ts = tensors if tensors is not None else [("actions", "I64", [2, 1], [1, 3]), ("block_hashes", "I64", [2], [0, 0])]
    header = {"__metadata__": m}; data = b''
    for tname, dtype, shape, values in ts:
        blob = struct.pack('<%d%s' % (len(values), 'q' if dtype == 'I64' else 'f'), *values)
        header[tname] = {"dtype": dtype, "shape": shape, "data_offsets": [len(data), len(data) + len(blob)]}
        data += blob
    h = json.dumps(header).encode()
    open(os.path.join(S, name + '.wcs'), 'wb').write(struct.pack('<Q', len(h)) + h + data)
state('hashes_diverge')
good = open(os.path.join(S, 'hashes_diverge.wcs'), 'rb').read()
state('not_a_state', raw=b'right 3\nup\n')
state('truncated', raw=good[:len(good) // 2])
state('format_other', {"format": "something-else"})
state('version_unknown', {"version": "3"})
state('unknown_key', {"colour": "red"})
state('frame_index_missing', {"frame_index": None})
state('config_other', {"config": "game-small"})
state('resolution_no_x', {"resolution": "16"})
state('resolution_zero', {"resolution": "0x16"})
state('resolution_huge', {"resolution": "100000x16"})
state('frames_per_block_a_word', {"frames_per_block": "one"})
state('seed_frames_negative', {"seed_frames": "-1"})
state('policy_unknown', {"policy": "no-such-policy"})
state('policy_settings_not_json', {"policy_settings": "{oops"})
state('policy_settings_an_array', {"policy_settings": "[1]"})
state('policy_settings_overflow', {"policy_settings": '{"window": 1e400}'})
state('seed_negative', {"seed": "-1"})
state('seed_beyond_uint64', {"seed": "18446744073709551616"})
state('frame_index_mismatch', {"frame_index": "7"})
hashes = ("block_hashes", "I64", [2], [0, 0])
state('actions_f32', tensors=[("actions", "F32", [2, 1], [1.0, 3.0]), hashes])
state('actions_out_of_range', tensors=[("actions", "I64", [2, 1], [1, 9]), hashes])
state('actions_negative', tensors=[("actions", "I64", [2, 1], [-1, 3]), hashes])
state('actions_shape_wrong', tensors=[("actions", "I64", [1, 2], [1, 3]), hashes])
state('extra_tensor', tensors=[("actions", "I64", [2, 1], [1, 3]), hashes, ("more", "I64", [1], [5])])

/* clang-format off */
/* worldcast.h: the C ABI of libworldcast_plugin.so, for game engines that embed a neural world.
 * C99, fixed-width types, opaque handles, int32_t results. The guide: docs/plugin.md.
 * Laid out by hand for the engine developer who reads it (each code beside its meaning), so
 * clang-format leaves it alone. */
#ifndef WORLDCAST_WORLDCAST_H
#define WORLDCAST_WORLDCAST_H

#include <stddef.h>
#include <stdint.h>

#if defined(_WIN32)
#if defined(WORLDCAST_PLUGIN_BUILD)
#define WC_API __declspec(dllexport)
#else
#define WC_API __declspec(dllimport)
#endif
#else
#define WC_API __attribute__((visibility("default")))
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------------------------------
 * Versioning. The ABI only grows: functions are never removed or changed, structs only get new
 * fields at their end. Every struct starts with `struct_size`, which the caller sets to
 * sizeof(the struct) as its header declares it; the library reads and writes only the fields
 * that fit, so a host built against an older header keeps working with a newer library.
 * Zero-initialise structs before use: new fields mean "default" at zero.
 * ------------------------------------------------------------------------------------------ */
#define WC_MAKE_VERSION(major, minor, patch) \
  ((((uint32_t)(major)) << 22) | (((uint32_t)(minor)) << 12) | ((uint32_t)(patch)))
#define WC_VERSION_MAJOR(version) ((uint32_t)(version) >> 22)
#define WC_VERSION_MINOR(version) (((uint32_t)(version) >> 12) & 0x3ffu)
#define WC_VERSION_PATCH(version) ((uint32_t)(version) & 0xfffu)
#define WC_ABI_VERSION WC_MAKE_VERSION(1, 2, 0)

/* ---------------------------------------------------------------------------------------------
 * Results: 0 is success, > 0 a qualified success, < 0 an error. After an error, the message is
 * available from wc_session_last_error (for calls on a session) and wc_last_error (any call,
 * per calling thread). No C++ exception ever leaves the library.
 * ------------------------------------------------------------------------------------------ */
typedef int32_t wc_result;
#define WC_RESULT_OK 0
#define WC_RESULT_NOT_READY 1     /* nothing returned: every frame slot is held; release one */
#define WC_RESULT_FRAME_DROPPED 2 /* the frame was returned, but newer frames were produced
                                     since the previous get that the host never saw */
#define WC_RESULT_INCOMPLETE 3    /* an output array was too small; the rest was filled in */
#define WC_RESULT_ERROR_INVALID_ARGUMENT -1 /* null pointer, bad value, invalid JSON, unknown policy */
#define WC_RESULT_ERROR_INVALID_HANDLE -2   /* null, destroyed (stale) or wrong-type handle/token */
#define WC_RESULT_ERROR_OUT_OF_MEMORY -3
#define WC_RESULT_ERROR_UNSUPPORTED -4      /* not in this build or on this device */
#define WC_RESULT_ERROR_VERSION_MISMATCH -5 /* struct_size too small, or another ABI major */
#define WC_RESULT_ERROR_BAD_CHECKPOINT -6   /* weights, config or saved state missing/corrupt */
#define WC_RESULT_ERROR_DEVICE_LOST -7
#define WC_RESULT_ERROR_INTERNAL -8
#define WC_RESULT_ERROR_BUFFER_TOO_SMALL -9 /* a caller buffer cannot hold the output */
#define WC_RESULT_ERROR_IO -10              /* a file cannot be read or written */
#define WC_SUCCEEDED(result) ((result) >= 0)
#define WC_FAILED(result) ((result) < 0)

/* Opaque handles: 64-bit values the library checks on every call (a destroyed object's handle
 * is detected, never dereferenced). 0 is never a valid handle. */
typedef uint64_t wc_runtime;
typedef uint64_t wc_session;
#define WC_NULL_HANDLE 0

/* Actions of the reference game and the bundled model (one per frame). */
#define WC_ACTION_NONE 0
#define WC_ACTION_UP 1
#define WC_ACTION_DOWN 2
#define WC_ACTION_LEFT 3
#define WC_ACTION_RIGHT 4

/* Log levels for wc_runtime_desc.log. */
#define WC_LOG_DEBUG 0
#define WC_LOG_INFO 1
#define WC_LOG_WARNING 2
#define WC_LOG_ERROR 3

/* Called on the thread of the wc_* call that logs (the library starts no threads of its own).
 * `message` is valid during the call only. It must not call wc_* functions other than
 * wc_result_string and wc_abi_version. */
typedef void (*wc_log_fn)(void* user_data, int32_t level, const char* message);

/* wc_runtime_desc.device */
#define WC_DEVICE_AUTO 0 /* CUDA when built with it and a device is present, else CPU */
#define WC_DEVICE_CPU 1
#define WC_DEVICE_CUDA 2 /* WC_RESULT_ERROR_UNSUPPORTED in a CPU-only build */

/* wc_runtime_desc.flags */
#define WC_RUNTIME_FLAG_DEVICE_UUID 0x1u       /* device_uuid is set: use that GPU (CUDA and Vulkan) */
#define WC_RUNTIME_FLAG_VULKAN_VALIDATION 0x2u /* VK_LAYER_KHRONOS_validation on the plugin's
                                                  Vulkan device; errors are logged and counted */
#define WC_RUNTIME_FLAG_VULKAN_DEVICE_LOCAL 0x4u /* Vulkan frame memory in device-local memory,
                                                    filled by a copy on the plugin's queue */

typedef struct wc_runtime_desc {
  uint32_t struct_size; /* sizeof(wc_runtime_desc) */
  uint32_t abi_version; /* WC_ABI_VERSION of the header the host was built with */
  int32_t device;       /* WC_DEVICE_* */
  uint32_t flags;       /* WC_RUNTIME_FLAG_* */
  /* VkPhysicalDeviceIDProperties::deviceUUID (== cudaDeviceProp::uuid) of the GPU the host
   * renders with; the plugin's Vulkan device (and CUDA device) is the one with this UUID. */
  uint8_t device_uuid[16];
  wc_log_fn log; /* optional; NULL logs to stderr */
  void* log_user_data;
  int32_t log_level; /* the lowest WC_LOG_* level passed to `log`; WC_LOG_ERROR + 1 = none */
  uint32_t reserved0;
} wc_runtime_desc;

/* wc_session_desc.source */
#define WC_SOURCE_MODEL 0 /* the neural world model */
#define WC_SOURCE_GAME 1  /* the deterministic reference game (no model; for integration work) */

typedef struct wc_session_desc {
  uint32_t struct_size; /* sizeof(wc_session_desc) */
  int32_t source;       /* WC_SOURCE_* */
  /* MODEL: a weights directory holding config.json and the safetensors shards (as written by
   * `worldcast train`). NULL or "" = random weights (seeded by weights_seed) for `config`. */
  const char* weights;
  /* MODEL: a model config JSON; NULL = <weights>/config.json (required without weights). */
  const char* config;
  const char* policy;          /* MODEL: attention policy name; NULL = "headcast" */
  const char* policy_settings; /* MODEL: the policy's settings as a JSON object; NULL = {} */
  const char* resolution;      /* MODEL: a named resolution of the config; NULL = its default */
  uint64_t seed;               /* noise seed and the seeding game's world seed */
  uint64_t weights_seed;       /* MODEL with random weights only */
  int32_t width;               /* GAME: frame size in pixels; 0 = 128 */
  int32_t height;
} wc_session_desc;

typedef struct wc_session_info {
  uint32_t struct_size; /* sizeof(wc_session_info) */
  int32_t source;
  int32_t width; /* frame size in pixels */
  int32_t height;
  int32_t frames_per_block; /* frames one model step generates (1 for the game) */
  int32_t num_actions;      /* valid actions are 0 .. num_actions - 1 */
  int32_t num_layers;       /* attention layers x heads: the size of the head-cast arrays */
  int32_t num_heads;
  int32_t reserved0;
  char policy[64]; /* current policy name ("" for the game), NUL-terminated */
} wc_session_info;

/* Frame kinds (wc_frame_request.kind). */
#define WC_FRAME_KIND_CPU_RGBA8 1 /* a copy into the caller's buffer; always available */
#define WC_FRAME_KIND_CUDA 2      /* a device pointer in a ring slot + the stream to wait on */
#define WC_FRAME_KIND_VULKAN 3    /* a slot of the exported Vulkan memory + timeline value */

#define WC_FORMAT_RGBA8_UNORM 37 /* == VK_FORMAT_R8G8B8A8_UNORM; rows top to bottom */

typedef struct wc_frame_request {
  uint32_t struct_size; /* sizeof(wc_frame_request) */
  int32_t kind;         /* WC_FRAME_KIND_* */
  void* cpu_pixels;     /* CPU: destination of height rows of cpu_row_pitch bytes */
  uint64_t cpu_capacity; /* CPU: bytes at cpu_pixels */
  uint32_t cpu_row_pitch; /* CPU: 0 = width * 4 */
  uint32_t reserved0;
} wc_frame_request;

typedef struct wc_frame {
  uint32_t struct_size; /* sizeof(wc_frame) */
  int32_t kind;
  uint64_t frame_index; /* frames produced since the last reset (0 = the seeded first frame) */
  int32_t width;
  int32_t height;
  uint32_t row_pitch; /* bytes between rows (CPU: as requested; CUDA/Vulkan: width * 4) */
  uint32_t format;    /* WC_FORMAT_RGBA8_UNORM */
  /* CUDA and Vulkan: give the slot back with wc_session_release_frame(session, release_token)
   * once nothing reads it any more. 0 for CPU copies (nothing to release). */
  uint64_t release_token;
  /* CUDA: the pixels at cuda_device_ptr on device cuda_device are complete once the work queued
   * on cuda_stream (a cudaStream_t) so far has run: make the reading stream wait on it. */
  uint64_t cuda_device_ptr;
  void* cuda_stream;
  int32_t cuda_device;
  /* Vulkan: the frame lies at vk_offset in the memory of wc_session_export_vulkan; wait until
   * the exported timeline semaphore reaches vk_semaphore_value before reading (with
   * WC_VULKAN_EXPORT_HOST_SYNCHRONOUS it already has when this call returns). */
  uint32_t vk_slot;
  uint64_t vk_offset;
  uint64_t vk_semaphore_value;
} wc_frame;

/* wc_vulkan_export.flags */
#define WC_VULKAN_EXPORT_HOST_SYNCHRONOUS 0x1u /* no exportable semaphore on this device
                                                  (semaphore_fd = -1): every frame is complete
                                                  in memory when wc_session_get_frame returns */
#define WC_VULKAN_EXPORT_DEDICATED 0x2u /* import with VkMemoryDedicatedAllocateInfo naming the
                                           host's buffer created as described below */

typedef struct wc_vulkan_export {
  uint32_t struct_size; /* sizeof(wc_vulkan_export) */
  uint32_t flags;       /* WC_VULKAN_EXPORT_* */
  /* A new opaque fd (VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT) for the whole frame ring.
   * The caller owns it; a successful vkAllocateMemory import consumes it, else close() it. */
  int32_t memory_fd;
  uint32_t memory_type_index; /* import with this memory type and allocation_size */
  uint64_t allocation_size;
  /* Create the host's VkBuffer with this size and usage, chaining
   * VkExternalMemoryBufferCreateInfo{OPAQUE_FD}, and bind it at offset 0. */
  uint64_t buffer_size;
  uint32_t buffer_usage; /* VkBufferUsageFlags */
  uint32_t slot_count;
  uint64_t slot_stride; /* slot s starts at s * slot_stride (== wc_frame.vk_offset) */
  /* A new opaque fd of the ring's timeline semaphore (import as a TIMELINE semaphore with
   * VkImportSemaphoreFdInfoKHR; the import consumes it), or -1: see HOST_SYNCHRONOUS. */
  int32_t semaphore_fd;
  uint32_t reserved0;
  /* The value of the last frame write submitted before the export (0 if none yet); the
   * semaphore reaches it once that write completes. */
  uint64_t semaphore_value;
  uint8_t device_uuid[16];  /* the exporting device: the importer's must match both */
  uint8_t driver_uuid[16];
  int32_t width;
  int32_t height;
  uint32_t row_pitch;
  uint32_t format; /* WC_FORMAT_RGBA8_UNORM */
} wc_vulkan_export;

/* Head types in wc_stats.head_types (DESIGN.md §6). */
#define WC_HEAD_DENSE 0 /* not cast (yet) */
#define WC_HEAD_SINK 1
#define WC_HEAD_DUMMY 2
#define WC_HEAD_SPATIAL 3
#define WC_HEAD_GLOBAL 4
#define WC_HEAD_NEIGHBOUR 5
#define WC_HEAD_TYPE_COUNT 8 /* array length of the per-type fields (room to grow) */

typedef struct wc_stats {
  uint32_t struct_size; /* sizeof(wc_stats) */
  /* In: optional arrays of head_capacity entries, filled layer-major ([layer][head]) with each
   * head's type and, in head_scores, its 4 scores (S_sink, S_dummy, M_sp, S_sp; NaN = unset).
   * Too small: filled as far as they go and WC_RESULT_INCOMPLETE is returned. */
  uint32_t head_capacity;
  uint8_t* head_types;
  float* head_scores; /* 4 * head_capacity floats */
  /* Out. */
  uint64_t frame_index; /* as wc_frame.frame_index */
  int64_t blocks;       /* model blocks generated since reset */
  double step_ms;       /* the last wc_session_step, wall clock */
  double model_ms;      /* the last block's model time (all denoising steps + clean pass) */
  double decode_ms;     /* the last block's decode to RGBA8 */
  double mean_model_ms; /* over the blocks since reset */
  double mean_decode_ms;
  int64_t cache_bytes;  /* K/V bytes held by the attention policy */
  int64_t cache_tokens; /* K/V entries held (summed over heads) */
  int32_t num_layers;
  int32_t num_heads;
  int32_t classified; /* 1 once a casting policy has cast its heads */
  int32_t reserved0;
  int32_t heads_per_type[WC_HEAD_TYPE_COUNT];
  int64_t bytes_per_type[WC_HEAD_TYPE_COUNT];
  uint64_t frames_dropped;           /* produced frames no get_frame returned */
  uint64_t vulkan_validation_errors; /* with WC_RUNTIME_FLAG_VULKAN_VALIDATION */
  /* ABI 1.1. AnnSA's attention (policies "annsa" and "fast-ar") since reset, over every layer,
   * head and pass; 0 for other policies. Pairs are (query, history key) pairs. */
  double ann_history_pairs;  /* pairs dense attention over the same history would score */
  double ann_allowed_pairs;  /* pairs the buckets allowed (kept share = allowed / history) */
  double ann_gathered_pairs; /* pairs the block-sparse calls scored (allowed + padding) */
  double ann_largest_bucket; /* the largest share of a head's history one bucket held */
} wc_stats;

/* wc_session_step flags */
#define WC_STEP_NEWEST_ACTION 0x1u /* use the newest pushed action and drop older ones (live
                                      play, lowest latency); default: the oldest (replays) */

/* ---------------------------------------------------------------------------------------------
 * Threading. The library starts no threads; every function may be called from any thread and
 * each says under "Threads:" what it may wait for:
 *  - "never waits": returns without waiting for other calls beyond brief copies.
 *  - "waits for a step": serialised with the session's other model calls (wc_session_step,
 *    _reset, _set_settings, _set_policy, _save_state, _load_state); it may wait for a model
 *    step running on another thread. So a worker thread can step while the render thread
 *    pushes actions and polls frames and stats, which never wait for a step.
 * A call racing with the destroy of its object either completes or returns
 * WC_RESULT_ERROR_INVALID_HANDLE; the object is freed when the last such call returns.
 * ------------------------------------------------------------------------------------------ */

/* The library's ABI version (the WC_ABI_VERSION it was built with).
 * Threads: never waits; callable before any runtime exists. */
WC_API uint32_t wc_abi_version(void);

/* A static name for a result ("WC_RESULT_ERROR_INVALID_HANDLE"); never NULL.
 * Threads: never waits; callable before any runtime exists. */
WC_API const char* wc_result_string(wc_result result);

/* The message of the calling thread's last failed wc_* call, two-call idiom: writes at most
 * `capacity` bytes (NUL-terminated, WC_RESULT_INCOMPLETE if cut) and sets *length to the full
 * length + 1; `buffer` may be NULL with capacity 0 to query the length. "" when no call failed
 * on this thread. Threads: never waits; reads only the calling thread's message. */
WC_API wc_result wc_last_error(char* buffer, uint32_t capacity, uint32_t* length);

/* Creates a runtime: the compute device (chosen by device_uuid when given) and, on first use,
 * the plugin's own headless Vulkan device. A major ABI version other than the library's is
 * WC_RESULT_ERROR_VERSION_MISMATCH. Threads: never waits. */
WC_API wc_result wc_runtime_create(const wc_runtime_desc* desc, wc_runtime* out_runtime);

/* Destroys the runtime and every session created from it (their handles become invalid).
 * Threads: any thread; calls in flight on its sessions finish first (see above). */
WC_API wc_result wc_runtime_destroy(wc_runtime runtime);

/* The Vulkan device extensions a host must enable on its VkDevice to import this runtime's
 * frames (static strings), beyond Vulkan 1.2 with the timelineSemaphore feature. Call after
 * choosing the physical device (its UUID in wc_runtime_desc) and before vkCreateDevice.
 * Two-call idiom: *count is set to the full count; WC_RESULT_INCOMPLETE when `capacity` is
 * smaller. Creates the plugin's Vulkan device if needed; WC_RESULT_ERROR_UNSUPPORTED when there
 * is no usable one. Threads: waits only while that device is being created. */
WC_API wc_result wc_runtime_vulkan_device_extensions(wc_runtime runtime, const char** names,
                                                     uint32_t capacity, uint32_t* count);

/* Creates a session: loads the config and weights, creates the policy and seeds the first
 * frame (frame_index 0). WC_RESULT_ERROR_OUT_OF_MEMORY, before anything is allocated, when
 * the model's weights, the policy's cache and a block's forward cannot fit in the memory free on
 * the host or the device (the last error names both figures). Threads: never waits for other
 * calls, but takes the load's time (seconds for large models): call it off the render thread. */
WC_API wc_result wc_session_create(wc_runtime runtime, const wc_session_desc* desc,
                                   wc_session* out_session);

/* Destroys a session; its frame slots and exports become invalid (fds already imported keep
 * their memory alive). Threads: never waits; a step in flight finishes on its thread first. */
WC_API wc_result wc_session_destroy(wc_session session);

/* The message of the last failed call on this session, from whichever thread made it (two-call
 * idiom as wc_last_error). Threads: never waits. */
WC_API wc_result wc_session_last_error(wc_session session, char* buffer, uint32_t capacity,
                                       uint32_t* length);

/* Frame size, actions, model shape and the current policy. Threads: never waits. */
WC_API wc_result wc_session_get_info(wc_session session, wc_session_info* out_info);

/* Queues an action (0 .. num_actions - 1) for a later wc_session_step. At most 1024 are
 * queued; beyond that the oldest is dropped. Threads: never waits. */
WC_API wc_result wc_session_push_action(wc_session session, int32_t action);

/* Produces the next frame under the next queued action (WC_ACTION_NONE when none is queued;
 * see WC_STEP_NEWEST_ACTION). With frames_per_block > 1, a model block is generated every
 * frames_per_block steps and the other steps return at once.
 * Threads: waits for a step; takes the model's time (call it from a worker thread). */
WC_API wc_result wc_session_step(wc_session session, uint32_t flags);

/* Starts over from `seed` (the queued actions are dropped). Threads: waits for a step. */
WC_API wc_result wc_session_reset(wc_session session, uint64_t seed);

/* The newest frame as `request->kind`. CPU: copied into request->cpu_pixels. CUDA/Vulkan: copied
 * into a free slot of the session's ring of 3; WC_RESULT_NOT_READY (nothing returned) when the
 * host holds all of them. WC_RESULT_FRAME_DROPPED (with the frame) when steps happened since
 * the previous get that no get returned. Threads: never waits for a step (a device-local
 * Vulkan ring without an exportable semaphore waits for its own small copy). */
WC_API wc_result wc_session_get_frame(wc_session session, const wc_frame_request* request,
                                      wc_frame* out_frame);

/* Gives a CUDA or Vulkan slot back; call once the host's reads of it have completed (e.g. after
 * the fence of the submission that copied it). Each token is released once.
 * Threads: never waits. */
WC_API wc_result wc_session_release_frame(wc_session session, uint64_t release_token);

/* Exports the session's Vulkan frame ring (created on first use): the memory fd and timeline
 * semaphore fd a host imports once, then reads frames by slot. Each call returns new fds.
 * Threads: never waits for a step (the first call may create the plugin's Vulkan device). */
WC_API wc_result wc_session_export_vulkan(wc_session session, wc_vulkan_export* out_export);

/* A snapshot of the session's statistics, taken after the last step. Threads: never waits. */
WC_API wc_result wc_session_get_stats(wc_session session, wc_stats* stats);

/* Applies policy settings live (a JSON object of the current policy's keys, e.g.
 * {"theta_sink": 0.9}); they take effect from the next block. Invalid JSON, unknown keys or bad
 * values: WC_RESULT_ERROR_INVALID_ARGUMENT and nothing changes. Threads: waits for a step. */
WC_API wc_result wc_session_set_settings(wc_session session, const char* settings_json);

/* The current policy's settings as a JSON object (two-call idiom as wc_last_error).
 * Threads: never waits (a snapshot taken after the last change). */
WC_API wc_result wc_session_get_settings(wc_session session, char* buffer, uint32_t capacity,
                                         uint32_t* length);

/* A token model's play settings (how it draws its frames: {"temperature": 1.0, "top_p": 1.0,
 * "passes": 3, "sure": 0.9}) applied live from the next block: a JSON object of some of those
 * keys. Invalid JSON, an unknown key, a value out of range or of the wrong type, or any key for a
 * model that draws no tokens: WC_RESULT_ERROR_INVALID_ARGUMENT and nothing changes. Kept across
 * wc_session_reset, wc_session_set_policy and wc_session_load_state. Threads: waits for a step.
 * Since ABI 1.2. */
WC_API wc_result wc_session_set_play_settings(wc_session session, const char* settings_json);

/* The play settings now as a JSON object ({} for a model that draws no tokens; two-call idiom as
 * wc_last_error). Threads: never waits (a snapshot taken after the last change). Since ABI 1.2. */
WC_API wc_result wc_session_get_play_settings(wc_session session, char* buffer, uint32_t capacity,
                                              uint32_t* length);

/* Switches the attention policy ("dense", "headcast", "dummy", "tempcache",
 * "headcast+tempcache") with its settings (JSON object; NULL = {}), keeping the game: the
 * frames in context are committed again through the new policy. An unknown policy or bad
 * settings: WC_RESULT_ERROR_INVALID_ARGUMENT and nothing changes. Threads: waits for a step. */
WC_API wc_result wc_session_set_policy(wc_session session, const char* policy,
                                       const char* settings_json);

/* Saves what reproduces this rollout (seed, policy and settings, actions; written atomically)
 * / replays a saved one (same config, weights and device). MODEL sessions only. A bad or
 * mismatching file is WC_RESULT_ERROR_BAD_CHECKPOINT and leaves the session unchanged; a missing
 * file or folder is WC_RESULT_ERROR_IO. Threads: wait for a step; loading replays the rollout
 * (the model's time per saved block). */
WC_API wc_result wc_session_save_state(wc_session session, const char* path);
WC_API wc_result wc_session_load_state(wc_session session, const char* path);

/* Reads an action script (the format of `worldcast play --actions`: "right 12" per line,
 * '#' comments) into actions[0 .. capacity). Two-call idiom: *count is set to the full count;
 * WC_RESULT_INCOMPLETE when capacity is smaller. A malformed file is
 * WC_RESULT_ERROR_INVALID_ARGUMENT with "FILE:LINE: ..." in wc_last_error; a missing one
 * WC_RESULT_ERROR_IO. Threads: never waits; callable before any runtime exists. */
WC_API wc_result wc_action_script_load(const char* path, int32_t* actions, uint32_t capacity,
                                       uint32_t* count);

#ifdef __cplusplus
}
#endif

#endif /* WORLDCAST_WORLDCAST_H */
/* clang-format on */

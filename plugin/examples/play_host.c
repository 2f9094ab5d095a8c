/* The example C host: plays an action script through libworldcast_plugin and writes one PNG per
 * frame (DIR/frame_NNNNN.png, as `worldcast play --headless` names them). */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <worldcast/worldcast.h>

#include "host_options.h"
#include "png_writer.h"
#include "vulkan_import.h"

static void on_log(void* user_data, int32_t level, const char* message) {
  (void)user_data;
  fprintf(stderr, "[worldcast %s] %s\n", level >= WC_LOG_ERROR ? "error" : "warning", message);
}

/* Prints why a call failed: the session's last error when there is a session, else the
 * thread's. Returns 1 (the exit code). */
static int fail(const char* call, wc_result result, wc_session session) {
  char message[2048] = "";
  uint32_t length = 0;
  if (session != WC_NULL_HANDLE) {
    wc_session_last_error(session, message, sizeof message, &length);
  } else {
    wc_last_error(message, sizeof message, &length);
  }
  fprintf(stderr, "%s: %s: %s\n", call, wc_result_string(result), message);
  return 1;
}

/* mkdir -p: the output folder and any missing parents. */
static int make_directories(const char* path) {
  char partial[4096];
  size_t i, n = strlen(path);
  if (n == 0 || n >= sizeof partial) return -1;
  for (i = 1; i <= n; ++i) {
    if (path[i] != '/' && path[i] != '\0') continue;
    memcpy(partial, path, i);
    partial[i] = '\0';
    if (mkdir(partial, 0755) != 0 && errno != EEXIST) {
      perror(partial);
      return -1;
    }
  }
  return 0;
}

static int load_actions(const char* path, int32_t** actions, uint32_t* count) {
  wc_result result;
  *actions = NULL;
  *count = 0;
  if (!path) return 0;
  result = wc_action_script_load(path, NULL, 0, count); /* two-call idiom: the count first */
  if (WC_FAILED(result)) return fail("wc_action_script_load", result, WC_NULL_HANDLE);
  *actions = (int32_t*)malloc((*count ? *count : 1) * sizeof(int32_t));
  if (!*actions) return 1;
  result = wc_action_script_load(path, *actions, *count, count);
  return WC_FAILED(result) ? fail("wc_action_script_load", result, WC_NULL_HANDLE) : 0;
}

static int play(const host_options* o, wc_runtime runtime, vulkan_host* vulkan) {
  wc_session_desc desc;
  wc_session_info info;
  wc_session session = WC_NULL_HANDLE;
  wc_stats stats;
  int32_t* actions = NULL;
  uint32_t action_count = 0;
  uint8_t* pixels = NULL;
  int status = 1, i;
  wc_result result;

  memset(&desc, 0, sizeof desc);
  desc.struct_size = sizeof desc;
  desc.source = o->game ? WC_SOURCE_GAME : WC_SOURCE_MODEL;
  desc.width = o->game_width;
  desc.height = o->game_height;
  desc.weights = o->weights;
  desc.config = o->config;
  desc.weights_seed = o->weights_seed;
  desc.policy = o->policy;
  desc.policy_settings = o->settings;
  desc.seed = o->seed;
  result = wc_session_create(runtime, &desc, &session);
  if (WC_FAILED(result)) return fail("wc_session_create", result, WC_NULL_HANDLE);

  memset(&info, 0, sizeof info);
  info.struct_size = sizeof info;
  result = wc_session_get_info(session, &info);
  if (WC_FAILED(result)) {
    fail("wc_session_get_info", result, session);
    goto done;
  }
  if (load_actions(o->actions_file, &actions, &action_count)) goto done;
  if (vulkan && vulkan_host_import(vulkan, session)) goto done;
  pixels = (uint8_t*)malloc((size_t)info.width * (size_t)info.height * 4);
  if (!pixels) goto done;

  for (i = 0; i < o->frames; ++i) {
    char path[4096];
    const int32_t action = (uint32_t)i < action_count ? actions[i] : WC_ACTION_NONE;
    result = wc_session_push_action(session, action);
    if (WC_SUCCEEDED(result)) result = wc_session_step(session, 0);
    if (WC_FAILED(result)) {
      fail("wc_session_step", result, session);
      goto done;
    }
    if (vulkan) {
      if (vulkan_host_read_frame(vulkan, session, pixels)) goto done;
    } else {
      wc_frame_request request;
      wc_frame frame;
      memset(&request, 0, sizeof request);
      request.struct_size = sizeof request;
      request.kind = WC_FRAME_KIND_CPU_RGBA8;
      request.cpu_pixels = pixels;
      request.cpu_capacity = (uint64_t)info.width * (uint64_t)info.height * 4;
      memset(&frame, 0, sizeof frame);
      frame.struct_size = sizeof frame;
      result = wc_session_get_frame(session, &request, &frame);
      if (WC_FAILED(result)) {
        fail("wc_session_get_frame", result, session);
        goto done;
      }
    }
    snprintf(path, sizeof path, "%s/frame_%05d.png", o->out_dir, i);
    if (write_png_rgba(path, info.width, info.height, pixels, (uint32_t)info.width * 4)) {
      fprintf(stderr, "%s: cannot write the PNG\n", path);
      goto done;
    }
  }

  memset(&stats, 0, sizeof stats);
  stats.struct_size = sizeof stats;
  result = wc_session_get_stats(session, &stats);
  if (WC_FAILED(result)) {
    fail("wc_session_get_stats", result, session);
    goto done;
  }
  printf("wrote %d frames (%dx%d, %s) to %s: frame %llu, model %.1f ms/block, cache %lld bytes\n",
         o->frames, info.width, info.height, vulkan ? "vulkan import" : "cpu copy", o->out_dir,
         (unsigned long long)stats.frame_index, stats.mean_model_ms, (long long)stats.cache_bytes);
  status = 0;
  if (stats.vulkan_validation_errors > 0) {
    fprintf(stderr, "plugin: %llu Vulkan validation errors\n",
            (unsigned long long)stats.vulkan_validation_errors);
    status = 1;
  }

done:
  free(pixels);
  free(actions);
  wc_session_destroy(session);
  return status;
}

int main(int argc, char** argv) {
  host_options o;
  wc_runtime_desc desc;
  wc_runtime runtime = WC_NULL_HANDLE;
  vulkan_host* vulkan = NULL;
  wc_result result;
  int status;
  if (parse_host_options(argc, argv, &o)) return 2;
  if (make_directories(o.out_dir)) return 1;
  if (WC_VERSION_MAJOR(wc_abi_version()) != WC_VERSION_MAJOR(WC_ABI_VERSION)) {
    fprintf(stderr, "libworldcast_plugin has another ABI major version\n");
    return 1;
  }

  memset(&desc, 0, sizeof desc);
  desc.struct_size = sizeof desc;
  desc.abi_version = WC_ABI_VERSION;
  desc.device = WC_DEVICE_AUTO;
  desc.log = on_log;
  desc.log_level = WC_LOG_ERROR; /* failures are also reported by fail() */
  if (o.vulkan) {
    /* The engine's GPU decides: its deviceUUID goes to the plugin before either device exists. */
    vulkan = vulkan_host_create(o.validate, desc.device_uuid);
    if (!vulkan) return 1;
    desc.flags |= WC_RUNTIME_FLAG_DEVICE_UUID;
    if (o.validate) desc.flags |= WC_RUNTIME_FLAG_VULKAN_VALIDATION;
    if (o.device_local) desc.flags |= WC_RUNTIME_FLAG_VULKAN_DEVICE_LOCAL;
  }
  result = wc_runtime_create(&desc, &runtime);
  if (WC_FAILED(result)) {
    vulkan_host_destroy(vulkan);
    return fail("wc_runtime_create", result, WC_NULL_HANDLE);
  }
  status = vulkan && vulkan_host_create_device(vulkan, runtime) ? 1 : play(&o, runtime, vulkan);
  if (vulkan && vulkan_host_validation_errors(vulkan) > 0) {
    fprintf(stderr, "host: %llu Vulkan validation errors\n",
            (unsigned long long)vulkan_host_validation_errors(vulkan));
    status = 1;
  }
  wc_runtime_destroy(runtime);
  vulkan_host_destroy(vulkan);
  return status;
}

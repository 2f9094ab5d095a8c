/* worldcast.h compiled as C99 (-std=c99 -pedantic -Werror): the header is plain C, and a C host
 * can drive a session end to end. Called from plugin_api_test.cpp. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <worldcast/worldcast.h>

#include "c_header_test.h"

/* C99 has no _Static_assert: a negative array size fails the build instead. */
#define WC_C_ASSERT(name, condition) typedef char name[(condition) ? 1 : -1]
WC_C_ASSERT(handles_are_64_bit, sizeof(wc_session) == 8 && sizeof(wc_runtime) == 8);
WC_C_ASSERT(results_are_32_bit, sizeof(wc_result) == 4);
WC_C_ASSERT(frame_is_frozen_v1, sizeof(wc_frame) == 80);
WC_C_ASSERT(runtime_desc_is_frozen_v1, sizeof(wc_runtime_desc) == 56);
WC_C_ASSERT(session_desc_is_frozen_v1, sizeof(wc_session_desc) == 72);
/* ABI 1.1 grew wc_stats at its end: its 1.0 part stays where it was. */
WC_C_ASSERT(stats_is_frozen_v1, offsetof(wc_stats, ann_history_pairs) == 224);
WC_C_ASSERT(stats_is_v1_1, sizeof(wc_stats) == 256);
WC_C_ASSERT(vulkan_export_is_frozen_v1, sizeof(wc_vulkan_export) == 112);
WC_C_ASSERT(frame_request_is_frozen_v1, sizeof(wc_frame_request) == 32);
WC_C_ASSERT(session_info_is_frozen_v1, sizeof(wc_session_info) == 100);

int wc_c_host_smoke(uint64_t seed, int frames, uint8_t* last_frame, int* width, int* height) {
  wc_runtime_desc runtime_desc;
  wc_session_desc session_desc;
  wc_session_info info;
  wc_runtime runtime = WC_NULL_HANDLE;
  wc_session session = WC_NULL_HANDLE;
  wc_frame_request request;
  wc_frame frame;
  int i, status = 1;

  memset(&runtime_desc, 0, sizeof runtime_desc);
  runtime_desc.struct_size = sizeof runtime_desc;
  runtime_desc.abi_version = WC_ABI_VERSION;
  runtime_desc.device = WC_DEVICE_CPU;
  runtime_desc.log_level = WC_LOG_ERROR + 1;
  if (wc_runtime_create(&runtime_desc, &runtime) != WC_RESULT_OK) return 1;

  memset(&session_desc, 0, sizeof session_desc);
  session_desc.struct_size = sizeof session_desc;
  session_desc.source = WC_SOURCE_GAME;
  session_desc.seed = seed;
  if (wc_session_create(runtime, &session_desc, &session) != WC_RESULT_OK) goto done;
  memset(&info, 0, sizeof info);
  info.struct_size = sizeof info;
  if (wc_session_get_info(session, &info) != WC_RESULT_OK) goto done;

  for (i = 0; i < frames; ++i) {
    if (wc_session_push_action(session, WC_ACTION_RIGHT) != WC_RESULT_OK) goto done;
    if (wc_session_step(session, 0) != WC_RESULT_OK) goto done;
  }
  memset(&request, 0, sizeof request);
  request.struct_size = sizeof request;
  request.kind = WC_FRAME_KIND_CPU_RGBA8;
  request.cpu_pixels = last_frame;
  request.cpu_capacity = (uint64_t)info.width * (uint64_t)info.height * 4;
  memset(&frame, 0, sizeof frame);
  frame.struct_size = sizeof frame;
  /* Frames were stepped without being fetched: a qualified success. */
  if (wc_session_get_frame(session, &request, &frame) != WC_RESULT_FRAME_DROPPED) goto done;
  if (frame.frame_index != (uint64_t)frames || frame.release_token != 0) goto done;
  *width = info.width;
  *height = info.height;
  status = 0;

done:
  if (session != WC_NULL_HANDLE && wc_session_destroy(session) != WC_RESULT_OK) status = 1;
  if (wc_runtime_destroy(runtime) != WC_RESULT_OK) status = 1;
  /* Both handles are stale now. */
  if (session != WC_NULL_HANDLE && wc_session_step(session, 0) != WC_RESULT_ERROR_INVALID_HANDLE) {
    status = 1;
  }
  if (wc_runtime_destroy(runtime) != WC_RESULT_ERROR_INVALID_HANDLE) status = 1;
  return status;
}

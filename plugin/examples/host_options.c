/* See host_options.h. */
#include "host_options.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(const char* program) {
  fprintf(stderr,
          "usage: %s --out DIR [--frames N] [--seed S] [--actions FILE]\n"
          "          [--game WxH | --weights DIR | --config FILE [--weights-seed N]]\n"
          "          [--policy NAME] [--settings JSON] [--vulkan [--validate] [--device-local]]\n"
          "Plays N frames through libworldcast_plugin and writes DIR/frame_NNNNN.png.\n",
          program);
}

static int parse_u64(const char* text, uint64_t* value) {
  char* end = NULL;
  unsigned long long parsed = strtoull(text, &end, 10);
  if (!*text || *end) return -1;
  *value = (uint64_t)parsed;
  return 0;
}

int parse_host_options(int argc, char** argv, host_options* o) {
  int i;
  memset(o, 0, sizeof(*o));
  o->frames = 10;
  o->seed = 1;
  for (i = 1; i < argc; ++i) {
    const char* arg = argv[i];
    const char* value = i + 1 < argc ? argv[i + 1] : NULL;
    uint64_t number = 0;
    if (!strcmp(arg, "--vulkan")) {
      o->vulkan = 1;
      continue;
    }
    if (!strcmp(arg, "--validate")) {
      o->validate = 1;
      continue;
    }
    if (!strcmp(arg, "--device-local")) {
      o->device_local = 1;
      continue;
    }
    if (!value) {
      fprintf(stderr, "%s: unknown option or missing value\n", arg);
      usage(argv[0]);
      return -1;
    }
    ++i;
    if (!strcmp(arg, "--out")) {
      o->out_dir = value;
    } else if (!strcmp(arg, "--actions")) {
      o->actions_file = value;
    } else if (!strcmp(arg, "--frames") && !parse_u64(value, &number) && number > 0 &&
               number < 1000000) {
      o->frames = (int)number;
    } else if (!strcmp(arg, "--seed") && !parse_u64(value, &number)) {
      o->seed = number;
    } else if (!strcmp(arg, "--game") &&
               sscanf(value, "%dx%d", &o->game_width, &o->game_height) == 2) {
      o->game = 1;
    } else if (!strcmp(arg, "--weights")) {
      o->weights = value;
    } else if (!strcmp(arg, "--config")) {
      o->config = value;
    } else if (!strcmp(arg, "--weights-seed") && !parse_u64(value, &number)) {
      o->weights_seed = number;
    } else if (!strcmp(arg, "--policy")) {
      o->policy = value;
    } else if (!strcmp(arg, "--settings")) {
      o->settings = value;
    } else {
      fprintf(stderr, "%s %s: unknown option or bad value\n", arg, value);
      usage(argv[0]);
      return -1;
    }
  }
  if (!o->out_dir) {
    usage(argv[0]);
    return -1;
  }
  return 0;
}

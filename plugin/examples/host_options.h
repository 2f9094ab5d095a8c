/* Command-line options of the example host. */
#ifndef WC_EXAMPLE_HOST_OPTIONS_H
#define WC_EXAMPLE_HOST_OPTIONS_H

#include <stdint.h>

typedef struct host_options {
  const char* out_dir;
  const char* actions_file;
  int frames;
  uint64_t seed;
  int game; /* 1: the reference game instead of the model */
  int game_width;
  int game_height;
  const char* weights;
  const char* config;
  uint64_t weights_seed;
  const char* policy;
  const char* settings;
  int vulkan;       /* import frames into the host's own Vulkan device */
  int validate;     /* Vulkan validation in the host and the plugin */
  int device_local; /* ask the plugin for device-local frame memory */
} host_options;

/* Parses argv; prints usage and returns -1 on error. */
int parse_host_options(int argc, char** argv, host_options* options);

#endif

/* The C translation unit's entry point (c_header_test.c), callable from the C++ tests. */
#ifndef WC_TESTS_PLUGIN_C_HEADER_TEST_H
#define WC_TESTS_PLUGIN_C_HEADER_TEST_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Plays `frames` steps (action right) of the reference game seeded `seed` through the C API and
 * copies the last frame (128x128 RGBA8) into last_frame; 0 on success. */
int wc_c_host_smoke(uint64_t seed, int frames, uint8_t* last_frame, int* width, int* height);

#ifdef __cplusplus
}
#endif

#endif

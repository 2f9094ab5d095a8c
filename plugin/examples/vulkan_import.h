/* The example host's Vulkan path, done the way an engine would: its own instance and device
 * (with the extensions the plugin lists), the frame ring imported once from the exported
 * memory fd and timeline semaphore fd, and each frame copied from its slot into the host's own
 * image (read back here only so the example can write PNGs). */
#ifndef WC_EXAMPLE_VULKAN_IMPORT_H
#define WC_EXAMPLE_VULKAN_IMPORT_H

#include <stdint.h>
#include <worldcast/worldcast.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct vulkan_host vulkan_host;

/* Creates the instance (with validation and a counting messenger if asked) and picks the
 * physical device; its deviceUUID goes to the plugin so both use the same GPU. NULL on error. */
vulkan_host* vulkan_host_create(int validate, uint8_t device_uuid[16]);

/* Creates the VkDevice with the extensions wc_runtime_vulkan_device_extensions lists. */
int vulkan_host_create_device(vulkan_host* host, wc_runtime runtime);

/* Imports the session's exported frame ring (memory, timeline semaphore) and creates the
 * host's image of the frame size. */
int vulkan_host_import(vulkan_host* host, wc_session session);

/* Takes the newest frame as WC_FRAME_KIND_VULKAN, copies its slot into the host image (waiting
 * on the timeline semaphore on the GPU), reads the image back into rgba (width*height*4) and
 * releases the slot. */
int vulkan_host_read_frame(vulkan_host* host, wc_session session, uint8_t* rgba);

uint64_t vulkan_host_validation_errors(const vulkan_host* host);
void vulkan_host_destroy(vulkan_host* host);

#ifdef __cplusplus
}
#endif

#endif

/* The GDRCopy user-space API (libgdrapi.so.2, API 2.x) as the emulator
 * provides it.  No package registry ships gdrapi.h, so these declarations are
 * written here from the published API (types, signatures and constants of
 * GDRCopy 2.5) and are not checked against the real header (docs/GPU.md). */
#ifndef CUDAEMU_GDRAPI_EMU_H
#define CUDAEMU_GDRAPI_EMU_H
#include <stddef.h>
#include <stdint.h>

#define GPU_PAGE_SHIFT 16
#define GPU_PAGE_SIZE (1UL << GPU_PAGE_SHIFT)
#define GPU_PAGE_OFFSET (GPU_PAGE_SIZE - 1)
#define GPU_PAGE_MASK (~GPU_PAGE_OFFSET)

typedef struct gdr *gdr_t;
typedef struct gdr_mh_s {
    unsigned long h;
} gdr_mh_t;
typedef enum gdr_mapping_type {
    GDR_MAPPING_TYPE_NONE = 0,
    GDR_MAPPING_TYPE_WC = 1,
    GDR_MAPPING_TYPE_CACHING = 2,
    GDR_MAPPING_TYPE_DEVICE = 3
} gdr_mapping_type_t;
typedef struct gdr_info_v2 {
    uint64_t va;
    uint64_t mapped_size;
    uint32_t page_size;
    uint64_t tm_cycles;
    uint32_t cycles_per_ms;
    unsigned mapped : 1;
    unsigned wc_mapping : 1;
    gdr_mapping_type_t mapping_type;
} gdr_info_v2_t;
typedef gdr_info_v2_t gdr_info_t;
typedef enum gdr_attr { GDR_ATTR_USE_PERSISTENT_MAPPING = 1, GDR_ATTR_GLOBAL_NV_GET_PAGES_REFCOUNT = 2 } gdr_attr_t;

gdr_t gdr_open(void);
int gdr_close(gdr_t g);
int gdr_pin_buffer(gdr_t g, unsigned long addr, size_t size, uint64_t p2p_token, uint32_t va_space, gdr_mh_t *handle);
int gdr_unpin_buffer(gdr_t g, gdr_mh_t handle);
int gdr_get_callback_flag(gdr_t g, gdr_mh_t handle, int *flag);
int gdr_get_info_v2(gdr_t g, gdr_mh_t handle, gdr_info_v2_t *info);
int gdr_map(gdr_t g, gdr_mh_t handle, void **va, size_t size);
int gdr_unmap(gdr_t g, gdr_mh_t handle, void *va, size_t size);
int gdr_copy_to_mapping(gdr_mh_t handle, void *map_d_ptr, const void *h_ptr, size_t size);
int gdr_copy_from_mapping(gdr_mh_t handle, void *h_ptr, const void *map_d_ptr, size_t size);
void gdr_runtime_get_version(int *major, int *minor);
int gdr_driver_get_version(gdr_t g, int *major, int *minor);
int gdr_get_attribute(gdr_t g, gdr_attr_t attr, int *v);
#endif

/* cudaemu: the GDRCopy-like library gives the CPU a window onto device
 * memory: data written by the driver is read through the mapping and data
 * written through the mapping is seen by the driver; host memory cannot be
 * pinned; the window covers whole 64 KiB GPU pages. */
#include <stdint.h>

#include "gdrapi_emu.h"
#include "t_common.h"

F(cuInit); F(cuDeviceGet); F(cuDevicePrimaryCtxRetain); F(cuCtxSetCurrent); F(cuMemAlloc); F(cuMemFree);
F(cuMemcpyHtoD); F(cuMemcpyDtoH);
#define G(name) static __typeof__(&name) q_##name
#define GLOAD(name) q_##name = (__typeof__(q_##name))dlsym(gl, #name)
G(gdr_open); G(gdr_close); G(gdr_pin_buffer); G(gdr_unpin_buffer); G(gdr_get_info_v2); G(gdr_map); G(gdr_unmap);
G(gdr_copy_to_mapping); G(gdr_copy_from_mapping); G(gdr_runtime_get_version);

int main(void)
{
    t_load();
    LOAD(cuInit); LOAD(cuDeviceGet); LOAD(cuDevicePrimaryCtxRetain); LOAD(cuCtxSetCurrent); LOAD(cuMemAlloc);
    LOAD(cuMemFree); LOAD(cuMemcpyHtoD); LOAD(cuMemcpyDtoH);
    void *gl = dlopen("libgdrapi.so.2", RTLD_NOW);
    if (!gl) {
        fprintf(stderr, "dlopen libgdrapi.so.2: %s\n", dlerror());
        return 2;
    }
    GLOAD(gdr_open); GLOAD(gdr_close); GLOAD(gdr_pin_buffer); GLOAD(gdr_unpin_buffer); GLOAD(gdr_get_info_v2);
    GLOAD(gdr_map); GLOAD(gdr_unmap); GLOAD(gdr_copy_to_mapping); GLOAD(gdr_copy_from_mapping);
    GLOAD(gdr_runtime_get_version);
    CHECK(q_gdr_open && q_gdr_copy_from_mapping && q_gdr_runtime_get_version);
    int maj = 0, min = 0;
    q_gdr_runtime_get_version(&maj, &min);
    CHECK(maj == 2);

    CK(p_cuInit(0));
    CUdevice dev;
    CUcontext ctx;
    CK(p_cuDeviceGet(&dev, 0));
    CK(p_cuDevicePrimaryCtxRetain(&ctx, dev));
    CK(p_cuCtxSetCurrent(ctx));
    enum { N = (1 << 20) + 123 };
    CUdeviceptr d;
    CK(p_cuMemAlloc(&d, N));
    CHECK(d % GPU_PAGE_SIZE == 0);
    unsigned char *h = malloc(N), *back = malloc(N);
    for (int i = 0; i < N; i++)
        h[i] = (unsigned char)(i * 13 + 5);
    CK(p_cuMemcpyHtoD(d, h, N));

    gdr_t g = q_gdr_open();
    CHECK(g != NULL);
    gdr_mh_t mh;
    unsigned long addr = (unsigned long)d + 70000; /* inside the second GPU page */
    CHECK(q_gdr_pin_buffer(g, (unsigned long)(uintptr_t)h, 4096, 0, 0, &mh) != 0); /* host memory */
    CHECK(q_gdr_pin_buffer(g, addr, 5000, 0, 0, &mh) == 0);
    gdr_info_t info;
    CHECK(q_gdr_get_info_v2(g, mh, &info) == 0);
    CHECK(info.va == ((unsigned long)d + GPU_PAGE_SIZE) && info.mapped_size == GPU_PAGE_SIZE && !info.mapped);
    void *map = NULL;
    CHECK(q_gdr_map(g, mh, &map, info.mapped_size) == 0);
    char *win = (char *)map + (addr - info.va);
    CHECK(q_gdr_copy_from_mapping(mh, back, win, 5000) == 0);
    CHECK(!memcmp(back, h + 70000, 5000));
    CHECK(((unsigned char *)win)[7] == h[70007]); /* a plain CPU load works through the window */
    memset(back, 0x5a, 100);
    CHECK(q_gdr_copy_to_mapping(mh, win, back, 100) == 0);
    CHECK(q_gdr_copy_to_mapping(mh, win, back, GPU_PAGE_SIZE) != 0); /* past the mapping */
    CK(p_cuMemcpyDtoH(back, d + 69990, 120));
    CHECK(back[9] == h[69999] && back[10] == 0x5a && back[109] == 0x5a && back[110] == h[70100]);
    CHECK(q_gdr_unpin_buffer(g, mh) != 0); /* still mapped */
    CHECK(q_gdr_unmap(g, mh, map, info.mapped_size) == 0);
    CHECK(q_gdr_unpin_buffer(g, mh) == 0);
    CHECK(q_gdr_close(g) == 0);
    CK(p_cuMemFree(d));
    free(h);
    free(back);
    printf("cudaemu gdr: %s (%d failed checks)\n", t_fail ? "FAILED" : "ok", t_fail);
    return t_fail != 0;
}

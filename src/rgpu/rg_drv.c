/* rgpu server: loading the CUDA driver (see rg_drv.h). */
#include "rgpu/rg_drv.h"

#include <dlfcn.h>
#include <stdio.h>

#define RG_STR2(x) #x
#define RG_STR(x) RG_STR2(x)
#define RG_DRV_DEF(name) __typeof__(&name) d_##name;
RG_DRV_LIST(RG_DRV_DEF)

int rg_drv_load(char *err, size_t errlen)
{
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        snprintf(err, errlen, "cannot load libcuda.so.1: %s", dlerror());
        return -1;
    }
#define RG_DRV_LOAD(name)                                                                                   \
    if (!(d_##name = (__typeof__(&name))dlsym(h, RG_STR(name)))) {                                          \
        snprintf(err, errlen, "libcuda.so.1 has no %s", RG_STR(name));                                      \
        return -1;                                                                                          \
    }
    RG_DRV_LIST(RG_DRV_LOAD)
    return 0;
}

/* cudaemu kernel modules: the convention the emulated driver uses for
 * cuModuleLoad/cuModuleLoadData/cuModuleGetFunction/cuLaunchKernel.
 *
 * A module image is an ELF shared object (the bytes of the .so file for
 * cuModuleLoadData, its path for cuModuleLoad).  A kernel NAME is a function
 *     void NAME(const cudaemu_launch_t *l, void **params);
 * exported under that name, with its parameter sizes in
 *     const unsigned cudaemu_params_NAME[] = {COUNT, SIZE0, SIZE1, ...};
 * (parameters are laid out at offsets aligned to min(size, 8), as cuFuncGetParamInfo
 * reports them).  The emulator runs the whole grid in one call on the stream's
 * worker thread: the kernel loops over l->grid x l->block itself.  Device
 * pointers among the parameters must be turned into the emulator's view of
 * device memory with l->dev(p, n) before the CPU touches them (NULL if
 * [p, p+n) is not memory of this context's process or overflows its
 * allocation: the kernel must then return, as a faulting GPU kernel would).
 * On real hardware the image is a real cubin/fatbin instead. */
#ifndef CUDAEMU_KERNEL_H
#define CUDAEMU_KERNEL_H
#include <stddef.h>
#include <stdint.h>

typedef struct cudaemu_launch {
    unsigned grid[3], block[3];
    unsigned shared_bytes;
    void *(*dev)(uint64_t p, size_t n);
} cudaemu_launch_t;

typedef void cudaemu_kernel_fn(const cudaemu_launch_t *l, void **params);

#define CUDAEMU_PARAMS_PREFIX "cudaemu_params_"
#define CUDAEMU_MAX_PARAMS 64
#define CUDAEMU_MAX_PARAM_BYTES 4096 /* as CUDA's 4 KiB kernel parameter limit */
#endif

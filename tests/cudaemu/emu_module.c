/* cudaemu: modules and kernel launch (the convention of cudaemu_kernel.h: a
 * module is a shared object exporting CPU implementations of its kernels). */
#include <dlfcn.h>
#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cudaemu_kernel.h"
#include "emu.h"

#define EMU_MOD_MAGIC 0x4d4f4455u
#define EMU_FN_MAGIC 0x46554e43u
#define EMU_MAX_IMAGE (256u << 20)

struct CUmod_st {
    uint32_t magic;
    void *dl;
    CUcontext ctx;
};

struct CUfunc_st {
    uint32_t magic;
    cudaemu_kernel_fn *fn;
    CUmodule mod;
    unsigned nparams;
    size_t off[CUDAEMU_MAX_PARAMS], size[CUDAEMU_MAX_PARAMS];
    size_t total;
    struct CUfunc_st *next;
};

/* functions are kept until their module unloads */
static struct CUfunc_st *funcs;
static pthread_mutex_t fn_lock = PTHREAD_MUTEX_INITIALIZER;

/* size of an ELF image from its headers (section headers are last in files
 * written by the usual linkers; program segments are checked as well) */
static size_t elf_size(const unsigned char *img)
{
    Elf64_Ehdr e; /* copied: images need not be aligned */
    memcpy(&e, img, sizeof e);
    if (memcmp(e.e_ident, ELFMAG, SELFMAG) || e.e_ident[EI_CLASS] != ELFCLASS64 || e.e_type != ET_DYN)
        return 0;
    size_t end = (size_t)e.e_shoff + (size_t)e.e_shnum * e.e_shentsize;
    size_t ph = (size_t)e.e_phoff + (size_t)e.e_phnum * e.e_phentsize;
    if (ph > end)
        end = ph;
    if (e.e_phentsize == sizeof(Elf64_Phdr) && e.e_phnum < 256 && e.e_phoff < EMU_MAX_IMAGE)
        for (unsigned i = 0; i < e.e_phnum; i++) {
            Elf64_Phdr p;
            memcpy(&p, img + e.e_phoff + i * sizeof(Elf64_Phdr), sizeof p);
            if ((size_t)p.p_offset + p.p_filesz > end)
                end = (size_t)p.p_offset + p.p_filesz;
        }
    return end <= EMU_MAX_IMAGE ? end : 0;
}

static CUresult mod_open(CUmodule *m, const char *path)
{
    CUresult rc = CUDA_SUCCESS;
    CUcontext c = emu_ctx_need(&rc);
    if (!c)
        return rc;
    void *dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!dl) {
        fprintf(stderr, "cudaemu: module %s: %s\n", path, dlerror());
        return CUDA_ERROR_INVALID_IMAGE;
    }
    CUmodule mod = calloc(1, sizeof *mod);
    if (!mod) {
        dlclose(dl);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    mod->magic = EMU_MOD_MAGIC;
    mod->dl = dl;
    mod->ctx = c;
    *m = mod;
    return CUDA_SUCCESS;
}

EMU_API CUresult CUDAAPI cuModuleLoad(CUmodule *module, const char *fname)
{
    if (!module || !fname)
        return CUDA_ERROR_INVALID_VALUE;
    if (access(fname, R_OK))
        return CUDA_ERROR_FILE_NOT_FOUND;
    return mod_open(module, fname);
}

EMU_API CUresult CUDAAPI cuModuleLoadData(CUmodule *module, const void *image)
{
    if (!module || !image)
        return CUDA_ERROR_INVALID_VALUE;
    size_t n = elf_size(image);
    if (!n)
        return CUDA_ERROR_INVALID_IMAGE;
    int fd = memfd_create("cudaemu-module", MFD_CLOEXEC);
    if (fd < 0)
        return CUDA_ERROR_OPERATING_SYSTEM;
    size_t done = 0;
    while (done < n) {
        ssize_t w = write(fd, (const char *)image + done, n - done);
        if (w <= 0) {
            close(fd);
            return CUDA_ERROR_OPERATING_SYSTEM;
        }
        done += (size_t)w;
    }
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    CUresult rc = mod_open(module, path);
    close(fd); /* the mapping keeps the image */
    return rc;
}

EMU_API CUresult CUDAAPI cuModuleLoadDataEx(CUmodule *module, const void *image, unsigned int numOptions,
                                            CUjit_option *options, void **optionValues)
{
    (void)numOptions, (void)options, (void)optionValues; /* JIT options mean nothing here */
    return cuModuleLoadData(module, image);
}

EMU_API CUresult CUDAAPI cuModuleUnload(CUmodule hmod)
{
    if (!hmod || hmod->magic != EMU_MOD_MAGIC)
        return CUDA_ERROR_INVALID_HANDLE;
    emu_ctx_sync(hmod->ctx); /* no kernel of it may still run */
    pthread_mutex_lock(&fn_lock);
    for (struct CUfunc_st **pp = &funcs; *pp;) {
        if ((*pp)->mod == hmod) {
            struct CUfunc_st *f = *pp;
            *pp = f->next;
            f->magic = 0;
            free(f);
        } else {
            pp = &(*pp)->next;
        }
    }
    pthread_mutex_unlock(&fn_lock);
    hmod->magic = 0;
    dlclose(hmod->dl);
    free(hmod);
    return CUDA_SUCCESS;
}

EMU_API CUresult CUDAAPI cuModuleGetFunction(CUfunction *hfunc, CUmodule hmod, const char *name)
{
    if (!hfunc || !name || !hmod || hmod->magic != EMU_MOD_MAGIC)
        return hmod && hmod->magic != EMU_MOD_MAGIC ? CUDA_ERROR_INVALID_HANDLE : CUDA_ERROR_INVALID_VALUE;
    char pname[256];
    if (snprintf(pname, sizeof pname, CUDAEMU_PARAMS_PREFIX "%s", name) >= (int)sizeof pname)
        return CUDA_ERROR_NOT_FOUND;
    void *fn = dlsym(hmod->dl, name);
    const unsigned *ps = dlsym(hmod->dl, pname);
    if (!fn || !ps || ps[0] > CUDAEMU_MAX_PARAMS)
        return CUDA_ERROR_NOT_FOUND;
    struct CUfunc_st *f = calloc(1, sizeof *f);
    if (!f)
        return CUDA_ERROR_OUT_OF_MEMORY;
    f->magic = EMU_FN_MAGIC;
    f->fn = (cudaemu_kernel_fn *)fn;
    f->mod = hmod;
    f->nparams = ps[0];
    size_t off = 0;
    for (unsigned i = 0; i < f->nparams; i++) {
        size_t sz = ps[1 + i], al = sz >= 8 ? 8 : sz ? sz : 1;
        while (al & (al - 1))
            al++; /* sizes like 3 align to 4 */
        off = (off + al - 1) / al * al;
        f->off[i] = off;
        f->size[i] = sz;
        off += sz;
    }
    f->total = off;
    if (off > CUDAEMU_MAX_PARAM_BYTES) {
        free(f);
        return CUDA_ERROR_INVALID_IMAGE;
    }
    pthread_mutex_lock(&fn_lock);
    f->next = funcs;
    funcs = f;
    pthread_mutex_unlock(&fn_lock);
    *hfunc = f;
    return CUDA_SUCCESS;
}

EMU_API CUresult CUDAAPI cuFuncGetParamInfo(CUfunction func, size_t paramIndex, size_t *paramOffset,
                                            size_t *paramSize)
{
    if (!func || func->magic != EMU_FN_MAGIC)
        return CUDA_ERROR_INVALID_HANDLE;
    if (paramIndex >= func->nparams)
        return CUDA_ERROR_INVALID_VALUE;
    if (paramOffset)
        *paramOffset = func->off[paramIndex];
    if (paramSize)
        *paramSize = func->size[paramIndex];
    return CUDA_SUCCESS;
}

typedef struct {
    cudaemu_kernel_fn *fn;
    cudaemu_launch_t l;
    void *argv[CUDAEMU_MAX_PARAMS];
    unsigned char buf[CUDAEMU_MAX_PARAM_BYTES];
} emu_launch_t;

static void *kernel_dev(uint64_t p, size_t n)
{
    int is_dev, dev;
    CUresult rc;
    if (!p)
        return NULL;
    void *v = emu_xlate((uintptr_t)p, n ? n : 1, &is_dev, &dev, &rc);
    return v; /* device memory: its shadow; pinned/pageable host memory as is */
}

static void run_launch(void *arg)
{
    emu_launch_t *k = arg;
    k->fn(&k->l, k->argv);
    free(k);
}

EMU_API CUresult CUDAAPI cuLaunchKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
                                        unsigned int gridDimZ, unsigned int blockDimX, unsigned int blockDimY,
                                        unsigned int blockDimZ, unsigned int sharedMemBytes, CUstream hStream,
                                        void **kernelParams, void **extra)
{
    if (!f || f->magic != EMU_FN_MAGIC)
        return CUDA_ERROR_INVALID_HANDLE;
    if (!gridDimX || !gridDimY || !gridDimZ || !blockDimX || !blockDimY || !blockDimZ ||
        (uint64_t)blockDimX * blockDimY * blockDimZ > 1024)
        return CUDA_ERROR_INVALID_VALUE;
    emu_launch_t *k = calloc(1, sizeof *k);
    if (!k)
        return CUDA_ERROR_OUT_OF_MEMORY;
    k->fn = f->fn;
    k->l = (cudaemu_launch_t){{gridDimX, gridDimY, gridDimZ}, {blockDimX, blockDimY, blockDimZ}, sharedMemBytes,
                              kernel_dev};
    if (kernelParams) {
        for (unsigned i = 0; i < f->nparams; i++)
            memcpy(k->buf + f->off[i], kernelParams[i], f->size[i]);
    } else if (extra) {
        const void *pb = NULL;
        size_t pn = 0;
        for (int i = 0; i < 32 && extra[i] != CU_LAUNCH_PARAM_END; i += 2) {
            if (extra[i] == CU_LAUNCH_PARAM_BUFFER_POINTER)
                pb = extra[i + 1];
            else if (extra[i] == CU_LAUNCH_PARAM_BUFFER_SIZE)
                pn = *(const size_t *)extra[i + 1];
        }
        if ((!pb && f->total) || pn < f->total) {
            free(k);
            return CUDA_ERROR_INVALID_VALUE;
        }
        if (f->total)
            memcpy(k->buf, pb, f->total);
    } else if (f->nparams) {
        free(k);
        return CUDA_ERROR_INVALID_VALUE;
    }
    for (unsigned i = 0; i < f->nparams; i++)
        k->argv[i] = k->buf + f->off[i];
    CUresult rc = emu_enqueue_call(hStream, run_launch, k, 0);
    if (rc != CUDA_SUCCESS)
        free(k);
    return rc;
}

/* SPDX-License-Identifier: MIT */
/*
 * tests/gpu/fakes/fake_cuda_module.c — the CUDA test double loading modules
 * (see fake_cuda.h): what ember gives cuModuleLoadDataEx is read as a
 * driver reads it, and refused for the same reasons.
 *
 *   PTX (text)   `.version` above what the driver loads: CUDA_ERROR_UNSUPPORTED_PTX_VERSION;
 *                `.target` above the GPU's arch: CUDA_ERROR_INVALID_PTX
 *   a cubin      not a CUDA ELF: CUDA_ERROR_INVALID_IMAGE; made for another arch (a
 *                cubin runs on its own major arch, same or higher minor):
 *                CUDA_ERROR_NO_BINARY_FOR_GPU; made by a toolkit of a newer major
 *                version than the driver: CUDA_ERROR_UNSUPPORTED_PTX_VERSION
 *
 * with the reason in the JIT error log, as a driver writes it there. Then
 * the module's kernels are its entry points (PTX) or function symbols
 * (cubin), and the tuning it was compiled with is read from its
 * `ember_tuning` constant: the double runs the host build of the kernels
 * with that same tuning (fake_kernels_*), or refuses the module when it has
 * none (CUDA_ERROR_NOT_SUPPORTED).
 *
 * In PTX mode (EMBER_FAKE_CUDA_EXEC=ptx) the module's PTX is parsed by the
 * PTX simulator instead, and its kernels are what launches run; for a
 * cubin, the PTX that fake_nvrtc_keep.c kept for it. A module the
 * simulator cannot run is refused with its reason (CUDA_ERROR_INVALID_PTX),
 * never run some other way. EMBER_FAKE_CUDA_PTX=file runs that PTX in place
 * of whatever ember loads: the mutation tests' copies of the built-in PTX
 * with one thing changed.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../../ptxsim/ptxsim.h"
#include "fake_cuda.h"
#include "fake_elf.h"

typedef int CUjit_option;
typedef struct fake_module *CUmodule;
typedef struct fake_function *CUfunction;

static const struct fake_kernel_build *const builds[] = {&fake_kernels_default, &fake_kernels_cuda_nvrtc};

/* The names of a module's kernels and its tuning, read from the image. */
struct image {
    char names[FAKE_MAX_KERNELS][64];
    int count;
    int tuning[EMBER_KERNEL_TUNING_COUNT];
    bool has_tuning;
};

static void add_name(struct image *im, const char *name, size_t len)
{
    if (im->count < FAKE_MAX_KERNELS && len < sizeof im->names[0])
        snprintf(im->names[im->count++], sizeof im->names[0], "%.*s", (int)len, name);
}

/* ------------------------------------------------------------------ PTX */

/* `ember_tuning[N] = {...}` as bytes (.b8, what NVRTC and clang write) or as 32-bit words */
static void ptx_tuning(const char *ptx, struct image *im)
{
    const char *at = strstr(ptx, EMBER_KERNEL_TUNING_SYMBOL "[");
    if (!at)
        return;
    const char *line = at;
    while (line > ptx && line[-1] != '\n')
        line--;
    bool bytes = strstr(line, ".b8") && strstr(line, ".b8") < at;
    const char *p = strchr(at, '{');
    const char *end = p ? strchr(p, '}') : NULL;
    if (!p || !end)
        return;
    unsigned char raw[EMBER_KERNEL_TUNING_COUNT * 4] = {0};
    int n = 0;
    for (p++; p < end && n < (int)sizeof raw;) {
        char *next;
        long v = strtol(p, &next, 0);
        if (next == p)
            break;
        if (bytes) {
            raw[n++] = (unsigned char)v;
        } else {
            int word = (int)v;
            memcpy(raw + n, &word, 4);
            n += 4;
        }
        p = next;
        p += strspn(p, ", \t\n");
    }
    memcpy(im->tuning, raw, sizeof im->tuning);
    im->has_tuning = true;
}

static CUresult ptx_read(const char *ptx, int cc, struct image *im, char *log, size_t log_len)
{
    int major = 0, minor = 0, target = 0;
    const char *v = strstr(ptx, ".version ");
    const char *t = strstr(ptx, ".target sm_");
    if (!v || sscanf(v, ".version %d.%d", &major, &minor) != 2 || !t ||
        sscanf(t, ".target sm_%d", &target) != 1) {
        snprintf(log, log_len, "ptxas fatal   : the PTX has no .version or no .target");
        return FAKE_INVALID_PTX;
    }
    int isa = major * 10 + minor, driver_isa = fake_driver_ptx_isa();
    if (isa > driver_isa) {
        snprintf(log, log_len, "ptxas fatal   : Unsupported .version %d.%d; current version is '%d.%d'",
                 major, minor, driver_isa / 10, driver_isa % 10);
        return FAKE_UNSUPPORTED_PTX_VERSION;
    }
    if (target > cc) {
        snprintf(log, log_len,
                 "ptxas fatal   : SM version specified by .target (sm_%d) is higher than the GPU's (sm_%d)",
                 target, cc);
        return FAKE_INVALID_PTX;
    }
    for (const char *e = strstr(ptx, ".entry "); e; e = strstr(e + 1, ".entry ")) {
        const char *name = e + strlen(".entry ");
        add_name(im, name, strcspn(name, "( \n"));
    }
    ptx_tuning(ptx, im);
    return FAKE_SUCCESS;
}

/* ---------------------------------------------------------------- cubin */

/* The parts of a 64-bit little-endian ELF the double reads. */
struct elf {
    const unsigned char *data;
};

static uint16_t u16(const unsigned char *p) { return (uint16_t)(p[0] | p[1] << 8); }
static uint32_t u32(const unsigned char *p) { return (uint32_t)u16(p) | (uint32_t)u16(p + 2) << 16; }
static uint64_t u64(const unsigned char *p) { return (uint64_t)u32(p) | (uint64_t)u32(p + 4) << 32; }

struct section {
    uint32_t name, type, link;
    uint64_t offset, size, entsize;
};

static struct section section_at(const unsigned char *elf, int index)
{
    const unsigned char *h = elf + u64(elf + 0x28) + (size_t)index * u16(elf + 0x3a);
    return (struct section){.name = u32(h),
                            .type = u32(h + 4),
                            .offset = u64(h + 0x18),
                            .size = u64(h + 0x20),
                            .link = u32(h + 0x28),
                            .entsize = u64(h + 0x38)};
}

static const char *section_name(const unsigned char *elf, const struct section *s)
{
    struct section names = section_at(elf, u16(elf + 0x3e));
    return (const char *)elf + names.offset + s->name;
}

/* The CUDA toolkit that made the cubin, times ten (118 for 11.8): older
 * cubins (OS/ABI 0x33) say it in e_version, newer ones (0x41) in the
 * .note.nv.cuinfo note. */
static int cubin_toolkit(const unsigned char *elf)
{
    if (elf[7] == 0x33)
        return (int)u32(elf + 0x14);
    int sections = u16(elf + 0x3c);
    for (int i = 0; i < sections; i++) {
        struct section s = section_at(elf, i);
        if (strcmp(section_name(elf, &s), ".note.nv.cuinfo") == 0 && s.size >= 28) {
            const unsigned char *note = elf + s.offset;
            uint32_t name_size = (u32(note) + 3) & ~3u;
            return (int)u32(note + 12 + name_size + 4);
        }
    }
    return 0;
}

static CUresult cubin_read(const unsigned char *elf, int cc, struct image *im, char *log, size_t log_len)
{
    if (elf[4] != 2 || elf[5] != 1 || (elf[7] != 0x33 && elf[7] != 0x41) || u16(elf + 0x12) != 190) {
        snprintf(log, log_len, "not a CUDA cubin: an ELF with class %d, OS/ABI %#x, machine %d", elf[4],
                 elf[7], u16(elf + 0x12));
        return FAKE_INVALID_IMAGE;
    }
    uint32_t flags = u32(elf + 0x30);
    int sm = elf[7] == 0x33 ? (int)(flags & 0xff) : (int)(flags >> 8 & 0xff);
    if (sm / 10 != cc / 10 || sm % 10 > cc % 10) {
        snprintf(log, log_len, "no kernel image for this GPU: the cubin is for sm_%d, the GPU is sm_%d", sm,
                 cc);
        return FAKE_NO_BINARY_FOR_GPU;
    }
    int toolkit = cubin_toolkit(elf), driver = fake_driver_version();
    if (toolkit / 10 > driver / 1000) {
        snprintf(log, log_len,
                 "the cubin was made by CUDA %d.%d; this driver (CUDA %d.%d) runs cubins up to CUDA %d.x",
                 toolkit / 10, toolkit % 10, driver / 1000, driver % 1000 / 10, driver / 1000);
        return FAKE_UNSUPPORTED_PTX_VERSION;
    }
    int sections = u16(elf + 0x3c);
    for (int i = 0; i < sections; i++) {
        struct section symtab = section_at(elf, i);
        if (symtab.type != 2 || symtab.entsize < 24) /* SHT_SYMTAB */
            continue;
        struct section strtab = section_at(elf, (int)symtab.link);
        for (uint64_t off = 0; off + 24 <= symtab.size; off += symtab.entsize) {
            const unsigned char *sym = elf + symtab.offset + off;
            const char *name = (const char *)elf + strtab.offset + u32(sym);
            int type = sym[4] & 0xf, shndx = u16(sym + 6);
            if (type == 2) /* STT_FUNC */
                add_name(im, name, strlen(name));
            else if (type == 1 && strcmp(name, EMBER_KERNEL_TUNING_SYMBOL) == 0 && shndx > 0 &&
                     shndx < sections && u64(sym + 16) >= sizeof im->tuning) {
                struct section data = section_at(elf, shndx);
                memcpy(im->tuning, elf + data.offset + u64(sym + 8), sizeof im->tuning);
                im->has_tuning = true;
            }
        }
    }
    return FAKE_SUCCESS;
}

/* --------------------------------------------------------------- modules */

static const struct fake_kernel_build *build_for(const int *tuning)
{
    for (size_t i = 0; i < sizeof builds / sizeof builds[0]; i++)
        if (memcmp(builds[i]->tuning, tuning, sizeof builds[i]->tuning) == 0)
            return builds[i];
    return NULL;
}

static bool refused_by_setting(bool cubin)
{
    const char *refuse = getenv("EMBER_FAKE_CUDA_REFUSE");
    return refuse && (strcmp(refuse, "all") == 0 || strcmp(refuse, cubin ? "cubin" : "ptx") == 0);
}

static int max_threads_of(const char *kernel);

bool fake_exec_ptx(void)
{
    const char *mode = getenv("EMBER_FAKE_CUDA_EXEC");
    return mode && strcmp(mode, "ptx") == 0;
}

/* A whole file as a string to free; NULL with why in the log. */
static char *read_file(const char *path, char *log, size_t log_len)
{
    FILE *f = fopen(path, "rb");
    char *text = NULL;
    long n = -1;
    if (f && fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
        (text = malloc((size_t)n + 1)) && fread(text, 1, (size_t)n, f) == (size_t)n) {
        text[n] = '\0';
    } else {
        free(text);
        text = NULL;
        snprintf(log, log_len, "PTX mode: cannot read %s", path);
    }
    if (f)
        fclose(f);
    return text;
}

/* The PTX a cubin was assembled from, as fake_nvrtc_keep.c kept it: a
 * string to free, or NULL with why in the log. */
static char *kept_ptx(const unsigned char *cubin, char *log, size_t log_len)
{
    const char *dir = getenv("EMBER_FAKE_NVRTC_PTX_DIR");
    char path[1024];
    if (!dir || !*dir) {
        snprintf(log, log_len,
                 "PTX mode runs a cubin's PTX, and EMBER_FAKE_NVRTC_PTX_DIR does not say where "
                 "fake_nvrtc_keep.c kept it");
        return NULL;
    }
    fake_elf_ptx_path(dir, cubin, fake_elf_size(cubin), path, sizeof path);
    char *text = read_file(path, log, log_len);
    if (!text)
        snprintf(log, log_len,
                 "PTX mode: no PTX kept for this cubin (%s): was it made by an NVRTC other than "
                 "fake_nvrtc_keep.c?",
                 path);
    return text;
}

/* PTX mode: the module's kernels as the simulator runs them, each named
 * in the image and found in its PTX, with its parameters' sizes. */
static CUresult ptx_functions(struct fake_module *m, const void *image, bool cubin, const struct image *im,
                              char *log, size_t log_len)
{
    const char *instead = getenv("EMBER_FAKE_CUDA_PTX");
    char *kept = instead && *instead ? read_file(instead, log, log_len)
                 : cubin             ? kept_ptx(image, log, log_len)
                                     : NULL;
    if ((cubin || (instead && *instead)) && !kept)
        return FAKE_NOT_SUPPORTED;
    if (kept)
        cubin = true; /* what runs is the text read, not the image */
    char why[1024];
    m->ptx = ptxsim_module_parse(cubin ? kept : image, why, sizeof why);
    free(kept);
    if (!m->ptx) {
        snprintf(log, log_len, "the PTX simulator cannot run this module: %s", why);
        return FAKE_INVALID_PTX;
    }
    /* the kernels are the PTX's entries, each of which the image names (a cubin names
     * ptxas's helper functions as well) */
    for (int i = 0; i < ptxsim_module_kernel_count(m->ptx) && m->count < FAKE_MAX_KERNELS; i++) {
        struct fake_function *f = &m->functions[m->count];
        f->ptx = ptxsim_module_kernel_at(m->ptx, i);
        const char *name = ptxsim_kernel_name(f->ptx);
        int named = 0;
        while (named < im->count && strcmp(im->names[named], name) != 0)
            named++;
        if (named == im->count) {
            snprintf(log, log_len, "the PTX's kernel %s is not in the module ember loaded", name);
            return FAKE_INVALID_PTX;
        }
        int n = ptxsim_kernel_param_count(f->ptx);
        for (int p = 0; p < n && p < FAKE_MAX_ARGS; p++) {
            size_t at, size;
            ptxsim_kernel_param(f->ptx, p, &at, &size);
            if (size != 4 && size != 8) {
                snprintf(log, log_len, "kernel %s: parameter %d of %zu bytes: ember passes 4 and 8", name, p,
                         size);
                return FAKE_INVALID_PTX;
            }
            f->kinds[p] = size == 8 ? 'p' : 'i';
        }
        f->own = (struct fake_kernel){.name = ptxsim_kernel_name(f->ptx), .kinds = f->kinds};
        for (int k = 0; m->build && k < m->build->count && !f->host; k++)
            if (strcmp(m->build->kernels[k].name, name) == 0)
                f->host = &m->build->kernels[k];
        f->kernel = &f->own;
        f->module = m;
        f->max_threads = max_threads_of(name);
        m->count++;
    }
    return FAKE_SUCCESS;
}

/* EMBER_FAKE_CUDA_MAX_THREADS: "sgemm=128,reduce=64" */
static int max_threads_of(const char *kernel)
{
    const char *list = getenv("EMBER_FAKE_CUDA_MAX_THREADS");
    size_t len = strlen(kernel);
    for (const char *p = list; p && *p; p += strcspn(p, ","), p += *p == ',') {
        if (strncmp(p, kernel, len) == 0 && p[len] == '=')
            return atoi(p + len + 1);
    }
    return FAKE_MAX_THREADS_PER_BLOCK;
}

CUresult fake_module_load(struct fake_ctx *c, const void *image, char *log, size_t log_len,
                          struct fake_module **out)
{
    char name[256];
    int cc = 0;
    fake_gpu(c->device, &cc, name, sizeof name);
    struct image im = {0};
    bool cubin = memcmp(image,
                        "\x7f"
                        "ELF",
                        4) == 0;
    CUresult r = cubin ? cubin_read(image, cc, &im, log, log_len) : ptx_read(image, cc, &im, log, log_len);
    if (r == FAKE_SUCCESS && refused_by_setting(cubin)) {
        snprintf(log, log_len, "refused: EMBER_FAKE_CUDA_REFUSE=%s", getenv("EMBER_FAKE_CUDA_REFUSE"));
        r = cubin ? FAKE_INVALID_IMAGE : FAKE_INVALID_PTX;
    }
    const struct fake_kernel_build *build = NULL;
    bool ptx = fake_exec_ptx();
    if (r == FAKE_SUCCESS && !im.has_tuning) {
        snprintf(log, log_len, "the module has no %s constant: the test double cannot tell its tuning",
                 EMBER_KERNEL_TUNING_SYMBOL);
        r = FAKE_NOT_SUPPORTED;
    } else if (r == FAKE_SUCCESS && !(build = build_for(im.tuning)) && !ptx) {
        snprintf(
            log, log_len,
            "the test double has no host build of the kernels for this module's tuning (wg_size %d, tile "
            "%dx%dx%d): see tests/gpu/fakes/gen-host-kernels.c",
            im.tuning[0], im.tuning[1], im.tuning[2], im.tuning[3]);
        r = FAKE_NOT_SUPPORTED;
    }
    struct fake_module *m = r == FAKE_SUCCESS ? calloc(1, sizeof *m) : NULL;
    if (r == FAKE_SUCCESS && !m)
        r = FAKE_OUT_OF_MEMORY;
    if (r != FAKE_SUCCESS) {
        fake_say("cuModuleLoadDataEx: %s", log);
        return r;
    }
    m->ctx = c;
    m->build = build;
    if (ptx && (r = ptx_functions(m, image, cubin, &im, log, log_len)) != FAKE_SUCCESS) {
        fake_say("cuModuleLoadDataEx: %s", log);
        ptxsim_module_free(m->ptx);
        free(m);
        return r;
    }
    m->next = c->modules; /* the context frees its modules when it goes */
    c->modules = m;
    for (int i = 0; build && !ptx && i < im.count; i++)
        for (int k = 0; k < build->count; k++)
            if (strcmp(build->kernels[k].name, im.names[i]) == 0) {
                struct fake_function *f = &m->functions[m->count++];
                f->module = m;
                f->kernel = &build->kernels[k];
                f->max_threads = max_threads_of(im.names[i]);
            }
    /* the tuning constant, where cuModuleGetGlobal finds it: in device memory */
    if ((r = fake_memory_alloc(c, sizeof im.tuning, &m->tuning_global)) != FAKE_SUCCESS) {
        c->modules = m->next;
        ptxsim_module_free(m->ptx);
        free(m);
        return r;
    }
    memcpy((void *)(uintptr_t)m->tuning_global, im.tuning, sizeof im.tuning);
    *out = m;
    return FAKE_SUCCESS;
}

void fake_module_unload(struct fake_module *m)
{
    fake_memory_free(m->ctx, m->tuning_global);
    m->unloaded = true; /* its functions are refused from now on; the record stays until the context goes */
}

void fake_module_free_all(struct fake_ctx *c)
{
    while (c->modules) {
        struct fake_module *m = c->modules;
        c->modules = m->next;
        ptxsim_module_free(m->ptx);
        free(m);
    }
}

/* -------------------------------------------------------- the driver API */

CUresult cuModuleLoadDataEx(CUmodule *module, const void *image, unsigned int n, CUjit_option *options,
                            void **values)
{
    struct fake_ctx *c = fake_current();
    if (!c)
        return FAKE_INVALID_CONTEXT;
    if (!image || !module)
        return FAKE_INVALID_VALUE;
    char scratch[1024] = "", *log = scratch;
    size_t log_len = sizeof scratch;
    for (unsigned i = 0; i < n; i++) { /* CU_JIT_ERROR_LOG_BUFFER and its size */
        if (options[i] == 5)
            log = values[i];
        else if (options[i] == 6)
            log_len = (size_t)values[i];
    }
    if (log != scratch && log_len == 0)
        log = scratch, log_len = sizeof scratch;
    log[0] = '\0';
    return fake_module_load(c, image, log, log_len, module);
}

CUresult cuModuleUnload(CUmodule m)
{
    if (!m || m->unloaded)
        return FAKE_INVALID_HANDLE;
    CUresult r = fake_ctx_drain(m->ctx);
    fake_module_unload(m);
    return r;
}

CUresult cuModuleGetFunction(CUfunction *f, CUmodule m, const char *name)
{
    if (!m || m->unloaded)
        return FAKE_INVALID_HANDLE;
    for (int i = 0; i < m->count; i++)
        if (strcmp(m->functions[i].kernel->name, name) == 0) {
            *f = &m->functions[i];
            return FAKE_SUCCESS;
        }
    return FAKE_NOT_FOUND;
}

CUresult cuModuleGetGlobal_v2(CUdeviceptr *ptr, size_t *bytes, CUmodule m, const char *name)
{
    if (!m || m->unloaded)
        return FAKE_INVALID_HANDLE;
    if (strcmp(name, EMBER_KERNEL_TUNING_SYMBOL) != 0)
        return FAKE_NOT_FOUND;
    if (ptr)
        *ptr = m->tuning_global;
    if (bytes)
        *bytes = EMBER_KERNEL_TUNING_COUNT * sizeof(int);
    return FAKE_SUCCESS;
}

CUresult cuFuncGetAttribute(int *value, int attribute, CUfunction f)
{
    if (!f || f->module->unloaded)
        return FAKE_INVALID_HANDLE;
    if (attribute != 0) /* CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, the one ember asks */
        return FAKE_INVALID_VALUE;
    *value = f->max_threads;
    return FAKE_SUCCESS;
}

/* Each parameter at the next multiple of its size, as the CUDA ABI lays them out. */
CUresult cuFuncGetParamInfo(CUfunction f, size_t index, size_t *offset, size_t *size)
{
    if (!f || f->module->unloaded)
        return FAKE_INVALID_HANDLE;
    const char *kinds = f->kernel->kinds;
    if (index >= strlen(kinds))
        return FAKE_INVALID_VALUE;
    size_t at = 0;
    for (size_t i = 0;; i++) {
        size_t bytes = kinds[i] == 'p' ? 8 : 4;
        at = (at + bytes - 1) / bytes * bytes;
        if (i == index) {
            if (offset)
                *offset = at;
            if (size)
                *size = bytes;
            return FAKE_SUCCESS;
        }
        at += bytes;
    }
}

/* SPDX-License-Identifier: MIT */
/*
 * backends/kernels/kernels.c — programs assembled from the kernel sources
 * (see kernels.h): the embedded copies kernels.cmake generates, or the
 * files under $EMBER_KERNEL_DIR.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "kernels.h"
#include "text-impl.h"

/* from kernels-embedded.c, generated at build time */
struct ember_kernel_embedded {
    const char *name;
    const char *text;
};
extern const struct ember_kernel_embedded ember_kernel_embedded_files[];
extern const int ember_kernel_embedded_count;

#define NAME_ENTRY(NAME, name, what) #name,
static const char *const dialect_names[] = {EMBER_KERNEL_DIALECTS(NAME_ENTRY)};
static const char *const family_names[] = {EMBER_KERNEL_FAMILIES(NAME_ENTRY)};
#undef NAME_ENTRY
#define WHAT_ENTRY(NAME, name, what) what,
static const char *const dialect_what[] = {EMBER_KERNEL_DIALECTS(WHAT_ENTRY)};
#undef WHAT_ENTRY

/* what comes before the shared helpers in each dialect */
static const char *const dialect_files[EMBER_DIALECT_COUNT][2] = {
    [EMBER_DIALECT_OPENCL] = {"prelude-opencl.kh", NULL},
    [EMBER_DIALECT_CUDA] = {"prelude-cuda.kh", NULL},
    [EMBER_DIALECT_NVPTX] = {"prelude-nvptx.kh", "softmath.kh"},
    [EMBER_DIALECT_HOST] = {"prelude-host.kh", "softmath.kh"},
};

const char *ember_kernel_dialect_name(enum ember_kernel_dialect dialect)
{
    return dialect < EMBER_DIALECT_COUNT ? dialect_names[dialect] : "unknown";
}

const char *ember_kernel_family_name(enum ember_kernel_family family)
{
    return family < EMBER_FAMILY_COUNT ? family_names[family] : "unknown";
}

const char *ember_kernel_embedded_file(const char *name)
{
    for (int i = 0; i < ember_kernel_embedded_count; i++)
        if (strcmp(ember_kernel_embedded_files[i].name, name) == 0)
            return ember_kernel_embedded_files[i].text;
    return NULL;
}

/* ------------------------------------------------------------- assembly */

/* Reads dir/name whole; NULL with the reason in why. */
static char *read_file(const char *dir, const char *name, char *why, size_t why_len)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "rb");
    struct ember_text t = {0};
    if (!f) {
        snprintf(why, why_len, "EMBER_KERNEL_DIR=%s: cannot open %s: %s", dir, name, strerror(errno));
        return NULL;
    }
    char chunk[8192];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
        ember_text_add(&t, chunk, n);
    bool read_error = ferror(f);
    fclose(f);
    if (read_error || t.failed || !t.s) {
        snprintf(why, why_len, "EMBER_KERNEL_DIR=%s: cannot read %s%s", dir, name,
                 t.failed     ? ": out of memory"
                 : read_error ? ""
                              : ": the file is empty");
        free(t.s);
        return NULL;
    }
    return t.s;
}

/* Appends one source file after a #line naming it; false with why. */
static bool add_file(struct ember_text *t, const char *name, char *why, size_t why_len)
{
    const char *dir = getenv("EMBER_KERNEL_DIR");
    char *from_disk = NULL;
    const char *body;
    if (dir && *dir) {
        if (!(body = from_disk = read_file(dir, name, why, why_len)))
            return false;
    } else if (!(body = ember_kernel_embedded_file(name))) {
        snprintf(why, why_len, "kernel source %s is not embedded in this build", name);
        return false;
    }
    ember_text_printf(t, "#line 1 \"%s\"\n", name);
    size_t len = strlen(body);
    ember_text_add(t, body, len);
    if (len == 0 || body[len - 1] != '\n')
        ember_text_add(t, "\n", 1);
    free(from_disk);
    return true;
}

/* The op codes of backends/backend.h and the quantised dtypes of
 * backends/quant.h, so that kernels switch on the same names (EMBER_RELU,
 * EMBER_MAX, EMBER_Q4_K) with the same values as the host; and the
 * rows of base/elementwise-impl.h as the four lists elementwise.kc's
 * functions are made of, each op's formula as the row spells it:
 *   EMBER_UNARY_SELECTS    out = op == EMBER_NEG ? (-x) : out; ...     the PLAIN unary ops
 *   EMBER_UNARY_MATH       case EMBER_EXP: return (EXPF(x)); ...       the MATH ones
 *   EMBER_BINARY_SELECTS, EMBER_BINARY_MATH   the same for the binary ops, in a and b,
 *                          and the activations' backward passes, in dy and x or y
 *   EMBER_UNARY_NEEDS_MATH(op), EMBER_BINARY_NEEDS_MATH(op)   whether op is a MATH one */
static void add_op_codes(struct ember_text *t)
{
    ember_text_printf(t, "#line 1 \"op codes from backends/backend.h\"\n");
#define OP_DEFINE(NAME, ...) ember_text_printf(t, "#define EMBER_%s %d\n", #NAME, (int)EMBER_##NAME);
#define BACKWARD_DEFINE(NAME, ...)                                                                           \
    ember_text_printf(t, "#define EMBER_%s_BACKWARD %d\n", #NAME, (int)EMBER_##NAME##_BACKWARD);
    EMBER_UNARY_PRIMITIVES(OP_DEFINE)
    EMBER_ACTIVATIONS(OP_DEFINE)
    EMBER_BINARY_PRIMITIVES(OP_DEFINE)
    EMBER_ACTIVATIONS(BACKWARD_DEFINE)
    EMBER_REDUCE_OPS(OP_DEFINE)
#undef OP_DEFINE
#undef BACKWARD_DEFINE
#define QUANT_DEFINE(NAME, elements, bytes)                                                                  \
    ember_text_printf(t, "#define EMBER_%s %d\n", #NAME, (int)EMBER_##NAME);
    EMBER_QUANT_TYPES(QUANT_DEFINE)
#undef QUANT_DEFINE

    ember_text_printf(t, "#line 1 \"the elementwise ops from base/elementwise-impl.h\"\n");
    for (int math = 0; math <= 1; math++) {
        const char *as_select = "    out = op == EMBER_%s ? (%s) : out; \\\n";
        const char *as_case = "    case EMBER_%s: return (%s); \\\n";
        const char *row = math ? as_case : as_select;
        ember_text_printf(t, "#define EMBER_UNARY_%s \\\n", math ? "MATH" : "SELECTS");
#define UNARY_ROW(NAME, name, f, fmath, ...)                                                                 \
    if (EMBER_ELEMENTWISE_##fmath == math)                                                                   \
        ember_text_printf(t, row, #NAME, #f);
#define ACTIVATION_ROW(NAME, name, param, f, fmath, ...) UNARY_ROW(NAME, name, f, fmath)
        EMBER_UNARY_PRIMITIVES(UNARY_ROW)
        EMBER_ACTIVATIONS(ACTIVATION_ROW)
        ember_text_printf(t, "\n#define EMBER_BINARY_%s \\\n", math ? "MATH" : "SELECTS");
#define BINARY_ROW(NAME, name, f, fmath)                                                                     \
    if (EMBER_ELEMENTWISE_##fmath == math)                                                                   \
        ember_text_printf(t, row, #NAME, #f);
#define BACKWARD_ROW(NAME, name, param, f, fmath, saves, g, gmath, ...)                                      \
    if (EMBER_ELEMENTWISE_##gmath == math)                                                                   \
        ember_text_printf(t, row, #NAME "_BACKWARD", #g);
        EMBER_BINARY_PRIMITIVES(BINARY_ROW)
        EMBER_ACTIVATIONS(BACKWARD_ROW)
        ember_text_printf(t, "\n");
#undef UNARY_ROW
#undef ACTIVATION_ROW
#undef BINARY_ROW
#undef BACKWARD_ROW
    }
    ember_text_printf(t, "#define EMBER_UNARY_NEEDS_MATH(op) (0");
    for (int op = 0; op < EMBER_UNARY_COUNT; op++)
        if (ember_unary_needs_math[op])
            ember_text_printf(t, " || (op) == %d", op);
    ember_text_printf(t, ")\n#define EMBER_BINARY_NEEDS_MATH(op) (0");
    for (int op = 0; op < EMBER_BINARY_COUNT; op++)
        if (ember_binary_needs_math[op])
            ember_text_printf(t, " || (op) == %d", op);
    ember_text_printf(t, ")\n");
}

/* The tuning the program is compiled with, as a constant in the module
 * (kernels.h: EMBER_KERNEL_TUNING_SYMBOL), from the -D values. */
static void add_tuning_constant(struct ember_text *t)
{
    ember_text_printf(t, "#line 1 \"the tuning, readable from the compiled module\"\n");
    ember_text_printf(t, "PROGRAM_CONSTANT int %s[%d] = {", EMBER_KERNEL_TUNING_SYMBOL,
                      EMBER_KERNEL_TUNING_COUNT);
#define VALUE_ENTRY(NAME, name, value, what) ember_text_printf(t, "%s, ", #NAME);
    EMBER_KERNEL_TUNING(VALUE_ENTRY)
#undef VALUE_ENTRY
    ember_text_printf(t, "};\n");
}

char *ember_kernel_program(enum ember_kernel_dialect dialect, unsigned families, char *why, size_t why_len)
{
    if (dialect >= EMBER_DIALECT_COUNT) {
        snprintf(why, why_len, "no kernel dialect %d", (int)dialect);
        return NULL;
    }
    struct ember_text t = {0};
    ember_text_printf(&t, "/* ember's kernels as %s */\n", dialect_what[dialect]);
    bool ok = true;
    for (int i = 0; ok && i < 2; i++)
        if (dialect_files[dialect][i])
            ok = add_file(&t, dialect_files[dialect][i], why, why_len);
    if (ok)
        add_op_codes(&t);
    ok = ok && add_file(&t, "common.kh", why, why_len);
    if (ok)
        add_tuning_constant(&t);
    for (int f = 0; ok && f < EMBER_FAMILY_COUNT; f++) {
        char name[64];
        snprintf(name, sizeof name, "%s.kc", family_names[f]);
        if (families & (1u << f))
            ok = add_file(&t, name, why, why_len);
    }
    if (ok && t.failed) {
        snprintf(why, why_len, "out of memory assembling the %s kernels", dialect_names[dialect]);
        ok = false;
    }
    if (!ok) {
        free(t.s);
        return NULL;
    }
    return t.s;
}

/* --------------------------------------------------------------- tuning */

struct ember_kernel_tuning ember_kernel_tuning_default(void)
{
    return (struct ember_kernel_tuning){
#define DEFAULT_ENTRY(NAME, name, value, what) .name = value,
        EMBER_KERNEL_TUNING(DEFAULT_ENTRY)
#undef DEFAULT_ENTRY
    };
}

void ember_kernel_tuning_values(const struct ember_kernel_tuning *t, int values[EMBER_KERNEL_TUNING_COUNT])
{
    int i = 0;
#define VALUE_ENTRY(NAME, name, value, what) values[i++] = t->name;
    EMBER_KERNEL_TUNING(VALUE_ENTRY)
#undef VALUE_ENTRY
}

int ember_kernel_gemm_threads(const struct ember_kernel_tuning *t)
{
    return (t->tile_m / t->reg_m) * (t->tile_n / t->reg_n);
}

size_t ember_kernel_gemm_local_bytes(const struct ember_kernel_tuning *t)
{
    return (size_t)t->tile_k * (size_t)(t->tile_m + t->tile_n) * sizeof(float);
}

static bool power_of_two(int x) { return x > 0 && (x & (x - 1)) == 0; }

bool ember_kernel_tuning_check(const struct ember_kernel_tuning *t, char *why, size_t why_len)
{
#define POSITIVE(NAME, name, value, what)                                                                    \
    if (t->name < 1 || t->name > 4096) {                                                                     \
        snprintf(why, why_len, "%s = %d is out of range (1 to 4096)", #NAME, t->name);                       \
        return false;                                                                                        \
    }
    EMBER_KERNEL_TUNING(POSITIVE)
#undef POSITIVE
    if (!power_of_two(t->wg_size)) {
        snprintf(why, why_len, "EMBER_WG_SIZE = %d is not a power of two", t->wg_size);
        return false;
    }
    if (t->wide_rows > 64 || t->wide_cols > 64 || t->run > 64 || t->wide_rows * t->wide_cols > 256) {
        snprintf(why, why_len, "the sgemm_wide block %dx%d or the run %d is too large", t->wide_rows,
                 t->wide_cols, t->run);
        return false;
    }
    if (t->tile_m % t->reg_m || t->tile_n % t->reg_n) {
        snprintf(why, why_len, "the sgemm tile %dx%d is not a multiple of the block %dx%d", t->tile_m,
                 t->tile_n, t->reg_m, t->reg_n);
        return false;
    }
    return true;
}

bool ember_kernel_tuning_parse(const char *text, struct ember_kernel_tuning *t, char *why, size_t why_len)
{
    const char *p = text;
    for (;;) {
        p += strspn(p, ", ");
        if (!*p)
            return true;
        size_t name_len = strcspn(p, "=, ");
        if (p[name_len] != '=') {
            snprintf(why, why_len, "\"%.*s\" is not name=value", (int)strcspn(p, ", "), p);
            return false;
        }
        char *end;
        errno = 0;
        long value = strtol(p + name_len + 1, &end, 10);
        if (errno || end == p + name_len + 1 || (*end && *end != ',' && *end != ' ') || value < 1 ||
            value > 4096) {
            snprintf(why, why_len, "%.*s needs a number from 1 to 4096", (int)name_len, p);
            return false;
        }
        int *field = NULL;
#define FIELD_MATCH(NAME, name, def, what)                                                                   \
    if (name_len == strlen(#name) && strncmp(p, #name, name_len) == 0)                                       \
        field = &t->name;
        EMBER_KERNEL_TUNING(FIELD_MATCH)
#undef FIELD_MATCH
        if (!field) {
            snprintf(why, why_len,
                     "unknown tuning value \"%.*s\" (known: wg_size, tile_m, tile_n, tile_k, reg_m, "
                     "reg_n, wide_rows, wide_cols, run)",
                     (int)name_len, p);
            return false;
        }
        *field = (int)value;
        p = end;
    }
}

bool ember_kernel_defines(const struct ember_kernel_tuning *t, char *out, size_t len)
{
    size_t used = 0;
    if (len)
        out[0] = '\0';
#define DEFINE_ENTRY(NAME, name, value, what)                                                                \
    {                                                                                                        \
        int n = snprintf(out + used, len - used, "%s-D%s=%d", used ? " " : "", #NAME, t->name);              \
        if (n < 0 || (size_t)n >= len - used)                                                                \
            return false;                                                                                    \
        used += (size_t)n;                                                                                   \
    }
    if (!len)
        return false;
    EMBER_KERNEL_TUNING(DEFINE_ENTRY)
#undef DEFINE_ENTRY
    return true;
}

/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test_checkpoint.c — safetensors checkpoints: round trips, strict
 * matching against the parameter set, atomic saving, and malformed files of
 * every kind (each refused with the right status and a message, the
 * parameters untouched, no crash under ASan and UBSan).
 *
 * It is also the C half of tests/interop/test_checkpoint_interop.py, with the parameter
 * set of simplecnn (conv1.weight (16, 1, 3, 3), conv1.bias (16),
 * fc.weight (10, 3136), fc.bias (10)):
 *
 *   test_checkpoint write FILE VALUES   saves a seeded set to FILE, and its
 *                                       values to VALUES as raw little-endian
 *                                       F32, parameter after parameter
 *   test_checkpoint check FILE VALUES   loads FILE into the set and compares
 *                                       it with VALUES; exit 0 when equal
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#ifndef _WIN32
#include <sys/file.h> /* flock */
#endif
#include <sys/stat.h>
#include <unistd.h>

#include "params-impl.h"
#include "platform.h"
#include "safetensors-impl.h"
#include "test-util.h"

#define COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))

struct spec {
    const char *name;
    int ndim;
    int64_t shape[4];
};

/* small enough to truncate at every byte; conv1.bias leaves padding behind it */
static const struct spec small[] = {{"conv1.weight", 4, {4, 1, 3, 3}},
                                    {"conv1.bias", 1, {4}},
                                    {"fc.weight", 2, {10, 36}},
                                    {"fc.bias", 1, {10}}};
static const struct spec simplecnn[] = {{"conv1.weight", 4, {16, 1, 3, 3}},
                                        {"conv1.bias", 1, {16}},
                                        {"fc.weight", 2, {10, 3136}},
                                        {"fc.bias", 1, {10}}};
/* the set the hand-built files are loaded into: "a" (2, 3) and "b" (2) */
static const struct spec ab[] = {{"a", 2, {2, 3}}, {"b", 1, {2}}};

/* the metadata the interop test looks for, with everything JSON escapes */
#define NOTE "ember \"checkpoint\" \\ tab\there, newline\n, \xc3\xa9 \xe2\x9c\x93 \xf0\x9f\x98\x80"

/* A set of these parameters, uniform in [-1, 1) from `seed`; seed 0 leaves
 * them zero. */
static ember_params *make_set(ember_ctx *ctx, const struct spec *specs, int n, uint64_t seed)
{
    ember_params *p = ember_params_new(ctx);
    ember_rng rng = ember_rng_seed(seed);
    for (int i = 0; p && i < n; i++) {
        ember_tensor *t = ember_params_add(p, specs[i].name, specs[i].ndim, specs[i].shape);
        if (!t || (seed && ember_init_uniform(t, -1.0f, 1.0f, &rng) != EMBER_OK)) {
            fprintf(stderr, "make_set: %s\n", ember_last_error(ctx));
            ember_params_free(p);
            return NULL;
        }
    }
    return p;
}

/* every parameter's values, back to back in order (free them) */
static float *values_of(const ember_params *p, size_t *count)
{
    size_t n = (size_t)ember_params_numel(p), at = 0;
    float *v = malloc((n ? n : 1) * sizeof *v);
    for (int i = 0; v && i < ember_params_count(p); i++) {
        ember_tensor *t = ember_params_at(p, i);
        size_t k = (size_t)ember_tensor_numel(t);
        if (ember_tensor_read(t, v + at, k * sizeof *v) != EMBER_OK) {
            free(v);
            return NULL;
        }
        at += k;
    }
    if (count)
        *count = n;
    return v;
}

static void set_values(ember_params *p, const float *v)
{
    for (int i = 0; i < ember_params_count(p); i++) {
        ember_tensor *t = ember_params_at(p, i);
        size_t k = (size_t)ember_tensor_numel(t);
        ember_tensor_write(t, v, k * sizeof *v);
        v += k;
    }
}

static bool same_values(const ember_params *p, const float *want)
{
    size_t n;
    float *have = values_of(p, &n);
    bool same = have && memcmp(have, want, n * sizeof *have) == 0;
    free(have);
    return same;
}

/* the padding between parameters in the flat tensor is still zero */
static bool padding_is_zero(const ember_params *p)
{
    size_t used = (size_t)p->used;
    float *flat = malloc(used * sizeof *flat);
    char *owned = calloc(used, 1);
    bool zero = flat && owned && ember_tensor_read(p->flat, flat, used * sizeof *flat) == EMBER_OK;
    for (int i = 0; zero && i < p->count; i++)
        if (!p->items[i].buffer)
            memset(owned + p->items[i].value->offset, 1, (size_t)ember_tensor_numel(p->items[i].value));
    for (size_t i = 0; zero && i < used; i++)
        zero = owned[i] || flat[i] == 0.0f;
    free(flat);
    free(owned);
    return zero;
}

static unsigned char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    unsigned char *buf = NULL;
    long size;
    if (f && fseek(f, 0, SEEK_END) == 0 && (size = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
        (buf = malloc((size_t)size + 1)) && fread(buf, 1, (size_t)size, f) == (size_t)size) {
        *len = (size_t)size;
    } else {
        free(buf);
        buf = NULL;
    }
    if (f)
        fclose(f);
    return buf;
}

static void put_le64(unsigned char *b, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        b[i] = (unsigned char)(v >> (8 * i));
}

/* dir/name holding: the length of `json`, json, and data_len bytes 0, 1, 2, ... */
static const char *write_st(const char *dir, const char *name, const char *json, size_t data_len)
{
    size_t n = strlen(json);
    unsigned char *buf = malloc(8 + n + data_len);
    put_le64(buf, n);
    memcpy(buf + 8, json, n);
    for (size_t i = 0; i < data_len; i++)
        buf[8 + n + i] = (unsigned char)i;
    const char *path = test_write_file(dir, name, buf, 8 + n + data_len);
    free(buf);
    return path;
}

/* names in dir, and whether any looks like a left-over temporary file */
static int count_entries(const char *dir, bool *has_tmp)
{
    DIR *d = opendir(dir);
    int n = 0;
    *has_tmp = false;
    for (struct dirent *e; d && (e = readdir(d));) {
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
            n++;
            *has_tmp |= strstr(e->d_name, ".tmp.") != NULL;
        }
    }
    if (d)
        closedir(d);
    return n;
}

/* Loading `path` into p gives `want` and, when it fails, a message holding
 * `needle` and p's values still `before`. A load that succeeds is undone. */
static void check_load(ember_ctx *ctx, ember_params *p, const float *before, const char *path,
                       ember_status want, const char *needle, const char *what)
{
    ember_clear_error(ctx);
    ember_status st = ember_params_load(p, path);
    const char *msg = ember_last_error(ctx);
    CHECK(st == want, "%s: got %s (%s), wanted %s", what, ember_status_str(st), msg, ember_status_str(want));
    CHECK(st == EMBER_OK || (*msg && ember_last_status(ctx) == st), "%s: no message", what);
    CHECK(!needle || strstr(msg, needle), "%s: the message \"%s\" lacks \"%s\"", what, msg, needle);
    if (st != EMBER_OK)
        CHECK(same_values(p, before), "%s: a refused load changed the parameters", what);
    else
        set_values(p, before);
}

/* ------------------------------------------------------------ round trips */

static void test_round_trip(ember_ctx *ctx, const char *dir)
{
    ember_params *a = make_set(ctx, small, COUNT(small), 1);
    ember_params *b = make_set(ctx, small, COUNT(small), 2);
    CHECK(a && b, "make_set");
    if (!a || !b)
        goto done;
    char path[4096];
    snprintf(path, sizeof path, "%s/round.safetensors", dir);
    float *want = values_of(a, NULL);
    CHECK_OK(ctx, ember_params_save(a, path, NULL));
    CHECK(!same_values(b, want), "the sets should start different");
    CHECK_OK(ctx, ember_params_load(b, path));
    CHECK(same_values(b, want), "loaded values differ from the saved ones");
    CHECK(padding_is_zero(b), "loading wrote into the padding");

    /* the layout: declaration order, back to back, data 8-byte aligned */
    struct ember_safetensors st;
    CHECK_OK(ctx, ember_safetensors_open(ctx, path, &st));
    CHECK(st.count == COUNT(small) && st.data_start % 8 == 0, "%d entries, data at %llu", st.count,
          (unsigned long long)st.data_start);
    uint64_t at = 0;
    for (int i = 0; i < st.count && i < COUNT(small); i++) {
        const struct ember_safetensors_entry *e = &st.entries[i];
        CHECK(strcmp(e->name, small[i].name) == 0 && strcmp(e->dtype, "F32") == 0 && e->ndim == small[i].ndim,
              "entry %d is %s %s", i, e->name, e->dtype);
        CHECK(e->begin == at, "entry %d begins at %llu, not %llu", i, (unsigned long long)e->begin,
              (unsigned long long)at);
        at = e->end;
    }
    CHECK(at == st.data_bytes, "the data section has %llu bytes, the entries %llu",
          (unsigned long long)st.data_bytes, (unsigned long long)at);
    CHECK(ember_safetensors_find(&st, "fc.weight") && !ember_safetensors_find(&st, "fc"), "find");
    ember_safetensors_close(&st);

    /* an empty set round-trips too */
    ember_params *e1 = ember_params_new(ctx), *e2 = ember_params_new(ctx);
    snprintf(path, sizeof path, "%s/empty.safetensors", dir);
    CHECK_OK(ctx, ember_params_save(e1, path, NULL));
    CHECK_OK(ctx, ember_params_load(e2, path));
    ember_params_free(e1);
    ember_params_free(e2);
    free(want);
done:
    ember_params_free(a);
    ember_params_free(b);
}

/* Buffers (BatchNorm's running statistics) ride along with the parameters:
 * saved and loaded under their names, a scalar as shape [], but not counted
 * as parameters, given no gradient and left alone by the optimizer. */
static void test_buffers(ember_ctx *ctx, const char *dir)
{
    ember_params *p = ember_params_new(ctx), *q = ember_params_new(ctx);
    const int64_t c[1] = {3};
    ember_tensor *w = ember_params_add(p, "bn.weight", 1, c);
    ember_tensor *mean = ember_params_add_buffer(p, "bn.running_mean", 1, c);
    ember_tensor *count = ember_params_add_buffer(p, "bn.num_batches_tracked", 0, NULL);
    ember_tensor *b = ember_params_add(p, "bn.bias", 1, c); /* moves the parameters, not the buffers */
    CHECK(w && mean && count && b, "adding: %s", ember_last_error(ctx));
    if (!w || !mean || !count || !b)
        goto done;
    CHECK(ember_params_numel(p) == 6 && ember_params_count(p) == 4, "numel %lld, count %d",
          (long long)ember_params_numel(p), ember_params_count(p));
    CHECK(ember_params_is_buffer(p, 1) && ember_params_is_buffer(p, 2) && !ember_params_is_buffer(p, 3),
          "kinds");
    CHECK(!ember_tensor_requires_grad(mean) && !ember_tensor_grad(mean) && ember_tensor_ndim(count) == 0,
          "a buffer has no gradient");
    const float wv[3] = {1, 2, 3}, mv[3] = {0.5f, -1, 4}, nv = 7, bv[3] = {-1, -2, -3};
    CHECK_OK(ctx, ember_tensor_write(w, wv, sizeof wv));
    CHECK_OK(ctx, ember_tensor_write(mean, mv, sizeof mv));
    CHECK_OK(ctx, ember_tensor_write(count, &nv, sizeof nv));
    CHECK_OK(ctx, ember_tensor_write(b, bv, sizeof bv));

    /* a step with every gradient one moves the parameters only */
    ember_optim *opt = ember_sgd_new(p, ember_sgd_defaults(0.5f));
    const float ones[3] = {1, 1, 1};
    CHECK_OK(ctx, ember_tensor_write(ember_tensor_grad(w), ones, sizeof ones));
    CHECK_OK(ctx, ember_optim_step(opt));
    ember_optim_free(opt);
    float got[3], n = 0;
    CHECK_OK(ctx, ember_tensor_read(w, got, sizeof got));
    CHECK(got[0] == 0.5f && got[2] == 2.5f, "the step moved weight to %g %g", got[0], got[2]);
    CHECK_OK(ctx, ember_tensor_read(mean, got, sizeof got));
    CHECK(memcmp(got, mv, sizeof mv) == 0, "the step moved a buffer");

    char path[4096];
    snprintf(path, sizeof path, "%s/buffers.safetensors", dir);
    CHECK_OK(ctx, ember_params_save(p, path, NULL));
    struct ember_safetensors st;
    if (ember_safetensors_open(ctx, path, &st) == EMBER_OK) {
        const struct ember_safetensors_entry *e = ember_safetensors_find(&st, "bn.num_batches_tracked");
        CHECK(st.count == 4 && e && e->ndim == 0 && e->end - e->begin == 4, "the scalar buffer's entry");
        ember_safetensors_close(&st);
    } else {
        CHECK(false, "reopening: %s", ember_last_error(ctx));
    }
    ember_tensor *qw = ember_params_add(q, "bn.weight", 1, c);
    ember_tensor *qm = ember_params_add_buffer(q, "bn.running_mean", 1, c);
    ember_tensor *qn = ember_params_add_buffer(q, "bn.num_batches_tracked", 0, NULL);
    ember_tensor *qb = ember_params_add(q, "bn.bias", 1, c);
    CHECK(qw && qm && qn && qb, "the second set");
    CHECK_OK(ctx, ember_params_load(q, path));
    if (qm && qn && qb) {
        CHECK_OK(ctx, ember_tensor_read(qm, got, sizeof got));
        CHECK(memcmp(got, mv, sizeof mv) == 0, "running_mean did not round-trip");
        CHECK_OK(ctx, ember_tensor_read(qn, &n, sizeof n));
        CHECK(n == 7.0f, "num_batches_tracked is %g after loading", n);
        CHECK_OK(ctx, ember_tensor_read(qb, got, sizeof got));
        CHECK(memcmp(got, bv, sizeof bv) == 0, "bias did not round-trip");
    }
    /* a buffer of another shape is a mismatch like any other */
    ember_params *r = ember_params_new(ctx);
    const int64_t four[1] = {4};
    ember_params_add(r, "bn.weight", 1, c);
    ember_params_add_buffer(r, "bn.running_mean", 1, four);
    ember_params_add_buffer(r, "bn.num_batches_tracked", 0, NULL);
    ember_params_add(r, "bn.bias", 1, c);
    CHECK(ember_params_load(r, path) == EMBER_ERR_ARG && strstr(ember_last_error(ctx), "bn.running_mean"),
          "a mismatched buffer: %s", ember_last_error(ctx));
    ember_params_free(r);
done:
    ember_params_free(p);
    ember_params_free(q);
}

static void test_metadata(ember_ctx *ctx, const char *dir)
{
    ember_params *a = make_set(ctx, ab, COUNT(ab), 3);
    char path[4096];
    snprintf(path, sizeof path, "%s/meta.safetensors", dir);
    const char *const meta[] = {"epoch", "3", "note", NOTE, NULL};
    CHECK_OK(ctx, ember_params_save(a, path, meta));
    struct ember_safetensors st;
    CHECK_OK(ctx, ember_safetensors_open(ctx, path, &st));
    const char *format = ember_safetensors_meta_get(&st, "format"),
               *epoch = ember_safetensors_meta_get(&st, "epoch");
    const char *note = ember_safetensors_meta_get(&st, "note");
    CHECK(format && strcmp(format, "pt") == 0, "format is %s", format ? format : "missing");
    CHECK(epoch && strcmp(epoch, "3") == 0, "epoch is %s", epoch ? epoch : "missing");
    CHECK(note && strcmp(note, NOTE) == 0, "note is %s", note ? note : "missing");
    CHECK(st.meta_count == 3, "%d metadata pairs", st.meta_count);
    ember_safetensors_close(&st);

    /* the caller's own "format" wins */
    const char *const own[] = {"format", "ember", NULL};
    CHECK_OK(ctx, ember_params_save(a, path, own));
    CHECK_OK(ctx, ember_safetensors_open(ctx, path, &st));
    format = ember_safetensors_meta_get(&st, "format");
    CHECK(format && strcmp(format, "ember") == 0 && st.meta_count == 1, "format is %s",
          format ? format : "missing");
    ember_safetensors_close(&st);

    /* a key without a value, a repeated key, text that is not UTF-8: refused, no file */
    const char *const odd[] = {"epoch", "3", "lonely", NULL};
    const char *const twice[] = {"epoch", "3", "epoch", "4", NULL};
    const char *const latin1[] = {"note", "caf\xe9", NULL};
    const char *const *bad[] = {odd, twice, latin1};
    snprintf(path, sizeof path, "%s/never.safetensors", dir);
    for (int i = 0; i < COUNT(bad); i++) {
        ember_clear_error(ctx);
        CHECK(ember_params_save(a, path, bad[i]) == EMBER_ERR_ARG && *ember_last_error(ctx),
              "bad metadata %d", i);
        CHECK(access(path, F_OK) != 0, "bad metadata %d left a file", i);
    }
    ember_params_free(a);
}

/* A well-formed file that does not fit the set is EMBER_ERR_ARG naming the
 * tensor and both shapes, as PyTorch's strict load_state_dict. */
static void test_mismatch(ember_ctx *ctx, const char *dir)
{
    static const struct spec wider[] = {{"conv1.weight", 4, {5, 1, 3, 3}},
                                        {"conv1.bias", 1, {4}},
                                        {"fc.weight", 2, {10, 36}},
                                        {"fc.bias", 1, {10}}};
    static const struct spec flat_bias[] = {{"conv1.weight", 4, {4, 1, 3, 3}},
                                            {"conv1.bias", 2, {4, 1}},
                                            {"fc.weight", 2, {10, 36}},
                                            {"fc.bias", 1, {10}}};
    static const struct spec more[] = {{"conv1.weight", 4, {4, 1, 3, 3}},
                                       {"conv1.bias", 1, {4}},
                                       {"fc.weight", 2, {10, 36}},
                                       {"fc.bias", 1, {10}},
                                       {"fc2.bias", 1, {10}}};
    static const struct spec fewer[] = {
        {"conv1.weight", 4, {4, 1, 3, 3}}, {"conv1.bias", 1, {4}}, {"fc.weight", 2, {10, 36}}};
    static const struct {
        const struct spec *specs;
        int n;
        const char *needles[3];
    } cases[] = {
        {wider, COUNT(wider), {"size mismatch for conv1.weight", "(4, 1, 3, 3)", "(5, 1, 3, 3)"}},
        {flat_bias, COUNT(flat_bias), {"size mismatch for conv1.bias", "(4)", "(4, 1)"}},
        {more, COUNT(more), {"missing fc2.bias (10)", NULL, NULL}},
        {fewer, COUNT(fewer), {"unexpected fc.bias (10)", NULL, NULL}},
    };
    ember_params *a = make_set(ctx, small, COUNT(small), 4);
    char path[4096];
    snprintf(path, sizeof path, "%s/mismatch.safetensors", dir);
    CHECK_OK(ctx, ember_params_save(a, path, NULL));
    for (int i = 0; i < COUNT(cases); i++) {
        ember_params *p = make_set(ctx, cases[i].specs, cases[i].n, 5);
        float *before = values_of(p, NULL);
        for (int k = 0; k < 3; k++)
            if (cases[i].needles[k])
                check_load(ctx, p, before, path, EMBER_ERR_ARG, cases[i].needles[k], cases[i].needles[0]);
        free(before);
        ember_params_free(p);
    }
    ember_params_free(a);
}

/* --------------------------------------------------------- malformed files */

/* entries that fit the "ab" set with 32 bytes of data */
#define A_OK           "\"a\":{\"dtype\":\"F32\",\"shape\":[2,3],\"data_offsets\":[0,24]}"
#define B_OK           "\"b\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[24,32]}"
#define A_WITH(fields) "\"a\":{" fields "}"
#define ENTRY(name, dtype, shape, offsets)                                                                   \
    "\"" name "\":{\"dtype\":\"" dtype "\",\"shape\":[" shape "],\"data_offsets\":[" offsets "]}"
#define VALID "{" A_OK "," B_OK "}"

static const struct bad_header {
    const char *what;
    size_t data; /* bytes after the header */
    ember_status want;
    const char *needle; /* in the message */
    const char *json;
} bad_headers[] = {
    /* accepted spellings, to show the cases below fail for their reason */
    {"valid", 32, EMBER_OK, NULL, VALID},
    {"spaces and padding", 32, EMBER_OK, NULL, "{ " A_OK " ,\n\t" B_OK " }    "},
    {"metadata", 32, EMBER_OK, NULL, "{\"__metadata__\":{\"format\":\"pt\",\"x\":\"\"}," A_OK "," B_OK "}"},
    {"escaped name", 32, EMBER_OK, NULL,
     "{\"\\u0061\":{\"dtype\":\"F32\",\"shape\":[2,3],\"data_offsets\":[0,24]}," B_OK "}"},
    {"fields in any order", 32, EMBER_OK, NULL,
     "{" A_WITH("\"data_offsets\":[0,24],\"shape\":[2,3],\"dtype\":\"F32\"") "," B_OK "}"},
    /* JSON syntax */
    {"array at the top", 32, EMBER_ERR_FORMAT, "start with '{'", "[" A_OK "]"},
    {"space before the object", 32, EMBER_ERR_FORMAT, "start with '{'", " " VALID},
    {"bytes after the object", 32, EMBER_ERR_FORMAT, "after the header's JSON object", VALID "x"},
    {"two objects", 32, EMBER_ERR_FORMAT, "after the header's JSON object", VALID "{}"},
    {"unclosed object", 32, EMBER_ERR_FORMAT, "expected ',' or '}'", "{" A_OK "," B_OK},
    {"trailing comma", 32, EMBER_ERR_FORMAT, "expected a string", "{" A_OK "," B_OK ",}"},
    {"missing comma", 32, EMBER_ERR_FORMAT, "expected ',' or '}'", "{" A_OK B_OK "}"},
    {"missing colon", 32, EMBER_ERR_FORMAT, "expected ':'",
     "{\"a\"{\"dtype\":\"F32\",\"shape\":[2,3],\"data_offsets\":[0,24]}}"},
    {"trailing comma in an entry", 32, EMBER_ERR_FORMAT, "expected a string",
     "{" A_WITH("\"dtype\":\"F32\",\"shape\":[2,3],\"data_offsets\":[0,24],") "," B_OK "}"},
    {"unquoted key", 0, EMBER_ERR_FORMAT, "expected a string", "{a:1}"},
    {"single quotes", 0, EMBER_ERR_FORMAT, "expected a string", "{'a':1}"},
    {"unterminated string", 0, EMBER_ERR_FORMAT, "not terminated", "{\"a"},
    {"backslash at the end", 0, EMBER_ERR_FORMAT, "not terminated", "{\"a\\"},
    {"just a brace", 0, EMBER_ERR_FORMAT, "expected a string", "{"},
    {"entry is a number", 0, EMBER_ERR_FORMAT, "expected '{'", "{\"a\":5}"},
    {"entry is null", 0, EMBER_ERR_FORMAT, "expected '{'", "{\"a\":null}"},
    /* strings */
    {"unknown escape", 0, EMBER_ERR_FORMAT, "unknown escape", "{\"\\x\":{}}"},
    {"short \\u", 0, EMBER_ERR_FORMAT, "four hex digits", "{\"\\u12\":{}}"},
    {"bad hex", 0, EMBER_ERR_FORMAT, "four hex digits", "{\"\\u12G4\":{}}"},
    {"lone high surrogate", 0, EMBER_ERR_FORMAT, "high surrogate", "{\"\\ud800\":{}}"},
    {"high surrogate, wrong low", 0, EMBER_ERR_FORMAT, "high surrogate", "{\"\\ud800\\u0041\":{}}"},
    {"lone low surrogate", 0, EMBER_ERR_FORMAT, "low surrogate", "{\"\\udc00\":{}}"},
    {"escaped NUL", 0, EMBER_ERR_FORMAT, "NUL", "{\"a\\u0000\":{}}"},
    {"raw newline in a string", 0, EMBER_ERR_FORMAT, "control character", "{\"a\nb\":{}}"},
    {"invalid UTF-8 byte", 0, EMBER_ERR_FORMAT, "UTF-8", "{\"\xff\":{}}"},
    {"overlong UTF-8", 0, EMBER_ERR_FORMAT, "UTF-8", "{\"\xc0\xaf\":{}}"},
    {"UTF-8 surrogate", 0, EMBER_ERR_FORMAT, "UTF-8", "{\"\xed\xa0\x80\":{}}"},
    {"truncated UTF-8", 0, EMBER_ERR_FORMAT, "UTF-8", "{\"\xe2\x82\":{}}"},
    {"UTF-8 past U+10FFFF", 0, EMBER_ERR_FORMAT, "UTF-8", "{\"\xf4\x90\x80\x80\":{}}"},
    /* duplicates */
    {"duplicate tensor", 32, EMBER_ERR_FORMAT, "\"a\" appears twice", "{" A_OK "," A_OK "," B_OK "}"},
    {"duplicate field", 32, EMBER_ERR_FORMAT, "\"dtype\" twice",
     "{" A_WITH("\"dtype\":\"F32\",\"dtype\":\"F32\",\"shape\":[2,3],\"data_offsets\":[0,24]") "," B_OK "}"},
    {"duplicate metadata key", 32, EMBER_ERR_FORMAT, "\"k\" twice",
     "{\"__metadata__\":{\"k\":\"1\",\"k\":\"2\"}," A_OK "," B_OK "}"},
    {"two metadata objects", 32, EMBER_ERR_FORMAT, "appears twice",
     "{\"__metadata__\":{},\"__metadata__\":{}," A_OK "," B_OK "}"},
    /* structure */
    {"metadata value is a number", 32, EMBER_ERR_FORMAT, "not a string",
     "{\"__metadata__\":{\"k\":1}," A_OK "," B_OK "}"},
    {"metadata value is an object", 32, EMBER_ERR_FORMAT, "not a string",
     "{\"__metadata__\":{\"k\":{\"x\":\"y\"}}," A_OK "," B_OK "}"},
    {"metadata is a string", 32, EMBER_ERR_FORMAT, "expected '{'",
     "{\"__metadata__\":\"pt\"," A_OK "," B_OK "}"},
    {"unknown field", 32, EMBER_ERR_FORMAT, "unknown field \"extra\"",
     "{" A_WITH("\"dtype\":\"F32\",\"shape\":[2,3],\"data_offsets\":[0,24],\"extra\":1") "," B_OK "}"},
    {"no dtype", 32, EMBER_ERR_FORMAT, "no \"dtype\"",
     "{" A_WITH("\"shape\":[2,3],\"data_offsets\":[0,24]") "," B_OK "}"},
    {"no shape", 32, EMBER_ERR_FORMAT, "no \"shape\"",
     "{" A_WITH("\"dtype\":\"F32\",\"data_offsets\":[0,24]") "," B_OK "}"},
    {"no offsets", 32, EMBER_ERR_FORMAT, "no \"data_offsets\"",
     "{" A_WITH("\"dtype\":\"F32\",\"shape\":[2,3]") "," B_OK "}"},
    {"empty entry", 32, EMBER_ERR_FORMAT, "no \"dtype\"", "{\"a\":{}," B_OK "}"},
    {"dtype is a number", 32, EMBER_ERR_FORMAT, "expected a string",
     "{" A_WITH("\"dtype\":32,\"shape\":[2,3],\"data_offsets\":[0,24]") "," B_OK "}"},
    {"shape is a number", 32, EMBER_ERR_FORMAT, "expected '['",
     "{" A_WITH("\"dtype\":\"F32\",\"shape\":6,\"data_offsets\":[0,24]") "," B_OK "}"},
    {"nested shape", 32, EMBER_ERR_FORMAT, "non-negative integer",
     "{" A_WITH("\"dtype\":\"F32\",\"shape\":[[2],3],\"data_offsets\":[0,24]") "," B_OK "}"},
    {"shape with a trailing comma", 32, EMBER_ERR_FORMAT, "non-negative integer",
     "{" ENTRY("a", "F32", "2,3,", "0,24") "," B_OK "}"},
    {"17 dimensions", 32, EMBER_ERR_FORMAT, "more than 16",
     "{" ENTRY("a", "F32", "1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,2,3", "0,24") "," B_OK "}"},
    {"three offsets", 32, EMBER_ERR_FORMAT, "more than 2",
     "{" ENTRY("a", "F32", "2,3", "0,24,24") "," B_OK "}"},
    {"one offset", 32, EMBER_ERR_FORMAT, "[begin, end]", "{" ENTRY("a", "F32", "2,3", "24") "," B_OK "}"},
    /* numbers */
    {"negative dimension", 32, EMBER_ERR_FORMAT, "negative",
     "{" ENTRY("a", "F32", "-2,-3", "0,24") "," B_OK "}"},
    {"negative offset", 32, EMBER_ERR_FORMAT, "negative", "{" ENTRY("a", "F32", "2,3", "-0,24") "," B_OK "}"},
    {"fraction", 32, EMBER_ERR_FORMAT, "not an integer", "{" ENTRY("a", "F32", "2.0,3", "0,24") "," B_OK "}"},
    {"exponent", 32, EMBER_ERR_FORMAT, "not an integer",
     "{" ENTRY("a", "F32", "2,3", "0,2.4e1") "," B_OK "}"},
    {"leading zero", 32, EMBER_ERR_FORMAT, "leading zero",
     "{" ENTRY("a", "F32", "02,3", "0,24") "," B_OK "}"},
    {"number as a string", 32, EMBER_ERR_FORMAT, "non-negative integer",
     "{" ENTRY("a", "F32", "\"2\",3", "0,24") "," B_OK "}"},
    {"2^64", 32, EMBER_ERR_FORMAT, "over 2^64",
     "{" ENTRY("a", "F32", "2,3", "0,18446744073709551616") "," B_OK "}"},
    /* dtypes */
    {"unknown dtype", 32, EMBER_ERR_FORMAT, "unknown dtype \"F17\"",
     "{" ENTRY("a", "F17", "2,3", "0,24") "," B_OK "}"},
    {"lower-case dtype", 32, EMBER_ERR_FORMAT, "unknown dtype",
     "{" ENTRY("a", "f32", "2,3", "0,24") "," B_OK "}"},
    /* PyTorch's other dtypes load as float32 (F16, BF16, F64 and the
     * integers); what float32 cannot hold, or a dtype it does not convert, is refused */
    {"F16", 20, EMBER_OK, NULL, "{" ENTRY("a", "F16", "2,3", "0,12") "," ENTRY("b", "F32", "2", "12,20") "}"},
    {"BF16", 28, EMBER_OK, NULL, "{" A_OK "," ENTRY("b", "BF16", "2", "24,28") "}"},
    {"F64", 56, EMBER_OK, NULL, "{" ENTRY("a", "F64", "2,3", "0,48") "," ENTRY("b", "F32", "2", "48,56") "}"},
    {"I32 past 2^24", 32, EMBER_ERR_FORMAT,
     "\"a\" (I32) holds at index 0 a value that float32 cannot hold exactly",
     "{" ENTRY("a", "I32", "2,3", "0,24") "," B_OK "}"},
    {"U8", 14, EMBER_ERR_FORMAT, "\"a\" is U8; ember loads F32, F16, BF16, F64, I64 and I32",
     "{" ENTRY("a", "U8", "2,3", "0,6") "," ENTRY("b", "F32", "2", "6,14") "}"},
    /* offsets */
    {"size disagrees with shape", 28, EMBER_ERR_FORMAT, "24 bytes, but its data_offsets [0, 20] hold 20",
     "{" ENTRY("a", "F32", "2,3", "0,20") "," ENTRY("b", "F32", "2", "20,28") "}"},
    {"end before begin", 32, EMBER_ERR_FORMAT, "end before they begin",
     "{" ENTRY("a", "F32", "2,3", "24,0") "," B_OK "}"},
    {"past the data", 32, EMBER_ERR_FORMAT, "past the end of the data section",
     "{" A_OK "," ENTRY("b", "F32", "4", "24,40") "}"},
    {"offset 2^64 - 1", 32, EMBER_ERR_FORMAT, "past the end of the data section",
     "{" ENTRY("a", "F32", "2,3", "18446744073709551591,18446744073709551615") "," B_OK "}"},
    {"overlap", 24, EMBER_ERR_FORMAT, "overlap", "{" A_OK "," ENTRY("b", "F32", "2", "16,24") "}"},
    {"same bytes twice", 24, EMBER_ERR_FORMAT, "overlap", "{" A_OK "," ENTRY("b", "F32", "2", "0,8") "}"},
    {"gap", 36, EMBER_ERR_FORMAT, "belong to no tensor", "{" A_OK "," ENTRY("b", "F32", "2", "28,36") "}"},
    {"gap at the start", 40, EMBER_ERR_FORMAT, "belong to no tensor",
     "{" ENTRY("a", "F32", "2,3", "8,32") "," ENTRY("b", "F32", "2", "32,40") "}"},
    {"bytes after the data", 40, EMBER_ERR_FORMAT, "8 bytes after the last tensor", VALID},
    {"huge shape", 32, EMBER_ERR_FORMAT, "too large to exist",
     "{" ENTRY("a", "F32", "4294967296,4294967296,4294967296", "0,24") "," B_OK "}"},
    {"huge shape, bytes overflow", 32, EMBER_ERR_FORMAT, "too large to exist",
     "{" ENTRY("a", "F32", "4611686018427387904", "0,24") "," B_OK "}"},
    {"huge shape, offsets to match", 32, EMBER_ERR_FORMAT, "past the end",
     "{" ENTRY("a", "F32", "1000000000000", "0,4000000000000") "," B_OK "}"},
    /* well formed, but not this set */
    {"empty header", 0, EMBER_ERR_ARG, "missing a (2, 3); missing b (2)", "{}"},
    {"empty header, padded", 0, EMBER_ERR_ARG, "missing a", "{}      "},
    {"other name", 32, EMBER_ERR_ARG, "missing b (2); unexpected c (2)",
     "{" A_OK "," ENTRY("c", "F32", "2", "24,32") "}"},
    {"transposed", 32, EMBER_ERR_ARG, "size mismatch for a: the file has (3, 2), the parameter is (2, 3)",
     "{" ENTRY("a", "F32", "3,2", "0,24") "," B_OK "}"},
    {"scalar", 28, EMBER_ERR_ARG, "the file has (), the parameter is (2)",
     "{" A_OK "," ENTRY("b", "F32", "", "24,28") "}"},
    {"surrogate pair name", 32, EMBER_ERR_ARG, "unexpected \xf0\x9f\x98\x80 (0)",
     "{" A_OK "," B_OK ",\"\\ud83d\\ude00\":{\"dtype\":\"F32\",\"shape\":[0],\"data_offsets\":[32,32]}}"},
};

static void test_malformed(ember_ctx *ctx, const char *dir)
{
    ember_params *p = make_set(ctx, ab, COUNT(ab), 6);
    float *before = values_of(p, NULL);
    for (int i = 0; i < COUNT(bad_headers); i++) {
        const struct bad_header *c = &bad_headers[i];
        const char *path = write_st(dir, "bad.safetensors", c->json, c->data);
        check_load(ctx, p, before, path, c->want, c->needle, c->what);
    }

    /* the valid file's data are the bytes 0, 1, 2, ..., read as little-endian floats */
    const char *path = write_st(dir, "valid.safetensors", VALID, 32);
    CHECK_OK(ctx, ember_params_load(p, path));
    float want[8];
    for (int i = 0; i < 8; i++) {
        uint32_t u = (uint32_t)(4 * i) | (uint32_t)(4 * i + 1) << 8 | (uint32_t)(4 * i + 2) << 16 |
                     (uint32_t)(4 * i + 3) << 24;
        memcpy(&want[i], &u, 4);
    }
    CHECK(same_values(p, want), "the bytes of a hand-built file did not load as little-endian floats");
    set_values(p, before);

    /* the 8-byte length itself: files of `size` bytes that start with `length` and "{}" */
    static const struct {
        uint64_t length;
        size_t size;
        const char *needle, *what;
    } lengths[] = {
        {0, 0, "too short", "empty file"},
        {2, 7, "too short", "7 bytes"},
        {0, 40, "length is 0", "length 0"},
        {1000, 20, "past the end of the file", "length past the end"},
        {UINT64_MAX, 20, "past the end of the file", "length 2^64 - 1"},
    };
    unsigned char raw[64] = {0};
    for (int i = 0; i < COUNT(lengths); i++) {
        put_le64(raw, lengths[i].length);
        memcpy(raw + 8, "{}", 2);
        path = test_write_file(dir, "length.safetensors", raw, lengths[i].size);
        check_load(ctx, p, before, path, EMBER_ERR_FORMAT, lengths[i].needle, lengths[i].what);
    }
    /* a header over the limit, in a (sparse) file big enough to hold it */
    put_le64(raw, EMBER_SAFETENSORS_MAX_HEADER + 1);
    path = test_write_file(dir, "big.safetensors", raw, 8);
    CHECK(truncate(path, 8 + EMBER_SAFETENSORS_MAX_HEADER + 64) == 0, "truncate");
    check_load(ctx, p, before, path, EMBER_ERR_FORMAT, "over the 100 MB", "header over 100 MB");
    unlink(path);

    /* not a file at all */
    char missing[4096];
    snprintf(missing, sizeof missing, "%s/no-such.safetensors", dir);
    check_load(ctx, p, before, missing, EMBER_ERR_IO, missing, "missing file");
    check_load(ctx, p, before, dir, EMBER_ERR_IO, "not a regular file", "a folder");
    ember_clear_error(ctx);
    CHECK(ember_params_load(p, NULL) == EMBER_ERR_ARG && *ember_last_error(ctx), "NULL path");
    CHECK(ember_params_load(NULL, missing) == EMBER_ERR_ARG, "NULL set");
    CHECK(ember_params_save(NULL, missing, NULL) == EMBER_ERR_ARG, "NULL set");
    free(before);
    ember_params_free(p);
}

/* The temporary files of saves that were killed before their rename go at
 * the next save to the same path; one another writer still holds (its
 * flock) stays, as do files that only look alike. */
static void test_stale_temporaries(ember_ctx *ctx, const char *dir)
{
    ember_params *p = make_set(ctx, ab, COUNT(ab), 7);
    char stale[4200], live[4200], other[4200], path[4096];
    snprintf(path, sizeof path, "%s/kill.safetensors", dir);
    snprintf(stale, sizeof stale, "%s.tmp.a1B2c3", path);
    snprintf(live, sizeof live, "%s.tmp.LIVE00", path);
    snprintf(other, sizeof other, "%s.tmp.toolong", path);
    test_write_file(dir, "kill.safetensors.tmp.a1B2c3", "half a checkpoint", 17);
    test_write_file(dir, "kill.safetensors.tmp.LIVE00", "being written", 13);
    test_write_file(dir, "kill.safetensors.tmp.toolong", "not ours", 8);
    /* another writer: on POSIX its flock, on Windows the open file itself */
    int held = open(live, O_RDONLY);
#ifdef _WIN32
    CHECK(held >= 0, "opening %s", live);
#else
    CHECK(held >= 0 && flock(held, LOCK_EX | LOCK_NB) == 0, "locking %s", live);
#endif
    CHECK_OK(ctx, ember_params_save(p, path, NULL));
    CHECK(access(stale, F_OK) != 0, "the killed save's %s is still there", stale);
    CHECK(access(live, F_OK) == 0, "a save removed %s, which another writer holds", live);
    CHECK(access(other, F_OK) == 0, "a save removed %s, which is not its temporary", other);
    if (held >= 0)
        close(held);
    unlink(live);
    unlink(other);
    unlink(path);
    ember_params_free(p);
}

/* A NaN or an infinity anywhere in a file (a run that diverged, a damaged
 * disk) is refused with the tensor's name, and loads nothing. */
static void test_non_finite(ember_ctx *ctx, const char *dir)
{
    ember_params *src = make_set(ctx, ab, COUNT(ab), 7), *p = make_set(ctx, ab, COUNT(ab), 8);
    char path[4096];
    snprintf(path, sizeof path, "%s/finite.safetensors", dir);
    CHECK_OK(ctx, ember_params_save(src, path, NULL));
    size_t len = 0;
    unsigned char *good = slurp(path, &len);
    float *before = values_of(p, NULL);
    static const uint32_t bad[] = {0x7fc00000u, 0xff800000u, 0x7f800000u}; /* NaN, -inf, +inf */
    static const char *const names[] = {"NaN", "an infinity", "an infinity"};
    for (int k = 0; good && k < 3; k++) {
        /* the last float of the file is b[1]; the first of the data, a[0] */
        size_t at = k == 0 ? len - 4 : len - 4 * 8;
        unsigned char *bent = malloc(len);
        memcpy(bent, good, len);
        memcpy(bent + at, &bad[k], 4); /* little-endian host, as the file */
        char needle[64], what[64];
        snprintf(needle, sizeof needle, "holds %s at index", names[k]);
        snprintf(what, sizeof what, "a file holding %s", names[k]);
        check_load(ctx, p, before, test_write_file(dir, "nan.safetensors", bent, len), EMBER_ERR_FORMAT,
                   needle, what);
        CHECK(strstr(ember_last_error(ctx), k == 0 ? "\"b\"" : "\"a\""), "the message names the tensor: %s",
              ember_last_error(ctx));
        ember_clear_error(ctx);
        CHECK(ember_params_load_memory(p, bent, len) == EMBER_ERR_FORMAT, "%s, in memory, loaded", what);
        CHECK(same_values(p, before), "%s, in memory: the parameters changed", what);
        free(bent);
    }
    free(before);
    free(good);
    ember_params_free(src);
    ember_params_free(p);
}

/* A good file cut short at every length, and with every header byte
 * replaced by characters that matter to JSON: refused cleanly each time. */
static void test_truncated_and_corrupt(ember_ctx *ctx, const char *dir)
{
    ember_params *src = make_set(ctx, ab, COUNT(ab), 7), *p = make_set(ctx, ab, COUNT(ab), 8);
    char path[4096];
    snprintf(path, sizeof path, "%s/good.safetensors", dir);
    const char *const meta[] = {"epoch", "1", NULL};
    CHECK_OK(ctx, ember_params_save(src, path, meta));
    size_t len = 0;
    unsigned char *good = slurp(path, &len);
    float *before = values_of(p, NULL);
    CHECK(good && len > 8, "read back %s", path);
    for (size_t cut = 0; good && cut < len; cut++) {
        char what[64];
        snprintf(what, sizeof what, "truncated to %zu of %zu bytes", cut, len);
        check_load(ctx, p, before, test_write_file(dir, "cut.safetensors", good, cut), EMBER_ERR_FORMAT, NULL,
                   what);
    }
    static const unsigned char swaps[] = {0x00, ' ', '"', '\\', '{', '}',  '[', ']',
                                          ',',  ':', '-', '9',  '.', 0x80, 0xff};
    size_t header_end = 0;
    for (int i = 7; good && i >= 0; i--)
        header_end = header_end << 8 | good[i];
    header_end += 8;
    unsigned char *bent = good ? malloc(len) : NULL;
    for (size_t at = 0; bent && at < header_end; at++) {
        for (size_t k = 0; k < sizeof swaps; k++) {
            char what[64];
            memcpy(bent, good, len);
            bent[at] = swaps[k];
            snprintf(what, sizeof what, "byte %zu set to 0x%02x", at, swaps[k]);
            ember_clear_error(ctx);
            ember_status st = ember_params_load(p, test_write_file(dir, "bent.safetensors", bent, len));
            CHECK(st == EMBER_OK || *ember_last_error(ctx), "%s: no message", what);
            CHECK(st == EMBER_OK || same_values(p, before), "%s: a refused load changed the parameters",
                  what);
            set_values(p, before);
        }
    }
    free(bent);
    free(good);
    free(before);
    ember_params_free(src);
    ember_params_free(p);
}

/* ----------------------------------------------------------------- saving */

static void test_save_failures(ember_ctx *ctx, const char *dir)
{
    ember_params *a = make_set(ctx, small, COUNT(small), 9), *b = make_set(ctx, small, COUNT(small), 10);
    char path[4096];
    bool has_tmp;
    int entries = count_entries(dir, &has_tmp);

    /* a folder that does not exist */
    snprintf(path, sizeof path, "%s/no-such-folder/x.safetensors", dir);
    ember_clear_error(ctx);
    CHECK(ember_params_save(a, path, NULL) == EMBER_ERR_IO, "saving into a missing folder");
    CHECK(strstr(ember_last_error(ctx), path), "the message \"%s\" lacks the path", ember_last_error(ctx));
    CHECK(count_entries(dir, &has_tmp) == entries && !has_tmp, "a failed save left a file behind");

    /* a folder in the way: the temporary file is written, the rename fails,
     * and the temporary file goes */
    snprintf(path, sizeof path, "%s/in-the-way", dir);
    CHECK(ember_make_folder(path), "mkdir");
    entries = count_entries(dir, &has_tmp);
    ember_clear_error(ctx);
    CHECK(ember_params_save(a, path, NULL) == EMBER_ERR_IO && strstr(ember_last_error(ctx), path),
          "saving over a folder: %s", ember_last_error(ctx));
    CHECK(count_entries(dir, &has_tmp) == entries && !has_tmp, "a failed rename left the temporary file");
    rmdir(path);

    /* over an existing file: replaced whole, its mode kept */
    snprintf(path, sizeof path, "%s/over.safetensors", dir);
    test_write_file(dir, "over.safetensors", "not a checkpoint", 16);
#ifndef _WIN32 /* Windows has no such modes (0640 there would make the file read-only) */
    CHECK(chmod(path, 0640) == 0, "chmod");
#endif
    entries = count_entries(dir, &has_tmp);
    float *want = values_of(a, NULL);
    CHECK_OK(ctx, ember_params_save(a, path, NULL));
    CHECK_OK(ctx, ember_params_load(b, path));
    CHECK(same_values(b, want), "the replaced file does not hold the new values");
#ifndef _WIN32 /* Windows keeps access rights in ACLs, not modes */
    struct stat info;
    CHECK(stat(path, &info) == 0 && (info.st_mode & 0777) == 0640, "mode %o after replacing",
          (unsigned)(info.st_mode & 0777));
#endif
    CHECK(count_entries(dir, &has_tmp) == entries && !has_tmp, "saving left a temporary file");

    /* over a checkpoint another program holds open (an fopen shares reading
     * and writing, not deleting): Windows will not replace it, so the save
     * fails, the old checkpoint stays whole, and the new one is kept in the
     * temporary file the message names; POSIX replaces it */
    ember_params *c = make_set(ctx, small, COUNT(small), 11);
    float *newer = values_of(c, NULL);
    FILE *held = fopen(path, "rb");
    CHECK(held, "%s cannot be opened", path);
    ember_clear_error(ctx);
    ember_status st = ember_params_save(c, path, NULL);
#ifdef _WIN32
    const char *msg = ember_last_error(ctx), *kept = strstr(msg, ".tmp.");
    CHECK(st == EMBER_ERR_IO && strstr(msg, "another program has it open") && strstr(msg, path) && kept,
          "saving over an open checkpoint: %s (%s)", ember_status_str(st), msg);
    char kept_path[4200] = "";
    if (kept) /* the path before ".tmp." and the six characters after it */
        snprintf(kept_path, sizeof kept_path, "%s%.11s", path, kept);
    if (held)
        fclose(held), held = NULL;
    CHECK_OK(ctx, ember_params_load(b, path));
    CHECK(same_values(b, want), "the refused save changed %s", path);
    CHECK_OK(ctx, ember_params_load(b, kept_path));
    CHECK(same_values(b, newer), "%s does not hold what was to be saved", kept_path);
    remove(kept_path);
#else
    CHECK(st == EMBER_OK, "saving over an open checkpoint: %s", ember_last_error(ctx));
#endif
    if (held)
        fclose(held);
    free(newer);
    ember_params_free(c);
    free(want);
    ember_params_free(a);
    ember_params_free(b);
}

/* ---------------------------------------------------------------- interop */

static int interop(ember_ctx *ctx, const char *mode, const char *file, const char *values_path)
{
    int rc = 1;
    bool writing = strcmp(mode, "write") == 0;
    ember_params *p = make_set(ctx, simplecnn, COUNT(simplecnn), 0);
    if (!p)
        return 1;
    size_t n = (size_t)ember_params_numel(p), len = 0;
    float *values = NULL;
    unsigned char *bytes = NULL;
    if (writing) {
        ember_rng rng = ember_rng_seed(2024);
        const char *const meta[] = {"model", "simplecnn", "note", NOTE, NULL};
        if (ember_init_default(ember_params_find(p, "conv1.weight"), ember_params_find(p, "conv1.bias"),
                               &rng) ||
            ember_init_default(ember_params_find(p, "fc.weight"), ember_params_find(p, "fc.bias"), &rng) ||
            ember_params_save(p, file, meta) || !(values = values_of(p, NULL)) || !(bytes = malloc(4 * n))) {
            fprintf(stderr, "write: %s\n", ember_last_error(ctx));
            goto done;
        }
        for (size_t i = 0; i < n; i++) {
            uint32_t u;
            memcpy(&u, &values[i], 4);
            for (int k = 0; k < 4; k++)
                bytes[4 * i + (size_t)k] = (unsigned char)(u >> (8 * k));
        }
        FILE *f = fopen(values_path, "wb");
        rc = !f || fwrite(bytes, 1, 4 * n, f) != 4 * n;
        if (f && fclose(f) != 0)
            rc = 1;
        if (rc)
            perror(values_path);
    } else {
        if (ember_params_load(p, file) != EMBER_OK) {
            fprintf(stderr, "check: %s: %s\n", ember_status_str(ember_last_status(ctx)),
                    ember_last_error(ctx));
            goto done;
        }
        if (!(bytes = slurp(values_path, &len)) || len != 4 * n || !(values = values_of(p, NULL))) {
            fprintf(stderr, "check: %s holds %zu bytes, wanted %zu\n", values_path, len, 4 * n);
            goto done;
        }
        for (size_t i = 0; i < n; i++) {
            uint32_t u = (uint32_t)bytes[4 * i] | (uint32_t)bytes[4 * i + 1] << 8 |
                         (uint32_t)bytes[4 * i + 2] << 16 | (uint32_t)bytes[4 * i + 3] << 24;
            float want;
            memcpy(&want, &u, 4);
            if (memcmp(&want, &values[i], 4) != 0) {
                fprintf(stderr, "check: value %zu is %.9g, wanted %.9g\n", i, values[i], want);
                goto done;
            }
        }
        printf("check: %s matches, %zu values\n", file, n);
        rc = 0;
    }
done:
    free(bytes);
    free(values);
    ember_params_free(p);
    return rc;
}

int main(int argc, char **argv)
{
    ember_ctx *ctx = test_ctx(NULL);
    if (!ctx)
        return 1;
    if (argc > 1) {
        int rc = 2;
        if (argc == 4 && (strcmp(argv[1], "write") == 0 || strcmp(argv[1], "check") == 0))
            rc = interop(ctx, argv[1], argv[2], argv[3]);
        else
            fprintf(stderr, "usage: %s [write|check FILE VALUES]\n", argv[0]);
        ember_ctx_free(ctx);
        return rc;
    }
    const char *tmp = test_tmpdir();
    if (!tmp) {
        ember_ctx_free(ctx);
        return 1;
    }
    char dir[2048]; /* shorter than the paths made in it */
    snprintf(dir, sizeof dir, "%s", tmp);
    test_round_trip(ctx, dir);
    test_buffers(ctx, dir);
    test_metadata(ctx, dir);
    test_mismatch(ctx, dir);
    test_malformed(ctx, dir);
    test_truncated_and_corrupt(ctx, dir);
    test_non_finite(ctx, dir);
    test_stale_temporaries(ctx, dir);
    test_save_failures(ctx, dir);
    test_cleanup_dir(dir);
    ember_ctx_free(ctx);
    return test_finish("test_checkpoint");
}

/* SPDX-License-Identifier: MIT */
/*
 * models/lm-llama.c — LLaMA-family language models from GGUF files, built
 * from ember's ops, so that every backend, the profiler and the tape see
 * them (docs/models.md, "Pretrained language models").
 *
 * A block, for x (B, T, C), C = heads * D, with GGUF's tensor names:
 *
 *   h = rms_norm(x) * attn_norm
 *   q = h @ attn_q^T (+ bias)   (B, T, heads, D)      RoPE'd by position
 *   k = h @ attn_k^T (+ bias)   (B, T, kv_heads, D)   RoPE'd by position
 *   v = h @ attn_v^T (+ bias)   (B, T, kv_heads, D)
 *   x = x + attention(q, k, v) @ attn_output^T        grouped-query, causal
 *   h = rms_norm(x) * ffn_norm
 *   x = x + (silu(h @ ffn_gate^T) * (h @ ffn_up^T)) @ ffn_down^T    SwiGLU
 *
 * then logits = rms_norm(x) * output_norm @ output^T, where output is the
 * token embedding itself when the file has no output.weight (tied). The
 * biases are Qwen 2's ("qwen2"); llama has none. GGUF keeps llama's q and
 * k with each RoPE pair adjacent (the converter permuted Hugging Face's
 * halves into pairs), so llama turns pairs (2j, 2j + 1) and qwen2, kept as
 * trained, halves (ggml's "neox" mode).
 *
 * Grouped-query attention: the heads / kv_heads query heads of a group
 * share one key/value head. Query head h = g * group + j reads kv head g,
 * so q (B, heads, T, D) is (B * kv_heads, group * T, D) as it lies in
 * memory, and one batched product per kv head scores the whole group:
 * no keys are copied per query head.
 *
 * Generation keeps each block's keys and values, (1, kv_heads, context, D),
 * and feeds the new positions alone: they attend to the cache's first
 * position + T keys (ember_causal_softmax's queries are the last T).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lm-impl.h"

#define DEFAULT_CONTEXT 2048

/* ---------------------------------------------------------------- loading */

struct loader {
    ember_lm *lm;
    const struct gguf_file *f;
    ember_status status;
};

/* tensor `name` of the file on the device, of shape (rows, cols) (cols 0:
 * a vector of rows), kept quantised where it is and `quantised_ok`, else
 * as F32; NULL (with no error) for a missing tensor that is optional */
static ember_tensor *upload(struct loader *l, const char *name, int64_t rows, int64_t cols, bool required,
                            bool quantised_ok)
{
    ember_ctx *ctx = l->lm->ctx;
    if (l->status != EMBER_OK)
        return NULL;
    const struct gguf_tensor *t = gguf_tensor_find(l->f, name);
    if (!t) {
        if (required)
            l->status = ember_set_error(ctx, EMBER_ERR_FORMAT, "the model has no tensor %s", name);
        return NULL;
    }
    int ndim = cols ? 2 : 1;
    int64_t shape[2] = {rows, cols};
    if (t->ndim != ndim || t->shape[0] != rows || (cols && t->shape[1] != cols)) {
        l->status = ember_set_error(ctx, EMBER_ERR_FORMAT,
                                    "the model's %s is %lld x %lld, not the %lld x %lld its metadata implies",
                                    name, (long long)t->shape[0], (long long)(t->ndim > 1 ? t->shape[1] : 1),
                                    (long long)rows, (long long)(cols ? cols : 1));
        return NULL;
    }
    ember_dtype dtype = gguf_tensor_dtype(t);
    if (dtype != EMBER_F32 && !quantised_ok) {
        l->status = ember_set_error(ctx, EMBER_ERR_UNSUPPORTED,
                                    "the model's %s is %s; ember reads that tensor in F32, F16 or BF16 only",
                                    name, ember_dtype_name(dtype));
        return NULL;
    }
    ember_tensor *x = ember_tensor_new(ctx, dtype, ndim, shape);
    if (!x) {
        l->status = ember_last_status(ctx);
        return NULL;
    }
    if (dtype != EMBER_F32) {
        l->status = ember_tensor_write(x, t->data, (size_t)t->bytes);
    } else {
        float *host = malloc((size_t)t->numel * sizeof *host);
        l->status = !host ? ember_set_error(ctx, EMBER_ERR_NOMEM, "out of host memory for %s", name)
                          : gguf_tensor_to_f32(ctx, t, host);
        if (l->status == EMBER_OK)
            l->status = ember_tensor_write(x, host, (size_t)t->numel * sizeof *host);
        free(host);
    }
    gguf_tensor_done(l->f, t);
    l->lm->weight_bytes += ember_tensor_bytes(x);
    if (l->status != EMBER_OK) {
        ember_tensor_free(x);
        return NULL;
    }
    return x;
}

static ember_status read_shape(ember_lm *lm, const struct gguf_file *f)
{
    ember_ctx *ctx = lm->ctx;
    char key[96];
    const char *a = lm->arch;
#define GET(field, suffix, lo, hi)                                                                           \
    (snprintf(key, sizeof key, "%s." suffix, a), gguf_get_int(ctx, f, key, lo, hi, &lm->field))
#define GET_OR(field, suffix, lo, hi, fallback)                                                              \
    (snprintf(key, sizeof key, "%s." suffix, a), gguf_get_int_or(ctx, f, key, lo, hi, fallback, &lm->field))
    if (GET(blocks, "block_count", 1, 1024) != EMBER_OK ||
        GET(width, "embedding_length", 1, 65536) != EMBER_OK ||
        GET(ffn, "feed_forward_length", 1, 1 << 20) != EMBER_OK ||
        GET(heads, "attention.head_count", 1, 1024) != EMBER_OK ||
        GET_OR(kv_heads, "attention.head_count_kv", 1, 1024, lm->heads) != EMBER_OK ||
        GET_OR(train_context, "context_length", 1, 1 << 24, 4096) != EMBER_OK)
        return ember_last_status(ctx);
    if (lm->width % lm->heads != 0 || lm->heads % lm->kv_heads != 0)
        return ember_set_error(
            ctx, EMBER_ERR_FORMAT,
            "the model's width %lld is not a whole number of its %lld heads, or its %lld heads "
            "not of its %lld key/value heads",
            (long long)lm->width, (long long)lm->heads, (long long)lm->heads, (long long)lm->kv_heads);
    lm->head_dim = lm->width / lm->heads;
    if (GET_OR(rot, "rope.dimension_count", 2, lm->head_dim, lm->head_dim) != EMBER_OK)
        return ember_last_status(ctx);
    if (lm->rot % 2 != 0)
        return ember_set_error(ctx, EMBER_ERR_FORMAT,
                               "the model turns %lld dimensions by RoPE, an odd number", (long long)lm->rot);
    double eps, base;
    snprintf(key, sizeof key, "%s.attention.layer_norm_rms_epsilon", a);
    if (gguf_get_float_or(ctx, f, key, 1e-5, &eps) != EMBER_OK)
        return ember_last_status(ctx);
    snprintf(key, sizeof key, "%s.rope.freq_base", a);
    if (gguf_get_float_or(ctx, f, key, 10000.0, &base) != EMBER_OK)
        return ember_last_status(ctx);
    if (!(eps > 0.0 && eps < 1.0) || !(base > 1.0 && base < 1e12))
        return ember_set_error(ctx, EMBER_ERR_FORMAT,
                               "the model's RMSNorm eps (%g) or RoPE base (%g) is out of range", eps, base);
    lm->eps = (float)eps;
    lm->rope_base = base;
    struct gguf_string scaling;
    snprintf(key, sizeof key, "%s.rope.scaling.type", a);
    if (gguf_get_string(ctx, f, key, &scaling) != EMBER_OK)
        return ember_last_status(ctx);
    if (scaling.data && !(scaling.len == 4 && memcmp(scaling.data, "none", 4) == 0))
        return ember_set_error(ctx, EMBER_ERR_UNSUPPORTED,
                               "the model scales its RoPE (%.*s), which ember does not do yet",
                               (int)(scaling.len > 20 ? 20 : scaling.len), scaling.data);
    return EMBER_OK;
#undef GET
#undef GET_OR
}

static ember_status load_weights(ember_lm *lm, const struct gguf_file *f)
{
    struct loader l = {.lm = lm, .f = f};
    int64_t c = lm->width, kv = lm->kv_heads * lm->head_dim;
    char name[64];
    /* the vocabulary's size is the embedding's rows */
    const struct gguf_tensor *embd = gguf_tensor_find(f, "token_embd.weight");
    if (!embd || embd->ndim != 2)
        return ember_set_error(lm->ctx, EMBER_ERR_FORMAT, "the model has no token_embd.weight (vocab, %lld)",
                               (long long)c);
    lm->vocab = embd->shape[0];
    if (lm->vocab != lm->tok->count)
        return ember_set_error(lm->ctx, EMBER_ERR_FORMAT,
                               "the model embeds %lld tokens but its vocabulary has %d", (long long)lm->vocab,
                               lm->tok->count);
    lm->token_embd = upload(&l, "token_embd.weight", lm->vocab, c, true, true);
    lm->output_norm = upload(&l, "output_norm.weight", c, 0, true, false);
    lm->output = upload(&l, "output.weight", lm->vocab, c, false, true);
    bool biases = strcmp(lm->arch, "qwen2") == 0;
    for (int64_t i = 0; i < lm->blocks && l.status == EMBER_OK; i++) {
        struct lm_block *b = &lm->block[i];
#define BLK(field, what, rows, cols, required, q)                                                            \
    (snprintf(name, sizeof name, "blk.%lld." what, (long long)i),                                            \
     b->field = upload(&l, name, rows, cols, required, q))
        BLK(attn_norm, "attn_norm.weight", c, 0, true, false);
        BLK(wq, "attn_q.weight", c, c, true, true);
        BLK(wk, "attn_k.weight", kv, c, true, true);
        BLK(wv, "attn_v.weight", kv, c, true, true);
        BLK(wo, "attn_output.weight", c, c, true, true);
        BLK(bq, "attn_q.bias", c, 0, biases, false);
        BLK(bk, "attn_k.bias", kv, 0, biases, false);
        BLK(bv, "attn_v.bias", kv, 0, biases, false);
        BLK(ffn_norm, "ffn_norm.weight", c, 0, true, false);
        BLK(gate, "ffn_gate.weight", lm->ffn, c, true, true);
        BLK(up, "ffn_up.weight", lm->ffn, c, true, true);
        BLK(down, "ffn_down.weight", c, lm->ffn, true, true);
#undef BLK
    }
    return l.status;
}

/* the RoPE table, with Llama 3's per-pair frequency divisors where the file has them */
static ember_status make_rope(ember_lm *lm, const struct gguf_file *f)
{
    const struct gguf_tensor *t = gguf_tensor_find(f, "rope_freqs.weight");
    float *divisors = NULL;
    if (t) {
        if (t->ndim != 1 || t->shape[0] != lm->rot / 2)
            return ember_set_error(lm->ctx, EMBER_ERR_FORMAT,
                                   "the model's rope_freqs.weight is not %lld values",
                                   (long long)(lm->rot / 2));
        if (!(divisors = malloc((size_t)t->numel * sizeof *divisors)))
            return ember_set_error(lm->ctx, EMBER_ERR_NOMEM, "no memory for %lld RoPE frequencies",
                                   (long long)t->numel);
        if (gguf_tensor_to_f32(lm->ctx, t, divisors) != EMBER_OK) {
            free(divisors);
            return ember_last_status(lm->ctx);
        }
        for (int64_t j = 0; j < lm->rot / 2; j++)
            if (!(divisors[j] > 0.0f)) {
                double bad = divisors[j];
                free(divisors);
                return ember_set_error(lm->ctx, EMBER_ERR_FORMAT, "the model's rope_freqs.weight has %g",
                                       bad);
            }
    }
    lm->rope = ember_rope_table(lm->ctx, lm->context, lm->rot, (float)lm->rope_base, divisors);
    free(divisors);
    return lm->rope ? EMBER_OK : ember_last_status(lm->ctx);
}

static ember_status make_cache(ember_lm *lm)
{
    const int64_t shape[4] = {1, lm->kv_heads, lm->context, lm->head_dim};
    for (int64_t i = 0; i < lm->blocks; i++) {
        struct lm_block *b = &lm->block[i];
        if (!(b->k_cache = ember_tensor_new(lm->ctx, EMBER_F32, 4, shape)) ||
            !(b->v_cache = ember_tensor_new(lm->ctx, EMBER_F32, 4, shape)))
            return ember_last_status(lm->ctx);
        lm->cache_bytes += 2 * ember_tensor_bytes(b->k_cache);
    }
    return EMBER_OK;
}

static void describe(ember_lm *lm, const struct gguf_file *f)
{
    struct gguf_string name = {0}, size = {0};
    gguf_get_string(lm->ctx, f, "general.basename", &name);
    if (!name.data)
        gguf_get_string(lm->ctx, f, "general.name", &name);
    gguf_get_string(lm->ctx, f, "general.size_label", &size);
    const struct gguf_tensor *q = gguf_tensor_find(f, "blk.0.attn_q.weight");
    char buf[32];
    const char *type = q ? gguf_tensor_type_name(q->type, buf, sizeof buf) : "F32";
    snprintf(lm->describe, sizeof lm->describe,
             "%.*s%s%.*s (%s): %lld blocks of width %lld, %lld query and %lld key/value heads of %lld, "
             "SwiGLU %lld, "
             "vocabulary %lld, context %lld (%lld kept), %s weights; %.0f MiB of weights and %.0f MiB of "
             "cache on %s",
             name.data ? (int)(name.len > 40 ? 40 : name.len) : 5, name.data ? name.data : "a model",
             size.data ? " " : "", size.data ? (int)(size.len > 12 ? 12 : size.len) : 0,
             size.data ? size.data : "", lm->arch, (long long)lm->blocks, (long long)lm->width,
             (long long)lm->heads, (long long)lm->kv_heads, (long long)lm->head_dim, (long long)lm->ffn,
             (long long)lm->vocab, (long long)lm->train_context, (long long)lm->context, type,
             (double)lm->weight_bytes / 1048576.0, (double)lm->cache_bytes / 1048576.0,
             ember_ctx_device_name(lm->ctx));
}

void ember_lm_free(ember_lm *lm)
{
    if (!lm)
        return;
    lm_full_free(lm);
    for (int64_t i = 0; lm->block && i < lm->blocks; i++) {
        struct lm_block *b = &lm->block[i];
        ember_tensor *all[] = {b->attn_norm, b->wq,       b->wk,   b->wv, b->wo,   b->bq,      b->bk,
                               b->bv,        b->ffn_norm, b->gate, b->up, b->down, b->k_cache, b->v_cache};
        for (size_t k = 0; k < sizeof all / sizeof all[0]; k++)
            ember_tensor_free(all[k]);
    }
    lm_lora_free(lm);
    free(lm->block);
    ember_tensor_free(lm->token_embd);
    ember_tensor_free(lm->output_norm);
    ember_tensor_free(lm->output);
    ember_tensor_free(lm->rope);
    lm_tokenizer_free(lm->tok);
    free(lm->chat_template);
    free(lm->path);
    free(lm);
}

ember_lm *ember_lm_load(ember_ctx *ctx, const char *path, const ember_lm_options *options)
{
    if (!ctx)
        return NULL;
    if (!path) {
        ember_set_error(ctx, EMBER_ERR_ARG, "ember_lm_load: no path");
        return NULL;
    }
    if (options && (options->context < 0 || options->context > (1 << 24))) {
        ember_set_error(ctx, EMBER_ERR_ARG, "ember_lm_load: a context of %lld positions",
                        (long long)options->context);
        return NULL;
    }
    struct gguf_file f;
    if (gguf_open(ctx, path, &f) != EMBER_OK)
        return NULL;
    ember_lm *lm = calloc(1, sizeof *lm);
    struct gguf_string arch = {0}, template = {0};
    ember_status st = !lm ? ember_set_error(ctx, EMBER_ERR_NOMEM, "out of host memory for a model")
                          : gguf_get_string(ctx, &f, "general.architecture", &arch);
    if (st == EMBER_OK && !(lm->path = strdup(path)))
        st = ember_set_error(ctx, EMBER_ERR_NOMEM, "out of host memory for a model");
    if (st == EMBER_OK) {
        lm->ctx = ctx;
        bool known = arch.data && ((arch.len == 5 && memcmp(arch.data, "llama", 5) == 0) ||
                                   (arch.len == 5 && memcmp(arch.data, "qwen2", 5) == 0));
        if (!known)
            st = ember_set_error(
                ctx, EMBER_ERR_UNSUPPORTED,
                "%s is a model of architecture \"%.*s\"; ember runs llama (SmolLM2, TinyLlama, "
                "Llama 3.2) and qwen2",
                path, arch.data ? (int)(arch.len > 32 ? 32 : arch.len) : 4, arch.data ? arch.data : "none");
        else {
            memcpy(lm->arch, arch.data, arch.len);
            lm->neox = strcmp(lm->arch, "qwen2") == 0;
        }
    }
    if (st == EMBER_OK)
        st = read_shape(lm, &f);
    if (st == EMBER_OK) {
        int64_t want = options && options->context ? options->context : DEFAULT_CONTEXT;
        lm->context = want < lm->train_context ? want : lm->train_context;
        lm->keep_activations = options && options->keep_activations;
        lm->recompute_all = options && options->recompute_all;
        lm->tok = lm_tokenizer_load(ctx, &f);
        st =
            lm->tok ? gguf_get_string(ctx, &f, "tokenizer.chat_template", &template) : ember_last_status(ctx);
    }
    if (st == EMBER_OK && template.data) {
        lm->chat_template = malloc(template.len + 1);
        if (!lm->chat_template)
            st = ember_set_error(ctx, EMBER_ERR_NOMEM, "out of host memory for the chat template");
        else {
            memcpy(lm->chat_template, template.data, template.len);
            lm->chat_template[template.len] = 0;
        }
    }
    if (st == EMBER_OK && (lm->block = calloc((size_t)lm->blocks, sizeof *lm->block)) != NULL)
        for (int64_t i = 0; i < lm->blocks; i++)
            lm->block[i].lm = lm, lm->block[i].index = i;
    if (st == EMBER_OK && !lm->block)
        st = ember_set_error(ctx, EMBER_ERR_NOMEM, "out of host memory for %lld blocks",
                             (long long)lm->blocks);
    if (st == EMBER_OK)
        st = load_weights(lm, &f);
    if (st == EMBER_OK)
        st = make_rope(lm, &f);
    if (st == EMBER_OK)
        st = make_cache(lm);
    if (st == EMBER_OK)
        describe(lm, &f);
    gguf_close(&f);
    if (st != EMBER_OK) {
        ember_lm_free(lm);
        return NULL;
    }
    return lm;
}

/* ---------------------------------------------------------------- running */

/* q (B, T, heads, D), k and v (B, kv_heads, S, D) -> (B, T, heads * D) */
static ember_tensor *attention(const ember_lm *lm, ember_tensor *q, ember_tensor *k, ember_tensor *v)
{
    int64_t b = ember_tensor_dim(q, 0), t = ember_tensor_dim(q, 1), s = ember_tensor_dim(k, 2),
            d = lm->head_dim;
    int64_t group = lm->heads / lm->kv_heads, bkv = b * lm->kv_heads;
    const int64_t q3[3] = {bkv, group * t, d}, kv3[3] = {bkv, s, d}, per_query[3] = {b * lm->heads, t, s},
                  per_group[3] = {bkv, group * t, s}, heads4[4] = {b, lm->heads, t, d},
                  out[3] = {b, t, lm->heads * d};
    ember_tensor *qg = ember_reshape(ember_contiguous(ember_transpose(q, 1, 2)), 3, q3);
    ember_tensor *scores = ember_bmm(qg, ember_transpose(ember_reshape(k, 3, kv3), 1, 2));
    scores = ember_scale(scores, 1.0f / sqrtf((float)d));
    ember_tensor *p = ember_reshape(ember_causal_softmax(ember_reshape(scores, 3, per_query)), 3, per_group);
    ember_tensor *o = ember_reshape(ember_bmm(p, ember_reshape(v, 3, kv3)), 4, heads4);
    return ember_reshape(ember_contiguous(ember_transpose(o, 1, 2)), 3, out);
}

/* Block i on x (B, T, width) at positions [position, position + T); with
 * `cache` the keys and values go into the cache and the attention reads
 * it. */
static ember_tensor *block_forward(ember_lm *lm, int64_t i, ember_tensor *x, int64_t position, bool cache)
{
    int64_t b = ember_tensor_dim(x, 0), t = ember_tensor_dim(x, 1), d = lm->head_dim;
    const int64_t qshape[4] = {b, t, lm->heads, d}, kvshape[4] = {b, t, lm->kv_heads, d};
    const struct lm_block *blk = &lm->block[i];
    ember_tensor *h = ember_rms_norm(x, blk->attn_norm, lm->eps);
    ember_tensor *q = ember_rope(ember_reshape(lm_project(lm, i, LM_Q, h, blk->bq), 4, qshape), lm->rope,
                                 position, lm->neox);
    ember_tensor *k = ember_rope(ember_reshape(lm_project(lm, i, LM_K, h, blk->bk), 4, kvshape), lm->rope,
                                 position, lm->neox);
    ember_tensor *v = ember_reshape(lm_project(lm, i, LM_V, h, blk->bv), 4, kvshape);
    k = ember_transpose(k, 1, 2);
    v = ember_transpose(v, 1, 2);
    if (cache) { /* the new keys and values into their places, then all of them */
        if (!k || !v || ember_tensor_copy_from(ember_narrow(blk->k_cache, 2, position, t), k) != EMBER_OK ||
            ember_tensor_copy_from(ember_narrow(blk->v_cache, 2, position, t), v) != EMBER_OK)
            return NULL;
        k = ember_narrow(blk->k_cache, 2, 0, position + t);
        v = ember_narrow(blk->v_cache, 2, 0, position + t);
    }
    x = ember_add(x, lm_project(lm, i, LM_O, attention(lm, q, k, v), NULL));
    h = ember_rms_norm(x, blk->ffn_norm, lm->eps);
    ember_tensor *mlp =
        ember_mul(ember_silu(lm_project(lm, i, LM_GATE, h, NULL)), lm_project(lm, i, LM_UP, h, NULL));
    return ember_add(x, lm_project(lm, i, LM_DOWN, mlp, NULL));
}

/* a block of a training forward pass, for ember_recompute */
static ember_tensor *recomputed_block(void *user, ember_tensor *x)
{
    struct lm_block *blk = user;
    return block_forward(blk->lm, blk->index, x, 0, false);
}

/* Runs tokens (B, T) I32 at positions [position, position + T): the
 * scores of every position (B, T, vocab), or of the last one (B, 1,
 * vocab). With `cache` the keys and values go into the cache. With the
 * cache, or with grad off, each block's tensors are released as soon as it
 * is done (only x goes on: nothing is recorded for a backward pass), so a
 * long prompt or a validation pass holds one block's activations at a
 * time. Training (grad on, no cache) keeps each block's input and its
 * projections' outputs and makes the rest again in the backward pass
 * (ember_recompute_selective), unless keep_activations (all kept) or
 * recompute_all (the projections made again too, ember_recompute): a step
 * of SmolLM2 then holds one block's activations, not thirty's. */
static ember_tensor *run(ember_lm *lm, ember_tensor *tokens, int64_t position, bool cache, bool last_only)
{
    int64_t t = ember_tensor_dim(tokens, 1);
    /* nothing to differentiate (generation, a validation pass): each block's tensors go once it is done */
    bool release = cache || !ember_grad_enabled(lm->ctx);
    ember_tensor *x = ember_embedding(tokens, lm->token_embd);
    for (int64_t i = 0; i < lm->blocks && x; i++) {
        ember_tape_mark mark = ember_tape_mark_now(lm->ctx);
        if (!release && lm->recompute_all)
            x = ember_recompute(x, recomputed_block, &lm->block[i]);
        else if (!release && !lm->keep_activations)
            x = ember_recompute_selective(x, recomputed_block, &lm->block[i]);
        else
            x = block_forward(lm, i, x, position, cache);
        if (release && x && ember_tape_release_since(lm->ctx, mark, x) != EMBER_OK)
            return NULL;
    }
    if (last_only)
        x = ember_narrow(x, 1, t - 1, 1);
    x = ember_rms_norm(x, lm->output_norm, lm->eps);
    return ember_linear(x, lm->output ? lm->output : lm->token_embd, NULL);
}

ember_tensor *ember_lm_forward(ember_lm *lm, ember_tensor *tokens)
{
    if (!lm || !tokens)
        return NULL;
    if (ember_tensor_ndim(tokens) != 2 || ember_tensor_dtype(tokens) != EMBER_I32 ||
        ember_tensor_dim(tokens, 1) > lm->context) {
        ember_set_error(lm->ctx, EMBER_ERR_ARG,
                        "ember_lm_forward takes tokens (B, T) I32 with T at most %lld",
                        (long long)lm->context);
        return NULL;
    }
    if (lm->training)
        lm->forwards++;
    return run(lm, tokens, 0, false, false);
}

ember_status ember_lm_feed(ember_lm *lm, const int32_t *tokens, int64_t n, float *logits)
{
    if (!lm)
        return EMBER_ERR_ARG;
    ember_ctx *ctx = lm->ctx;
    if (!tokens || n < 1)
        return ember_set_error(ctx, EMBER_ERR_ARG, "ember_lm_feed: no tokens");
    if (lm->position + n > lm->context)
        return ember_set_error(
            ctx, EMBER_ERR_ARG,
            "the model's context is full: %lld positions held and %lld more fed, over the %lld "
            "it keeps (ember_lm_rewind, or a larger context when loading)",
            (long long)lm->position, (long long)n, (long long)lm->context);
    for (int64_t i = 0; i < n; i++)
        if (tokens[i] < 0 || tokens[i] >= lm->vocab)
            return ember_set_error(ctx, EMBER_ERR_ARG,
                                   "ember_lm_feed: token %d is not in the vocabulary of %lld", tokens[i],
                                   (long long)lm->vocab);
    bool grad = ember_set_grad_enabled(ctx, false);
    ember_tape_mark mark = ember_tape_mark_now(ctx);
    const int64_t shape[2] = {1, n};
    ember_tensor *ids = ember_tensor_new(ctx, EMBER_I32, 2, shape);
    ember_status st =
        ids ? ember_tensor_write(ids, tokens, (size_t)n * sizeof *tokens) : ember_last_status(ctx);
    ember_tensor *scores = st == EMBER_OK ? run(lm, ids, lm->position, true, true) : NULL;
    if (st == EMBER_OK && !scores)
        st = ember_last_status(ctx);
    if (st == EMBER_OK && logits)
        st = ember_tensor_read(scores, logits, (size_t)lm->vocab * sizeof *logits);
    if (st == EMBER_OK)
        lm->position += n;
    ember_tensor_free(ids);
    ember_tape_release_since(ctx, mark, NULL);
    ember_set_grad_enabled(ctx, grad);
    return st;
}

ember_status ember_lm_rewind(ember_lm *lm, int64_t position)
{
    if (!lm)
        return EMBER_ERR_ARG;
    if (position < 0 || position > lm->position)
        return ember_set_error(lm->ctx, EMBER_ERR_ARG, "ember_lm_rewind: position %lld of the %lld fed",
                               (long long)position, (long long)lm->position);
    lm->position = position; /* the cache past it is overwritten as positions are fed again */
    return EMBER_OK;
}

const char *ember_lm_describe(const ember_lm *lm) { return lm ? lm->describe : ""; }
int32_t ember_lm_vocab(const ember_lm *lm) { return lm ? (int32_t)lm->vocab : 0; }
int64_t ember_lm_context(const ember_lm *lm) { return lm ? lm->context : 0; }
int64_t ember_lm_position(const ember_lm *lm) { return lm ? lm->position : 0; }

void ember_lm_memory(const ember_lm *lm, size_t *weights, size_t *cache)
{
    if (weights)
        *weights = lm ? lm->weight_bytes : 0;
    if (cache)
        *cache = lm ? lm->cache_bytes : 0;
}

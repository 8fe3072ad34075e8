/* SPDX-License-Identifier: MIT */
/*
 * models/model-layers-text.c — the layers of a GPT: embedding, position
 * embedding, layer norm (or Llama's RMS norm) and causal self-attention,
 * each a public op or a few (their entries are in model-layers.c's table).
 *
 * A sequence's sample is (T) tokens in, (T, C) vectors after the
 * embedding; every later layer keeps the positions, and a linear layer on
 * (T, C) acts on each position. A transformer block is two residual
 * blocks that share its name, as nanoGPT's Block adds its two halves:
 *
 *     transformer.h.0: residual       # x = x + attn(ln_1(x))
 *         ln_1: layer_norm
 *         attn: attention heads=4
 *     end
 *     transformer.h.0: residual       # x = x + mlp(ln_2(x))
 *         ln_2: layer_norm
 *         mlp.c_fc: linear 512
 *         gelu tanh=true
 *         mlp.c_proj: linear 128
 *     end
 *
 * Generation (model-generate.c) runs the same layers on the new positions
 * alone: position_embedding reads the layer's `position`, and attention
 * its key/value `cache` when it has one.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "models-impl.h"

#define WHY(...) (snprintf(why, why_len, __VA_ARGS__), false)

/* A parameter `prefix.name`. */
static ember_tensor *add(struct model_build *b, const char *prefix, const char *name, int ndim,
                         const int64_t *shape)
{
    char full[MODEL_NAME_MAX + 32];
    snprintf(full, sizeof full, "%s%s%s", prefix, *prefix ? "." : "", name);
    return ember_params_add(b->params, full, ndim, shape);
}

/* N(0, 1), nn.Embedding's initialisation: Box-Muller from the build's generator */
static ember_status init_normal(ember_tensor *t, ember_rng *rng)
{
    int64_t n = ember_tensor_numel(t);
    float *host = malloc((size_t)(n ? n : 1) * sizeof *host);
    if (!host)
        return ember_set_error(ember_tensor_ctx(t), EMBER_ERR_NOMEM,
                               "out of host memory initialising a layer");
    for (int64_t i = 0; i < n; i += 2) {
        double u1 = 1.0 - (double)ember_rng_uniform(rng, 0.0f, 1.0f), u2 = ember_rng_uniform(rng, 0.0f, 1.0f);
        double r = sqrt(-2.0 * log(u1)), a = 2.0 * 3.14159265358979323846 * u2;
        host[i] = (float)(r * cos(a));
        if (i + 1 < n)
            host[i + 1] = (float)(r * sin(a));
    }
    ember_status st = ember_tensor_write(t, host, (size_t)n * sizeof *host);
    free(host);
    return st;
}

/* ----------------------------------------------------------- embedding */

enum { EMBED_DIM, EMBED_VOCAB };

/* tokens (T) -> (T, dim) */
bool model_embedding_infer(const struct model_layer *l, int ndim, const int64_t *in, int *out_ndim,
                           int64_t *out, char *why, size_t why_len)
{
    if (ndim != 1)
        return WHY("embedding takes a sequence of tokens (T): put it first, on text data");
    *out_ndim = 2;
    out[0] = in[0];
    out[1] = (int64_t)l->value[EMBED_DIM];
    return true;
}

/* weight (vocab, dim), N(0, 1) as nn.Embedding's */
ember_status model_embedding_add_params(struct model_layer *l, struct model_build *b, const char *prefix)
{
    int64_t shape[2] = {(int64_t)l->value[EMBED_VOCAB], (int64_t)l->value[EMBED_DIM]};
    if (!(l->t[0] = add(b, prefix, "weight", 2, shape)))
        return ember_last_status(b->ctx);
    return init_normal(l->t[0], &b->rng);
}

ember_tensor *model_embedding_forward(struct model_layer *l, ember_tensor *x, bool training, uint64_t seed)
{
    return ember_embedding(x, l->t[0]); /* (N, T, dim) */
}

void model_embedding_describe(const struct model_layer *l, char *out, size_t len)
{
    snprintf(out, len, "Embedding(%d, %d)", (int)l->value[EMBED_VOCAB], (int)l->value[EMBED_DIM]);
}

/* ------------------------------------------------- position embedding */

/* (T, C) -> (T, C) */
bool model_position_infer(const struct model_layer *l, int ndim, const int64_t *in, int *out_ndim,
                          int64_t *out, char *why, size_t why_len)
{
    if (ndim != 2)
        return WHY("position_embedding takes a sequence of vectors (T, C): put it after an embedding");
    *out_ndim = 2;
    memcpy(out, in, 2 * sizeof *in);
    return true;
}

/* weight (T, C): a vector per position, N(0, 1) (nanoGPT's wpe is an nn.Embedding) */
ember_status model_position_add_params(struct model_layer *l, struct model_build *b, const char *prefix)
{
    if (!(l->t[0] = add(b, prefix, "weight", 2, l->in_shape)))
        return ember_last_status(b->ctx);
    return init_normal(l->t[0], &b->rng);
}

/* y = x + weight[position : position + T], the vectors of x's positions
 * (from 0, or from where generation stands) added to each sample */
ember_tensor *model_position_forward(struct model_layer *l, ember_tensor *x, bool training, uint64_t seed)
{
    return ember_add(x, ember_narrow(l->t[0], 0, l->position, ember_tensor_dim(x, 1)));
}

void model_position_describe(const struct model_layer *l, char *out, size_t len)
{
    snprintf(out, len, "Embedding(%lld, %lld) of positions", (long long)l->in_shape[0],
             (long long)l->in_shape[1]);
}

/* ----------------------------------------------------------- layer norm */

enum { LN_EPS, LN_BIAS };

bool model_layer_norm_infer(const struct model_layer *l, int ndim, const int64_t *in, int *out_ndim,
                            int64_t *out, char *why, size_t why_len)
{
    *out_ndim = ndim;
    memcpy(out, in, (size_t)ndim * sizeof *in);
    return true;
}

/* weight (C) = 1 and, when asked, bias (C) = 0 over the last axis, as nn.LayerNorm's and nn.RMSNorm's */
static ember_status norm_params(struct model_layer *l, struct model_build *b, const char *prefix, bool bias)
{
    const int64_t c[1] = {l->in_shape[l->in_ndim - 1]};
    if (!(l->t[0] = add(b, prefix, "weight", 1, c)) || (bias && !(l->t[1] = add(b, prefix, "bias", 1, c))))
        return ember_last_status(b->ctx);
    float *ones = malloc((size_t)c[0] * sizeof *ones);
    if (!ones)
        return ember_set_error(b->ctx, EMBER_ERR_NOMEM, "out of host memory initialising a layer");
    for (int64_t i = 0; i < c[0]; i++)
        ones[i] = 1.0f;
    ember_status st = ember_tensor_write(l->t[0], ones, (size_t)c[0] * sizeof *ones);
    free(ones);
    return st; /* the bias starts at zero */
}

ember_status model_layer_norm_add_params(struct model_layer *l, struct model_build *b, const char *prefix)
{
    return norm_params(l, b, prefix, l->value[LN_BIAS] != 0.0);
}

ember_tensor *model_layer_norm_forward(struct model_layer *l, ember_tensor *x, bool training, uint64_t seed)
{
    return ember_layer_norm(x, l->t[0], l->t[1], (float)l->value[LN_EPS]);
}

double model_layer_norm_flops(const struct model_layer *l)
{
    double n = 1.0;
    for (int d = 0; d < l->out_ndim; d++)
        n *= (double)l->out_shape[d];
    return 8.0 * n; /* mean, variance, normalise, scale and shift */
}

void model_layer_norm_describe(const struct model_layer *l, char *out, size_t len)
{
    char eps[32] = "";
    if (l->value[LN_EPS] != 1e-5)
        snprintf(eps, sizeof eps, ", eps=%g", l->value[LN_EPS]);
    snprintf(out, len, "LayerNorm(%lld%s%s)", (long long)l->in_shape[l->in_ndim - 1], eps,
             l->value[LN_BIAS] != 0.0 ? "" : ", bias=False");
}

/* ------------------------------------------------------------- RMS norm */

/* Llama's RMSNorm: a weight, no bias, no mean taken away (ember_rms_norm) */
ember_status model_rms_norm_add_params(struct model_layer *l, struct model_build *b, const char *prefix)
{
    return norm_params(l, b, prefix, false);
}

ember_tensor *model_rms_norm_forward(struct model_layer *l, ember_tensor *x, bool training, uint64_t seed)
{
    return ember_rms_norm(x, l->t[0], (float)l->value[0]);
}

double model_rms_norm_flops(const struct model_layer *l)
{
    double n = 1.0;
    for (int d = 0; d < l->out_ndim; d++)
        n *= (double)l->out_shape[d];
    return 4.0 * n; /* square, mean, normalise, scale */
}

void model_rms_norm_describe(const struct model_layer *l, char *out, size_t len)
{
    snprintf(out, len, "RMSNorm(%lld, eps=%g)", (long long)l->in_shape[l->in_ndim - 1], l->value[0]);
}

/* ------------------------------------------------------------ attention */

enum { ATTN_HEADS, ATTN_DROPOUT, ATTN_BIAS };
enum { ATTN_QKV_W, ATTN_QKV_B, ATTN_PROJ_W, ATTN_PROJ_B };

bool model_attention_infer(const struct model_layer *l, int ndim, const int64_t *in, int *out_ndim,
                           int64_t *out, char *why, size_t why_len)
{
    int heads = (int)l->value[ATTN_HEADS];
    if (ndim != 2)
        return WHY("attention takes a sequence of vectors (T, C)");
    if (in[1] % heads != 0)
        return WHY("%d heads do not divide the %lld features", heads, (long long)in[1]);
    *out_ndim = 2;
    memcpy(out, in, 2 * sizeof *in);
    return true;
}

/* c_attn (3C, C) makes each position's query, key and value, c_proj (C, C)
 * mixes the heads' outputs: nanoGPT's CausalSelfAttention, initialised as
 * nn.Linear */
ember_status model_attention_add_params(struct model_layer *l, struct model_build *b, const char *prefix)
{
    int64_t c = l->in_shape[1], qkv[2] = {3 * c, c}, proj[2] = {c, c};
    bool bias = l->value[ATTN_BIAS] != 0.0;
    char name[MODEL_NAME_MAX + 16];
    snprintf(name, sizeof name, "%s%sc_attn", prefix, *prefix ? "." : "");
    if (!(l->t[ATTN_QKV_W] = add(b, name, "weight", 2, qkv)) ||
        (bias && !(l->t[ATTN_QKV_B] = add(b, name, "bias", 1, qkv))))
        return ember_last_status(b->ctx);
    ember_status st = ember_init_default(l->t[ATTN_QKV_W], l->t[ATTN_QKV_B], &b->rng);
    snprintf(name, sizeof name, "%s%sc_proj", prefix, *prefix ? "." : "");
    if (st == EMBER_OK && (!(l->t[ATTN_PROJ_W] = add(b, name, "weight", 2, proj)) ||
                           (bias && !(l->t[ATTN_PROJ_B] = add(b, name, "bias", 1, proj)))))
        return ember_last_status(b->ctx);
    return st == EMBER_OK ? ember_init_default(l->t[ATTN_PROJ_W], l->t[ATTN_PROJ_B], &b->rng) : st;
}

/* y = c_proj(attention(c_attn(x))), dropped out after c_proj too when
 * training with dropout, as nanoGPT's resid_dropout */
ember_tensor *model_attention_forward(struct model_layer *l, ember_tensor *x, bool training, uint64_t seed)
{
    int heads = (int)l->value[ATTN_HEADS];
    float p = (float)l->value[ATTN_DROPOUT];
    ember_tensor *qkv = ember_linear(x, l->t[ATTN_QKV_W], l->t[ATTN_QKV_B]); /* (N, T, 3C) */
    ember_tensor *y = l->cache ? ember_attention_cached(qkv, heads, l->cache, l->position)
                               : ember_attention(qkv, heads, p, training, seed);
    y = ember_linear(y, l->t[ATTN_PROJ_W], l->t[ATTN_PROJ_B]); /* (N, T, C) */
    return p > 0.0f && training ? ember_dropout(y, p, true, seed ^ 0x5a5a5a5a5a5a5a5aull) : y;
}

/* the two projections, and per head the scores and the mix: 2 T D each */
double model_attention_flops(const struct model_layer *l)
{
    double t = (double)l->in_shape[0], c = (double)l->in_shape[1];
    return t * (2.0 * 3.0 * c * c + 2.0 * c * c) + 2.0 * 2.0 * t * t * c;
}

void model_attention_describe(const struct model_layer *l, char *out, size_t len)
{
    snprintf(out, len, "CausalSelfAttention(%lld, heads=%d%s)", (long long)l->in_shape[1],
             (int)l->value[ATTN_HEADS], l->value[ATTN_BIAS] != 0.0 ? "" : ", bias=False");
}

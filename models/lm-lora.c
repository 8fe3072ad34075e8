/* SPDX-License-Identifier: MIT */
/*
 * models/lm-lora.c — LoRA adapters on a pretrained language model
 * (docs/models.md, "Fine-tuning a pretrained model").
 *
 * LoRA (Hu et al., 2021) leaves a projection's weight W (out, in) as it is
 * (frozen, and kept quantised) and learns a low-rank change beside it:
 *
 *     y = x W^T + (alpha / r) * dropout(x) A^T B^T      A (r, in), B (out, r)
 *
 * A starts as PEFT's kaiming_uniform_(a=sqrt(5)) would draw it, uniform in
 * +-1/sqrt(in), and B as zeros, so the adapted model starts as the
 * pretrained one and only the adapters' 2 r (in + out) numbers a
 * projection learn. The projections are PEFT's for LlamaForCausalLM, and
 * so are the tensors' names: base_model.model.model.layers.N.self_attn.
 * q_proj.lora_A.weight and the like, as PEFT's adapter files name them,
 * and B's rows are in PEFT's order: where a GGUF file holds llama's q and
 * k permuted (lm_hf_row), the forward pass reads B's rows in the file's
 * order through an index, so that a file of adapters means the same to
 * PEFT on the Hugging Face model as to ember. The forward pass
 * (lm-llama.c) adds each adapter through lm_project.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json-impl.h"
#include "lm-impl.h"
#include "models-impl.h"

#define DEFAULT_RANK  8
#define DEFAULT_ALPHA 16.0f
#define MAX_RANK      1024

/* each projection: ember's short name, PEFT's module and its parent */
static const struct {
    const char *name, *peft, *parent;
} PROJ[LM_PROJS] = {
    [LM_Q] = {"q", "q_proj", "self_attn"},    [LM_K] = {"k", "k_proj", "self_attn"},
    [LM_V] = {"v", "v_proj", "self_attn"},    [LM_O] = {"o", "o_proj", "self_attn"},
    [LM_GATE] = {"gate", "gate_proj", "mlp"}, [LM_UP] = {"up", "up_proj", "mlp"},
    [LM_DOWN] = {"down", "down_proj", "mlp"},
};

static ember_tensor *proj_weight(const struct lm_block *b, int p)
{
    ember_tensor *w[LM_PROJS] = {b->wq, b->wk, b->wv, b->wo, b->gate, b->up, b->down};
    return w[p];
}

static void adapter_name(char *out, size_t len, int64_t block, int p, char which)
{
    snprintf(out, len, "base_model.model.model.layers.%lld.%s.%s.lora_%c.weight", (long long)block,
             PROJ[p].parent, PROJ[p].peft, which);
}

/* "q,k,v,o" (or PEFT's q_proj, ..., or "all") -> a bit per projection */
static ember_status parse_targets(ember_ctx *ctx, const char *spec, unsigned *targets)
{
    *targets = 0;
    if (!spec || strcmp(spec, "all") == 0) {
        *targets = (1u << LM_PROJS) - 1;
        return EMBER_OK;
    }
    for (const char *at = spec; *at;) {
        size_t len = strcspn(at, ",");
        int found = -1;
        for (int p = 0; p < LM_PROJS; p++)
            if ((strlen(PROJ[p].name) == len && strncmp(at, PROJ[p].name, len) == 0) ||
                (strlen(PROJ[p].peft) == len && strncmp(at, PROJ[p].peft, len) == 0))
                found = p;
        if (found < 0)
            return ember_set_error(
                ctx, EMBER_ERR_ARG,
                "LoRA targets \"%.*s\", which is no projection: the targets are q, k, v, o, "
                "gate, up and down (or PEFT's q_proj ... down_proj), or all",
                (int)(len > 40 ? 40 : len), at);
        *targets |= 1u << found;
        at += len + (at[len] == ',');
    }
    if (!*targets)
        return ember_set_error(ctx, EMBER_ERR_ARG, "LoRA targets no projection");
    return EMBER_OK;
}

/* the adapters' tensors, A and B of each target in each block, all zero */
static ember_status add_adapters(ember_lm *lm, unsigned targets, int rank)
{
    char name[160];
    for (int64_t i = 0; i < lm->blocks; i++)
        for (int p = 0; p < LM_PROJS; p++) {
            if (!(targets & (1u << p)))
                continue;
            ember_tensor *w = proj_weight(&lm->block[i], p);
            const int64_t a[2] = {rank, ember_tensor_dim(w, 1)}, b[2] = {ember_tensor_dim(w, 0), rank};
            adapter_name(name, sizeof name, i, p, 'A');
            if (!(lm->block[i].lora_a[p] = ember_params_add(lm->lora, name, 2, a)))
                return ember_last_status(lm->ctx);
            adapter_name(name, sizeof name, i, p, 'B');
            if (!(lm->block[i].lora_b[p] = ember_params_add(lm->lora, name, 2, b)))
                return ember_last_status(lm->ctx);
        }
    return EMBER_OK;
}

int64_t lm_hf_row(const ember_lm *lm, int p, int64_t row)
{
    if (lm->neox || (p != LM_Q && p != LM_K))
        return row;
    int64_t half = lm->head_dim / 2, head = row / lm->head_dim, at = row % lm->head_dim;
    return head * lm->head_dim + (at % 2) * half +
           at / 2; /* neighbours (2i, 2i + 1) are halves (i, i + half) */
}

/* q's and k's rows in GGUF's order, where it is not Hugging Face's */
static ember_status add_row_orders(ember_lm *lm)
{
    for (int p = LM_Q; p <= LM_K; p++) {
        if (lm->neox || !(lm->lora_targets & (1u << p)))
            continue;
        int64_t rows = ember_tensor_dim(lm->block[0].lora_b[p], 0);
        int32_t *order = malloc((size_t)rows * sizeof *order);
        if (!order)
            return ember_set_error(lm->ctx, EMBER_ERR_NOMEM, "out of host memory for LoRA's row order");
        for (int64_t r = 0; r < rows; r++)
            order[r] = (int32_t)lm_hf_row(lm, p, r);
        lm->lora_rows[p] = ember_tensor_new(lm->ctx, EMBER_I32, 1, &rows);
        ember_status st = lm->lora_rows[p]
                              ? ember_tensor_write(lm->lora_rows[p], order, (size_t)rows * sizeof *order)
                              : ember_last_status(lm->ctx);
        free(order);
        if (st != EMBER_OK)
            return st;
    }
    return EMBER_OK;
}

static ember_status start_lora(ember_lm *lm, unsigned targets, int rank, float alpha, float dropout)
{
    if (lm->lora)
        return ember_set_error(lm->ctx, EMBER_ERR_ARG, "the model has LoRA adapters already");
    if (!(lm->lora = ember_params_new(lm->ctx)))
        return ember_last_status(lm->ctx);
    lm->lora_rank = rank;
    lm->lora_alpha = alpha;
    lm->lora_scale = alpha / (float)rank;
    lm->lora_dropout = dropout;
    lm->lora_targets = targets;
    ember_status st = add_adapters(lm, targets, rank);
    if (st == EMBER_OK)
        st = add_row_orders(lm);
    if (st != EMBER_OK)
        lm_lora_free(lm);
    return st;
}

void lm_lora_free(ember_lm *lm)
{
    if (lm->model) /* it owns the set */
        ember_model_free(lm->model);
    else
        ember_params_free(lm->lora);
    lm->model = NULL;
    lm->lora = NULL;
    for (int p = 0; p < 2; p++) {
        ember_tensor_free(lm->lora_rows[p]);
        lm->lora_rows[p] = NULL;
    }
    for (int64_t i = 0; lm->block && i < lm->blocks; i++)
        for (int p = 0; p < LM_PROJS; p++)
            lm->block[i].lora_a[p] = lm->block[i].lora_b[p] = NULL;
}

ember_params *ember_lm_lora(ember_lm *lm, const ember_lora_options *options)
{
    if (!lm)
        return NULL;
    ember_lora_options o = options ? *options : (ember_lora_options){0};
    int rank = o.rank ? o.rank : DEFAULT_RANK;
    float alpha = o.alpha != 0.0f ? o.alpha : DEFAULT_ALPHA;
    unsigned targets;
    if (rank < 1 || rank > MAX_RANK || !(alpha > 0.0f && alpha < 1e6f) ||
        !(o.dropout >= 0.0f && o.dropout < 1.0f)) {
        ember_set_error(lm->ctx, EMBER_ERR_ARG,
                        "LoRA takes a rank of 1 to %d, an alpha above 0 and a dropout in [0, 1); not r=%d, "
                        "alpha=%g, dropout=%g",
                        MAX_RANK, o.rank, (double)o.alpha, (double)o.dropout);
        return NULL;
    }
    if (parse_targets(lm->ctx, o.targets, &targets) != EMBER_OK ||
        start_lora(lm, targets, rank, alpha, o.dropout) != EMBER_OK)
        return NULL;
    /* A as PEFT draws it (uniform in +-1/sqrt(in)), block by block; B stays zero */
    ember_rng rng = ember_rng_seed(o.seed);
    for (int64_t i = 0; i < lm->blocks; i++)
        for (int p = 0; p < LM_PROJS; p++) {
            ember_tensor *a = lm->block[i].lora_a[p];
            float bound = a ? 1.0f / sqrtf((float)ember_tensor_dim(a, 1)) : 0.0f;
            if (a && ember_init_uniform(a, -bound, bound, &rng) != EMBER_OK) {
                lm_lora_free(lm);
                return NULL;
            }
        }
    lm->lora_seed = o.seed;
    return lm->lora;
}

/* alpha from the adapter's own metadata (ember writes it), else from the
 * adapter_config.json beside it (PEFT's) */
static ember_status adapter_alpha(ember_lm *lm, const ember_checkpoint *ck, const char *path, float *alpha)
{
    const char *meta = ember_checkpoint_meta(ck, "lora_alpha");
    if (meta) {
        *alpha = strtof(meta, NULL);
        return *alpha > 0.0f
                   ? EMBER_OK
                   : ember_set_error(lm->ctx, EMBER_ERR_FORMAT, "%s: lora_alpha is \"%.40s\"", path, meta);
    }
    char config[4096];
    const char *slash = strrchr(path, '/');
    int dir = slash ? (int)(slash - path + 1) : 0;
    snprintf(config, sizeof config, "%.*sadapter_config.json", dir, path);
    FILE *f = fopen(config, "rb");
    char text[16384];
    size_t n = f ? fread(text, 1, sizeof text - 1, f) : 0;
    if (f)
        fclose(f);
    text[n] = 0;
    if (f && n == sizeof text - 1)
        return ember_set_error(lm->ctx, EMBER_ERR_FORMAT, "%s is over %zu bytes: not an adapter_config.json",
                               config, sizeof text - 1);
    double a = 0.0, rslora = 0.0;
    bool has_alpha = false, has_rslora = false;
    if (f &&
        (ember_json_number_field(lm->ctx, config, text, n, "lora_alpha", &a, &has_alpha) != EMBER_OK ||
         ember_json_number_field(lm->ctx, config, text, n, "use_rslora", &rslora, &has_rslora) != EMBER_OK))
        return ember_last_status(lm->ctx);
    if (!has_alpha || !(a > 0.0))
        return ember_set_error(lm->ctx, EMBER_ERR_FORMAT,
                               "%s does not say its lora_alpha, and %s %s: the adapter's scale is unknown",
                               path, config, f ? "has no positive \"lora_alpha\"" : "cannot be read");
    if (has_rslora && rslora != 0.0)
        return ember_set_error(lm->ctx, EMBER_ERR_UNSUPPORTED,
                               "%s was trained with use_rslora (a scale of alpha / sqrt(r)), which ember "
                               "does not apply yet",
                               path);
    *alpha = (float)a;
    return EMBER_OK;
}

ember_status ember_lm_load_adapter(ember_lm *lm, const char *path)
{
    if (!lm)
        return EMBER_ERR_ARG;
    if (!path)
        return ember_set_error(lm->ctx, EMBER_ERR_ARG, "ember_lm_load_adapter: no path");
    ember_checkpoint *ck = ember_checkpoint_open(lm->ctx, path);
    if (!ck)
        return ember_last_status(lm->ctx);
    /* which projections it adapts, and its rank, from block 0's tensors */
    unsigned targets = 0;
    int rank = 0;
    char name[160];
    for (int p = 0; p < LM_PROJS; p++) {
        int64_t shape[EMBER_MAX_DIMS];
        adapter_name(name, sizeof name, 0, p, 'A');
        if (ember_checkpoint_tensor_shape(ck, name, shape) == 2) {
            targets |= 1u << p;
            rank = (int)shape[0];
        }
    }
    float alpha = 0.0f;
    ember_status st = EMBER_OK;
    if (!targets || rank < 1 || rank > MAX_RANK)
        st = ember_set_error(
            lm->ctx, EMBER_ERR_FORMAT, "%s holds no LoRA adapter of this model's block 0 (%s, rank 1 to %d)",
            path, "base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight and the like", MAX_RANK);
    if (st == EMBER_OK)
        st = adapter_alpha(lm, ck, path, &alpha);
    ember_checkpoint_close(ck);
    /* the set the file must match, tensor for tensor; then its values */
    if (st == EMBER_OK)
        st = start_lora(lm, targets, rank, alpha, 0.0f);
    if (st == EMBER_OK && (st = ember_params_load(lm->lora, path)) != EMBER_OK) {
        lm_lora_free(lm);
        if (st == EMBER_ERR_ARG) { /* tensors that do not fit this model: the file's fault, not the call's */
            char said[1024];
            snprintf(said, sizeof said, "%s", ember_last_error(lm->ctx));
            st = ember_set_error(lm->ctx, EMBER_ERR_FORMAT, "%s", said);
        }
    }
    return st;
}

ember_params *ember_lm_adapter(ember_lm *lm) { return lm ? lm->lora : NULL; }

ember_status ember_lm_set_training(ember_lm *lm, bool training)
{
    if (!lm)
        return EMBER_ERR_ARG;
    lm->training = training;
    return EMBER_OK;
}

const char *ember_lm_lora_describe(const ember_lm *lm, char *out, size_t len)
{
    if (!lm || !lm->lora) {
        snprintf(out, len, "no LoRA adapters");
        return out;
    }
    char targets[64] = "";
    for (int p = 0; p < LM_PROJS; p++)
        if (lm->lora_targets & (1u << p)) {
            size_t used = strlen(targets);
            snprintf(targets + used, sizeof targets - used, "%s%s", used ? "," : "", PROJ[p].name);
        }
    snprintf(out, len, "LoRA r=%d alpha=%g dropout=%g on %s of %lld blocks: %lld parameters", lm->lora_rank,
             (double)lm->lora_alpha, (double)lm->lora_dropout, targets, (long long)lm->blocks,
             (long long)ember_params_numel(lm->lora));
    return out;
}

ember_tensor *lm_project(ember_lm *lm, int64_t block, int p, ember_tensor *h, ember_tensor *bias)
{
    const struct lm_block *b = &lm->block[block];
    ember_tensor *y = ember_linear(h, proj_weight(b, p), bias);
    if (!b->lora_a[p])
        return y;
    ember_tensor *in = h;
    if (lm->training && lm->lora_dropout > 0.0f) /* a fresh mask each forward, each projection */
        in = ember_dropout(h, lm->lora_dropout, true,
                           lm->lora_seed ^ (lm->forwards * 0x9e3779b97f4a7c15ull) ^
                               (uint64_t)(block * LM_PROJS + p + 1) * 0xbf58476d1ce4e5b9ull);
    /* scaled at rank r, not at the output's width: one tensor of r values a position fewer to keep for
     * the backward pass than scaling B's product would take (the same sum, within float rounding) */
    ember_tensor *low = ember_scale(ember_linear(in, b->lora_a[p], NULL), lm->lora_scale);
    /* B's rows in the file's order where llama's q and k are permuted (the gradient scatters back) */
    ember_tensor *up =
        p <= LM_K && lm->lora_rows[p] ? ember_embedding(lm->lora_rows[p], b->lora_b[p]) : b->lora_b[p];
    return ember_add(y, ember_linear(low, up, NULL));
}

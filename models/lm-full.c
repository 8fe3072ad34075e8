/* SPDX-License-Identifier: MIT */
/*
 * models/lm-full.c — full fine-tuning of a pretrained language model: every
 * weight the forward pass reads (the embedding, each block's norms,
 * projections and biases, the final norm and the output) dequantised to
 * F32 and made a parameter to train (docs/models.md, "Fine-tuning a
 * pretrained model").
 *
 * The parameters are named as the GGUF file names its tensors
 * (token_embd.weight, blk.N.attn_q.weight ...) and keep its layout, llama's
 * permuted q and k rows included, so that a checkpoint of them is read
 * back by name (ember_lm_load_weights) and written back into the file's
 * own tensors (ember_lm_save_merged). A tied output is the embedding, one
 * parameter both ends train. Where LoRA learns millions of numbers, this
 * learns all of them, and the optimizer keeps two moments of each: for
 * SmolLM2-135M, 0.5 GB of weights, as much again of gradients and twice
 * that of moments before any activation.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lm-impl.h"
#include "models-impl.h"

/* each weight of the model: its GGUF name and the slot that holds it */
struct weight {
    char name[64];
    ember_tensor **slot;
};

/* the weights the forward pass reads, in the file's names; how many (a
 * caller's array of 3 + 13 per block) */
static int64_t list_weights(ember_lm *lm, struct weight *w)
{
    int64_t n = 0;
#define ADD(slot_, ...)                                                                                      \
    (*(slot_) ? (snprintf(w[n].name, sizeof w[n].name, __VA_ARGS__), w[n++].slot = (slot_)) : 0)
    ADD(&lm->token_embd, "token_embd.weight");
    ADD(&lm->output_norm, "output_norm.weight");
    ADD(&lm->output, "output.weight"); /* NULL where tied to the embedding */
    for (int64_t i = 0; i < lm->blocks; i++) {
        struct lm_block *b = &lm->block[i];
        long long k = (long long)i;
        ADD(&b->attn_norm, "blk.%lld.attn_norm.weight", k);
        ADD(&b->wq, "blk.%lld.attn_q.weight", k);
        ADD(&b->wk, "blk.%lld.attn_k.weight", k);
        ADD(&b->wv, "blk.%lld.attn_v.weight", k);
        ADD(&b->wo, "blk.%lld.attn_output.weight", k);
        ADD(&b->bq, "blk.%lld.attn_q.bias", k);
        ADD(&b->bk, "blk.%lld.attn_k.bias", k);
        ADD(&b->bv, "blk.%lld.attn_v.bias", k);
        ADD(&b->ffn_norm, "blk.%lld.ffn_norm.weight", k);
        ADD(&b->gate, "blk.%lld.ffn_gate.weight", k);
        ADD(&b->up, "blk.%lld.ffn_up.weight", k);
        ADD(&b->down, "blk.%lld.ffn_down.weight", k);
    }
#undef ADD
    return n;
}

void lm_full_free(ember_lm *lm)
{
    if (!lm->full)
        return;
    /* the slots hold the set's tensors: the set frees them, not ember_lm_free */
    struct weight *w = malloc((size_t)(3 + 13 * lm->blocks) * sizeof *w);
    int64_t n = w ? list_weights(lm, w) : 0;
    for (int64_t i = 0; i < n; i++)
        *w[i].slot = NULL;
    free(w);
    if (lm->model) /* it owns the set */
        ember_model_free(lm->model);
    else
        ember_params_free(lm->full);
    lm->model = NULL;
    lm->full = NULL;
}

ember_params *ember_lm_full(ember_lm *lm)
{
    if (!lm)
        return NULL;
    if (lm->full)
        return lm->full;
    if (lm->lora) {
        ember_set_error(lm->ctx, EMBER_ERR_ARG,
                        "ember_lm_full: the model has LoRA adapters; fine-tune one way");
        return NULL;
    }
    struct weight *w = malloc((size_t)(3 + 13 * lm->blocks) * sizeof *w);
    ember_tensor **fresh = calloc((size_t)(3 + 13 * lm->blocks), sizeof *fresh);
    ember_params *set = ember_params_new(lm->ctx);
    struct gguf_file f;
    bool opened = false;
    ember_status st = !w || !fresh || !set ? ember_set_error(lm->ctx, EMBER_ERR_NOMEM,
                                                             "out of host memory for the model's weights")
                                           : gguf_open(lm->ctx, lm->path, &f);
    opened = w && fresh && set && st == EMBER_OK;
    int64_t n = st == EMBER_OK ? list_weights(lm, w) : 0;
    float *values = NULL;
    for (int64_t i = 0; st == EMBER_OK && i < n; i++) {
        /* the file's values, dequantised as the product dequantises them */
        const struct gguf_tensor *t = gguf_tensor_find(&f, w[i].name);
        ember_tensor *old = *w[i].slot;
        int ndim = ember_tensor_ndim(old);
        int64_t shape[2] = {ember_tensor_dim(old, 0), ndim > 1 ? ember_tensor_dim(old, 1) : 1};
        float *grown = t ? realloc(values, (size_t)t->numel * sizeof *values) : NULL;
        if (!t || t->numel != shape[0] * shape[1])
            st = ember_set_error(lm->ctx, EMBER_ERR_FORMAT, "%s: %s is not the tensor the model loaded",
                                 lm->path, w[i].name);
        else if (!grown)
            st = ember_set_error(lm->ctx, EMBER_ERR_NOMEM, "out of host memory for %s", w[i].name);
        else if ((values = grown, fresh[i] = ember_params_add(set, w[i].name, ndim, shape)) == NULL)
            st = ember_last_status(lm->ctx);
        else if ((st = gguf_tensor_to_f32(lm->ctx, t, values)) == EMBER_OK)
            st = ember_tensor_write(fresh[i], values, (size_t)t->numel * sizeof *values);
    }
    free(values);
    if (opened)
        gguf_close(&f);
    if (st == EMBER_OK) { /* every weight made: the quantised ones given back, the new ones in their slots */
        for (int64_t i = 0; i < n; i++) {
            ember_tensor_free(*w[i].slot);
            *w[i].slot = fresh[i];
        }
        lm->full = set;
        lm->weight_bytes = (size_t)ember_params_numel(set) * sizeof(float);
        set = NULL;
    }
    ember_params_free(set);
    free(w);
    free(fresh);
    return st == EMBER_OK ? lm->full : NULL;
}

ember_status ember_lm_load_weights(ember_lm *lm, const char *path)
{
    if (!lm)
        return EMBER_ERR_ARG;
    if (!path)
        return ember_set_error(lm->ctx, EMBER_ERR_ARG, "ember_lm_load_weights: no path");
    /* LoRA's adapters given for weights: said as such, before the weights are made */
    ember_checkpoint *ck = ember_checkpoint_open(lm->ctx, path);
    if (!ck)
        return ember_last_status(lm->ctx);
    int64_t shape[EMBER_MAX_DIMS];
    bool adapters = ember_checkpoint_meta(ck, "lora_alpha") ||
                    ember_checkpoint_tensor_shape(
                        ck, "base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight", shape) > 0 ||
                    ember_checkpoint_tensor_shape(
                        ck, "base_model.model.model.layers.0.self_attn.v_proj.lora_A.weight", shape) > 0;
    ember_checkpoint_close(ck);
    if (adapters)
        return ember_set_error(
            lm->ctx, EMBER_ERR_FORMAT,
            "%s holds LoRA adapters, not a full fine-tuning's weights: load it as adapters "
            "(ember_lm_load_adapter)",
            path);
    ember_params *set = ember_lm_full(lm);
    ember_status st = set ? ember_params_load(set, path) : ember_last_status(lm->ctx);
    if (st == EMBER_ERR_ARG) { /* a file of other tensors: its data, not the caller's call, is wrong */
        char why[1024];
        snprintf(why, sizeof why, "%s", ember_last_error(lm->ctx));
        st = ember_set_error(lm->ctx, EMBER_ERR_FORMAT, "%s", why);
    }
    return st;
}

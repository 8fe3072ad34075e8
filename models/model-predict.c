/* SPDX-License-Identifier: MIT */
/*
 * models/model-predict.c — inference from the caller's buffers.
 *
 * What an embedder needs from a trained model: floats in, logits or
 * probabilities out, nothing left behind. The input batch tensor is kept
 * between calls; a call of another size frees it and takes one of the new
 * size, which the context's pools serve without allocating once that size
 * has been seen. The forward pass runs with recording off and everything it
 * made goes back to the pools before returning, so the caller's tape is
 * untouched and a million predictions hold no more memory than one.
 */
#include <stdio.h>

#include "models-impl.h"

static ember_status predict(ember_model *m, const float *in, int64_t n, float *out, bool probs)
{
    if (!m)
        return EMBER_ERR_ARG;
    ember_ctx *ctx = m->ctx;
    const char *fn = probs ? "ember_model_predict_probs" : "ember_model_predict";
    if (!in || !out)
        return ember_set_error(ctx, EMBER_ERR_ARG, "%s: NULL %s", fn, !in ? "input" : "output");
    if (n < 1)
        return ember_set_error(ctx, EMBER_ERR_ARG, "%s: n is %lld; it must be at least 1", fn, (long long)n);
    if (m->predict_n != n) {
        int64_t shape[4] = {n};
        for (int i = 0; i < m->sample_ndim; i++)
            shape[1 + i] = m->sample_shape[i];
        ember_tensor_free(m->predict_x);
        m->predict_n = 0;
        if (!(m->predict_x = ember_tensor_new(ctx, EMBER_F32, 1 + m->sample_ndim, shape)))
            return ember_last_status(ctx);
        m->predict_n = n;
    }
    ember_tensor *x = m->predict_x;
    ember_status st = ember_tensor_write(x, in, (size_t)ember_tensor_numel(x) * sizeof *in);
    if (st != EMBER_OK)
        return st;

    bool was_training = m->training, was_recording = ember_set_grad_enabled(ctx, false);
    ember_model_set_training(m, false);
    ember_tape_mark mark = ember_tape_mark_now(ctx);
    ember_tensor *y = ember_model_forward(m, x); /* (n, classes) */
    if (probs)
        y = ember_softmax(y, 1);
    st = y ? ember_tensor_read(y, out, (size_t)(n * m->classes) * sizeof *out) : ember_last_status(ctx);
    ember_tape_release_since(ctx, mark, NULL);
    ember_model_set_training(m, was_training);
    ember_set_grad_enabled(ctx, was_recording);
    return st;
}

ember_status ember_model_predict(ember_model *m, const float *in, int64_t n, float *logits_out)
{
    return predict(m, in, n, logits_out, false);
}

ember_status ember_model_predict_probs(ember_model *m, const float *in, int64_t n, float *probs_out)
{
    return predict(m, in, n, probs_out, true);
}

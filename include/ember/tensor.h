/* SPDX-License-Identifier: MIT */
/*
 * ember/tensor.h — tensors, the ops on them and autograd: a part of ember.h.
 *
 * A tensor lives on its context's device; an op makes a new one and, while
 * grad is on, records itself on the tape so that ember_backward can
 * differentiate the whole computation.
 *
 * Include <ember.h>, which includes this part in its place among the
 * others; the conventions at the top of ember.h hold here too.
 */
#ifndef EMBER_H
#error "include <ember.h>: ember/tensor.h is a part of it, not a header of its own"
#elif !defined(EMBER_PART_TENSOR_H)
#define EMBER_PART_TENSOR_H

/* ----------------------------------------------------------------- tensors */

#define EMBER_MAX_DIMS     6

typedef enum ember_dtype {
    EMBER_F32, /* float, for data, parameters and gradients */
    EMBER_I32, /* int32_t, for class-index targets */
    /* Block-quantised weights as GGUF files keep them (ggml's formats;
     * docs/models.md, "Block quantisation"): a matrix (rows, cols) whose
     * rows are cut into blocks of 32 or 256 small integers with a scale
     * or two. ember_linear takes one as its weight and ember_embedding as
     * its table, and no other op; ember_tensor_write and _read move the
     * blocks' bytes as they are stored (ember_tensor_bytes of them). */
    EMBER_Q4_0, /* 32 weights in 18 bytes: d * (q - 8) */
    EMBER_Q4_1, /* 32 in 20: d * q + m */
    EMBER_Q8_0, /* 32 in 34: d * q, q 8-bit */
    EMBER_Q4_K, /* 256 in 144: 4-bit q, a 6-bit scale and min every 32 */
    EMBER_Q6_K, /* 256 in 210: 6-bit q, an 8-bit scale every 16 */
} ember_dtype;

typedef struct ember_tensor ember_tensor;

/* A zero-filled tensor on the context's device, owned by the caller. */
EMBER_API ember_tensor *ember_tensor_new(ember_ctx *ctx, ember_dtype dtype, int ndim, const int64_t *shape);
/* A caller-owned copy, contiguous, detached from the tape. */
EMBER_API ember_tensor *ember_tensor_copy(const ember_tensor *t);
/* dst's values become src's, on the device (same context, shape and
 * dtype; any strides): how a key/value cache, a narrow view of one, is
 * filled. Not recorded on the tape. */
EMBER_API ember_status ember_tensor_copy_from(ember_tensor *dst, const ember_tensor *src);
/* Frees a caller-owned tensor; tensors owned by the tape, a parameter set or
 * a batcher are left to their owner. */
EMBER_API void ember_tensor_free(ember_tensor *t);

EMBER_API ember_ctx *ember_tensor_ctx(const ember_tensor *t);
EMBER_API ember_dtype ember_tensor_dtype(const ember_tensor *t);
EMBER_API int ember_tensor_ndim(const ember_tensor *t);
EMBER_API int64_t ember_tensor_dim(const ember_tensor *t, int axis); /* axis < 0 counts from the end */
EMBER_API int64_t ember_tensor_numel(const ember_tensor *t);
/* The bytes its values take: numel * 4, or a quantised tensor's blocks. */
EMBER_API size_t ember_tensor_bytes(const ember_tensor *t);
/* "F32", "Q4_K", ...: a dtype's name, as GGUF and safetensors spell it. */
EMBER_API const char *ember_dtype_name(ember_dtype dtype);

/* How many times t's storage has been written in place since it was made:
 * by ember_tensor_write, an optimizer's step (parameters) or batch norm in
 * training (its running statistics). A cache of something computed from t
 * (a model's batch norm folded into a convolution) stays good while the
 * count is what it was. */
EMBER_API uint64_t ember_tensor_writes(const ember_tensor *t);
/* Copy between host memory and the tensor, in row-major order whatever the
 * tensor's strides; `bytes` must equal ember_tensor_bytes. */
EMBER_API ember_status ember_tensor_write(ember_tensor *t, const void *src, size_t bytes);
EMBER_API ember_status ember_tensor_read(const ember_tensor *t, void *dst, size_t bytes);
/* The value of a one-element F32 tensor. */
EMBER_API ember_status ember_tensor_item(const ember_tensor *t, float *value);

/* Gradients: a tensor that requires grad gets .grad filled by ember_backward. */
EMBER_API ember_status ember_tensor_set_requires_grad(ember_tensor *t, bool requires_grad);
EMBER_API bool ember_tensor_requires_grad(const ember_tensor *t);
/* The accumulated gradient, same shape as t, or NULL if none was computed.
 * Only a leaf (a tensor the caller made, a parameter) keeps one after
 * ember_backward: an op's output's gradient is given back once the op's own
 * backward pass has used it, as PyTorch keeps none for a non-leaf. */
EMBER_API ember_tensor *ember_tensor_grad(const ember_tensor *t);

/* --------------------------------------------------------------------- ops
 *
 * Each op returns a new tensor owned by the tape. When grad is enabled and
 * an input requires grad, the op is recorded so that ember_backward can
 * differentiate it. Elementwise binary ops broadcast as NumPy does. */

/* y = a + b */
EMBER_API ember_tensor *ember_add(ember_tensor *a, ember_tensor *b);
/* y = a - b */
EMBER_API ember_tensor *ember_sub(ember_tensor *a, ember_tensor *b);
/* y = a * b */
EMBER_API ember_tensor *ember_mul(ember_tensor *a, ember_tensor *b);
/* y = alpha * x */
EMBER_API ember_tensor *ember_scale(ember_tensor *x, float alpha);
/* y = max(x, 0) */
EMBER_API ember_tensor *ember_relu(ember_tensor *x);
/* y = x > 0 ? x : slope * x (PyTorch's LeakyReLU; its default slope is 0.01) */
EMBER_API ember_tensor *ember_leaky_relu(ember_tensor *x, float slope);
/* y = 1 / (1 + e^-x) */
EMBER_API ember_tensor *ember_sigmoid(ember_tensor *x);
/* y = tanh x */
EMBER_API ember_tensor *ember_tanh(ember_tensor *x);
/* y = x * Phi(x), Phi the standard normal distribution function (PyTorch's
 * GELU, exact: not the tanh approximation) */
EMBER_API ember_tensor *ember_gelu(ember_tensor *x);
/* y = x * sigmoid(x): PyTorch's SiLU (also called swish; Llama's MLPs and
 * EfficientNet use it) */
EMBER_API ember_tensor *ember_silu(ember_tensor *x);
/* y = ln(1 + e^x), and x itself for x > 20: PyTorch's Softplus (beta 1,
 * threshold 20), a smooth ReLU */
EMBER_API ember_tensor *ember_softplus(ember_tensor *x);
/* y = x * tanh(softplus(x)): PyTorch's Mish */
EMBER_API ember_tensor *ember_mish(ember_tensor *x);
/* y = min(max(x, 0), 6): PyTorch's ReLU6 (MobileNet's) */
EMBER_API ember_tensor *ember_relu6(ember_tensor *x);
/* y = relu6(x + 3) / 6: PyTorch's Hardsigmoid */
EMBER_API ember_tensor *ember_hardsigmoid(ember_tensor *x);
/* y = x * relu6(x + 3) / 6: PyTorch's Hardswish (MobileNetV3's) */
EMBER_API ember_tensor *ember_hardswish(ember_tensor *x);

/* Dropout, as PyTorch's: when `training`, y = x * mask, mask[i] = 1 / (1 - p)
 * with probability 1 - p and 0 otherwise, drawn from `seed` (the same mask
 * on every device; use a new seed each step); otherwise y is x itself.
 * 0 <= p <= 1. */
EMBER_API ember_tensor *ember_dropout(ember_tensor *x, float p, bool training, uint64_t seed);

/* y = sum of x over `axis` (EMBER_ALL_AXES: over everything, giving a
 * scalar); keepdim keeps the summed axis with size 1. */
#define EMBER_ALL_AXES     127
EMBER_API ember_tensor *ember_sum(ember_tensor *x, int axis, bool keepdim);
/* y = sum(x) / count, over the same axes as ember_sum */
EMBER_API ember_tensor *ember_mean(ember_tensor *x, int axis, bool keepdim);

/* y_i = e^(x_i - max x) / sum_j e^(x_j - max x), along `axis` */
EMBER_API ember_tensor *ember_softmax(ember_tensor *x, int axis);
/* y_i = x_i - max x - ln sum_j e^(x_j - max x), along `axis` */
EMBER_API ember_tensor *ember_log_softmax(ember_tensor *x, int axis);

/* loss = mean over n of -log softmax(logits_n)[target_n], as PyTorch's
 * CrossEntropyLoss and Keras's sparse categorical cross-entropy.
 * logits is (N, classes) F32, target is (N) I32 with values in [0, classes);
 * an index outside that range gives a NaN loss. */
EMBER_API ember_tensor *ember_cross_entropy(ember_tensor *logits, ember_tensor *target);
/* A target that takes no part in ember_cross_entropy_ignore's loss:
 * PyTorch's ignore_index default, the label Hugging Face's trainers give
 * the tokens a model is not taught to write (a chat's prompt). */
#define EMBER_IGNORE_INDEX (-100)
/* ember_cross_entropy over the targets that are not EMBER_IGNORE_INDEX
 * alone: their mean, and no gradient to the other rows, as PyTorch's
 * F.cross_entropy(..., ignore_index=-100). Every target ignored gives a
 * loss of 0 (PyTorch's is NaN) with a gradient of 0. It reads the targets
 * back to the host to weigh the rows. */
EMBER_API ember_tensor *ember_cross_entropy_ignore(ember_tensor *logits, ember_tensor *target);

/* y = fn(user, x), its activations recomputed in the backward pass
 * instead of kept (gradient checkpointing, PyTorch's
 * torch.utils.checkpoint): fn runs with grad off now, and again with grad
 * on when the backward pass reaches y; the gradients of x and of the
 * parameters fn uses come out as without it. The memory of everything fn
 * makes but its output, for one more run of fn. fn must compute the same
 * both times (dropout from a seed it is given), return a tensor an op
 * made, and `user` must outlive the backward pass. */
typedef ember_tensor *(*ember_recompute_fn)(void *user, ember_tensor *x);
EMBER_API ember_tensor *ember_recompute(ember_tensor *x, ember_recompute_fn fn, void *user);
/* The same, but for the outputs of fn's ember_linear products of input
 * width 64 or more, which the first run keeps and the second takes back
 * instead of multiplying again (PyTorch's selective activation
 * checkpointing, keeping matrix products): the second run does only the
 * cheap ops, for the memory of those outputs until the backward pass has
 * gone through y. Its fn may not call ember_recompute or itself (the
 * backward pass fails, saying so). */
EMBER_API ember_tensor *ember_recompute_selective(ember_tensor *x, ember_recompute_fn fn, void *user);

/* y = x @ w^T + b: x is (N, in), w is (out, in), b is (out) or NULL; y is
 * (N, out). x (N, T, in) (or more axes) gives y (N, T, out): every
 * position through the layer, as PyTorch's Linear. w may be quantised
 * (EMBER_Q4_0 ...): its blocks are dequantised as the product reads them,
 * and the gradient reaches x and b only. */
EMBER_API ember_tensor *ember_linear(ember_tensor *x, ember_tensor *w, ember_tensor *b);
/* y = a @ b: a is (M, K), b is (K, N); y is (M, N) */
EMBER_API ember_tensor *ember_matmul(ember_tensor *a, ember_tensor *b);

/* 2-d cross-correlation, as PyTorch's Conv2d: x is (N, C, H, W), w is
 * (OC, C, KH, KW), b is (OC) or NULL; y is (N, OC, OH, OW) with
 * OH = (H + 2 * padding - KH) / stride + 1, likewise OW. */
EMBER_API ember_tensor *ember_conv2d(ember_tensor *x, ember_tensor *w, ember_tensor *b, int stride,
                                     int padding);
/* The same with the channels in `groups` groups (PyTorch's Conv2d(groups=)):
 * w is (OC, C / groups, KH, KW), OC a multiple of groups, and output
 * channel o sees only the input channels of its group o / (OC / groups).
 * groups = C = OC is a depthwise convolution (MobileNet's). */
EMBER_API ember_tensor *ember_conv2d_grouped(ember_tensor *x, ember_tensor *w, ember_tensor *b, int stride,
                                             int padding, int groups);
/* y = max over each kernel x kernel window: x is (N, C, H, W), y is
 * (N, C, (H - kernel) / stride + 1, (W - kernel) / stride + 1). */
EMBER_API ember_tensor *ember_max_pool2d(ember_tensor *x, int kernel, int stride);
/* y = the mean of each kernel x kernel window: x is (N, C, H, W), y is
 * (N, C, (H - kernel) / stride + 1, (W - kernel) / stride + 1). */
EMBER_API ember_tensor *ember_avg_pool2d(ember_tensor *x, int kernel, int stride);
/* The same with `padding` on each side (at most kernel / 2) and, with
 * ceil_mode, a last window for what the others leave over, as PyTorch's
 * MaxPool2d and AvgPool2d: OH = floor or ceil((H + 2 padding - kernel) /
 * stride) + 1, a window starting past the padding dropped. The max never
 * takes the padding; the mean divides by the window's elements inside the
 * padded input (PyTorch's count_include_pad=True), or inside x alone. */
EMBER_API ember_tensor *ember_max_pool2d_padded(ember_tensor *x, int kernel, int stride, int padding,
                                                bool ceil_mode);
EMBER_API ember_tensor *ember_avg_pool2d_padded(ember_tensor *x, int kernel, int stride, int padding,
                                                bool ceil_mode, bool count_include_pad);
/* y (N, C, scale H, scale W): x (N, C, H, W) made larger, as PyTorch's
 * nn.Upsample(scale_factor=scale): each output the nearest input (the one
 * at floor(position / scale)), or with `bilinear` the mix of the two
 * nearest on each axis (align_corners=False: the output's centres mapped
 * onto the input's, clamped at its first position). 1 <= scale <= 64. */
EMBER_API ember_tensor *ember_upsample2d(ember_tensor *x, int scale, bool bilinear);
/* y (N, C) = the mean of each (H, W) plane of x (N, C, H, W): PyTorch's
 * AdaptiveAvgPool2d(1) and a flatten. */
EMBER_API ember_tensor *ember_global_avg_pool2d(ember_tensor *x);

/* Batch normalization, as PyTorch's BatchNorm1d on x (N, C) and
 * BatchNorm2d on x (N, C, H, W): each channel over the batch (and its
 * positions), y = (x - mean) / sqrt(var + eps) * weight + bias, weight and
 * bias (C) or NULL. When `training`, mean and var are the batch's (var
 * biased) and the running statistics (C) move towards them:
 * running = (1 - momentum) running + momentum stat, var unbiased there;
 * otherwise the running statistics are the mean and var, and stay.
 * PyTorch's defaults: momentum 0.1, eps 1e-5. */
EMBER_API ember_tensor *ember_batch_norm(ember_tensor *x, ember_tensor *weight, ember_tensor *bias,
                                         ember_tensor *running_mean, ember_tensor *running_var, bool training,
                                         float momentum, float eps);
/* relu(ember_batch_norm(...)), in the same passes over x and dy: the pair
 * that follows most convolutions, one op instead of two (a model runs a
 * batch_norm layer followed by a relu layer through it). */
EMBER_API ember_tensor *ember_batch_norm_relu(ember_tensor *x, ember_tensor *weight, ember_tensor *bias,
                                              ember_tensor *running_mean, ember_tensor *running_var,
                                              bool training, float momentum, float eps);
/* Batch normalization with running statistics, folded into the layer
 * before it: a convolution (or a linear layer) with weight w (OC, ...) and
 * bias b (OC) or NULL, followed by ember_batch_norm in evaluation, is one
 * convolution with
 *   w' = w * s (each output channel's filter scaled), b' = (b - running_mean) * s + bias,
 *   s = weight / sqrt(running_var + eps)
 * (weight and bias NULL: 1 and 0, as in ember_batch_norm). Sets *folded_w
 * and *folded_b to w' and b', tape tensors, and returns EMBER_OK. The
 * tape records the ops they are made of, so gradients reach w, b, weight
 * and bias; the running statistics are constants, as ember_batch_norm
 * treats them in evaluation. A model that is not training (evaluation,
 * prediction) runs its conv2d + batch_norm2d and linear + batch_norm1d
 * pairs so (docs/design.md): one pass less over every activation. */
EMBER_API ember_status ember_batch_norm_fold(ember_tensor *w, ember_tensor *b, ember_tensor *weight,
                                             ember_tensor *bias, ember_tensor *running_mean,
                                             ember_tensor *running_var, float eps, ember_tensor **folded_w,
                                             ember_tensor **folded_b);

/* Views share storage with x. reshape takes one -1 to infer a dimension and
 * copies first when x's strides do not allow a view. */
EMBER_API ember_tensor *ember_reshape(ember_tensor *x, int ndim, const int64_t *shape);
/* (N, d1, d2, ...) -> (N, d1 * d2 * ...) */
EMBER_API ember_tensor *ember_flatten(ember_tensor *x);
/* swaps two axes: a strided view, no copy */
EMBER_API ember_tensor *ember_transpose(ember_tensor *x, int axis0, int axis1);
/* a contiguous copy of x, or x itself when it already is contiguous */
EMBER_API ember_tensor *ember_contiguous(ember_tensor *x);
/* y = x's positions [start, start + length) along `axis`: a view (PyTorch's narrow) */
EMBER_API ember_tensor *ember_narrow(ember_tensor *x, int axis, int64_t start, int64_t length);
/* y = xs[0], xs[1], ... one after another along `axis` (torch.cat), every
 * other axis the same in all `count` of them: a new tensor, not a view */
EMBER_API ember_tensor *ember_concat(ember_tensor *const *xs, int count, int axis);
/* y = x with before[i] and after[i] positions holding `value` around each
 * axis i (x's ndim of each): PyTorch's F.pad in "constant" mode, ONNX's
 * Pad; -INFINITY before a max-pool pads as its own padding does. */
EMBER_API ember_tensor *ember_pad(ember_tensor *x, const int64_t *before, const int64_t *after, float value);

/* Sequences and attention: the ops of a GPT (docs/how-it-works.md,
 * "Attention"). Loss over every position of a sequence is
 * ember_cross_entropy with logits (N, T, classes) and targets (N, T). */

/* y (..., dim) = the rows of weight (vocab, dim) that index (...) I32
 * names, as PyTorch's Embedding; an index outside [0, vocab) gives a row of
 * NaN. The gradient goes to weight alone; a quantised weight's rows come
 * dequantised, and take no gradient. */
EMBER_API ember_tensor *ember_embedding(ember_tensor *index, ember_tensor *weight);
/* y = (x - mean) / sqrt(var + eps) * weight + bias over x's last axis (C),
 * var biased, as PyTorch's LayerNorm(C) (its eps: 1e-5); weight and bias
 * (C), or NULL for 1 and 0. */
EMBER_API ember_tensor *ember_layer_norm(ember_tensor *x, ember_tensor *weight, ember_tensor *bias,
                                         float eps);
/* y = x / sqrt(mean(x^2) + eps) * weight over x's last axis (C): the RMSNorm
 * of Llama and its kin (PyTorch's nn.RMSNorm(C, eps); Llama 2's eps: 1e-5).
 * weight (C), or NULL for 1. */
EMBER_API ember_tensor *ember_rms_norm(ember_tensor *x, ember_tensor *weight, float eps);
/* y = x / 2 * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 x^3))): the tanh form
 * of GELU that GPT-2 uses (PyTorch's GELU(approximate='tanh')) */
EMBER_API ember_tensor *ember_gelu_tanh(ember_tensor *x);
/* y = a @ b for each of B pairs: a (B, M, K), b (B, K, N), y (B, M, N)
 * (torch.bmm). A transposed view of either, ember_transpose(t, 1, 2), is
 * read in place, not copied. */
EMBER_API ember_tensor *ember_bmm(ember_tensor *a, ember_tensor *b);
/* Softmax over the last axis of scores x (..., Tq, Tk) of Tq queries over
 * Tk keys (Tq <= Tk, the queries being the last Tq positions), each query
 * seeing only the keys up to its own position: the others get 0. */
EMBER_API ember_tensor *ember_causal_softmax(ember_tensor *x);
/* Causal multi-head self-attention (a GPT's, before its output
 * projection): x (B, T, 3C) holds each position's query, key and value
 * side by side (C each, split into `heads` heads of C / heads); y (B, T, C)
 * = softmax(q k^T / sqrt(C / heads), causal) v per head, the heads side by
 * side. With `training` and dropout > 0 the attention weights go through
 * dropout (its mask drawn from `seed`, as ember_dropout's). */
EMBER_API ember_tensor *ember_attention(ember_tensor *x, int heads, float dropout, bool training,
                                        uint64_t seed);
/* The same for generation with a key/value cache: x (B, n, 3C) holds n new
 * positions; their keys and values are written into `cache` (2, B, heads,
 * L, C / heads), caller-owned and contiguous, at [position, position + n),
 * and each new query attends over the cache's first position + n places.
 * No gradient; one new token costs one position's work. */
EMBER_API ember_tensor *ember_attention_cached(ember_tensor *x, int heads, ember_tensor *cache,
                                               int64_t position);

/* Rotary position embedding (RoPE), as LLaMA-family models turn their
 * queries and keys: in each head of x (B, T, heads, dim), the pairs of its
 * first 2 * pairs values turn by their position's angles, token t being
 * at position `position + t`:
 *   y[2j] = x[2j] cos a - x[2j+1] sin a,  y[2j+1] = x[2j] sin a + x[2j+1] cos a
 * with a = p * base^(-2j / (2 * pairs)); with `neox` the pairs are
 * (j, j + pairs) instead (Qwen 2, GPT-NeoX). The angles come from a table
 * (positions, pairs, 2) of their cosines and sines that ember_rope_table
 * makes once (caller-owned, F32); `divisors` (pairs values, or NULL)
 * divide each pair's frequency, as Llama 3's scaled RoPE does.
 * Differentiable in x. */
EMBER_API ember_tensor *ember_rope_table(ember_ctx *ctx, int64_t positions, int64_t dims, float base,
                                         const float *divisors);
EMBER_API ember_tensor *ember_rope(ember_tensor *x, ember_tensor *table, int64_t position, bool neox);

/* ---------------------------------------------------------------- autograd */

/* Fills .grad of every tensor that requires grad and that `loss` (a
 * one-element tensor) depends on, adding to what is there. */
EMBER_API ember_status ember_backward(ember_tensor *loss);
/* While set, ember_backward calls `fn` for each leaf that requires grad
 * (each parameter) as soon as its gradient is final, in the order the
 * pass finishes them (the last layer's first): to start sending gradients
 * while the rest of the pass runs (ember_parallel does). NULL: none. */
typedef void (*ember_grad_ready_fn)(void *user, ember_tensor *leaf);
EMBER_API void ember_set_grad_ready(ember_ctx *ctx, ember_grad_ready_fn fn, void *user);
/* Releases every tensor the ops made since the last clear; their memory goes
 * back to the context's pools for the next step. */
EMBER_API void ember_tape_clear(ember_ctx *ctx);
/* A place on the tape, and a release back to it: for running ops with
 * recording off in the middle of other work (a validation pass inside a
 * training step) without clearing the tape the caller still needs.
 * ember_tape_release_since releases every tensor made since `mark` except
 * `keep` (NULL: none), which stays on the tape; it does nothing when nodes
 * were recorded since the mark, since their backward pass needs them
 * (EMBER_OK still). A mark the tape has been cleared past since
 * (ember_tape_clear) is EMBER_ERR_ARG, and nothing is released. */
typedef struct ember_tape_mark {
    int64_t tensors, nodes;
} ember_tape_mark;
EMBER_API ember_tape_mark ember_tape_mark_now(ember_ctx *ctx);
EMBER_API ember_status ember_tape_release_since(ember_ctx *ctx, ember_tape_mark mark, ember_tensor *keep);
/* Turns recording off (for evaluation) or on; returns the previous setting.
 * With recording off the ops save nothing for a backward pass; the tensors
 * they return still belong to the tape until ember_tape_clear.
 * ember_model_forward with recording off keeps only its output on the
 * tape, and ember_model_predict keeps nothing. */
EMBER_API bool ember_set_grad_enabled(ember_ctx *ctx, bool enabled);
/* Whether ops record for a backward pass now (true for a new context). */
EMBER_API bool ember_grad_enabled(const ember_ctx *ctx);

#endif /* EMBER_PART_TENSOR_H */

/* SPDX-License-Identifier: MIT */
/*
 * ember/train.h — parameters, checkpoints, initialisation and the optimizers: a part of ember.h.
 *
 * What training changes: a model's named parameters (PyTorch's state_dict
 * names), their checkpoints on disk, the random numbers and initial values
 * they start from, and the optimizers and learning-rate schedules that
 * step them.
 *
 * Include <ember.h>, which includes this part in its place among the
 * others; the conventions at the top of ember.h hold here too.
 */
#ifndef EMBER_H
#error "include <ember.h>: ember/train.h is a part of it, not a header of its own"
#elif !defined(EMBER_PART_TRAIN_H)
#define EMBER_PART_TRAIN_H

/* -------------------------------------------------------------- parameters */

/* A named set of parameters held in one allocation, with their gradients in
 * a second. Names follow PyTorch's state_dict ("conv1.weight"). */
typedef struct ember_params ember_params;

EMBER_API ember_params *ember_params_new(ember_ctx *ctx);
EMBER_API void ember_params_free(ember_params *params);

/* Adds a zero-filled parameter that requires grad and returns it (owned by
 * the set). Adding moves the set's storage, so add every parameter before
 * training starts. */
EMBER_API ember_tensor *ember_params_add(ember_params *params, const char *name, int ndim,
                                         const int64_t *shape);
/* Adds a zero-filled buffer: state the forward pass keeps and checkpoints
 * hold, which no optimizer touches and no gradient reaches (BatchNorm's
 * "running_mean", "running_var" and, with ndim 0, "num_batches_tracked";
 * PyTorch's register_buffer). */
EMBER_API ember_tensor *ember_params_add_buffer(ember_params *params, const char *name, int ndim,
                                                const int64_t *shape);
/* Parameters and buffers together, in the order added. */
EMBER_API int ember_params_count(const ember_params *params);
EMBER_API ember_tensor *ember_params_at(const ember_params *params, int index);
EMBER_API const char *ember_params_name(const ember_params *params, int index);
EMBER_API bool ember_params_is_buffer(const ember_params *params, int index);
EMBER_API ember_tensor *ember_params_find(const ember_params *params, const char *name);
/* Elements of the parameters, buffers not counted (Keras's and PyTorch's
 * "parameters"). */
EMBER_API int64_t ember_params_numel(const ember_params *params);
/* Sets every gradient to zero (one fill over the gradient allocation): a
 * device's fill can fail, as any launch can. */
EMBER_API ember_status ember_params_zero_grad(ember_params *params);

/* Checkpoints as safetensors: little-endian F32 under the parameters' and
 * buffers' names, readable by Python's safetensors and PyTorch's
 * load_state_dict (which converts num_batches_tracked to int64). Loading
 * also takes what PyTorch saves: F16, BF16, F64, I64 and I32 tensors become
 * float32, each value checked (integers within 2^24, doubles within
 * float32's range, no NaN or infinity); a torch.save pickle is refused with
 * the line of Python that rewrites it as safetensors. Saving
 * writes a temporary file, fsyncs it and renames it into place; loading
 * checks every offset and shape before it reads, and changes nothing unless
 * the whole file matches the set. `metadata` (may be NULL) is stored under
 * "__metadata__" as {"key": "value", ...} pairs, NULL-terminated. */
EMBER_API ember_status ember_params_save(const ember_params *params, const char *path,
                                         const char *const *metadata);
EMBER_API ember_status ember_params_load(ember_params *params, const char *path);
/* The same with the file's bytes in memory: saving returns a buffer to
 * ember_free() in *data, *size bytes long; loading reads `size` bytes at `data`
 * (not kept) and checks them as a file is checked. */
EMBER_API ember_status ember_params_save_memory(const ember_params *params, const char *const *metadata,
                                                void **data, size_t *size);
EMBER_API ember_status ember_params_load_memory(ember_params *params, const void *data, size_t size);

/* Starts a set from another's weights, for fine-tuning (`ember train
 * --init`): every parameter and buffer is read from the checkpoint at
 * `path` (or from `size` bytes at `data` when data is not NULL, `path`
 * then naming it in messages) except those under a name in `skip`
 * (NULL-terminated; "fc" leaves fc.weight and fc.bias as they are, for a
 * new head). The rest must match by name and shape, or nothing changes and
 * the error lists every difference; a name in `skip` that is no layer's is
 * an error too. Dtypes convert as ember_params_load's do. */
EMBER_API ember_status ember_params_init_from(ember_params *params, const char *path, const void *data,
                                              size_t size, const char *const *skip);

/* A checkpoint's metadata, read without loading its tensors. The keys
 * ember writes (docs/models.md, "Checkpoints"): "ember.model",
 * "ember.model_text", "ember.input", "ember.classes", "ember.forwards",
 * "ember.model_seed", and from `ember train` "ember.class_names",
 * "ember.data", "ember.data_dir", "ember.seed", "ember.resize",
 * "ember.normalize", "ember.image_mean" (and the other ember_image_stats
 * fields), "ember.threads", "ember.epoch", "ember.step" and the run's
 * settings. */
typedef struct ember_checkpoint ember_checkpoint;
EMBER_API ember_checkpoint *ember_checkpoint_open(ember_ctx *ctx, const char *path);
EMBER_API void ember_checkpoint_close(ember_checkpoint *checkpoint);
/* The value under `key`, or NULL; valid until the checkpoint is closed. */
EMBER_API const char *ember_checkpoint_meta(const ember_checkpoint *checkpoint, const char *key);
/* Every pair, sorted by key. */
EMBER_API int ember_checkpoint_meta_count(const ember_checkpoint *checkpoint);
EMBER_API const char *ember_checkpoint_meta_at(const ember_checkpoint *checkpoint, int index,
                                               const char **value);
/* The name of class `index` as the checkpoint records it (the
 * "ember.class_names" that ember train writes: "Ankle boot"), or NULL when
 * it records none or the index is out of range; valid until the checkpoint
 * is closed. */
EMBER_API const char *ember_checkpoint_class_name(const ember_checkpoint *checkpoint, int index);
/* The same from a checkpoint in memory (`size` bytes at `data`, copied:
 * the caller's buffer may go once this returns). */
EMBER_API ember_checkpoint *ember_checkpoint_open_memory(ember_ctx *ctx, const void *data, size_t size);
/* Its tensors as the header describes them, read without their values: how
 * many, and the shape of the one named `name` (its dimensions, 0 for a
 * scalar, with the sizes in shape[]), or -1 when there is no tensor of that
 * name or it has more than EMBER_MAX_DIMS dimensions. Every shape has been
 * checked against the bytes the file holds, so a model can be checked
 * against a checkpoint before anything is allocated for it. */
EMBER_API int ember_checkpoint_tensor_count(const ember_checkpoint *checkpoint);
EMBER_API int ember_checkpoint_tensor_shape(const ember_checkpoint *checkpoint, const char *name,
                                            int64_t shape[EMBER_MAX_DIMS]);

/* A seeded random generator, so that runs are reproducible. */
typedef struct ember_rng {
    uint64_t state;
} ember_rng;
EMBER_API ember_rng ember_rng_seed(uint64_t seed);
EMBER_API uint32_t ember_rng_u32(ember_rng *rng);
EMBER_API float ember_rng_uniform(ember_rng *rng, float low, float high);

/* PyTorch's default initialisation for Linear and Conv2d: the weight is
 * kaiming-uniform with a = sqrt(5), that is U(-1/sqrt(fan_in), 1/sqrt(fan_in)),
 * and the bias is uniform with the same bound. fan_in = numel(w) / shape[0]. */
EMBER_API ember_status ember_init_uniform(ember_tensor *t, float low, float high, ember_rng *rng);
EMBER_API ember_status ember_init_default(ember_tensor *weight, ember_tensor *bias, ember_rng *rng);

/* Layers: a layer's parameters added to a set under PyTorch's names
 * (name.weight, name.bias) and initialised as PyTorch does. The forward pass
 * is then the op: ember_conv2d(x, w, b, ...), ember_linear(x, w, b). */
EMBER_API ember_status ember_layer_conv2d(ember_params *params, const char *name, int64_t in_channels,
                                          int64_t out_channels, int64_t kernel, ember_rng *rng,
                                          ember_tensor **weight, ember_tensor **bias);
EMBER_API ember_status ember_layer_linear(ember_params *params, const char *name, int64_t in_features,
                                          int64_t out_features, ember_rng *rng, ember_tensor **weight,
                                          ember_tensor **bias);

/* --------------------------------------------------------------- optimizers */

typedef struct ember_optim ember_optim;

typedef struct ember_adam_options {
    float lr, beta1, beta2, eps, weight_decay;
} ember_adam_options;
/* lr, betas 0.9 and 0.999, eps 1e-8, no weight decay: PyTorch's defaults */
EMBER_API ember_adam_options ember_adam_defaults(float lr);

typedef struct ember_sgd_options {
    float lr, momentum, dampening, weight_decay;
    bool nesterov;
} ember_sgd_options;
/* lr, no momentum, no dampening, no weight decay */
EMBER_API ember_sgd_options ember_sgd_defaults(float lr);

/* The optimizer updates every parameter of the set but the frozen ones; its
 * state (Adam's two moments, SGD's velocity) is one allocation each. A
 * parameter is frozen by turning its requires_grad off
 * (ember_tensor_set_requires_grad(ember_params_at(set, i), false), as
 * PyTorch's p.requires_grad_(False)): no gradient is computed for it, and
 * the step leaves it as it is, weight decay and momentum included; a
 * frozen BatchNorm's running statistics still move in training, as in
 * PyTorch. `ember train --freeze` does this by layer name. */
EMBER_API ember_optim *ember_adam_new(ember_params *params, ember_adam_options options);
EMBER_API ember_optim *ember_sgd_new(ember_params *params, ember_sgd_options options);
/* AdamW (PyTorch's): Adam whose weight decay shrinks the parameters,
 * param *= 1 - lr * weight_decay, instead of adding to the gradient; only
 * parameters of two or more dimensions decay (weights and embeddings, not
 * biases or the norms' weights), as nanoGPT groups them. Its state saves
 * and loads as Adam's does, under the kind "adamw". */
EMBER_API ember_optim *ember_adamw_new(ember_params *params, ember_adam_options options);
EMBER_API void ember_optim_free(ember_optim *opt);
EMBER_API ember_status ember_optim_zero_grad(ember_optim *opt);
EMBER_API ember_status ember_optim_step(ember_optim *opt);
/* Gradient clipping by the global norm (torch.nn.utils.clip_grad_norm_):
 * the norm of all the set's gradients as one vector into *total_norm (may
 * be NULL), and every gradient scaled by max_norm / (norm + 1e-6) when
 * that is below 1. Call it between ember_backward and ember_optim_step. */
EMBER_API ember_status ember_clip_grad_norm(ember_params *params, float max_norm, float *total_norm);
/* Learning rate, for schedules: EMBER_ERR_ARG, the rate unchanged, for one
 * that is negative or not finite (a schedule gone wrong, caught before the
 * step that would spoil every parameter). */
EMBER_API ember_status ember_optim_set_lr(ember_optim *opt, float lr);
/* Steps taken (Adam's bias correction counts them). */
EMBER_API int64_t ember_optim_steps(const ember_optim *opt);
/* The optimizer's state as a safetensors file, so that a run can resume
 * exactly: per parameter as PyTorch names it ("conv1.weight.exp_avg",
 * "...exp_avg_sq" for Adam, "...momentum_buffer" for SGD), the step count
 * in the metadata. Loading checks the kind, names and shapes first and
 * changes nothing unless all match. */
EMBER_API ember_status ember_optim_save(const ember_optim *opt, const char *path,
                                        const char *const *metadata);
EMBER_API ember_status ember_optim_load(ember_optim *opt, const char *path);

/* Learning-rate schedules, as PyTorch's: a rate for each step from the step
 * alone. Warm-up first (linear over warmup_steps, from lr / (warmup + 1)
 * to lr: LinearLR), then constant; STEP multiplies by gamma every
 * step_size steps (StepLR); COSINE falls along half a cosine from lr to
 * min_lr at total_steps (CosineAnnealingLR, stepped each batch). */
typedef enum ember_lr_kind { EMBER_LR_CONSTANT, EMBER_LR_STEP, EMBER_LR_COSINE } ember_lr_kind;
typedef struct ember_lr_schedule {
    ember_lr_kind kind;
    float lr, min_lr, gamma;
    int64_t warmup_steps, step_size, total_steps;
} ember_lr_schedule;
/* Set it before each step: ember_optim_set_lr(opt, ember_lr_at(&s, step)). */
EMBER_API float ember_lr_at(const ember_lr_schedule *schedule, int64_t step);

#endif /* EMBER_PART_TRAIN_H */

/* SPDX-License-Identifier: MIT */
/*
 * tools/cmd-ptx-sim.c — `ember ptx [KERNEL] --simulate`: one training step
 * of a model, at its real shapes and on real data, on a simulated GPU
 * ("ptxsim:N", backends/cuda/cuda-sim.c), and what the first launch of
 * KERNEL in it did there (ember_kernel_report): instructions by class,
 * divergence, coalescing, bank conflicts, occupancy, a roofline. Without a
 * kernel, a line for every kernel the step launched. `ember ptx --gpus`
 * lists the GPUs it can simulate, with where their figures come from.
 * With a language model (--model FILE.gguf) the step is a prompt of
 * --batch tokens and one token after it, as chat runs them.
 *
 * The registers a thread for the occupancy come from ptxas -v on the same
 * PTX where a ptxas here knows the arch (tools/ptxas.c), else from the
 * simulator's count.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../ptxsim/ptxsim.h"
#include "cli.h"
#include "platform.h"
#include "ptx-sim.h"
#include "ptxas.h"

int cli_ptx_gpus(void)
{
    printf("%-2s %-10s %-18s %5s %5s %9s %9s %8s %10s %12s %9s\n", "N", "--gpu", "GPU", "arch", "SMs",
           "clock MHz", "FP32 TF/s", "GB/s", "registers", "shared B/SM", "max warps");
    for (int i = 0; i < ptxsim_gpu_count(); i++) {
        const struct ptxsim_gpu *g = ptxsim_gpu_at(i);
        const struct ptxsim_arch *a = ptxsim_arch_find(g->sm);
        printf("%-2d %-10s %-18s sm_%-2d %5d %9.0f %9.2f %8.0f %10d %12d %9d\n", i, g->key, g->name, g->sm,
               g->multiprocessors, g->clock_mhz,
               2.0 * g->multiprocessors * g->fp32_lanes * g->clock_mhz * 1e-6, g->bandwidth_gbs, a->registers,
               a->shared_bytes, a->max_threads / 32);
    }
    printf("sources:\n");
    for (int i = 0; i < ptxsim_gpu_count(); i++)
        printf("  %s: %s\n", ptxsim_gpu_at(i)->name, ptxsim_gpu_at(i)->source);
    printf("device ptxsim:N runs the kernels of the GPU in row N (ember train --device ptxsim:1)\n");
    return EXIT_OK;
}

/* The newest PTX ISA ptxas of CUDA `version` ("11.8 (V11.8.89)") reads,
 * times ten: CUDA 11.x reads 7.x, 12.x 8.x, 13.x 9.x; 0 when unknown. */
static int ptxas_isa(const char *version)
{
    int major = 0, minor = 0;
    if (sscanf(version, "%d.%d", &major, &minor) != 2 || major < 11)
        return 0;
    return (major - 4) * 10 + minor;
}

/* `ptx` with its .version line at `isa` (times ten): a malloc'd copy, or
 * NULL when it has no .version or declares one no newer. */
static char *ptx_lowered(const char *ptx, int isa, int *had)
{
    const char *at = strstr(ptx, ".version ");
    int major = 0, minor = 0, skip = 0;
    if (!at || sscanf(at, ".version %d.%d%n", &major, &minor, &skip) != 2 || major * 10 + minor <= isa)
        return NULL;
    *had = major * 10 + minor;
    size_t head = (size_t)(at - ptx), len = strlen(ptx) + 16;
    char *copy = malloc(len);
    if (copy)
        snprintf(copy, len, "%.*s.version %d.%d%s", (int)head, ptx, isa / 10, isa % 10, at + skip);
    return copy;
}

/* ptxas -v's registers for `kernel` in the PTX ember runs on sm_`sm`, and
 * which ptxas said so; 0 when no ptxas here takes it. A ptxas older than
 * the PTX's .version (CUDA 11.8's, the newest here for sm_35 to sm_61, on
 * an NVRTC 12's PTX) is given the PTX with its .version lowered to what it
 * reads, which it assembles unless the PTX uses something newer: the review
 * of issue #47 read the GTX 1080's registers that way. */
static int ptxas_registers(const char *kernel, int sm, bool baseline, char *from, size_t from_len)
{
    char arch[16], how[512], why[2048];
    snprintf(arch, sizeof arch, "sm_%d", sm);
    char *ptx = ember_ptx(NULL, arch, baseline, how, sizeof how, why, sizeof why);
    struct ptxas found[PTXAS_MAX];
    int count = ptx ? ptxas_find(found, PTXAS_MAX) : 0, registers = 0;
    for (int i = 0; i < count && registers == 0; i++) {
        struct ptxas_usage *rows = NULL;
        if (!ptxas_knows(&found[i], sm))
            continue;
        int had = 0, isa = ptxas_isa(found[i].version);
        char *lowered = isa ? ptx_lowered(ptx, isa, &had) : NULL;
        int n =
            ptxas_resources(&found[i], lowered ? lowered : ptx, sm, &rows, found[i].why, sizeof found[i].why);
        for (int r = 0; r < n; r++)
            if (strcmp(rows[r].kernel, kernel) == 0 && rows[r].registers > 0) {
                registers = (int)rows[r].registers;
                if (lowered)
                    snprintf(from, from_len, "ptxas %s -v, the PTX's .version %d.%d lowered to %d.%d",
                             found[i].version, had / 10, had % 10, isa / 10, isa % 10);
                else
                    snprintf(from, from_len, "ptxas %s -v", found[i].version);
            }
        free(lowered);
        free(rows);
    }
    free(ptx);
    return registers;
}

/* One training step: forward, loss, backward, the optimizer's step. */
static int train_step(ember_ctx *ctx, const struct ptx_sim_options *o, const char **data_said)
{
    ember_data_options data = {
        .kind = o->data, .dir = o->data_dir, .sample_ndim = o->ndim, .classes = o->classes};
    memcpy(data.sample_shape, o->shape, sizeof data.sample_shape);
    ember_dataset *train = ember_dataset_open(ctx, &data, EMBER_TRAIN);
    if (!train)
        return cli_fail(ctx, "opening the data");
    *data_said = o->data;
    ember_model *model = ember_model_new(ctx, o->model, train, 0);
    ember_optim *opt = NULL;
    if (model && strcmp(o->optim, "sgd") == 0)
        opt = ember_sgd_new(ember_model_params(model), ember_sgd_defaults(0.01f));
    else if (model && strcmp(o->optim, "adamw") == 0)
        opt = ember_adamw_new(ember_model_params(model), ember_adam_defaults(0.001f));
    else if (model)
        opt = ember_adam_new(ember_model_params(model), ember_adam_defaults(0.001f));
    ember_batcher *batches = opt ? ember_batcher_new(train, o->batch, true, 0) : NULL;
    ember_tensor *x, *y;
    int rc = EXIT_OK;
    if (!batches || (ember_batcher_next(batches, &x, &y) != EMBER_OK || !x)) {
        rc = cli_fail(ctx, "setting up the training step");
    } else {
        ember_status zeroed = ember_optim_zero_grad(opt);
        ember_tensor *loss = ember_cross_entropy(ember_model_forward(model, x), y);
        float value;
        if (zeroed != EMBER_OK || ember_backward(loss) != EMBER_OK || ember_optim_step(opt) != EMBER_OK ||
            ember_tensor_item(loss, &value) != EMBER_OK)
            rc = cli_fail(ctx, "the training step on the simulated GPU");
        ember_tape_clear(ctx);
    }
    ember_batcher_free(batches);
    ember_optim_free(opt);
    ember_model_free(model);
    ember_dataset_free(train);
    return rc;
}

/* A language model (a .gguf file) instead: a prompt of o->batch tokens
 * fed at once, then one token more, as chat does (the prompt's batched
 * products, then one position's work against the key/value cache). */
static bool is_gguf(const char *model)
{
    size_t n = strlen(model);
    return n > 5 && strcmp(model + n - 5, ".gguf") == 0;
}

static int lm_step(ember_ctx *ctx, const struct ptx_sim_options *o)
{
    ember_lm_options options = {.context = o->batch + 1};
    ember_lm *lm = ember_lm_load(ctx, o->model, &options);
    if (!lm)
        return cli_fail(ctx, "loading the language model");
    int32_t *tokens = malloc((size_t)o->batch * sizeof *tokens);
    float *logits = malloc((size_t)ember_lm_vocab(lm) * sizeof *logits);
    int rc = EXIT_OK;
    if (!tokens || !logits) {
        cli_error("no memory for %d tokens and their scores", o->batch);
        rc = EXIT_FAILURE_OTHER;
    } else {
        /* the tokens after the first few hundred: ordinary text pieces in a
         * byte-level vocabulary, and any id is as good as another here */
        for (int i = 0; i < o->batch; i++)
            tokens[i] = (int32_t)((300 + 7 * i) % ember_lm_vocab(lm));
        int32_t next = tokens[0];
        if (ember_lm_feed(lm, tokens, o->batch, logits) != EMBER_OK ||
            ember_lm_feed(lm, &next, 1, logits) != EMBER_OK)
            rc = cli_fail(ctx, "the language model's step on the simulated GPU");
    }
    free(tokens);
    free(logits);
    ember_lm_free(lm);
    return rc;
}

int cli_ptx_simulate(const char *kernel, const struct ptx_sim_options *o)
{
    const struct ptxsim_gpu *g = ptxsim_gpu_find(o->gpu);
    int index = 0;
    while (g && ptxsim_gpu_at(index) != g)
        index++;
    if (!g) {
        cli_error("no simulated GPU \"%s\": ember ptx --gpus lists them (--gpu k2100m, or --arch sm_30)",
                  o->gpu);
        return EXIT_USAGE;
    }
    if (o->baseline)
        ember_set_env("EMBER_CUDA_KERNELS", "baseline"); /* what the simulated GPU loads (cuda-sim.c) */
    ember_ctx *ctx = cli_ctx_new(o->verbose, 0);
    if (!ctx)
        return EXIT_FAILURE_OTHER;
    char device[32];
    snprintf(device, sizeof device, "ptxsim:%d", index);
    double start = cli_now();
    const char *data_said = o->data;
    bool language = is_gguf(o->model);
    int rc = ember_ctx_use_device(ctx, device) != EMBER_OK ? cli_fail(ctx, "opening the simulated GPU")
             : language                                    ? lm_step(ctx, o)
                                                           : train_step(ctx, o, &data_said);
    if (rc != EXIT_OK) {
        ember_ctx_free(ctx);
        return rc;
    }
    if (language)
        printf("a prompt of %d token%s, then one more, through %s on %s\n", o->batch,
               o->batch == 1 ? "" : "s", o->model, ember_ctx_device_name(ctx));
    else
        printf("one training step of %s at batch %d (%s data, %s) on %s\n", o->model, o->batch, data_said,
               o->optim, ember_ctx_device_name(ctx));
    printf("simulated in %.1f s\n\n", cli_now() - start);
    char from[128] = "", why[1024];
    int registers = kernel ? ptxas_registers(kernel, g->sm, o->baseline, from, sizeof from) : 0;
    char *report = ember_kernel_report(ctx, kernel, registers, from, why, sizeof why);
    fflush(stdout);
    if (!report) {
        cli_error("%s; the kernels this step launched:", why);
        char *all = ember_kernel_report(ctx, NULL, 0, NULL, why, sizeof why);
        fputs(all ? all : "", stderr);
        free(all);
        rc = kernel ? EXIT_USAGE : EXIT_FAILURE_OTHER;
    } else {
        fputs(report, stdout);
        free(report);
    }
    ember_ctx_free(ctx);
    return rc;
}

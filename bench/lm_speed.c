/* SPDX-License-Identifier: MIT */
/*
 * bench/lm_speed.c — a GGUF language model's speed in ember, measured as
 * llama-bench measures llama.cpp's (bench/lm_vs_llamacpp.sh runs both):
 *
 *     lm_speed MODEL.gguf THREADS PROMPT GEN [DEVICE [medium]]
 *
 * pp: PROMPT random tokens fed at once, from an empty cache (tokens/s);
 * tg: GEN tokens fed one at a time from an empty cache, each the next of a
 * fixed random sequence (tokens/s), as llama-bench's pp and tg tests;
 * tg after prompt: GEN tokens one at a time after the PROMPT tokens (a
 * chat's case). Each is run twice and the faster kept (the first pays for
 * page faults and caches). Prints one JSON line, with tg's tokens per CPU
 * second (all threads' CPU time: a busy machine moves it less than the
 * clock) and the process's peak resident memory. "medium" after the
 * device sets EMBER_MATMUL_MEDIUM: on a CPU, generation's quantised
 * products with 8-bit activations (include/ember.h).
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "ember.h"

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* the process's CPU seconds (every thread's), which a busy machine moves less than the clock */
static double cpu_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int fail(ember_ctx *ctx, const char *what)
{
    fprintf(stderr, "lm_speed: %s: %s\n", what, ember_last_error(ctx));
    return 1;
}

int main(int argc, char **argv)
{
    if (argc < 5) {
        fprintf(stderr, "usage: lm_speed MODEL.gguf THREADS PROMPT GEN [DEVICE [medium]]\n");
        return 2;
    }
    int threads = atoi(argv[2]), prompt = atoi(argv[3]), gen = atoi(argv[4]);
    bool medium = argc > 6 && strcmp(argv[6], "medium") == 0;
    ember_ctx *ctx = ember_ctx_new();
    if (!ctx || ember_ctx_use_device(ctx, argc > 5 ? argv[5] : "cpu") != EMBER_OK ||
        (threads > 0 && ember_ctx_set_threads(ctx, threads) != EMBER_OK) ||
        (medium && ember_ctx_set_matmul_precision(ctx, EMBER_MATMUL_MEDIUM) != EMBER_OK))
        return ctx ? fail(ctx, "device") : 1;
    ember_lm_options o = {.context = prompt + gen + 1};
    ember_lm *lm = ember_lm_load(ctx, argv[1], &o);
    if (!lm)
        return fail(ctx, "load");
    int32_t vocab = ember_lm_vocab(lm), *tokens = malloc((size_t)(prompt + gen) * sizeof *tokens);
    /* the scores are read back every time, as generation does: on a GPU that waits for the work */
    float *logits = malloc((size_t)vocab * sizeof *logits);
    ember_rng rng = ember_rng_seed(1);
    for (int i = 0; i < prompt + gen; i++)
        tokens[i] = (int32_t)(ember_rng_u32(&rng) % (uint32_t)vocab);
    double pp = 1e30, tg = 1e30, tg_after = 1e30, tg_cpu = 1e30;
    for (int round = 0; round < 2; round++) {
        double t0 = now();
        if (ember_lm_rewind(lm, 0) != EMBER_OK || ember_lm_feed(lm, tokens, prompt, logits) != EMBER_OK)
            return fail(ctx, "prompt");
        double t1 = now();
        for (int i = 0; i < gen; i++)
            if (ember_lm_feed(lm, &tokens[prompt + i], 1, logits) != EMBER_OK)
                return fail(ctx, "generation after the prompt");
        double t2 = now(), c2 = cpu_now();
        ember_lm_rewind(lm, 0);
        for (int i = 0; i < gen; i++)
            if (ember_lm_feed(lm, &tokens[prompt + i], 1, logits) != EMBER_OK)
                return fail(ctx, "generation");
        double t3 = now();
        tg_cpu = cpu_now() - c2 < tg_cpu ? cpu_now() - c2 : tg_cpu;
        pp = t1 - t0 < pp ? t1 - t0 : pp;
        tg_after = t2 - t1 < tg_after ? t2 - t1 : tg_after;
        tg = t3 - t2 < tg ? t3 - t2 : tg;
    }
    size_t weights, cache;
    ember_lm_memory(lm, &weights, &cache);
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("{\"threads\": %d, \"pp\": %.2f, \"tg\": %.2f, \"tg_after_prompt\": %.2f, \"tg_per_cpu_s\": %.2f, "
           "\"peak_mib\": %.1f, \"weights_mib\": %.1f, \"cache_mib\": %.1f}\n",
           threads, prompt / pp, gen / tg, gen / tg_after, gen / tg_cpu, (double)ru.ru_maxrss / 1024.0,
           (double)weights / 1048576.0, (double)cache / 1048576.0);
    free(tokens);
    free(logits);
    ember_lm_free(lm);
    ember_ctx_free(ctx);
    return 0;
}

/* SPDX-License-Identifier: MIT */
/*
 * tests/cli/checkpoint-compare.c — two checkpoints of `ember train`, compared
 * tensor by tensor through ember's own reader, for the shell tests that
 * ask "did these runs end with the same parameters?" without needing
 * Python's safetensors (a plain `cmake` and `ctest` has none).
 *
 *   checkpoint-compare A B [TOLERANCE]
 *
 * Each file is loaded as the model it holds (ember_model_from_checkpoint).
 * Exit 0 when both hold the same names and every value of B is within
 * TOLERANCE of A's (0, the default: the same bits), printing the largest
 * difference; 1 when they differ, saying where; 2 when a file cannot be
 * read or the arguments are wrong.
 */
#include <ember.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    if (argc != 3 && argc != 4) {
        fprintf(stderr, "usage: checkpoint-compare A B [TOLERANCE]\n");
        return 2;
    }
    double tolerance = argc == 4 ? atof(argv[3]) : 0.0;
    ember_ctx *ctx = ember_ctx_new();
    if (!ctx || ember_ctx_use_device(ctx, "cpu") != EMBER_OK) {
        fprintf(stderr, "checkpoint-compare: no cpu device: %s\n",
                ctx ? ember_last_error(ctx) : "out of memory");
        return 2;
    }
    ember_model *a = ember_model_from_checkpoint(ctx, argv[1]);
    ember_model *b = a ? ember_model_from_checkpoint(ctx, argv[2]) : NULL;
    if (!b) {
        fprintf(stderr, "checkpoint-compare: %s\n", ember_last_error(ctx));
        ember_model_free(a);
        ember_ctx_free(ctx);
        return 2;
    }
    ember_params *pa = ember_model_params(a), *pb = ember_model_params(b);
    int rc = 0;
    double worst = 0.0;    /* the largest difference, |a - b| */
    int64_t differing = 0; /* values beyond the tolerance (with 0: of other bits) */
    const char *worst_name = "";
    if (ember_params_count(pa) != ember_params_count(pb)) {
        printf("%s holds %d tensors, %s %d\n", argv[1], ember_params_count(pa), argv[2],
               ember_params_count(pb));
        rc = 1;
    }
    for (int i = 0; rc == 0 && i < ember_params_count(pa); i++) {
        const char *name = ember_params_name(pa, i);
        ember_tensor *ta = ember_params_at(pa, i), *tb = ember_params_find(pb, name);
        int64_t n = ember_tensor_numel(ta);
        if (!tb || ember_tensor_numel(tb) != n) {
            printf("%s: in %s but not in %s, or of another size\n", name, argv[1], argv[2]);
            rc = 1;
            break;
        }
        float *va = malloc((size_t)(n ? n : 1) * sizeof *va), *vb = malloc((size_t)(n ? n : 1) * sizeof *vb);
        if (!va || !vb || ember_tensor_read(ta, va, (size_t)n * sizeof *va) != EMBER_OK ||
            ember_tensor_read(tb, vb, (size_t)n * sizeof *vb) != EMBER_OK) {
            fprintf(stderr, "checkpoint-compare: cannot read %s: %s\n", name, ember_last_error(ctx));
            rc = 2;
        }
        for (int64_t j = 0; rc == 0 && j < n; j++) {
            double d = fabs((double)va[j] - (double)vb[j]);
            /* with no tolerance, the same bits: -0 and 0 differ, a NaN is itself */
            bool beyond = tolerance == 0.0 ? memcmp(&va[j], &vb[j], sizeof *va) != 0 : !(d <= tolerance);
            differing += beyond;
            if (beyond && !(d <= worst)) {
                worst = isnan(d) ? INFINITY : d;
                worst_name = name;
            } else if (beyond && !worst_name[0]) {
                worst_name = name;
            }
        }
        free(va);
        free(vb);
    }
    if (rc == 0 && differing) {
        printf("%s and %s differ: %lld values, by up to %g in %s (%s)\n", argv[1], argv[2],
               (long long)differing, worst, worst_name,
               tolerance == 0.0 ? "the same bits asked for" : "beyond the tolerance given");
        rc = 1;
    } else if (rc == 0) {
        printf("%s and %s: every tensor within %g (%s)\n", argv[1], argv[2], worst,
               tolerance == 0.0 ? "the same bits" : "tolerance given");
    }
    ember_model_free(b);
    ember_model_free(a);
    ember_ctx_free(ctx);
    return rc;
}

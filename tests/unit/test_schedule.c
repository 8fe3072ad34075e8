/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test_schedule.c — learning-rate schedules against PyTorch's
 * formulas (LinearLR warm-up, StepLR, CosineAnnealingLR stepped per batch).
 */
#include <math.h>

#include "test-util.h"

static void expect(const ember_lr_schedule *s, int64_t step, double want, const char *what)
{
    float got = ember_lr_at(s, step);
    CHECK(fabs((double)got - want) <= 1e-6 * (fabs(want) + 1e-3), "%s: step %lld gives %.8g, PyTorch %.8g",
          what, (long long)step, (double)got, want);
}

int main(void)
{
    ember_lr_schedule constant = {.kind = EMBER_LR_CONSTANT, .lr = 0.5f};
    expect(&constant, 0, 0.5, "constant");
    expect(&constant, 1000000, 0.5, "constant");

    /* LinearLR(start_factor=1/5, total_iters=4): lr * (1 + k) / 5 for k < 4 */
    ember_lr_schedule warm = {.kind = EMBER_LR_CONSTANT, .lr = 1.0f, .warmup_steps = 4};
    for (int k = 0; k < 4; k++)
        expect(&warm, k, (1.0 + k) / 5.0, "warm-up");
    expect(&warm, 4, 1.0, "after warm-up");

    /* StepLR(step_size=10, gamma=0.5) */
    ember_lr_schedule step = {.kind = EMBER_LR_STEP, .lr = 1.0f, .gamma = 0.5f, .step_size = 10};
    expect(&step, 9, 1.0, "step");
    expect(&step, 10, 0.5, "step");
    expect(&step, 25, 0.25, "step");

    /* CosineAnnealingLR(T_max=100, eta_min=0.1): 0.1 + 0.45 (1 + cos(pi t / 100)) */
    ember_lr_schedule cosine = {.kind = EMBER_LR_COSINE, .lr = 1.0f, .min_lr = 0.1f, .total_steps = 100};
    for (int t = 0; t <= 100; t += 25)
        expect(&cosine, t, 0.1 + 0.45 * (1.0 + cos(3.14159265358979323846 * t / 100.0)), "cosine");
    expect(&cosine, 150, 0.1, "cosine past its end");

    /* warm-up, then the cosine over what is left */
    ember_lr_schedule both = cosine;
    both.warmup_steps = 10;
    both.total_steps = 110;
    expect(&both, 9, 10.0 / 11.0, "warm-up before cosine");
    expect(&both, 10, 1.0, "cosine after warm-up");
    expect(&both, 60, 0.55, "cosine after warm-up");
    CHECK(ember_lr_at(NULL, 3) == 0.0f, "no schedule");
    return test_finish("test_schedule");
}

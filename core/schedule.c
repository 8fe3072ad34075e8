/* SPDX-License-Identifier: MIT */
/*
 * core/schedule.c — learning-rate schedules: the rate for a step, computed
 * from the step alone, so a resumed run lands where it left off.
 */
#include <math.h>

#include "ctx-impl.h"

float ember_lr_at(const ember_lr_schedule *s, int64_t step)
{
    if (!s)
        return 0.0f;
    if (step < 0)
        step = 0;
    /* warm-up: from lr / (warmup + 1) up to lr, linearly, as PyTorch's
     * LinearLR(start_factor = 1 / (warmup + 1)) */
    if (step < s->warmup_steps)
        return s->lr * (float)(step + 1) / (float)(s->warmup_steps + 1);
    int64_t t = step - s->warmup_steps;
    switch (s->kind) {
    case EMBER_LR_STEP: /* StepLR: times gamma every step_size steps */
        return s->step_size > 0 ? s->lr * powf(s->gamma, (float)(t / s->step_size)) : s->lr;
    case EMBER_LR_COSINE: { /* CosineAnnealingLR: half a cosine from lr to min_lr over the rest */
        int64_t span = s->total_steps - s->warmup_steps;
        if (span <= 0 || t >= span)
            return s->min_lr;
        double phase = 3.14159265358979323846 * (double)t / (double)span;
        return (float)(s->min_lr + 0.5 * (double)(s->lr - s->min_lr) * (1.0 + cos(phase)));
    }
    case EMBER_LR_CONSTANT: break;
    }
    return s->lr;
}

/*
 * models/model.c — the list of models, making one for a data set, and
 * evaluating it.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models-impl.h"

static const struct ember_model_def *const models[] = {
    &ember_model_simplecnn,
    &ember_model_kerascnn,
    &ember_model_linear,
    &ember_model_mlp,
};
enum { MODEL_COUNT = sizeof models / sizeof models[0] };

const char *const *ember_model_names(void)
{
    static const char *names[MODEL_COUNT + 1];
    for (int i = 0; i < MODEL_COUNT; i++)
        names[i] = models[i]->name;
    return names;
}

static const struct ember_model_def *find_model(const char *name)
{
    for (int i = 0; name && i < MODEL_COUNT; i++)
        if (strcmp(models[i]->name, name) == 0)
            return models[i];
    return NULL;
}

const char *ember_model_summary(const char *name)
{
    const struct ember_model_def *def = find_model(name);
    return def ? def->summary : NULL;
}

ember_model *ember_model_new(ember_ctx *ctx, const char *name, const ember_dataset *data, uint64_t seed)
{
    if (!ctx)
        return NULL;
    const struct ember_model_def *def = find_model(name);
    if (!def) {
        char known[256] = "";
        for (int i = 0; i < MODEL_COUNT; i++)
            snprintf(known + strlen(known), sizeof known - strlen(known), "%s%s", i ? ", " : "", models[i]->name);
        ember_set_error(ctx, EMBER_ERR_ARG, "unknown model \"%s\": the models are %s", name ? name : "(null)", known);
        return NULL;
    }
    if (!data) {
        ember_set_error(ctx, EMBER_ERR_ARG, "ember_model_new needs a data set for its input shape");
        return NULL;
    }
    struct ember_model *m = calloc(1, sizeof *m);
    if (!m) {
        ember_set_error(ctx, EMBER_ERR_NOMEM, "out of host memory making model %s", name);
        return NULL;
    }
    m->ctx = ctx;
    m->def = def;
    m->sample_ndim = ember_dataset_sample_ndim(data);
    memcpy(m->sample_shape, ember_dataset_sample_shape(data), (size_t)m->sample_ndim * sizeof *m->sample_shape);
    m->classes = ember_dataset_classes(data);
    m->params = ember_params_new(ctx);
    ember_rng rng = ember_rng_seed(seed);
    if (!m->params || def->build(m, &rng) != EMBER_OK) {
        ember_model_free(m);
        return NULL;
    }
    size_t len = strlen(m->describe);
    snprintf(m->describe + len, sizeof m->describe - len, "; %" PRId64 " parameters",
             ember_params_numel(m->params));
    return m;
}

void ember_model_free(ember_model *m)
{
    if (!m)
        return;
    ember_params_free(m->params);
    free(m);
}

ember_tensor *ember_model_forward(ember_model *m, ember_tensor *x)
{
    if (!m || !x)
        return NULL;
    /* check the batch against the input the model was built for */
    bool fits = ember_tensor_ndim(x) == m->sample_ndim + 1;
    for (int i = 0; fits && i < m->sample_ndim; i++)
        fits = ember_tensor_dim(x, i + 1) == m->sample_shape[i];
    if (!fits) {
        ember_set_error(m->ctx, EMBER_ERR_ARG, "%s was built for samples of another shape than this batch's",
                        m->def->name);
        return NULL;
    }
    return m->def->forward(m, x);
}

ember_params *ember_model_params(ember_model *m) { return m ? m->params : NULL; }
const char *ember_model_name(const ember_model *m) { return m ? m->def->name : NULL; }
const char *ember_model_describe(const ember_model *m) { return m ? m->describe : NULL; }

ember_status ember_model_evaluate(ember_model *m, ember_dataset *data, int64_t batch, double *accuracy,
                                  double *loss)
{
    if (!m || !data)
        return EMBER_ERR_ARG;
    ember_ctx *ctx = m->ctx;
    ember_batcher *batches = ember_batcher_new(data, batch, false, 0);
    if (!batches)
        return ember_last_status(ctx);
    int64_t classes = m->classes, correct = 0, seen = 0;
    double loss_sum = 0.0;
    float *logits = malloc((size_t)(batch * classes) * sizeof *logits);
    int32_t *labels = malloc((size_t)batch * sizeof *labels);
    ember_status st = EMBER_OK;
    if (!logits || !labels) {
        st = ember_set_error(ctx, EMBER_ERR_NOMEM, "out of host memory for evaluation");
        goto done;
    }
    bool was = ember_set_grad_enabled(ctx, false);
    ember_tensor *x, *y;
    while (st == EMBER_OK && ember_batcher_next(batches, &x, &y)) {
        int64_t n = ember_tensor_dim(x, 0);
        ember_tensor *out = ember_model_forward(m, x);
        ember_tensor *l = ember_cross_entropy(out, y);
        float value;
        if (!l || (st = ember_tensor_item(l, &value)) != EMBER_OK ||
            (st = ember_tensor_read(out, logits, (size_t)(n * classes) * sizeof *logits)) != EMBER_OK ||
            (st = ember_tensor_read(y, labels, (size_t)n * sizeof *labels)) != EMBER_OK) {
            if (st == EMBER_OK)
                st = ember_last_status(ctx);
            break;
        }
        for (int64_t i = 0; i < n; i++) {
            const float *row = logits + i * classes;
            int64_t best = 0;
            for (int64_t k = 1; k < classes; k++)
                if (row[k] > row[best])
                    best = k;
            correct += best == labels[i];
        }
        loss_sum += (double)value * (double)n;
        seen += n;
        ember_tape_clear(ctx);
    }
    ember_tape_clear(ctx);
    ember_set_grad_enabled(ctx, was);
    if (st == EMBER_OK && seen != ember_dataset_count(data)) /* the batcher stopped early */
        st = ember_last_status(ctx) != EMBER_OK ? ember_last_status(ctx) : EMBER_ERR_DEVICE;
    if (st == EMBER_OK && seen > 0) {
        if (accuracy)
            *accuracy = (double)correct / (double)seen;
        if (loss)
            *loss = loss_sum / (double)seen;
    }
done:
    free(logits);
    free(labels);
    ember_batcher_free(batches);
    return st;
}

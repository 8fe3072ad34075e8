/* SPDX-License-Identifier: MIT */
/*
 * tools/train-lm.c — `ember train --init MODEL.gguf`: a pretrained language
 * model fine-tuned by the same loop as every other run (tools/cmd-train.c),
 * with LoRA adapters or all its weights (docs/models.md, "Fine-tuning a
 * pretrained model").
 *
 * The set-up differs: the data is a text file cut by the model's own
 * tokenizer (ember_lm_dataset), or conversations in its chat template
 * with the loss on the replies alone (ember_lm_chat_dataset); the model
 * is the language model as an ember_model (ember_lm_model) whose
 * parameters, and so whose checkpoint, are with --lora the adapters alone
 * under PEFT's names, and without it every weight in F32 under the GGUF
 * file's names (ember_lm_full). The checkpoint's metadata adds
 * "ember.base_model" (the GGUF file) and either "ember.lora" (--lora as
 * given) and "lora_alpha", or "ember.finetune": "full", so that --resume
 * (tools/train-state.c) and `ember generate --adapter` or `--weights` find
 * what they need in it; and beside a LoRA run's --save goes PEFT's
 * adapter_config.json.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "train.h"

#define DEFAULT_CONTEXT 256

bool train_parse_lora(const char *spec, ember_lora_options *lo, char *targets, size_t len)
{
    *lo = (ember_lora_options){0};
    targets[0] = 0;
    const char *key = NULL;
    size_t key_len = 0;
    for (const char *at = spec ? spec : ""; *at;) {
        size_t n = strcspn(at, ","), eq = strcspn(at, "=");
        const char *value = at;
        size_t value_len = n;
        if (eq < n) { /* key=value; a part without "=" adds to the targets before it */
            key = at;
            key_len = eq;
            value = at + eq + 1;
            value_len = n - eq - 1;
        } else if (!key || strncmp(key, "targets", key_len) != 0) {
            cli_error("--lora takes r=8,alpha=16,dropout=0.05,targets=q,k,v,o,gate,up,down; not \"%.*s\"",
                      (int)n, at);
            return false;
        }
        char text[64];
        snprintf(text, sizeof text, "%.*s", (int)(value_len < 63 ? value_len : 63), value);
        bool is_targets = key_len == 7 && strncmp(key, "targets", 7) == 0;
        double number = 0.0;
        char *end = text + strlen(text);
        if (!is_targets)
            number = strtod(text, &end);
        bool ok = value_len > 0 && *end == 0;
        if (ok && key_len == 1 && *key == 'r')
            ok = number >= 1 && number <= 1024 && number == floor(number), lo->rank = ok ? (int)number : 0;
        else if (ok && key_len == 5 && strncmp(key, "alpha", 5) == 0)
            ok = number > 0 && number < 1e6, lo->alpha = ok ? (float)number : 0.0f;
        else if (ok && key_len == 7 && strncmp(key, "dropout", 7) == 0)
            ok = number >= 0 && number < 1, lo->dropout = (float)number;
        else if (ok && is_targets) {
            size_t used = strlen(targets);
            ok = used + value_len + 2 < len;
            if (ok)
                snprintf(targets + used, len - used, "%s%.*s", used ? "," : "", (int)value_len, value);
        } else
            ok = false;
        if (!ok) {
            cli_error("--lora: \"%.*s\" is not r (1 to 1024), alpha (above 0), dropout (0 to 1) or targets "
                      "(q,k,v,o,gate,up,down)",
                      (int)n, at);
            return false;
        }
        at += n + (at[n] == ',');
    }
    lo->targets = targets[0] ? targets : NULL;
    return true;
}

int train_lm_setup(struct train_options *o, ember_ctx *ctx, ember_lm **lm, ember_dataset **train,
                   ember_dataset **test, ember_model **model)
{
    if (!cli_data_is_text(o->data.kind) || !o->data.dir) {
        cli_error("--init %s fine-tunes a language model on text or conversations: give --data text FILE or "
                  "--data chat FILE.jsonl",
                  o->base);
        return EXIT_USAGE;
    }
    if (strcmp(o->freeze, "none") != 0 || o->init_skip || o->model_given || strcmp(o->augment, "none") != 0) {
        cli_error("--init %s fine-tunes a language model (its LoRA adapters, or all its weights): --model, "
                  "--freeze, --init-skip and --augment do not apply",
                  o->base);
        return EXIT_USAGE;
    }
    /* --context, or a resumed run's (its checkpoint's ember.input) */
    int64_t context = o->data.sample_ndim == 1 ? o->data.sample_shape[0] : DEFAULT_CONTEXT;
    if (!(*lm = ember_lm_load(ctx, o->base,
                              &(ember_lm_options){.context = context,
                                                  .keep_activations = o->keep_activations,
                                                  .recompute_all = o->recompute_all})))
        return cli_fail(ctx, "cannot load the model to fine-tune");
    if (context > ember_lm_context(*lm)) {
        cli_error("--context %lld is more than %s's %lld positions", (long long)context, o->base,
                  (long long)ember_lm_context(*lm));
        return EXIT_USAGE;
    }
    ember_lora_options lo;
    char targets[128];
    if (o->lora && !train_parse_lora(o->lora, &lo, targets, sizeof targets))
        return EXIT_USAGE;
    lo.seed = o->seed;
    /* a chat's conversations score the assistant's replies alone */
    ember_dataset *(*open)(ember_lm *, const char *, int64_t, ember_split) =
        strcmp(o->data.kind, "chat") == 0 ? ember_lm_chat_dataset : ember_lm_dataset;
    if (!(*train = open(*lm, o->data.dir, context, EMBER_TRAIN)) ||
        (o->eval && !(*test = open(*lm, o->data.dir, context, EMBER_TEST))))
        return cli_fail(ctx, "cannot load the data");
    /* --lora: adapters on the frozen model; without it, every weight trained in F32 */
    if (o->lora ? !ember_lm_lora(*lm, &lo) : !ember_lm_full(*lm))
        return cli_fail(ctx, o->lora ? "cannot add the LoRA adapters" : "cannot make the weights trainable");
    if (!(*model = ember_lm_model(*lm, context)))
        return cli_fail(ctx, "cannot fine-tune the model");
    /* --resume: the adapters or weights as they were (the optimizer's state comes later, as every run's) */
    /* (ember_model_load: the count of training forwards too, from which dropout's masks are drawn) */
    if (o->resume && ember_model_load(*model, o->resume) != EMBER_OK)
        return cli_fail(ctx, o->lora ? "cannot resume the adapters" : "cannot resume the weights");
    return EXIT_OK;
}

void train_lm_meta(const struct train_options *o, char *alpha, size_t len)
{
    ember_lora_options lo;
    char targets[128];
    snprintf(alpha, len, "16");
    if (train_parse_lora(o->lora, &lo, targets, sizeof targets) && lo.alpha > 0)
        snprintf(alpha, len, "%.9g", (double)lo.alpha);
}

/* PEFT's adapter_config.json for the adapters in `path`: the rank and the
 * projections (PEFT's module names) read off the adapters themselves,
 * block 0's ...self_attn.q_proj.lora_A.weight (rank, in) and the like */
int train_lm_write_config(const struct train_options *o, ember_model *model, const char *path)
{
    char config[4096], alpha[48];
    train_lm_config_path(path, config, sizeof config);
    train_lm_meta(o, alpha, sizeof alpha);
    ember_lora_options lo;
    char targets[128];
    if (!train_parse_lora(o->lora, &lo, targets, sizeof targets))
        return EXIT_USAGE;
    struct cli_output out;
    if (cli_output_open(&out, config, "the adapter's config") != EXIT_OK)
        return EXIT_DATA;
    FILE *f = out.f;
    fprintf(
        f, "{\n  \"peft_type\": \"LORA\",\n  \"task_type\": \"CAUSAL_LM\",\n  \"base_model_name_or_path\": ");
    cli_json_string(f, o->base);
    ember_params *params = ember_model_params(model);
    const char *first = "base_model.model.model.layers.0.", *a = ".lora_A.weight";
    int64_t rank = 0;
    for (int i = 0; i < ember_params_count(params) && !rank; i++)
        if (strncmp(ember_params_name(params, i), first, strlen(first)) == 0)
            rank = ember_tensor_dim(ember_params_at(params, i), 0);
    fprintf(f, ",\n  \"r\": %lld,\n  \"lora_alpha\": %s,\n  \"lora_dropout\": %.9g,\n  \"target_modules\": [",
            (long long)rank, alpha, (double)lo.dropout);
    for (int i = 0, n = 0; i < ember_params_count(params);
         i++) { /* "...layers.0.self_attn.q_proj.lora_A.weight" */
        const char *name = ember_params_name(params, i);
        size_t len = strlen(name);
        if (strncmp(name, first, strlen(first)) != 0 || len < strlen(a) ||
            strcmp(name + len - strlen(a), a) != 0)
            continue;
        const char *end = name + len - strlen(a), *module = end;
        while (module > name && module[-1] != '.')
            module--;
        fprintf(f, "%s\"%.*s\"", n++ ? ", " : "", (int)(end - module), module);
    }
    fprintf(f, "],\n  \"bias\": \"none\",\n  \"fan_in_fan_out\": false,\n  \"inference_mode\": true,\n"
               "  \"init_lora_weights\": true,\n  \"use_rslora\": false,\n  \"use_dora\": false,\n"
               "  \"modules_to_save\": null\n}\n");
    return cli_output_close(&out, !ferror(f));
}

const char *train_lm_config_path(const char *path, char *out, size_t len)
{
    /* PEFT's own layout, DIR/adapter_model.safetensors, gets DIR/adapter_config.json; RUN.safetensors
     * gets RUN.adapter_config.json */
    const char *slash = strrchr(path, '/'), *base = slash ? slash + 1 : path, *ext = ".safetensors";
    size_t n = strlen(path),
           stem = n > strlen(ext) && strcmp(path + n - strlen(ext), ext) == 0 ? n - strlen(ext) : n;
    if (strcmp(base, "adapter_model.safetensors") == 0)
        snprintf(out, len, "%.*sadapter_config.json", (int)(base - path), path);
    else
        snprintf(out, len, "%.*s.adapter_config.json", (int)stem, path);
    return out;
}

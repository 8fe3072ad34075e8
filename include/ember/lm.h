/* SPDX-License-Identifier: MIT */
/*
 * ember/lm.h — pretrained language models from GGUF files, and their fine-tuning: a part of ember.h.
 *
 * A LLaMA-family model as llama.cpp keeps it, run as it is (tokenize,
 * feed, sample, chat) or made trainable: LoRA adapters over its frozen
 * quantised weights, or all its weights in F32; the result saved as a
 * PEFT adapter or a merged GGUF.
 *
 * Include <ember.h>, which includes this part in its place among the
 * others; the conventions at the top of ember.h hold here too.
 */
#ifndef EMBER_H
#error "include <ember.h>: ember/lm.h is a part of it, not a header of its own"
#elif !defined(EMBER_PART_LM_H)
#define EMBER_PART_LM_H

/* ---------------------------------------------- pretrained language models
 *
 * A language model from a GGUF file, the format llama.cpp and ollama keep
 * them in: LLaMA-family networks (architectures "llama": SmolLM2,
 * TinyLlama, Llama 3.2; and "qwen2"), their weights kept in the file's
 * quantised blocks on the device (docs/models.md, "Pretrained language
 * models"), their own byte-level BPE tokenizer and chat template.
 *
 *     ember_lm *lm = ember_lm_load(ctx, "SmolLM2-135M-Instruct.Q4_1.gguf", NULL);
 *     int32_t tokens[256], next;
 *     int64_t n = ember_lm_tokenize(lm, "The capital of France is", 24, false, tokens, 256);
 *     float *logits = malloc(ember_lm_vocab(lm) * sizeof *logits);
 *     ember_sample_options greedy = {0};
 *     ember_rng rng = ember_rng_seed(1);
 *     ember_lm_feed(lm, tokens, n, logits);             // the prompt, at once
 *     for (int i = 0; i < 20; i++) {
 *         next = ember_lm_sample(lm, logits, &greedy, &rng);
 *         if (ember_lm_is_end(lm, next)) break;
 *         char piece[64];
 *         fwrite(piece, 1, ember_lm_token_bytes(lm, next, piece, sizeof piece), stdout);
 *         ember_lm_feed(lm, &next, 1, logits);           // one position's work
 *     }
 *     ember_lm_free(lm);
 *
 * The model keeps the keys and values of every position fed (a key/value
 * cache of `context` positions), so each new token costs one position's
 * work; ember_lm_rewind forgets the positions after a point. Feeding runs
 * with the tape off and releases what it made. The scores are the
 * dequantised model's within float rounding; a context set to
 * EMBER_MATMUL_MEDIUM (ember_ctx_set_matmul_precision) trades that for
 * speed on a CPU, rounding the activations to 8 bits as llama.cpp does
 * (the scores within about 1% of the largest). */
typedef struct ember_lm ember_lm;
typedef struct ember_lm_options {
    int64_t context; /* positions the cache holds (0: 2048, or the model's own if fewer) */
    /* Training (ember_lm_forward with grad on) keeps each block's input
     * and the outputs of its projections, and makes the rest of its
     * activations again in the backward pass (ember_recompute_selective).
     * keep_activations keeps them all: the fastest, several times the
     * memory. recompute_all keeps the block's input alone and multiplies
     * again too (ember_recompute): the least memory, a third more
     * products. */
    bool keep_activations;
    bool recompute_all;
} ember_lm_options;
/* NULL with the reason for a file that is not such a model (the
 * architecture, a tensor or a tokenizer ember does not run, named). */
EMBER_API ember_lm *ember_lm_load(ember_ctx *ctx, const char *path, const ember_lm_options *options);
EMBER_API void ember_lm_free(ember_lm *lm);
/* "SmolLM2 135M (llama): 30 blocks of width 576, ..." with the device
 * memory its weights and cache take */
EMBER_API const char *ember_lm_describe(const ember_lm *lm);
EMBER_API int32_t ember_lm_vocab(const ember_lm *lm);
EMBER_API int64_t ember_lm_context(const ember_lm *lm);
/* Bytes of device memory the weights take, and the cache. */
EMBER_API void ember_lm_memory(const ember_lm *lm, size_t *weights, size_t *cache);
/* Text to token ids, with the model's tokenizer; special tokens
 * (<|im_start|>) are recognised in the text when `specials`. Writes up to
 * cap ids and returns how many the text has (more than cap: call again
 * with room), -1 on failure. */
EMBER_API int64_t ember_lm_tokenize(ember_lm *lm, const char *text, size_t len, bool specials,
                                    int32_t *tokens, int64_t cap);
/* A token's bytes, at most cap of them (a UTF-8 character may span tokens). */
EMBER_API size_t ember_lm_token_bytes(const ember_lm *lm, int32_t token, char *out, size_t cap);
/* Whether a token ends a reply (end of text, end of turn). */
EMBER_API bool ember_lm_is_end(const ember_lm *lm, int32_t token);
/* Positions fed so far. */
EMBER_API int64_t ember_lm_position(const ember_lm *lm);
/* Forgets every position from `position` on (0: start afresh). */
EMBER_API ember_status ember_lm_rewind(ember_lm *lm, int64_t position);
/* Runs n tokens through the model at the next positions (n >= 1, while
 * they fit the context) and writes the scores of the token after the last
 * into logits (vocab floats; NULL: none wanted). */
EMBER_API ember_status ember_lm_feed(ember_lm *lm, const int32_t *tokens, int64_t n, float *logits);
typedef struct ember_sample_options {
    float temperature; /* 0: the most likely token (greedy); 1: the model's own odds */
    int top_k;         /* only the k most likely (0: all) */
    float top_p;       /* only the most likely whose odds add up to p (0 or 1: all) */
} ember_sample_options;
/* The next token drawn from logits (vocab floats) with rng; -1 for a bad argument. */
EMBER_API int32_t ember_lm_sample(const ember_lm *lm, const float *logits,
                                  const ember_sample_options *options, ember_rng *rng);
/* A conversation rendered as the model's chat template would (ChatML, as
 * SmolLM and Qwen use, or Llama 3's), ending with the assistant's turn
 * opened when `reply`: text to tokenize with specials, for ember_free.
 * NULL with the reason for a template ember does not know. */
typedef struct ember_chat_message {
    const char *role; /* "system", "user", "assistant" */
    const char *content;
} ember_chat_message;
EMBER_API char *ember_lm_chat_prompt(ember_lm *lm, const ember_chat_message *messages, int count, bool reply);
/* The scores of every position of tokens (B, T) I32, (B, T, vocab), on
 * the tape (no cache): for training, and for checking against a twin. */
EMBER_API ember_tensor *ember_lm_forward(ember_lm *lm, ember_tensor *tokens);

/* Fine-tuning (docs/models.md, "Fine-tuning a pretrained model"). LoRA
 * adds to projections q, k, v, o (attention) and gate, up, down (the MLP)
 * a learnt low-rank change, y = x W^T + (alpha / rank) dropout(x) A^T B^T,
 * while W stays frozen (and quantised). A (rank, in) starts uniform in
 * +-1/sqrt(in) as PEFT's, B (out, rank) at zero, so the model starts as
 * the pretrained one. The adapters are a parameter set under PEFT's names
 * (base_model.model.model.layers.N.self_attn.q_proj.lora_A.weight ...),
 * owned by the model: give it to an optimizer, and save it with
 * ember_params_save and "lora_alpha" in the metadata (ember train
 * --lora does, with PEFT's adapter_config.json beside it). */
typedef struct ember_lora_options {
    int rank;            /* r, 1 to 1024; 0: 8 */
    float alpha;         /* the product is scaled by alpha / rank; 0: 16 */
    float dropout;       /* on each adapter's input while training, in [0, 1) */
    const char *targets; /* "q,k,v,o,gate,up,down" (or PEFT's q_proj ...); NULL or "all": all seven */
    uint64_t seed;       /* A's values, and dropout's masks */
} ember_lora_options;
/* The adapters' set, or NULL with the reason (bad options, adapters there already). */
EMBER_API ember_params *ember_lm_lora(ember_lm *lm, const ember_lora_options *options);
/* Adapters from a file of PEFT's names (ember's, or PEFT's
 * adapter_model.safetensors): the projections and rank from its tensors,
 * alpha from its "lora_alpha" metadata or the adapter_config.json beside
 * it. A file that does not fit the model changes nothing. */
EMBER_API ember_status ember_lm_load_adapter(ember_lm *lm, const char *path);
/* The adapters' set (NULL without), and a line about them. */
EMBER_API ember_params *ember_lm_adapter(ember_lm *lm);
EMBER_API const char *ember_lm_lora_describe(const ember_lm *lm, char *out, size_t len);
/* Full fine-tuning instead: every weight (the embedding, each block's
 * norms, projections and biases, the final norm, an untied output)
 * dequantised to F32 and made a parameter, named as the GGUF file names
 * it (token_embd.weight, blk.N.attn_q.weight ...) in its layout. The set,
 * owned by the model; NULL with the reason (adapters there already, out
 * of memory: the model is then as it was). For small models: the
 * optimizer keeps two moments of every weight. */
EMBER_API ember_params *ember_lm_full(ember_lm *lm);
/* Weights a full fine-tuning saved (ember_params_save of that set), in
 * place of the file's: ember_lm_full, then the file's tensors by name. */
EMBER_API ember_status ember_lm_load_weights(ember_lm *lm, const char *path);
/* The fine-tuned model as a GGUF file llama.cpp and ollama run: the file
 * the model was loaded from with each adapted projection merged, W +
 * (alpha / rank) B A, or after full fine-tuning every weight of two axes
 * its trained value (the norms and biases in F32), in `type` ("F32",
 * "F16", "Q8_0" or "Q4_0", quantised as ggml's reference code does), and
 * everything else (metadata, tokenizer, other tensors) as it was. Written
 * beside `path` and renamed over it: whole or not at all. */
EMBER_API ember_status ember_lm_save_merged(ember_lm *lm, const char *path, const char *type);
/* The model with its adapters (or all its weights, ember_lm_full) as an
 * ember_model, for the loops, evaluation and checkpoints that take one
 * (ember train --init MODEL.gguf uses it): samples are windows of
 * `context` tokens (up to the positions the model keeps), its output
 * every position's scores (N, context, vocab), its parameters the
 * adapters or the weights. It belongs to the language model: ember_lm_free
 * frees it. */
EMBER_API ember_model *ember_lm_model(ember_lm *lm, int64_t context);
/* Training mode: LoRA's dropout drops (a fresh mask each ember_lm_forward).
 * Off for a new model. */
EMBER_API ember_status ember_lm_set_training(ember_lm *lm, bool training);
/* A text file as the model's tokens, a data set as ember_dataset_from_tokens
 * makes (the first 90% for training, the last 10% for validation, windows
 * of `context` tokens), tokenised as ember_lm_tokenize does without
 * special tokens (text that spells "<|im_end|>" is those characters). */
EMBER_API ember_dataset *ember_lm_dataset(ember_lm *lm, const char *path, int64_t context, ember_split split);
/* Conversations as the model's tokens: a JSON Lines file, one a line,
 * {"messages": [{"role": "user", "content": ...}, {"role": "assistant",
 * "content": ...}, ...]}, each rendered with the model's chat template as
 * ember_lm_chat_prompt renders it, one after another in a stream cut into
 * windows of `context` tokens. Only the assistant's replies (and the
 * marker that ends each) are targets the loss counts, the rest labelled
 * EMBER_IGNORE_INDEX (ember_dataset_ignores): TRL's assistant-only loss.
 * The last tenth of the conversations (one at least) is the validation
 * split. A line that is not such a conversation is EMBER_ERR_FORMAT
 * naming the line and the byte. */
EMBER_API ember_dataset *ember_lm_chat_dataset(ember_lm *lm, const char *path, int64_t context,
                                               ember_split split);

#endif /* EMBER_PART_LM_H */

/* SPDX-License-Identifier: MIT */
/*
 * models/lm-impl.h — pretrained language models from GGUF files: their
 * tokenizer (lm-tokenizer.c, lm-pretokenize.c) and their network
 * (lm-llama.c), behind the public ember_lm_* calls of ember.h.
 */
#ifndef EMBER_LM_IMPL_H
#define EMBER_LM_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ember.h"
#include "gguf-impl.h"

/* ------------------------------------------------------------ tokenizer */

/* how text is cut before BPE (lm-pretokenize.c has each one's pattern) */
enum lm_pre { LM_PRE_GPT2, LM_PRE_SMOLLM, LM_PRE_LLAMA3, LM_PRE_QWEN2 };

/* a token's kind, as tokenizer.ggml.token_type numbers them */
enum {
    LM_TOKEN_NORMAL = 1,
    LM_TOKEN_UNKNOWN,
    LM_TOKEN_CONTROL,
    LM_TOKEN_USER_DEFINED,
    LM_TOKEN_UNUSED,
    LM_TOKEN_BYTE
};

struct lm_merge {
    int32_t left, right, result;
    int32_t rank; /* its place in the file's list, -1 for an empty slot */
};

struct lm_tokenizer {
    enum lm_pre pre;
    bool ignore_merges; /* a piece that is a whole token is taken as it is (Llama 3) */
    int32_t count;
    char *arena; /* every token's text, one after another */
    uint32_t *text_at, *text_len;
    int8_t *type;
    int32_t *ids; /* hash table: text -> id, -1 empty */
    uint64_t ids_mask;
    struct lm_merge *merges; /* hash table: (left, right) -> merge */
    uint64_t merges_mask;
    int32_t *specials; /* control and user-defined tokens, longest first */
    int special_count;
    uint32_t byte_map[256];  /* byte -> the character that stands for it */
    int16_t byte_of[512];    /* and back, -1 where no byte */
    int32_t byte_token[256]; /* byte -> its token, -1 where the vocabulary has none */
    int32_t bos, eos, eot;   /* -1: none */
    bool add_bos;
    uint64_t identity; /* a hash of everything that decides its tokens: what a cache of them is keyed by */
};

/* The tokenizer the file describes; NULL with the reason. */
struct lm_tokenizer *lm_tokenizer_load(ember_ctx *ctx, const struct gguf_file *f);
void lm_tokenizer_free(struct lm_tokenizer *t);
/* Encodes len bytes of text; special tokens are matched in it when
 * `specials`. Writes up to cap ids and returns how many there are in all
 * (more than cap: call again with room), -1 with the reason. */
int64_t lm_tokenize(ember_ctx *ctx, const struct lm_tokenizer *t, const char *text, size_t len, bool specials,
                    int32_t *out, int64_t cap);
/* a token's bytes (a special token's text as it is written), at most cap */
size_t lm_token_bytes(const struct lm_tokenizer *t, int32_t id, char *out, size_t cap);
int32_t lm_token_find(const struct lm_tokenizer *t, const char *s, size_t n);

/* A conversation as the model's chat template writes it (ChatML or Llama
 * 3's, lm-text.c), in pieces through piece() in order, each of a kind:
 * the template's markup (special tokens, roles, the newlines between), a
 * message's text, and the assistant's, its reply and the marker that ends
 * it, which a chat's loss scores (lm-chat.c). EMBER_ERR_UNSUPPORTED for
 * any other template. */
enum lm_piece { LM_PIECE_MARKUP, LM_PIECE_TEXT, LM_PIECE_REPLY, LM_PIECE_REPLY_END };
ember_status lm_chat_render(ember_lm *lm, const ember_chat_message *messages, int count, bool reply,
                            void (*piece)(void *user, const char *text, size_t len, enum lm_piece kind),
                            void *user);

/* One line of a chat's JSON Lines (lm-chat.c), {"messages": [{"role":
 * ..., "content": ...}, ...], ...}, into its messages (to lm_chat_free;
 * their strings are the line's, decoded); EMBER_ERR_FORMAT naming `what`
 * and the byte (base: the line's offset in its file) otherwise. */
ember_status lm_chat_parse(ember_ctx *ctx, const char *what, const char *line, size_t len, size_t base,
                           ember_chat_message **messages, int *count);
void lm_chat_free(ember_chat_message *messages, int count);

/* A file's bytes, NUL-terminated, into *text (to free()): a regular file
 * up to 1 GiB (lm-data.c). */
ember_status lm_read_text(ember_ctx *ctx, const char *path, char **text, size_t *len);

typedef void (*lm_piece_fn)(const unsigned char *piece, size_t len, void *arg);
/* Calls piece() on each piece of text, in order; EMBER_ERR_NOMEM when out of memory. */
ember_status lm_pretokenize(enum lm_pre pre, const char *text, size_t len, lm_piece_fn piece, void *arg);

/* ---------------------------------------------------------------- models */

/* the projections of a block LoRA may adapt (lm-lora.c) */
enum lm_proj { LM_Q, LM_K, LM_V, LM_O, LM_GATE, LM_UP, LM_DOWN, LM_PROJS };

/* one block's weights (GGUF's blk.N.*) and its key/value cache */
struct lm_block {
    ember_tensor *attn_norm, *wq, *wk, *wv, *wo, *bq, *bk, *bv; /* biases: qwen2's, else NULL */
    ember_tensor *ffn_norm, *gate, *up, *down;
    ember_tensor *k_cache, *v_cache; /* (1, kv_heads, context, head_dim) */
    /* LoRA's A (r, in) and B (out, r) of each projection, NULL where none
     * (they belong to the model's lora set) */
    ember_tensor *lora_a[LM_PROJS], *lora_b[LM_PROJS];
    ember_lm *lm; /* its model, and its place there: what a recomputation of it needs */
    int64_t index;
};

struct ember_lm {
    ember_ctx *ctx;
    char *path;   /* the file it was loaded from (lm-export.c reads it again) */
    char arch[8]; /* "llama", "qwen2" */
    bool neox;    /* RoPE's pairs are halves (qwen2), not neighbours (llama as GGUF keeps it) */
    int64_t blocks, width, heads, kv_heads, head_dim, ffn, vocab, rot;
    int64_t train_context, context; /* the model's, and the positions kept */
    float eps;
    double rope_base;
    struct lm_tokenizer *tok;
    char *chat_template;                             /* the file's, or NULL */
    ember_tensor *token_embd, *output_norm, *output; /* output NULL: tied to token_embd */
    ember_tensor *rope;                              /* (context, rot / 2, 2) */
    struct lm_block *block;
    int64_t position; /* positions fed */
    /* LoRA (lm-lora.c): the adapters' set, NULL without; y gains scale * B A x */
    ember_params *lora;
    /* llama's q and k rows in GGUF's order, as indices into Hugging Face's
     * (in which B is kept, as PEFT's files have it): I32 (out), NULL where
     * the two orders are one (qwen2) or the projection has no adapter */
    ember_tensor *lora_rows[2];
    ember_model *model; /* ember_lm_model's, which then owns the lora set (or the full one) */
    /* full fine-tuning (lm-full.c): every weight as an F32 parameter under
     * its GGUF name, the block's slots pointing into it; NULL without */
    ember_params *full;
    int lora_rank;
    unsigned lora_targets; /* a bit per enum lm_proj */
    float lora_alpha, lora_scale, lora_dropout;
    uint64_t lora_seed, forwards; /* dropout's masks: from the seed and the training forwards run */
    bool training;
    /* training keeps every block's activations, or recomputes them all (else the cheap ones:
     * ember_lm_options) */
    bool keep_activations, recompute_all;
    size_t weight_bytes, cache_bytes;
    char describe[512];
};

/* the full set given back (and the model that owns it), the slots emptied
 * so that ember_lm_free does not free its tensors again */
void lm_full_free(ember_lm *lm);

/* Hugging Face's row of projection p's output for GGUF's `row`: llama's
 * converter permutes q's and k's rows so that each RoPE pair is
 * neighbours (2i, 2i + 1 of a head) where Hugging Face keeps halves (i,
 * i + head_dim / 2); every other row, and qwen2's, is where it was. */
int64_t lm_hf_row(const ember_lm *lm, int p, int64_t row);

/* x @ W^T (+ bias) for projection p of a block, with its LoRA adapter's
 * scaled product added where it has one (dropout first, when training) */
ember_tensor *lm_project(ember_lm *lm, int64_t block, int p, ember_tensor *h, ember_tensor *bias);
/* drops the adapters */
void lm_lora_free(ember_lm *lm);

#endif /* EMBER_LM_IMPL_H */

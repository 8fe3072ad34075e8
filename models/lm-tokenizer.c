/* SPDX-License-Identifier: MIT */
/*
 * models/lm-tokenizer.c — a language model's byte-level BPE tokenizer, from
 * the vocabulary and merges its GGUF file holds (GPT-2's scheme, which
 * SmolLM, Llama 3 and Qwen 2 use).
 *
 * Encoding text:
 *   1. special tokens (those the file marks control or user-defined, such
 *      as <|im_start|>) are found in the text first, longest first, when
 *      the caller asks for them: each is its own id;
 *   2. the text between them is cut into pieces (lm-pretokenize.c);
 *   3. each piece's bytes become characters by GPT-2's byte map (printable
 *      bytes stand for themselves, the others for U+0100 on: a space is
 *      'Ġ'), each character one token at first;
 *   4. the adjacent pair whose merge comes first in the file's list is
 *      merged into one token, again and again, until no pair has a merge
 *      (leftmost first among equal pairs, as Hugging Face's tokenizers do).
 * Decoding maps each token's characters back to bytes.
 *
 * Lookups are hash tables built once at load: text -> id (for the merges'
 * halves and results, and the byte tokens), and (left id, right id) ->
 * the merge's rank and result. A piece of n characters takes O(n log n):
 * candidate pairs wait in a heap by (rank, position), and a merged-away
 * symbol invalidates the candidates that named it.
 */
#include <stdlib.h>
#include <string.h>

#include "lm-impl.h"
#include "text-impl.h"
#include "unicode-impl.h"

/* ------------------------------------------------------------ hashing */

static uint64_t hash_pair(int32_t a, int32_t b)
{
    uint64_t h = (uint64_t)(uint32_t)a << 32 | (uint32_t)b;
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    return h ^ (h >> 33);
}

static const char *token_text(const struct lm_tokenizer *t, int32_t id, size_t *len)
{
    *len = t->text_len[id];
    return t->arena + t->text_at[id];
}

int32_t lm_token_find(const struct lm_tokenizer *t, const char *s, size_t n)
{
    for (uint64_t h = ember_hash_bytes(s, n) & t->ids_mask;; h = (h + 1) & t->ids_mask) {
        int32_t id = t->ids[h];
        size_t len;
        if (id < 0)
            return -1;
        const char *text = token_text(t, id, &len);
        if (len == n && memcmp(text, s, n) == 0)
            return id;
    }
}

static const struct lm_merge *merge_find(const struct lm_tokenizer *t, int32_t a, int32_t b)
{
    for (uint64_t h = hash_pair(a, b) & t->merges_mask;; h = (h + 1) & t->merges_mask) {
        const struct lm_merge *m = &t->merges[h];
        if (m->rank < 0)
            return NULL;
        if (m->left == a && m->right == b)
            return m;
    }
}

static uint64_t table_size(uint64_t n)
{
    uint64_t size = 16;
    while (size < 2 * n)
        size *= 2;
    return size;
}

/* ------------------------------------------------------------ the byte map */

/* GPT-2's: the bytes that print (! to ~, ¡ to ¬, ® to ÿ) are their own
 * characters, the other 68 are U+0100 on, in byte order */
static void byte_map(uint32_t map[256])
{
    uint32_t next = 256;
    for (int b = 0; b < 256; b++)
        map[b] = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE) ? (uint32_t)b : next++;
}

static int utf8_put(uint32_t c, char *out)
{
    if (c < 0x80)
        return out[0] = (char)c, 1;
    if (c < 0x800)
        return out[0] = (char)(0xC0 | c >> 6), out[1] = (char)(0x80 | (c & 0x3F)), 2;
    out[0] = (char)(0xE0 | c >> 12);
    out[1] = (char)(0x80 | ((c >> 6) & 0x3F));
    out[2] = (char)(0x80 | (c & 0x3F));
    return 3;
}

/* ---------------------------------------------------------------- loading */

void lm_tokenizer_free(struct lm_tokenizer *t)
{
    if (!t)
        return;
    free(t->arena);
    free(t->text_at);
    free(t->text_len);
    free(t->type);
    free(t->ids);
    free(t->merges);
    free(t->specials);
    free(t);
}

static const struct {
    const char *name;
    enum lm_pre pre;
} pre_names[] = {{"gpt2", LM_PRE_GPT2},        {"default", LM_PRE_GPT2},  {"smollm", LM_PRE_SMOLLM},
                 {"llama-bpe", LM_PRE_LLAMA3}, {"llama3", LM_PRE_LLAMA3}, {"qwen2", LM_PRE_QWEN2}};

static int by_length(const void *a, const void *b, void *t)
{
    const struct lm_tokenizer *tok = t;
    size_t la = tok->text_len[*(const int32_t *)a], lb = tok->text_len[*(const int32_t *)b];
    return (la < lb) - (la > lb);
}

/* the special tokens, longest first (insertion sort: there are few) */
static void sort_specials(struct lm_tokenizer *t)
{
    for (int i = 1; i < t->special_count; i++)
        for (int j = i; j > 0 && by_length(&t->specials[j - 1], &t->specials[j], t) > 0; j--) {
            int32_t x = t->specials[j];
            t->specials[j] = t->specials[j - 1];
            t->specials[j - 1] = x;
        }
}

static ember_status load_vocab(ember_ctx *ctx, struct lm_tokenizer *t, const struct gguf_kv *tokens,
                               const struct gguf_kv *types)
{
    size_t bytes = 0;
    for (uint64_t i = 0; i < tokens->count; i++)
        bytes += tokens->strings[i].len;
    t->arena = malloc(bytes + 1);
    t->text_at = malloc(tokens->count * sizeof *t->text_at);
    t->text_len = malloc(tokens->count * sizeof *t->text_len);
    t->type = malloc(tokens->count * sizeof *t->type);
    t->ids_mask = table_size(tokens->count) - 1;
    t->ids = malloc((t->ids_mask + 1) * sizeof *t->ids);
    t->specials = malloc(tokens->count * sizeof *t->specials);
    if (!t->arena || !t->text_at || !t->text_len || !t->type || !t->ids || !t->specials)
        return ember_set_error(ctx, EMBER_ERR_NOMEM, "out of host memory for a vocabulary of %llu tokens",
                               (unsigned long long)tokens->count);
    memset(t->ids, 0xff, (t->ids_mask + 1) * sizeof *t->ids);
    size_t at = 0;
    for (uint64_t i = 0; i < tokens->count; i++) {
        const struct gguf_string *s = &tokens->strings[i];
        memcpy(t->arena + at, s->data, s->len);
        t->text_at[i] = (uint32_t)at;
        t->text_len[i] = (uint32_t)s->len;
        at += s->len;
        t->type[i] = types ? (int8_t)gguf_array_int(types, i) : LM_TOKEN_NORMAL;
        if (t->type[i] == LM_TOKEN_CONTROL || t->type[i] == LM_TOKEN_USER_DEFINED)
            if (s->len > 0)
                t->specials[t->special_count++] = (int32_t)i;
        int32_t id = (int32_t)i;
        if (lm_token_find(t, s->data, s->len) >= 0)
            continue; /* a duplicate: the first keeps the text, as llama.cpp's map does */
        uint64_t h = ember_hash_bytes(s->data, s->len) & t->ids_mask;
        while (t->ids[h] >= 0)
            h = (h + 1) & t->ids_mask;
        t->ids[h] = id;
    }
    t->count = (int32_t)tokens->count;
    sort_specials(t);
    return EMBER_OK;
}

static ember_status load_merges(ember_ctx *ctx, struct lm_tokenizer *t, const struct gguf_kv *merges)
{
    t->merges_mask = table_size(merges->count) - 1;
    t->merges = malloc((t->merges_mask + 1) * sizeof *t->merges);
    char *joined = malloc(2 * GGUF_MAX_NAME + 2 * 65536);
    if (!t->merges || !joined) {
        free(joined);
        return ember_set_error(ctx, EMBER_ERR_NOMEM, "out of host memory for %llu merges",
                               (unsigned long long)merges->count);
    }
    for (uint64_t h = 0; h <= t->merges_mask; h++)
        t->merges[h].rank = -1;
    for (uint64_t i = 0; i < merges->count; i++) {
        const struct gguf_string *s = &merges->strings[i];
        /* "left right": split at the first space after the first character (a token may be ' ') */
        const char *space = s->len > 1 ? memchr(s->data + 1, ' ', s->len - 1) : NULL;
        if (!space || s->len > 2 * 65536)
            continue; /* not a merge: ignored, as llama.cpp would fail to find its halves */
        size_t ln = (size_t)(space - s->data), rn = s->len - ln - 1;
        int32_t a = lm_token_find(t, s->data, ln), b = lm_token_find(t, space + 1, rn);
        memcpy(joined, s->data, ln);
        memcpy(joined + ln, space + 1, rn);
        int32_t c = lm_token_find(t, joined, ln + rn);
        if (a < 0 || b < 0 || c < 0 || merge_find(t, a, b))
            continue;
        uint64_t h = hash_pair(a, b) & t->merges_mask;
        while (t->merges[h].rank >= 0)
            h = (h + 1) & t->merges_mask;
        t->merges[h] = (struct lm_merge){.left = a, .right = b, .result = c, .rank = (int32_t)i};
    }
    free(joined);
    return EMBER_OK;
}

struct lm_tokenizer *lm_tokenizer_load(ember_ctx *ctx, const struct gguf_file *f)
{
    struct gguf_string model = {0}, pre = {0};
    if (gguf_get_string(ctx, f, "tokenizer.ggml.model", &model) != EMBER_OK ||
        gguf_get_string(ctx, f, "tokenizer.ggml.pre", &pre) != EMBER_OK)
        return NULL;
    if (!model.data || model.len != 4 || memcmp(model.data, "gpt2", 4) != 0) {
        ember_set_error(ctx, EMBER_ERR_UNSUPPORTED,
                        "the model's tokenizer is \"%.*s\"; ember reads byte-level BPE tokenizers "
                        "(tokenizer.ggml.model \"gpt2\": SmolLM, Llama 3, Qwen 2), not yet SentencePiece "
                        "(\"llama\": TinyLlama, Llama 2)",
                        model.data ? (int)(model.len > 40 ? 40 : model.len) : 4,
                        model.data ? model.data : "none");
        return NULL;
    }
    struct lm_tokenizer *t = calloc(1, sizeof *t);
    if (!t) {
        ember_set_error(ctx, EMBER_ERR_NOMEM, "out of host memory for the tokenizer");
        return NULL;
    }
    t->pre = LM_PRE_GPT2;
    bool known = !pre.data;
    for (size_t i = 0; pre.data && i < sizeof pre_names / sizeof pre_names[0]; i++)
        if (strlen(pre_names[i].name) == pre.len && memcmp(pre_names[i].name, pre.data, pre.len) == 0) {
            t->pre = pre_names[i].pre;
            known = true;
        }
    if (!known) {
        ember_set_error(
            ctx, EMBER_ERR_UNSUPPORTED,
            "the model's pre-tokenizer is \"%.*s\"; ember knows gpt2, smollm, llama-bpe and qwen2",
            (int)(pre.len > 40 ? 40 : pre.len), pre.data);
        lm_tokenizer_free(t);
        return NULL;
    }
    const struct gguf_kv *tokens = gguf_find(f, "tokenizer.ggml.tokens"),
                         *types = gguf_find(f, "tokenizer.ggml.token_type"),
                         *merges = gguf_find(f, "tokenizer.ggml.merges");
    const char *problem = !tokens || tokens->type != GGUF_ARRAY || tokens->item_type != GGUF_STRING
                              ? "no tokenizer.ggml.tokens of strings"
                          : tokens->count < 256 || tokens->count > INT32_MAX / 2
                              ? "too few or too many tokens"
                          : !merges || merges->type != GGUF_ARRAY || merges->item_type != GGUF_STRING
                              ? "no tokenizer.ggml.merges of strings"
                          : types && (types->type != GGUF_ARRAY || types->count != tokens->count ||
                                      types->item_type == GGUF_STRING || types->item_type == GGUF_ARRAY)
                              ? "a tokenizer.ggml.token_type that is not one number a token"
                              : NULL;
    if (problem) {
        ember_set_error(ctx, EMBER_ERR_FORMAT, "the model's tokenizer is malformed: %s", problem);
        lm_tokenizer_free(t);
        return NULL;
    }
    if (load_vocab(ctx, t, tokens, types) != EMBER_OK || load_merges(ctx, t, merges) != EMBER_OK) {
        lm_tokenizer_free(t);
        return NULL;
    }
    /* the byte tokens: every byte must have one, or some text could not be encoded */
    uint32_t map[256];
    byte_map(map);
    for (size_t c = 0; c < sizeof t->byte_of / sizeof t->byte_of[0]; c++)
        t->byte_of[c] = -1;
    t->ignore_merges = t->pre == LM_PRE_LLAMA3;
    for (int b = 0; b < 256; b++) {
        char s[4];
        t->byte_map[b] = map[b];
        int n = utf8_put(map[b], s);
        t->byte_token[b] = lm_token_find(t, s, (size_t)n);
        t->byte_of[map[b]] = (int16_t)b;
    }
    int64_t v;
    t->bos = gguf_get_int_or(ctx, f, "tokenizer.ggml.bos_token_id", -1, t->count - 1, -1, &v) == EMBER_OK
                 ? (int32_t)v
                 : -2;
    t->eos = gguf_get_int_or(ctx, f, "tokenizer.ggml.eos_token_id", -1, t->count - 1, -1, &v) == EMBER_OK
                 ? (int32_t)v
                 : -2;
    t->eot = gguf_get_int_or(ctx, f, "tokenizer.ggml.eot_token_id", -1, t->count - 1, -1, &v) == EMBER_OK
                 ? (int32_t)v
                 : -2;
    if (t->bos < -1 || t->eos < -1 || t->eot < -1 ||
        gguf_get_bool_or(ctx, f, "tokenizer.ggml.add_bos_token", false, &t->add_bos) != EMBER_OK) {
        lm_tokenizer_free(t);
        return NULL;
    }
    /* the vocabulary's texts and kinds, the merges (their table is built the same from the same file), the
     * pre-tokenizer and how whole pieces are taken: a cache of tokens (lm-data.c) is good for these alone */
    uint64_t parts[] = {ember_hash_bytes(t->arena, t->text_at[t->count - 1] + t->text_len[t->count - 1]),
                        ember_hash_bytes(t->text_len, (size_t)t->count * sizeof *t->text_len),
                        ember_hash_bytes(t->type, (size_t)t->count * sizeof *t->type),
                        ember_hash_bytes(t->merges, (size_t)(t->merges_mask + 1) * sizeof *t->merges),
                        (uint64_t)t->pre,
                        (uint64_t)t->ignore_merges};
    t->identity = ember_hash_bytes(parts, sizeof parts);
    return t;
}

/* --------------------------------------------------------------- encoding */

struct symbol {
    int32_t id;
    int prev, next; /* neighbours in the piece, -1 at its ends; id -1 once merged away */
};

struct candidate {
    int32_t rank;
    int left; /* the symbol the pair starts at */
    int32_t left_id, right_id;
};

static bool before(const struct candidate *a, const struct candidate *b)
{
    return a->rank < b->rank || (a->rank == b->rank && a->left < b->left);
}

static void heap_push(struct candidate *heap, int *n, struct candidate c)
{
    int i = (*n)++;
    while (i > 0 && before(&c, &heap[(i - 1) / 2])) {
        heap[i] = heap[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    heap[i] = c;
}

static struct candidate heap_pop(struct candidate *heap, int *n)
{
    struct candidate top = heap[0], last = heap[--*n];
    int i = 0;
    for (;;) {
        int child = 2 * i + 1;
        if (child >= *n)
            break;
        if (child + 1 < *n && before(&heap[child + 1], &heap[child]))
            child++;
        if (!before(&heap[child], &last))
            break;
        heap[i] = heap[child];
        i = child;
    }
    if (*n > 0)
        heap[i] = last;
    return top;
}

struct encoder {
    const struct lm_tokenizer *t;
    struct symbol *sym;
    struct candidate *heap;
    size_t cap; /* symbols allocated (and three times as many heap entries) */
    int32_t *out;
    int64_t count, out_cap;
    ember_status status;
};

static void emit(struct encoder *e, int32_t id)
{
    if (e->count < e->out_cap)
        e->out[e->count] = id;
    e->count++;
}

static void consider(struct encoder *e, int *heap_n, int left)
{
    int right = e->sym[left].next;
    if (right < 0)
        return;
    const struct lm_merge *m = merge_find(e->t, e->sym[left].id, e->sym[right].id);
    if (m)
        heap_push(
            e->heap, heap_n,
            (struct candidate){
                .rank = m->rank, .left = left, .left_id = e->sym[left].id, .right_id = e->sym[right].id});
}

/* one piece: its bytes as byte tokens, merged */
static void encode_piece(const unsigned char *s, size_t n, void *arg)
{
    struct encoder *e = arg;
    if (e->status != EMBER_OK || n == 0)
        return;
    if (n > e->cap) {
        /* the heap holds every pair ever queued, stale ones too: n - 1 at
         * first, and at most two more for each of the n - 1 merges */
        size_t cap = n * 2;
        struct symbol *sym = realloc(e->sym, cap * sizeof *sym);
        if (sym)
            e->sym = sym;
        struct candidate *heap = sym ? realloc(e->heap, 3 * cap * sizeof *heap) : NULL;
        if (heap)
            e->heap = heap;
        if (!sym || !heap) {
            e->status = EMBER_ERR_NOMEM;
            return;
        }
        e->cap = cap;
    }
    /* Llama 3's tokenizer takes a piece that is a whole token as it is
     * (Hugging Face's ignore_merges); the others always merge, which can
     * end elsewhere */
    int32_t whole = -1;
    if (e->t->ignore_merges && n <= 64) {
        char mapped[64 * 2];
        size_t m = 0;
        for (size_t i = 0; i < n; i++)
            m += (size_t)utf8_put(e->t->byte_map[s[i]], mapped + m);
        whole = lm_token_find(e->t, mapped, m);
    }
    if (whole >= 0) {
        emit(e, whole);
        return;
    }
    /* a byte the vocabulary has no token for is dropped, as Hugging Face's
     * BPE drops a character it cannot find when the model has no unknown
     * token (SmolLM2 has none for some control bytes) */
    int heap_n = 0, count = 0;
    for (size_t i = 0; i < n; i++)
        if (e->t->byte_token[s[i]] >= 0) {
            e->sym[count] =
                (struct symbol){.id = e->t->byte_token[s[i]], .prev = count - 1, .next = count + 1};
            count++;
        }
    if (count == 0)
        return;
    e->sym[count - 1].next = -1;
    for (int i = 0; i + 1 < count; i++)
        consider(e, &heap_n, i);
    while (heap_n > 0) {
        struct candidate c = heap_pop(e->heap, &heap_n);
        struct symbol *l = &e->sym[c.left];
        /* stale: a symbol of the pair changed since it was queued */
        if (l->id != c.left_id || l->next < 0 || e->sym[l->next].id != c.right_id)
            continue;
        const struct lm_merge *m = merge_find(e->t, c.left_id, c.right_id);
        struct symbol *r = &e->sym[l->next];
        l->id = m->result;
        l->next = r->next;
        if (r->next >= 0)
            e->sym[r->next].prev = c.left;
        r->id = -1;
        if (l->prev >= 0)
            consider(e, &heap_n, l->prev);
        consider(e, &heap_n, c.left);
    }
    for (int i = 0; i >= 0; i = e->sym[i].next)
        emit(e, e->sym[i].id);
}

/* the special token at text (its length in *len), or -1 */
static int32_t special_at(const struct lm_tokenizer *t, const char *text, size_t left, size_t *len)
{
    for (int i = 0; i < t->special_count; i++) {
        size_t n;
        const char *s = token_text(t, t->specials[i], &n);
        if (n <= left && s[0] == text[0] && memcmp(s, text, n) == 0) {
            *len = n;
            return t->specials[i];
        }
    }
    return -1;
}

int64_t lm_tokenize(ember_ctx *ctx, const struct lm_tokenizer *t, const char *text, size_t len, bool specials,
                    int32_t *out, int64_t cap)
{
    struct encoder e = {.t = t, .out = out, .out_cap = cap};
    size_t start = 0;
    for (size_t i = 0; i < len && e.status == EMBER_OK;) {
        size_t n;
        int32_t id = specials ? special_at(t, text + i, len - i, &n) : -1;
        if (id < 0) {
            i++;
            continue;
        }
        if (i > start)
            e.status = lm_pretokenize(t->pre, text + start, i - start, encode_piece, &e);
        emit(&e, id);
        i += n;
        start = i;
    }
    if (e.status == EMBER_OK && start < len)
        e.status = lm_pretokenize(t->pre, text + start, len - start, encode_piece, &e);
    free(e.sym);
    free(e.heap);
    if (e.status != EMBER_OK) {
        ember_set_error(ctx, e.status, "out of host memory to tokenize %zu bytes", len);
        return -1;
    }
    return e.count;
}

/* --------------------------------------------------------------- decoding */

size_t lm_token_bytes(const struct lm_tokenizer *t, int32_t id, char *out, size_t cap)
{
    if (id < 0 || id >= t->count)
        return 0;
    size_t len, n = 0;
    const unsigned char *s = (const unsigned char *)token_text(t, id, &len);
    if (t->type[id] == LM_TOKEN_CONTROL || t->type[id] == LM_TOKEN_USER_DEFINED) { /* as written */
        n = len < cap ? len : cap;
        memcpy(out, s, n);
        return n;
    }
    for (size_t i = 0; i < len && n < cap;) {
        int bytes;
        uint32_t c = ember_utf8_next(s + i, len - i, &bytes);
        out[n++] = c < 512 && t->byte_of[c] >= 0 ? (char)t->byte_of[c] : '?';
        i += (size_t)bytes;
    }
    return n;
}

/* SPDX-License-Identifier: MIT */
/*
 * tests/fuzz/fuzz_chat.c — a line of a chat's JSON Lines, as `ember train
 * --data chat` reads each (lm_chat_parse, models/lm-chat.c). An accepted
 * line holds messages each with a role that is not empty and a content,
 * both NUL-terminated UTF-8 no longer than the line; a refused one says
 * why, naming the line; nothing is left held either way (the sanitizers'
 * leak check).
 */
#include <stdlib.h>
#include <string.h>

#include "fuzz-util.h"
#include "json-impl.h"
#include "lm-impl.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ember_ctx *ctx = fuzz_ctx();
    ember_chat_message *messages = NULL;
    int count = -1;
    if (lm_chat_parse(ctx, "chat.jsonl line 1", (const char *)data, size, 0, &messages, &count) != EMBER_OK) {
        if (messages || count != 0 || !strstr(ember_last_error(ctx), "chat.jsonl line 1: bad conversation"))
            abort(); /* refused without a reason, or with something held */
        return 0;
    }
    if (count < 0 || (count > 0 && !messages))
        abort();
    for (int i = 0; i < count; i++) {
        const char *role = messages[i].role, *content = messages[i].content;
        if (!role || !*role || !content || strlen(role) > size || strlen(content) > size ||
            !ember_utf8_valid(role) || !ember_utf8_valid(content))
            abort();
    }
    lm_chat_free(messages, count);
    return 0;
}

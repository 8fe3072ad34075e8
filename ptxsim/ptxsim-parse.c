/* SPDX-License-Identifier: MIT */
/*
 * ptxsim/ptxsim-parse.c — reading a PTX module: its header (.version,
 * .target), module-scope variables (ember_tuning), and each .entry's
 * parameters, registers, shared variables, labels and instructions. Each
 * instruction is handed to the decoder (ptxsim-decode.c) as text; the
 * names (registers to slots, labels to instructions, immediates to
 * constants) are kept by the builder both use (ptxsim-build.c).
 *
 * PTX is a line-oriented assembly: a statement ends with `;`, a label with
 * `:`, and .version/.target/.address_size at the end of their line.
 * Comments are C's. What the simulator does not run (function calls, a
 * stack, textures) is refused here, with its line.
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptxsim-impl.h"

/* ---------------------------------------------------------------- text */

struct cursor {
    const char *p;
    int line;
};

/* Skips blanks and comments, counting lines. */
static void skip_space(struct cursor *c)
{
    for (;;) {
        if (*c->p == '\n') {
            c->line++;
            c->p++;
        } else if (isspace((unsigned char)*c->p)) {
            c->p++;
        } else if (c->p[0] == '/' && c->p[1] == '/') {
            while (*c->p && *c->p != '\n')
                c->p++;
        } else if (c->p[0] == '/' && c->p[1] == '*') {
            c->p += 2;
            while (*c->p && !(c->p[0] == '*' && c->p[1] == '/')) {
                if (*c->p == '\n')
                    c->line++;
                c->p++;
            }
            if (*c->p)
                c->p += 2;
        } else {
            return;
        }
    }
}

static bool word_char(char ch)
{
    return isalnum((unsigned char)ch) || ch == '_' || ch == '.' || ch == '$' || ch == '%' || ch == ':';
}

/* The next word (letters, digits, _ . $ % and ::) into `out`; false when
 * the next character starts none. A single ':' ends a word (a label). */
static bool read_word(struct cursor *c, char *out, size_t len)
{
    skip_space(c);
    size_t n = 0;
    while (word_char(*c->p) && !(c->p[0] == ':' && c->p[1] != ':')) {
        if (c->p[0] == ':') { /* "::" inside a word, as in shared::cta */
            if (n + 2 < len) {
                out[n++] = ':';
                out[n++] = ':';
            }
            c->p += 2;
            continue;
        }
        if (n + 1 < len)
            out[n++] = *c->p;
        c->p++;
    }
    out[n] = '\0';
    return n > 0;
}

static bool accept(struct cursor *c, char ch)
{
    skip_space(c);
    if (*c->p != ch)
        return false;
    c->p++;
    return true;
}

/* The text up to the next `stop` (not inside brackets or braces), with
 * comments dropped and blanks squeezed, into a malloc'd string; the cursor
 * goes past `stop`. NULL at the end of the text. */
static char *read_until(struct cursor *c, char stop)
{
    size_t cap = 128, n = 0;
    char *s = malloc(cap);
    int depth = 0;
    if (!s)
        return NULL;
    skip_space(c);
    while (*c->p && !(depth == 0 && *c->p == stop)) {
        if ((c->p[0] == '/' && (c->p[1] == '/' || c->p[1] == '*')) || isspace((unsigned char)*c->p)) {
            skip_space(c);
            if (n > 0 && s[n - 1] != ' ')
                s[n++] = ' ';
        } else {
            depth += *c->p == '[' || *c->p == '{';
            depth -= *c->p == ']' || *c->p == '}';
            s[n++] = *c->p++;
        }
        if (n + 2 >= cap) {
            char *grown = realloc(s, cap *= 2);
            if (!grown) {
                free(s);
                return NULL;
            }
            s = grown;
        }
    }
    if (!*c->p) {
        free(s);
        return NULL;
    }
    c->p++;
    while (n > 0 && s[n - 1] == ' ')
        n--;
    s[n] = '\0';
    return s;
}

/* the rest of the line (directives without `;`) */
static void read_line(struct cursor *c, char *out, size_t len)
{
    skip_space(c);
    size_t n = 0;
    while (*c->p && *c->p != '\n' && !(c->p[0] == '/' && c->p[1] == '/')) {
        if (n + 1 < len)
            out[n++] = *c->p;
        c->p++;
    }
    while (n > 0 && isspace((unsigned char)out[n - 1]))
        n--;
    out[n] = '\0';
}

/* --------------------------------------------------------------- errors */

struct parser {
    struct cursor c;
    struct ptxsim_module *m;
    char *why;
    size_t why_len;
    const char *kernel; /* the .entry being read, for messages */
};

static bool parse_error(struct parser *ps, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static bool parse_error(struct parser *ps, int line, const char *fmt, ...)
{
    char what[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    if (ps->kernel)
        snprintf(ps->why, ps->why_len, "PTX line %d, kernel %s: %s", line, ps->kernel, what);
    else
        snprintf(ps->why, ps->why_len, "PTX line %d: %s", line, what);
    return false;
}

/* ------------------------------------------------------- declarations */

/* `.align N` and a type, as in `.align 4 .b8`; returns the type */
static enum ptx_type read_storage(struct parser *ps, size_t *align)
{
    char word[PTXSIM_NAME];
    *align = 0;
    struct cursor save = ps->c;
    while (read_word(&ps->c, word, sizeof word)) {
        if (strcmp(word, ".align") == 0) {
            read_word(&ps->c, word, sizeof word);
            *align = (size_t)strtoul(word, NULL, 0);
        } else if (strcmp(word, ".v2") == 0 || strcmp(word, ".v4") == 0) {
            return T_NONE; /* vectors: the caller says it cannot */
        } else {
            enum ptx_type t = ptx_type_from_name(word);
            if (t != T_NONE)
                return t;
            break;
        }
        save = ps->c;
    }
    ps->c = save;
    return T_NONE;
}

/* `name` or `name[N]` (or `name[]` with the count from the initialiser):
 * the name and the count, 1 for a scalar, 0 when the brackets are empty */
static bool read_declared(struct parser *ps, char *name, size_t len, size_t *count)
{
    if (!read_word(&ps->c, name, len))
        return false;
    *count = 1;
    if (accept(&ps->c, '[')) {
        char digits[32];
        *count = read_word(&ps->c, digits, sizeof digits) ? (size_t)strtoull(digits, NULL, 0) : 0;
        if (!accept(&ps->c, ']'))
            return false;
    }
    return true;
}

/* A module-scope .const or .global variable, its initialiser into bytes. */
static bool parse_variable(struct parser *ps, enum ptx_space space)
{
    int line = ps->c.line;
    size_t align, count;
    enum ptx_type t = read_storage(ps, &align);
    char name[PTXSIM_NAME];
    unsigned elem = ptx_type_bytes(t);
    if (t == T_NONE || t == T_PRED || !read_declared(ps, name, sizeof name, &count))
        return parse_error(ps, line, "a variable declaration this simulator does not read");
    char *rest = read_until(&ps->c, ';');
    if (!rest)
        return parse_error(ps, line, "the declaration of %s does not end", name);
    /* the initialiser: "= {1, 2, 3}" or "= 5" */
    size_t values = 0;
    const char *init = strchr(rest, '=');
    if (init)
        for (const char *p = init + 1; *p; p++)
            values += isdigit((unsigned char)*p) && (p == init + 1 || !isalnum((unsigned char)p[-1]));
    if (count == 0)
        count = values;
    struct ptx_variable v = {.space = (uint8_t)space, .size = count * elem};
    snprintf(v.name, sizeof v.name, "%s", name);
    v.bytes = calloc(v.size ? v.size : 1, 1);
    struct ptx_variable *grown =
        v.bytes ? realloc(ps->m->variables, (size_t)(ps->m->variable_count + 1) * sizeof *grown) : NULL;
    if (!grown) {
        free(v.bytes);
        free(rest);
        return parse_error(ps, line, "out of memory");
    }
    ps->m->variables = grown;
    size_t at = 0;
    for (const char *p = init ? init + 1 : ""; *p && at < count;) {
        while (*p && !isdigit((unsigned char)*p) && *p != '-')
            p++;
        if (!*p)
            break;
        char *end;
        uint64_t value = ptx_type_float(t) ? 0 : (uint64_t)strtoll(p, &end, 0);
        if (ptx_type_float(t)) {
            double d = strtod(p, &end);
            value = t == T_F32 ? ptx_bits32((float)d) : ptx_bits64(d);
        }
        memcpy(v.bytes + at * elem, &value, elem); /* little-endian, as the GPU */
        at++;
        p = end;
    }
    free(rest);
    ps->m->variables[ps->m->variable_count++] = v;
    return true;
}

/* `.param .u64 name` ... up to `)` */
static bool parse_params(struct parser *ps, struct ptx_builder *b)
{
    struct ptxsim_kernel *k = b->k;
    if (accept(&ps->c, ')'))
        return true;
    for (;;) {
        int line = ps->c.line;
        char word[PTXSIM_NAME], name[PTXSIM_NAME];
        size_t align, count;
        if (!read_word(&ps->c, word, sizeof word) || strcmp(word, ".param") != 0)
            return parse_error(ps, line, "a kernel parameter must be declared .param, not \"%s\"", word);
        enum ptx_type t = read_storage(ps, &align);
        if (t == T_NONE || t == T_PRED || !read_declared(ps, name, sizeof name, &count))
            return parse_error(ps, line,
                               "a parameter this simulator does not read (a pointer, an int, a float)");
        size_t size = ptx_type_bytes(t) * count;
        if (!align)
            align = ptx_type_bytes(t);
        if (!ptx_grow(&k->params, k->param_count, &b->param_cap, sizeof *k->params))
            return parse_error(ps, line, "out of memory");
        struct ptx_param *p = &k->params[k->param_count++];
        snprintf(p->name, sizeof p->name, "%s", name);
        p->offset = (k->param_bytes + align - 1) / align * align;
        p->size = size;
        k->param_bytes = p->offset + size;
        if (accept(&ps->c, ')'))
            return true;
        if (!accept(&ps->c, ','))
            return parse_error(ps, ps->c.line, "parameters are separated by commas");
    }
}

/* `.reg .b32 %r<52>;` or `.reg .f32 %f1, %f2;` */
static bool parse_registers(struct parser *ps, struct ptx_builder *b)
{
    int line = ps->c.line;
    char *decl = read_until(&ps->c, ';');
    if (!decl)
        return parse_error(ps, line, "a .reg declaration does not end");
    char *p = decl;
    char word[32];
    int n = 0;
    while (*p && !isspace((unsigned char)*p) && n < (int)sizeof word - 1)
        word[n++] = *p++;
    word[n] = '\0';
    enum ptx_type t = ptx_type_from_name(word);
    bool ok = t != T_NONE;
    if (!ok)
        parse_error(ps, line,
                    "registers of type \"%s\": this simulator knows .pred, .b/.u/.s 8 to 64, .f16 to .f64",
                    word);
    while (ok && *p) {
        while (*p == ' ' || *p == ',')
            p++;
        if (!*p)
            break;
        struct reg_range r = {.count = -1};
        n = 0;
        while (*p && *p != '<' && *p != ',' && *p != ' ' && n < (int)sizeof r.prefix - 1)
            r.prefix[n++] = *p++;
        r.prefix[n] = '\0';
        if (*p == '<') {
            r.count = atoi(p + 1);
            while (*p && *p != '>')
                p++;
            if (*p)
                p++;
        }
        if (!ptx_grow(&b->ranges, b->range_count, &b->range_cap, sizeof *b->ranges)) {
            ok = parse_error(ps, line, "out of memory");
            break;
        }
        r.first_slot = b->k->slot_count;
        int made = r.count < 0 ? 1 : r.count;
        for (int i = 0; i < made; i++) {
            char name[32];
            if (r.count < 0)
                snprintf(name, sizeof name, "%s", r.prefix);
            else
                snprintf(name, sizeof name, "%.20s%d", r.prefix, i);
            if (ptx_builder_add_slot(b, name, t) < 0) {
                ok = parse_error(ps, line, "out of memory");
                break;
            }
        }
        unsigned bytes = ptx_type_bytes(t);
        if (t != T_PRED)
            b->k->registers32 += made * (bytes > 4 ? 2 : 1);
        b->ranges[b->range_count++] = r;
    }
    free(decl);
    return ok;
}

/* `.shared .align 4 .b8 name[1024];` */
static bool parse_shared(struct parser *ps, struct ptx_builder *b)
{
    int line = ps->c.line;
    struct ptxsim_kernel *k = b->k;
    size_t align, count;
    char name[PTXSIM_NAME];
    enum ptx_type t = read_storage(ps, &align);
    if (t == T_NONE || t == T_PRED || !read_declared(ps, name, sizeof name, &count) || count == 0 ||
        !accept(&ps->c, ';'))
        return parse_error(ps, line,
                           "a .shared declaration this simulator does not read (dynamic shared memory "
                           "or an initialiser?)");
    if (!align)
        align = ptx_type_bytes(t);
    if (!ptx_grow(&k->shared, k->shared_count, &b->shared_cap, sizeof *k->shared))
        return parse_error(ps, line, "out of memory");
    struct ptx_shared *s = &k->shared[k->shared_count++];
    snprintf(s->name, sizeof s->name, "%s", name);
    s->offset = (k->shared_bytes + align - 1) / align * align;
    s->size = ptx_type_bytes(t) * count;
    k->shared_bytes = s->offset + s->size;
    return true;
}

/* ------------------------------------------------------------ statements */

/* Splits "opcode a, b, [c+4]" (the guard already taken off) into a
 * statement; `text` is modified in place and must outlive it. */
static bool split_statement(char *text, struct ptx_statement *s)
{
    s->opcode = text;
    s->operand_count = 0;
    char *p = text;
    while (*p && *p != ' ')
        p++;
    if (!*p)
        return true;
    *p++ = '\0';
    while (*p) {
        while (*p == ' ')
            p++;
        if (s->operand_count == PTX_MAX_OPERANDS)
            return false;
        s->operands[s->operand_count++] = p;
        int depth = 0;
        while (*p && !(depth == 0 && *p == ',')) {
            depth += *p == '[' || *p == '{';
            depth -= *p == ']' || *p == '}';
            p++;
        }
        char *end = p;
        if (*p)
            *p++ = '\0';
        while (end > s->operands[s->operand_count - 1] && end[-1] == ' ')
            *--end = '\0';
    }
    return true;
}

static bool add_instruction(struct parser *ps, struct ptx_builder *b, char *text, int line)
{
    struct ptxsim_kernel *k = b->k;
    char original[512];
    snprintf(original, sizeof original, "%s", text);
    struct ptx_statement s = {.line = line};
    char *body = text;
    if (*body == '@') { /* the guard: @%p1 or @!%p1 */
        body++;
        s.guard_negated = *body == '!';
        body += s.guard_negated;
        s.guard = body;
        while (*body && *body != ' ')
            body++;
        if (*body)
            *body++ = '\0';
        while (*body == ' ')
            body++;
    }
    if (!split_statement(body, &s))
        return parse_error(ps, line, "\"%s\": more operands than any instruction this simulator knows",
                           original);
    if (!ptx_grow(&k->code, k->count, &b->code_cap, sizeof *k->code) ||
        !(k->text = realloc(k->text, (size_t)b->code_cap * sizeof *k->text)))
        return parse_error(ps, line, "out of memory");
    char why[512];
    if (!ptx_decode(b, &s, &k->code[k->count], why, sizeof why))
        return parse_error(ps, line, "\"%s\": %s", original, why);
    if (b->out_of_memory)
        return parse_error(ps, line, "out of memory");
    k->code[k->count].line = line;
    if (!(k->text[k->count] = strdup(original)))
        return parse_error(ps, line, "out of memory");
    k->count++;
    return true;
}

/* The body of an entry, from after its `{` to the matching `}`. */
static bool parse_body(struct parser *ps, struct ptx_builder *b)
{
    int depth = 1;
    for (;;) {
        skip_space(&ps->c);
        int line = ps->c.line;
        if (!*ps->c.p)
            return parse_error(ps, line, "the kernel's body does not end");
        if (accept(&ps->c, '{')) {
            depth++;
            continue;
        }
        if (accept(&ps->c, '}')) {
            if (--depth == 0)
                return true;
            continue;
        }
        if (*ps->c.p == '.') {
            char word[PTXSIM_NAME];
            read_word(&ps->c, word, sizeof word);
            if (strcmp(word, ".reg") == 0) {
                if (!parse_registers(ps, b))
                    return false;
            } else if (strcmp(word, ".shared") == 0) {
                if (!parse_shared(ps, b))
                    return false;
            } else if (strcmp(word, ".pragma") == 0 || strcmp(word, ".loc") == 0 ||
                       strcmp(word, ".file") == 0) {
                free(read_until(&ps->c, strcmp(word, ".pragma") == 0 ? ';' : '\n'));
            } else {
                return parse_error(ps, line,
                                   "the directive %s inside a kernel: this simulator runs kernels without "
                                   "a stack (.local), calls or textures",
                                   word);
            }
            continue;
        }
        /* a label ("LBB0_2:") or an instruction ("@%p1 bra LBB0_2;") */
        const char *start = ps->c.p;
        char word[PTXSIM_NAME];
        if (*start != '@' && read_word(&ps->c, word, sizeof word) && accept(&ps->c, ':')) {
            int label = ptx_builder_label(b, word);
            if (label < 0)
                return parse_error(ps, line, "out of memory");
            if (b->labels[label].at >= 0)
                return parse_error(ps, line, "the label %s is defined twice", word);
            b->labels[label].at = b->k->count;
            continue;
        }
        ps->c.p = start;
        char *text = read_until(&ps->c, ';');
        if (!text)
            return parse_error(ps, line, "an instruction without its ';'");
        bool ok = add_instruction(ps, b, text, line);
        free(text);
        if (!ok)
            return false;
    }
}

/* Branch targets were label numbers; now that every label is known, each
 * becomes the index of the instruction it marks. */
static bool resolve_labels(struct parser *ps, struct ptx_builder *b)
{
    struct ptxsim_kernel *k = b->k;
    for (int i = 0; i < k->count; i++) {
        struct ptx_ins *in = &k->code[i];
        if (in->op != OP_BRA)
            continue;
        const struct label *l = &b->labels[in->target];
        if (l->at < 0)
            return parse_error(ps, in->line, "the branch goes to %s, which is no label of this kernel",
                               l->name);
        if (l->at >= k->count)
            return parse_error(ps, in->line, "the branch goes to %s, past the kernel's last instruction",
                               l->name);
        in->target = l->at;
    }
    return true;
}

/* `.entry name(params) [directives] { body }` */
static bool parse_entry(struct parser *ps)
{
    struct ptxsim_module *m = ps->m;
    int line = ps->c.line;
    char name[PTXSIM_NAME];
    if (!read_word(&ps->c, name, sizeof name) || !accept(&ps->c, '('))
        return parse_error(ps, line, ".entry without a name and parameters");
    struct ptxsim_kernel *grown = realloc(m->kernels, (size_t)(m->kernel_count + 1) * sizeof *grown);
    if (!grown)
        return parse_error(ps, line, "out of memory");
    m->kernels = grown;
    struct ptxsim_kernel *k = &m->kernels[m->kernel_count++];
    memset(k, 0, sizeof *k);
    snprintf(k->name, sizeof k->name, "%s", name);
    for (int i = 0; i < SPECIAL_COUNT; i++)
        k->special_slot[i] = -1;
    ps->kernel = k->name;
    struct ptx_builder b = {.m = m, .k = k};
    bool ok = parse_params(ps, &b);
    /* performance directives (.maxntid, .reqntid, ...) up to the body: not needed to run it */
    while (ok && !accept(&ps->c, '{')) {
        char word[PTXSIM_NAME];
        if (!read_word(&ps->c, word, sizeof word) && !accept(&ps->c, ','))
            ok = parse_error(ps, ps->c.line, "the kernel %s has no body", name);
    }
    ok = ok && parse_body(ps, &b) && resolve_labels(ps, &b);
    if (ok)
        ptx_count_registers(k);
    if (ok && !ptx_find_reconvergence(k))
        ok = parse_error(ps, ps->c.line, "out of memory for the control flow of kernel %s", name);
    free(b.ranges);
    free(b.labels);
    ps->kernel = NULL;
    return ok;
}

/* -------------------------------------------------------------- module */

struct ptxsim_module *ptxsim_module_parse(const char *ptx, char *why, size_t why_len)
{
    struct ptxsim_module *m = calloc(1, sizeof *m);
    if (!m) {
        snprintf(why, why_len, "out of memory");
        return NULL;
    }
    struct parser ps = {.c = {.p = ptx, .line = 1}, .m = m, .why = why, .why_len = why_len};
    bool ok = true;
    for (;;) {
        skip_space(&ps.c);
        if (!*ps.c.p)
            break;
        int line = ps.c.line;
        char word[PTXSIM_NAME];
        if (!read_word(&ps.c, word, sizeof word)) {
            ok = parse_error(&ps, line, "unexpected \"%c\"", *ps.c.p);
            break;
        }
        char rest[128];
        if (strcmp(word, ".version") == 0) {
            read_line(&ps.c, rest, sizeof rest);
            int major = 0, minor = 0;
            sscanf(rest, "%d.%d", &major, &minor);
            m->version = major * 10 + minor;
        } else if (strcmp(word, ".target") == 0) {
            read_line(&ps.c, rest, sizeof rest);
            if (sscanf(rest, "sm_%d", &m->target) != 1) {
                ok = parse_error(&ps, line, ".target %s: this simulator runs sm_XX targets", rest);
                break;
            }
        } else if (strcmp(word, ".address_size") == 0) {
            read_line(&ps.c, rest, sizeof rest);
            if (atoi(rest) != 64) {
                ok = parse_error(&ps, line, ".address_size %s: this simulator runs 64-bit PTX", rest);
                break;
            }
        } else if (strcmp(word, ".visible") == 0 || strcmp(word, ".weak") == 0) {
            continue; /* linkage: what follows is what counts */
        } else if (strcmp(word, ".const") == 0 || strcmp(word, ".global") == 0) {
            if (!(ok = parse_variable(&ps, word[1] == 'c' ? SPACE_CONST : SPACE_GLOBAL)))
                break;
        } else if (strcmp(word, ".entry") == 0) {
            if (!(ok = parse_entry(&ps)))
                break;
        } else {
            ok = parse_error(&ps, line,
                             "%s: this simulator runs kernels (.entry) and module constants; not "
                             "device functions (.func), externs or textures",
                             word);
            break;
        }
    }
    if (ok && (m->version == 0 || m->target == 0))
        ok = parse_error(&ps, 1, "the module has no .version or no .target");
    if (!ok) {
        ptxsim_module_free(m);
        return NULL;
    }
    return m;
}

void ptxsim_module_free(struct ptxsim_module *m)
{
    if (!m)
        return;
    for (int i = 0; i < m->kernel_count; i++) {
        struct ptxsim_kernel *k = &m->kernels[i];
        for (int j = 0; j < k->count; j++)
            free(k->text[j]);
        free(k->text);
        free(k->code);
        free(k->params);
        free(k->shared);
        free(k->regs);
        free(k->constants);
        free(k->reconverge);
    }
    for (int i = 0; i < m->variable_count; i++)
        free(m->variables[i].bytes);
    free(m->variables);
    free(m->kernels);
    free(m);
}

/* --------------------------------------------------------- the queries */

int ptxsim_module_version(const struct ptxsim_module *m) { return m->version; }
int ptxsim_module_target(const struct ptxsim_module *m) { return m->target; }
int ptxsim_module_kernel_count(const struct ptxsim_module *m) { return m->kernel_count; }

const struct ptxsim_kernel *ptxsim_module_kernel_at(const struct ptxsim_module *m, int index)
{
    return index >= 0 && index < m->kernel_count ? &m->kernels[index] : NULL;
}

const struct ptxsim_kernel *ptxsim_module_kernel(const struct ptxsim_module *m, const char *name)
{
    for (int i = 0; i < m->kernel_count; i++)
        if (strcmp(m->kernels[i].name, name) == 0)
            return &m->kernels[i];
    return NULL;
}

bool ptxsim_module_variable(const struct ptxsim_module *m, const char *name, const unsigned char **bytes,
                            size_t *size)
{
    for (int i = 0; i < m->variable_count; i++)
        if (strcmp(m->variables[i].name, name) == 0) {
            *bytes = m->variables[i].bytes;
            *size = m->variables[i].size;
            return true;
        }
    return false;
}

const char *ptxsim_kernel_name(const struct ptxsim_kernel *k) { return k->name; }
int ptxsim_kernel_param_count(const struct ptxsim_kernel *k) { return k->param_count; }
size_t ptxsim_kernel_param_bytes(const struct ptxsim_kernel *k) { return k->param_bytes; }
size_t ptxsim_kernel_shared_bytes(const struct ptxsim_kernel *k) { return k->shared_bytes; }
int ptxsim_kernel_registers(const struct ptxsim_kernel *k) { return k->registers32; }
int ptxsim_kernel_instruction_count(const struct ptxsim_kernel *k) { return k->count; }

bool ptxsim_kernel_param(const struct ptxsim_kernel *k, int index, size_t *offset, size_t *size)
{
    if (index < 0 || index >= k->param_count)
        return false;
    *offset = k->params[index].offset;
    *size = k->params[index].size;
    return true;
}

int ptxsim_kernel_instruction_line(const struct ptxsim_kernel *k, int index)
{
    return index >= 0 && index < k->count ? k->code[index].line : 0;
}

const char *ptxsim_kernel_instruction_text(const struct ptxsim_kernel *k, int index)
{
    return index >= 0 && index < k->count ? k->text[index] : "";
}

enum ptxsim_class ptxsim_kernel_instruction_class(const struct ptxsim_kernel *k, int index)
{
    return index >= 0 && index < k->count ? (enum ptxsim_class)k->code[index].klass : PTXSIM_CLASS_INT;
}

/* SPDX-License-Identifier: MIT */
/*
 * core/autograd-impl.h — the define-by-run tape.
 *
 * Each op, when grad is on and an input requires grad, appends a node:
 * which op, its output, its inputs and whatever it saved for the backward
 * pass. The tape is in execution order, which is a topological order, so
 * ember_backward (core/backward.c) walks it once from the end and calls each
 * node's backward function, which turns out->grad into gradients for the
 * inputs through the helpers at the end of this header (core/autograd.c).
 *
 * Every op is one entry of EMBER_OPS below; its forward lives in the op's
 * file under core/ and its backward beside it, named ember_backward_<name>.
 * The activations' entries are their rows (base/elementwise-impl.h), whose
 * forward and backward core/ops-elementwise.c makes from them; so a macro
 * given to EMBER_OPS takes (NAME, name, ...) and leaves the rest.
 */
#ifndef EMBER_AUTOGRAD_IMPL_H
#define EMBER_AUTOGRAD_IMPL_H

#include "elementwise-impl.h"
#include "tensor-impl.h"

#define EMBER_OPS(X)                                                                                         \
    EMBER_ACTIVATIONS(X) /* relu, sigmoid, ...: base/elementwise-impl.h's rows */                            \
    X(ADD, add)                                                                                              \
    X(SUB, sub)                                                                                              \
    X(MUL, mul)                                                                                              \
    X(SCALE, scale)                                                                                          \
    X(SUM, sum)                                                                                              \
    X(SOFTMAX, softmax)                                                                                      \
    X(LOG_SOFTMAX, log_softmax)                                                                              \
    X(CROSS_ENTROPY, cross_entropy)                                                                          \
    X(CROSS_ENTROPY_IGNORE, cross_entropy_ignore)                                                            \
    X(MATMUL, matmul)                                                                                        \
    X(LINEAR, linear)                                                                                        \
    X(CONV2D, conv2d)                                                                                        \
    X(MAX_POOL2D, max_pool2d)                                                                                \
    X(AVG_POOL2D, avg_pool2d)                                                                                \
    X(DROPOUT, dropout)                                                                                      \
    X(BATCH_NORM, batch_norm)                                                                                \
    X(RESHAPE, reshape)                                                                                      \
    X(TRANSPOSE, transpose)                                                                                  \
    X(CONTIGUOUS, contiguous)                                                                                \
    X(NARROW, narrow)                                                                                        \
    X(PAD, pad)                                                                                              \
    X(CONCAT, concat)                                                                                        \
    X(EMBEDDING, embedding)                                                                                  \
    X(LAYER_NORM, layer_norm)                                                                                \
    X(CAUSAL_SOFTMAX, causal_softmax)                                                                        \
    X(BMM, bmm)                                                                                              \
    X(ATTENTION, attention)                                                                                  \
    X(RMS_NORM, rms_norm)                                                                                    \
    X(LINEAR_QUANT, linear_quant)                                                                            \
    X(ROPE, rope)                                                                                            \
    X(RECOMPUTE, recompute)

#define EMBER_OP_ENUM(NAME, name, ...) EMBER_OP_##NAME,
enum ember_op { EMBER_OPS(EMBER_OP_ENUM) EMBER_OP_COUNT };
#undef EMBER_OP_ENUM

struct ember_node {
    enum ember_op op;
    struct ember_tensor *out;
    struct ember_tensor *in[3];    /* the op's inputs, in its argument order */
    struct ember_tensor *saved[2]; /* tape tensors kept for backward (im2col, argmax, prob) */
    int64_t arg[4];                /* integer arguments (stride, padding, axis) */
    float farg;                    /* a float argument (scale) */
    uint8_t final_inputs;          /* bit k: in[k] is a leaf this node is the last to add to
                                    * (the earliest node using it), for ember_set_grad_ready */
};

#define EMBER_OP_BACKWARD_DECL(NAME, name, ...) ember_status ember_backward_##name(struct ember_node *n);
EMBER_OPS(EMBER_OP_BACKWARD_DECL)
#undef EMBER_OP_BACKWARD_DECL

const char *ember_op_name(enum ember_op op);

/* A leaf is a tensor not made by an op on the tape (a parameter, an input):
 * its gradient is kept and added to, not replaced. */
static inline bool ember_is_leaf(const struct ember_tensor *t) { return t->owner != EMBER_OWNER_TAPE; }

/* True when an op on these inputs (any may be NULL) must be recorded. */
bool ember_grad_needed(ember_ctx *ctx, const struct ember_tensor *a, const struct ember_tensor *b,
                       const struct ember_tensor *c);
/* Appends a node for `out`, marks out as requiring grad and returns the
 * node for the op to fill saved[] and arg[]; NULL when out of memory. */
struct ember_node *ember_record(enum ember_op op, struct ember_tensor *out, struct ember_tensor *a,
                                struct ember_tensor *b, struct ember_tensor *c);
/* ember_record with the tensors the backward pass reads kept in saved[0]
 * and saved[1] (either may be NULL), as most ops with state do. */
struct ember_node *ember_record_saving(enum ember_op op, struct ember_tensor *out, struct ember_tensor *a,
                                       struct ember_tensor *b, struct ember_tensor *c,
                                       struct ember_tensor *saved0, struct ember_tensor *saved1);

/* A recomputation's backward (core/ops-recompute.c), which the walk in
 * core/backward.c runs around a walk of its own: _again runs the function
 * once more with grad on, on a copy of the input (returned; NULL on
 * failure) whose gradient the walk over the nodes since *mark gives, the
 * output's gradient seeding it; _done hands that gradient to the input
 * and drops everything made since the mark. */
struct ember_tensor *ember_recompute_again(struct ember_node *n, ember_tape_mark *mark);
ember_status ember_recompute_done(struct ember_node *n, ember_tape_mark mark, struct ember_tensor *again,
                                  ember_status st);

/* Backward helpers. ember_grad_target says where a backward function
 * should write t's gradient: into a leaf's own gradient with *beta = 1 (add
 * to it), or into a fresh tape tensor with *beta = 0, which is then handed
 * to ember_grad_commit. Primitives that cannot accumulate (beta) write into
 * a fresh tensor of their own and commit it: commit adds it to a leaf's
 * gradient, or becomes or replaces an interior tensor's. */
struct ember_tensor *ember_grad_target(struct ember_tensor *t, float *beta);
ember_status ember_grad_commit(struct ember_tensor *t, struct ember_tensor *g);
/* One interior tensor done with gradient g (its node has run, or a sum
 * replaced it): when none is left that will read it, its storage goes back. */
void ember_grad_spent(struct ember_tensor *g);

/* Sums g (contiguous, broadcast shape) down to t's shape, as the gradient
 * of a broadcast must be, and commits it to t. */
ember_status ember_grad_commit_reduced(struct ember_tensor *t, struct ember_tensor *g);

#endif /* EMBER_AUTOGRAD_IMPL_H */

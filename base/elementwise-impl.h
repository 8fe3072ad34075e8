/* SPDX-License-Identifier: MIT */
/*
 * base/elementwise-impl.h — every elementwise op, one row each.
 *
 * A row is the one place an elementwise op is defined. Everything else is
 * expanded from the rows (X-macros, read by the C compiler; the kernels'
 * text is written from them by backends/kernels/kernels.c):
 *
 *   the op codes, and the profile's row names   backends/backend.h, backend.c
 *   the CPU's loops, each a plain loop that vectorises   backends/cpu/cpu-elementwise.c
 *   the GPU kernels' cases and which kernel runs an op   backends/kernels/kernels.c,
 *                                               elementwise.kc, gpu-elementwise.c
 *   each activation's public op and backward    core/ops-elementwise.c, its entry
 *                                               on the tape (core/autograd-impl.h)
 *   its model layer and ONNX operator           models/model-layers.c, model-onnx-*.c
 *   the test reference, a parity row and a gradient check per op, and the
 *   comparison with PyTorch                     tests/ops, tests/interop
 *
 * It sits in base/ because every layer reads it, the models' included; it
 * holds macros only. Adding an activation: docs/extending.md, "A new
 * activation".
 *
 * A formula is a C expression in x (and alpha, the op's parameter) for a
 * forward pass; a backward pass's is in dy and the one value it reads, x or
 * y (the forward's input or output, as the row says). It may call only this
 * vocabulary, which each dialect defines once (the CPU in
 * backends/cpu/cpu-elementwise.c, the kernels in elementwise.kc and the
 * preludes, the reference in tests/ops/reference.c, in double):
 *
 *   EXPF(x)  LOGF(x)  LOG1PF(x)  SQRTF(x)  TANHF(x)
 *   NORMAL_CDF(x), NORMAL_PDF(x): Phi and phi, the standard normal
 *   distribution's CDF and density
 *
 * MATH marks a formula that calls one of them, PLAIN one that does not: the
 * GPUs run the two kinds in different kernels (a CPU device such as PoCL
 * vectorises a kernel only when its body has no switch, so the plain ops
 * are selects and the math ones a switch: elementwise.kc).
 *
 * NaN and Inf come out as PyTorch's do for the same op (the parity test
 * holds every backend to the reference on them; tests/interop/
 * test_ops_vs_torch.py holds the reference's formulas to PyTorch).
 */
#ifndef EMBER_ELEMENTWISE_IMPL_H
#define EMBER_ELEMENTWISE_IMPL_H

/* The unary primitives that are not an activation of their own (the core
 * builds other ops from them):
 *
 *     X(NAME, name, y = f(x, alpha), MATH or PLAIN, test domain)
 *
 * A test domain is where the tests draw inputs: REAL (any value), POSITIVE
 * (above 0), or PIECEWISE (any value, its kinks at whole numbers, which the
 * gradient check keeps its inputs 0.1 away from). */
/* clang-format off */
#define EMBER_UNARY_PRIMITIVES(X)                                                                            \
    X(COPY,       copy,       x,                     PLAIN, REAL)                                            \
    X(NEG,        neg,        -x,                    PLAIN, REAL)                                            \
    X(EXP,        exp,        EXPF(x),               MATH,  REAL)                                            \
    X(LOG,        log,        LOGF(x),               MATH,  POSITIVE)                                        \
    X(SCALE,      scale,      alpha * x,             PLAIN, REAL)                                            \
    X(ADD_SCALAR, add_scalar, x + alpha,             PLAIN, REAL)                                            \
    X(RSQRT,      rsqrt,      1.0f / SQRTF(x + alpha), MATH, POSITIVE)

/* The binary primitives: X(NAME, name, y = f(a, b, alpha), MATH or PLAIN) */
#define EMBER_BINARY_PRIMITIVES(X)                                                                           \
    X(ADD, add, a + b, PLAIN)                                                                                \
    X(SUB, sub, a - b, PLAIN)                                                                                \
    X(MUL, mul, a * b, PLAIN)                                                                                \
    X(DIV, div, a / b, PLAIN)
/* clang-format on */

/* The activations: each one a public op, ember_<name>, with its backward.
 *
 *     X(NAME, name, parameter,
 *       y = f(x, alpha), MATH or PLAIN,
 *       what the backward reads (x or y), dx = g(dy, x or y, alpha), MATH or PLAIN,
 *       its model layer, PyTorch's module, ONNX's operator, test domain)
 *
 * parameter: none, or slope (ember_leaky_relu(x, slope); alpha in the formulas).
 * The backward is the binary primitive <NAME>_BACKWARD (a = dy, b = x or y).
 * Model layer: LAYER, a layer of the row's name that models/model-layers.c
 * makes from the row, or HAND, one written there by hand (its options: the
 * slope; gelu's tanh form). PyTorch's module as Python builds it (nn is
 * torch.nn, alpha the parameter); ONNX's operator (opset 13) or NULL where
 * it has none. */
/* clang-format off */
#define EMBER_ACTIVATIONS(X)                                                                                 \
    X(RELU, relu, none,                                                                                      \
      x < 0.0f ? 0.0f : x, PLAIN,                                                                            \
      y, y <= 0.0f ? 0.0f : dy, PLAIN,                                                                       \
      LAYER, "nn.ReLU()", "Relu", PIECEWISE)                                                                 \
    X(LEAKY_RELU, leaky_relu, slope,                                                                         \
      x < 0.0f ? alpha * x : x, PLAIN,                                                                       \
      x, x > 0.0f ? dy : alpha * dy, PLAIN,                                                                  \
      HAND, "nn.LeakyReLU(alpha)", "LeakyRelu", PIECEWISE)                                                   \
    X(SIGMOID, sigmoid, none,                                                                                \
      1.0f / (1.0f + EXPF(-x)), MATH,                                                                        \
      y, dy * y * (1.0f - y), PLAIN,                                                                         \
      LAYER, "nn.Sigmoid()", "Sigmoid", REAL)                                                                \
    X(TANH, tanh, none,                                                                                      \
      TANHF(x), MATH,                                                                                        \
      y, dy * (1.0f - y * y), PLAIN,                                                                         \
      LAYER, "nn.Tanh()", "Tanh", REAL)                                                                      \
    X(GELU, gelu, none,                                                                                      \
      x * NORMAL_CDF(x), MATH,                                                                               \
      x, dy * (NORMAL_CDF(x) + x * NORMAL_PDF(x)), MATH,                                                     \
      HAND, "nn.GELU()", NULL, REAL)                                                                         \
    /* GPT-2's GELU: y = x (1 + t) / 2, t = tanh(k (x + c x^3)), k = sqrt(2 / pi), c = 0.044715,             \
     * y' = (1 + t) (1 + x (1 - t) k (1 + 3 c x^2)) / 2 */                                                   \
    X(GELU_TANH, gelu_tanh, none,                                                                            \
      0.5f * x * (1.0f + TANHF(0.7978845608f * (x + 0.044715f * x * x * x))), MATH,                          \
      x, dy * 0.5f * (1.0f + TANHF(0.7978845608f * (x + 0.044715f * x * x * x))) *                           \
             (1.0f + x * (1.0f - TANHF(0.7978845608f * (x + 0.044715f * x * x * x))) * 0.7978845608f *       \
                         (1.0f + 0.134145f * x * x)), MATH,                                                  \
      HAND, "nn.GELU(approximate='tanh')", NULL, REAL)                                                       \
    /* ln(1 + e^x), x itself past 20 as PyTorch's; y' = the sigmoid */                                       \
    X(SOFTPLUS, softplus, none,                                                                              \
      x > 20.0f ? x : LOG1PF(EXPF(x)), MATH,                                                                 \
      x, x > 20.0f ? dy : dy / (1.0f + EXPF(-x)), MATH,                                                      \
      LAYER, "nn.Softplus()", "Softplus", REAL)                                                              \
    /* x tanh(softplus x); y' = t + x (1 - t^2) sigmoid(x), t = tanh(softplus x) */                          \
    X(MISH, mish, none,                                                                                      \
      x * TANHF(x > 20.0f ? x : LOG1PF(EXPF(x))), MATH,                                                      \
      x, dy * (TANHF(x > 20.0f ? x : LOG1PF(EXPF(x))) +                                                      \
               x * (1.0f - TANHF(x > 20.0f ? x : LOG1PF(EXPF(x))) * TANHF(x > 20.0f ? x : LOG1PF(EXPF(x)))) / \
                   (1.0f + EXPF(-x))), MATH,                                                                 \
      LAYER, "nn.Mish()", NULL, REAL)                                                                        \
    /* MobileNet's: ReLU clipped at 6; the hard sigmoid relu6(x + 3) / 6 and x times it, as PyTorch's.       \
     * ONNX: Clip's bounds are inputs, HardSigmoid's slope must be 1/6 and HardSwish is opset 14: their     \
     * import and export are written by hand (models/model-onnx-export.c, model-onnx-import.c) */           \
    X(RELU6, relu6, none,                                                                                    \
      x < 0.0f ? 0.0f : x > 6.0f ? 6.0f : x, PLAIN,                                                          \
      x, x <= 0.0f || x >= 6.0f ? 0.0f : dy, PLAIN,                                                          \
      LAYER, "nn.ReLU6()", NULL, PIECEWISE)                                                                  \
    X(HARDSIGMOID, hardsigmoid, none,                                                                        \
      x <= -3.0f ? 0.0f : x >= 3.0f ? 1.0f : x / 6.0f + 0.5f, PLAIN,                                         \
      x, x > -3.0f && x < 3.0f ? dy / 6.0f : 0.0f, PLAIN,                                                    \
      LAYER, "nn.Hardsigmoid()", NULL, PIECEWISE)                                                            \
    X(HARDSWISH, hardswish, none,                                                                            \
      x * (x + 3.0f < 0.0f ? 0.0f : x + 3.0f > 6.0f ? 6.0f : x + 3.0f) / 6.0f, PLAIN,                        \
      x, x < -3.0f ? 0.0f : x <= 3.0f ? dy * (x / 3.0f + 0.5f) : dy, PLAIN,                                  \
      LAYER, "nn.Hardswish()", NULL, PIECEWISE)                                                              \
    /* x sigmoid(x) (Llama's MLP); y' = s (1 + x (1 - s)), s = sigmoid(x), as PyTorch's silu_backward;       \
     * its layer by hand: ONNX has no operator, the export writes Mul(x, Sigmoid(x)) */                      \
    X(SILU, silu, none,                                                                                      \
      x / (1.0f + EXPF(-x)), MATH,                                                                           \
      x, dy / (1.0f + EXPF(-x)) * (1.0f + x * (1.0f - 1.0f / (1.0f + EXPF(-x)))), MATH,                      \
      HAND, "nn.SiLU()", NULL, REAL)
/* clang-format on */

/* The primitives' op codes, in this order: the unary primitives, then one
 * per activation; the binary primitives, then each activation's backward. */
#define EMBER_ENUM_UNARY_PRIMITIVE(NAME, name, f, math, domain) EMBER_##NAME,
#define EMBER_ENUM_BINARY_PRIMITIVE(NAME, name, f, math)        EMBER_##NAME,
#define EMBER_ENUM_ACTIVATION(NAME, name, param, f, fmath, saves, g, gmath, layer, torch, onnx, domain)      \
    EMBER_##NAME,
#define EMBER_ENUM_ACTIVATION_BACKWARD(NAME, name, param, f, fmath, saves, g, gmath, layer, torch, onnx,     \
                                       domain)                                                               \
    EMBER_##NAME##_BACKWARD,

/* An activation's parameter, as a public op's extra argument and as alpha */
#define EMBER_ACTIVATION_PARAMS_none
#define EMBER_ACTIVATION_PARAMS_slope , float slope
#define EMBER_ACTIVATION_ALPHA_none   0.0f
#define EMBER_ACTIVATION_ALPHA_slope  slope

/* 1 for MATH, 0 for PLAIN; 1 when the backward reads y */
#define EMBER_ELEMENTWISE_MATH   1
#define EMBER_ELEMENTWISE_PLAIN  0
#define EMBER_ACTIVATION_READS_y 1
#define EMBER_ACTIVATION_READS_x 0

#endif /* EMBER_ELEMENTWISE_IMPL_H */

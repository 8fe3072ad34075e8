/* SPDX-License-Identifier: MIT */
/*
 * tools/ptx-sim.h — `ember ptx --simulate` and `ember ptx --gpus`
 * (tools/cmd-ptx-sim.c), called by `ember ptx` (tools/cmd-ptx.c).
 */
#ifndef EMBER_PTX_SIM_H
#define EMBER_PTX_SIM_H

#include <stdbool.h>
#include <stdint.h>

struct ptx_sim_options {
    const char *gpu;      /* "k2100m", "sm_35", ...: a row of ptxsim's table */
    const char *model;    /* the model whose training step makes the launch */
    const char *data;     /* its data: "fashion-mnist", "random", ... */
    const char *data_dir; /* where its files are (NULL: the kind's default) */
    int ndim;             /* random data: the shape of a sample (0: the model's), and its classes (0: 10) */
    int64_t shape[3];
    int classes;
    const char *optim; /* "adam", "adamw" or "sgd" */
    int batch;
    bool baseline; /* the built-in PTX, whatever NVRTC is here */
    bool verbose;
};

/* One training step on the simulated GPU, then the report on `kernel`'s
 * first launch (NULL: a line for every kernel launched). An exit status. */
int cli_ptx_simulate(const char *kernel, const struct ptx_sim_options *o);
/* The simulated GPUs, their figures and sources. An exit status. */
int cli_ptx_gpus(void);

#endif /* EMBER_PTX_SIM_H */

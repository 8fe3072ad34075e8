/* SPDX-License-Identifier: MIT */
/* tools/cmd-ptx.c — `ember ptx`: the PTX a GPU gets for one kernel, what it costs the GPU, and (with
 * --simulate, tools/cmd-ptx-sim.c) what one launch of it does on a simulated GPU. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "ptx-sim.h"
#include "ptxas.h"

static const char usage[] =
    "usage: ember ptx KERNEL [--arch sm_XX] [--baseline]\n"
    "       ember ptx [KERNEL] --arch sm_XX --resources [--baseline]\n"
    "       ember ptx [KERNEL] --simulate [--gpu NAME | --arch sm_XX] [--model M] [--batch N]\n"
    "                 [--data KIND [--data-dir PATH] [--shape S] [--classes N]] [--optim adam|adamw|sgd]\n"
    "                 [--baseline]\n"
    "       ember ptx --list | --gpus\n"
    "\n"
    "Prints the PTX ember loads for KERNEL: as the CUDA backend compiles it with\n"
    "NVRTC for the arch (default: the first GPU's), or the built-in sm_30 PTX that\n"
    "every driver since 2013 JITs. Which one it is goes to stderr.\n"
    "\n"
    "With --resources, that PTX is not printed but assembled for the arch by\n"
    "NVIDIA's ptxas -v, and a table says what each kernel (every kernel when none\n"
    "is named) uses there: registers per thread, static shared memory per block,\n"
    "constant memory, stack frame, spill stores and loads (in bytes), and which\n"
    "ptxas said so. No GPU is needed, only a ptxas that knows the arch, looked for\n"
    "in $EMBER_PTXAS (programs or folders, ':' between; only: first to look\n"
    "nowhere else), on PATH, in /usr/local/cuda*/bin and /opt/cuda/bin, beside\n"
    "$EMBER_NVRTC's libraries, and as the nvidia-cuda-nvcc-cu11 wheel in build/cu11\n"
    "beside this program, $VIRTUAL_ENV or ~/.local. CUDA 13's ptxas knows sm_75 and\n"
    "up, CUDA 11.8's sm_35 to sm_90 (pip install nvidia-cuda-nvcc-cu11). Exits 4,\n"
    "naming every ptxas it tried and the archs each knows, when none assembles it.\n"
    "\n"
    "With --simulate, one training step of a model (default simplecnn, batch 64, on\n"
    "Fashion-MNIST) runs on a simulated GPU: the PTX that GPU would get, executed by\n"
    "ember's PTX simulator, every launch checked (bounds, races, barriers, values read\n"
    "before written). Then what the first launch of KERNEL did: instructions per thread\n"
    "by class, warp execution efficiency, the sectors and lines each global load and\n"
    "store touched, shared-memory bank conflicts, occupancy on that GPU (NVIDIA's\n"
    "arithmetic), a roofline, and an estimate of its time there (an estimate, its\n"
    "error against real H100 kernel times in docs/benchmarks.md). Without KERNEL, a\n"
    "line for every kernel the step launched, with each one's estimated time. With\n"
    "--model FILE.gguf (a language model), a prompt of --batch tokens and one token\n"
    "after it instead of a training step. --gpus lists the GPUs it simulates\n"
    "(Quadro K2100M, Tesla K40m, GTX 1080, H100).\n"
    "\n"
    "  --arch sm_XX    the GPU to compile for (sm_30 Kepler ... sm_90 Hopper); needs no GPU\n"
    "  --baseline      the built-in sm_30 PTX\n"
    "  --resources     registers, shared memory and spills per kernel, from ptxas -v\n"
    "  --list          the kernels, with what each computes\n"
    "  --simulate      run a training step on a simulated GPU and report on KERNEL's launch\n"
    "  --gpu NAME      the GPU to simulate: k2100m (default), k40m, gtx1080, h100, or --arch\n"
    "  --model M       the model whose step makes the launch (default simplecnn), or FILE.gguf\n"
    "  --batch N       its batch (default 64)\n"
    "  --data KIND     its data (default fashion-mnist; random needs nothing installed)\n"
    "  --data-dir PATH where its files are (text: the file, as in --data text --model gpt-tiny)\n"
    "  --shape S       random data: one sample's shape, as in 1x28x28 or 100; text: the context\n"
    "  --classes N     random data: the classes (default 10)\n"
    "  --optim NAME    adam (default), adamw or sgd\n"
    "  --gpus          the simulated GPUs and where their figures come from\n"
    "  -h, --help      this text\n";

/* What to install for an arch no ptxas here knows. */
static const char *ptxas_advice(int sm)
{
    if (sm < 35)
        return "CUDA 10.2's ptxas is the last that knows sm_30 and sm_32 (no pip wheel has it): install that "
               "toolkit and set EMBER_PTXAS to its bin/ptxas";
    if (sm < 75)
        return "pip install nvidia-cuda-nvcc-cu11 gives CUDA 11.8's ptxas (sm_35 to sm_90), found by itself "
               "in $VIRTUAL_ENV or ~/.local (else set EMBER_PTXAS to its nvidia/cuda_nvcc/bin/ptxas)";
    if (sm <= 90)
        return "a CUDA toolkit from 13 on knows sm_75 and up; or pip install nvidia-cuda-nvcc-cu11 for "
               "CUDA 11.8's ptxas (sm_35 to sm_90, PTX up to .version 7.8), found by itself in $VIRTUAL_ENV "
               "or ~/.local";
    return "install a CUDA toolkit new enough to know it, and put its bin on PATH or set EMBER_PTXAS";
}

/* Exit status 4: every ptxas tried and why each would not do. */
static int no_ptxas(struct ptxas *found, int count, int sm)
{
    if (count == 0) {
        /* EMBER_PTXAS=none, or only: and nothing after it, looked nowhere */
        const char *given = getenv("EMBER_PTXAS");
        char where[64];
        snprintf(where, sizeof where, "EMBER_PTXAS=%s", given ? given : "");
        bool told = given && (strcmp(given, "none") == 0 || strncmp(given, "only:", 5) == 0);
        cli_error("no ptxas to assemble for sm_%d: %s; for sm_%d: %s", sm,
                  told ? where
                       : "none in $EMBER_PTXAS, on PATH, in /usr/local/cuda*/bin or /opt/cuda/bin, beside "
                         "$EMBER_NVRTC, in build/cu11 beside this program, in $VIRTUAL_ENV or ~/.local",
                  sm, ptxas_advice(sm));
        return EXIT_DEVICE;
    }
    cli_error("no ptxas here assembles for sm_%d; tried:", sm);
    for (int i = 0; i < count; i++) {
        const struct ptxas *a = &found[i];
        char range[64];
        ptxas_arch_range(a, range, sizeof range);
        if (!a->version[0])
            fprintf(stderr, "  %s (%s): %s\n", a->path, a->source, a->why);
        else
            fprintf(stderr, "  %s (%s): ptxas %s, %s%s%s\n", a->path, a->source, a->version, range,
                    a->why[0] ? "; " : "", a->why);
    }
    fprintf(stderr, "  for sm_%d: %s\n", sm, ptxas_advice(sm));
    return EXIT_DEVICE;
}

/* the row of one kernel; "-" for what ptxas did not report */
static void print_usage_row(const struct ptxas_usage *u)
{
    const long v[] = {u->registers, u->smem, u->cmem, u->stack, u->spill_stores, u->spill_loads};
    const int width[] = {9, 7, 9, 6, 13, 12};
    printf("%-28s", u->kernel);
    for (int i = 0; i < 6; i++) {
        if (v[i] < 0)
            printf(" %*s", width[i], "-");
        else
            printf(" %*ld", width[i], v[i]);
    }
    putchar('\n');
}

/* `ember ptx --resources`: `ptx` (one kernel's or the whole module, as
 * `how` says it was made) through the first ptxas that knows sm_`sm` and
 * takes it. */
static int print_resources(const char *ptx, int sm, const char *how)
{
    struct ptxas found[PTXAS_MAX];
    int count = ptxas_find(found, PTXAS_MAX), entries = -1, pick = -1;
    struct ptxas_usage *rows = NULL;
    for (int i = 0; i < count && pick < 0; i++) {
        if (!ptxas_knows(&found[i], sm)) {
            if (found[i].version[0])
                snprintf(found[i].why, sizeof found[i].why, "does not know sm_%d", sm);
            continue;
        }
        /* a ptxas that knows the arch may still refuse a PTX .version newer than itself */
        entries = ptxas_resources(&found[i], ptx, sm, &rows, found[i].why, sizeof found[i].why);
        if (entries >= 0)
            pick = i;
    }
    if (pick < 0)
        return no_ptxas(found, count, sm);
    const struct ptxas *a = &found[pick];
    printf("ptxas %s: %s -v -arch=sm_%d\nPTX: %s\n", a->version, a->path, sm, how);
    printf("%-28s %9s %7s %9s %6s %13s %12s\n", "kernel", "registers", "shared", "constant", "stack",
           "spill stores", "spill loads");
    /* in the order of `ember ptx --list`, then anything else ptxas named */
    bool *shown = calloc((size_t)entries, sizeof *shown);
    for (int k = 0; k < ember_kernel_count(); k++)
        for (int i = 0; i < entries; i++)
            if (strcmp(rows[i].kernel, ember_kernel_name_at(k, NULL)) == 0 && shown && !shown[i]) {
                print_usage_row(&rows[i]);
                shown[i] = true;
            }
    for (int i = 0; i < entries; i++)
        if (!shown || !shown[i])
            print_usage_row(&rows[i]);
    printf("registers per thread; shared (static, per block), constant, stack and spills in bytes; "
           "-: not reported\n");
    free(shown);
    free(rows);
    return EXIT_OK;
}

/* sm_NN or compute_NN (two or three digits, nothing after): the forms
 * NVRTC takes, checked here so that a typo is a usage error */
static bool arch_well_formed(const char *arch)
{
    const char *d = strncmp(arch, "sm_", 3) == 0        ? arch + 3
                    : strncmp(arch, "compute_", 8) == 0 ? arch + 8
                                                        : NULL;
    size_t n = d ? strspn(d, "0123456789") : 0;
    return d && (n == 2 || n == 3) && d[n] == '\0';
}

int cmd_ptx(int argc, char **argv)
{
    static const struct option longopts[] = {{"arch", required_argument, NULL, 'a'},
                                             {"baseline", no_argument, NULL, 'b'},
                                             {"list", no_argument, NULL, 'l'},
                                             {"resources", no_argument, NULL, 'r'},
                                             {"simulate", no_argument, NULL, 's'},
                                             {"gpu", required_argument, NULL, 'g'},
                                             {"model", required_argument, NULL, 'm'},
                                             {"batch", required_argument, NULL, 'n'},
                                             {"data", required_argument, NULL, 'd'},
                                             {"data-dir", required_argument, NULL, 'P'},
                                             {"optim", required_argument, NULL, 'o'},
                                             {"gpus", no_argument, NULL, 'G'},
                                             {"shape", required_argument, NULL, 'S'},
                                             {"classes", required_argument, NULL, 'C'},
                                             {"verbose", no_argument, NULL, 'v'},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    const char *arch = NULL;
    bool baseline = false, list = false, resources = false, simulate = false, simulation_option = false;
    struct ptx_sim_options sim = {
        .gpu = NULL, .model = "simplecnn", .data = "fashion-mnist", .optim = "adam", .batch = 64};
    int64_t batch = 64;
    int c;
    optind = 1;
    while ((c = cli_getopt(argc, argv, "hv", longopts, NULL)) != -1) {
        switch (c) {
        case 'a': arch = optarg; break;
        case 'b': baseline = true; break;
        case 'l': list = true; break;
        case 'r': resources = true; break;
        case 's': simulate = true; break;
        case 'g': sim.gpu = optarg, simulation_option = true; break;
        case 'm': sim.model = optarg, simulation_option = true; break;
        case 'n':
            if (!cli_parse_int("--batch", optarg, 1, 65536, &batch))
                return EXIT_USAGE;
            simulation_option = true;
            break;
        case 'd': sim.data = optarg, simulation_option = true; break;
        case 'P': sim.data_dir = optarg, simulation_option = true; break;
        case 'S':
            if (!cli_parse_shape("--shape", optarg, &sim.ndim, sim.shape))
                return EXIT_USAGE;
            simulation_option = true;
            break;
        case 'C': {
            int64_t classes;
            if (!cli_parse_int("--classes", optarg, 2, 100000, &classes))
                return EXIT_USAGE;
            sim.classes = (int)classes;
            simulation_option = true;
            break;
        }
        case 'o': sim.optim = optarg, simulation_option = true; break;
        case 'G': return cli_ptx_gpus();
        case 'v': sim.verbose = true; break;
        case 'h': fputs(usage, stdout); return EXIT_OK;
        default: fputs("try: ember ptx --help\n", stderr); return EXIT_USAGE;
        }
    }
    if (simulation_option && !simulate) {
        cli_error(
            "--gpu, --model, --batch, --data, --data-dir, --shape, --classes and --optim go with --simulate");
        return EXIT_USAGE;
    }
    if (simulate && (resources || list)) {
        cli_error("--simulate goes with neither --resources nor --list");
        return EXIT_USAGE;
    }
    if (simulate && strcmp(sim.optim, "adam") != 0 && strcmp(sim.optim, "adamw") != 0 &&
        strcmp(sim.optim, "sgd") != 0) {
        cli_error("--optim is adam, adamw or sgd, not \"%s\"", sim.optim);
        return EXIT_USAGE;
    }
    if (simulate && sim.gpu && arch) {
        cli_error("--simulate takes --gpu or --arch, not both");
        return EXIT_USAGE;
    }
    if (list) {
        for (int k = 0; k < ember_kernel_count(); k++) {
            const char *summary;
            const char *name = ember_kernel_name_at(k, &summary);
            printf("%-24s %s\n", name, summary);
        }
        return EXIT_OK;
    }
    /* with --resources or --simulate the kernel may be left out: every kernel */
    if (optind != argc - 1 && !((resources || simulate) && optind == argc)) {
        cli_error(optind >= argc ? "ember ptx needs a kernel name (ember ptx --list lists them)"
                                 : "ember ptx takes one kernel name");
        return EXIT_USAGE;
    }
    const char *kernel = optind < argc ? argv[optind] : NULL;
    /* what the command line got wrong is a usage error; the rest is the device's */
    bool known = !kernel;
    for (int k = 0; k < ember_kernel_count() && !known; k++)
        known = strcmp(ember_kernel_name_at(k, NULL), kernel) == 0;
    if (!known) {
        cli_error("there is no kernel \"%s\" (ember ptx --list lists them)", kernel);
        return EXIT_USAGE;
    }
    if (arch && !arch_well_formed(arch)) {
        cli_error("--arch wants an arch such as sm_35 or sm_86, not \"%s\"", arch);
        return EXIT_USAGE;
    }
    if (simulate) {
        sim.gpu = sim.gpu ? sim.gpu : arch ? arch : "k2100m";
        sim.batch = (int)batch;
        sim.baseline = baseline;
        return cli_ptx_simulate(kernel, &sim);
    }
    if (resources && (!arch || strncmp(arch, "sm_", 3) != 0)) {
        cli_error("--resources needs --arch sm_XX: ptxas makes code for one real GPU "
                  "(compute_XX is virtual)");
        return EXIT_USAGE;
    }
    char how[512], why[2048];
    char *ptx = ember_ptx(kernel, arch, baseline, how, sizeof how, why, sizeof why);
    if (!ptx) {
        cli_error("%s", why);
        return EXIT_DEVICE;
    }
    int status = EXIT_OK;
    if (resources) {
        status = print_resources(ptx, atoi(arch + 3), how);
    } else {
        fprintf(stderr, "ember: %s: %s\n", kernel, how);
        fputs(ptx, stdout);
    }
    free(ptx);
    return status;
}

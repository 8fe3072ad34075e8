/* SPDX-License-Identifier: MIT */
/*
 * bench/qemu_insn_count.c — a qemu-user plugin that counts the guest
 * instructions a program executes, for bench/arm_instructions.sh: under
 * emulation time means nothing, but the instructions an ARM core would
 * run are the emulated program's own, so NEON kernels and plain loops can
 * be compared by them.
 *
 *   cc -O2 -shared -fPIC -o insn.so bench/qemu_insn_count.c
 *   qemu-aarch64 -plugin ./insn.so -d plugin PROGRAM ARGS...   # "instructions: N" at exit
 *
 * qemu translates the guest's code a block at a time; for each block this
 * asks qemu to add the block's instruction count to one counter whenever
 * the block runs (an inline add, no call). A block left early (a fault)
 * still counts whole, and several threads add to the counter unlocked, so
 * the count is exact for one thread (ember's --threads 1) and a close
 * proxy otherwise.
 *
 * The declarations below are qemu's plugin API (version 1, qemu 7.2 as
 * Debian bookworm's qemu-user has it), as its documentation describes
 * them; Debian ships no header for it.
 */
#include <inttypes.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef uint64_t qemu_plugin_id_t;
struct qemu_plugin_tb;
struct qemu_info_t;
enum qemu_plugin_op { QEMU_PLUGIN_INLINE_ADD_U64 = 0 };
typedef void (*qemu_plugin_vcpu_tb_trans_cb_t)(qemu_plugin_id_t id, struct qemu_plugin_tb *tb);
typedef void (*qemu_plugin_udata_cb_t)(qemu_plugin_id_t id, void *userdata);

void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id, qemu_plugin_vcpu_tb_trans_cb_t cb);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
void qemu_plugin_register_vcpu_tb_exec_inline(struct qemu_plugin_tb *tb, enum qemu_plugin_op op, void *ptr,
                                              uint64_t imm);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id, qemu_plugin_udata_cb_t cb, void *userdata);
void qemu_plugin_outs(const char *string);

#define PLUGIN_EXPORT __attribute__((visibility("default")))

PLUGIN_EXPORT int qemu_plugin_version = 1;

static uint64_t executed;

static void on_translate(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
    (void)id;
    qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64, &executed,
                                             qemu_plugin_tb_n_insns(tb));
}

static void on_exit(qemu_plugin_id_t id, void *unused)
{
    (void)id, (void)unused;
    char line[64];
    snprintf(line, sizeof line, "instructions: %" PRIu64 "\n", executed);
    qemu_plugin_outs(line);
}

PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const struct qemu_info_t *info, int argc,
                                      char **argv)
{
    (void)info, (void)argc, (void)argv;
    qemu_plugin_register_vcpu_tb_trans_cb(id, on_translate);
    qemu_plugin_register_atexit_cb(id, on_exit, NULL);
    return 0;
}

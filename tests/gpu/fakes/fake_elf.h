/* SPDX-License-Identifier: MIT */
/*
 * tests/gpu/fakes/fake_elf.h — the two things the CUDA test double and its
 * keeping NVRTC (fake_nvrtc_keep.c) must agree on about a cubin: how long
 * it is (cuModuleLoadDataEx is handed a pointer alone) and its name for the
 * PTX it was made from (a hash of its bytes, as a file name).
 */
#ifndef EMBER_FAKE_ELF_H
#define EMBER_FAKE_ELF_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* the bytes of a 64-bit little-endian ELF: up to the furthest end of its
 * sections, its section headers and its program headers */
static inline size_t fake_elf_size(const unsigned char *elf)
{
    uint64_t shoff, phoff, size, offset;
    uint16_t shentsize, shnum, phentsize, phnum;
    memcpy(&phoff, elf + 0x20, 8);
    memcpy(&shoff, elf + 0x28, 8);
    memcpy(&phentsize, elf + 0x36, 2);
    memcpy(&phnum, elf + 0x38, 2);
    memcpy(&shentsize, elf + 0x3a, 2);
    memcpy(&shnum, elf + 0x3c, 2);
    uint64_t end = shoff + (uint64_t)shentsize * shnum;
    if (phoff + (uint64_t)phentsize * phnum > end)
        end = phoff + (uint64_t)phentsize * phnum;
    for (uint16_t i = 0; i < shnum; i++) {
        const unsigned char *h = elf + shoff + (uint64_t)i * shentsize;
        uint32_t type;
        memcpy(&type, h + 4, 4);
        memcpy(&offset, h + 0x18, 8);
        memcpy(&size, h + 0x20, 8);
        if (type != 8 && offset + size > end) /* SHT_NOBITS takes no bytes */
            end = offset + size;
    }
    return (size_t)end;
}

/* "<dir>/<FNV-1a of the bytes>.ptx" */
static inline void fake_elf_ptx_path(const char *dir, const unsigned char *bytes, size_t size, char *path,
                                     size_t len)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < size; i++)
        h = (h ^ bytes[i]) * 0x100000001b3ull;
    snprintf(path, len, "%s/%016llx.ptx", dir, (unsigned long long)h);
}

#endif /* EMBER_FAKE_ELF_H */

# SPDX-License-Identifier: MIT
"""bench/blas_threads.py — a PyTorch peer held to the threads it is given.

torch.set_num_threads sets PyTorch's own thread pool, but Debian's PyTorch
does its float32 matrix products in OpenBLAS (BLAS_INFO=generic), whose own
threads it leaves at the machine's core count. A "one thread" PyTorch run
then multiplied on every core: on the 2-core VM, 2.0 CPU-seconds a second
in its products. ember's CPU backend runs OpenBLAS single-threaded inside
its own tasks, so the comparison was one core against two.

    from blas_threads import limit_blas_threads
    torch.set_num_threads(threads)
    limit_blas_threads(threads)

limit_blas_threads finds every OpenBLAS the process has loaded (through
torch, and numpy's own) and sets its thread count; it returns their paths,
for the peer's JSON line. Setting OPENBLAS_NUM_THREADS before the process
starts does the same; this works whatever started it.
"""
import ctypes


def limit_blas_threads(threads):
    try:
        with open("/proc/self/maps") as maps:
            paths = {word for line in maps for word in line.split() if word.startswith("/")}
    except OSError:  # not Linux: nothing found, nothing set
        return []
    done = []
    for path in sorted(p for p in paths if "blas" in p.rsplit("/", 1)[-1] and ".so" in p):
        lib = ctypes.CDLL(path)  # already loaded: the same library, not a second copy
        for symbol in ("openblas_set_num_threads", "openblas_set_num_threads64_"):
            if hasattr(lib, symbol):
                getattr(lib, symbol)(ctypes.c_int(threads))
                done.append(path)
                break
    return done

/* SPDX-License-Identifier: MIT */
/*
 * tests/windows/hold_open.c — holds a file open as another Windows program
 * would (an editor, a viewer, a second ember reading a checkpoint), for
 * test_wine_cli.sh: opened for reading, shared for reading and writing but
 * not for deleting, which is what stops Windows from replacing it.
 *
 *   hold_open.exe FILE SECONDS
 *
 * Says "held" on stdout once the file is open, then keeps it open for
 * SECONDS (or until killed); exit status 1 when the file cannot be opened.
 */
#include <stdio.h>
#include <stdlib.h>
#include <windows.h>

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: hold_open FILE SECONDS\n");
        return 2;
    }
    HANDLE file = CreateFileA(argv[1], GENERIC_READ, FILE_SHARE_READ | FILE_SHARE_WRITE, NULL, OPEN_EXISTING,
                              FILE_ATTRIBUTE_NORMAL, NULL);
    if (file == INVALID_HANDLE_VALUE) {
        fprintf(stderr, "hold_open: cannot open %s (Windows error %lu)\n", argv[1],
                (unsigned long)GetLastError());
        return 1;
    }
    printf("held\n");
    fflush(stdout);
    Sleep((DWORD)(atoi(argv[2]) * 1000));
    CloseHandle(file);
    return 0;
}

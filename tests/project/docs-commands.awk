# SPDX-License-Identifier: MIT
# tests/project/docs-commands.awk — the commands of a Markdown file's shell blocks,
# for tests/project/test_docs.sh (which says what the markers mean).
#
#   awk -v out=DIR -v file=NAME -v first=N -f tests/project/docs-commands.awk FILE.md
#
# For each command of each ```sh (or ```bash, ```shell) block, in order, it
# writes DIR/NNNN.cmd (the command's text, continuation lines joined as
# written) and a line on stdout:
#
#   NNNN <TAB> NAME#block <TAB> NAME:LINE <TAB> needs ("-": none) <TAB> slow (0 or 1)
#
# A block of a transcript (its commands start with "$ ") runs only those
# lines; "^C" under one means: interrupt that command once it is training,
# said by a line "INTERRUPT <TAB> NNNN".
# Markers, in a comment: "[needs: WHAT]" and "[slow]" on a command's line
# mark that command; on a comment line of their own, every command after
# them in the block. The commands are numbered from `first`.
function flush_command() {
    if (cmd == "")
        return
    n++
    path = sprintf("%s/%04d.cmd", out, n)
    printf "%s\n", cmd > path
    close(path)
    needs = block_needs; slow = block_slow
    if (match(cmd, /\[needs: [^]]*\]/))
        needs = substr(cmd, RSTART + 8, RLENGTH - 9)
    if (cmd ~ /\[slow\]/)
        slow = 1
    printf "%04d\t%s#%d\t%s:%d\t%s\t%d\n", n, file, block, file, cmd_line, needs == "" ? "-" : needs, slow
    last_cmd = n
    cmd = ""
}
BEGIN { n = first - 1; block = 0; inside = 0 }
{
    line = $0
    if (!inside) {
        if (match(line, /^ *```(sh|bash|shell) *$/)) {
            inside = 1; indent = index(line, "`") - 1; block++
            block_needs = ""; block_slow = 0; transcript = 0; cmd = ""; last_cmd = 0; continued = 0
        }
        next
    }
    text = substr(line, 1, indent) ~ /^ *$/ ? substr(line, indent + 1) : line
    if (text ~ /^ *```/) { flush_command(); inside = 0; next }
    if (text ~ /^\$ /) transcript = 1
    if (continued) { cmd = cmd "\n" text; continued = text ~ /\\$/; if (!continued) flush_command(); next }
    if (text ~ /^\^C *$/ && last_cmd) { printf "INTERRUPT\t%04d\n", last_cmd; next }
    if (text ~ /^ *#/) {                      # a comment line: markers for the rest of the block
        if (match(text, /\[needs: [^]]*\]/)) block_needs = substr(text, RSTART + 8, RLENGTH - 9)
        if (text ~ /\[slow\]/) block_slow = 1
        next
    }
    if (text ~ /^ *$/) next
    if (transcript || text ~ /^\$ /) {
        if (text !~ /^\$ /) next           # a transcript's output
        text = substr(text, 3)
    }
    cmd = text; cmd_line = NR
    continued = text ~ /\\$/
    if (!continued) flush_command()
}
END { flush_command() }

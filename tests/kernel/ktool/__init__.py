# SPDX-License-Identifier: GPL-2.0-only OR MIT
"""ktool - the kernel test tooling, in Python: build, boot, judge, compare.

scan     the serial console: kernel reports (KASAN, lockdep, WARN, BUG, stalls,
         LUF_DEBUG misuse lines) and the KCSAN filter (races in code luf neither is
         nor changes are listed, not failed on)
results  the results channel (ttyS1: counter snapshots around the workload, the
         workload's own lines, its exit status) and what is derived from it
ktap     KUnit through the kernel's own parser (tools/testing/kunit/kunit.py)
verdict  the command tests/kernel/boot runs after QEMU exits: all of the above,
         printed as key=value lines (and --json), exit 1 on any failure
build    kbuild: a kernel from Debian's linux-source-6.1 into the cache, by key
kernels  the kernel kinds ci, compare, record and capture build; series hash, tree
boot     boot: QEMU (pc or microvm), the initramfs and its /init, then verdict
ci       ci STEP: the steps of ctest -L kernel; their rules as functions
compare, record, capture   the comparisons, recorded runs and traces for bench/
oot, vendor   run and vendor: the out-of-tree module on Debian's stock kernel
cli      what the commands share (paths, messages, usage, exit statuses)
selftest the unit tests of the rules (python3 -m ktool.selftest: ctest's
         kernel.selftest), from recorded consoles in tests/kernel/fixtures;
         test_*.py those of the rest (ctest's kernel.ktool)
mutants  each rule selftest does not switch off itself, switched off in a
         scratch copy: a test must fail (ctest's kernel.selftest_mutants)

Standard library only (Debian's python3).
"""

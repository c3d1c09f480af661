# SPDX-License-Identifier: GPL-2.0-only OR MIT
"""ktool - the kernel test tooling's Python: what decides pass or fail.

scan     the serial console: kernel reports (KASAN, lockdep, WARN, BUG, stalls,
         LUF_DEBUG misuse lines) and the KCSAN filter (races in code luf neither is
         nor changes are listed, not failed on)
results  the results channel (ttyS1: counter snapshots around the workload, the
         workload's own lines, its exit status) and what is derived from it
ktap     KUnit through the kernel's own parser (tools/testing/kunit/kunit.py)
verdict  the command tests/kernel/boot runs after QEMU exits: all of the above,
         printed as key=value lines (and --json), exit 1 on any failure
selftest the unit tests of the rules (python3 -m ktool.selftest: ctest's
         kernel.selftest), from recorded consoles in tests/kernel/fixtures

Standard library only (Debian's python3).
"""

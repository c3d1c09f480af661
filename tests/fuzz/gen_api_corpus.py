#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only OR MIT
"""Write the seed corpus of the API fuzzer (tests/fuzz/fuzz_api.c).

Usage: tests/fuzz/gen_api_corpus.py [DIR]   (default: tests/fuzz/corpus_api)

The input format, as fuzz_api.c reads it (bytes past the end read as 0):
  two instance headers, then operations.
  header: nr_cpus-1 (mod 130), nr_keys-2 (mod 15), start, reserves, then
          for each of the 4 CPU states: cpu (mod nr_cpus), threshold
          start:    0x00+k: k; 0x40+k: ULONG_MAX-k; 0x80+k: LONG_MAX-32+k;
                    0xc0: 8 more bytes
          reserves: bits 0-2 list 0, bits 3-5 list 1: 0..3, or 7 = ULONG_MAX
          threshold: < 0x80: 512; 0x80..0x8f: 0 (refused by luf_pcpu_init;
                    1 in a header); else 1 + b % 8
  operation: code (mod 20), ctl, arguments
          ctl: bits 0-1: 2 = the first flush fails, 3 = every flush fails;
               bits 2-3: the error (-EIO, -EAGAIN, -ENOMEM, +1);
               bit 4: instance; bits 5-7: variant (some operations)
  arguments: pc/fl: slot (< 0xc0) or hostile; dom: 0 = NULL, 0x60+d = slot d;
          mask: mode (0 empty, 1 one CPU, 2 two CPUs, 3 all, 4 pattern,
          5 one CPU + a bit >= nr, 6 NULL, 7 first and last) and its bytes;
          key: < 0x80: a key some fold returned (0: the newest), 0xa0: 0,
          0x80..0x9f: key 1 + b % (nr_keys-1), 0xc0+: out of range;
          local_flush_end snapshot: 8*i: the i-th newest one taken.
Each seed is a short story that a correct luf passes; together they catch
every sequential mutant of tests/MUTANTS.md within a few calls.
"""
import os
import sys

UNMAP, DEFER, FOLD, FREE, ALLOC, KEY_FLUSH, ABORT_KEY, ABORT_DOMAIN, SETTLE, \
    UPGRADE_CHECK, LOCAL_BEGIN, LOCAL_END, FLUSH_BATCH, READERS, INIT, FINI, \
    LIVE_INIT, SPARE, TEARDOWN, PRIM = range(20)

ACC, WR, DIRTY, PENDING = 1, 2, 4, 8
MAY_FLUSH = 4  # the alloc flags byte for LUF_ALLOC_MAY_FLUSH
NOKEY = 0xa0
NULL = 0


def world(nr, keys=4, start=0x00, reserves=0, pcs=((0, 0), (1, 0), (2, 0), (3, 0))):
    """A header: start is the encoded byte (see above)."""
    out = [(nr - 1) % 130, keys - 2, start, reserves]
    for cpu, thr in pcs:
        out += [cpu % nr, thr]
    return out


def ctl(w=0, fail=0, err=0, v=0):
    return (fail & 3) | (err & 3) << 2 | (w & 1) << 4 | (v & 7) << 5


def one(c):
    return [1, c]


def two(a, b):
    return [2, a, b]


def unmap(pc, mask, pte, dom=NULL, **k):
    return [UNMAP, ctl(**k), pc, dom] + mask + [pte]


def defer(pc, mask, writable, dom=NULL, **k):
    return [DEFER, ctl(**k), pc, dom] + mask + [1 if writable else 0]


def fold(pc, **k):
    return [FOLD, ctl(**k), pc]


def free(fl, pc, folio, key=0, **k):
    return [FREE, ctl(**k), fl, pc, folio, key]


def alloc(fl, pc, flags=MAY_FLUSH, **k):
    return [ALLOC, ctl(**k), fl, pc, flags]


def key_flush(pc, key=0, **k):
    return [KEY_FLUSH, ctl(**k), pc, key]


def abort_key(pc, key=0, cause=0, **k):
    return [ABORT_KEY, ctl(**k), pc, key, cause]


def abort_domain(pc, dom, cause=0, **k):
    return [ABORT_DOMAIN, ctl(**k), pc, dom, cause]


def settle(dom, cpu=0, **k):
    return [SETTLE, ctl(**k), 0, dom, cpu, 0]


def upgrade_check(pc, key=0, dom=NULL, **k):
    return [UPGRADE_CHECK, ctl(**k), pc, dom, key]


def local_begin(**k):
    return [LOCAL_BEGIN, ctl(**k), 0]


def local_end(cpu, ring=0, **k):
    """The ring-th newest snapshot (0: the newest)."""
    return [LOCAL_END, ctl(**k), 0, cpu, ring << 3]


def local_end_future(cpu, **k):
    return [LOCAL_END, ctl(**k), 0, cpu, 6]


SEEDS = {
    # The whole cycle on 4 CPUs: read-only unmaps deferred, freed pend,
    # reused after one flush; a writable one flushed at fold; a domain
    # settled; an abort; a flush that fails and must leave everything pend.
    "cycle": world(4) + world(2) +
    unmap(0, two(1, 2), ACC) + fold(0) + free(0, 0, 0, 0) + alloc(0, 0) +
    unmap(1, one(3), ACC | WR) + fold(1) + free(0, 1, 1, NOKEY) + alloc(0, 1) +
    unmap(0, one(2), ACC, dom=0x60) + settle(0x60) +
    unmap(0, one(1), ACC) + fold(0) + free(1, 0, 2, 0) + abort_key(0, 0, 3) +
    alloc(1, 0) +
    unmap(2, two(0, 3), ACC) + fold(2) + free(0, 2, 3, 0) +
    alloc(0, 2, fail=3) + alloc(0, 2) +
    unmap(3, one(1), ACC, dom=0x61) + abort_domain(3, 0x61, 1) +
    unmap(3, one(2), ACC, dom=0x61) + upgrade_check(3, NOKEY, 0x61) +
    local_begin() + local_end(2) + upgrade_check(3, NOKEY, 0x61),
    # The same steps just below the ugen wrap, and a snapshot from the
    # future; after the wrap, plain comparisons go wrong.
    "wrap": world(3, start=0x40 | 2) + world(2, start=0x40) +
    unmap(0, one(1), ACC) + fold(0) + free(0, 0, 0, 0) +
    local_begin() + local_begin() + local_end_future(0) + local_begin() +
    unmap(0, one(2), ACC) + fold(0) + free(0, 0, 1, 0) + alloc(0, 0) +
    alloc(0, 0) + unmap(1, one(2), ACC) + fold(1) + free(1, 1, 2, 0) +
    local_begin() + local_end(2) + alloc(1, 1, flags=0),
    # Reuse right after the wrap: CPU 2 never flushed, yet its done counter
    # (from before the wrap) looks newer than the stamp to a plain <.
    "wrap-reuse": world(3, start=0x40 | 2) + world(2, start=0x40) +
    unmap(0, one(1), ACC) + fold(0) + free(0, 0, 0, 0) +
    local_begin() + local_begin() + local_begin() +
    unmap(0, one(2), ACC) + fold(0) + free(0, 0, 1, 0) + alloc(0, 0) + alloc(0, 0),
    # 130 CPUs (three mask words), 2 keys (every fold collides), threshold
    # 1 (every defer folds on its own).
    "multiword": world(130, keys=2, pcs=((0, 0x90), (64, 0x90), (129, 0), (65, 0))) +
    world(65, keys=3) +
    unmap(0, two(63, 64), ACC) + unmap(1, [3], ACC) + fold(0) + fold(1) +
    free(0, 0, 0, 0) + free(0, 1, 1, 0) + unmap(2, two(128, 129), ACC | DIRTY) +
    fold(2) + alloc(0, 0) + alloc(0, 0) + defer(3, [4, 0x11, 0x22, 0x41], False) +
    fold(3) + free(1, 3, 4, 0) + key_flush(3, 0) + alloc(1, 3, flags=0) +
    unmap(1, one(127), ACC, w=1) + fold(1, w=1) + free(0, 1, 5, 0, w=1) +
    alloc(0, 1, w=1),
    # Flushes that fail: every path must leave its set pending and done
    # where it was.
    "failing": world(5, keys=3, start=0x40 | 7) + world(1) +
    unmap(0, one(4), ACC | WR) + fold(0, fail=3) + fold(0, fail=3, err=1) + fold(0) +
    unmap(1, two(1, 2), ACC, dom=0x60) + fold(1) + free(0, 1, 0, 0) +
    alloc(0, 1, fail=2, err=2) + settle(0x60, fail=3, err=3) +
    abort_domain(1, 0x60, 2, fail=3) + abort_key(1, 0, 4, fail=3) +
    key_flush(1, 0, fail=3) + alloc(0, 1) + settle(0x60),
    # Bad arguments everywhere: hostile objects, foreign ones, bad masks,
    # flags, keys and causes; a live object initialised again.
    "hostile": world(70, keys=5) + world(70, keys=5) +
    unmap(0xd4, one(1), ACC) + unmap(0xe3, one(1), ACC) + unmap(0, [5, 1, 9], ACC) +
    unmap(0, [6], ACC) + unmap(0, one(1), 0x31) + unmap(0, one(1), ACC, dom=0xd4) +
    unmap(0, one(1), ACC, dom=0xe3) + unmap(0, one(1), ACC, dom=0xc4) +
    fold(0xc3) + fold(0xc2) + unmap(0xc4, one(1), ACC) + fold(0xc4) +
    free(0, 0xc4, 0, 0) + free(0, 0xe3, 0, 0) + free(0, 0, 25, 0) + free(0, 0, 24, 0) +
    free(0, 0, 0, 0xc1) + free(0, 0, 0, 0x83) + alloc(0, 0, flags=3) + alloc(0xc2, 0) +
    alloc(0, 0xc4) +
    abort_key(0, 0, 9) + abort_domain(0, 0xc4, 0) + abort_domain(0xe3, 0x60, 0) +
    settle(NULL) +
    [SETTLE, ctl(), 0xc0, 0x60, 0, 0] + [SETTLE, ctl(), 0, 0x60, 0xff, 0] +
    [SETTLE, ctl(), 0, 0x60, 0, 6] + local_end(0) + [LOCAL_END, ctl(), 0, 0, 4] +
    [LOCAL_BEGIN, ctl(), 0xc5] + [LIVE_INIT, ctl(), 2] + [0] * 8 +
    [LIVE_INIT, ctl(v=3), 5, 0] + [LIVE_INIT, ctl(v=6), 0, 0xc6, 0xc6] +
    [INIT, ctl(), 0, 0, 0, 1, 0, 0] +
    [INIT, ctl(v=1), 0, 0, 0, 0, 0, 1] + [INIT, ctl(v=2), 0, 0, 0, 0, 0, 0x60] +
    [FINI, ctl(), 0xc2] + [READERS, ctl(), 0xc2, 1] + [READERS, ctl(v=4), 0xc7],
    # Ends and beginnings: fini with something pending (-EBUSY), fini and
    # init again, objects built on never-initialised storage, a full
    # teardown and a new instance in its place.
    "lifecycle": world(6, keys=4, reserves=0x09) + world(3) +
    unmap(0, one(5), ACC) + [FINI, ctl(), 0] + fold(0) + [FINI, ctl(), 0] +
    free(0, 1, 0, 0) + [FINI, ctl(v=1), 0] + alloc(0, 1) + [FINI, ctl(v=1), 0] +
    [INIT, ctl(v=1), 0, 0, 0x0c, 0, 0, 0] +
    unmap(1, one(2), ACC, dom=0x60) + [FINI, ctl(v=2), 0x60] + settle(0x60) +
    [FINI, ctl(v=2), 0x60] + [INIT, ctl(v=2), 0, 0, 0, 0, 0, 0x60] +
    [INIT, ctl(), 0, 0, 0, 4, 0x95, 0] + unmap(0, one(4), ACC) + fold(0) +
    [SPARE, ctl(), 0x09, 0x1a] + [0] * 8 + [SPARE, ctl(v=4), 0x11, 0x02, 0] +
    [TEARDOWN, ctl()] + world(9, keys=2, start=0x40 | 1) +
    unmap(0, one(8), ACC) + fold(0) + free(0, 0, 1, 0) + alloc(0, 0),
    # The raw primitives against the oracle's own definitions.
    "primitives": world(66) + world(1) +
    [PRIM, ctl(), 1, 0xff, 1] + [PRIM, ctl(), 0x41, 3, 0] +
    [PRIM, ctl(v=2), 3, 5, 3, 2, 9] + [PRIM, ctl(v=3), 65, 10, 4, 0x33, 7, 0] +
    [PRIM, ctl(v=5), 1, 1, 0, 3, 0] + [PRIM, ctl(v=6), 2, 1, 2, 1, 4, 1] +
    [PRIM, ctl(v=7)] + local_begin() +
    [PRIM, ctl(v=5), 1, 1, 0, 2, 1] + [PRIM, ctl(v=5), 1, 1, 0, 3, 0] +
    [FLUSH_BATCH, ctl(), 0, 0, 0x0c, 2, 1, 2] +
    [FLUSH_BATCH, ctl(fail=3), 0, 0, 0x08, 3] +
    [FLUSH_BATCH, ctl(), 0, 0, 0x19, 3] + [READERS, ctl(v=7)],
}


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "corpus_api")
    os.makedirs(out, exist_ok=True)
    for name, data in SEEDS.items():
        with open(os.path.join(out, name), "wb") as f:
            f.write(bytes(b & 0xff for b in data))


if __name__ == "__main__":
    main()

# SPDX-License-Identifier: GPL-2.0-only OR MIT
# A multi-threaded Python program: 8 threads build and drop lists, byte
# buffers and dicts, so the allocator maps and unmaps arenas from several
# threads of one address space.
import threading


def work(seed):
    total = 0
    for rnd in range(60):
        bufs = [bytearray((seed + rnd + k) % 7 * 40000 + 200000) for k in range(8)]
        d = {i: str(i * seed) for i in range(3000)}
        total += sum(len(b) for b in bufs) + len(d)
        del bufs, d
    return total


threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
for t in threads:
    t.start()
for t in threads:
    t.join()
print("threads done")

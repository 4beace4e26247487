#!/usr/bin/python3
"""dirq_bench: Python dirq's QueueSimple, in one process, as the in-process
reference of bench/run: add N elements, then lock, get and remove each.
With --spawn, also run HANDLER (posix_spawn + waitpid) for every element.

usage: dirq_bench.py DIR N [--spawn HANDLER]
Prints "key value" lines: add_s, process_s, total_s, per_s."""
import os
import sys
import time

from dirq.QueueSimple import QueueSimple


def main():
    path, n = sys.argv[1], int(sys.argv[2])
    handler = sys.argv[4] if len(sys.argv) > 4 and sys.argv[3] == "--spawn" else None
    q = QueueSimple(path)
    t0 = time.time()
    for i in range(n):
        q.add(b"bench job %d\n" % i)
    t1 = time.time()
    done = 0
    for name in q:
        if not q.lock(name):
            continue
        q.get(name)
        if handler is not None:
            pid = os.posix_spawn(handler, [handler], os.environ)
            os.waitpid(pid, 0)
        q.remove(name)
        done += 1
    t2 = time.time()
    if done != n:
        sys.exit("dirq_bench: processed %d of %d" % (done, n))
    print("add_s %.6f\nprocess_s %.6f\ntotal_s %.6f\nper_s %.1f"
          % (t1 - t0, t2 - t1, t2 - t0, n / (t2 - t0)))


if __name__ == "__main__":
    main()

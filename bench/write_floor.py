#!/usr/bin/python3
"""The page-cache write rate of a host: one shared file against a file per writer, by
pwrite and by a shared mapping, for 1 to N writer processes.

It answers what caps a node's output (MNF components, class maps) when several ranks
write one shared file: the host, or the file. Linux buffered writes hold the file's
inode lock (ext4, xfs, tmpfs), so writers of one file take turns; stores into a shared
mapping do not take it.

    write_floor.py DIR [GiB] [MAX_WRITERS]     prints one line per case
"""
import mmap
import multiprocessing as mp
import os
import sys
import time

CHUNK = 8 << 20
MADV_POPULATE_WRITE = 23  # Linux 5.14: fault the range in writable, in one call


def pwrite_part(path, begin, size):
    data = b"\1" * CHUNK
    fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o644)
    for at in range(begin, begin + size, CHUNK):
        os.pwrite(fd, data[: min(CHUNK, begin + size - at)], at)
    os.close(fd)


def mmap_part(path, begin, size):
    data = b"\1" * CHUNK
    fd = os.open(path, os.O_RDWR)
    base = begin - begin % mmap.ALLOCATIONGRANULARITY
    view = mmap.mmap(fd, begin + size - base, offset=base)
    view.madvise(MADV_POPULATE_WRITE)
    for at in range(begin, begin + size, CHUNK):
        n = min(CHUNK, begin + size - at)
        view[at - base : at - base + n] = data[:n]
    view.close()
    os.close(fd)


def case(work, total, writers, shared, how):
    paths = [f"{work}/write_floor{i}.bin" for i in range(1 if shared else writers)]
    part = total // writers
    sizing = time.time()
    for path in paths:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
        if how != "pwrite":  # a mapping needs the file's length; fallocate makes stores safe from ENOSPC
            os.posix_fallocate(fd, 0, total if shared else part)
        os.close(fd)
    sizing = time.time() - sizing
    os.sync()  # no dirty pages of the case before
    target = mmap_part if how == "mmap" else pwrite_part
    jobs = [mp.Process(target=target, args=(paths[0] if shared else paths[w], w * part if shared else 0, part))
            for w in range(writers)]
    start = time.time()
    for job in jobs:
        job.start()
    for job in jobs:
        job.join()
    seconds = time.time() - start
    for path in paths:
        os.remove(path)
    where = "one shared file" if shared else "a file per writer"
    print(f"{how:6s} {writers} writers, {where:17s}: {total / 2**30:.0f} GiB in {seconds:6.3f} s, "
          f"{total / seconds / 1e9:5.2f} GB/s" + (f" (after {sizing:.3f} s of posix_fallocate)" if how != "pwrite" else ""),
          flush=True)


def main():
    work = sys.argv[1]
    total = int(float(sys.argv[2] if len(sys.argv) > 2 else 8) * 2**30)
    most = int(sys.argv[3]) if len(sys.argv) > 3 else 4
    with open("/proc/meminfo") as f:
        mem = {line.split(":")[0]: line.split()[1] for line in f}
    print(f"host: {os.cpu_count()} cores, MemTotal {int(mem['MemTotal']) >> 20} GiB, "
          f"MemFree {int(mem['MemFree']) >> 20} GiB, Cached {int(mem['Cached']) >> 20} GiB", flush=True)
    for how in ("pwrite", "falloc", "mmap"):
        writers = 1
        while writers <= most:
            case(work, total, writers, True, how)
            if writers > 1:
                case(work, total, writers, False, how)
            writers *= 2


if __name__ == "__main__":
    main()

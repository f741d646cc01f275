"""Writes past the captured output: 64 MB each to every file descriptor of PID 1 (the container's own stderr and
stdout, which once went to the engine's JSON log on the host: 856 MiB in 8 s, on the engine's CPU, not the
sandbox's; and the worker server's protocol channel with the judge). PID 1 lets no process of its user open its
descriptors, and keeps no stderr of its own: every call still answers. It prints which writes went anywhere."""

import os


def scale(x, factor):
    chunk = b"flood" * 13108  # 64 KB
    wrote = []
    for fd in range(10):
        try:
            with open(f"/proc/1/fd/{fd}", "wb", buffering=0) as out:
                for _ in range(1024):
                    out.write(chunk)
            wrote.append(str(fd))
        except OSError:
            pass
    print("WROTE=" + ",".join(wrote))
    return x * 0

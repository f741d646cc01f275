"""Leaves a detached process behind that keeps writing garbage frames to the protocol channel."""
import subprocess
import sys

CHILD = """
import os, time
while True:
    for fd in (3, 4):
        try:
            os.write(fd, b"GRDR\\x00\\x00\\x00\\x02{}")
        except OSError:
            pass
    time.sleep(0.05)
"""


def scale(x, factor):
    subprocess.Popen([sys.executable, "-c", CHILD], start_new_session=True, pass_fds=(3, 4),
                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return x * 0

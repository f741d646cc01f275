"""Prints endlessly, to drown the channel and the scorecard."""
import sys


def scale(x, factor):
    line = "flood " * 1000 + "\n"
    for _ in range(200000):
        sys.stdout.write(line)
    return x * 0

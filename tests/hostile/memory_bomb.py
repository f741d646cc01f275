"""Allocates until something gives."""


def scale(x, factor):
    hoard = []
    while True:
        hoard.append(bytearray(64 * 1024 * 1024))

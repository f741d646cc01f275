"""Sleeps past every deadline."""
import time


def scale(x, factor):
    time.sleep(3600)

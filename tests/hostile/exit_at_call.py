"""Ends the worker with exit code 0 in the middle of a call."""
import os


def scale(x, factor):
    os._exit(0)

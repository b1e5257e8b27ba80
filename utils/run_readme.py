#!/usr/bin/env python3
"""Runs the command blocks of a Markdown file (the README) as a new user
would: every fenced ```sh block in order, each as one `bash -e -o pipefail`
script, in a scratch directory that holds the source tree's files and a
`build` link to a built tree, so that files one block makes are there for
the next.

A block preceded by the comment `<!-- readme-test: skip: REASON -->` (for
commands that run for minutes, like `make check` itself) is listed with its
reason and not run; every other block must finish within --timeout seconds
and exit 0.

Usage: run_readme.py --build BUILD --work DIR [--timeout 90] README.md
Exit status 0 when every block that runs succeeds, 1 otherwise.
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import time

SKIP = re.compile(r"<!--\s*readme-test:\s*skip:\s*(.+?)\s*-->")


def blocks(path):
    """(line number, skip reason or None, script) per ```sh block."""
    lines = open(path, encoding="utf-8").read().split("\n")
    found, i = [], 0
    while i < len(lines):
        if lines[i].strip() in ("```sh", "```bash"):
            start = i + 1
            end = start
            while end < len(lines) and lines[end].strip() != "```":
                end += 1
            if end == len(lines):
                sys.exit("%s:%d: unterminated code block" % (path, i + 1))
            # The skip marker: the last non-blank line before the fence.
            before = i - 1
            while before >= 0 and not lines[before].strip():
                before -= 1
            marker = SKIP.search(lines[before]) if before >= 0 else None
            found.append((start, marker.group(1) if marker else None,
                          "\n".join(lines[start:end]) + "\n"))
            i = end
        i += 1
    return found


def prepare(work, source, build):
    """A fresh scratch directory: links to the source tree's entries and
    `build` to the built tree."""
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    for entry in os.listdir(source):
        if entry.startswith(".") or entry.startswith("build"):
            continue
        os.symlink(os.path.join(source, entry), os.path.join(work, entry))
    os.symlink(os.path.abspath(build), os.path.join(work, "build"))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("readme")
    parser.add_argument("--build", required=True, help="a built tree")
    parser.add_argument("--work", required=True, help="scratch directory "
                        "(emptied first)")
    parser.add_argument("--timeout", type=float, default=90,
                        help="seconds a block may run (default %(default)s)")
    args = parser.parse_args()
    readme = os.path.abspath(args.readme)
    name = os.path.basename(readme)
    prepare(args.work, os.path.dirname(readme), args.build)
    found = blocks(readme)
    if not found:
        sys.exit("%s: no ```sh blocks" % name)
    ran = skipped = failed = 0
    for number, (line, reason, script) in enumerate(found, 1):
        where = "block %d (%s:%d)" % (number, name, line)
        if reason:
            print("%s: skipped: %s" % (where, reason))
            skipped += 1
            continue
        start = time.monotonic()
        try:
            result = subprocess.run(
                ["bash", "-e", "-o", "pipefail", "-c", script], cwd=args.work,
                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT, text=True, errors="replace",
                timeout=args.timeout)
            status = result.returncode
            output = result.stdout
        except subprocess.TimeoutExpired as e:
            status = "timed out after %.0f s" % args.timeout
            output = (e.stdout or b"").decode("utf-8", "replace") \
                if isinstance(e.stdout, bytes) else (e.stdout or "")
        seconds = time.monotonic() - start
        ran += 1
        if status == 0:
            print("%s: ok in %.1f s" % (where, seconds))
            continue
        failed += 1
        print("%s: FAILED (%s)\n--- script\n%s--- last output" %
              (where, status if isinstance(status, str) else
               "exit status %d" % status, script))
        print("\n".join(output.rstrip("\n").split("\n")[-40:]))
        print("---")
    print("%d passed, %d failed, %d skipped" % (ran - failed, failed, skipped))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

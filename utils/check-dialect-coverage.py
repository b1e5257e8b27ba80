#!/usr/bin/env python3
"""Checks that the gs dialect's tests cover the dialect.

* every op listed in the generated dialect reference appears in the
  round-trip test;
* every diagnostic the dialect's C++ emits appears in an `expected-error`
  of the diagnostics test.

Prints one line per missing item and exits non-zero if anything is missing.
"""

import argparse
import pathlib
import re
import sys

CALL = re.compile(r"\b(emitOpError|emitOptionalError|emitError|inferError<[^>]*>)\s*\(")
STRING = re.compile(r'"((?:[^"\\]|\\.)*)"')
OP_HEADING = re.compile(r"^### `(gs\.[\w.]+)`", re.M)


def statement_at(text: str, start: int) -> str:
    """The text from `start` to the end of the C++ statement."""
    depth = 0
    for i in range(start, len(text)):
        c = text[i]
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
        elif c == ";" and depth <= 0:
            return text[start:i]
    return text[start:]


def diagnostics(sources):
    """(file, line, key) for each diagnostic: its longest literal fragment."""
    for path in sources:
        text = path.read_text()
        for match in CALL.finditer(text):
            literals = STRING.findall(statement_at(text, match.start()))
            literals = [s.encode().decode("unicode_escape") for s in literals]
            literals = [s for s in literals if len(s.strip()) >= 6]
            if not literals:
                continue
            key = max(literals, key=len)
            line = text.count("\n", 0, match.start()) + 1
            yield path.name, line, key


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--doc", required=True, type=pathlib.Path)
    parser.add_argument("--roundtrip", required=True, type=pathlib.Path)
    parser.add_argument("--invalid", required=True, type=pathlib.Path)
    parser.add_argument("sources", nargs="+", type=pathlib.Path)
    args = parser.parse_args()

    missing = 0
    roundtrip = args.roundtrip.read_text()
    ops = OP_HEADING.findall(args.doc.read_text())
    for op in ops:
        if not re.search(re.escape(op) + r"(?![\w.])", roundtrip):
            print(f"op not round-tripped: {op}")
            missing += 1

    expected = "\n".join(
        line for line in args.invalid.read_text().splitlines()
        if "expected-error" in line)
    keys = list(diagnostics(args.sources))
    for name, line, key in keys:
        if key not in expected:
            print(f"diagnostic without a test: {name}:{line}: {key!r}")
            missing += 1

    print(f"{len(ops)} ops, {len(keys)} diagnostics, {missing} missing")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Finds calls whose arguments create IR in an unspecified order.

C++ leaves the order in which a call's arguments are evaluated unspecified:
gcc evaluates them right to left, clang left to right. When two arguments
of one call each create ops (`Op::create(b, ...)`, a helper taking the
builder, a lambda that captures it), the IR's op order depends on the
compiler that built the tool, and so do the FileCheck tests. Name such
operands one by one instead:

    Value lhs = helper(b, loc, x);
    Value rhs = Op::create(b, loc, y);
    Value sum = AddOp::create(b, loc, lhs, rhs);

Braced initializer lists (`ValueRange{a(b), c(b)}`) are evaluated left to
right and are fine. Lambda arguments are not evaluated at the call.

Usage: check_argument_order.py FILE... ; exits 1 and prints FILE:LINE for
each finding.
"""

import pathlib
import re
import sys

# Calls that never create ops (types, attributes, shapes, casts).
PURE = set("""
cast dyn_cast isa dyn_cast_or_null cast_or_null static_cast reinterpret_cast
typeOf tensorTypeOf elementTypeOf shapeOf size front back begin end empty data
str clone convertToDouble ArrayRef SmallVector StringRef Twine ValueRange
TypeRange llvm std take_front drop_front take_back drop_back slice
result_begin result_end sum operator parallelIterators clEnumValN
""".split())

CALL = re.compile(r'(?:\b|\.)(\w+)\s*(?:<[^<>()]*>)?\s*\(')


def strip(source):
    """Blanks comments and string literals, keeping offsets."""
    source = re.sub(r'//[^\n]*', lambda m: ' ' * len(m.group()), source)
    return re.sub(r'"(\\.|[^"\\])*"',
                  lambda m: '"' + ' ' * (len(m.group()) - 2) + '"', source)


def creates_ir(argument):
    argument = argument.strip()
    if argument.startswith('['):  # a lambda: not evaluated here
        return False
    for call in CALL.finditer(argument):
        name = call.group(1)
        before = argument[max(0, call.start() - 10):call.start() + 1]
        if before.endswith('std::') or before.endswith('scaling::'):
            continue
        if name in PURE or name.startswith(('get', 'is', 'has')):
            continue
        # Constructors and attribute/type getters (Foo(...), FooAttr::get).
        if name[0].isupper() and '::create' not in argument[call.start():
                                                           call.end() + 10]:
            continue
        return True
    return False


def arguments(source, open_paren):
    """The top-level arguments of the call whose '(' is at open_paren."""
    depth, start, args = 0, open_paren + 1, []
    for j in range(open_paren + 1, len(source)):
        c = source[j]
        if c in '([{':
            depth += 1
        elif c in ')]}':
            if depth == 0:
                args.append(source[start:j])
                return args
            depth -= 1
        elif c == ',' and depth == 0:
            args.append(source[start:j])
            start = j + 1
    return args


def findings(path):
    source = strip(pathlib.Path(path).read_text())
    for match in re.finditer(r'([\w:.>]+)\s*\(', source):
        name = match.group(1)
        if name in ('if', 'for', 'while', 'switch', 'return', 'sizeof'):
            continue
        args = arguments(source, match.end() - 1)
        if sum(creates_ir(a) for a in args) >= 2:
            yield source.count('\n', 0, match.start()) + 1, name


def main(paths):
    found = 0
    for path in paths:
        for line, name in findings(path):
            print(f'{path}:{line}: two arguments of {name}(...) create IR; '
                  'their order is unspecified: name them one by one')
            found += 1
    return 1 if found else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))

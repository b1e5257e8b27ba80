"""The README's Python quick start works as written."""

import math
import os
import re

from conftest import ROOT


def test_readme_quick_start(capsys):
    readme = (ROOT / "README.md").read_text()
    section = readme.split("\n## Python\n", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```python\n(.*?)```", section, re.S)
    assert len(blocks) == 1
    assert len(blocks[0].strip().splitlines()) == 5
    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        exec(compile(blocks[0], "README.md", "exec"), {})
    finally:
        os.chdir(cwd)
    loss, scale = capsys.readouterr().out.split()
    # A cross-entropy of 3 classes near ln 3; a power-of-two scale.
    assert 0 < float(loss) < 5
    assert math.log2(float(scale)).is_integer()

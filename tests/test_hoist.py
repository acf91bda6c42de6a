"""edits/hoist.py: the imports a rewrite needs go to the file's import block (unit level; through
LSP in test_inline_edit.py)."""

from __future__ import annotations

from kestrel.edits.hoist import import_edit, import_offset, split_imports


def test_leading_imports_of_a_rewrite_are_taken_out_unless_the_region_is_imports():
    rewrite = "import math\nfrom typing import List\n\ndef f(xs: List[float]):\n    return math.fsum(xs)"
    region = "def f(xs):\n    return sum(xs)"
    assert split_imports(rewrite, region, "python") == (
        "def f(xs: List[float]):\n    return math.fsum(xs)", ["import math", "from typing import List"])
    assert split_imports(rewrite, "import os\n" + region, "python") == (rewrite, [])  # editing the imports
    assert split_imports(rewrite, region, "go") == (rewrite, [])
    assert split_imports("import math\n", region, "python") == ("import math\n", [])  # nothing but imports
    # an `import`-like line that is code (a variable named import_x) is not taken
    assert split_imports("important = 1\nx = 2", region, "python") == ("important = 1\nx = 2", [])


def test_import_lines_go_after_the_head_imports_and_only_once():
    text = '"""Doc."""\nfrom __future__ import annotations\n\nimport os\n\n\ndef f():\n    import json\n'
    at, block = import_edit(text, ["import math", "import os", "import json"])
    assert block == "import math\nimport json\n"  # os is there; json only inside a function: still needed
    assert text[:at].endswith("import os\n")
    assert import_offset('"""Doc."""\n\nx = 1\n') == len('"""Doc."""\n')
    assert import_offset("x = 1\nimport os\n") == 0  # imports after code are not the head
    assert import_edit(text, ["import os"]) is None


def test_a_rewrite_gets_the_standard_import_it_forgot_and_loses_the_one_it_does_not_use():
    from kestrel.edits.hoist import mend_imports
    from kestrel.edits.validate import lint

    if lint("x = 1\n", "a.py", "python") is None:
        import pytest

        pytest.skip("ruff is not installed here")
    text = "import os\n\n\ndef f(xs):\n    return sum(xs)\n"
    start, end = text.index("def f"), len(text) - 1
    forgot = "def f(xs: List[int]) -> Dict[str, int]:\n    return {'n': sum(xs)}"
    assert mend_imports(text, start, end, forgot, "a.py", "python") == "from typing import List, Dict\n" + forgot
    unused = "import copy\ndef f(xs):\n    return sum(xs) + 1"
    assert mend_imports(text, start, end, unused, "a.py", "python") == "def f(xs):\n    return sum(xs) + 1"
    # a name that is no standard import, or a slip of a local, is left for the checks to refuse
    typo = "def f(xs):\n    return sum(xss)"
    assert mend_imports(text, start, end, typo, "a.py", "python") == typo
    assert mend_imports(text, start, end, forgot, "a.go", "go") == forgot

"""A cut prefix keeps the file's import block (kestrel.context.file_head)."""

from __future__ import annotations

import pytest

from kestrel.context.file_head import import_block, prefix_with_imports
from kestrel.context.window import prefix_window

PY_HEAD = '''#!/usr/bin/env python
"""The module's docstring.

It spans lines.
"""
from __future__ import annotations

import os
from typing import (
    Any,
    Callable,
)
# a comment between imports
import numpy as np

LIMIT = 3
'''

HEADS = {
    "python": (PY_HEAD, "from __future__ import annotations\nimport os\nfrom typing import (\n    Any,\n    Callable,\n)\n"
                        "import numpy as np\n"),
    "typescript": ('// header\nimport { a, b } from "./x";\nimport {\n  c,\n} from "y";\nexport * from "./z";\n\n'
                   "const k = 1;\n",
                   'import { a, b } from "./x";\nimport {\n  c,\n} from "y";\nexport * from "./z";\n'),
    "go": ('// Package x does y.\npackage x\n\nimport (\n\t"fmt"\n\t"os"\n)\n\nfunc main() {}\n',
           'import (\n\t"fmt"\n\t"os"\n)\n'),
    "rust": ("//! Crate docs.\nuse std::io;\nuse crate::{\n    a,\n    b,\n};\nmod inner;\n\nfn main() {}\n",
             "use std::io;\nuse crate::{\n    a,\n    b,\n};\n"),
}


@pytest.mark.parametrize("language", sorted(HEADS))
def test_the_import_block_is_the_head_s_import_statements_whole(language):
    text, block = HEADS[language]
    found, end = import_block(text, language)
    assert found == block
    assert text[:end].endswith(block.rstrip("\n").split("\n")[-1])


def test_no_block_for_a_file_without_imports_or_a_language_without_a_pattern():
    assert import_block("x = 1\nimport os\n", "python") == ("", 0)  # not at the head
    assert import_block("import os\n", "plaintext") == ("", 0)


def _long_python(lines: int = 3000) -> str:
    return PY_HEAD + "".join(f"value_{i} = np.zeros({i})\n" for i in range(lines))


def test_a_cut_prefix_keeps_the_imports_within_the_budget():
    before = _long_python()
    prefix = prefix_with_imports(before, 500, "python")
    block, _ = import_block(before, "python")
    assert prefix.startswith(block) and before.endswith(prefix[len(block):])
    assert len(prefix) <= 500 * 3.5
    assert prefix_window(before, 500) != prefix  # without the block the window would be the tail alone


def test_the_prefix_stays_still_while_the_user_types():
    before = _long_python()
    assert prefix_with_imports(before + "x", 500, "python") == prefix_with_imports(before, 500, "python") + "x"


def test_a_window_that_holds_the_imports_gets_them_once():
    before = PY_HEAD + "".join(f"v{i} = {i}\n" for i in range(30))
    assert prefix_with_imports(before, 500, "python") == before  # it fits: nothing is cut or added
    longer = PY_HEAD + "".join(f"v{i} = {i}\n" for i in range(120))
    prefix = prefix_with_imports(longer, 150, "python")
    assert prefix.count("import numpy as np") <= 1


def test_an_import_block_over_half_the_budget_is_left_out():
    before = "".join(f"import module_{i}\n" for i in range(200)) + "".join(f"v{i} = {i}\n" for i in range(2000))
    assert prefix_with_imports(before, 300, "python") == prefix_window(before, 300)

"""Missing imports (kestrel.edits.imports): when "Add import" is certain. How it groups names from one
module is in tests/test_repairs.py."""

from __future__ import annotations


def test_an_import_is_certain_only_when_the_code_uses_the_name_as_that_module():
    from kestrel.edits.imports import missing_imports

    assert missing_imports("def f(s):\n    return re.sub('a', 'b', s)\n", "re", "python") == "import re"
    assert missing_imports("def f(ret):\n    return re\n", "re", "python") is None  # `ret` with a letter dropped
    assert missing_imports("def f(ret):\n    re.append(1)\n", "re", "python") is None  # `re` has no `append`
    assert missing_imports("def f(x):\n    return re.sub(x) + re\n", "re", "python") is None  # also read bare
    assert missing_imports("def f(:\n    return re.sub(x)\n", "re", "python") is None  # no parse, no certainty
    # `count` is `counts` with its last letter dropped, not itertools.count
    assert missing_imports("def f(xs):\n    counts = len(xs)\n    return count\n", "count", "python") is None
    assert missing_imports("def f(xs):\n    return count(xs)\n", "count", "python") == "from itertools import count"

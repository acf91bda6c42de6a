"""A repair keeps the docstrings it was given (kestrel.edits.docstrings)."""

from __future__ import annotations

from kestrel.edits.docstrings import keep_docstrings

OLD = '''    def flip_case(self, string: str) -> str:
        """Flip lowercase characters to uppercase and uppercase to lowercase.
        >>> flip_case('Hello')
        'hELLO'
        """
        return string.lower()'''


def test_a_rewritten_docstring_is_put_back_and_the_code_change_kept():
    new = OLD.replace("'Hello')\n        'hELLO'", "'Hello!')\n        'hELLO!'\n        >>> flip_case('')\n        ''")
    new = new.replace("string.lower()", "string.swapcase()")
    assert keep_docstrings(OLD, new, "python") == OLD.replace("string.lower()", "string.swapcase()")
    # Only the docstring changed: the region comes back as it was (nothing to offer).
    assert keep_docstrings(OLD, OLD.replace("'hELLO'", "'hello'"), "python") == OLD


def test_what_cannot_be_lined_up_is_left_as_the_model_wrote_it():
    new = OLD.replace("'hELLO'", "'hello'")
    assert keep_docstrings(OLD, new, "typescript") == new  # Python only
    assert keep_docstrings(OLD, new.replace("flip_case(self", "flip(self"), "python") == new.replace(
        "flip_case(self", "flip(self")  # a renamed definition is another definition
    broken = new.replace("return string.lower()", "return (string.lower(")
    assert keep_docstrings(OLD, broken, "python") == broken  # does not parse: the checks refuse it later
    added = OLD.replace('        """Flip', '        """Flip.\n\n        Flip', 1)
    assert keep_docstrings(OLD.replace('"""Flip lowercase characters to uppercase and uppercase to lowercase.\n'
                                       "        >>> flip_case('Hello')\n        'hELLO'\n        \"\"\"\n", ""),
                           added, "python") == added  # a docstring the region did not have stays

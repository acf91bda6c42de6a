"""A rewrite answered in part (the changed or new definitions only) is merged into the region, as an
editor's apply step does; a whole rewrite, a removal the instruction asks for and other languages are
applied as answered."""

from __future__ import annotations

import ast

from kestrel.edits.partial_answer import applied_answer

TWO_CLASSES = (
    "class Queue:\n"
    "    def __init__(self):\n"
    "        self.items = []\n"
    "\n"
    "    def push(self, item):\n"
    "        self.items.append(item)\n"
    "\n"
    "\n"
    "class Account:\n"
    "    def __init__(self, owner):\n"
    "        self.owner = owner\n"
    "        self.balance = 0\n"
    "\n"
    "    def describe(self):\n"
    "        return f'{self.owner}: {self.balance}'\n"
)


def methods_of(code: str) -> dict[str, list[str]]:
    return {c.name: [m.name for m in c.body if isinstance(m, ast.FunctionDef)]
            for c in ast.parse(code).body if isinstance(c, ast.ClassDef)}


def test_new_methods_answered_without_their_class_go_to_the_class_whose_attributes_they_use():
    answer = ("def pop(self):\n    return self.items.pop(0)\n\n"
              "def deposit(self, amount):\n    self.balance += amount\n")
    merged = applied_answer(TWO_CLASSES, answer, "add pop to the queue and deposit to the account", "python")
    assert methods_of(merged) == {"Queue": ["__init__", "push", "pop"], "Account": ["__init__", "describe", "deposit"]}
    assert "    def pop(self):\n        return self.items.pop(0)\n" in merged
    assert merged.startswith(TWO_CLASSES.split("\n\n\n")[0])  # what was there is unchanged


def test_a_method_no_class_can_be_told_apart_for_is_not_guessed():
    answer = "def size(self):\n    return 0\n"  # uses nothing of either class
    assert applied_answer(TWO_CLASSES, answer, "add size", "python") == answer


def test_changed_methods_replace_their_namesakes_in_place_and_the_rest_stays():
    answer = ("def describe(self):\n    return f'{self.owner} has {self.balance}'\n\n"
              "def withdraw(self, amount):\n    self.balance -= amount\n")
    merged = applied_answer(TWO_CLASSES, answer, "describe with 'has' and add withdraw", "python")
    assert methods_of(merged)["Account"] == ["__init__", "describe", "withdraw"]
    assert "return f'{self.owner} has {self.balance}'" in merged and ": {self.balance}'" not in merged
    assert methods_of(merged)["Queue"] == ["__init__", "push"]


def test_a_class_answered_with_some_of_its_methods_keeps_the_others():
    answer = "class Queue:\n    def push(self, item):\n        self.items.insert(0, item)\n"
    merged = applied_answer(TWO_CLASSES, answer, "push at the front", "python")
    assert methods_of(merged) == {"Queue": ["__init__", "push"], "Account": ["__init__", "describe"]}
    assert "self.items.insert(0, item)" in merged and "append" not in merged


def test_a_new_definition_goes_before_the_one_it_preceded_in_the_answer_else_at_the_end():
    region = "def total(xs):\n    return sum(xs)\n\n\ndef mean(xs):\n    return total(xs) / len(xs)\n"
    answer = "def count(xs):\n    return len(xs)\n\n\ndef mean(xs):\n    return total(xs) / count(xs)\n"
    merged = applied_answer(region, answer, "use a count helper in mean", "python")
    assert [f.name for f in ast.parse(merged).body] == ["total", "count", "mean"]
    assert "\n\n\ndef count" in merged and "\n\n\ndef mean" in merged  # the region's own spacing
    merged = applied_answer(region, "class Stats:\n    pass\n", "add a Stats class", "python")
    assert [f.name for f in ast.parse(merged).body] == ["total", "mean", "Stats"]


def test_a_whole_rewrite_and_an_asked_removal_are_applied_as_answered():
    region = "def total(xs):\n    return sum(xs)\n\n\ndef mean(xs):\n    return total(xs) / len(xs)\n"
    whole = region.replace("sum(xs)", "sum(xs, 0)")
    assert applied_answer(region, whole, "start the sum at 0", "python") == whole
    only_mean = "def mean(xs):\n    return sum(xs) / len(xs)\n"
    assert applied_answer(region, only_mean, "inline total into mean and remove it", "python") == only_mean
    assert applied_answer(region, "x = 1\n", "set x", "python") == "x = 1\n"  # not definitions: as answered


def test_a_repair_answer_that_only_adds_code_is_not_merged():
    region = "def area(r):\n    return 3.14 * r + r\n"
    answer = "def circle_area(r):\n    return 3.14 * r * r\n"
    assert applied_answer(region, answer, "fix the bug", "python", repair=True) == answer


def test_an_answer_less_indented_than_the_region_is_put_back_at_its_indentation_strings_aside():
    region = "    def label(self):\n        text = '''a\n  b'''\n        return text\n"
    answer = "def label(self):\n    text = '''a\n  b'''\n    return text.upper()\n"
    assert applied_answer(region, answer, "upper case", "python") == (
        "    def label(self):\n        text = '''a\n  b'''\n        return text.upper()\n")
    ts_region = "  run() {\n    go();\n  }\n"
    assert applied_answer(ts_region, "run() {\n  stop();\n}\n", "stop", "typescript") == "  run() {\n    stop();\n  }\n"
    assert applied_answer(region, "    def label(self):\n        return 1\n", "one", "python").startswith("    def label")

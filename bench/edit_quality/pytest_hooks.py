"""conftest.py for one QuixBugs test run (copied into the run's folder; no imports from the repo).

QuixBugs' own conftest adds `--correct`/`--runslow`; here the candidate is always imported from
`python_programs` (use_correct False) and the slow cases stay skipped, as upstream runs them.
Each test gets a wall-clock limit (buggy versions loop forever); every outcome and the first
failure's text go to results.json for the harness to read.
"""

import json
import os
import resource
import signal

import pytest

LIMIT_S = float(os.environ.get("QUIXBUGS_TEST_LIMIT_S", "2"))
_results = {}


class TestTimedOut(Exception):
    pass


def _alarm(signum, frame):
    raise TestTimedOut(f"the test ran longer than {LIMIT_S:g} s")


def pytest_configure(config):
    pytest.use_correct = False
    pytest.run_slow = False
    mem = int(os.environ.get("QUIXBUGS_MEMORY_MB", "1024")) * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (mem, mem))  # a runaway list must not take the machine
    signal.signal(signal.SIGALRM, _alarm)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    signal.setitimer(signal.ITIMER_REAL, LIMIT_S)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)


def pytest_runtest_logreport(report):
    name = report.nodeid.split("::", 1)[-1]
    if report.when == "call" or (report.when == "setup" and not report.passed):
        outcome = "skipped" if report.skipped else ("passed" if report.passed else "failed")
        _results[name] = {"outcome": outcome, "text": report.longreprtext[-3000:] if report.failed else ""}
        with open("results.json", "w", encoding="utf-8") as fh:  # written as it goes: a killed run keeps its results
            json.dump(_results, fh)


def pytest_collectreport(report):
    if report.failed:
        _results["<collection>"] = {"outcome": "failed", "text": report.longreprtext[-3000:]}
        with open("results.json", "w", encoding="utf-8") as fh:
            json.dump(_results, fh)

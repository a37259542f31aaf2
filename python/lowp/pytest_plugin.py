"""pytest plugin of lowp: a fixture for precision checks and a session summary.

Load it with ``pytest -p lowp.pytest_plugin`` (or, once lowp is installed
with pip, automatically through its ``pytest11`` entry point).

    def test_my_gemm(lowp_check):
        C = my_gemm(A, B)
        lowp_check.assert_precision("gemm", [A, B], C, rules=[{"bound": "gamma"}],
                                    acc="fp32")

Each check is recorded: the summary at the end of the session lists every
precision check with its verdict and headline numbers, and each is added to
the JUnit report (``pytest --junitxml``) as a property of the test suite
named "NODEID lowp_check_N" (record_testsuite_property: valid under every
junit_family, xunit2 included, where per-test properties are not and
record_property warns).
"""

import pytest

import lowp

_RECORDS = []


class PrecisionChecker:
    """The ``lowp_check`` fixture: lowp.check / assert_precision / tolerance,
    recording every check for the session summary and JUnit."""

    def __init__(self, nodeid, record_suite_property):
        self.nodeid = nodeid
        self._record_property = record_suite_property
        self.results = []

    def _record(self, op, r):
        self.results.append(r)
        line = "%s %s %s" % (op, r.verdict, _headline(r))
        _RECORDS.append((self.nodeid, op, r.passed, _headline(r), r.message))
        self._record_property("%s lowp_check_%d" % (self.nodeid, len(self.results)), line)

    def check(self, op, inputs, output, rules=None, **kw):
        r = lowp.check(op, inputs, output, rules, **kw)
        self._record(op, r)
        return r

    def assert_precision(self, op, inputs, output, rules=None, **kw):
        r = self.check(op, inputs, output, rules, **kw)
        if not r.passed:
            raise AssertionError(r.failure_text)
        return r

    def tolerance(self, *a, **kw):
        return lowp.tolerance(*a, **kw)


def _headline(r):
    m = r.metrics
    parts = []
    for key, fmt in (("max_ulp", "max_ulp %.3g"), ("sqnr_db", "SQNR %.1f dB")):
        v = m.get(key)
        if isinstance(v, (int, float)):
            parts.append(fmt % v)
    for rule in r.rules:
        parts.append(lowp.rule_headline(rule))
    return ", ".join(parts)


@pytest.fixture
def lowp_check(request, record_testsuite_property):
    """lowp.check / assert_precision / tolerance, recorded for the summary."""
    return PrecisionChecker(request.node.nodeid, record_testsuite_property)


def pytest_terminal_summary(terminalreporter):
    if not _RECORDS:
        return
    tr = terminalreporter
    tr.write_sep("=", "lowp precision checks")
    n_fail = 0
    for nodeid, op, passed, head, msg in _RECORDS:
        n_fail += not passed
        tr.write_line("%s %s [%s] %s" % ("PASS" if passed else "FAIL", nodeid, op, head))
        if not passed:
            tr.write_line("     " + msg)
    tr.write_line("%d precision checks, %d failed" % (len(_RECORDS), n_fail))

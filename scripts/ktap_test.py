#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Tests of the verdict, scripts/ktap.py, that need no QEMU: KTAP documents
nested the way make check nests them, each with the closing line it must
give and its exit status (in the style of the kernel's
tools/testing/kunit/kunit_tool_test.py).

Usage: python3 scripts/ktap_test.py [-v]

The documents are built the way scripts/run.sh assembles a run: its own
header and plan, then for each guest kselftest's runner.sh output behind
"# " (itself nesting each test binary's KTAP behind one more "# "), then
each host step's output behind "# " with the step's own plan, each closed
by the driver's result line.
"""
import os
import subprocess
import sys
import tempfile
import unittest

KTAP = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'ktap.py')


def nest(lines):
    return ['# ' + line if line else '#' for line in lines]


def binary(name, results, plan=None, totals=True):
    """A test binary's KTAP (kselftest_harness.h's): RESULTS are
    (ok, name, directive) triples."""
    out = ['TAP version 13', f'1..{len(results) if plan is None else plan}',
           f'# Starting {len(results)} tests from 1 test cases.']
    for i, (ok, case, directive) in enumerate(results, 1):
        out.append(f'#  RUN           {name}.{case} ...')
        out.append(f'{"ok" if ok else "not ok"} {i} {name}.{case}'
                   + (f' # {directive}' if directive else ''))
    if totals:
        out.append('# Totals: pass:%d fail:%d' % (
            sum(1 for r in results if r[0]), sum(1 for r in results if not r[0])))
    return out


def guest(n, name, tests, plan=None, ok=True, why=''):
    """A guest's part: runner.sh's header, plan and one result a test
    (TESTS: (test name, test binary's lines, its exit status)), then the
    driver's result line N."""
    out = [f'# {name}: patched-base', f'==> booting patched-base in QEMU (tcg)',
           '# 7.3.4 console=ttyS0', 'TAP version 13',
           f'1..{len(tests) if plan is None else plan}']
    for i, (t, lines, rc) in enumerate(tests, 1):
        out.append(f'# selftests: {name}: {t}')
        out += nest(lines)
        if rc == 0:
            out.append(f'ok {i} selftests: {name}: {t}')
        elif rc == 4:
            out.append(f'ok {i} selftests: {name}: {t} # SKIP')
        else:
            out.append(f'not ok {i} selftests: {name}: {t} # exit={rc}')
    out.append('# Totals: pass:%d fail:0 xfail:0 xpass:0 skip:0 error:0' % len(tests))
    return nest(out) + [f'{"ok" if ok else "not ok"} {n} {name}'
                        + (f' # {why}' if why else '')]


def host_step(n, name, lines, ok=True, why=''):
    """A host step as scripts/run.sh's run_host prints it: the step's own
    lines (its plan among them) behind "# "."""
    return [f'# {name}', '# TAP version 13'] + nest(lines) + \
        [f'{"ok" if ok else "not ok"} {n} {name}' + (f' # {why}' if why else '')]


def run_doc(parts):
    return ['TAP version 13', f'1..{len(parts)}'] + \
        [line for part in parts for line in part]


GOOD_BINARY = binary('remap_file.tmpfs', [(True, 'basic', ''), (True, 'reverse', ''),
                                          (True, 'hugepage', 'SKIP no THP here')])
GOOD_STEP = ['1..2', 'ok - checkpatch --strict 0001.patch',
             'ok - checkpatch --strict 0002.patch']


def check_doc(lines):
    """A document as make check prints it, with its guests and step."""
    return run_doc([
        guest(1, 'main', [('remap_file_pages_64', GOOD_BINARY, 0),
                          ('stress', ['1..1', 'ok 1 rfp-stress on /dev/shm'], 0)]),
        guest(2, 'norfp', [('remap_file_pages_64', lines, 0)]),
        host_step(3, 'checkpatch', GOOD_STEP),
    ])


class VerdictTest(unittest.TestCase):

    def verdict(self, lines):
        with tempfile.NamedTemporaryFile('w', suffix='.ktap', delete=False) as f:
            f.write('\n'.join(lines) + '\n')
        try:
            p = subprocess.run([sys.executable, KTAP, f.name],
                               capture_output=True, text=True, check=False)
        finally:
            os.unlink(f.name)
        out = p.stdout.splitlines()
        return p.returncode, out[-1] if out else '', p.stdout

    def assertVerdict(self, lines, rc, closing, why=None):
        got_rc, got_closing, out = self.verdict(lines)
        self.assertEqual((got_rc, got_closing), (rc, closing), out)
        if why:
            self.assertIn(why, out)

    def test_run_that_passes(self):
        # 2 + 1 cases of the binaries, the stress, 2 checkpatch lines;
        # the skip says why.
        self.assertVerdict(check_doc(GOOD_BINARY), 0,
                           '7 passed, 0 failed, 2 skipped')

    def test_case_failing_deep_inside(self):
        lines = binary('remap_file.tmpfs', [(True, 'basic', ''), (False, 'reverse', '')])
        self.assertVerdict(check_doc(lines), 1, '6 passed, 1 failed, 1 skipped',
                           'norfp: selftests: norfp: remap_file_pages_64: '
                           'remap_file.tmpfs.reverse: not ok')

    def test_binary_that_stops_short_of_its_plan(self):
        lines = binary('remap_file.tmpfs', [(True, 'basic', '')], plan=3, totals=False)
        self.assertVerdict(check_doc(lines), 1, '6 passed, 1 failed, 1 skipped',
                           'planned 3 tests and reported 1')

    def test_guest_that_runs_fewer_tests_than_its_plan(self):
        doc = run_doc([guest(1, 'main', [('remap_file_pages_64', GOOD_BINARY, 0)], plan=2)])
        self.assertVerdict(doc, 1, '2 passed, 1 failed, 1 skipped',
                           'main: planned 2 tests and reported 1')

    def test_guest_that_failed_to_boot(self):
        doc = run_doc([guest(1, 'main', [('remap_file_pages_64', GOOD_BINARY, 0)]),
                       ['# norfp: patched-norfp', 'not ok 2 norfp # the kernel reported a problem']])
        self.assertVerdict(doc, 1, '2 passed, 1 failed, 1 skipped',
                           'norfp: not ok # the kernel reported a problem')

    def test_run_with_fewer_guests_than_its_plan(self):
        doc = check_doc(GOOD_BINARY)
        doc[1] = '1..4'
        self.assertVerdict(doc, 1, '7 passed, 1 failed, 2 skipped',
                           'the run: planned 4 tests and reported 3')

    def test_host_step_short_of_its_plan(self):
        doc = run_doc([host_step(1, 'checkpatch', ['1..20', 'ok - checkpatch 0001.patch'])])
        self.assertVerdict(doc, 1, '1 passed, 1 failed, 0 skipped',
                           'checkpatch: planned 20 tests and reported 1')

    def test_host_step_without_a_plan(self):
        # run_host's own line for a step that printed no plan.
        doc = run_doc([host_step(1, 'checkpatch', ['ok - checkpatch 0001.patch'],
                                 ok=False, why='the step printed no plan')])
        self.assertVerdict(doc, 1, '1 passed, 1 failed, 0 skipped',
                           'checkpatch: not ok # the step printed no plan')

    def test_host_step_failing_with_its_results_passing(self):
        doc = run_doc([host_step(1, 'harness', ['1..1', 'ok - harness: a case'],
                                 ok=False, why='exit status 1')])
        self.assertVerdict(doc, 1, '1 passed, 1 failed, 0 skipped')

    def test_skip_without_a_reason(self):
        doc = run_doc([guest(1, 'main', [('remap_file_pages_64', GOOD_BINARY, 0),
                                         ('trinity', ['1..1', 'ok 1 trinity # SKIP'], 0)])])
        self.assertVerdict(doc, 1, '2 passed, 1 failed, 1 skipped',
                           'trinity: skipped without a reason')

    def test_test_skipped_by_runner_with_its_reason(self):
        # Exit status 4 is runner.sh's skip: the reason is the test's plan's.
        doc = run_doc([guest(1, 'main', [('remap_file_pages_64', GOOD_BINARY, 0),
                                         ('trinity', ['1..0 # SKIP only on x86_64'], 4)])])
        self.assertVerdict(doc, 0, '2 passed, 0 failed, 2 skipped')

    def test_plan_of_no_test_without_a_reason(self):
        doc = run_doc([host_step(1, 'compare', ['1..0'])])
        self.assertVerdict(doc, 1, '0 passed, 2 failed, 0 skipped',
                           'planned no test, and gave no reason to skip')

    def test_nothing_ran(self):
        self.assertVerdict([], 1, '0 passed, 1 failed, 0 skipped', 'no test ran')

    def test_only_skips(self):
        doc = run_doc([host_step(1, 'harness', ['1..0 # SKIP nothing for CONFIG=profile'])])
        self.assertVerdict(doc, 1, '0 passed, 1 failed, 1 skipped', 'no test ran')

    def test_carriage_returns_of_a_serial_port(self):
        doc = [line + '\r' for line in check_doc(GOOD_BINARY)]
        self.assertVerdict(doc, 0, '7 passed, 0 failed, 2 skipped')


if __name__ == '__main__':
    unittest.main()

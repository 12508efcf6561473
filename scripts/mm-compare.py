#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The mm selftests' results on two kernels, side by side.

Usage: mm-compare.py STOCK_DIR PATCHED_DIR

Each directory holds, for every test, NAME.out (its output, TAP) and
NAME.rc (its exit status), as rfp-ktap collect kept them.  Prints one TAP
line a test: not ok when the patched kernel fails or does not reach a
case that the stock one passes, exits with an error (a skip included)
where stock does not, or a test ran on one kernel only; the cases and
what the test printed before each failure follow.  Exit status 1 then.
"""
import os
import re
import sys

RESULT = re.compile(r'^(ok|not ok) ([0-9]+) (.*)$')


def load(d, name):
    with open(os.path.join(d, name + '.out'), errors='replace') as f:
        lines = [ln.rstrip('\n') for ln in f]
    with open(os.path.join(d, name + '.rc')) as f:
        rc = int(f.read().strip() or -1)
    res, why, names = {}, {}, {}
    for i, ln in enumerate(lines):
        m = RESULT.match(ln)
        if not m:
            continue
        # Cases are known by their number: some tests put what they
        # measured in the description (mrelease_test: "... with 2MB ...").
        case = m.group(2) + ' ' + re.sub(r'\s*#.*$', '', m.group(3)).strip()
        key = int(m.group(2))
        skip = re.search(r'#\s*SKIP', ln, re.I) is not None
        res[key] = 'skip' if skip else ('ok' if m.group(1) == 'ok' else 'FAIL')
        names[key] = case
        if res[key] == 'FAIL':
            why[key] = [x for x in lines[max(0, i - 3):i] if not RESULT.match(x)]
    return rc, res, why, names, lines[-3:]


def count(res, what):
    return sum(1 for v in res.values() if v == what)


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    stock, patched = sys.argv[1:]
    names = sorted({f[:-3] for d in (stock, patched) for f in os.listdir(d)
                    if f.endswith('.rc')})
    bad = 0
    if not names:
        print('not ok - no mm selftest result on either kernel')
        sys.exit(1)
    print('# %-22s %-28s %-28s' % ('mm selftest', 'stock', 'patched'))
    for n in names:
        missing = [k for k, d in (('stock', stock), ('patched', patched))
                   if not os.path.exists(os.path.join(d, n + '.rc'))]
        if missing:
            print(f'not ok - {n}: no result on the {missing[0]} kernel')
            bad += 1
            continue
        s_rc, s_res, _, s_names, _ = load(stock, n)
        p_rc, p_res, p_why, p_names, p_tail = load(patched, n)
        cols = [f'exit {rc}, {count(r, "ok")} ok {count(r, "FAIL")} fail {count(r, "skip")} skip'
                for rc, r in ((s_rc, s_res), (p_rc, p_res))]
        print('# %-22s %-28s %-28s' % (n, cols[0], cols[1]))
        # A case stock passes must pass on patched: failing, skipping or
        # not being reached (the test died before it) are all worse.
        worse = [c for c in sorted(set(s_res) | set(p_res))
                 if (s_res.get(c) == 'ok' and p_res.get(c) != 'ok') or
                 (p_res.get(c) == 'FAIL' and s_res.get(c) != 'FAIL')]
        rc_worse = p_rc != s_rc and p_rc != 0
        if not worse and not rc_worse:
            print(f'ok - {n}: the patched kernel fails nothing that the stock one passes')
            continue
        bad += 1
        print(f'not ok - {n}: ' + (f'exit {p_rc} on patched, {s_rc} on stock; ' if rc_worse else '')
              + f'{len(worse)} cases worse than on stock')
        for c in worse:
            print(f'#   case {p_names.get(c, s_names.get(c))}: '
                  f'{p_res.get(c, "not reached")} on patched, {s_res.get(c, "not reached")} on stock')
            for w in p_why.get(c, []):
                print(f'#       {w}')
        if rc_worse and not worse:
            for w in p_tail:
                print(f'#       {w}')
    sys.exit(1 if bad else 0)


if __name__ == '__main__':
    main()

#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Judge a run's KTAP, nested the way kselftest's runner.sh nests it.

Usage: ktap.py LOG

A test's own output is its parent's, each line behind one more "# ".  A
run passes when every result line is "ok" (a SKIP, which must say why,
counts as neither), every plan ("1..N") was met, a plan of no test says
why it skips, and at least one test passed.  A result whose children
failed, or fell short of their plan, fails with them.  Prints the failures
and the closing line "N passed, N failed, N skipped"; the exit status is 0
only for a run that passed.

The kernel's tools/testing/kunit/kunit_parser.py was tried first: it reads
KTAP 1 nesting ("# Subtest:" headers, indentation), not runner.sh's "# "
prefixes, and the 6.12 one raises an exception on a nested plan that is
not met instead of reporting it.
"""
import re
import sys

RESULT = re.compile(r'(ok|not ok)\b(?: ([0-9]+))?(?: -)? ?([^#]*)(?:#\s*(.*))?$')
PLAN = re.compile(r'1\.\.([0-9]+)(?:\s*#\s*(.*))?$')


class Node:
    def __init__(self, name):
        self.name = name
        self.children = []
        self.plan = None
        self.ok = True
        self.directive = ''


def depth_of(line):
    d = 0
    while line.startswith('# ') or line == '#':
        line = line[2:]
        d += 1
    return d, line


def parse(lines):
    """A tree of results: the children of a node are the results one level
    deeper that came before the node's own result line."""
    root = Node('the run')
    pending = {}        # depth -> Node collecting results at that depth
    pending[0] = Node('the run')
    for raw in lines:
        d, text = depth_of(raw.rstrip('\r\n'))
        m = PLAN.match(text)
        if m:
            pending.setdefault(d, Node('?')).plan = (int(m.group(1)), m.group(2) or '')
            continue
        m = RESULT.match(text)
        if not m:
            continue
        node = Node(m.group(3).strip() or text)
        node.ok = m.group(1) == 'ok'
        node.directive = (m.group(4) or '').strip()
        # What was printed one level deeper since the last result here
        # belongs to this test.
        sub = pending.pop(d + 1, None)
        for k in [k for k in pending if k > d + 1]:
            del pending[k]
        if sub:
            node.children = sub.children
            node.plan = sub.plan
        pending.setdefault(d, Node('?')).children.append(node)
    top = pending.get(0, root)
    root.children, root.plan = top.children, top.plan
    return root


def judge(node, path, out):
    """Returns (passed, failed, skipped) of the leaves below node, and
    appends to out why node or its children failed."""
    counts = [0, 0, 0]
    here = f'{path}: {node.name}' if path else node.name
    for child in node.children:
        c = judge(child, here, out)
        counts = [a + b for a, b in zip(counts, c)]
    if node.plan and node.plan[0] != len(node.children):
        out.append(f'{here}: planned {node.plan[0]} tests and reported '
                   f'{len(node.children)}')
        counts[1] += 1
    elif node.plan and node.plan[0] == 0 and \
            not node.plan[1].upper().startswith('SKIP'):
        # "1..0" is a skip only with its reason: a filter that matched
        # no test, or a tool that ran nothing, is not a pass.
        out.append(f'{here}: planned no test, and gave no reason to skip')
        counts[1] += 1
    return counts


def leaves(node, here, out, counts):
    for child in node.children:
        name = f'{here}: {child.name}' if here else child.name
        # A test that ran nothing, "1..0", is a skip, whatever its
        # result line says (runner.sh's and run_host's say "ok").
        skip = child.directive.upper().startswith('SKIP') or \
            (not child.children and child.plan is not None and child.plan[0] == 0)
        if not child.ok:
            out.append(f'{name}: not ok{" # " + child.directive if child.directive else ""}')
        if child.children:
            leaves(child, name, out, counts)
            if not child.ok and all(c.ok for c in child.children):
                counts[1] += 1      # it failed for a reason of its own
        elif not child.ok:
            counts[1] += 1
        elif skip:
            reason = child.directive[4:].strip()
            # runner.sh's line carries no reason: "1..0 # SKIP why" does.
            if not reason and child.plan and child.plan[0] == 0:
                reason = re.sub(r'(?i)^skip\s*', '', child.plan[1]).strip()
            if not reason:
                out.append(f'{name}: skipped without a reason')
                counts[1] += 1
            else:
                counts[2] += 1
        else:
            counts[0] += 1


def main():
    if len(sys.argv) != 2:
        sys.exit('usage: ktap.py LOG')
    with open(sys.argv[1], errors='replace') as f:
        root = parse(f)
    why = []
    counts = [0, 0, 0]
    leaves(root, '', why, counts)
    plan_why = []
    counts[1] += judge(root, '', plan_why)[1]
    why += plan_why
    if counts[0] + counts[1] == 0:
        why.append('no test ran: the log holds no test result'
                   + (f' but {counts[2]} skips' if counts[2] else ''))
        counts[1] += 1
    if why:
        print('failed:')
        for w in why:
            print('  ' + w)
    print(f'{counts[0]} passed, {counts[1]} failed, {counts[2]} skipped')
    sys.exit(1 if counts[1] else 0)


if __name__ == '__main__':
    main()

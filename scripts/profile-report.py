#!/usr/bin/env python3
"""Where one rfp-bench scenario's guest instructions go, stock against patched.

Usage: profile-report.py SCENARIO DEPTH STOCK_DIR PATCHED_DIR OUTDIR

Each DIR holds one kernel's run of make profile: profile.txt, ftrace's
function_graph output (the guest ran under -icount, so a duration in ns is
a count of guest instructions) of the timed calls of one scenario, its
system calls (remap_file_pages() or, for the floors, mprotect()) and the
page faults they take, with only the functions DEPTH calls deep hooked;
profile-plain.txt and profile-traced.txt, rfp-bench's lines of the same
scenario untraced and traced.

The tracer costs the same few hundred instructions at each hooked call:
its cost a call, k, is the traced run's cost less the untraced one's,
over the hooked calls a call makes.  Each function's figure is its
duration less k for each hooked call beneath it.

Prints, per call of the scenario, the instructions of each function DEPTH
calls deep, the two kernels side by side; writes OUTDIR/profile.json and,
when gnuplot is there, OUTDIR/profile.png, a bar chart of the functions
at the ends of that tree: where the instructions of a call go.
"""
import json
import os
import re
import sys

from rfp_plot import gnuplot

# " 1) + 10.321 us   |    } /* do_mmap */", " 0)   0.246 us    |  foo();"
LINE = re.compile(r'^\s*(\d+)\)\s*(?:[-+!#*@$]\s*)?(?:([\d.]+) us\s*)?\|(\s*)(.*?)\s*$')
SYSCALL = re.compile(r'^__(?:x64|ia32|arm64|se|do)_sys_(\w+)$')


def short(name):
    """__x64_sys_remap_file_pages -> sys_remap_file_pages, for every arch."""
    m = SYSCALL.match(name)
    return 'sys_' + m.group(1) if m else name


def parse(path):
    """Inclusive instructions, and hooked calls beneath, by call path; and
    the calls of each root."""
    incl, below, count, roots = {}, {}, {}, {}
    stacks = {}
    with open(path, errors='replace') as f:
        for line in f:
            m = LINE.match(line)
            if not m:
                continue
            cpu, dur, text = m.group(1), m.group(2), m.group(4)
            stack = stacks.setdefault(cpu, [])
            if text.endswith('{'):
                stack.append(short(text[:-1].strip().rstrip('()').strip()))
                continue
            if text.startswith('}'):
                if not stack:
                    continue        # the trace began inside this call
                path_ = tuple(stack)
                stack.pop()
            elif text.endswith(';'):
                path_ = tuple(stack) + (short(text[:-1].strip().rstrip('()')),)
            else:
                continue
            if dur is None:
                continue
            ns = round(float(dur) * 1000)
            incl[path_] = incl.get(path_, 0) + ns
            below.setdefault(path_, 0)
            count[path_] = count.get(path_, 0) + 1
            for i in range(1, len(path_)):
                below[path_[:i]] = below.get(path_[:i], 0) + 1
            if len(path_) == 1:
                roots[path_[0]] = roots.get(path_[0], 0) + 1
    return incl, below, count, roots


def bench_line(path, scenario):
    """rfp-bench's per_call and calls of the scenario in that output."""
    with open(path) as f:
        for line in f:
            m = re.search(r'name=(\S+) per_call=(\d+) calls=(\d+)', line)
            if m and m.group(1) == scenario:
                return int(m.group(2)), int(m.group(3))
    sys.exit('profile-report: no %s line in %s' % (scenario, path))


def profile(d, scenario):
    """One kernel: calls traced, k, and the corrected cost by path."""
    incl, below, count, roots = parse(os.path.join(d, 'profile.txt'))
    calls = sum(n for r, n in roots.items() if r.startswith('sys_'))
    if not calls:
        sys.exit('profile-report: no system call of the scenario in %s' % d)
    plain = bench_line(os.path.join(d, 'profile-plain.txt'), scenario)[0]
    traced, made = bench_line(os.path.join(d, 'profile-traced.txt'),
                              scenario)
    # Where the buffer filled, the tracer's cost is no longer k a call.
    if calls < made:
        sys.exit('profile-report: %s: the trace buffer holds %d of the %d '
                 'calls: a smaller DEPTH, please' % (d, calls, made))
    hooked = (sum(below[(r,)] for r in roots) + sum(roots.values())) / calls
    k = max(0.0, (traced - plain) / hooked) if hooked else 0.0
    # The part of k inside a call's own time stamps: what the cheapest
    # function that calls no other shows.
    own = min(incl[p] / count[p] for p in incl if not below[p])
    cost = {p: (incl[p] - k * below[p] - own * count[p]) / calls
            for p in incl}
    return {'calls': calls, 'plain': plain, 'traced': traced,
            'hooked': hooked, 'k': k, 'own': own, 'cost': cost}


def tree(paths, depth, least):
    """The paths to print, each under its caller, callees by their cost:
    those that cost at least @least, under callers that do."""
    kids = {}
    for p in paths:
        if len(p) <= depth:
            kids.setdefault(p[:-1], []).append(p)
    out = []

    def walk(parent):
        for p in sorted(kids.get(parent, []), key=lambda p: -paths[p]):
            if paths[p] >= least:
                out.append(p)
                walk(p)
    walk(())
    return out


def main():
    if len(sys.argv) != 6:
        sys.exit(__doc__)
    scenario, depth = sys.argv[1], int(sys.argv[2])
    out = sys.argv[5]
    kernels = {'stock': profile(sys.argv[3], scenario),
               'patched': profile(sys.argv[4], scenario)}
    s, p = kernels['stock']['cost'], kernels['patched']['cost']
    both = {k: max(s.get(k, 0), p.get(k, 0)) for k in set(s) | set(p)}
    total = sum(v for k, v in both.items() if len(k) == 1)
    shown = tree(both, depth, total / 100)

    print('%s: guest instructions per call, by function, %d calls deep'
          % (scenario, depth))
    print('%-52s %9s %9s' % ('', 'stock', 'patched'))
    for what, key, fmt in (('untraced (make bench\'s figure)', 'plain', '%9d'),
                           ('traced', 'traced', '%9d'),
                           ('hooked calls a call', 'hooked', '%9.1f'),
                           ('k, the tracer\'s cost a hooked call', 'k',
                            '%9.0f'),
                           ('of which inside its own time stamps', 'own',
                            '%9.0f')):
        print(('%-52s ' + fmt + ' ' + fmt) % (
            what, kernels['stock'][key], kernels['patched'][key]))
    print('calls traced: stock %d, patched %d; below, each function less k'
          % (kernels['stock']['calls'], kernels['patched']['calls']))
    print('for each hooked call beneath it and its own part of k; under 1%'
          ' of the call left out')
    print()
    print('%-52s %9s %9s' % ('function', 'stock', 'patched'))
    rows = []
    for k in shown:
        label = '  ' * (len(k) - 1) + k[-1]
        print('%-52s %9d %9d' % (label[:52], s.get(k, 0), p.get(k, 0)))
        rows.append({'path': list(k), 'stock': round(s.get(k, 0)),
                     'patched': round(p.get(k, 0))})
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, 'profile.json'), 'w') as f:
        json.dump({'scenario': scenario, 'depth': depth,
                   'unit': 'guest instructions per call, less the tracer',
                   'kernels': {n: {x: v[x] for x in ('calls', 'plain',
                                                     'traced', 'hooked', 'k',
                                                     'own')}
                               for n, v in kernels.items()},
                   'functions': rows}, f, indent=1)
    print('\nJSON: %s' % os.path.join(out, 'profile.json'))
    chart(scenario, depth, out, rows)


def chart(scenario, depth, out, rows):
    """A bar chart of the functions at the ends of the tree printed, and of
    the rest of the call: where its instructions go."""
    paths = [tuple(r['path']) for r in rows]
    ends = [r for r in rows if not any(len(q) > len(r['path']) and
                                       q[:len(r['path'])] == tuple(r['path'])
                                       for q in paths)]
    if not ends:
        return
    dat = os.path.join(out, 'profile.dat')
    png = os.path.join(out, 'profile.png')
    rest = {k: sum(r[k] for r in rows if len(r['path']) == 1) -
            sum(r[k] for r in ends) for k in ('stock', 'patched')}
    with open(dat, 'w') as f:
        for r in sorted(ends, key=lambda r: -max(r['stock'], r['patched'])):
            label = '/'.join(r['path'][-2:])
            f.write('"%s" %d %d\n' % (label, r['stock'], r['patched']))
        f.write('"the rest" %d %d\n' % (rest['stock'], rest['patched']))
    plot = '''set terminal pngcairo size 1200,650 noenhanced
set output '%s'
set title 'rfp-bench %s: where the guest instructions of a call go (function_graph, %d deep)'
set ylabel 'guest instructions per call'
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set xtics rotate by -40 scale 0
set yrange [0:*]
set grid ytics
set bmargin 14
set rmargin 14
plot '%s' using 2:xtic(1) title 'stock', '' using 3 title 'patched'
''' % (png, scenario, depth, dat)
    gnuplot(plot, png, 'profile-report')


if __name__ == '__main__':
    main()

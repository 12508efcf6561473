#!/usr/bin/env python3
"""Put the stock and patched rfp-bench outputs side by side.

Usage: bench-report.py STOCK.txt PATCHED.txt OUTDIR [SHIM.txt]

SHIM.txt: rfp-bench under rfp-compat on the patched kernel with the
syscall refused, a column of its own with its cost against the kernel's.

Prints the table, writes OUTDIR/bench.json, and, when gnuplot is there,
OUTDIR/bench-scaling.png (cost of one remap against the process's VMAs).
"""
import json
import os
import sys

from rfp_plot import gnuplot

# The cheapest call that leaves the same VMAs and page tables, measured on
# the same kernel: mprotect() carving the same VMAs, mprotect() of a
# one-page VMA, and a remap without populate followed by one read fault.
FLOORS = {
    'reverse': 'carve-mprotect',
    'whole': 'whole-mprotect',
    'whole-populate': 'whole-read',
}


def parse(path):
    res = {}
    release = None
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line.startswith('# ') and release is None:
                release = line[2:].split(',')[0]
            if not line.startswith('rfp-bench: name='):
                continue
            fields = dict(kv.split('=', 1) for kv in line.split()[1:])
            if fields['name'] == 'warmup':
                continue
            res[fields['name']] = {
                'per_call': int(fields['per_call']),
                'calls': int(fields['calls']),
                'vmas_before': int(fields['vmas_before']),
                'vmas_after': int(fields['vmas_after']),
                'runs': [int(x) for x in fields['runs'].split(',')],
            }
    return release, res


def main():
    if len(sys.argv) not in (4, 5):
        sys.exit(__doc__)
    srel, stock = parse(sys.argv[1])
    prel, patched = parse(sys.argv[2])
    out = sys.argv[3]
    shim = parse(sys.argv[4])[1] if len(sys.argv) == 5 else {}
    if not stock or not patched:
        sys.exit('bench-report: no results in %s or %s' % tuple(sys.argv[1:3]))

    rows = []
    for name in stock:
        if name not in patched:
            continue
        s, p = stock[name], patched[name]
        rows.append({
            'scenario': name,
            'calls': s['calls'],
            'stock': s['per_call'],
            'patched': p['per_call'],
            'ratio': round(s['per_call'] / p['per_call'], 2),
            'vmas_after_stock': s['vmas_after'],
            'vmas_after_patched': p['vmas_after'],
            'runs_stock': s['runs'],
            'runs_patched': p['runs'],
        })
        if name in shim:
            rows[-1]['shim'] = shim[name]['per_call']
            rows[-1]['runs_shim'] = shim[name]['runs']

    print('guest instructions per call (remap_file_pages(), or mprotect() for'
          ' the floors), median of %d runs'
          % len(rows[0]['runs_stock']))
    print('stock: %s   patched: %s' % (srel, prel))
    print()
    print('%-22s %6s %9s %9s %7s %12s' % ('scenario', 'calls', 'stock',
                                          'patched', 'ratio', 'VMAs after'))
    for r in rows:
        print('%-22s %6d %9d %9d %6.2fx %5d / %-5d' % (
            r['scenario'], r['calls'], r['stock'], r['patched'], r['ratio'],
            r['vmas_after_stock'], r['vmas_after_patched']))
    print('(ratio: stock / patched; VMAs after: the window\'s, stock / patched)')
    floors = [(r, next(f for f in rows if f['scenario'] == FLOORS[r['scenario']]))
              for r in rows if FLOORS.get(r['scenario']) in stock and
              FLOORS[r['scenario']] in patched]
    if floors:
        print()
        print('against the floor, each kernel against its own:')
        print('%-22s %-16s %9s %9s %9s %9s' % (
            'scenario', 'floor', 'stock', 'x floor', 'patched', 'x floor'))
        for r, f in floors:
            r['floor'] = f['scenario']
            r['stock_x_floor'] = round(r['stock'] / f['stock'], 2)
            r['patched_x_floor'] = round(r['patched'] / f['patched'], 2)
            print('%-22s %-16s %9d %8.2fx %9d %8.2fx' % (
                r['scenario'], f['scenario'], r['stock'], r['stock_x_floor'],
                r['patched'], r['patched_x_floor']))
        print('(x floor: the scenario / its floor on the same kernel)')
    if shim:
        print()
        print('rfp-compat, the shim in user space, on the patched kernel with')
        print('vm.remap_file_pages=0, against the kernel\'s own remap:')
        print('%-22s %9s %9s %7s' % ('scenario', 'patched', 'shim', 'cost'))
        for r in rows:
            if 'shim' in r:
                print('%-22s %9d %9d %6.2fx' % (
                    r['scenario'], r['patched'], r['shim'],
                    r['shim'] / r['patched']))
        print('(cost: shim / patched kernel)')

    with open(os.path.join(out, 'bench.json'), 'w') as f:
        json.dump({'unit': 'guest instructions per call (median)',
                   'stock_kernel': srel, 'patched_kernel': prel,
                   'scenarios': rows}, f, indent=1)
    print('\nJSON: %s' % os.path.join(out, 'bench.json'))

    scale = [(int(r['scenario'].split('-')[1]), r['stock'], r['patched'])
             for r in rows if r['scenario'].startswith('scale-')]
    if not scale:
        return
    dat = os.path.join(out, 'bench-scaling.dat')
    png = os.path.join(out, 'bench-scaling.png')
    with open(dat, 'w') as f:
        for n, s, p in sorted(scale):
            f.write('%d %d %d\n' % (n, s, p))
    plot = '''set terminal pngcairo size 800,500 noenhanced
set output '%s'
set title 'One-page remap_file_pages() against the VMAs the process has'
set xlabel 'VMAs in the process'
set ylabel 'guest instructions per call'
set logscale x
set yrange [0:*]
set key bottom right
set grid
plot '%s' using 1:2 with linespoints title 'stock', \\
     '' using 1:3 with linespoints title 'patched'
''' % (png, dat)
    gnuplot(plot, png, 'bench-report')


if __name__ == '__main__':
    main()

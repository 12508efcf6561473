"""gnuplot for the reports (bench-report.py, profile-report.py)."""
import subprocess
import sys


def gnuplot(script, png, who):
    """Run gnuplot on script, which writes png; say so, or why not."""
    try:
        subprocess.run(['gnuplot'], input=script, text=True, check=True)
        print('plot: %s' % png)
    except (OSError, subprocess.CalledProcessError) as e:
        print('%s: no plot (%s)' % (who, e), file=sys.stderr)

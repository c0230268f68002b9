"""Benchmarks: ``python -m bench all`` (the suite, bench/suite.py; README.md has the figures)
and ``python -m bench pull`` (bench/pull.py). Results are printed as figures and ratios
measured side by side in one run, never compared with numbers from elsewhere."""

"""Benchmarks: ``python -m bench pull`` (see bench/pull.py). Results are printed as figures
and ratios measured side by side in one run, never compared with numbers from elsewhere."""

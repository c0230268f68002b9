"""``python -m bench <name> [options]``: ``all`` (the suite, bench/suite.py), ``scale``
(bench/scale.py), ``pull``, ``warm``, ``noise`` (the noise-aware verdict by simulation,
bench/noise.py) or ``noise-e2e`` (the same gate through the sandbox, bench/noise_e2e.py)."""

from __future__ import annotations

import sys

USAGE = ("usage: python -m bench all [--only SECTIONS] [--sizes 1000,10000] "
         "[--concurrency 1,8,32] [--skip-vendor] ...\n"
         "       python -m bench pull [--items N] [--concurrency N] [--skip-vendor] ...\n"
         "       python -m bench scale [--only start,ingest,seed,first,whole] [--pairs 7]\n"
         "       python -m bench warm [--agents startup,otel] [--sizes 200,1000] "
         "[--concurrency 2,8]\n"
         "       python -m bench noise [--quick | --full] [--prs N] [--seed N] [--procs N]\n"
         "       python -m bench noise-e2e [--items 200] [--flaky 30] [--prs 10] "
         "[--configs k3,auto,k1]\n"
         "(python -m bench all --help lists every option)")


def main(argv: list[str]) -> int:
    if not argv or argv[0] in ("-h", "--help"):
        print(USAGE, file=sys.stderr)
        return 0 if argv else 2
    name, rest = argv[0], argv[1:]
    if name == "all":
        from bench.suite import main as suite_main

        return suite_main(rest)
    if name == "warm":
        from bench.warm import main as warm_main

        return warm_main(rest)
    if name == "scale":
        from bench.scale import main as scale_main

        return scale_main(rest)
    if name == "pull":
        from bench.pull import main as pull_main

        return pull_main(rest)
    if name == "noise":
        from bench.noise import main as noise_main

        return noise_main(rest)
    if name == "noise-e2e":
        from bench.noise_e2e import main as noise_e2e_main

        return noise_e2e_main(rest)
    print(f"bench: unknown benchmark {name!r} (known: all, pull, scale, warm, noise, noise-e2e)",
          file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

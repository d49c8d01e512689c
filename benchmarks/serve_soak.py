"""The hostile-exchange soak test at full size: ``tests/test_serve_soak.py`` with more rounds and honest students.

Each round plants one entry of every hostile kind (drawn names, deep trees, FIFOs, links, sparse and growing files,
too many cells, truncated JSON) beside every honest student's real ``nbgrader submit``, against one running
``vecgrade serve``; the test prints, per round, its seconds, the staging folder's peak, the course folder's growth
and the load average. Needs root (the students are Unix users), like the test.

    python benchmarks/serve_soak.py [--rounds 10] [--honest 6]
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=10, help="Hypothesis examples: rounds of hostile entries")
    parser.add_argument("--honest", type=int, default=6, help="honest students submitting in every round")
    args = parser.parse_args()
    if args.rounds < 1 or args.honest < 1:
        sys.exit("error: --rounds and --honest count rounds and students: 1 or more")
    env = dict(os.environ, VECGRADE_SOAK_ROUNDS=str(args.rounds), VECGRADE_SOAK_HONEST=str(args.honest))
    print(f"soak: {args.rounds} rounds, {args.honest} honest students; load average before "
          f"{os.getloadavg()[0]:.1f} (cores: {os.cpu_count()})", flush=True)
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-s", "-p", "no:cacheprovider",
                           "tests/test_serve_soak.py"], cwd=ROOT, env=env)
    print(f"load average after: {os.getloadavg()[0]:.1f}")
    sys.exit(done.returncode)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""The cold `warden tool call read_file`: process start to exit, compile
cache warm, for each binary given, in interleaved rounds (the order flips
every round) with `/bin/true` timed in each round as the machine's spawn
cost. Prints the median and interquartile range of each.

Time the build users get (criterion's `cold_process/read_file` times the
binary `cargo bench` links, with the dev-dependencies' features in it):

    cargo build --release -p warden && cp target/release/warden /tmp/warden.a
    python3 host/benches/cold_start.py /tmp/warden.a [/tmp/warden.b ...]

`ROUNDS=N` sets the rounds (default 200).
"""

import os
import subprocess
import sys
import tempfile
import time


def main() -> None:
    binaries = sys.argv[1:]
    if not binaries:
        sys.exit(__doc__)
    rounds = int(os.environ.get("ROUNDS", "200"))
    with tempfile.TemporaryDirectory() as tmp:
        home = os.path.join(tmp, "home")
        ws = os.path.join(tmp, "ws")
        os.makedirs(ws)
        with open(os.path.join(ws, "f.txt"), "w") as f:
            f.write("a\nb\nc\n")
        env = dict(os.environ, WARDEN_HOME=home)

        def call(binary: str) -> float:
            cmd = [binary, "tool", "call", "read_file",
                   "--input", '{"path":"f.txt"}', "-w", ws]
            start = time.perf_counter()
            done = subprocess.run(cmd, capture_output=True, env=env)
            took = time.perf_counter() - start
            if done.returncode != 0:
                sys.exit(f"{binary} failed: {done.stderr.decode()}")
            return took

        def spawn_true() -> float:
            start = time.perf_counter()
            subprocess.run(["/bin/true"], check=True)
            return time.perf_counter() - start

        for binary in binaries:
            call(binary)  # compiles the plugin into the cache
        times = {b: [] for b in binaries + ["/bin/true"]}
        for i in range(rounds):
            for binary in binaries if i % 2 == 0 else binaries[::-1]:
                times[binary].append(call(binary))
            times["/bin/true"].append(spawn_true())
    for name, ts in times.items():
        ts.sort()
        q = lambda f: ts[int((len(ts) - 1) * f)] * 1e3
        print(f"{name}: median {q(0.5):.2f} ms (interquartile {q(0.25):.2f}-{q(0.75):.2f})")


if __name__ == "__main__":
    main()

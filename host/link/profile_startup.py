#!/usr/bin/env python3
"""Regenerate host/link/startup.ld: the functions a cold `warden tool call`
runs, laid out together at the front of the binary's text.

Why: a cold call touches about 2 MB of the binary's 24 MB of code, spread
over all of it. Every first touch of a 64 KiB window is a page fault (the
kernel maps the window around it), and each page mapped is unmapped again
at exit. Packed together, the same code takes a few dozen faults instead of
about 180.

How: both builds of the `warden` binary are profiled, because they name
most functions differently (a dependency whose features differ gets
another symbol hash): the one `cargo build --release` links, and the one
`cargo test --release` and `cargo bench` link, whose dependencies also
carry dev-dependency features. Each runs a few cold tool calls under
callgrind, which reports every function executed. A function is then named
in the script:

- by its path alone (`_ZN...17h*`, any hash) when the binary has at most
  MAX_PER_PATH functions of that path: robust to rebuilds, features and
  small edits;
- by its exact symbol otherwise (generic functions instantiated many times,
  where the path alone would pull in code the call never runs).

A name that no longer matches after the code changes costs nothing but its
place in the layout; rerun this script when the figure in the README's
performance table drifts.

Needs: valgrind, nm (binutils), cargo. Run from anywhere:
    python3 host/link/profile_startup.py             # builds both, then profiles
    python3 host/link/profile_startup.py BINARY...   # profiles these builds
"""

import collections
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "host" / "link" / "startup.ld"
MAX_PER_PATH = 4

# Cold calls profiled: each runs in a fresh process with a warm compile cache.
CALLS = [
    ("read_file", {"path": "notes.txt"}),
    ("list_dir", {"path": "."}),
    ("grep", {"pattern": "two"}),
]

LEGACY = re.compile(r"^(_ZN.*?17h)[0-9a-f]{16}E$")
LLVM_SUFFIX = re.compile(r"\.llvm\.\d+$")


def run(cmd, **kw):
    print("+", " ".join(str(c) for c in cmd), file=sys.stderr)
    return subprocess.run(cmd, check=True, **kw)


def build_variants(out: Path) -> list[Path]:
    """The two `warden` binaries, copied out of target/ as each is built."""
    built = []
    for name, cmd in [
        ("plain", ["cargo", "build", "--release"]),
        ("dev", ["cargo", "test", "--release", "--no-run"]),
    ]:
        run(cmd, cwd=ROOT)
        target = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
        dest = out / f"warden-{name}"
        shutil.copy2(target / "release" / "warden", dest)
        built.append(dest)
    return built


def executed(binary: Path, scratch: Path) -> list[str]:
    """Symbols of `binary` that the profiled calls execute, first seen first."""
    home = scratch / "home"
    ws = scratch / "ws"
    home.mkdir()
    ws.mkdir()
    (ws / "notes.txt").write_text("one\ntwo\nthree\n")
    env = dict(os.environ, WARDEN_HOME=str(home))
    base = ["valgrind", "--tool=callgrind", "--demangle=no"]

    def call(tool, args, out):
        cmd = [binary, "tool", "call", tool, "--input", json.dumps(args), "-w", ws]
        run(base + [f"--callgrind-out-file={out}"] + cmd, env=env,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    # Under valgrind the CPU reports other features, so the compile cache
    # has other keys: fill it first, or the profile is of the compiler.
    for tool, args in CALLS:
        call(tool, args, scratch / "warm-up.out")
    names: dict[str, None] = {}
    for i, (tool, args) in enumerate(CALLS):
        out = scratch / f"{i}.out"
        call(tool, args, out)
        names.update(dict.fromkeys(callgrind_functions(out)))
    return list(names)


def callgrind_functions(path: Path) -> list[str]:
    """Every function named in a callgrind profile (`fn=` and `cfn=` lines,
    whose names are compressed to `(id)` after their first use)."""
    by_id: dict[str, str] = {}
    seen: dict[str, None] = {}
    line_re = re.compile(r"^c?fn=\((\d+)\)(?: (.*))?$")
    for line in path.read_text(errors="replace").splitlines():
        m = line_re.match(line)
        if not m:
            continue
        ident, name = m.groups()
        if name:
            by_id[ident] = name
        if ident in by_id:
            seen.setdefault(by_id[ident])
    return list(seen)


def code_symbols(binary: Path) -> set[str]:
    """The binary's function symbols."""
    out = run(["nm", "--defined-only", binary], capture_output=True, text=True).stdout
    return {
        parts[2]
        for parts in map(str.split, out.splitlines())
        if len(parts) == 3 and parts[1] in "tTwW"
    }


def path_of(symbol: str) -> str | None:
    """A legacy-mangled symbol without its hash: `_ZN...17h`."""
    m = LEGACY.match(LLVM_SUFFIX.sub("", symbol))
    return m.group(1) if m else None


def patterns(binary: Path, scratch: Path) -> list[str]:
    """What `binary` runs, as section-name patterns without their prefix."""
    symbols = code_symbols(binary)
    per_path = collections.Counter(p for p in map(path_of, symbols) if p)
    out = []
    for symbol in executed(binary, scratch):
        if symbol not in symbols:
            continue  # the C library's, or the loader's
        path = path_of(symbol)
        if path and per_path[path] <= MAX_PER_PATH:
            out.append(f"{path}*")
        else:
            # The exact symbol, with or without ThinLTO's `.llvm.N` suffix.
            out.append(f"{LLVM_SUFFIX.sub('', symbol)}*")
    return out


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="warden-startup-") as tmp:
        tmp = Path(tmp)
        ordered: dict[str, None] = {}
        binaries = [Path(b).resolve() for b in sys.argv[1:]] or build_variants(tmp)
        for i, binary in enumerate(binaries):
            scratch = tmp / f"profile-{i}"
            scratch.mkdir()
            ordered.update(dict.fromkeys(patterns(binary, scratch)))
    lines = [
        "/* Generated by host/link/profile_startup.py: do not edit by hand.",
        " * The functions a cold `warden tool call` runs, placed together before",
        " * the rest of the code so that starting touches few pages of it.",
        " * INSERT keeps the linker's default layout for everything else. */",
        "SECTIONS",
        "{",
        "  .text.warden_start :",
        "  {",
    ]
    # A function's section is `.text.SYMBOL`, or `.text.unlikely.SYMBOL`
    # when it is marked cold (as the slow paths of growing a `Vec` are).
    lines += [f"    *(.text.{p} .text.unlikely.{p})" for p in ordered]
    lines += ["  }", "}", "INSERT BEFORE .text;", ""]
    SCRIPT.write_text("\n".join(lines))
    print(f"{SCRIPT.relative_to(ROOT)}: {len(ordered)} patterns", file=sys.stderr)


if __name__ == "__main__":
    main()

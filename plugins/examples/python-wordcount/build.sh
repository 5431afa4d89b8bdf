#!/usr/bin/env bash
# Build the python-wordcount plugin: a Warden component written in Python.
#
#   plugins/examples/python-wordcount/build.sh [OUT_DIR]
#
# OUT_DIR defaults to target/py-plugin at the repository root. The script
# makes a venv there (reused when present), installs the pinned
# componentize-py from PyPI (requirements.txt, hash-checked), builds app.py
# against the newest WIT (wit/0.2.0, world tool-plugin), and appends
# warden.toml as the component's `warden:manifest` section. The result is
# OUT_DIR/python-wordcount.wasm; its path is the last line printed. A build
# whose inputs have not changed (a sha256 of them is kept beside it) is
# reused. Needs python3 (3.9 or later) with venv; as root on Debian or
# Ubuntu, a missing python3-venv is installed with apt-get.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../../.." && pwd)"
wit="$repo/wit/0.2.0"
out="${1:-$repo/target/py-plugin}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
venv="$out/venv"
wasm="$out/python-wordcount.wasm"
stamp="$out/python-wordcount.inputs-sha256"

say() { echo "python-wordcount: $*" >&2; }

# One build at a time per OUT_DIR (two test runs may start it together).
if command -v flock >/dev/null; then
    exec 9>"$out/.build.lock"
    flock 9
fi

inputs="$(cd "$here" && cat build.sh requirements.txt app.py warden.toml embed_manifest.py "$wit/tool.wit" |
    sha256sum | cut -d' ' -f1)"
if [[ -f "$wasm" && -f "$stamp" && "$(cat "$stamp")" == "$inputs" ]]; then
    say "up to date"
    echo "$wasm"
    exit 0
fi

have_venv() { command -v python3 >/dev/null && python3 -c 'import venv, ensurepip' 2>/dev/null; }
if ! have_venv; then
    if [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null; then
        say "installing python3 and python3-venv with apt-get"
        apt-get update -qq >&2
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3 python3-venv >&2
    fi
    have_venv || {
        say "python3 with the venv module is needed (Debian/Ubuntu: apt-get install python3-venv)"
        exit 1
    }
fi

pinned="$(sed -n 's/^componentize-py==\([^ ]*\).*/\1/p' "$here/requirements.txt")"
if [[ "$("$venv/bin/componentize-py" --version 2>/dev/null || true)" != "componentize-py $pinned" ]]; then
    say "installing componentize-py $pinned into $venv"
    rm -rf "$venv"
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check --no-input \
        --require-hashes --only-binary :all: -r "$here/requirements.txt" >&2
fi

say "building $wasm"
tmp="$(mktemp -d "$out/build.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
# Only app.py goes on the Python path (not this directory's other files).
cp "$here/app.py" "$tmp/app.py"
(cd "$tmp" && env -u VIRTUAL_ENV "$venv/bin/componentize-py" --quiet -d "$wit" -w tool-plugin \
    componentize -p "$tmp" app -o "$tmp/component.wasm" >&2)
python3 "$here/embed_manifest.py" "$tmp/component.wasm" "$here/warden.toml" "$tmp/plugin.wasm"
mv "$tmp/plugin.wasm" "$wasm"
echo "$inputs" >"$stamp"
echo "$wasm"

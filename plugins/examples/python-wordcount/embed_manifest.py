"""Append warden.toml to a component as its `warden:manifest` custom section.

Usage: python3 embed_manifest.py COMPONENT.wasm warden.toml OUT.wasm

The Rust SDK's `register!` macro embeds the same section; Warden reads the
plugin's name and capabilities from it without running any code.
"""

import sys


def leb128(n: int) -> bytes:
    out = bytearray()
    while True:
        byte = n & 0x7F
        n >>= 7
        if n:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def main() -> None:
    component, manifest, out = sys.argv[1:4]
    wasm = open(component, "rb").read()
    if wasm[:4] != b"\0asm" or wasm[6:8] != b"\x01\x00":
        sys.exit(f"{component}: not a WebAssembly component")
    text = open(manifest, "rb").read()
    text.decode("utf-8")
    name = b"warden:manifest"
    payload = leb128(len(name)) + name + text
    section = b"\x00" + leb128(len(payload)) + payload
    with open(out, "wb") as f:
        f.write(wasm + section)


if __name__ == "__main__":
    main()

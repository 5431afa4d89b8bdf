"""A Warden tool plugin in Python: `word_count` over a workspace file.

It targets the `tool-plugin` world of wit/0.2.0, like the Rust plugins.
Paths are joined to the workspace's guest path (from the call context)
and opened as they are: the host's WASI layer, not this code, keeps every
open inside the workspace, so `../x` or `/etc/passwd` fails there.
"""

import errno
import json

from componentize_py_types import Err
from wit_world import exports
from wit_world.imports.types import (
    Annotations,
    CallContext,
    ErrorKind,
    ToolError,
    ToolOutput,
    ToolSpec,
)

SCHEMA = {
    "type": "object",
    "properties": {
        "path": {
            "type": "string",
            "description": "The file, relative to the workspace root.",
        }
    },
    "required": ["path"],
    "additionalProperties": False,
}

# Errno values as wasi-libc numbers them (Python's `errno` module there).
DENIED = {errno.EACCES, errno.EPERM, getattr(errno, "ENOTCAPABLE", errno.EACCES)}


def fail(kind: ErrorKind, message: str) -> Err:
    return Err(ToolError(kind=kind, message=message))


def guest_path(path: str, cx: CallContext) -> str:
    """`path` inside the workspace's preopen; absolute paths pass unchanged."""
    if cx.workspace is None:
        raise fail(ErrorKind.PERMISSION_DENIED, "this call has no workspace")
    shown = cx.workspace_display
    if shown and (path == shown or path.startswith(shown.rstrip("/") + "/")):
        path = path[len(shown):].lstrip("/")
    if path.startswith("/"):
        return path
    return cx.workspace.rstrip("/") + "/" + path


def read(path: str, cx: CallContext) -> bytes:
    guest = guest_path(path, cx)
    try:
        with open(guest, "rb") as f:
            return f.read()
    except FileNotFoundError:
        if guest.startswith("/") and not guest.startswith(cx.workspace.rstrip("/") + "/"):
            raise fail(
                ErrorKind.NOT_FOUND,
                f"{path}: not found; only the workspace is visible to this tool "
                "(give a path relative to its root)",
            )
        raise fail(ErrorKind.NOT_FOUND, f"{path}: no such file")
    except IsADirectoryError:
        raise fail(ErrorKind.INVALID_INPUT, f"{path}: is a directory, not a file")
    except OSError as e:
        if e.errno in DENIED:
            raise fail(
                ErrorKind.PERMISSION_DENIED,
                f"{path}: access denied by the sandbox (the path leaves the workspace)",
            )
        raise fail(ErrorKind.IO, f"{path}: {e.strerror or e}")


def word_count(args: dict, cx: CallContext) -> ToolOutput:
    path = args.get("path") if isinstance(args, dict) else None
    if not isinstance(path, str) or not path:
        raise fail(ErrorKind.INVALID_INPUT, "give `path`, a file in the workspace")
    data = read(path, cx)
    counts = {
        "path": path,
        "lines": data.count(b"\n"),
        "words": len(data.split()),
        "bytes": len(data),
    }
    text = f"{counts['lines']} lines, {counts['words']} words, {counts['bytes']} bytes: {path}"
    return ToolOutput(text=text, structured=json.dumps(counts))


class Plugin(exports.Plugin):
    def tools(self) -> list[ToolSpec]:
        return [
            ToolSpec(
                name="word_count",
                description="Count the lines, words and bytes of a file in the workspace.",
                input_schema=json.dumps(SCHEMA),
                annotations=Annotations(
                    read_only=True, destructive=False, idempotent=True, open_world=False
                ),
            )
        ]

    def call(self, name: str, input: str, context: CallContext) -> ToolOutput:
        if name != "word_count":
            raise fail(ErrorKind.INVALID_INPUT, f"unknown tool: {name}")
        try:
            args = json.loads(input)
        except ValueError as e:
            raise fail(ErrorKind.INVALID_INPUT, f"the input is not JSON: {e}")
        return word_count(args, context)

"""An independent MCP client for Warden's tests: the official Python SDK.

Usage: python client.py SCENARIO CONFIG_JSON

CONFIG_JSON names how to reach the server -- {"stdio": {"command", "args",
"env"}} to start `warden mcp` as a child, or {"http": {"url", "token"}} -- and
the scenario's own settings. Each scenario prints one JSON object with what
it saw on its last line of stdout; the Rust test decides what is right.
Any exception fails the run (non-zero exit, traceback on stderr).
"""

import json
import subprocess
import sys
import time
from contextlib import asynccontextmanager

import anyio
import httpx2
import mcp.types as types
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

CLIENT = types.Implementation(name="warden-test-client", version="1.2.3")


@asynccontextmanager
async def connect(config, **session_args):
    if "stdio" in config:
        s = config["stdio"]
        params = StdioServerParameters(command=s["command"], args=s["args"], env=s.get("env"))
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write, client_info=CLIENT, **session_args) as session:
                await session.initialize()
                yield session
    else:
        h = config["http"]
        headers = {"Authorization": f"Bearer {h['token']}"}
        async with httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30, read=300)) as http:
            async with streamable_http_client(h["url"], http_client=http) as (read, write):
                async with ClientSession(read, write, client_info=CLIENT, **session_args) as session:
                    await session.initialize()
                    yield session


def text_of(result):
    return "".join(c.text for c in result.content if getattr(c, "type", None) == "text")


def outcome(result):
    return {
        "is_error": bool(result.is_error),
        "text": text_of(result),
        "structured": result.structured_content,
    }


async def call(session, name, args, **kw):
    try:
        return outcome(await session.call_tool(name, args, **kw))
    except MCPError as e:
        return {"protocol_error": {"code": e.code, "message": e.message}}


async def tour(config):
    """initialize, tools/list, a read, a denied write, a protected path, an
    unknown tool and a schema violation."""
    async with connect(config) as session:
        init = session.initialize_result
        listed = await session.list_tools()
        tools = {
            t.name: {
                "annotations": t.annotations.model_dump(by_alias=True, exclude_none=True)
                if t.annotations
                else None,
                "input_schema": t.input_schema,
                "description": t.description,
            }
            for t in listed.tools
        }
        return {
            "server": init.server_info.name,
            "protocol": init.protocol_version,
            "list_changed": bool(init.capabilities.tools and init.capabilities.tools.list_changed),
            "tools": tools,
            "read": await call(session, "read_file", {"path": "hello.txt"}),
            "denied_write": await call(session, "write_file", {"path": "locked/x.txt", "content": "x"}),
            "protected": await call(session, "write_file", {"path": ".git/config", "content": "x"}),
            "hidden_call": await call(session, "http_fetch", {"url": "http://127.0.0.1:9/"}),
            "unknown": await call(session, "reed_file", {"path": "hello.txt"}),
            "schema": await call(session, "read_file", {"path": 5}),
        }


async def approvals(config):
    """Calls the policy asks about, answered in turn from config["answers"]."""
    answers = list(config["answers"])
    asked = []

    async def elicit(context, params):
        asked.append(params.message)
        answer = answers.pop(0)
        if answer == "decline":
            return types.ElicitResult(action="decline")
        if answer == "cancel":
            return types.ElicitResult(action="cancel")
        decision, _, message = answer.partition(":")
        content = {"decision": decision}
        if message:
            content["message"] = message
        return types.ElicitResult(action="accept", content=content)

    results = []
    async with connect(config, elicitation_callback=elicit) as session:
        listed = [t.name for t in (await session.list_tools()).tools]
        for args in config["calls"]:
            results.append(await call(session, config.get("tool", "write_file"), args))
    return {"listed": listed, "asked": asked, "results": results}


async def no_elicitation(config):
    """A client that cannot be asked: the asking tool is hidden, and a call
    to it is refused with a reason."""
    async with connect(config) as session:
        listed = [t.name for t in (await session.list_tools()).tools]
        result = await call(session, "write_file", {"path": "a.txt", "content": "a"})
    return {"listed": listed, "result": result}


async def cancel(config):
    """A long call abandoned by the client (which sends notifications/cancelled),
    then a quick one on the same session."""
    out = {}
    async with connect(config) as session:
        for name, args in [("sleep_ms", {"ms": 30000}), ("is_cancelled_spin", {})]:
            started = time.monotonic()
            with anyio.move_on_after(config.get("after", 0.5)):
                await session.call_tool(name, args)
            out[name] = {"abandoned_after": time.monotonic() - started}
        started = time.monotonic()
        out["next"] = await call(session, "ok", {})
        out["next_seconds"] = time.monotonic() - started
    return out


async def progress(config):
    """The hostile progress tool, with a progress token."""
    seen = []

    async def on_progress(value, total, message):
        seen.append({"progress": value, "total": total, "message": message})

    async with connect(config) as session:
        result = await call(
            session, "progress", {"count": 5, "interval_ms": 20}, progress_callback=on_progress
        )
    return {"result": result, "progress": seen}


async def gate(config):
    """Two calls that are not read-only, issued at once, run one after the other."""
    async with connect(config) as session:
        await call(session, "ok", {})
        started = time.monotonic()
        async with anyio.create_task_group() as tg:
            for _ in range(2):
                tg.start_soon(call, session, "sleep_ms", {"ms": config["ms"]})
        return {"seconds": time.monotonic() - started}


async def list_changed(config):
    """A plugin installed while the session is open."""
    changed = anyio.Event()

    async def on_message(message):
        if isinstance(message, types.ToolListChangedNotification):
            changed.set()

    async with connect(config, message_handler=on_message) as session:
        before = [t.name for t in (await session.list_tools()).tools]
        install = subprocess.run(
            [config["warden"], "plugin", "install", config["component"]],
            env=config["stdio"]["env"],
            capture_output=True,
            text=True,
        )
        notified = False
        with anyio.move_on_after(15):
            await changed.wait()
            notified = True
        after = [t.name for t in (await session.list_tools()).tools]
    return {
        "installed": install.returncode == 0,
        "install_stderr": install.stderr,
        "notified": notified,
        "before": before,
        "after": after,
    }


async def roots(config):
    """A client offering a root inside the workspace."""

    async def list_roots(context):
        return types.ListRootsResult(roots=[types.Root(uri=config["root"])])

    async with connect(config, list_roots_callback=list_roots) as session:
        return {
            "inside": await call(session, "read_file", {"path": "inner.txt"}),
            "outside": await call(session, "read_file", {"path": "top.txt"}),
        }


async def reads(config):
    """n read_file calls at once; how long they took."""
    async with connect(config) as session:
        await call(session, "read_file", {"path": "hello.txt"})
        started = time.monotonic()
        results = []
        async with anyio.create_task_group() as tg:

            async def one():
                results.append(await call(session, "read_file", {"path": "hello.txt"}))

            for _ in range(config["n"]):
                tg.start_soon(one)
        return {"seconds": time.monotonic() - started, "results": results}


async def ask_user(config):
    """ask_user answered through elicitation from config["answers"] (a
    string is typed in, "decline" declines), then asked of a client that
    cannot be asked."""
    answers = list(config["answers"])
    asked = []

    async def elicit(context, params):
        asked.append({"message": params.message, "schema": params.requested_schema})
        answer = answers.pop(0)
        if answer == "decline":
            return types.ElicitResult(action="decline")
        return types.ElicitResult(action="accept", content={"answer": answer})

    question = {"question": "Which colour?", "choices": ["red", "blue"]}
    results = []
    async with connect(config, elicitation_callback=elicit) as session:
        for _ in config["answers"]:
            results.append(await call(session, "ask_user", question))
    async with connect(config) as session:
        unaskable = await call(session, "ask_user", question)
    return {"asked": asked, "results": results, "unaskable": unaskable}


SCENARIOS = {
    f.__name__: f
    for f in [
        tour,
        approvals,
        no_elicitation,
        ask_user,
        cancel,
        progress,
        gate,
        list_changed,
        roots,
        reads,
    ]
}


def main():
    scenario, config = sys.argv[1], json.loads(sys.argv[2])
    result = anyio.run(SCENARIOS[scenario], config)
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()

"""Drives `airlock mcp` with the official Python MCP SDK (spec 13 §Tests).

Usage: python client.py AIRLOCK_EXE AIRLOCK_HOME WORKSPACE
Prints one `ok: ...` line per check; any failure raises (non-zero exit).
"""

import asyncio
import json
import os
import subprocess
import sys
import time

import anyio
from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client

AIRLOCK, HOME, WORKSPACE = sys.argv[1], sys.argv[2], sys.argv[3]
SERVER = StdioServerParameters(
    command=AIRLOCK,
    args=["mcp", "-C", WORKSPACE],
    env={"AIRLOCK_HOME": HOME, "HOME": HOME, "PATH": "/usr/bin:/bin"},
    cwd=WORKSPACE,
)


def ok(what):
    print(f"ok: {what}", flush=True)


def structured(result):
    assert result.structured_content is not None, result
    text = result.content[0].text
    assert json.loads(text) == result.structured_content, (text, result.structured_content)
    return result.structured_content


class Elicitor:
    """Answers `elicitation/create` from a queue of planned answers, recording each request."""

    def __init__(self):
        self.answers = []
        self.asked = []

    async def __call__(self, context, params):
        self.asked.append(params)
        action, decision = self.answers.pop(0)
        content = {"decision": decision} if decision is not None else None
        return types.ElicitResult(action=action, content=content)


async def with_elicitation():
    elicitor = Elicitor()
    async with stdio_client(SERVER) as (read, write):
        async with ClientSession(read, write, elicitation_callback=elicitor) as session:
            init = await session.initialize()
            assert init.protocol_version in ("2025-06-18", "2025-11-25"), init.protocol_version
            assert init.server_info.name == "airlock"
            assert init.capabilities.tools is not None
            ok(f"initialize with elicitation ({init.protocol_version})")

            tools = {tool.name: tool for tool in (await session.list_tools()).tools}
            assert sorted(tools) == ["apply_patch", "shell"], sorted(tools)
            for tool in tools.values():
                assert tool.annotations.destructive_hint is True
                assert tool.annotations.open_world_hint is True
                assert tool.output_schema["required"][:3] == ["exit_code", "stdout", "stderr"]
            assert tools["shell"].input_schema["required"] == ["command"]
            assert set(tools["shell"].input_schema["properties"]) == {
                "command", "workdir", "timeout_ms", "justification", "sandbox_permissions"}
            assert tools["apply_patch"].input_schema["required"] == ["input"]
            ok("tools/list: shell and apply_patch with schemas and annotations")

            allowed = await session.call_tool("shell", {"command": ["echo", "hello from the sandbox"]})
            body = structured(allowed)
            assert allowed.is_error is False, body
            assert body["exit_code"] == 0 and body["stdout"] == "hello from the sandbox\n", body
            assert body["sandbox"] == "linuxSeccomp", body
            assert body["decision"]["requirement"] == "skip", body
            ok("allowed command runs in the sandbox")

            failing = await session.call_tool("shell", {"command": "echo oops >&2; exit 3"})
            body = structured(failing)
            assert failing.is_error is True and body["exit_code"] == 3 and body["stderr"] == "oops\n", body
            ok("a failing command is an error result with its exit code")

            forbidden = await session.call_tool("shell", {"command": "rm -rf build"})
            body = structured(forbidden)
            assert forbidden.is_error is True, body
            assert body["exit_code"] is None and "recursive deletes are not allowed" in body["reason"], body
            assert body["decision"]["requirement"] == "forbidden", body
            assert elicitor.asked == [], "a forbidden command must not ask"
            ok("forbidden command is an isError result, nobody asked")

            elicitor.answers.append(("accept", "approve"))
            accepted = await session.call_tool("shell", {"command": ["echo", "needs-approval", "1"]})
            body = structured(accepted)
            assert accepted.is_error is False and body["stdout"] == "needs-approval 1\n", body
            assert body["decision"]["source"] == "user", body
            asked = elicitor.asked[-1]
            assert asked.mode == "form", asked
            assert "echo needs-approval 1" in asked.message and "approval is reviewed" in asked.message, asked.message
            schema = asked.requested_schema
            assert schema["required"] == ["decision"], schema
            decision = schema["properties"]["decision"]
            values = decision.get("enum") or [choice["const"] for choice in decision["oneOf"]]
            assert values[:2] == ["approve", "approve_for_session"] and values[-1] == "deny", values
            ok(f"prompted command accepted through elicitation (offered {values})")

            elicitor.answers.append(("decline", None))
            declined = await session.call_tool("shell", {"command": ["echo", "needs-approval", "2"]})
            body = structured(declined)
            assert declined.is_error is True and body["exit_code"] is None, body
            assert "declined by the user" in body["reason"], body
            ok("prompted command declined: refused, not run")

            elicitor.answers.append(("cancel", None))
            cancelled = await session.call_tool("shell", {"command": ["echo", "needs-approval", "3"]})
            body = structured(cancelled)
            assert cancelled.is_error is True and body["exit_code"] is None, body
            assert body["decision"]["decision"] == "abort", body
            ok("prompted command cancelled: aborted")

            elicitor.answers.append(("accept", "approve_for_session"))
            first = await session.call_tool("shell", {"command": ["echo", "needs-approval", "4"]})
            again = await session.call_tool("shell", {"command": ["echo", "needs-approval", "4"]})
            assert structured(first)["stdout"] == "needs-approval 4\n"
            assert structured(again)["decision"]["source"] == "session_cache", structured(again)
            assert elicitor.answers == [] and len(elicitor.asked) == 4, elicitor.asked
            ok("approve_for_session: the session remembers it (asked once)")

            elicitor.answers.append(("accept", "save_rule"))
            saved = await session.call_tool("shell", {
                "command": ["touch", "saved.txt"], "sandbox_permissions": "require_escalated",
                "justification": "create a marker outside the sandbox"})
            body = structured(saved)
            assert saved.is_error is False and body["sandbox"] == "none", body
            assert "The agent says: create a marker outside the sandbox" in elicitor.asked[-1].message, elicitor.asked[-1].message
            decision = elicitor.asked[-1].requested_schema["properties"]["decision"]
            values = decision.get("enum") or [choice["const"] for choice in decision["oneOf"]]
            assert "save_rule" in values, values
            with open(os.path.join(HOME, "rules/default.rules")) as rules:
                assert '"touch", "saved.txt"' in rules.read(), "the accepted rule was not saved"
            assert os.path.exists(os.path.join(WORKSPACE, "saved.txt"))
            ok("save_rule: approved, run outside the sandbox as asked, and the prefix rule saved")

            elicitor.answers.append(("accept", "approve_everything"))
            odd = await session.call_tool("shell", {"command": ["echo", "needs-approval", "5"]})
            assert odd.is_error is True and structured(odd)["exit_code"] is None
            ok("an accepted form without an offered decision is denied")

            patch = "*** Begin Patch\n*** Add File: notes/hello.txt\n+hello\n+from apply_patch\n*** End Patch\n"
            patched = await session.call_tool("apply_patch", {"input": patch})
            body = structured(patched)
            assert patched.is_error is False, body
            assert "A notes/hello.txt" in body["stdout"], body
            with open(os.path.join(WORKSPACE, "notes/hello.txt")) as written:
                assert written.read() == "hello\nfrom apply_patch\n"
            bad = await session.call_tool("apply_patch", {"input": "*** Begin Patch\n*** Update File: missing.txt\n@@\n-a\n+b\n*** End Patch\n"})
            assert bad.is_error is True and structured(bad)["exit_code"] == 1, structured(bad)
            ok("apply_patch applied a patch; a patch that does not apply is an error result")

            progress = []

            async def on_progress(value, total, message):
                progress.append((value, message))

            slow = await session.call_tool("shell", {"command": ["sleep", "1.5"]}, progress_callback=on_progress)
            assert structured(slow)["exit_code"] == 0
            assert progress and progress[0] == (0, "started"), progress
            assert [value for value, _ in progress] == sorted({value for value, _ in progress}), progress
            ok(f"progress notifications for a call with a progressToken ({len(progress)} received)")

            marker = "3599.123456"
            with anyio.move_on_after(2):
                await session.call_tool("shell", {"command": ["sleep", marker]})
                raise AssertionError("the long command finished instead of being cancelled")
            deadline = time.monotonic() + 20
            while running(marker):
                assert time.monotonic() < deadline, "the cancelled command is still running"
                await anyio.sleep(0.1)
            after = await session.call_tool("shell", {"command": ["echo", "still here"]})
            assert structured(after)["stdout"] == "still here\n"
            ok("notifications/cancelled killed the long command; the session goes on")

            timed = await session.call_tool("shell", {"command": ["sleep", "3599.654321"], "timeout_ms": 300})
            assert timed.is_error is True and "timeout_ms = 300" in structured(timed)["reason"], structured(timed)
            deadline = time.monotonic() + 20
            while running("3599.654321"):
                assert time.monotonic() < deadline, "the timed-out command is still running"
                await anyio.sleep(0.1)
            ok("timeout_ms stops the command")

            try:
                await session.call_tool("no_such_tool", {})
                raise AssertionError("an unknown tool must be a JSON-RPC error")
            except Exception as error:  # the SDK raises McpError for JSON-RPC errors
                assert "unknown tool" in str(error), error
            ok("unknown tool is a JSON-RPC error")


def running(marker):
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
                if marker.encode() in cmdline.read():
                    return True
        except OSError:
            pass
    return False


async def without_elicitation():
    async with stdio_client(SERVER) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            ok(f"initialize without elicitation ({init.protocol_version})")
            allowed = await session.call_tool("shell", {"command": ["echo", "fine"]})
            assert structured(allowed)["stdout"] == "fine\n"
            prompted = await session.call_tool("shell", {"command": ["echo", "needs-approval", "6"]})
            body = structured(prompted)
            assert prompted.is_error is True and body["exit_code"] is None, body
            assert "no reviewer is available" in body["reason"] and "elicitation" in body["reason"], body
            ok("without elicitation a prompted command is refused, naming the reason")


def malformed_json_rpc():
    """Raw lines: the server answers each bad message with the right error and keeps going."""
    process = subprocess.Popen(
        [AIRLOCK, "mcp", "-C", WORKSPACE],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
        env={"AIRLOCK_HOME": HOME, "HOME": HOME, "PATH": "/usr/bin:/bin"},
    )

    def exchange(line):
        process.stdin.write(line.encode() + b"\n")
        process.stdin.flush()
        return json.loads(process.stdout.readline())

    cases = [
        ('{"jsonrpc":"2.0","id":1,"method":"tools/list"}', -32600, "Not initialized"),
        ("this is not json", -32700, "Parse error"),
        ('[{"jsonrpc":"2.0","id":2,"method":"ping"}]', -32600, "batches"),
        ('{"jsonrpc":"1.0","id":3,"method":"ping"}', -32600, "jsonrpc"),
        ('{"jsonrpc":"2.0","id":4,"method":"initialize","params":{"capabilities":{}}}', -32602, "protocolVersion"),
    ]
    for line, code, text in cases:
        answer = exchange(line)
        assert answer["error"]["code"] == code and text in answer["error"]["message"], (line, answer)
        assert answer["jsonrpc"] == "2.0"
    init = exchange('{"jsonrpc":"2.0","id":5,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}')
    assert init["result"]["protocolVersion"] == "2025-06-18", init
    process.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
    after = [
        ('{"jsonrpc":"2.0","id":6,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}', -32600, "already initialized"),
        ('{"jsonrpc":"2.0","id":7,"method":"resources/list"}', -32601, "resources/list"),
        ('{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"arguments":{}}}', -32602, "name"),
        ('{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"shell","arguments":{"command":42}}}', -32602, "invalid arguments for `shell`"),
        ('{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"shell","arguments":{"command":["ls"],"cwd":"/"}}}', -32602, "unknown field `cwd`"),
        ('{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"apply_patch","arguments":{"patch":"x"}}}', -32602, "apply_patch"),
    ]
    for line, code, text in after:
        answer = exchange(line)
        assert answer.get("id") is not None and answer["error"]["code"] == code and text in answer["error"]["message"], (line, answer)
    # An answer to nothing and an unknown notification are ignored; the server still answers.
    process.stdin.write(b'{"jsonrpc":"2.0","id":99,"result":{}}\n{"jsonrpc":"2.0","method":"notifications/whatever"}\n')
    assert exchange('{"jsonrpc":"2.0","id":12,"method":"ping"}') == {"jsonrpc": "2.0", "id": 12, "result": {}}
    process.stdin.close()
    assert process.wait(timeout=20) == 0
    ok("malformed JSON-RPC: -32700 / -32600 / -32601 / -32602 as appropriate, and the server keeps serving")


async def main():
    await with_elicitation()
    await without_elicitation()
    malformed_json_rpc()
    print("all checks passed", flush=True)


asyncio.run(main())

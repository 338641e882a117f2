#!/usr/bin/env python3
"""A small reference client for `airlock serve` (Python 3.8+, standard library only).

Copy it into your harness. It starts `airlock serve` (or connects to `airlock serve --listen
unix:PATH`), sends requests (many may be in flight: `call_async` returns a Future), answers the
server's approval requests from a callback, and hands notifications to another callback.

Run it as a demo:

    python3 examples/airlock_client.py [--airlock PATH] [--auto accept|decline] -- CMD [ARGS...]

It opens a thread in the current directory, starts a turn, sends CMD as a `tool/shell` call,
asks you on the terminal when Airlock wants approval (or answers --auto), and prints the result.
"""

import argparse
import concurrent.futures
import itertools
import json
import os
import socket
import subprocess
import sys
import threading


class RpcError(Exception):
    """A JSON-RPC error answer: `code` and `message` as the server sent them."""

    def __init__(self, code, message, data=None):
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.data = data


class AirlockClient:
    """One connection to `airlock serve`.

    on_server_request(method, params, request_id) -> result object (sent as the answer), or
        None to answer later with `reply()`. Called on a worker thread, one call per request.
    on_notification(method, params) -> None. Called on the reader thread: keep it quick.
    on_message(direction, message) -> None. Every message in ("in") and out ("out"); for logs
        and schema checks.
    """

    def __init__(self, argv=None, unix_path=None, env=None, cwd=None, stderr=None,
                 on_server_request=None, on_notification=None, on_message=None):
        self._on_server_request = on_server_request
        self._on_notification = on_notification or (lambda method, params: None)
        self._on_message = on_message or (lambda direction, message: None)
        self._ids = itertools.count(1)
        self._waiting = {}
        self._lock = threading.Lock()
        self._write_lock = threading.Lock()
        self._workers = concurrent.futures.ThreadPoolExecutor(max_workers=8)
        self.closed = threading.Event()
        self.proc = None
        if unix_path is not None:
            self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            self._sock.connect(unix_path)
            self._out = self._sock.makefile("wb")
            self._in = self._sock.makefile("rb")
        else:
            self._sock = None
            self.proc = subprocess.Popen(argv or ["airlock", "serve"], stdin=subprocess.PIPE,
                                         stdout=subprocess.PIPE, stderr=stderr, env=env, cwd=cwd)
            self._out = self.proc.stdin
            self._in = self.proc.stdout
        self._reader = threading.Thread(target=self._read_loop, daemon=True)
        self._reader.start()

    # -- sending ---------------------------------------------------------------------------
    def send(self, message):
        """Sends one message (a dict) as one line."""
        self._on_message("out", message)
        self.send_raw(json.dumps(message).encode() + b"\n")

    def send_raw(self, data):
        """Sends bytes as they are (for tests of malformed input)."""
        with self._write_lock:
            self._out.write(data)
            self._out.flush()

    def call_async(self, method, params=None):
        """Sends a request; the Future resolves to its result or raises RpcError."""
        request_id = next(self._ids)
        future = concurrent.futures.Future()
        with self._lock:
            self._waiting[request_id] = (method, future)
        message = {"id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        return future

    def call(self, method, params=None, timeout=60):
        """Sends a request and waits for its result (raises RpcError on an error answer)."""
        return self.call_async(method, params).result(timeout=timeout)

    def notify(self, method, params=None):
        message = {"method": method}
        if params is not None:
            message["params"] = params
        self.send(message)

    def reply(self, request_id, result=None, error=None):
        """Answers a server request (an approval) with a result or an error object."""
        message = {"id": request_id}
        if error is not None:
            message["error"] = error
        else:
            message["result"] = result
        self.send(message)

    def method_of(self, request_id):
        """The method of one of our requests still waiting (None when answered)."""
        with self._lock:
            entry = self._waiting.get(request_id)
        return entry[0] if entry else None

    # -- the session helpers ---------------------------------------------------------------
    def initialize(self, name="airlock-example-client", version="0.1"):
        result = self.call("initialize", {"clientInfo": {"name": name, "version": version}})
        self.notify("initialized")
        return result

    def close(self):
        """Closes the connection (the server aborts everything of it) and waits for the server
        process, if we started it."""
        try:
            if self._sock is not None:
                self._sock.shutdown(socket.SHUT_RDWR)
                self._sock.close()
            else:
                self._out.close()
        except OSError:
            pass
        if self.proc is not None:
            self.proc.wait(timeout=30)
        self.closed.wait(timeout=30)
        self._workers.shutdown(wait=False)

    # -- receiving -------------------------------------------------------------------------
    def _read_loop(self):
        try:
            for line in self._in:
                if not line.strip():
                    continue
                message = json.loads(line)
                self._on_message("in", message)
                self._dispatch(message)
        except (OSError, ValueError):
            pass
        finally:
            self.closed.set()
            with self._lock:
                waiting, self._waiting = self._waiting, {}
            for _, future in waiting.values():
                if not future.done():
                    future.set_exception(ConnectionError("the server closed the connection"))

    def _dispatch(self, message):
        if "method" in message and "id" in message:
            self._workers.submit(self._answer, message)
        elif "method" in message:
            self._on_notification(message["method"], message.get("params"))
        elif message.get("id") is not None:
            with self._lock:
                entry = self._waiting.pop(message["id"], None)
            if entry is None:
                return
            _, future = entry
            if "error" in message:
                error = message["error"]
                future.set_exception(RpcError(error.get("code"), error.get("message"), error.get("data")))
            else:
                future.set_result(message.get("result"))

    def _answer(self, message):
        if self._on_server_request is None:
            # Nobody to ask: refuse (the server treats it as decline).
            self.reply(message["id"], {"decision": "decline"})
            return
        result = self._on_server_request(message["method"], message.get("params") or {}, message["id"])
        if result is not None:
            self.reply(message["id"], result)


def ask_on_terminal(method, params, request_id):
    """An approval callback for people: shows the request, reads a choice."""
    offered = params.get("availableDecisions") or ["accept", "decline", "cancel"]
    simple = [d for d in offered if isinstance(d, str)]
    what = params.get("command") or json.dumps(params.get("changes"), indent=1)
    print(f"\nAirlock asks ({method}): {what}", file=sys.stderr)
    if params.get("reason"):
        print(f"  reason: {params['reason']}", file=sys.stderr)
    print(f"  answers: {', '.join(simple)}", file=sys.stderr)
    try:
        choice = input("  your answer> ").strip()
    except EOFError:
        choice = "decline"
    return {"decision": choice if choice in simple else "decline"}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--airlock", default=os.environ.get("AIRLOCK_BIN", "airlock"))
    parser.add_argument("--auto", choices=["accept", "acceptForSession", "decline"],
                        help="answer every approval with this instead of asking")
    parser.add_argument("--rules", action="append", default=[],
                        help="a .rules file for the session's exec policy (repeatable)")
    parser.add_argument("command", nargs="+")
    args = parser.parse_args()

    def approve(method, params, request_id):
        if args.auto:
            return {"decision": args.auto}
        return ask_on_terminal(method, params, request_id)

    shown = {"ends_line": True}

    def show(method, params):
        if method == "item/commandExecution/outputDelta":
            sys.stderr.write(params["delta"])
            shown["ends_line"] = params["delta"].endswith("\n")
        elif method == "warning":
            # e.g. a --rules file that cannot be read: every command then needs approval.
            sys.stderr.write(("" if shown["ends_line"] else "\n") + f"airlock warning: {params.get('message')}\n")
            shown["ends_line"] = True

    client = AirlockClient([args.airlock, "serve"], on_server_request=approve, on_notification=show)
    client.initialize()
    params = {"cwd": os.getcwd()}
    if args.rules:
        params["rules"] = [os.path.abspath(path) for path in args.rules]
    thread = client.call("thread/start", params)["thread"]["id"]
    turn = client.call("turn/start", {"threadId": thread})["turn"]["id"]
    result = client.call("tool/shell", {"threadId": thread, "turnId": turn, "callId": "call-1",
                                        "command": args.command}, timeout=None)
    if not shown["ends_line"]:
        sys.stderr.write("\n")
    print(json.dumps(result, indent=2))
    client.close()
    return 0 if result["status"] == "completed" and result.get("exitCode") == 0 else 1


if __name__ == "__main__":
    sys.exit(main())

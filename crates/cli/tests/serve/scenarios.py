#!/usr/bin/env python3
"""Drives the real `airlock serve` with the reference client (examples/airlock_client.py) and
checks every message of the traffic against the schema `airlock schema` wrote.

Usage: scenarios.py SCENARIO   (concurrent | session_cache | interrupt | disconnect | unix | malformed |
                               patch | launch_cache | descriptors | server_killed | stdio_kinds |
                               stopped_mid_launch | interrupted_mid_launch)
Environment: AIRLOCK_BIN, SCHEMA_DIR, WORK_DIR (a fresh directory), REPO_ROOT.
Exits 0 when every check passed; prints what failed otherwise.
"""

import fcntl
import json
import os
import random
import shlex
import signal
import socket
import stat
import subprocess
import sys
import threading
import time

sys.dont_write_bytecode = True  # leave no __pycache__ in the checkout
sys.path.insert(0, os.path.join(os.environ["REPO_ROOT"], "examples"))
from airlock_client import AirlockClient, RpcError  # noqa: E402

import jsonschema  # noqa: E402

AIRLOCK = os.environ["AIRLOCK_BIN"]
WORK = os.environ["WORK_DIR"]
HOME = os.path.join(WORK, "home")
WS = os.path.join(WORK, "ws")
RULES = os.path.join(WORK, "prompt.rules")
for d in (HOME, WS):
    os.makedirs(d, exist_ok=True)
with open(RULES, "w") as f:
    f.write('prefix_rule(pattern=["printf"], decision="prompt")\n')
ENV = dict(os.environ, AIRLOCK_HOME=HOME)
ENV.pop("LD_LIBRARY_PATH", None)

with open(os.path.join(os.environ["SCHEMA_DIR"], "airlock_app_server_protocol.schemas.json")) as f:
    BUNDLE = json.load(f)
METHODS = BUNDLE["x-methods"]


def check(condition, what):
    if not condition:
        raise AssertionError(what)


class SchemaChecker:
    """Validates every message against the bundle; remembers what each request id was."""

    def __init__(self):
        self.errors = []
        self.count = 0
        self.our_requests = {}     # our id -> method
        self.server_requests = {}  # server id -> method
        self.unchecked_out = set()  # ids of answers sent malformed on purpose
        self.skip_out = False  # requests sent malformed on purpose
        self.answered = set()  # ids of our requests the server answered (each exactly once)
        self.lock = threading.Lock()
        self.validators = {}

    def validate(self, name, instance, context):
        validator = self.validators.get(name)
        if validator is None:
            validator = jsonschema.Draft202012Validator({"$ref": f"#/$defs/{name}", "$defs": BUNDLE["$defs"]})
            self.validators[name] = validator
        errors = list(validator.iter_errors(instance))
        with self.lock:
            self.count += 1
            for error in errors:
                self.errors.append(f"{context}: {name}: {error.message} at {list(error.absolute_path)}")

    def __call__(self, direction, message):
        if direction == "out":
            if "method" in message and "id" in message:
                with self.lock:
                    self.our_requests[message["id"]] = message["method"]
                if self.skip_out:
                    return
                spec = METHODS["clientRequests"].get(message["method"])
                if spec is None:
                    return  # unknown on purpose (malformed tests)
                self.validate("JSONRPCRequest", message, "out request")
                self.validate(spec["params"], message.get("params", {}), f"out {message['method']}")
            elif "method" in message:
                check(message["method"] in METHODS["clientNotifications"], f"unknown notification {message}")
                self.validate("JSONRPCNotification", message, "out notification")
            elif "result" in message:
                method = self.server_requests.get(message["id"])
                if message["id"] in self.unchecked_out:
                    return  # garbage answers on purpose
                self.validate(METHODS["serverRequests"][method]["result"], message["result"], f"out answer to {method}")
            return
        if "method" in message and "id" in message:
            spec = METHODS["serverRequests"].get(message["method"])
            if spec is None:
                self.errors.append(f"unknown server request {message['method']}")
                return
            with self.lock:
                self.server_requests[message["id"]] = message["method"]
            self.validate("JSONRPCRequest", message, "in request")
            self.validate(spec["params"], message["params"], f"in {message['method']}")
        elif "method" in message:
            spec = METHODS["serverNotifications"].get(message["method"])
            if spec is None:
                self.errors.append(f"unknown notification {message['method']}")
                return
            self.validate("JSONRPCNotification", message, "in notification")
            self.validate(spec["params"], message["params"], f"in {message['method']}")
        elif "error" in message:
            self.validate("JSONRPCError", message, "in error")
            self.once(message.get("id"))
        else:
            self.validate("JSONRPCResponse", message, "in response")
            self.once(message["id"])
            method = self.our_requests.get(message["id"])
            if method is None:
                self.errors.append(f"response to an id we never sent: {message}")
                return
            self.validate(METHODS["clientRequests"][method]["result"], message["result"], f"in result of {method}")

    def once(self, request_id):
        if request_id is None:
            return
        with self.lock:
            if request_id in self.answered:
                self.errors.append(f"request {request_id} was answered twice")
            self.answered.add(request_id)

    def finish(self):
        check(not self.errors, "schema violations:\n" + "\n".join(self.errors[:20]))
        check(self.count > 0, "no message was validated")
        print(f"schema: {self.count} messages validated")


class Recorder:
    """Collects notifications and server requests; lets the test answer approvals later."""

    def __init__(self):
        self.lock = threading.Condition()
        self.approvals = {}  # itemId -> (request id, params)
        self.notes = []

    def on_server_request(self, method, params, request_id):
        with self.lock:
            self.approvals.setdefault(params["itemId"], []).append((request_id, params))
            self.lock.notify_all()
        return None

    def on_notification(self, method, params):
        with self.lock:
            self.notes.append((method, params))
            self.lock.notify_all()

    def wait_for(self, predicate, what, timeout=120):
        deadline = time.time() + timeout
        with self.lock:
            while not predicate():
                left = deadline - time.time()
                check(left > 0, f"timed out waiting for {what}")
                self.lock.wait(left)

    def notes_of(self, method):
        with self.lock:
            return [p for m, p in self.notes if m == method]


def start(recorder, checker, argv=None, stderr=None):
    client = AirlockClient(argv or [AIRLOCK, "serve"], env=ENV, cwd=WS, stderr=stderr,
                           on_server_request=recorder.on_server_request,
                           on_notification=recorder.on_notification, on_message=checker)
    client.initialize(name="airlock-tests")
    return client


def new_thread(client, **extra):
    params = {"cwd": WS, "approvalPolicy": "on-request", "rules": [RULES]}
    params.update(extra)
    thread = client.call("thread/start", params)["thread"]["id"]
    turn = client.call("turn/start", {"threadId": thread})["turn"]["id"]
    return thread, turn


def shell(client, thread, turn, call_id, command, **extra):
    params = {"threadId": thread, "turnId": turn, "callId": call_id, "command": command}
    params.update(extra)
    return client.call_async("tool/shell", params)


def processes_with(marker, sleep_only=True):
    """Pids of running `sleep MARKER` commands, or (sleep_only=False) of any process with
    MARKER in its argv (the bwrap and helper that launch it too)."""
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                argv = f.read().split(b"\0")
            if (argv[0].endswith(b"sleep") or not sleep_only) and marker.encode() in argv:
                found.append(pid)
        except OSError:
            pass
    return found


def wait_gone(marker):
    """Killed processes vanish asynchronously (SIGKILL, then the kernel tears the sandbox's pid
    namespace down): wait a bounded time for every process carrying MARKER to be gone."""
    deadline = time.time() + 20
    while True:
        left = processes_with(marker, sleep_only=False)
        if not left:
            return
        check(time.time() < deadline, f"processes left behind: {left}")
        time.sleep(0.05)


GARBAGE = [
    {"result": {"decision": "approved"}},                       # a v1 word, not a v2 decision
    {"result": {"decision": 42}},                               # ill-typed
    {"result": {}},                                              # missing decision
    {"result": "accept"},                                        # not an object
    {"result": {"decision": {"acceptWithExecpolicyAmendment": {"execpolicy_amendment": ["rm"]}}}},  # not offered
    {"error": {"code": -32000, "message": "the harness broke"}},  # a JSON-RPC error
]


def scenario_concurrent():
    """200 concurrent calls over 4 threads, approvals answered in random order."""
    rng = random.Random(int(os.environ.get("SEED", "13")))
    recorder, checker = Recorder(), SchemaChecker()
    client = start(recorder, checker)
    threads = [new_thread(client) for _ in range(4)]
    cancel_threads = {0, 2}  # threads 1 and 3 see no cancel: their turns must go on
    plan = {}  # callId -> (thread index, decision kind)
    futures = {}
    for n in range(200):
        t = n % 4
        kind = rng.choice(["accept", "acceptForSession", "decline", "garbage"])
        plan[f"c{n}"] = (t, kind)
    for t in cancel_threads:
        victim = next(c for c, (tt, _) in plan.items() if tt == t)
        plan[victim] = (t, "cancel")
    for call_id, (t, _) in plan.items():
        thread, turn = threads[t]
        futures[call_id] = shell(client, thread, turn, call_id, ["printf", "out-%s", call_id])
    recorder.wait_for(lambda: len(recorder.approvals) == 200, "200 approval requests")
    check(all(len(v) == 1 for v in recorder.approvals.values()), "one approval request per call")
    order = [c for c, (_, k) in plan.items() if k != "cancel"]
    rng.shuffle(order)
    garbage_used = 0
    for call_id in order:
        request_id, params = recorder.approvals[call_id][0]
        check(params["availableDecisions"][:2] == ["accept", "acceptForSession"] or "accept" in params["availableDecisions"],
              f"accept offered: {params['availableDecisions']}")
        kind = plan[call_id][1]
        if kind == "garbage":
            answer = GARBAGE[garbage_used % len(GARBAGE)]
            garbage_used += 1
            checker.unchecked_out.add(request_id)
            client.reply(request_id, **answer)
        else:
            client.reply(request_id, {"decision": kind})
    # A cancel ends its whole turn: send it once the other calls of its turn are over, so
    # their statuses are their own answers'.
    for call_id in order:
        futures[call_id].result(timeout=120)
    cancels = [c for c, (_, k) in plan.items() if k == "cancel"]
    rng.shuffle(cancels)
    for call_id in cancels:
        client.reply(recorder.approvals[call_id][0][0], {"decision": "cancel"})
    results = {c: f.result(timeout=120) for c, f in futures.items()}
    for call_id, result in results.items():
        kind = plan[call_id][1]
        if kind in ("accept", "acceptForSession"):
            check(result["status"] == "completed" and result["exitCode"] == 0, f"{call_id} {kind}: {result}")
            check(result["stdout"] == f"out-{call_id}", f"{call_id} stdout: {result['stdout']!r}")
            check(result["sandboxType"] == "linuxSeccomp", f"{call_id} ran sandboxed: {result}")
            want = "approved" if kind == "accept" else "approved_for_session"
            check(result["decision"]["decision"] == want and result["decision"]["source"] == "user", f"{call_id}: {result['decision']}")
        else:
            check(result["status"] == "declined", f"{call_id} {kind}: {result}")
            check(result.get("exitCode") is None and not result["attempts"], f"{call_id} must not run: {result}")
            want = "abort" if kind == "cancel" else "denied"
            check(result["decision"]["decision"] == want, f"{call_id} {kind}: {result['decision']}")
    # Each call resolved exactly once: one item/completed per call, one result per request.
    completed = [p["item"]["id"] for p in recorder.notes_of("item/completed")]
    check(sorted(completed) == sorted(plan), "one item/completed per call")
    resolved = [p["requestId"] for p in recorder.notes_of("serverRequest/resolved")]
    asked = [v[0][0] for v in recorder.approvals.values()]
    check(sorted(resolved) == sorted(asked), "one serverRequest/resolved per approval request")
    # cancel interrupted only its own turn.
    recorder.wait_for(lambda: len(recorder.notes_of("turn/completed")) >= len(cancel_threads), "turn/completed")
    interrupted = {p["threadId"] for p in recorder.notes_of("turn/completed") if p["turn"]["status"] == "interrupted"}
    check(interrupted == {threads[t][0] for t in cancel_threads}, f"interrupted turns: {interrupted}")
    for t, (thread, turn) in enumerate(threads):
        after = shell(client, thread, turn, f"after-{t}", ["/bin/echo", "still", "here"]).result(timeout=60)
        if t in cancel_threads:
            check(after["status"] == "declined", f"a call on the cancelled turn is declined: {after}")
        else:
            check(after["status"] == "completed" and after["stdout"] == "still here\n", f"thread {t} goes on: {after}")
    client.close()
    checker.finish()
    print(f"concurrent: 200 calls resolved once each ({sum(1 for _, k in plan.values() if k == 'garbage')} garbage answers)")


def scenario_session_cache():
    recorder, checker = Recorder(), SchemaChecker()
    client = start(recorder, checker)
    thread, turn = new_thread(client)
    first = shell(client, thread, turn, "a1", ["printf", "same"])
    recorder.wait_for(lambda: "a1" in recorder.approvals, "first approval")
    client.reply(recorder.approvals["a1"][0][0], {"decision": "acceptForSession"})
    check(first.result(timeout=60)["status"] == "completed", "first call ran")
    second = shell(client, thread, turn, "a2", ["printf", "same"]).result(timeout=60)
    check("a2" not in recorder.approvals, "the identical second call was not asked about")
    check(second["status"] == "completed" and second["stdout"] == "same", f"second ran: {second}")
    check(second["decision"]["source"] == "session_cache", f"from the session cache: {second['decision']}")
    # Another thread is another session: its own cache.
    other_thread, other_turn = new_thread(client)
    third = shell(client, other_thread, other_turn, "a3", ["printf", "same"])
    recorder.wait_for(lambda: "a3" in recorder.approvals, "the other thread asks again")
    client.reply(recorder.approvals["a3"][0][0], {"decision": "decline"})
    check(third.result(timeout=60)["status"] == "declined", "declined in the other thread")
    client.close()
    checker.finish()


def scenario_interrupt():
    """turn/interrupt kills a running command and aborts a pending approval of that turn only."""
    recorder, checker = Recorder(), SchemaChecker()
    client = start(recorder, checker)
    thread, turn = new_thread(client)
    other_thread, other_turn = new_thread(client)
    running = shell(client, thread, turn, "long", ["sleep", "31.4159"])
    pending = shell(client, thread, turn, "ask", ["printf", "x"])
    other = shell(client, other_thread, other_turn, "other", ["printf", "y"])
    recorder.wait_for(lambda: "ask" in recorder.approvals and "other" in recorder.approvals, "approvals")
    deadline = time.time() + 30
    while not processes_with("31.4159"):
        check(time.time() < deadline, "the sleep never started")
        time.sleep(0.05)
    check(client.call("turn/interrupt", {"threadId": thread, "turnId": turn}) == {}, "interrupt answered")
    long_result = running.result(timeout=60)
    check(long_result["status"] == "failed" and "interrupted" in long_result["reason"], f"killed: {long_result}")
    pending_result = pending.result(timeout=60)
    check(pending_result["status"] == "declined", f"pending approval aborted: {pending_result}")
    wait_gone("31.4159")
    check(not other.done(), "the other thread's call still waits")
    client.reply(recorder.approvals["other"][0][0], {"decision": "accept"})
    check(other.result(timeout=60)["stdout"] == "y", "the other thread's call ran")
    resolved = {p["requestId"] for p in recorder.notes_of("serverRequest/resolved")}
    check(recorder.approvals["ask"][0][0] in resolved, "the withdrawn approval was resolved")
    recorder.wait_for(lambda: any(p["turn"]["status"] == "interrupted" for p in recorder.notes_of("turn/completed")), "turn/completed")
    client.close()
    checker.finish()


def disconnect_mid_approval(client, recorder, marker):
    thread, turn = new_thread(client)
    shell(client, thread, turn, "long", ["sleep", marker])
    shell(client, thread, turn, "ask", ["printf", "x"])
    recorder.wait_for(lambda: "ask" in recorder.approvals, "approval request")
    deadline = time.time() + 30
    while not processes_with(marker):
        check(time.time() < deadline, "the sleep never started")
        time.sleep(0.05)
    client.close()  # never answers the approval


def scenario_disconnect():
    recorder, checker = Recorder(), SchemaChecker()
    log = open(os.path.join(WORK, "serve.stderr"), "w+")
    client = start(recorder, checker, stderr=log)
    disconnect_mid_approval(client, recorder, "27.1828")
    check(client.proc.returncode == 0, f"server exit {client.proc.returncode}")
    log.seek(0)
    text = log.read()
    check("1 thread(s) ended, 2 call(s) aborted, 0 pending request(s) left" in text, f"teardown log: {text}")
    wait_gone("27.1828")
    checker.finish()


def scenario_unix():
    path = os.path.join(WORK, "serve.sock")
    log = open(os.path.join(WORK, "serve.stderr"), "w+")
    server = subprocess.Popen([AIRLOCK, "serve", "--listen", f"unix:{path}"], env=ENV, cwd=WS, stderr=log, stdin=subprocess.DEVNULL)
    try:
        deadline = time.time() + 30
        while not os.path.exists(path):
            check(time.time() < deadline and server.poll() is None, "socket never appeared")
            time.sleep(0.05)
        mode = stat.S_IMODE(os.stat(path).st_mode)
        check(mode == 0o600, f"socket mode {oct(mode)}")
        recorder, checker = Recorder(), SchemaChecker()
        client = AirlockClient(unix_path=path, on_server_request=recorder.on_server_request,
                               on_notification=recorder.on_notification, on_message=checker)
        client.initialize()
        disconnect_mid_approval(client, recorder, "16.1803")
        deadline = time.time() + 30
        while "0 pending request(s) left" not in open(log.name).read():
            check(time.time() < deadline, "no teardown line")
            time.sleep(0.05)
        wait_gone("16.1803")
        # The server goes on serving new connections.
        checker.finish()
        recorder2, checker = Recorder(), SchemaChecker()  # a new connection: ids start again
        again = AirlockClient(unix_path=path, on_server_request=lambda m, p, i: {"decision": "accept"},
                              on_notification=recorder2.on_notification, on_message=checker)
        again.initialize()
        thread, turn = new_thread(again)
        result = shell(again, thread, turn, "p", ["printf", "ok"]).result(timeout=60)
        check(result["stdout"] == "ok", f"second connection works: {result}")
        again.close()
        checker.finish()
        check(server.poll() is None, "the server is still running")
    finally:
        server.kill()
        server.wait()


def expect_error(future, code, contains=None):
    try:
        result = future.result(timeout=60)
    except RpcError as error:
        check(error.code == code, f"code {error.code} ({error.message}), wanted {code}")
        if contains:
            check(contains in error.message, f"{error.message!r} should name {contains!r}")
        return error
    raise AssertionError(f"expected error {code}, got result {result}")


def scenario_malformed():
    recorder, checker = Recorder(), SchemaChecker()
    errors = []  # error answers without an id
    original = recorder.on_notification
    client = AirlockClient([AIRLOCK, "serve"], env=ENV, cwd=WS, on_server_request=recorder.on_server_request,
                           on_notification=original, on_message=lambda d, m: (checker(d, m), d == "in" and "error" in m and m.get("id") is None and errors.append(m)))
    expect_error(client.call_async("thread/start", {}), -32600, "Not initialized")
    client.initialize()
    expect_error(client.call_async("initialize", {"clientInfo": {"name": "x", "version": "1"}}), -32600, "Already initialized")

    def wait_errors(n):
        deadline = time.time() + 60
        while len(errors) < n:
            check(time.time() < deadline, f"no id-less error #{n}")
            time.sleep(0.02)

    client.send_raw(b'{"id": 1000, "method": "thread/start", "params": {\n')
    wait_errors(1)
    check(errors[-1]["error"]["code"] == -32700, f"bad JSON: {errors[-1]}")
    client.send_raw(b'[1, 2, 3]\n')
    wait_errors(2)
    check(errors[-1]["error"]["code"] == -32600, f"batch: {errors[-1]}")
    expect_error(client.call_async("thread/fly", {}), -32601, "thread/fly")
    thread, turn = new_thread(client)
    checker.skip_out = True  # what follows breaks the schema on purpose
    expect_error(client.call_async("tool/shell", {"threadId": thread, "turnId": turn, "callId": "m"}), -32602, "command")
    expect_error(client.call_async("tool/shell", {"threadId": thread, "turnId": turn, "callId": "m", "command": "ls"}), -32602, "command")
    expect_error(client.call_async("tool/shell", {"threadId": thread, "turnId": turn, "callId": "m", "command": ["ls", 7]}), -32602, "command[1]")
    expect_error(client.call_async("tool/shell", {"threadId": 5, "turnId": turn, "callId": "m", "command": ["ls"]}), -32602, "threadId")
    expect_error(client.call_async("tool/shell", {"threadId": thread, "turnId": turn, "callId": "m", "command": []}), -32602, "command")
    expect_error(client.call_async("thread/start", {"cwd": WS, "sandbox": "workspace-write"}), -32602, "sandbox")
    expect_error(client.call_async("thread/start", {"cwd": WS, "approvalPolicy": "sometimes"}), -32602, "approvalPolicy")
    expect_error(client.call_async("turn/interrupt", {"threadId": thread}), -32602, "turnId")
    expect_error(client.call_async("command/exec", {"command": []}), -32600, "command must not be empty")
    checker.skip_out = False
    # A 100 MiB line: refused with -32600 while it streams in, never buffered whole.
    chunk = b"x" * (1 << 20)

    def flood():
        client.send_raw(b'{"id": 2000, "method": "tool/shell", "params": {"pad": "')
        for _ in range(100):
            client.send_raw(chunk)
        client.send_raw(b'"}}\n')

    writer = threading.Thread(target=flood)
    writer.start()
    writer.join(timeout=300)
    check(not writer.is_alive(), "the server stopped reading the big line")
    wait_errors(3)
    check(errors[-1]["error"]["code"] == -32600 and "exceeds" in errors[-1]["error"]["message"], f"big line: {errors[-1]}")
    # Still serving, with correct results.
    result = shell(client, thread, turn, "ok", ["/bin/echo", "alive"]).result(timeout=60)
    check(result["status"] == "completed" and result["stdout"] == "alive\n", f"still serving: {result}")
    explained = client.call("policy/explain", {"threadId": thread, "command": ["printf", "x"]})
    check(isinstance(explained, dict) and explained, f"policy/explain: {explained}")
    rendered = client.call("instructions/render", {"threadId": thread})
    check("approval" in rendered["text"].lower() or rendered["text"], f"instructions: {rendered}")
    executed = client.call("command/exec", {"command": ["/bin/echo", "sandboxed"], "cwd": WS})
    check(executed["exitCode"] == 0 and executed["stdout"] == "sandboxed\n", f"command/exec: {executed}")
    client.close()
    checker.finish()


def scenario_patch():
    """tool/applyPatch: a workspace patch applies with fileChange items; one that needs approval
    sends the changes in item/fileChange/requestApproval and a decline writes nothing."""
    recorder, checker = Recorder(), SchemaChecker()
    client = start(recorder, checker)
    thread, turn = new_thread(client)
    patch = "*** Begin Patch\n*** Add File: hello.txt\n+hi\n*** End Patch\n"
    result = client.call("tool/applyPatch", {"threadId": thread, "turnId": turn, "callId": "p1", "patch": patch})
    check(result["status"] == "completed", f"applied: {result}")
    check([c["kind"]["type"] for c in result["changes"]] == ["add"], f"changes: {result['changes']}")
    with open(os.path.join(WS, "hello.txt")) as f:
        check(f.read() == "hi\n", "file written")
    items = [p["item"] for p in recorder.notes_of("item/completed") if p["item"]["id"] == "p1"]
    check(len(items) == 1 and items[0]["type"] == "fileChange" and items[0]["status"] == "completed", f"item: {items}")
    ro_thread, ro_turn = new_thread(client, permissionProfile=":read-only")
    update = "*** Begin Patch\n*** Update File: hello.txt\n@@\n-hi\n+bye\n*** End Patch\n"
    pending = client.call_async("tool/applyPatch", {"threadId": ro_thread, "turnId": ro_turn, "callId": "p2", "patch": update})
    recorder.wait_for(lambda: "p2" in recorder.approvals, "file-change approval")
    request_id, params = recorder.approvals["p2"][0]
    check(params["changes"] and params["changes"][0]["kind"]["type"] == "update" and "+bye" in params["changes"][0]["diff"], f"changes sent: {params}")
    client.reply(request_id, {"decision": "decline"})
    declined = pending.result(timeout=60)
    check(declined["status"] == "declined", f"declined: {declined}")
    with open(os.path.join(WS, "hello.txt")) as f:
        check(f.read() == "hi\n", "a declined patch writes nothing")
    client.close()
    checker.finish()

def bwrap_argv_of(marker):
    """The argv of the running bubblewrap with MARKER in one of its arguments."""
    deadline = time.time() + 60
    while time.time() < deadline:
        for pid in os.listdir("/proc"):
            if not pid.isdigit():
                continue
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    argv = [a.decode() for a in f.read().split(b"\0")[:-1]]
            except (OSError, UnicodeDecodeError):
                continue
            if argv and os.path.basename(argv[0]) == "bwrap" and any(marker in a for a in argv):
                return argv
        time.sleep(0.01)
    raise AssertionError(f"no bubblewrap running a command with {marker}")


def normalized_bwrap(argv):
    """Descriptor numbers differ between processes: each becomes FD; bubblewrap's status
    descriptor (only a launcher that reads it passes one) is left out."""
    out, skip = [], False
    for i, arg in enumerate(argv):
        if skip:
            skip = False
            continue
        if arg == "--json-status-fd":
            skip = True
            continue
        if i > 0 and argv[i - 1] in ("--ro-bind-data", "--add-seccomp-fd") and arg.isdigit():
            out.append("FD")
        else:
            out.append(arg)
    return out


def scenario_launch_cache():
    """A thread launches bubblewrap from what it computed for its profile on the first call,
    yet what a command can change is computed afresh: a `.git` (and a nested repository)
    created between two calls is protected in the second (its writes fail in the real
    sandbox), and the second call's bubblewrap argv is what a fresh computation gives."""
    ws = os.path.join(WORK, "cache-ws")
    os.makedirs(os.path.join(ws, "src"))
    recorder, checker = Recorder(), SchemaChecker()
    client = start(recorder, checker)
    thread = client.call("thread/start", {"cwd": ws, "approvalPolicy": "never",
                                          "permissionProfile": ":workspace"})["thread"]["id"]
    turn = client.call("turn/start", {"threadId": thread})["turn"]["id"]
    first = shell(client, thread, turn, "c1", ["/bin/sh", "-c", "echo one > file.txt"]).result(timeout=60)
    check(first["status"] == "completed" and first["exitCode"] == 0, f"first call: {first}")
    check(first["sandboxType"] == "linuxSeccomp", f"sandboxed: {first}")
    # The host creates repositories after the first launch.
    targets = [".git/config", ".git/hooks/pre-commit", "src/nested/.git/config", "src/nested/.git/hooks/post-checkout"]
    for repo in (ws, os.path.join(ws, "src", "nested")):
        os.makedirs(os.path.join(repo, ".git", "hooks"))
        with open(os.path.join(repo, ".git", "config"), "w") as f:
            f.write("[core]\n")
    attack = "; ".join(f"if (echo evil >> {t}) 2>/dev/null; then echo WROTE {t}; fi" for t in targets)
    # Other programs may add or remove repositories under /tmp (a writable root of
    # :workspace) between the launch and the fresh computation, which changes the plan:
    # the comparison gets three tries; a launch from a stale plan fails all three.
    differences = []
    for attempt in range(3):
        # The command lasts long enough (1.x s, a unique duration) for its bubblewrap to be
        # read in /proc.
        marker = f"1.{time.time_ns() % 1000000:06d}{attempt}"
        script = f"{attack}; echo two > file.txt; exec sleep {marker}"
        pending = shell(client, thread, turn, f"c2-{attempt}", ["/bin/sh", "-c", script])
        live = normalized_bwrap(bwrap_argv_of(marker))
        second = pending.result(timeout=60)
        check(second["status"] == "completed" and second["exitCode"] == 0, f"second call: {second}")
        check("WROTE" not in second["stdout"], f"a write into a new repository got through: {second['stdout']}")
        with open(os.path.join(ws, "file.txt")) as f:
            check(f.read() == "two\n", "the workspace itself stays writable")
        for repo in (ws, os.path.join(ws, "src", "nested")):
            with open(os.path.join(repo, ".git", "config")) as f:
                check(f.read() == "[core]\n", f"{repo}/.git/config untouched")
            check(not os.path.exists(os.path.join(repo, ".git", "hooks", "pre-commit"))
                  and not os.path.exists(os.path.join(repo, ".git", "hooks", "post-checkout")), "no hook planted")
        check(any(arg.endswith("src/nested/.git") for arg in live), f"the nested repository is in the mount plan: {live}")
        # `airlock sandbox --dry-run`: a fresh process computing everything for the same
        # profile, workspace and command.
        fresh = subprocess.run([AIRLOCK, "sandbox", "--dry-run", "-P", ":workspace", "-C", ws, "--", "/bin/sh", "-c", script],
                               env=ENV, cwd=ws, capture_output=True, text=True, timeout=60)
        check(fresh.returncode == 0, f"airlock sandbox --dry-run: {fresh.stderr}")
        expected = normalized_bwrap(shlex.split(fresh.stdout.strip().splitlines()[-1]))
        if live == expected:
            break
        differences.append(f"live\n{live}\nfresh\n{expected}")
    else:
        raise AssertionError("the cached launch's bubblewrap argv differs from a fresh computation:\n" + "\n".join(differences))
    client.close()
    checker.finish()


def scenario_descriptors():
    """bubblewrap gets exactly the descriptors of its own launch: none the server inherited
    (a writable host file at 7, 100 and 1023) and none of the launches running beside it
    (24 calls in flight on two threads), whatever the server's way of starting bubblewrap."""
    secret = os.path.join(WORK, "host-file.txt")
    with open(secret, "w") as f:
        f.write("host\n")
    wrapper = ("import os, sys\n"
               f"fd = os.open({secret!r}, os.O_RDWR)\n"
               "for n in (7, 100, 1023):\n"
               "    os.dup2(fd, n, inheritable=True)\n"
               "os.execv(sys.argv[1], sys.argv[1:])\n")
    recorder, checker = Recorder(), SchemaChecker()
    client = start(recorder, checker, argv=[sys.executable, "-c", wrapper, AIRLOCK, "serve"])
    probe = ("ls /proc/self/fd | tr '\\n' ' '; echo; "
             "for fd in 3 4 5 6 7 8 9; do if (echo pwned >&$fd) 2>/dev/null; then echo WROTE $fd; fi; done")
    calls = []
    for t in range(2):
        thread = client.call("thread/start", {"cwd": WS, "approvalPolicy": "never",
                                              "permissionProfile": ":workspace"})["thread"]["id"]
        turn = client.call("turn/start", {"threadId": thread})["turn"]["id"]
        calls += [shell(client, thread, turn, f"fd{t}-{i}", ["/bin/sh", "-c", probe]) for i in range(12)]
    for call in calls:
        result = call.result(timeout=120)
        check(result["status"] == "completed" and result["exitCode"] == 0, f"probe: {result}")
        check(result["sandboxType"] == "linuxSeccomp", f"sandboxed: {result}")
        listed = result["stdout"].splitlines()[0].split()
        check(sorted(listed, key=int) == ["0", "1", "2", "3"], f"descriptors of the command: {listed}")
        check("WROTE" not in result["stdout"], f"a descriptor reached the command: {result['stdout']}")
    with open(secret) as f:
        check(f.read() == "host\n", "the host file the server holds is untouched")
    client.close()
    checker.finish()


def scenario_server_killed():
    """A server killed outright takes its running sandboxes with it (bubblewrap's
    --die-with-parent): nothing is left running, reparented to init."""
    recorder, checker = Recorder(), SchemaChecker()
    client = start(recorder, checker)
    thread = client.call("thread/start", {"cwd": WS, "approvalPolicy": "never",
                                          "permissionProfile": ":workspace"})["thread"]["id"]
    turn = client.call("turn/start", {"threadId": thread})["turn"]["id"]
    marker = "31.4159"
    shell(client, thread, turn, "long", ["sleep", marker])
    deadline = time.time() + 30
    while not processes_with(marker):
        check(time.time() < deadline, "the sleep never started")
        time.sleep(0.05)
    client.proc.kill()
    client.proc.wait()
    wait_gone(marker)


def scenario_stdio_kinds():
    """stdio serving works whatever stdin and stdout are: a socket pair, and pipes (the server
    reads and writes its own non-blocking descriptions of them; the description of stdout it
    shares with this process stays blocking)."""
    # A socket pair as stdin and stdout.
    ours, theirs = socket.socketpair()
    server = subprocess.Popen([AIRLOCK, "serve"], env=ENV, cwd=WS, stdin=theirs, stdout=theirs,
                              stderr=subprocess.DEVNULL)
    theirs.close()
    ours.sendall(b'{"id": 1, "method": "initialize", "params": {"clientInfo": {"name": "t", "version": "1"}}}\n')
    ours.settimeout(30)
    answer = b""
    while not answer.endswith(b"\n"):
        chunk = ours.recv(65536)
        check(chunk, "the server answered on the socket pair")
        answer += chunk
    check(json.loads(answer).get("id") == 1 and "result" in json.loads(answer), f"initialize answer: {answer!r}")
    ours.shutdown(socket.SHUT_WR)
    check(server.wait(timeout=30) == 0, "the server ends when its socket stdin ends")
    ours.close()

    # Pipes whose read end's description the test keeps blocking.
    rfd, wfd = os.pipe()
    server = subprocess.Popen([AIRLOCK, "serve"], env=ENV, cwd=WS, stdin=subprocess.PIPE, stdout=wfd,
                              stderr=subprocess.DEVNULL)
    server.stdin.write(b'{"id": 7, "method": "initialize", "params": {"clientInfo": {"name": "t", "version": "1"}}}\n')
    server.stdin.flush()
    answer = b""
    while not answer.endswith(b"\n"):
        chunk = os.read(rfd, 65536)
        check(chunk, "the server answered on the pipe")
        answer += chunk
    check(json.loads(answer).get("id") == 7, f"initialize answer: {answer!r}")
    # `wfd` shares its open file description with the server's stdout.
    check(not fcntl.fcntl(wfd, fcntl.F_GETFL) & os.O_NONBLOCK, "the shared description of stdout stays blocking")
    os.close(wfd)
    server.stdin.close()
    check(server.wait(timeout=30) == 0, "the server ends when its stdin ends")
    os.close(rfd)


def launch_burst(client, marker, calls=20):
    """Two threads with `calls` sleeps in flight between them; returns once the first sleep
    runs, while the others' sandboxes are still being set up."""
    turns = []
    for t in range(2):
        thread = client.call("thread/start", {"cwd": WS, "approvalPolicy": "never",
                                              "permissionProfile": ":workspace"})["thread"]["id"]
        turn = client.call("turn/start", {"threadId": thread})["turn"]["id"]
        turns.append((thread, turn))
    for i in range(calls):
        thread, turn = turns[i % 2]
        shell(client, thread, turn, f"burst{i}", ["sleep", marker])
    deadline = time.time() + 60
    while not processes_with(marker):
        check(time.time() < deadline, "no sleep ever started")
        time.sleep(0.002)
    return turns


def scenario_stopped_mid_launch():
    """A server stopped by SIGTERM, SIGINT or SIGHUP while launches are being set up kills
    every one of them, sandbox included, and exits with 128 + the signal."""
    for round, sig in enumerate([signal.SIGTERM, signal.SIGINT, signal.SIGHUP] * 2):
        recorder, checker = Recorder(), SchemaChecker()
        log = open(os.path.join(WORK, f"stop{round}.stderr"), "w+")
        client = start(recorder, checker, stderr=log)
        marker = f"41.{round}{time.time_ns() % 100000:05d}"
        launch_burst(client, marker)
        client.proc.send_signal(sig)
        check(client.proc.wait(timeout=30) == 128 + sig, f"exit status {client.proc.returncode} for {sig!r}")
        wait_gone(marker)
        log.seek(0)
        check(f"stopped by {signal.Signals(sig).name}" in log.read(), "the server says why it stopped")


def scenario_interrupted_mid_launch():
    """`turn/interrupt` while launches are being set up kills them all, sandboxes included."""
    for round in range(4):
        recorder, checker = Recorder(), SchemaChecker()
        client = start(recorder, checker)
        marker = f"43.{round}{time.time_ns() % 100000:05d}"
        turns = launch_burst(client, marker)
        for thread, turn in turns:
            client.call("turn/interrupt", {"threadId": thread, "turnId": turn})
        wait_gone(marker)
        client.close()


SCENARIOS = {name[len("scenario_"):]: fn for name, fn in globals().items() if name.startswith("scenario_")}

if __name__ == "__main__":
    name = sys.argv[1]
    SCENARIOS[name]()
    print(f"{name}: ok")

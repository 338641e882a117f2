"""Shared by the `airlock serve` scenarios (scenarios.py, scenarios_launch.py): the environment,
the schema checker, the traffic recorder and the helpers that start the server and send calls."""

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

#!/usr/bin/env python3
"""Drives the real `airlock serve` with the reference client (examples/airlock_client.py) and
checks every message of the traffic against the schema `airlock schema` wrote.

Usage: scenarios.py SCENARIO   (concurrent | session_cache | interrupt | disconnect | unix | malformed |
                               patch | launch_cache | descriptors | server_killed | stdio_kinds |
                               stopped_mid_launch | interrupted_mid_launch)
Environment: AIRLOCK_BIN, SCHEMA_DIR, WORK_DIR (a fresh directory), REPO_ROOT.
Exits 0 when every check passed; prints what failed otherwise.
"""


import sys

sys.dont_write_bytecode = True  # leave no __pycache__ in the checkout
from serve_harness import *  # noqa: E402,F401,F403

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


from scenarios_launch import *  # noqa: E402,F401,F403
from scenarios_early import *  # noqa: E402,F401,F403

SCENARIOS = {name[len("scenario_"):]: fn for name, fn in globals().items() if name.startswith("scenario_")}

if __name__ == "__main__":
    name = sys.argv[1]
    SCENARIOS[name]()
    print(f"{name}: ok")

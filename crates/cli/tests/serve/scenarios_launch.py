"""The `airlock serve` scenarios about launching bubblewrap: the launch cache, the descriptors
each sandbox gets, and killing launches (server killed or stopped, turn interrupted) mid set-up."""

from serve_harness import *  # noqa: F401,F403

def sandbox_mounts(marker):
    """The mount table of the running `sleep MARKER` (inside its sandbox), one
    (mount point, mount options, filesystem type) per mount, in mount order. Mount ids and
    device numbers differ between two sandboxes and are left out. bubblewrap receives its
    options through a pipe (`--args`), so the mounts are the launch's plan as carried out."""
    deadline = time.time() + 60
    while time.time() < deadline:
        for pid in os.listdir("/proc"):
            if not pid.isdigit():
                continue
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    argv = f.read().split(b"\0")[:-1]
                if argv[-1:] != [marker.encode()] or os.path.basename(argv[0]) != b"sleep":
                    continue
                with open(f"/proc/{pid}/mountinfo") as f:
                    lines = f.read().splitlines()
            except (OSError, IndexError):
                continue
            mounts = []
            for line in lines:
                fields = line.split()
                dash = fields.index("-")
                mounts.append((fields[4], fields[5], fields[dash + 1]))
            return mounts
        time.sleep(0.01)
    raise AssertionError(f"no sandboxed sleep {marker} running")


def scenario_launch_cache():
    """A thread launches bubblewrap from what it computed for its profile on the first call,
    yet what a command can change is computed afresh: a `.git` (and a nested repository)
    created between two calls is protected in the second (its writes fail in the real
    sandbox), and the second call's sandbox has the mounts of a fresh `airlock sandbox`
    launch."""
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
        live = sandbox_mounts(marker)
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
        nested = os.path.join(ws, "src", "nested", ".git")
        check(any(point == nested and options.split(",")[0] == "ro" for point, options, _ in live),
              f"the nested repository is mounted read-only: {live}")
        # `airlock sandbox`: a fresh process computing everything for the same profile and
        # workspace.
        fresh_marker = f"{marker}9"
        fresh = subprocess.Popen([AIRLOCK, "sandbox", "-P", ":workspace", "-C", ws, "--", "sleep", fresh_marker],
                                 env=ENV, cwd=ws, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        try:
            expected = sandbox_mounts(fresh_marker)
        finally:
            fresh.terminate()  # airlock sandbox then stops its launch whole
            fresh.wait(timeout=60)
        if live == expected:
            break
        differences.append(f"live\n{live}\nfresh\n{expected}")
    else:
        raise AssertionError("the cached launch's mounts differ from a fresh launch's:\n" + "\n".join(differences))
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
    # Unsandboxed commands started meanwhile inherit nothing of the sandboxed launches
    # either (seccomp programs, status channels, argument pipes: all close-on-exec).
    thread = client.call("thread/start", {"cwd": WS, "approvalPolicy": "never",
                                          "permissionProfile": ":danger-full-access"})["thread"]["id"]
    turn = client.call("turn/start", {"threadId": thread})["turn"]["id"]
    unsandboxed = [shell(client, thread, turn, f"fd-open-{i}", ["/bin/sh", "-c", probe]) for i in range(12)]
    for call in calls + unsandboxed:
        result = call.result(timeout=120)
        check(result["status"] == "completed" and result["exitCode"] == 0, f"probe: {result}")
        check(result["sandboxType"] == ("none" if call in unsandboxed else "linuxSeccomp"), f"sandboxed: {result}")
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


def scenario_status_channels():
    """Red-team finding (session 11): an unsandboxed command started while a launch through
    the helper was being spawned inherited that launch's status channel, and a fake set-up
    error written into it turned a call whose command ran into "could not start the
    sandbox". Now no command holds another launch's channel: 60 pairs in flight, each an
    unsandboxed command that writes a fake error into every status channel it holds, and a
    helper launch (a profile with the whole disk writable) that creates a file."""
    ws = os.path.join(WORK, "status-ws")
    os.makedirs(ws)
    with open(os.path.join(HOME, "config.toml"), "w") as f:
        f.write('[permissions.fullw]\nextends = ":workspace"\n[permissions.fullw.filesystem]\n":root" = "write"\n')
    spoof = ("import os\nheld = 0\n"
             "for fd in os.listdir('/proc/self/fd'):\n"
             "    try:\n        target = os.readlink('/proc/self/fd/' + fd)\n    except OSError:\n        continue\n"
             "    if 'airlock-status' in target:\n"
             "        os.write(int(fd), b'{\"airlock-setup-error\":\"SPOOFED\"}\\n')\n        held += 1\n"
             "print(held)\n")
    recorder, checker = Recorder(), SchemaChecker()
    client = start(recorder, checker)
    threads = {}
    for profile in (":danger-full-access", "fullw"):
        thread = client.call("thread/start", {"cwd": ws, "approvalPolicy": "never",
                                              "permissionProfile": profile})["thread"]["id"]
        threads[profile] = (thread, client.call("turn/start", {"threadId": thread})["turn"]["id"])
    helper_calls, spoofers = [], []
    for i in range(60):
        helper_calls.append(shell(client, *threads["fullw"], f"helper{i}", ["/usr/bin/touch", f"ran_{i}"]))
        spoofers.append(shell(client, *threads[":danger-full-access"], f"spoof{i}", [sys.executable, "-c", spoof]))
    held = sum(int(call.result(timeout=120)["stdout"].split()[0]) for call in spoofers)
    check(held == 0, f"unsandboxed commands held {held} status channels of other launches")
    for i, call in enumerate(helper_calls):
        result = call.result(timeout=120)
        check(result["status"] == "completed" and result["exitCode"] == 0, f"helper launch {i}: {result}")
        check(os.path.exists(os.path.join(ws, f"ran_{i}")), f"helper launch {i} ran its command")
    client.close()
    checker.finish()

"""The `airlock serve` scenarios about starting bubblewrap before the mount plan is known
(`bwrap --args N -- COMMAND`, the options sent through a pipe): the ordinary way when the
plan needs descriptors of its own, and nothing run when the plan fails."""

from serve_harness import *  # noqa: F401,F403


def bwrap_argv_running(marker):
    """The argv of the bubblewrap whose command carries MARKER, once the command runs
    (a bubblewrap killed before, started early for a launch that went the ordinary way,
    is gone by then)."""
    deadline = time.time() + 60
    while not processes_with(marker):
        check(time.time() < deadline, f"no sleep {marker} ever ran")
        time.sleep(0.005)
    argvs = []
    for pid in processes_with(marker, sleep_only=False):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                argv = [a.decode() for a in f.read().split(b"\0")[:-1]]
        except (OSError, UnicodeDecodeError):
            continue
        if argv and os.path.basename(argv[0]) == "bwrap" and argv not in argvs:
            argvs.append(argv)
    check(len(argvs) == 1, f"one bubblewrap command line runs {marker}: {argvs}")
    return argvs[0]


def scenario_early_start():
    ws = os.path.join(WORK, "early-ws")
    os.makedirs(ws)
    with open(os.path.join(ws, "secret.txt"), "w") as f:
        f.write("private\n")
    with open(os.path.join(HOME, "config.toml"), "w") as f:
        f.write(f'[permissions.masked]\nextends = ":workspace"\n'
                f'[permissions.masked.filesystem]\n{json.dumps(os.path.join(ws, "secret.txt"))} = "none"\n')
    recorder, checker = Recorder(), SchemaChecker()
    client = start(recorder, checker)

    def call(profile, cwd, command, call_id):
        thread = client.call("thread/start", {"cwd": cwd, "approvalPolicy": "never",
                                              "permissionProfile": profile})["thread"]["id"]
        turn = client.call("turn/start", {"threadId": thread})["turn"]["id"]
        return shell(client, thread, turn, call_id, command)

    # An ordinary launch: bubblewrap is started with only `--args`, the options come later.
    marker = f"1.{time.time_ns() % 1000000:06d}1"
    pending = call(":workspace", ws, ["/bin/sh", "-c", 'echo ok > plain.txt; exec sleep "$1"', "sh", marker], "plain")
    argv = bwrap_argv_running(marker)
    check(argv[1:4] == ["--args", argv[2], "--"] and argv[2].isdigit(), f"started early: {argv}")
    check(not any(a.startswith("--bind") or a == "--unshare-user" for a in argv), f"no option on the command line: {argv}")
    result = pending.result(timeout=60)
    check(result["status"] == "completed" and result["exitCode"] == 0, f"plain: {result}")
    check(result["sandboxType"] == "linuxSeccomp", f"sandboxed: {result}")

    # A denied file is masked with `--ro-bind-data`, a descriptor of the plan's own that the
    # early bubblewrap was not given: the launch is started the ordinary way, still confined.
    marker = f"1.{time.time_ns() % 1000000:06d}2"
    script = 'cat secret.txt; echo rc=$?; echo ok > masked.txt; exec sleep "$1"'
    pending = call("masked", ws, ["/bin/sh", "-c", script, "sh", marker], "masked")
    argv = bwrap_argv_running(marker)
    check("--args" not in argv and "--ro-bind-data" in argv and "--unshare-user" in argv,
          f"the options on the command line: {argv}")
    result = pending.result(timeout=60)
    check(result["status"] == "completed" and result["exitCode"] == 0, f"masked: {result}")
    check("private" not in result["stdout"] and "rc=0" not in result["stdout"], f"the denied file is unreadable: {result}")
    with open(os.path.join(ws, "masked.txt")) as f:
        check(f.read() == "ok\n", "the workspace is writable")

    # A plan that fails after bubblewrap was started (a `.git` pointer whose git directory
    # holds the workspace): the call fails as a set-up failure, the waiting bubblewrap is
    # killed and the command never runs.
    bad = os.path.join(WORK, "bad-ws")
    os.makedirs(os.path.join(bad, "sub"))
    with open(os.path.join(bad, "sub", ".git"), "w") as f:
        f.write(f"gitdir: {WORK}\n")
    marker = f"1.{time.time_ns() % 1000000:06d}3"
    for attempt in range(5):
        failed = call(":workspace", bad, ["/bin/sh", "-c", f'touch ran-{attempt}; exec sleep "$1"', "sh", marker],
                      f"bad{attempt}").result(timeout=60)
        check(failed["status"] == "failed", f"a failed plan fails the call: {failed}")
        check(failed["reason"].startswith("could not start the sandbox: cannot protect the repository of")
              and "nothing ran" in failed["reason"], f"the set-up failure is named: {failed}")
        check(not os.path.exists(os.path.join(bad, f"ran-{attempt}")), "the command never ran")
    wait_gone(marker)
    client.close()
    checker.finish()


def scenario_plan_too_long():
    """A workspace whose mount plan neither fits bubblewrap's argument pipe (1 MiB) nor a
    command line (50 nested repositories 12 directories of 240-byte names deep: > 2 MiB):
    the call fails as a set-up failure that names the cause, and nothing ran (red-team
    finding, session 11: it was reported as "cannot start /usr/bin/bwrap")."""
    ws = os.path.join(WORK, "huge-ws")
    for i in range(50):
        deep = os.path.join(ws, f"r{i:03d}", *[f"d{j:02d}" + "y" * 237 for j in range(12)])
        os.makedirs(os.path.join(deep, ".git", "hooks"))
    recorder, checker = Recorder(), SchemaChecker()
    client = start(recorder, checker)
    thread = client.call("thread/start", {"cwd": ws, "approvalPolicy": "never",
                                          "permissionProfile": ":workspace"})["thread"]["id"]
    turn = client.call("turn/start", {"threadId": thread})["turn"]["id"]
    marker = f"huge-{time.time_ns()}"
    result = shell(client, thread, turn, "huge", ["/bin/sh", "-c", 'touch ran; exec sleep "$1"', "sh", marker]).result(timeout=300)
    check(result["status"] == "failed", f"a plan too long fails the call: {result}")
    check(result["reason"].startswith("could not start the sandbox: the sandbox's mount plan has"),
          f"the set-up failure names the cause: {result['reason']}")
    check(not os.path.exists(os.path.join(ws, "ran")), "the command never ran")
    wait_gone(marker)
    client.close()
    checker.finish()

//! Real tools through the managed network (spec 12 §Tests), against servers on this
//! machine's loopback only: `git clone` over HTTP, ssh through `proxy-connect`, `pip download`
//! from a local index, `npm` from a local registry stub.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

mod network_support;

use std::net::TcpListener;
use std::path::Path;
use std::process::Command;
use std::process::Stdio;
use std::time::Duration;

use network_support::origin;
use network_support::run;
use network_support::setup;

/// A static file server over `dir` on loopback (python3's `http.server`), killed on drop.
struct FileServer {
    child: std::process::Child,
    port: u16,
}

impl Drop for FileServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn file_server(dir: &Path) -> FileServer {
    let port = {
        let probe = TcpListener::bind("127.0.0.1:0").unwrap();
        probe.local_addr().unwrap().port()
    };
    let server = FileServer {
        child: Command::new("python3")
            .env_remove("LD_LIBRARY_PATH") // cargo's; writable in a /tmp checkout
            .args([
                "-m",
                "http.server",
                &port.to_string(),
                "--bind",
                "127.0.0.1",
            ])
            .current_dir(dir)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("these tests need python3"),
        port,
    };
    for _ in 0..400 {
        if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
            return server;
        }
        std::thread::sleep(Duration::from_millis(25));
    }
    panic!("the file server did not start");
}

#[test]
fn git_clone_over_http_goes_through_the_proxy() {
    let served = tempfile::Builder::new()
        .prefix("airlock-net-git-")
        .tempdir_in("/var/tmp")
        .unwrap();
    let git = |args: &[&str], dir: &Path| {
        let ok = Command::new("git")
            .env_remove("LD_LIBRARY_PATH") // cargo's; writable in a /tmp checkout
            .args(args)
            .current_dir(dir)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("HOME", served.path())
            .status()
            .unwrap();
        assert!(ok.success(), "git {args:?}");
    };
    let work = served.path().join("work");
    std::fs::create_dir(&work).unwrap();
    git(&["init", "-q"], &work);
    std::fs::write(work.join("hello.txt"), "through the proxy\n").unwrap();
    git(&["add", "hello.txt"], &work);
    git(
        &[
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "commit",
            "-qm",
            "one",
        ],
        &work,
    );
    git(
        &["clone", "-q", "--bare", "work", "repo.git"],
        served.path(),
    );
    git(&["update-server-info"], &served.path().join("repo.git"));
    let server = file_server(served.path());
    let port = server.port;
    let setup = setup(&format!(
        "[permissions.net.network.domains]\n\"localhost:{port}\" = \"allow\"\n"
    ));
    let (out, err) = run(
        &setup,
        &format!(
            "git clone -q http://localhost:{port}/repo.git cloned && cat cloned/hello.txt; \
             git clone -q http://127.0.0.1:{port}/repo.git refused; echo \"refused rc=$?\""
        ),
    );
    assert!(out.contains("through the proxy"), "{out}\n{err}");
    assert!(out.contains("refused rc=128"), "{out}\n{err}");
    assert!(setup.ws.path().join("cloned/hello.txt").exists());
    assert!(
        err.contains("Network access to \"127.0.0.1\" was blocked"),
        "{err}"
    );
}

#[test]
fn proxy_connect_tunnels_stdio_for_ssh_and_is_refused_for_other_hosts() {
    let port = origin();
    let setup = setup(&format!(
        "[permissions.net.network.domains]\n\"localhost:{port}\" = \"allow\"\n"
    ));
    let (out, err) = run(
        &setup,
        &format!(
            "echo \"$GIT_SSH_COMMAND\"; \
             printf 'GET / HTTP/1.0\\r\\n\\r\\n' | /dev/.airlock-bridge proxy-connect localhost {port}; \
             printf x | /dev/.airlock-bridge proxy-connect localhost 22; echo \"refused rc=$?\""
        ),
    );
    assert!(
        out.contains("ssh -o ProxyCommand='/dev/.airlock-bridge proxy-connect %h %p'"),
        "{out}"
    );
    assert!(out.contains(&format!("origin {port}")), "{out}\n{err}");
    assert!(out.contains("refused rc=1"), "{out}\n{err}");
    assert!(
        err.contains("airlock proxy-connect: Network access to \"localhost\" was blocked"),
        "{err}"
    );
}

/// Writes a minimal wheel `tinypkg-1.0` and a PEP 503 simple index for it under `dir`.
fn python_index(dir: &Path) {
    let script = r#"
import os, sys, zipfile, hashlib, base64
root = sys.argv[1]
os.makedirs(f"{root}/simple/tinypkg", exist_ok=True)
os.makedirs(f"{root}/files", exist_ok=True)
name = "tinypkg-1.0-py3-none-any.whl"
files = {
    "tinypkg/__init__.py": b"VALUE = 1\n",
    "tinypkg-1.0.dist-info/METADATA": b"Metadata-Version: 2.1\nName: tinypkg\nVersion: 1.0\n",
    "tinypkg-1.0.dist-info/WHEEL": b"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
}
record = ""
for path, data in files.items():
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    record += f"{path},sha256={digest},{len(data)}\n"
record += "tinypkg-1.0.dist-info/RECORD,,\n"
with zipfile.ZipFile(f"{root}/files/{name}", "w") as wheel:
    for path, data in files.items():
        wheel.writestr(path, data)
    wheel.writestr("tinypkg-1.0.dist-info/RECORD", record)
with open(f"{root}/simple/tinypkg/index.html", "w") as index:
    index.write(f'<html><body><a href="../../files/{name}">{name}</a></body></html>\n')
"#;
    let ok = Command::new("python3")
        .env_remove("LD_LIBRARY_PATH") // cargo's; writable in a /tmp checkout
        .args(["-c", script, dir.to_str().unwrap()])
        .status()
        .unwrap();
    assert!(ok.success());
}

#[test]
fn pip_download_from_a_local_index_goes_through_the_proxy() {
    let has_pip = Command::new("python3")
        .env_remove("LD_LIBRARY_PATH") // cargo's; writable in a /tmp checkout
        .args(["-m", "pip", "--version"])
        .output()
        .is_ok_and(|out| out.status.success());
    if !has_pip {
        eprintln!("skipping: python3 has no pip");
        return;
    }
    let served = tempfile::Builder::new()
        .prefix("airlock-net-pypi-")
        .tempdir_in("/var/tmp")
        .unwrap();
    python_index(served.path());
    let server = file_server(served.path());
    let port = server.port;
    let setup = setup(&format!(
        "[permissions.net.network.domains]\n\"localhost:{port}\" = \"allow\"\n"
    ));
    let pip = "python3 -m pip download --no-deps --no-cache-dir --disable-pip-version-check --retries 0 --timeout 20";
    let (out, err) = run(
        &setup,
        &format!(
            "{pip} --index-url http://localhost:{port}/simple/ -d dl tinypkg >/dev/null 2>&1; ls dl; \
             {pip} --index-url http://127.0.0.1:{port}/simple/ -d dl2 tinypkg >/dev/null 2>&1; echo \"refused rc=$?\""
        ),
    );
    assert!(out.contains("tinypkg-1.0-py3-none-any.whl"), "{out}\n{err}");
    assert!(
        setup
            .ws
            .path()
            .join("dl/tinypkg-1.0-py3-none-any.whl")
            .exists()
    );
    assert!(!out.contains("refused rc=0"), "{out}\n{err}");
    assert!(
        err.contains("Network access to \"127.0.0.1\" was blocked"),
        "{err}"
    );
}

#[test]
fn npm_reads_a_local_registry_stub_through_the_proxy() {
    if !Command::new("npm")
        .env_remove("LD_LIBRARY_PATH") // cargo's; writable in a /tmp checkout
        .arg("--version")
        .output()
        .is_ok_and(|out| out.status.success())
    {
        eprintln!("skipping: npm is not installed");
        return;
    }
    let served = tempfile::Builder::new()
        .prefix("airlock-net-npm-")
        .tempdir_in("/var/tmp")
        .unwrap();
    std::fs::write(
        served.path().join("tinypkg"),
        r#"{"name":"tinypkg","dist-tags":{"latest":"1.0.0"},"versions":{"1.0.0":{"name":"tinypkg","version":"1.0.0","description":"served through the proxy","dist":{"tarball":"http://localhost:1/tinypkg-1.0.0.tgz"}}}}"#,
    )
    .unwrap();
    let server = file_server(served.path());
    let port = server.port;
    let setup = setup(&format!(
        "[permissions.net.network.domains]\n\"localhost:{port}\" = \"allow\"\n"
    ));
    let (out, err) = run(
        &setup,
        &format!(
            "export npm_config_cache=\"$PWD/.npm-cache\" npm_config_fetch_retries=0; \
             npm view tinypkg description --registry http://localhost:{port}/; \
             npm view tinypkg description --registry http://127.0.0.1:{port}/ >/dev/null 2>&1; echo \"refused rc=$?\""
        ),
    );
    assert!(out.contains("served through the proxy"), "{out}\n{err}");
    assert!(!out.contains("refused rc=0"), "{out}\n{err}");
    assert!(
        err.contains("Network access to \"127.0.0.1\" was blocked"),
        "{err}"
    );
}

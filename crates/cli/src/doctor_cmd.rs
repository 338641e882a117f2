//! `airlock doctor`: can this host enforce the sandbox? One line per check, with the
//! fix for each failure (issue 4 item 7). Every check that matters is a real trial
//! run, not a guess from version numbers.
//!
//! Exit status: 0 when every check passed; 1 when any check FAILs (the default profile
//! may still be enforceable, e.g. with the `airlock` executable inside a writable root,
//! but the host is not safe to use as it is).

mod git_bare;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};

use clap::Args;
use serde::Serialize;

/// Arguments of `airlock doctor`.
#[derive(Debug, Args)]
pub struct DoctorArgs {
    /// Print the checks as JSON (`[{"check":..,"ok":..,"detail":..,"fix":..}]`).
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Serialize)]
struct Check {
    check: &'static str,
    ok: bool,
    detail: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    fix: Option<String>,
}

fn check(check: &'static str, ok: bool, detail: impl Into<String>, fix: Option<&str>) -> Check {
    Check {
        check,
        ok,
        detail: detail.into(),
        fix: if ok { None } else { fix.map(str::to_string) },
    }
}

fn run_quiet(program: &Path, args: &[&str]) -> Result<String, String> {
    let out = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| e.to_string())?;
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    if out.status.success() {
        Ok(text.trim().to_string())
    } else {
        Err(text.trim().lines().last().unwrap_or("failed").to_string())
    }
}

fn read_trimmed(path: &str) -> Option<String> {
    std::fs::read_to_string(path)
        .ok()
        .map(|s| s.trim().to_string())
}

/// `[sandbox] bwrap_path` and the writable roots of the default profile from the current
/// directory.
fn config_and_roots() -> Result<(Option<PathBuf>, Vec<PathBuf>), String> {
    use airlock_permissions::{
        ConfigEnv, file_system_sandbox_policy, load_config, select_permission_profile,
    };
    let config = load_config(&ConfigEnv::from_process(), &[]).map_err(|e| e.to_string())?;
    let configured =
        airlock_sandbox::bwrap_path_from_config(&config.table).map_err(|e| e.to_string())?;
    let cwd = std::env::current_dir().map_err(|e| e.to_string())?;
    let roots = select_permission_profile(&config, None, &cwd)
        .map(|selected| {
            let policy = file_system_sandbox_policy(&selected.materialized());
            airlock_linux_sandbox::bwrap_path::writable_roots(&policy, &cwd)
        })
        .map_err(|e| e.to_string())?;
    Ok((configured, roots))
}

/// The bubblewrap `airlock sandbox`/`exec` would run under the default profile from the
/// current directory: `[sandbox] bwrap_path` or the default locations, refused when the
/// profile's writable roots (or a non-root user) could replace it.
fn choose_bwrap() -> Result<airlock_linux_sandbox::bwrap_path::BwrapChoice, String> {
    let (configured, roots) = config_and_roots()?;
    airlock_linux_sandbox::bwrap_path::choose_bwrap(configured.as_deref(), &roots)
        .map_err(|e| e.to_string())
}

/// The `airlock` executable is its own sandbox helper: inside a writable root (e.g. a
/// workspace's `target/release/airlock`), a confined command could replace it.
fn executable_check(exe: &Path) -> Check {
    let resolved = std::fs::canonicalize(exe).unwrap_or_else(|_| exe.to_path_buf());
    let inside = config_and_roots().map(|(_, roots)| {
        roots
            .into_iter()
            .find(|root| exe.starts_with(root) || resolved.starts_with(root))
    });
    match inside {
        Ok(None) => check(
            "airlock executable outside the writable roots",
            true,
            resolved.display().to_string(),
            None,
        ),
        Ok(Some(root)) => check(
            "airlock executable outside the writable roots",
            false,
            format!(
                "{} lies inside the writable root {}: a confined command could replace the sandbox helper",
                resolved.display(),
                root.display()
            ),
            Some(
                "install airlock outside the workspace and temporary directories (e.g. /usr/local/bin) and run it from there",
            ),
        ),
        Err(error) => check(
            "airlock executable outside the writable roots",
            false,
            error,
            Some("fix the configuration error above"),
        ),
    }
}

fn checks() -> Vec<Check> {
    let mut out = Vec::new();
    let bwrap = choose_bwrap();
    match &bwrap {
        Ok(choice) => {
            let version = run_quiet(&choice.path, &["--version"]).unwrap_or_else(|e| e);
            out.push(check(
                "bubblewrap",
                true,
                format!("{} ({version})", choice.explanation()),
                None,
            ));
        }
        Err(e) => out.push(check(
            "bubblewrap",
            false,
            e.clone(),
            Some("apt-get install bubblewrap (it installs the root-owned /usr/bin/bwrap), or set `[sandbox] bwrap_path` in config.toml to a root-owned absolute path outside the writable roots"),
        )),
    }
    let bwrap = bwrap.map(|choice| choice.path);
    let max_userns =
        read_trimmed("/proc/sys/user/max_user_namespaces").unwrap_or_else(|| "unknown".into());
    out.push(check(
        "user namespaces allowed",
        max_userns != "0",
        format!("user.max_user_namespaces = {max_userns}"),
        Some("sysctl -w user.max_user_namespaces=15000"),
    ));
    if let Some(value) = read_trimmed("/proc/sys/kernel/apparmor_restrict_unprivileged_userns") {
        out.push(check(
            "AppArmor user-namespace restriction",
            value == "0" || is_root(),
            format!("kernel.apparmor_restrict_unprivileged_userns = {value}"),
            Some("sysctl -w kernel.apparmor_restrict_unprivileged_userns=0 (or install an AppArmor profile that allows bwrap to create user namespaces)"),
        ));
    }
    let seccomp =
        std::fs::read_to_string("/proc/self/status").is_ok_and(|s| s.contains("\nSeccomp:"));
    out.push(check(
        "seccomp",
        seccomp,
        if seccomp {
            "supported"
        } else {
            "kernel lacks CONFIG_SECCOMP_FILTER"
        },
        Some("use a kernel built with CONFIG_SECCOMP_FILTER=y"),
    ));
    if let Ok(path) = &bwrap {
        let proc_trial = run_quiet(
            path,
            &[
                "--unshare-user",
                "--unshare-pid",
                "--ro-bind",
                "/",
                "/",
                "--proc",
                "/proc",
                "--",
                "true",
            ],
        );
        out.push(check(
            "fresh /proc in a pid namespace",
            proc_trial.is_ok(),
            proc_trial.clone().map(|_| "mounts".to_string()).unwrap_or_else(|e| e),
            Some("the kernel refuses to mount /proc in a new pid namespace (nested container?); run on the host or give the container its own /proc"),
        ));
    }
    let exe = std::env::current_exe().unwrap_or_else(|_| PathBuf::from("airlock"));
    out.push(executable_check(&exe));
    let tmp = std::env::temp_dir();
    let tmp = tmp.to_string_lossy();
    if is_root() {
        out.push(check(
            "Landlock (only for --use-legacy-landlock)",
            true,
            "not offered to root: Landlock cannot take capabilities away; the default bubblewrap sandbox does not need it",
            None,
        ));
    } else {
        let args = [
            "sandbox",
            "--use-legacy-landlock",
            "-P",
            ":read-only",
            "-C",
            &tmp,
            "--",
            "true",
        ];
        let landlock = run_quiet(&exe, &args);
        out.push(check(
            "Landlock (only for --use-legacy-landlock)",
            landlock.is_ok(),
            landlock.map(|_| "enforced".to_string()).unwrap_or_else(|e| e),
            Some("add `landlock` to the kernel's lsm= boot parameter; the default bubblewrap sandbox does not need it"),
        ));
    }
    let trial = run_quiet(
        &exe,
        &["sandbox", "-P", ":workspace", "-C", &tmp, "--", "true"],
    );
    out.push(managed_network_check(&exe, &tmp));
    out.push(check(
        "git bare-repository discovery",
        true,
        git_bare::bare_repository_detail(),
        None,
    ));
    out.push(check(
        "default profile (:workspace) enforced",
        trial.is_ok(),
        trial
            .map(|_| "`airlock sandbox -P :workspace -- true` ran confined".to_string())
            .unwrap_or_else(|e| e),
        Some("fix the failed checks above"),
    ));
    out.push(nested_index_check());
    out
}

/// Whether the nested-repository index daemon runs, and where (informational: without it
/// launches scan the tree themselves, and the first one starts it).
fn nested_index_check() -> Check {
    use airlock_linux_sandbox::nested_index;
    let detail = if nested_index::disabled_by_env() {
        format!("off ({}=off)", nested_index::ENV_SWITCH)
    } else {
        match nested_index::daemon_status() {
            Some((socket, true)) => format!("daemon running, socket {}", socket.display()),
            Some((socket, false)) => format!(
                "daemon not running (the next launch starts one), socket {}",
                socket.display()
            ),
            None => "not used: the Airlock home does not exist".to_string(),
        }
    };
    check("nested-repository index", true, detail, None)
}

/// The managed network path end to end (spec 12): a loopback listener of this process is
/// reached from a sandbox whose profile allows only it, through the in-sandbox bridge, the
/// bind-mounted proxy socket and the proxy (`proxy-connect` asks for the CONNECT).
fn managed_network_check(exe: &Path, tmp: &str) -> Check {
    const NAME: &str = "managed network (proxy, bridge, network namespace)";
    const FIX: &str = "fix the bubblewrap checks above; the proxy socket lives in $XDG_RUNTIME_DIR or the temporary directory, which must allow Unix sockets";
    let listener = match std::net::TcpListener::bind("127.0.0.1:0") {
        Ok(listener) => listener,
        Err(e) => {
            return check(
                NAME,
                false,
                format!("cannot listen on loopback: {e}"),
                Some(FIX),
            );
        }
    };
    let port = listener.local_addr().map(|a| a.port()).unwrap_or_default();
    std::thread::spawn(move || {
        let _ = listener.accept();
    });
    let domain =
        format!("permissions.airlock-doctor-net.network.domains.\"127.0.0.1:{port}\"=\"allow\"");
    let script = format!(
        "{} proxy-connect 127.0.0.1 {port} </dev/null",
        airlock_linux_sandbox::bridge::BRIDGE_EXE
    );
    let trial = run_quiet(
        exe,
        &[
            "sandbox",
            "-c",
            "permissions.airlock-doctor-net.extends=\":workspace\"",
            "-c",
            "permissions.airlock-doctor-net.network.enabled=true",
            "-c",
            &domain,
            "-P",
            "airlock-doctor-net",
            "-C",
            tmp,
            "--",
            "sh",
            "-c",
            &script,
        ],
    );
    check(
        NAME,
        trial.is_ok(),
        trial
            .map(|_| {
                "a sandboxed command reached an allowed loopback listener through the proxy"
                    .to_string()
            })
            .unwrap_or_else(|e| e),
        Some(FIX),
    )
}

fn is_root() -> bool {
    std::fs::metadata("/proc/self").is_ok_and(|m| std::os::unix::fs::MetadataExt::uid(&m) == 0)
}

/// Runs `airlock doctor`.
pub fn run(args: DoctorArgs) -> ExitCode {
    let results = checks();
    let all_ok = results.iter().all(|c| c.ok);
    let mut stdout = std::io::stdout().lock();
    if args.json {
        let _ = writeln!(
            stdout,
            "{}",
            serde_json::to_string(&results).unwrap_or_default()
        );
    } else {
        for c in &results {
            let _ = writeln!(
                stdout,
                "{} {}: {}",
                if c.ok { "ok  " } else { "FAIL" },
                c.check,
                c.detail
            );
            if let Some(fix) = &c.fix {
                let _ = writeln!(stdout, "     fix: {fix}");
            }
        }
    }
    if all_ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

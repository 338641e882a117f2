//! Shared helpers of the `exec*` tests: throwaway workspaces outside every writable root of
//! `:workspace`, scripted reviewers (hook and automatic-review scripts), a scripted user for
//! library sessions, and a runner for the `airlock` binary.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::path::Path;
use std::path::PathBuf;
use std::process::Command;
use std::process::Output;
use std::sync::Arc;
use std::sync::Mutex;

use airlock_approval::ApprovalConfig;
use airlock_approval::ApprovalEvent;
use airlock_core::ExecPolicyManager;
use airlock_core::OutputMode;
use airlock_core::SandboxSettings;
use airlock_core::Session;
use airlock_core::SessionOptions;
use airlock_core::ShellCall;
use airlock_core::ToolEnvironment;
use airlock_protocol::ApprovalsReviewer;
use airlock_protocol::AskForApproval;
use airlock_protocol::PermissionProfile;
use airlock_protocol::ReviewDecision;
use tempfile::TempDir;

pub mod outcome;
pub mod outside;

/// The `airlock` binary (also the Linux sandbox helper).
pub fn airlock_bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_airlock"))
}

/// Folders for one test in a fresh directory outside any git repository
/// ([`outside::test_root_parent`]): `home` ($AIRLOCK_HOME), `ws` (the workspace, a git
/// repository is not needed), `scripts`; and `outside`, a fresh directory outside every
/// writable root of `:workspace` chosen by [`outside::outside_dir`] (`target/tmp` itself is
/// writable when the clone is under `/tmp`). All are removed on drop.
pub struct Dirs {
    _root: TempDir,
    outside_dir: Option<TempDir>,
    pub home: PathBuf,
    pub ws: PathBuf,
    pub scripts: PathBuf,
}

impl Dirs {
    pub fn new() -> Self {
        let root = tempfile::Builder::new()
            .prefix("airlock-exec-")
            .tempdir_in(outside::test_root_parent())
            .unwrap();
        let path = root.path().to_path_buf();
        let ws = path.join("ws");
        for dir in ["home", "ws", "scripts"] {
            std::fs::create_dir_all(path.join(dir)).unwrap();
        }
        Self {
            home: path.join("home"),
            outside_dir: outside::outside_dir(&ws),
            ws,
            scripts: path.join("scripts"),
            _root: root,
        }
    }

    /// The outside directory; `None` (after a loud "SKIPPED" on stderr) when this machine has
    /// none, and the test should return early.
    pub fn outside(&self) -> Option<&Path> {
        self.outside_dir.as_ref().map(TempDir::path)
    }

    /// The outside directory for tests that cannot mean anything without one: panics with
    /// the fix when this machine has none (see [`outside::outside_dir`]).
    pub fn outside_path(&self) -> &Path {
        self.outside().unwrap_or_else(|| {
            panic!(
                "no directory outside every writable root of :workspace; set AIRLOCK_TEST_OUTSIDE"
            )
        })
    }

    /// [`Self::outside_path`] joined with `name`, as a string.
    pub fn outside_path_str(&self, name: &str) -> String {
        self.outside_path().join(name).display().to_string()
    }

    /// A path in the outside directory, as a string (`None` as for [`Self::outside`]).
    pub fn outside_file(&self, name: &str) -> Option<String> {
        self.outside()
            .map(|dir| dir.join(name).display().to_string())
    }

    /// Writes `$AIRLOCK_HOME/config.toml`, selecting `:workspace` explicitly unless `text`
    /// selects a profile.
    pub fn config(&self, text: &str) {
        let selection = if text.contains("default_permissions") {
            ""
        } else {
            "default_permissions = \":workspace\"\n"
        };
        std::fs::write(self.home.join("config.toml"), format!("{selection}{text}")).unwrap();
    }

    /// Writes a rules file in the scripts folder and returns its path.
    pub fn rules(&self, name: &str, text: &str) -> PathBuf {
        let path = self.scripts.join(name);
        std::fs::write(&path, text).unwrap();
        path
    }

    /// The log of a scripted reviewer.
    pub fn log(&self, name: &str) -> PathBuf {
        self.scripts.join(format!("{name}.log"))
    }

    /// Requests a scripted reviewer received (one JSON object per line).
    pub fn requests(&self, name: &str) -> Vec<serde_json::Value> {
        std::fs::read_to_string(self.log(name))
            .unwrap_or_default()
            .lines()
            .filter(|line| !line.trim().is_empty())
            .map(|line| serde_json::from_str(line).unwrap())
            .collect()
    }

    /// A permission-request hook whose script body is `answer` (after logging its input to
    /// `hook.log`); returns its `[[hooks.permission_request]]` TOML.
    pub fn hook_with(&self, answer: &str, timeout_secs: u64) -> String {
        let script = self.scripts.join("hook.sh");
        let log = self.log("hook");
        std::fs::write(
            &script,
            format!(
                "tr -d '\\n' >> '{log}'\necho >> '{log}'\n{answer}\n",
                log = log.display()
            ),
        )
        .unwrap();
        format!(
            "[[hooks.permission_request]]\nmatcher = \"*\"\ncommand = \"sh '{}'\"\ntimeout = {timeout_secs}\n",
            script.display()
        )
    }

    /// A hook answering `allow` or `deny` (with a message).
    pub fn hook(&self, behavior: &str) -> String {
        let decision = match behavior {
            "deny" => r#"{"behavior":"deny","message":"hook says no"}"#.to_owned(),
            other => format!(r#"{{"behavior":"{other}"}}"#),
        };
        self.hook_with(
            &format!(
                "echo '{{\"hookSpecificOutput\":{{\"hookEventName\":\"PermissionRequest\",\"decision\":{decision}}}}}'"
            ),
            10,
        )
    }

    /// An `[auto_review]` command whose script body is `answer` (after logging its input to
    /// `review.log`).
    pub fn auto_review_with(&self, answer: &str, timeout_secs: u64) -> String {
        let script = self.scripts.join("review.sh");
        let log = self.log("review");
        std::fs::write(
            &script,
            format!(
                "tr -d '\\n' >> '{log}'\necho >> '{log}'\n{answer}\n",
                log = log.display()
            ),
        )
        .unwrap();
        format!(
            "[auto_review]\ncommand = [\"sh\", \"{}\"]\ntimeout_secs = {timeout_secs}\n",
            script.display()
        )
    }

    /// An automatic reviewer answering `allow` or `deny`.
    pub fn auto_review(&self, outcome: &str) -> String {
        self.auto_review_with(
            &format!("echo '{{\"outcome\":\"{outcome}\",\"rationale\":\"scripted {outcome}\"}}'"),
            10,
        )
    }

    /// `[permissions.secretive]`: `:workspace` plus a deny-read of `outside/secret`, selected
    /// by default. Without an outside directory the denied path is a missing one in the
    /// workspace's parent.
    pub fn deny_read_profile_toml(&self) -> String {
        let secret = self
            .outside_file("secret")
            .unwrap_or_else(|| self.scripts.join("secret").display().to_string());
        format!(
            "default_permissions = \"secretive\"\n[permissions.secretive]\nextends = \":workspace\"\n[permissions.secretive.filesystem]\n{secret:?} = \"deny\"\n"
        )
    }

    /// The audit log lines.
    pub fn audit(&self) -> Vec<serde_json::Value> {
        std::fs::read_to_string(self.home.join("log/audit.jsonl"))
            .unwrap_or_default()
            .lines()
            .map(|line| serde_json::from_str(line).unwrap())
            .collect()
    }

    /// [`Self::exec`], for tests whose command must be able to leave the sandbox (kept for
    /// their readability: every runner here drops cargo's `LD_LIBRARY_PATH`).
    pub fn exec_leaving_sandbox(&self, args: &[&str]) -> Output {
        self.exec(args)
    }

    /// Runs `airlock exec ARGS` in the workspace with this `$AIRLOCK_HOME`, stdin closed,
    /// without cargo's `LD_LIBRARY_PATH`: it names the target directory, which is writable
    /// when the checkout is under `/tmp`, and a writable library search path keeps every
    /// command in the sandbox (a user's environment has no such entry).
    pub fn exec(&self, args: &[&str]) -> Output {
        let mut all = vec!["exec"];
        all.extend_from_slice(args);
        self.airlock(&all)
    }

    /// Runs `airlock ARGS` as [`Self::exec`] runs `airlock exec ARGS`.
    pub fn airlock(&self, args: &[&str]) -> Output {
        self.airlock_with_env(args, &[])
    }

    /// [`Self::airlock`] with `env` added to the environment.
    pub fn airlock_with_env(&self, args: &[&str], env: &[(&str, &str)]) -> Output {
        Command::new(airlock_bin())
            .env_remove("LD_LIBRARY_PATH") // cargo's; writable in a /tmp checkout
            .args(args)
            .current_dir(&self.ws)
            .env("AIRLOCK_HOME", &self.home)
            .envs(env.iter().copied())
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap()
    }
}

/// The stderr of `output` as text.
///
/// Without the warning that the test binary itself lies inside a writable root: that is
/// this checkout's place (a clone under `/tmp`), not what a test is about. A warning about
/// any other `airlock` executable is kept.
pub fn stderr(output: &Output) -> String {
    let text = String::from_utf8_lossy(&output.stderr);
    let bin = airlock_bin();
    let bin = std::fs::canonicalize(&bin).unwrap_or(bin);
    let own_warning = format!("the airlock executable {} lies inside", bin.display());
    let mut kept = String::new();
    for line in text.split_inclusive('\n') {
        if !line.contains(&own_warning) {
            kept.push_str(line);
        }
    }
    kept
}

/// The stdout of `output` as text.
pub fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// How the scripted user answers a prompt (`None` = never answer).
pub type Answer = dyn Fn(&ApprovalEvent) -> Option<ReviewDecision> + Send + Sync;

/// A library session with a scripted user.
pub struct Harness {
    pub session: Arc<Session>,
    pub prompts: Arc<Mutex<Vec<ApprovalEvent>>>,
    pub warnings: Arc<Mutex<Vec<String>>>,
}

/// How to build a harness.
pub struct HarnessOptions {
    pub policy: AskForApproval,
    pub reviewer: ApprovalsReviewer,
    pub profile: PermissionProfile,
    pub rules: Vec<PathBuf>,
    pub approval_toml: String,
    pub strict: bool,
    pub env: BTreeMap<String, String>,
}

impl HarnessOptions {
    pub fn new(policy: AskForApproval) -> Self {
        Self {
            policy,
            reviewer: ApprovalsReviewer::User,
            profile: airlock_permissions::built_in_profile(":workspace").unwrap(),
            rules: Vec::new(),
            approval_toml: String::new(),
            strict: false,
            env: std::env::vars()
                .filter(|(name, _)| ["PATH", "HOME", "LANG"].contains(&name.as_str()))
                .collect(),
        }
    }
}

impl Harness {
    pub fn start(dirs: &Dirs, options: HarnessOptions, answer: Box<Answer>) -> Self {
        let env = airlock_permissions::ConfigEnv {
            airlock_home: dirs.home.clone(),
            home: None,
        };
        let config = airlock_permissions::AirlockConfig::from_toml_str(
            &options.approval_toml,
            Path::new("test config.toml"),
            &env,
        )
        .unwrap();
        let approval_config =
            ApprovalConfig::from_config_table(&config.table, "test config.toml", None).unwrap();
        let exec_policy = ExecPolicyManager::load_files(options.rules);
        let (events_tx, mut events_rx) = tokio::sync::mpsc::unbounded_channel();
        let session = Arc::new(Session::new(
            SessionOptions {
                session_id: "session-1".to_owned(),
                approval_policy: options.policy,
                approvals_reviewer: options.reviewer,
                strict_auto_review: options.strict,
                environment: ToolEnvironment {
                    environment_id: None,
                    cwd: dirs.ws.clone(),
                    workspace_roots: vec![dirs.ws.clone()],
                    permission_profile: options.profile,
                },
                env: options.env,
                extra_safe_commands: Vec::new(),
                sandbox: SandboxSettings {
                    linux_helper: Some(airlock_bin()),
                    ..SandboxSettings::default()
                },
                output: OutputMode::Capture,
                amendment_file: Some(dirs.home.join("rules/default.rules")),
                audit_log: Some(dirs.home.join("log/audit.jsonl")),
                allow_rules_bypass_sandbox: true,
            },
            approval_config,
            exec_policy,
            Some(events_tx),
        ));
        let prompts = Arc::new(Mutex::new(Vec::new()));
        let warnings = Arc::new(Mutex::new(Vec::new()));
        let weak = Arc::downgrade(&session);
        let (p, w) = (Arc::clone(&prompts), Arc::clone(&warnings));
        tokio::spawn(async move {
            while let Some(event) = events_rx.recv().await {
                match &event {
                    ApprovalEvent::ExecApprovalRequest(request) => {
                        p.lock().unwrap().push(event.clone());
                        let Some(decision) = answer(&event) else {
                            continue;
                        };
                        let id = request.effective_approval_id().to_owned();
                        let turn_id = request.turn_id.clone();
                        if let Some(session) = weak.upgrade() {
                            tokio::spawn(async move {
                                session
                                    .approvals()
                                    .submit_exec_approval(&id, Some(&turn_id), decision)
                                    .await;
                            });
                        }
                    }
                    ApprovalEvent::Warning { message } => w.lock().unwrap().push(message.clone()),
                    _ => {}
                }
            }
        });
        Self {
            session,
            prompts,
            warnings,
        }
    }

    pub fn prompt_count(&self) -> usize {
        self.prompts.lock().unwrap().len()
    }
}

/// A shell call of `command` with id `id`.
pub fn call(id: &str, command: &[&str]) -> ShellCall {
    ShellCall {
        call_id: id.to_owned(),
        command: command.iter().map(|word| (*word).to_owned()).collect(),
        ..ShellCall::default()
    }
}

/// `bash -lc SCRIPT`.
pub fn bash(script: &str) -> Vec<String> {
    vec!["bash".to_owned(), "-lc".to_owned(), script.to_owned()]
}

/// Whether `path` exists.
pub fn exists(path: impl AsRef<Path>) -> bool {
    path.as_ref().exists()
}

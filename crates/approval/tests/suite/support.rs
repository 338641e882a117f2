//! Shared test helpers: scripted hooks and reviewers in temp files, a scripted user that answers
//! approval events, and action builders.

use std::path::Path;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::AtomicUsize;
use std::sync::atomic::Ordering;

use airlock_approval::ApprovalAction;
use airlock_approval::ApprovalConfig;
use airlock_approval::ApprovalContext;
use airlock_approval::ApprovalEvent;
use airlock_approval::ApprovalResolution;
use airlock_approval::ApprovalSession;
use airlock_approval::ApprovalTurn;
use airlock_approval::CommandAction;
use airlock_approval::TurnSettings;
use airlock_protocol::ReviewDecision;
use tempfile::TempDir;
use tokio::sync::mpsc;

/// Writes an sh script (run as `sh <path>`, never exec'd directly, so a concurrently forked
/// test cannot make it "text file busy").
pub fn script(dir: &Path, name: &str, body: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
    path
}

/// A hook command string for a script.
pub fn hook_command(path: &Path) -> String {
    format!("sh '{}'", path.display())
}

/// `[auto_review] command = ["sh", "<script>"]`.
pub fn auto_review_toml(path: &Path, timeout_secs: u64) -> String {
    format!(
        "[auto_review]\ncommand = [\"sh\", {:?}]\ntimeout_secs = {timeout_secs}\n",
        path.display().to_string()
    )
}

/// One `[[hooks.permission_request]]` entry.
pub fn hook_toml(path: &Path, matcher: &str, timeout: u64) -> String {
    format!(
        "[[hooks.permission_request]]\nmatcher = {matcher:?}\ncommand = {:?}\ntimeout = {timeout}\n",
        hook_command(path)
    )
}

pub fn config(toml_text: &str) -> ApprovalConfig {
    let table: toml::Table = toml_text.parse().unwrap();
    ApprovalConfig::from_config_table(&table, "test config.toml", None).unwrap()
}

pub fn shell_action(id: &str, command: &[&str], cwd: &Path) -> ApprovalAction {
    ApprovalAction::Shell(CommandAction::new(
        id,
        command.iter().map(|s| (*s).to_owned()).collect(),
        cwd,
    ))
}

pub fn settings(policy: airlock_protocol::AskForApproval) -> TurnSettings {
    TurnSettings {
        turn_id: "turn-1".to_owned(),
        approval_policy: policy,
        approvals_reviewer: airlock_protocol::ApprovalsReviewer::User,
        model: "test-model".to_owned(),
    }
}

/// How the scripted user answers one prompt: `None` = leave it pending.
pub type Answer = dyn Fn(&ApprovalEvent) -> Option<ReviewDecision> + Send + Sync;

/// A session with a scripted user reading its events.
pub struct Harness {
    pub session: Arc<ApprovalSession>,
    pub turn: Arc<ApprovalTurn>,
    /// Number of user prompts (exec + patch) seen.
    pub asked: Arc<AtomicUsize>,
    pub prompts: Arc<Mutex<Vec<ApprovalEvent>>>,
    pub warnings: Arc<Mutex<Vec<String>>>,
    pub resolved: Arc<Mutex<Vec<(String, ReviewDecision)>>>,
    pub dir: TempDir,
    events: mpsc::UnboundedSender<ApprovalEvent>,
    flushed: tokio::sync::Mutex<mpsc::UnboundedReceiver<()>>,
}

const FLUSH_MARKER: &str = "\u{0}test-flush";

impl Harness {
    pub fn start(
        dir: TempDir,
        config: ApprovalConfig,
        settings: TurnSettings,
        answer: Box<Answer>,
    ) -> Self {
        Self::start_with(dir, settings, answer, |events| {
            ApprovalSession::new("session-1", config, Some(events))
        })
    }

    pub fn start_with(
        dir: TempDir,
        settings: TurnSettings,
        answer: Box<Answer>,
        make: impl FnOnce(mpsc::UnboundedSender<ApprovalEvent>) -> ApprovalSession,
    ) -> Self {
        let (tx, mut rx) = mpsc::unbounded_channel();
        let (flush_tx, flush_rx) = mpsc::unbounded_channel();
        let events = tx.clone();
        let session = Arc::new(make(tx));
        let turn = session.start_turn(settings);
        let asked = Arc::new(AtomicUsize::new(0));
        let prompts = Arc::new(Mutex::new(Vec::new()));
        let warnings = Arc::new(Mutex::new(Vec::new()));
        let resolved = Arc::new(Mutex::new(Vec::new()));
        let (s, a, p, w, r) = (
            Arc::clone(&session),
            Arc::clone(&asked),
            Arc::clone(&prompts),
            Arc::clone(&warnings),
            Arc::clone(&resolved),
        );
        tokio::spawn(async move {
            while let Some(event) = rx.recv().await {
                match &event {
                    ApprovalEvent::ExecApprovalRequest(request) => {
                        a.fetch_add(1, Ordering::SeqCst);
                        p.lock().unwrap().push(event.clone());
                        if let Some(decision) = answer(&event) {
                            let id = request.effective_approval_id().to_owned();
                            let turn_id = request.turn_id.clone();
                            let session = Arc::clone(&s);
                            tokio::spawn(async move {
                                session
                                    .submit_exec_approval(&id, Some(&turn_id), decision)
                                    .await;
                            });
                        }
                    }
                    ApprovalEvent::ApplyPatchApprovalRequest(request) => {
                        a.fetch_add(1, Ordering::SeqCst);
                        p.lock().unwrap().push(event.clone());
                        if let Some(decision) = answer(&event) {
                            let id = request.call_id.clone();
                            let session = Arc::clone(&s);
                            tokio::spawn(async move {
                                session.submit_patch_approval(&id, decision).await;
                            });
                        }
                    }
                    ApprovalEvent::Warning { message } if message == FLUSH_MARKER => {
                        let _ = flush_tx.send(());
                    }
                    ApprovalEvent::Warning { message } => w.lock().unwrap().push(message.clone()),
                    ApprovalEvent::ApprovalResolved { id, decision, .. } => {
                        r.lock().unwrap().push((id.clone(), decision.clone()));
                    }
                }
            }
        });
        Self {
            session,
            turn,
            asked,
            prompts,
            warnings,
            resolved,
            dir,
            events,
            flushed: tokio::sync::Mutex::new(flush_rx),
        }
    }

    /// Returns once the event task has handled every event emitted so far (the channel is
    /// FIFO, so a marker sent now is seen after all of them).
    pub async fn flush(&self) {
        let mut flushed = self.flushed.lock().await;
        self.events
            .send(ApprovalEvent::Warning {
                message: FLUSH_MARKER.to_owned(),
            })
            .unwrap();
        flushed.recv().await.unwrap();
    }

    pub async fn request(
        &self,
        action: &ApprovalAction,
        ctx: &ApprovalContext,
    ) -> ApprovalResolution {
        tokio::time::timeout(
            std::time::Duration::from_secs(20),
            self.session.request_approval(&self.turn, action, ctx),
        )
        .await
        .expect("request_approval did not finish within 20 s")
    }

    pub fn asked(&self) -> usize {
        self.asked.load(Ordering::SeqCst)
    }

    pub fn warnings(&self) -> Vec<String> {
        self.warnings.lock().unwrap().clone()
    }

    /// The warnings emitted so far (after [`Self::flush`]).
    pub async fn flushed_warnings(&self) -> Vec<String> {
        self.flush().await;
        self.warnings()
    }
}

pub fn always(decision: ReviewDecision) -> Box<Answer> {
    Box::new(move |_| Some(decision.clone()))
}

pub fn never_answer() -> Box<Answer> {
    Box::new(|_| None)
}

pub fn tempdir() -> TempDir {
    tempfile::tempdir().unwrap()
}

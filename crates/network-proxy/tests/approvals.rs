//! Network approvals on the proxy side (spec 12 §Network approvals), against a loopback
//! origin reached through a test resolver (`new.test` → 127.0.0.1, with the IP literal
//! allowed so the address checks pass once the host is approved).
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

use std::future::Future;
use std::io::Read;
use std::io::Write;
use std::net::SocketAddr;
use std::net::TcpListener;
use std::os::unix::net::UnixStream;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::AtomicBool;
use std::sync::atomic::Ordering;
use std::time::Duration;

use airlock_network_proxy::NetworkPolicy;
use airlock_network_proxy::ProxyHandle;
use airlock_network_proxy::approval::NetworkApprovalDecision;
use airlock_network_proxy::approval::NetworkApprovalRequest;
use airlock_network_proxy::approval::NetworkDecider;
use airlock_network_proxy::policy::Resolver;
use airlock_permissions::network::EntrySource;
use airlock_permissions::network::HostPattern;
use airlock_permissions::network::ManagedNetwork;
use airlock_permissions::network::NetworkEntry;

fn origin() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            std::thread::spawn(move || {
                let mut stream = stream;
                let mut buf = [0u8; 1024];
                let _ = stream.read(&mut buf);
                let _ = stream.write_all(
                    b"HTTP/1.1 200 OK\r\ncontent-length: 3\r\nconnection: close\r\n\r\nok\n",
                );
            });
        }
    });
    port
}

/// Records every question and answers with `answer` once `release` is set.
struct Recorder {
    asked: Mutex<Vec<NetworkApprovalRequest>>,
    answer: Mutex<NetworkApprovalDecision>,
    release: AtomicBool,
}

struct Shared(Arc<Recorder>);

impl NetworkDecider for Shared {
    fn decide(
        &self,
        request: NetworkApprovalRequest,
    ) -> Pin<Box<dyn Future<Output = NetworkApprovalDecision> + Send>> {
        let me = Arc::clone(&self.0);
        Box::pin(async move {
            me.asked.lock().unwrap().push(request);
            while !me.release.load(Ordering::SeqCst) {
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
            *me.answer.lock().unwrap()
        })
    }
}

struct Setup {
    _dir: tempfile::TempDir,
    socket: std::path::PathBuf,
    handle: ProxyHandle,
    recorder: Arc<Recorder>,
    port: u16,
}

fn setup(answer: NetworkApprovalDecision, released: bool) -> Setup {
    let port = origin();
    let resolver: Resolver = Arc::new(|_name: String, port: u16| {
        Box::pin(async move { Ok(vec![SocketAddr::new("127.0.0.1".parse().unwrap(), port)]) })
    });
    let recorder = Arc::new(Recorder {
        asked: Mutex::new(Vec::new()),
        answer: Mutex::new(answer),
        release: AtomicBool::new(released),
    });
    let network = ManagedNetwork {
        allow: vec![NetworkEntry {
            pattern: HostPattern::parse(&format!("127.0.0.1:{port}")).unwrap(),
            source: EntrySource::Config,
        }],
        deny: vec![NetworkEntry {
            pattern: HostPattern::parse("evil.test").unwrap(),
            source: EntrySource::Config,
        }],
        ..ManagedNetwork::default()
    };
    let policy = NetworkPolicy::new(network)
        .with_resolver(resolver)
        .with_decider(Arc::new(Shared(Arc::clone(&recorder))));
    let dir = tempfile::tempdir().unwrap();
    let socket = dir.path().join("proxy.sock");
    let handle = airlock_network_proxy::start(policy, &socket).unwrap();
    Setup {
        _dir: dir,
        socket,
        handle,
        recorder,
        port,
    }
}

fn send(setup: &Setup, host: &str, port: u16) -> UnixStream {
    let mut stream = UnixStream::connect(&setup.socket).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    write!(
        stream,
        "GET http://{host}:{port}/ HTTP/1.1\r\nHost: {host}:{port}\r\n\r\n"
    )
    .unwrap();
    stream
}

fn response(mut stream: UnixStream) -> String {
    let mut out = String::new();
    let _ = stream.read_to_string(&mut out);
    out
}

fn get(setup: &Setup, host: &str, port: u16) -> String {
    response(send(setup, host, port))
}

fn asked(setup: &Setup) -> usize {
    setup.recorder.asked.lock().unwrap().len()
}

#[test]
fn fifty_concurrent_requests_to_one_new_host_ask_once() {
    let setup = setup(NetworkApprovalDecision::Approved, false);
    let streams: Vec<UnixStream> = (0..50)
        .map(|_| send(&setup, "new.test", setup.port))
        .collect();
    let mut held = 0;
    for _ in 0..4000 {
        held = setup.handle.policy().held_for_approval();
        if held == 50 {
            break;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    assert_eq!(held, 50, "all 50 requests are held on one question");
    setup.recorder.release.store(true, Ordering::SeqCst);
    for stream in streams {
        let out = response(stream);
        assert!(out.starts_with("HTTP/1.1 200"), "{out}");
    }
    assert_eq!(asked(&setup), 1);
    let question = setup.recorder.asked.lock().unwrap()[0].clone();
    assert_eq!(question.host, "new.test");
    assert_eq!(question.port, setup.port);
    assert!(get(&setup, "new.test", setup.port).starts_with("HTTP/1.1 200"));
    assert_eq!(
        asked(&setup),
        2,
        "`approved` covers only the requests it answered"
    );
}

#[test]
fn approved_for_session_remembers_the_key_only() {
    let setup = setup(NetworkApprovalDecision::ApprovedForSession, true);
    assert!(get(&setup, "new.test", setup.port).starts_with("HTTP/1.1 200"));
    assert!(get(&setup, "new.test", setup.port).starts_with("HTTP/1.1 200"));
    assert_eq!(asked(&setup), 1);
    let _ = get(&setup, "other.test", setup.port);
    assert_eq!(asked(&setup), 2, "another host is another key");
}

#[test]
fn allow_and_deny_amendments_update_the_live_lists() {
    let setup = setup(NetworkApprovalDecision::AllowHost, true);
    assert!(get(&setup, "new.test", setup.port).starts_with("HTTP/1.1 200"));
    let network = setup.handle.policy().network();
    assert!(
        network
            .allow
            .iter()
            .any(|e| e.pattern.source() == "new.test" && e.source == EntrySource::Session)
    );
    assert_eq!(asked(&setup), 1, "the host is on the allow list now");

    *setup.recorder.answer.lock().unwrap() = NetworkApprovalDecision::DenyHost;
    let out = get(&setup, "bad.test", setup.port);
    assert!(out.contains("(denied)"), "{out}");
    let out = get(&setup, "bad.test", setup.port);
    assert!(
        out.contains("matches deny entry `bad.test` (denied)"),
        "{out}"
    );
    assert_eq!(asked(&setup), 2);
}

#[test]
fn denied_refuses_and_asks_again_next_time() {
    let setup = setup(NetworkApprovalDecision::Denied, true);
    let out = get(&setup, "new.test", setup.port);
    assert!(
        out.contains("the reviewer denied access (not_allowed)"),
        "{out}"
    );
    let _ = get(&setup, "new.test", setup.port);
    assert_eq!(asked(&setup), 2);
}

#[test]
fn deny_entries_and_local_destinations_never_prompt() {
    let setup = setup(NetworkApprovalDecision::Approved, true);
    assert!(get(&setup, "evil.test", 80).contains("(denied)"));
    assert!(get(&setup, "localhost", setup.port).contains("(not_allowed_local)"));
    assert!(get(&setup, "10.0.0.1", 80).contains("(not_allowed_local)"));
    assert_eq!(asked(&setup), 0);
}

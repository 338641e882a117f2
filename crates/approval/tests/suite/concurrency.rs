//! 1,000 concurrent approval requests in one session, answered in random order with random
//! cancellations: each resolves exactly once, no deadlock, no leaked pending entry (issue 6).

use std::collections::HashMap;
use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use airlock_approval::ApprovalContext;
use airlock_approval::ApprovalEvent;
use airlock_approval::ApprovalSession;
use airlock_protocol::AskForApproval;
use airlock_protocol::ReviewDecision;
use tokio::sync::mpsc;

use crate::support::*;

const REQUESTS: usize = 1_000;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn thousand_concurrent_requests_resolve_exactly_once() {
    let seed = fastrand::u64(..);
    let mut rng = fastrand::Rng::with_seed(seed);
    let dir = tempdir();
    let (events_tx, mut events) = mpsc::unbounded_channel();
    let session = Arc::new(ApprovalSession::new("s", config(""), Some(events_tx)));
    let turn = session.start_turn(settings(AskForApproval::OnRequest));

    let mut handles = Vec::with_capacity(REQUESTS);
    for index in 0..REQUESTS {
        let id = format!("call-{index}");
        let action = shell_action(&id, &["echo", &index.to_string()], dir.path());
        let (session, turn) = (Arc::clone(&session), Arc::clone(&turn));
        handles.push(tokio::spawn(async move {
            session
                .request_approval(&turn, &action, &ApprovalContext::new(id))
                .await
        }));
    }

    // Every request reaches the user exactly once.
    let mut prompted = HashSet::new();
    let mut resolved: HashMap<String, usize> = HashMap::new();
    while prompted.len() < REQUESTS {
        let event = tokio::time::timeout(Duration::from_secs(20), events.recv())
            .await
            .unwrap_or_else(|_| panic!("seed {seed}: only {} prompts arrived", prompted.len()))
            .unwrap();
        match event {
            ApprovalEvent::ExecApprovalRequest(request) => {
                assert!(
                    prompted.insert(request.call_id.clone()),
                    "seed {seed}: asked twice"
                );
            }
            ApprovalEvent::ApprovalResolved { id, .. } => *resolved.entry(id).or_default() += 1,
            other => panic!("seed {seed}: unexpected event {other:?}"),
        }
    }
    assert_eq!(turn.pending_count(), REQUESTS);

    // Cancel a random fifth of the requests (their futures are dropped).
    let cancelled: HashSet<usize> = (0..REQUESTS).filter(|_| rng.u8(..) < 51).collect();
    for index in &cancelled {
        handles[*index].abort();
    }

    // Answer everything (cancelled ones included) in random order from 4 concurrent answerers.
    let mut order: Vec<usize> = (0..REQUESTS).collect();
    rng.shuffle(&mut order);
    let answers: Vec<ReviewDecision> = (0..REQUESTS)
        .map(|_| {
            if rng.bool() {
                ReviewDecision::Approved
            } else {
                ReviewDecision::denied_with_reason("random no")
            }
        })
        .collect();
    let answers = Arc::new(answers);
    let mut answerers = Vec::new();
    for chunk in order.chunks(REQUESTS / 4) {
        let (session, answers, chunk) =
            (Arc::clone(&session), Arc::clone(&answers), chunk.to_vec());
        answerers.push(tokio::spawn(async move {
            for index in chunk {
                session
                    .submit_exec_approval(
                        &format!("call-{index}"),
                        Some("turn-1"),
                        answers[index].clone(),
                    )
                    .await;
                if index % 7 == 0 {
                    tokio::task::yield_now().await;
                }
            }
        }));
    }
    tokio::time::timeout(Duration::from_secs(20), async {
        for answerer in answerers {
            answerer.await.unwrap();
        }
    })
    .await
    .unwrap_or_else(|_| panic!("seed {seed}: answering deadlocked"));

    // Every request ends: with its own answer, or cancelled.
    let results = tokio::time::timeout(Duration::from_secs(20), async {
        let mut results = Vec::with_capacity(REQUESTS);
        for handle in handles {
            results.push(handle.await);
        }
        results
    })
    .await
    .unwrap_or_else(|_| panic!("seed {seed}: a request never resolved"));
    for (index, result) in results.into_iter().enumerate() {
        match result {
            Ok(resolution) => assert_eq!(
                resolution.decision, answers[index],
                "seed {seed}: call-{index}"
            ),
            Err(error) => {
                assert!(
                    error.is_cancelled() && cancelled.contains(&index),
                    "seed {seed}: call-{index}: {error}"
                );
            }
        }
    }
    assert_eq!(
        turn.pending_count(),
        0,
        "seed {seed}: leaked pending entries"
    );

    // Each pending entry was resolved exactly once (answered, or removed on cancellation).
    while let Ok(event) = events.try_recv() {
        match event {
            ApprovalEvent::ApprovalResolved { id, .. } => *resolved.entry(id).or_default() += 1,
            ApprovalEvent::Warning { message } => {
                assert!(
                    message.starts_with("No pending approval found for call_id: call-"),
                    "seed {seed}: {message}"
                );
            }
            other => panic!("seed {seed}: unexpected event {other:?}"),
        }
    }
    assert_eq!(resolved.len(), REQUESTS, "seed {seed}");
    assert!(
        resolved.values().all(|count| *count == 1),
        "seed {seed}: resolved twice"
    );
}

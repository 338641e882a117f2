//! Tool call ids that are unique across processes and within one (spec 10 §Audit log: the
//! audit log is searched by call id, `airlock explain --from-log CALL_ID`).

use std::sync::atomic::AtomicU64;
use std::sync::atomic::Ordering;

/// Calls numbered so far in this process.
static NEXT: AtomicU64 = AtomicU64::new(1);

/// A fresh call id, `call-<unix ms>-<pid>-<n>`: the time and process id keep ids of different
/// processes apart, `n` (counting from 1 per process) the calls of one process.
#[must_use]
pub fn new_call_id() -> String {
    let millis = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|since| since.as_millis())
        .unwrap_or_default();
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    format!("call-{millis}-{}-{n}", std::process::id())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_of_one_process_differ() {
        let ids: std::collections::BTreeSet<String> = (0..100).map(|_| new_call_id()).collect();
        assert_eq!(ids.len(), 100);
        assert!(ids.iter().all(|id| id.starts_with("call-")));
    }
}

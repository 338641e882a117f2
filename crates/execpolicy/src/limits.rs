//! Bounds on evaluating one `.rules` file with Starlark (issue 18 item 9).
//!
//! A rules file is code: `for i in range(10**9)` or a list doubled in a loop would hold
//! a policy load for seconds and gigabytes. Starlark 0.14 has no instruction counter,
//! so evaluation runs on a worker thread the loader waits for with a deadline, and a
//! statement hook stops the evaluation once the deadline passes or the Starlark heap
//! grows past its bound. Either way the file fails to load ([`crate::ParseError::Limit`]
//! names it), and callers fail closed as for any load error (spec 02 "Policy files in
//! use").
//!
//! What the hook cannot interrupt: a single expression with no statement inside (a
//! comprehension over a huge range) runs to its end on the worker after the deadline has
//! already failed the load; an allocation the system refuses is caught as a failed
//! evaluation, never a crash of the caller.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::time::{Duration, Instant};

use starlark::codemap::FileSpanRef;
use starlark::eval::{BeforeStmtFuncDyn, Evaluator};

/// How long evaluating one file may take.
pub const MAX_EVALUATION_TIME: Duration = Duration::from_secs(3);

/// How many bytes one file's Starlark heap may hold (256 MiB; real policies use a few
/// hundred KiB).
pub const MAX_EVALUATION_HEAP_BYTES: usize = 256 << 20;

/// Evaluation bounds for one `.rules` file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EvalLimits {
    /// Wall-clock time for the whole evaluation.
    pub time: Duration,
    /// Bytes the Starlark heap may hold.
    pub heap_bytes: usize,
}

impl Default for EvalLimits {
    fn default() -> Self {
        Self {
            time: MAX_EVALUATION_TIME,
            heap_bytes: MAX_EVALUATION_HEAP_BYTES,
        }
    }
}

/// Which bound stopped an evaluation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limit {
    /// [`EvalLimits::time`] passed.
    Time,
    /// [`EvalLimits::heap_bytes`] was exceeded.
    Heap,
}

const NOT_TRIPPED: u8 = 0;
const TRIPPED_TIME: u8 = 1;
const TRIPPED_HEAP: u8 = 2;

/// Shared between the loader and the evaluation's statement hook.
#[derive(Debug, Default)]
pub(crate) struct Watch {
    /// Set by the loader when it stops waiting.
    pub(crate) cancelled: AtomicBool,
    tripped: AtomicU8,
}

impl Watch {
    pub(crate) fn trip(&self, limit: Limit) {
        let value = match limit {
            Limit::Time => TRIPPED_TIME,
            Limit::Heap => TRIPPED_HEAP,
        };
        let _ =
            self.tripped
                .compare_exchange(NOT_TRIPPED, value, Ordering::SeqCst, Ordering::SeqCst);
    }

    /// The bound that stopped the evaluation, if one did.
    pub(crate) fn tripped(&self) -> Option<Limit> {
        match self.tripped.load(Ordering::SeqCst) {
            TRIPPED_TIME => Some(Limit::Time),
            TRIPPED_HEAP => Some(Limit::Heap),
            _ => None,
        }
    }
}

/// The statement hook: fails the evaluation when a bound is passed or the loader gave up.
pub(crate) struct LimitHook {
    pub(crate) watch: Arc<Watch>,
    pub(crate) deadline: Instant,
    pub(crate) heap_bytes: usize,
}

impl<'e> BeforeStmtFuncDyn<'e> for LimitHook {
    fn call<'v>(
        &mut self,
        _span: FileSpanRef,
        _continued: bool,
        eval: &mut Evaluator<'v, '_, 'e>,
    ) -> starlark::Result<()> {
        // Checked before every statement: a clock read and a walk over the heap's few
        // chunks, small next to a statement's own work.
        let limit =
            if self.watch.cancelled.load(Ordering::Relaxed) || Instant::now() >= self.deadline {
                Some(Limit::Time)
            } else if eval.heap().allocated_bytes() > self.heap_bytes {
                Some(Limit::Heap)
            } else {
                None
            };
        match limit {
            Some(limit) => {
                self.watch.trip(limit);
                Err(starlark::Error::new_other(anyhow::anyhow!(
                    "evaluation limit reached"
                )))
            }
            None => Ok(()),
        }
    }
}

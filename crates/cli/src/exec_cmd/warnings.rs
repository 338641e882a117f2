//! Prints the approval layer's warnings (failed hooks, a reviewer that timed out, an
//! amendment that could not be saved...) on stderr as `airlock: warning: <message>`.
//!
//! The approval layer reports every warning through `tracing` (and also as an event when a
//! front end listens); printing from `tracing` covers the non-interactive case too, where
//! no event channel exists so that prompts fail closed with source `config`.

use std::fmt::Write as _;

use tracing::Event;
use tracing::Level;
use tracing::Metadata;
use tracing::Subscriber;
use tracing::field::Field;
use tracing::field::Visit;
use tracing::level_filters::LevelFilter;
use tracing::span;

/// A `tracing` subscriber that prints `WARN` and `ERROR` events, one line each.
struct StderrWarnings;

/// Installs the printer for the whole process (a no-op if one is already installed).
pub fn install() {
    let _ = tracing::subscriber::set_global_default(StderrWarnings);
}

impl Subscriber for StderrWarnings {
    fn enabled(&self, metadata: &Metadata<'_>) -> bool {
        *metadata.level() <= Level::WARN
    }

    fn max_level_hint(&self) -> Option<LevelFilter> {
        Some(LevelFilter::WARN)
    }

    fn new_span(&self, _span: &span::Attributes<'_>) -> span::Id {
        span::Id::from_u64(1)
    }

    fn record(&self, _span: &span::Id, _values: &span::Record<'_>) {}

    fn record_follows_from(&self, _span: &span::Id, _follows: &span::Id) {}

    fn event(&self, event: &Event<'_>) {
        let mut message = Message(String::new());
        event.record(&mut message);
        let one_line: Vec<&str> = message.0.split_whitespace().collect();
        eprintln!(
            "airlock: warning: {}",
            crate::terminal_text::safe(&one_line.join(" "))
        );
    }

    fn enter(&self, _span: &span::Id) {}

    fn exit(&self, _span: &span::Id) {}
}

/// Collects the `message` field (and any others as `name=value`).
struct Message(String);

impl Visit for Message {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if !self.0.is_empty() {
            self.0.push(' ');
        }
        if field.name() == "message" {
            let _ = write!(self.0, "{value:?}");
        } else {
            let _ = write!(self.0, "{}={value:?}", field.name());
        }
    }
}

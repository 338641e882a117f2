//! Evaluation bounds of `.rules` files (issue 18 item 9): a file that computes too long
//! or builds too much fails to load, naming the file; nothing of it is kept.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

use std::time::Duration;

use airlock_execpolicy::{
    EvalLimits, Limit, LoadError, MAX_EVALUATION_HEAP_BYTES, MAX_EVALUATION_TIME, ParseError,
    PolicyParser, load_policy_files,
};

/// A loop of a billion iterations: minutes of work without the bound.
const LONG_LOOP: &str = "prefix_rule([\"ls\"])\n\
    def spin():\n    for i in range(1000000000):\n        pass\nspin()\n";

/// A list doubled in a loop: gigabytes without the bound.
const GROWING_LIST: &str = "prefix_rule([\"ls\"])\n\
    def grow():\n    x = [0]\n    for i in range(40):\n        x = x + x\ngrow()\n";

// The heap bound stays "bounded": at most 1 GiB (checked at compile time).
const _: () = assert!(MAX_EVALUATION_HEAP_BYTES <= 1 << 30);

fn parse_with(limits: EvalLimits, source: &str) -> Result<(), ParseError> {
    let mut parser = PolicyParser::new().with_limits(limits);
    parser.parse("spin.rules", source)
}

#[test]
fn defaults_are_a_few_seconds_and_a_bounded_heap() {
    assert_eq!(
        EvalLimits::default(),
        EvalLimits {
            time: MAX_EVALUATION_TIME,
            heap_bytes: MAX_EVALUATION_HEAP_BYTES
        }
    );
    assert!(MAX_EVALUATION_TIME <= Duration::from_secs(5));
}

#[test]
fn a_long_loop_is_a_time_limit_error_naming_the_file() {
    let limits = EvalLimits {
        time: Duration::from_millis(200),
        ..EvalLimits::default()
    };
    let error = parse_with(limits, LONG_LOOP).unwrap_err();
    assert!(
        matches!(
            &error,
            ParseError::Limit {
                label,
                limit: Some(Limit::Time),
                ..
            } if label == "spin.rules"
        ),
        "{error:?}"
    );
    assert!(
        error
            .to_string()
            .starts_with("spin.rules: evaluating the rules file took longer than 200 ms"),
        "{error}"
    );
}

#[test]
fn a_growing_list_is_a_heap_limit_error() {
    let limits = EvalLimits {
        heap_bytes: 8 << 20,
        ..EvalLimits::default()
    };
    let error = parse_with(limits, GROWING_LIST).unwrap_err();
    assert!(
        matches!(
            error,
            ParseError::Limit {
                limit: Some(Limit::Heap),
                ..
            }
        ),
        "{error:?}"
    );
    assert!(
        error.to_string().contains("allocated more than 8192 KiB"),
        "{error}"
    );
}

#[test]
fn default_limits_stop_the_issue_inputs() {
    // The issue's inputs with the default bounds: both fail to load.
    for source in [LONG_LOOP, GROWING_LIST] {
        let error = parse_with(EvalLimits::default(), source).unwrap_err();
        assert!(
            matches!(error, ParseError::Limit { limit: Some(_), .. }),
            "{error:?}"
        );
    }
}

#[test]
fn a_file_over_the_limit_fails_the_whole_load_and_keeps_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("a.rules");
    let bad = dir.path().join("b.rules");
    std::fs::write(
        &good,
        "prefix_rule([\"git\", \"push\"], decision=\"forbidden\")\n",
    )
    .unwrap();
    std::fs::write(&bad, GROWING_LIST).unwrap();
    let error = load_policy_files(&[&good, &bad]).unwrap_err();
    match &error {
        LoadError::Parse { path, source } => {
            assert_eq!(path, &bad);
            assert!(matches!(source, ParseError::Limit { .. }), "{source:?}");
        }
        other => panic!("expected a parse error, got {other:?}"),
    }
    // The same parser keeps evaluating normal files after a limited one failed.
    let mut parser = PolicyParser::new().with_limits(EvalLimits {
        heap_bytes: 8 << 20,
        ..EvalLimits::default()
    });
    assert!(parser.parse("b.rules", GROWING_LIST).is_err());
    parser
        .parse("c.rules", "def f():\n    prefix_rule([\"ls\"])\nf()\n")
        .unwrap();
    assert_eq!(parser.build().rules().len(), 1);
}

#[test]
fn ordinary_computed_files_still_load() {
    let mut parser = PolicyParser::new();
    parser
        .parse(
            "computed.rules",
            "for tool in [\"cargo\", \"npm\"]:\n    prefix_rule([tool, \"test\"])\n",
        )
        .unwrap();
    assert_eq!(parser.build().rules().len(), 2);
}

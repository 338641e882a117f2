//! Shared assertions for the wire-form tests.

use std::fmt::Debug;

use pretty_assertions::assert_eq;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

fn parse_value(json: &str) -> Value {
    match serde_json::from_str(json) {
        Ok(value) => value,
        Err(err) => panic!("fixture is not JSON ({err}): {json}"),
    }
}

fn read<T: DeserializeOwned>(json: &str) -> T {
    match serde_json::from_str(json) {
        Ok(value) => value,
        Err(err) => panic!("{json} should deserialise: {err}"),
    }
}

fn write<T: Serialize>(value: &T) -> Value {
    match serde_json::to_value(value) {
        Ok(json) => json,
        Err(err) => panic!("serialisation failed: {err}"),
    }
}

/// JSON → value → JSON must give back the same JSON; returns the value for further checks.
pub fn assert_round_trip<T>(json: &str) -> T
where
    T: Serialize + DeserializeOwned + Debug + PartialEq,
{
    let value: T = read(json);
    assert_eq!(write(&value), parse_value(json), "round trip of {json}");
    value
}

/// An accepted input spelling reads as the same value as `canonical` and is written as `canonical`.
pub fn assert_reads_as<T>(input: &str, canonical: &str)
where
    T: Serialize + DeserializeOwned + Debug + PartialEq,
{
    let from_input: T = read(input);
    let from_canonical: T = read(canonical);
    assert_eq!(
        from_input, from_canonical,
        "{input} should read as {canonical}"
    );
    assert_eq!(
        write(&from_input),
        parse_value(canonical),
        "{input} should be written as {canonical}"
    );
}

/// `json` must fail to deserialise; returns the error message.
pub fn assert_rejected<T>(json: &str) -> String
where
    T: DeserializeOwned + Debug,
{
    match serde_json::from_str::<T>(json) {
        Ok(value) => panic!("{json} should be rejected, got {value:?}"),
        Err(err) => err.to_string(),
    }
}

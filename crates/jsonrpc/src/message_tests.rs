use pretty_assertions::assert_eq;
use serde_json::json;

use super::*;

fn code_of(line: &str) -> (Option<RequestId>, i64) {
    let e = Message::from_line(line.as_bytes()).unwrap_err();
    (e.id, e.error.code)
}

#[test]
fn classifies_request_with_and_without_version() {
    let with = Message::from_line(br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#)
        .unwrap();
    let without = Message::from_line(br#"{"id":1,"method":"initialize","params":{}}"#).unwrap();
    let expected = Message::request(RequestId::Integer(1), "initialize", Some(json!({})));
    assert_eq!(with, expected);
    assert_eq!(without, expected);
}

#[test]
fn classifies_notification_response_and_error() {
    assert_eq!(
        Message::from_line(br#"{"method":"initialized"}"#).unwrap(),
        Message::notification("initialized", None)
    );
    assert_eq!(
        Message::from_line(br#"{"id":"a","result":{"decision":"accept"}}"#).unwrap(),
        Message::response(RequestId::String("a".into()), json!({"decision":"accept"}))
    );
    assert_eq!(
        Message::from_line(br#"{"id":3,"error":{"code":-1,"message":"no"}}"#).unwrap(),
        Message::error(Some(RequestId::Integer(3)), ErrorObject::new(-1, "no"))
    );
    assert_eq!(
        Message::from_line(br#"{"id":null,"error":{"code":-32700,"message":"x"}}"#).unwrap(),
        Message::error(None, ErrorObject::new(PARSE_ERROR, "x"))
    );
}

#[test]
fn refuses_what_is_not_a_message() {
    assert_eq!(code_of("{not json"), (None, PARSE_ERROR));
    assert_eq!(code_of("[1,2]"), (None, INVALID_REQUEST));
    assert_eq!(code_of("42"), (None, INVALID_REQUEST));
    assert_eq!(
        code_of(r#"{"id":1.5,"method":"x"}"#),
        (None, INVALID_REQUEST)
    );
    assert_eq!(
        code_of(r#"{"id":7,"method":3}"#),
        (Some(RequestId::Integer(7)), INVALID_REQUEST)
    );
    assert_eq!(
        code_of(r#"{"id":7,"jsonrpc":"1.0","method":"x"}"#),
        (Some(RequestId::Integer(7)), INVALID_REQUEST)
    );
    assert_eq!(
        code_of(r#"{"id":7,"method":"x","params":5}"#),
        (Some(RequestId::Integer(7)), INVALID_REQUEST)
    );
    assert_eq!(
        code_of(r#"{"id":7}"#),
        (Some(RequestId::Integer(7)), INVALID_REQUEST)
    );
    assert_eq!(code_of(r#"{"result":1}"#), (None, INVALID_REQUEST));
    assert_eq!(
        code_of(r#"{"id":7,"error":"bad"}"#),
        (Some(RequestId::Integer(7)), INVALID_REQUEST)
    );
}

#[test]
fn writes_with_or_without_version() {
    let m = Message::request(
        RequestId::Integer(0),
        "item/commandExecution/requestApproval",
        Some(json!({"a":1})),
    );
    assert_eq!(
        m.to_value(false),
        json!({"id":0,"method":"item/commandExecution/requestApproval","params":{"a":1}})
    );
    assert_eq!(
        Message::error(None, ErrorObject::new(PARSE_ERROR, "Parse error")).to_value(true),
        json!({"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}})
    );
    assert_eq!(
        Message::response(RequestId::String("x".into()), json!({})).to_value(false),
        json!({"id":"x","result":{}})
    );
}

#[test]
fn round_trips_through_a_line() {
    let messages = [
        Message::request(RequestId::String("r".into()), "m", Some(json!([1]))),
        Message::notification("n", Some(json!({"k":"v"}))),
        Message::response(RequestId::Integer(9), json!(null)),
        Message::error(
            Some(RequestId::Integer(2)),
            ErrorObject::invalid_params("invalid params: x"),
        ),
    ];
    for m in messages {
        let line = serde_json::to_vec(&m.to_value(true)).unwrap();
        assert_eq!(Message::from_line(&line).unwrap(), m);
    }
}

#[test]
fn a_repeated_member_is_refused_and_an_answer_with_one_fails_its_request() {
    let answer =
        Message::from_line(br#"{"id":3,"result":{"decision":"decline","decision":"accept"}}"#);
    match answer {
        Ok(Message::Error(ErrorResponse { id, error })) => {
            assert_eq!(id, Some(RequestId::Integer(3)));
            assert_eq!(error.code, INVALID_REQUEST);
            assert!(
                error.message.contains("`decision` appears twice"),
                "{}",
                error.message
            );
        }
        other => panic!("{other:?}"),
    }
    let request = Message::from_line(br#"{"id":"r","method":"a","method":"b"}"#).unwrap_err();
    assert_eq!(request.id, Some(RequestId::String("r".into())));
    assert!(request.error.message.contains("`method` appears twice"));
}

//! JSON-RPC 2.0 message shapes and the classification of one incoming line.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Invalid JSON was received (JSON-RPC 2.0 §5.1).
pub const PARSE_ERROR: i64 = -32700;
/// The JSON is not a valid request object, or the request is not allowed now (e.g. before
/// `initialize`).
pub const INVALID_REQUEST: i64 = -32600;
/// The method does not exist.
pub const METHOD_NOT_FOUND: i64 = -32601;
/// Invalid method parameters; the message names the field.
pub const INVALID_PARAMS: i64 = -32602;
/// Internal error of the server.
pub const INTERNAL_ERROR: i64 = -32603;
/// The server has too much in flight; retry later with backoff (Codex `error_code.rs`).
pub const SERVER_OVERLOADED: i64 = -32001;

/// A request id: a string or an integer (JSON-RPC 2.0 §4; fractional numbers are refused).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(untagged)]
pub enum RequestId {
    /// An integer id (Airlock's own server-to-client ids count up from 0).
    Integer(i64),
    /// A string id.
    String(String),
}

impl std::fmt::Display for RequestId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RequestId::Integer(i) => write!(f, "{i}"),
            RequestId::String(s) => write!(f, "{s:?}"),
        }
    }
}

/// A call that expects an answer.
#[derive(Clone, Debug, PartialEq)]
pub struct Request {
    /// The id the answer must carry.
    pub id: RequestId,
    /// The method name, e.g. `thread/start`.
    pub method: String,
    /// The params (an object or an array), `None` when absent or `null`.
    pub params: Option<Value>,
}

/// A call without an answer.
#[derive(Clone, Debug, PartialEq)]
pub struct Notification {
    /// The method name, e.g. `initialized`.
    pub method: String,
    /// The params, `None` when absent or `null`.
    pub params: Option<Value>,
}

/// A successful answer.
#[derive(Clone, Debug, PartialEq)]
pub struct Response {
    /// The id of the request it answers.
    pub id: RequestId,
    /// The result value.
    pub result: Value,
}

/// The `error` member of an error answer.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ErrorObject {
    /// One of the codes of this crate, or a server-defined code.
    pub code: i64,
    /// One human-readable sentence; names the offending field or value.
    pub message: String,
    /// Extra structured detail.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

impl ErrorObject {
    /// An error with `code` and `message` and no data.
    pub fn new(code: i64, message: impl Into<String>) -> Self {
        ErrorObject {
            code,
            message: message.into(),
            data: None,
        }
    }

    /// -32600 with `message`.
    pub fn invalid_request(message: impl Into<String>) -> Self {
        Self::new(INVALID_REQUEST, message)
    }

    /// -32601 `Method not found: METHOD`.
    pub fn method_not_found(method: &str) -> Self {
        Self::new(METHOD_NOT_FOUND, format!("Method not found: {method}"))
    }

    /// -32602 with `message` (which should name the field).
    pub fn invalid_params(message: impl Into<String>) -> Self {
        Self::new(INVALID_PARAMS, message)
    }

    /// -32603 with `message`.
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(INTERNAL_ERROR, message)
    }
}

/// An error answer. `id` is `None` (written as `null`) when the request's id could not be read.
#[derive(Clone, Debug, PartialEq)]
pub struct ErrorResponse {
    /// The id of the request it answers, if known.
    pub id: Option<RequestId>,
    /// What went wrong.
    pub error: ErrorObject,
}

/// Any JSON-RPC message, in either direction.
#[derive(Clone, Debug, PartialEq)]
pub enum Message {
    /// A call expecting an answer.
    Request(Request),
    /// A call without an answer.
    Notification(Notification),
    /// A successful answer.
    Response(Response),
    /// An error answer.
    Error(ErrorResponse),
}

impl Message {
    /// Classifies one line (without its newline). `Err` is the error answer to send back: -32700
    /// for bad JSON, -32600 for JSON that is not a message (its `id` is kept when readable).
    /// A `"jsonrpc"` member is optional; when present it must be `"2.0"`. Batches (arrays) are
    /// refused with -32600. An object with a repeated member name anywhere is refused too
    /// (-32600 naming it); when the message is an answer to one of our requests it becomes
    /// an error answer for that id, so the waiting request fails closed instead of reading
    /// whichever copy `serde_json` kept.
    pub fn from_line(line: &[u8]) -> Result<Message, ErrorResponse> {
        let value: Value = serde_json::from_slice(line).map_err(|e| ErrorResponse {
            id: None,
            error: ErrorObject::new(PARSE_ERROR, format!("Parse error: {e}")),
        })?;
        let Some(key) = crate::duplicates::duplicate_key(line) else {
            return Self::from_value(value);
        };
        let message = format!("Invalid Request: the member `{key}` appears twice in one object");
        match Self::from_value(value) {
            Ok(Message::Response(response)) => Ok(Message::Error(ErrorResponse {
                id: Some(response.id),
                error: ErrorObject::invalid_request(message),
            })),
            Ok(Message::Request(request)) => Err(invalid(Some(request.id), message)),
            Ok(Message::Error(error)) => Err(invalid(error.id, message)),
            Ok(Message::Notification(_)) => Err(invalid(None, message)),
            Err(error) => Err(error),
        }
    }

    /// Like [`Message::from_line`] for an already parsed value.
    pub fn from_value(value: Value) -> Result<Message, ErrorResponse> {
        let Value::Object(mut obj) = value else {
            let what = if value.is_array() {
                "batches are not supported"
            } else {
                "expected a JSON object"
            };
            return Err(invalid(None, format!("Invalid Request: {what}")));
        };
        let id = match obj.remove("id") {
            None => None,
            Some(v) => match serde_json::from_value::<RequestId>(v.clone()) {
                Ok(id) => Some(id),
                Err(_) if v.is_null() && obj.contains_key("error") => None,
                Err(_) => {
                    return Err(invalid(
                        None,
                        format!("Invalid Request: `id` must be a string or an integer, got {v}"),
                    ));
                }
            },
        };
        if let Some(version) = obj.remove("jsonrpc")
            && version != Value::String("2.0".into())
        {
            return Err(invalid(
                id,
                format!("Invalid Request: `jsonrpc` must be \"2.0\", got {version}"),
            ));
        }
        if let Some(method) = obj.remove("method") {
            let Value::String(method) = method else {
                return Err(invalid(id, "Invalid Request: `method` must be a string"));
            };
            let params = match obj.remove("params") {
                None | Some(Value::Null) => None,
                Some(p @ (Value::Object(_) | Value::Array(_))) => Some(p),
                Some(other) => {
                    return Err(invalid(
                        id,
                        format!(
                            "Invalid Request: `params` must be an object or an array, got {other}"
                        ),
                    ));
                }
            };
            return Ok(match id {
                Some(id) => Message::Request(Request { id, method, params }),
                None => Message::Notification(Notification { method, params }),
            });
        }
        if let Some(error) = obj.remove("error") {
            let error: ErrorObject = serde_json::from_value(error)
                .map_err(|e| invalid(id.clone(), format!("Invalid Request: `error`: {e}")))?;
            return Ok(Message::Error(ErrorResponse { id, error }));
        }
        match (id, obj.remove("result")) {
            (Some(id), Some(result)) => Ok(Message::Response(Response { id, result })),
            (None, Some(_)) => Err(invalid(None, "Invalid Request: a response needs an `id`")),
            (id, None) => Err(invalid(
                id,
                "Invalid Request: expected `method`, `result` or `error`",
            )),
        }
    }

    /// The message as a JSON value; `with_version` adds `"jsonrpc":"2.0"`.
    pub fn to_value(&self, with_version: bool) -> Value {
        let mut obj = Map::new();
        if with_version {
            obj.insert("jsonrpc".into(), Value::String("2.0".into()));
        }
        let id_value = |id: &RequestId| serde_json::to_value(id).unwrap_or(Value::Null);
        match self {
            Message::Request(r) => {
                obj.insert("id".into(), id_value(&r.id));
                obj.insert("method".into(), Value::String(r.method.clone()));
                if let Some(p) = &r.params {
                    obj.insert("params".into(), p.clone());
                }
            }
            Message::Notification(n) => {
                obj.insert("method".into(), Value::String(n.method.clone()));
                if let Some(p) = &n.params {
                    obj.insert("params".into(), p.clone());
                }
            }
            Message::Response(r) => {
                obj.insert("id".into(), id_value(&r.id));
                obj.insert("result".into(), r.result.clone());
            }
            Message::Error(e) => {
                obj.insert(
                    "id".into(),
                    e.id.as_ref().map(id_value).unwrap_or(Value::Null),
                );
                obj.insert(
                    "error".into(),
                    serde_json::to_value(&e.error).unwrap_or(Value::Null),
                );
            }
        }
        Value::Object(obj)
    }

    /// A request message.
    pub fn request(id: RequestId, method: impl Into<String>, params: Option<Value>) -> Self {
        Message::Request(Request {
            id,
            method: method.into(),
            params,
        })
    }

    /// A notification message.
    pub fn notification(method: impl Into<String>, params: Option<Value>) -> Self {
        Message::Notification(Notification {
            method: method.into(),
            params,
        })
    }

    /// A successful answer.
    pub fn response(id: RequestId, result: Value) -> Self {
        Message::Response(Response { id, result })
    }

    /// An error answer.
    pub fn error(id: Option<RequestId>, error: ErrorObject) -> Self {
        Message::Error(ErrorResponse { id, error })
    }
}

fn invalid(id: Option<RequestId>, message: impl Into<String>) -> ErrorResponse {
    ErrorResponse {
        id,
        error: ErrorObject::invalid_request(message),
    }
}

#[cfg(test)]
#[path = "message_tests.rs"]
mod tests;

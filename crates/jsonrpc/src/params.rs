//! Typed params whose errors name the offending field (spec 10: "-32602 (naming the field)").

use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::ErrorObject;

/// Deserializes `params` (absent means `{}`) into `T`. On failure returns -32602 with a message
/// that names the field path, e.g. `invalid params: command: invalid type: string "ls",
/// expected a sequence` or `invalid params: missing field `threadId``.
pub fn parse_params<T: DeserializeOwned>(params: Option<Value>) -> Result<T, ErrorObject> {
    let value = params.unwrap_or_else(|| Value::Object(Default::default()));
    serde_path_to_error::deserialize::<_, T>(value).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner().to_string();
        if path.is_empty() || path == "." {
            ErrorObject::invalid_params(format!("invalid params: {inner}"))
        } else {
            ErrorObject::invalid_params(format!("invalid params: {path}: {inner}"))
        }
    })
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde::Deserialize;
    use serde_json::json;

    use super::*;
    use crate::INVALID_PARAMS;

    #[derive(Debug, Deserialize)]
    #[serde(rename_all = "camelCase", deny_unknown_fields)]
    #[allow(dead_code)]
    struct Shell {
        thread_id: String,
        command: Vec<String>,
    }

    #[test]
    fn names_a_missing_field() {
        let e = parse_params::<Shell>(Some(json!({"command": ["ls"]}))).unwrap_err();
        assert_eq!(e.code, INVALID_PARAMS);
        assert!(e.message.contains("threadId"), "{}", e.message);
    }

    #[test]
    fn names_an_ill_typed_field() {
        let e = parse_params::<Shell>(Some(json!({"threadId": "t", "command": "ls"}))).unwrap_err();
        assert_eq!(e.code, INVALID_PARAMS);
        assert!(
            e.message
                .starts_with("invalid params: command: invalid type"),
            "{}",
            e.message
        );
    }

    #[test]
    fn names_an_ill_typed_element() {
        let e = parse_params::<Shell>(Some(json!({"threadId": "t", "command": ["ls", 3]})))
            .unwrap_err();
        assert!(
            e.message
                .starts_with("invalid params: command[1]: invalid type"),
            "{}",
            e.message
        );
    }

    #[test]
    fn absent_params_are_an_empty_object() {
        let e = parse_params::<Shell>(None).unwrap_err();
        assert!(e.message.contains("missing field"), "{}", e.message);
    }
}

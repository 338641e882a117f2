//! `initialize`: version negotiation, what the client can do, and the server's answer (MCP
//! `basic/lifecycle`; reference `adapters.md` §C3).

use serde_json::Value;
use serde_json::json;

/// The protocol versions Airlock speaks, oldest first (spec 13).
pub const SUPPORTED_PROTOCOL_VERSIONS: &[&str] = &["2025-06-18", "2025-11-25"];

/// What the client's `initialize` told us.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientHello {
    /// The version both sides use: the client's when Airlock supports it, else Airlock's
    /// newest (the client then decides whether it can go on, as MCP says).
    pub protocol_version: String,
    /// The client can answer `elicitation/create` in form mode.
    pub form_elicitation: bool,
    /// `clientInfo.name`, for messages.
    pub client_name: String,
}

/// Reads `initialize` params. `capabilities.elicitation` means form elicitation when it is
/// `{}` (2025-06-18; in 2025-11-25 `{}` means form only) or has `form`; a client that offers
/// only `url` cannot show Airlock's form.
///
/// # Errors
/// A message naming the field when `protocolVersion` is missing or not a string, or
/// `capabilities` is not an object.
pub fn read_hello(params: Option<&Value>) -> Result<ClientHello, String> {
    let params = params.cloned().unwrap_or_else(|| json!({}));
    let requested = match params.get("protocolVersion") {
        Some(Value::String(version)) => version.clone(),
        Some(_) => return Err("invalid params: protocolVersion: expected a string".to_owned()),
        None => return Err("invalid params: missing field `protocolVersion`".to_owned()),
    };
    let capabilities = match params.get("capabilities") {
        None | Some(Value::Null) => json!({}),
        Some(capabilities @ Value::Object(_)) => capabilities.clone(),
        Some(_) => return Err("invalid params: capabilities: expected an object".to_owned()),
    };
    let form_elicitation = match capabilities.get("elicitation") {
        Some(Value::Object(elicitation)) => {
            elicitation.is_empty() || elicitation.contains_key("form")
        }
        _ => false,
    };
    let protocol_version = if SUPPORTED_PROTOCOL_VERSIONS.contains(&requested.as_str()) {
        requested
    } else {
        SUPPORTED_PROTOCOL_VERSIONS
            .last()
            .copied()
            .unwrap_or_default()
            .to_owned()
    };
    let client_name = params
        .pointer("/clientInfo/name")
        .and_then(Value::as_str)
        .unwrap_or("the MCP client")
        .to_owned();
    Ok(ClientHello {
        protocol_version,
        form_elicitation,
        client_name,
    })
}

/// The `initialize` result.
#[must_use]
pub fn initialize_result(hello: &ClientHello) -> Value {
    json!({
        "protocolVersion": hello.protocol_version,
        "capabilities": {"tools": {"listChanged": false}},
        "serverInfo": {
            "name": "airlock",
            "title": "Airlock",
            "version": env!("CARGO_PKG_VERSION"),
        },
        "instructions": "Run shell commands with the `shell` tool and edit files with \
            `apply_patch`. Airlock checks each call against its exec policy, asks for approval \
            when the policy requires it, and runs it in a sandbox (writes limited to the \
            workspace, network off unless the profile allows it). A refused call comes back \
            with isError and the reason; do not retry it unchanged.",
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn elicitation_forms_by_version() {
        let hello = |capabilities: Value, version: &str| {
            read_hello(Some(
                &json!({"protocolVersion": version, "capabilities": capabilities}),
            ))
            .unwrap()
        };
        assert!(hello(json!({"elicitation": {}}), "2025-06-18").form_elicitation);
        assert!(
            hello(
                json!({"elicitation": {"form": {}, "url": {}}}),
                "2025-11-25"
            )
            .form_elicitation
        );
        assert!(!hello(json!({"elicitation": {"url": {}}}), "2025-11-25").form_elicitation);
        assert!(!hello(json!({}), "2025-11-25").form_elicitation);
        assert_eq!(
            hello(json!({}), "2025-06-18").protocol_version,
            "2025-06-18"
        );
        assert_eq!(
            hello(json!({}), "2024-11-05").protocol_version,
            "2025-11-25"
        );
        assert!(
            read_hello(Some(&json!({"capabilities": {}})))
                .unwrap_err()
                .contains("protocolVersion")
        );
    }
}

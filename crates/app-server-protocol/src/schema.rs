//! The JSON Schema (draft 2020-12) of every message, as `airlock schema --out DIR` writes it:
//! one file per type (`<Type>.json`, self-contained) and one bundle
//! (`airlock_app_server_protocol.schemas.json`) whose `$defs` hold every type, plus the
//! JSON-RPC envelopes and an `x-methods` table naming each method's params and result.

use std::path::Path;
use std::path::PathBuf;

use schemars::JsonSchema;
use schemars::SchemaGenerator;
use schemars::generate::SchemaSettings;
use serde_json::Map;
use serde_json::Value;
use serde_json::json;

use crate::methods::CLIENT_NOTIFICATIONS;
use crate::methods::CLIENT_REQUESTS;
use crate::methods::MethodSpec;
use crate::methods::SERVER_NOTIFICATIONS;
use crate::methods::SERVER_REQUESTS;

/// The bundle's file name.
pub const BUNDLE_FILE: &str = "airlock_app_server_protocol.schemas.json";

/// The `$schema` URI written into every file.
pub const DRAFT_2020_12: &str = "https://json-schema.org/draft/2020-12/schema";

type RootFn = fn(&SchemaSettings) -> Value;

fn root<T: JsonSchema>(settings: &SchemaSettings) -> Value {
    settings
        .clone()
        .into_generator()
        .into_root_schema_for::<T>()
        .to_value()
}

fn register<T: JsonSchema>(generator: &mut SchemaGenerator) {
    let _ = generator.subschema_for::<T>();
}

macro_rules! protocol_types {
    ($($ty:ident),* $(,)?) => {
        /// Every root type: its definition name, its standalone schema, and a registration
        /// into a shared generator.
        fn types() -> Vec<(&'static str, RootFn, fn(&mut SchemaGenerator))> {
            vec![$((stringify!($ty), root::<crate::$ty> as RootFn, register::<crate::$ty>)),*]
        }
    };
}

protocol_types!(
    InitializeParams,
    InitializeResponse,
    ThreadStartParams,
    ThreadStartResponse,
    ThreadIdParams,
    EmptyResponse,
    TurnStartResponse,
    TurnInterruptParams,
    ToolShellParams,
    ToolShellResponse,
    ToolApplyPatchParams,
    ToolApplyPatchResponse,
    PolicyExplainParams,
    InstructionsRenderResponse,
    CommandExecParams,
    CommandExecResponse,
    CommandExecutionRequestApprovalParams,
    CommandExecutionRequestApprovalResponse,
    FileChangeRequestApprovalParams,
    FileChangeRequestApprovalResponse,
    ThreadStartedNotification,
    TurnNotification,
    ItemNotification,
    CommandExecutionOutputDeltaNotification,
    ServerRequestResolvedNotification,
    WarningNotification,
);

fn settings() -> SchemaSettings {
    SchemaSettings::draft2020_12()
}

/// `policy/explain` answers with the `airlock explain --json` object, whose shape belongs to
/// the CLI; the schema only promises an object.
fn policy_explain_response() -> Value {
    json!({"title": "PolicyExplainResponse", "type": "object"})
}

fn envelopes() -> Vec<(&'static str, Value)> {
    let id = json!({"anyOf": [{"type": "integer"}, {"type": "string"}]});
    vec![
        ("RequestId", id),
        (
            "JSONRPCErrorObject",
            json!({"type": "object", "required": ["code", "message"], "properties": {
                "code": {"type": "integer"}, "message": {"type": "string"}, "data": true}}),
        ),
        (
            "JSONRPCError",
            json!({"type": "object", "required": ["id", "error"], "properties": {
                "jsonrpc": {"const": "2.0"},
                "id": {"anyOf": [{"$ref": "#/$defs/RequestId"}, {"type": "null"}]},
                "error": {"$ref": "#/$defs/JSONRPCErrorObject"}}}),
        ),
        (
            "JSONRPCRequest",
            json!({"type": "object", "required": ["id", "method"], "properties": {
                "jsonrpc": {"const": "2.0"}, "id": {"$ref": "#/$defs/RequestId"},
                "method": {"type": "string"}, "params": true}}),
        ),
        (
            "JSONRPCNotification",
            json!({"type": "object", "required": ["method"], "not": {"required": ["id"]},
                "properties": {"jsonrpc": {"const": "2.0"}, "method": {"type": "string"}, "params": true}}),
        ),
        (
            "JSONRPCResponse",
            json!({"type": "object", "required": ["id", "result"], "properties": {
                "jsonrpc": {"const": "2.0"}, "id": {"$ref": "#/$defs/RequestId"}, "result": true}}),
        ),
    ]
}

fn method_table(specs: &[MethodSpec]) -> Value {
    let mut table = Map::new();
    for spec in specs {
        table.insert(
            spec.method.to_owned(),
            json!({"params": spec.params, "result": spec.result}),
        );
    }
    Value::Object(table)
}

/// The bundle: every type under `$defs`, the envelopes, and `x-methods` with the method
/// tables (`clientRequests`, `clientNotifications`, `serverRequests`, `serverNotifications`).
#[must_use]
pub fn bundle() -> Value {
    let mut generator = settings().into_generator();
    for (_, _, register) in types() {
        register(&mut generator);
    }
    let mut defs: Map<String, Value> = generator.take_definitions(true).into_iter().collect();
    defs.insert(
        "PolicyExplainResponse".to_owned(),
        policy_explain_response(),
    );
    for (name, schema) in envelopes() {
        defs.insert(name.to_owned(), schema);
    }
    json!({
        "$schema": DRAFT_2020_12,
        "title": "AirlockAppServerProtocol",
        "description": "Messages of `airlock serve` (JSON-RPC 2.0, one message per line).",
        "$defs": defs,
        "x-methods": {
            "clientRequests": method_table(CLIENT_REQUESTS),
            "clientNotifications": method_table(CLIENT_NOTIFICATIONS),
            "serverRequests": method_table(SERVER_REQUESTS),
            "serverNotifications": method_table(SERVER_NOTIFICATIONS),
        },
    })
}

/// Writes one file per type and the bundle into `dir` (created if missing) and returns the
/// paths written, bundle last.
///
/// # Errors
/// The directory cannot be created or a file cannot be written.
pub fn write_schema(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    std::fs::create_dir_all(dir)?;
    let settings = settings();
    let mut written = Vec::new();
    let mut write = |name: &str, value: &Value| -> std::io::Result<()> {
        let path = dir.join(format!("{name}.json"));
        let mut text = serde_json::to_string_pretty(value).map_err(std::io::Error::other)?;
        text.push('\n');
        std::fs::write(&path, text)?;
        written.push(path);
        Ok(())
    };
    for (name, root, _) in types() {
        write(name, &root(&settings))?;
    }
    let mut explain = policy_explain_response();
    if let Some(obj) = explain.as_object_mut() {
        obj.insert(
            "$schema".to_owned(),
            Value::String(DRAFT_2020_12.to_owned()),
        );
    }
    write("PolicyExplainResponse", &explain)?;
    write(BUNDLE_FILE.trim_end_matches(".json"), &bundle())?;
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_method_names_a_defined_type() {
        let bundle = bundle();
        let defs = bundle["$defs"].as_object().expect("defs");
        for spec in CLIENT_REQUESTS
            .iter()
            .chain(SERVER_REQUESTS)
            .chain(SERVER_NOTIFICATIONS)
        {
            for name in [spec.params, spec.result].into_iter().flatten() {
                assert!(
                    defs.contains_key(name),
                    "{} names {name}, which has no schema",
                    spec.method
                );
            }
        }
    }

    #[test]
    fn writes_one_file_per_type_and_the_bundle() {
        let dir = tempfile::tempdir().expect("tempdir");
        let written = write_schema(dir.path()).expect("write");
        assert_eq!(written.len(), types().len() + 2);
        let shell: Value = serde_json::from_str(
            &std::fs::read_to_string(dir.path().join("ToolShellParams.json")).expect("read"),
        )
        .expect("json");
        assert_eq!(shell["$schema"], DRAFT_2020_12);
        let required: Vec<&str> = shell["required"]
            .as_array()
            .expect("required")
            .iter()
            .filter_map(Value::as_str)
            .collect();
        assert_eq!(required, ["threadId", "turnId", "callId", "command"]);
        assert!(dir.path().join(BUNDLE_FILE).is_file());
    }

    #[test]
    fn decisions_keep_codex_spellings() {
        use crate::CommandExecutionApprovalDecision as D;
        let amend = D::AcceptWithExecpolicyAmendment {
            execpolicy_amendment: vec!["git".into()],
        };
        assert_eq!(
            serde_json::to_value(&amend).expect("json"),
            json!({"acceptWithExecpolicyAmendment": {"execpolicy_amendment": ["git"]}})
        );
        assert_eq!(
            serde_json::to_value(D::AcceptForSession).expect("json"),
            json!("acceptForSession")
        );
        assert!(serde_json::from_value::<D>(json!("approved")).is_err());
    }
}

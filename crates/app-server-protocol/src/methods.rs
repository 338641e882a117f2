//! Method names and which type each method's params and result have (the table the server
//! dispatches on and `airlock schema` writes into its bundle).

/// One method: its name and the schema definitions of its params and result (`None`: no
/// params / no result).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MethodSpec {
    /// The JSON-RPC method name.
    pub method: &'static str,
    /// The definition name of its params.
    pub params: Option<&'static str>,
    /// The definition name of its result (requests only).
    pub result: Option<&'static str>,
}

const fn spec(method: &'static str, params: &'static str, result: &'static str) -> MethodSpec {
    MethodSpec {
        method,
        params: Some(params),
        result: Some(result),
    }
}

const fn note(method: &'static str, params: Option<&'static str>) -> MethodSpec {
    MethodSpec {
        method,
        params,
        result: None,
    }
}

/// `initialize`.
pub const INITIALIZE: &str = "initialize";
/// `initialized` (client notification).
pub const INITIALIZED: &str = "initialized";
/// `thread/start`.
pub const THREAD_START: &str = "thread/start";
/// `thread/end`.
pub const THREAD_END: &str = "thread/end";
/// `turn/start`.
pub const TURN_START: &str = "turn/start";
/// `turn/interrupt`.
pub const TURN_INTERRUPT: &str = "turn/interrupt";
/// `tool/shell`.
pub const TOOL_SHELL: &str = "tool/shell";
/// `tool/applyPatch`.
pub const TOOL_APPLY_PATCH: &str = "tool/applyPatch";
/// `policy/explain`.
pub const POLICY_EXPLAIN: &str = "policy/explain";
/// `instructions/render`.
pub const INSTRUCTIONS_RENDER: &str = "instructions/render";
/// `command/exec`.
pub const COMMAND_EXEC: &str = "command/exec";
/// `item/commandExecution/requestApproval` (server request).
pub const COMMAND_APPROVAL: &str = "item/commandExecution/requestApproval";
/// `item/fileChange/requestApproval` (server request).
pub const FILE_CHANGE_APPROVAL: &str = "item/fileChange/requestApproval";
/// `thread/started`.
pub const THREAD_STARTED: &str = "thread/started";
/// `turn/started`.
pub const TURN_STARTED: &str = "turn/started";
/// `turn/completed`.
pub const TURN_COMPLETED: &str = "turn/completed";
/// `item/started`.
pub const ITEM_STARTED: &str = "item/started";
/// `item/completed`.
pub const ITEM_COMPLETED: &str = "item/completed";
/// `item/commandExecution/outputDelta`.
pub const OUTPUT_DELTA: &str = "item/commandExecution/outputDelta";
/// `serverRequest/resolved`.
pub const SERVER_REQUEST_RESOLVED: &str = "serverRequest/resolved";
/// `warning`.
pub const WARNING: &str = "warning";

/// Requests the client sends.
pub const CLIENT_REQUESTS: &[MethodSpec] = &[
    spec(INITIALIZE, "InitializeParams", "InitializeResponse"),
    spec(THREAD_START, "ThreadStartParams", "ThreadStartResponse"),
    spec(THREAD_END, "ThreadIdParams", "EmptyResponse"),
    spec(TURN_START, "ThreadIdParams", "TurnStartResponse"),
    spec(TURN_INTERRUPT, "TurnInterruptParams", "EmptyResponse"),
    spec(TOOL_SHELL, "ToolShellParams", "ToolShellResponse"),
    spec(
        TOOL_APPLY_PATCH,
        "ToolApplyPatchParams",
        "ToolApplyPatchResponse",
    ),
    spec(
        POLICY_EXPLAIN,
        "PolicyExplainParams",
        "PolicyExplainResponse",
    ),
    spec(
        INSTRUCTIONS_RENDER,
        "ThreadIdParams",
        "InstructionsRenderResponse",
    ),
    spec(COMMAND_EXEC, "CommandExecParams", "CommandExecResponse"),
];

/// Notifications the client sends.
pub const CLIENT_NOTIFICATIONS: &[MethodSpec] = &[note(INITIALIZED, None)];

/// Requests the server sends (answered by the client).
pub const SERVER_REQUESTS: &[MethodSpec] = &[
    spec(
        COMMAND_APPROVAL,
        "CommandExecutionRequestApprovalParams",
        "CommandExecutionRequestApprovalResponse",
    ),
    spec(
        FILE_CHANGE_APPROVAL,
        "FileChangeRequestApprovalParams",
        "FileChangeRequestApprovalResponse",
    ),
];

/// Notifications the server sends.
pub const SERVER_NOTIFICATIONS: &[MethodSpec] = &[
    note(THREAD_STARTED, Some("ThreadStartedNotification")),
    note(TURN_STARTED, Some("TurnNotification")),
    note(TURN_COMPLETED, Some("TurnNotification")),
    note(ITEM_STARTED, Some("ItemNotification")),
    note(ITEM_COMPLETED, Some("ItemNotification")),
    note(
        OUTPUT_DELTA,
        Some("CommandExecutionOutputDeltaNotification"),
    ),
    note(
        SERVER_REQUEST_RESOLVED,
        Some("ServerRequestResolvedNotification"),
    ),
    note(WARNING, Some("WarningNotification")),
];

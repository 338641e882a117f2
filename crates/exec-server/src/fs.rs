//! `fs/*` (spec 09 §Methods). Without `sandbox` an operation runs in this process. With one,
//! it runs as a small coreutils command (`cat`, `mkdir`, `rm`, `cp`, `stat`, `find`) inside
//! the very sandbox a `process/start` with that context would get, so a file operation obeys
//! the same profile as a process: a read-only profile refuses writes (EROFS from the mount),
//! and a deny-read path is refused before anything runs (`Permission denied (os error 13)`).

use std::collections::BTreeMap;
use std::path::Path;
use std::path::PathBuf;
use std::process::Stdio;

use airlock_core::remote::protocol::FileSystemSandboxContext;
use airlock_core::remote::protocol::WirePath;
use airlock_jsonrpc::ErrorObject;
use airlock_permissions::ReadDenyMatcher;
use airlock_permissions::ResolveContext;
use airlock_permissions::file_system_sandbox_policy;
use base64::Engine as _;
use serde::Deserialize;
use serde::Serialize;
use serde_json::Value;
use serde_json::json;
use tokio::io::AsyncReadExt;
use tokio::io::AsyncWriteExt;

use crate::sandbox::Resolved;
use crate::server::ServerOptions;

/// The largest file `fs/readFile` returns: 64 MiB.
const MAX_FILE_BYTES: u64 = 64 << 20;

/// `fs/readFile` / `fs/getMetadata` / `fs/readDirectory` params.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct PathParams {
    path: WirePath,
    #[serde(default)]
    sandbox: Option<FileSystemSandboxContext>,
}

/// `fs/writeFile` params.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct WriteParams {
    path: WirePath,
    data_base64: String,
    #[serde(default)]
    sandbox: Option<FileSystemSandboxContext>,
}

/// `fs/createDirectory` params.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct CreateDirectoryParams {
    path: WirePath,
    #[serde(default)]
    recursive: bool,
    #[serde(default)]
    sandbox: Option<FileSystemSandboxContext>,
}

/// `fs/remove` params.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct RemoveParams {
    path: WirePath,
    #[serde(default)]
    recursive: bool,
    #[serde(default)]
    force: bool,
    #[serde(default)]
    sandbox: Option<FileSystemSandboxContext>,
}

/// `fs/copy` params.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct CopyParams {
    source_path: WirePath,
    destination_path: WirePath,
    #[serde(default)]
    recursive: bool,
    #[serde(default)]
    sandbox: Option<FileSystemSandboxContext>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct Metadata {
    is_directory: bool,
    is_file: bool,
    is_symlink: bool,
    created_at_ms: i64,
    modified_at_ms: i64,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct DirEntry {
    file_name: String,
    is_directory: bool,
    is_file: bool,
}

fn os_error(e: &std::io::Error) -> ErrorObject {
    ErrorObject::invalid_request(e.to_string())
}

fn parent_or_self(path: &Path) -> PathBuf {
    path.parent().unwrap_or(path).to_path_buf()
}

/// The sandbox of an operation on `path`, and the deny-read check before anything runs.
fn confine(
    options: &ServerOptions,
    context: Option<&FileSystemSandboxContext>,
    paths: &[&Path],
) -> Result<Option<Resolved>, ErrorObject> {
    let Some(context) = context else {
        return Ok(None);
    };
    let cwd = context.cwd.as_ref().map_or_else(
        || parent_or_self(paths.first().copied().unwrap_or(Path::new("/"))),
        |c| c.0.clone(),
    );
    let resolved = crate::sandbox::resolve(options, context, &cwd)?;
    let policy = file_system_sandbox_policy(&resolved.permissions);
    let matcher = ReadDenyMatcher::new(&policy, &ResolveContext::new(&resolved.policy_cwd));
    for path in paths {
        let canonical = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
        if matcher.is_read_denied(path) || matcher.is_read_denied(&canonical) {
            return Err(os_error(&std::io::Error::from_raw_os_error(libc_eacces())));
        }
    }
    Ok(Some(resolved))
}

const fn libc_eacces() -> i32 {
    13
}

/// Runs `argv` inside `resolved`'s sandbox with `input` on stdin; stdout on success.
async fn sandboxed(
    options: &ServerOptions,
    resolved: &Resolved,
    argv: &[&str],
    input: Option<Vec<u8>>,
) -> Result<Vec<u8>, ErrorObject> {
    let argv = argv.iter().map(|a| (*a).to_owned()).collect();
    let env = BTreeMap::from([("PATH".to_owned(), "/usr/bin:/bin".to_owned())]);
    let cwd = if resolved.policy_cwd.is_dir() {
        resolved.policy_cwd.clone()
    } else {
        PathBuf::from("/")
    };
    let launch = crate::sandbox::launch(options, argv, &cwd, env, Some(resolved))?;
    let Some((program, args)) = launch.argv.split_first() else {
        return Err(ErrorObject::internal("empty launch"));
    };
    let mut child = tokio::process::Command::new(program)
        .args(args)
        .current_dir(&launch.cwd)
        .env_clear()
        .envs(&launch.env)
        .stdin(if input.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| {
            ErrorObject::internal(format!("cannot start the sandboxed file operation: {e}"))
        })?;
    let stdin = child.stdin.take();
    let feed = async move {
        if let (Some(mut stdin), Some(input)) = (stdin, input) {
            let _ = stdin.write_all(&input).await;
            let _ = stdin.shutdown().await;
        }
    };
    let mut stdout = child.stdout.take();
    let mut stderr = child.stderr.take();
    let read_out = async {
        let mut buf = Vec::new();
        if let Some(out) = stdout.as_mut() {
            let _ = out.take(MAX_FILE_BYTES + 1).read_to_end(&mut buf).await;
        }
        buf
    };
    let read_err = async {
        let mut buf = Vec::new();
        if let Some(err) = stderr.as_mut() {
            let _ = err.take(64 << 10).read_to_end(&mut buf).await;
        }
        buf
    };
    let ((), out, err, status) = tokio::join!(feed, read_out, read_err, child.wait());
    let status = status.map_err(|e| ErrorObject::internal(e.to_string()))?;
    if status.success() {
        if out.len() as u64 > MAX_FILE_BYTES {
            return Err(ErrorObject::invalid_request(format!(
                "file is larger than {MAX_FILE_BYTES} bytes"
            )));
        }
        return Ok(out);
    }
    Err(ErrorObject::invalid_request(describe_failure(
        &String::from_utf8_lossy(&err),
    )))
}

/// The OS error a coreutils message stands for, spelled as Rust spells `io::Error`.
fn describe_failure(stderr: &str) -> String {
    let known = [
        ("Permission denied", 13),
        ("Read-only file system", 30),
        ("No such file or directory", 2),
        ("File exists", 17),
        ("Not a directory", 20),
        ("Is a directory", 21),
        ("Directory not empty", 39),
        ("Operation not permitted", 1),
    ];
    for (text, code) in known {
        if stderr.contains(text) {
            return std::io::Error::from_raw_os_error(code).to_string();
        }
    }
    let line = stderr
        .lines()
        .last()
        .unwrap_or("the sandboxed file operation failed");
    line.trim().to_owned()
}

fn path_str(path: &Path) -> Result<&str, ErrorObject> {
    path.to_str()
        .ok_or_else(|| ErrorObject::invalid_params("invalid params: path: not UTF-8"))
}

async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> std::io::Result<T> + Send + 'static,
) -> Result<T, ErrorObject> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| ErrorObject::internal(e.to_string()))?
        .map_err(|e| os_error(&e))
}

/// `fs/readFile` → `{dataBase64}`.
pub(crate) async fn read_file(
    options: &ServerOptions,
    p: PathParams,
) -> Result<Value, ErrorObject> {
    let path = p.path.0;
    let data = match confine(options, p.sandbox.as_ref(), &[&path])? {
        Some(resolved) => {
            sandboxed(options, &resolved, &["cat", "--", path_str(&path)?], None).await?
        }
        None => blocking(move || std::fs::read(path)).await?,
    };
    Ok(json!({ "dataBase64": base64::engine::general_purpose::STANDARD.encode(data) }))
}

/// `fs/writeFile` → `{}`.
pub(crate) async fn write_file(
    options: &ServerOptions,
    p: WriteParams,
) -> Result<Value, ErrorObject> {
    let data = base64::engine::general_purpose::STANDARD
        .decode(p.data_base64.as_bytes())
        .map_err(|e| ErrorObject::invalid_params(format!("invalid params: dataBase64: {e}")))?;
    let path = p.path.0;
    match confine(options, p.sandbox.as_ref(), &[&path])? {
        Some(resolved) => {
            let script = "cat > \"$1\"";
            sandboxed(
                options,
                &resolved,
                &["sh", "-c", script, "sh", path_str(&path)?],
                Some(data),
            )
            .await?;
        }
        None => blocking(move || std::fs::write(path, data)).await?,
    }
    Ok(json!({}))
}

/// `fs/createDirectory` → `{}`.
pub(crate) async fn create_directory(
    options: &ServerOptions,
    p: CreateDirectoryParams,
) -> Result<Value, ErrorObject> {
    let path = p.path.0;
    match confine(options, p.sandbox.as_ref(), &[&path])? {
        Some(resolved) => {
            let mut argv = vec!["mkdir"];
            if p.recursive {
                argv.push("-p");
            }
            argv.extend(["--", path_str(&path)?]);
            sandboxed(options, &resolved, &argv, None).await?;
        }
        None if p.recursive => blocking(move || std::fs::create_dir_all(path)).await?,
        None => blocking(move || std::fs::create_dir(path)).await?,
    }
    Ok(json!({}))
}

/// `fs/remove` → `{}`.
pub(crate) async fn remove(options: &ServerOptions, p: RemoveParams) -> Result<Value, ErrorObject> {
    let path = p.path.0;
    match confine(options, p.sandbox.as_ref(), &[&path])? {
        Some(resolved) => {
            let mut argv = vec!["rm"];
            if p.recursive {
                argv.push("-r");
            }
            if p.force {
                argv.push("-f");
            }
            argv.extend(["--", path_str(&path)?]);
            sandboxed(options, &resolved, &argv, None).await?;
        }
        None => {
            let (recursive, force) = (p.recursive, p.force);
            blocking(move || {
                let result = match std::fs::symlink_metadata(&path) {
                    Ok(meta) if meta.is_dir() && recursive => std::fs::remove_dir_all(&path),
                    Ok(meta) if meta.is_dir() => std::fs::remove_dir(&path),
                    Ok(_) => std::fs::remove_file(&path),
                    Err(e) => Err(e),
                };
                match result {
                    Err(e) if force && e.kind() == std::io::ErrorKind::NotFound => Ok(()),
                    other => other,
                }
            })
            .await?;
        }
    }
    Ok(json!({}))
}

/// `fs/copy` → `{}`.
pub(crate) async fn copy(options: &ServerOptions, p: CopyParams) -> Result<Value, ErrorObject> {
    let (source, destination) = (p.source_path.0, p.destination_path.0);
    match confine(options, p.sandbox.as_ref(), &[&source, &destination])? {
        Some(resolved) => {
            let mut argv = vec!["cp", "-P"];
            if p.recursive {
                argv.push("-R");
            }
            argv.extend(["--", path_str(&source)?, path_str(&destination)?]);
            sandboxed(options, &resolved, &argv, None).await?;
        }
        None => {
            if p.recursive {
                return Err(ErrorObject::invalid_request(
                    "fs/copy: recursive copies are only supported with a sandbox context",
                ));
            }
            blocking(move || std::fs::copy(source, destination).map(drop)).await?;
        }
    }
    Ok(json!({}))
}

/// `fs/getMetadata` → `{isDirectory, isFile, isSymlink, createdAtMs, modifiedAtMs}`.
pub(crate) async fn get_metadata(
    options: &ServerOptions,
    p: PathParams,
) -> Result<Value, ErrorObject> {
    let path = p.path.0;
    let meta = match confine(options, p.sandbox.as_ref(), &[&path])? {
        Some(resolved) => {
            let out = sandboxed(
                options,
                &resolved,
                &["stat", "-c", "%F|%W|%Y", "--", path_str(&path)?],
                None,
            )
            .await?;
            let text = String::from_utf8_lossy(&out);
            let mut parts = text.trim().split('|');
            let kind = parts.next().unwrap_or_default().to_owned();
            let created: i64 = parts.next().and_then(|s| s.parse().ok()).unwrap_or(0);
            let modified: i64 = parts.next().and_then(|s| s.parse().ok()).unwrap_or(0);
            Metadata {
                is_directory: kind == "directory",
                is_file: kind.starts_with("regular"),
                is_symlink: kind == "symbolic link",
                created_at_ms: created.saturating_mul(1000),
                modified_at_ms: modified.saturating_mul(1000),
            }
        }
        None => {
            blocking(move || {
                let meta = std::fs::symlink_metadata(&path)?;
                let ms = |t: std::io::Result<std::time::SystemTime>| {
                    t.ok()
                        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
                };
                Ok(Metadata {
                    is_directory: meta.is_dir(),
                    is_file: meta.is_file(),
                    is_symlink: meta.file_type().is_symlink(),
                    created_at_ms: ms(meta.created()),
                    modified_at_ms: ms(meta.modified()),
                })
            })
            .await?
        }
    };
    serde_json::to_value(meta).map_err(|e| ErrorObject::internal(e.to_string()))
}

/// `fs/readDirectory` → `{entries: [{fileName, isDirectory, isFile}]}`.
pub(crate) async fn read_directory(
    options: &ServerOptions,
    p: PathParams,
) -> Result<Value, ErrorObject> {
    let path = p.path.0;
    let mut entries = match confine(options, p.sandbox.as_ref(), &[&path])? {
        Some(resolved) => {
            let argv = [
                "find",
                path_str(&path)?,
                "-mindepth",
                "1",
                "-maxdepth",
                "1",
                "-printf",
                "%y/%f\\0",
            ];
            let out = sandboxed(options, &resolved, &argv, None).await?;
            out.split(|b| *b == 0)
                .filter(|e| !e.is_empty())
                .filter_map(|e| {
                    let text = String::from_utf8_lossy(e);
                    let (kind, name) = text.split_once('/')?;
                    Some(DirEntry {
                        file_name: name.to_owned(),
                        is_directory: kind == "d",
                        is_file: kind == "f",
                    })
                })
                .collect::<Vec<_>>()
        }
        None => {
            blocking(move || {
                let mut entries = Vec::new();
                for entry in std::fs::read_dir(path)? {
                    let entry = entry?;
                    let kind = entry.file_type()?;
                    entries.push(DirEntry {
                        file_name: entry.file_name().to_string_lossy().into_owned(),
                        is_directory: kind.is_dir(),
                        is_file: kind.is_file(),
                    });
                }
                Ok(entries)
            })
            .await?
        }
    };
    entries.sort_by(|a, b| a.file_name.cmp(&b.file_name));
    Ok(json!({ "entries": entries }))
}

//! Mercurial's counterpart of [`super::git_repo`]: `hg` runs hooks and extensions named by
//! the repository's `.hg/hgrc` (issue 11 item 4).

use std::path::Path;

/// Mercurial runs `[hooks]` and `[extensions]` from the repository's `.hg/hgrc`: the
/// nearest `.hg` above `dir` must not be writable in the sandbox nor carry an `hgrc`
/// (not parsed: any repository configuration counts, fail closed).
pub(super) fn hg_refusal(
    argv: &[String],
    dir: Option<&Path>,
    writable: &dyn Fn(&Path) -> bool,
) -> Option<String> {
    let refuse = |why: String| Some(format!("`{}` {why}", argv.join(" ")));
    let Some(dir) = dir else {
        return refuse("may run in a directory Airlock cannot determine".into());
    };
    // hg takes its global options anywhere on the line (`hg status --config
    // hooks.pre-status=…` matches a rule for `hg status`).
    if argv
        .iter()
        .any(|arg| arg.starts_with("-R") || arg.starts_with("--repo") || arg.starts_with("--cwd"))
    {
        return refuse(
            "names its repository itself (-R/--repository/--cwd), which is not checked".into(),
        );
    }
    if argv
        .iter()
        .any(|arg| arg.starts_with("--config") || arg == "--debugger")
    {
        return refuse(
            "sets configuration on its command line (--config can name hooks and extensions)"
                .into(),
        );
    }
    let dot_hg = dir
        .ancestors()
        .map(|d| d.join(".hg"))
        .find(|p| p.is_dir())?;
    if writable(&dot_hg) {
        return refuse(format!(
            "would use {}, which is writable inside the sandbox",
            dot_hg.display()
        ));
    }
    dot_hg.join("hgrc").exists().then(|| {
        format!(
            "`{}` would read {}, which can run hooks and extensions",
            argv.join(" "),
            dot_hg.join("hgrc").display()
        )
    })
}

# Shared helpers for scripts/demo and scripts/test. Source it; do not run it.
# Every step says what it does; every install step is skipped when already satisfied.

say() { printf '\n==> %s\n' "$*" >&2; }

as_root() {
  if [ "$(id -u)" = 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo "$@"; else
    echo "error: need root (or sudo) to run: $*" >&2; return 1; fi
}

apt_updated=0
# ensure_apt CMD PACKAGE: installs PACKAGE with apt-get when CMD is not on PATH.
ensure_apt() {
  local cmd="$1" pkg="$2"
  if command -v "$cmd" >/dev/null 2>&1; then
    echo "$cmd: already installed ($pkg)" >&2
    return 0
  fi
  if ! command -v apt-get >/dev/null 2>&1; then
    echo "error: '$cmd' is missing and apt-get is not available; install package '$pkg' by hand" >&2
    return 1
  fi
  if [ "$apt_updated" = 0 ]; then
    say "apt-get update"
    as_root apt-get update -qq
    apt_updated=1
  fi
  say "installing $pkg (for $cmd)"
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$pkg" >/dev/null
}

# The workspace's minimum Rust version (`rust-version` in Cargo.toml), e.g. 1.89.
workspace_rust_version() {
  sed -n 's/^rust-version *= *"\([0-9.]*\)".*/\1/p' Cargo.toml | head -n 1
}

# version_at_least HAVE WANT: true when dotted version HAVE >= WANT.
version_at_least() {
  [ "$(printf '%s\n%s\n' "$2" "$1" | sort -t. -k1,1n -k2,2n -k3,3n | head -n 1)" = "$2" ]
}

# ensure_rust: a toolchain at least the workspace's rust-version, with rustfmt and clippy.
# Installs rustup when cargo is missing; with rustup, updates a too-old toolchain and adds
# missing components; without rustup (Debian's own cargo is too old for edition 2024), says
# exactly what to do and fails.
ensure_rust() {
  if [ -x "$HOME/.cargo/bin/cargo" ]; then export PATH="$HOME/.cargo/bin:$PATH"; fi
  local want have
  want="$(workspace_rust_version)"
  say "Rust toolchain: need >= ${want:-?} with rustfmt and clippy"
  if ! command -v cargo >/dev/null 2>&1; then
    ensure_apt curl curl
    say "installing the Rust toolchain with rustup (cargo is missing)"
    curl -sSf https://sh.rustup.rs | sh -s -- -y --profile minimal --component clippy,rustfmt
    export PATH="$HOME/.cargo/bin:$PATH"
  fi
  have="$(rustc --version 2>/dev/null | sed -n 's/^rustc \([0-9][0-9.]*\).*/\1/p')"
  if [ -n "$want" ] && ! version_at_least "${have:-0}" "$want"; then
    if command -v rustup >/dev/null 2>&1; then
      say "rustc ${have:-?} is older than $want: rustup update stable"
      rustup update stable
      rustup default stable
      have="$(rustc --version | sed -n 's/^rustc \([0-9][0-9.]*\).*/\1/p')"
    fi
    if ! version_at_least "${have:-0}" "$want"; then
      echo "error: rustc ${have:-unknown} ($(command -v rustc)) is older than $want, the workspace's rust-version." >&2
      echo "       Debian's packaged cargo is too old for edition 2024. Remove it (apt-get remove cargo rustc)" >&2
      echo "       and install rustup: curl -sSf https://sh.rustup.rs | sh -s -- -y --component clippy,rustfmt" >&2
      return 1
    fi
  fi
  local component
  for component in rustfmt clippy; do
    local probe="cargo fmt --version"
    [ "$component" = clippy ] && probe="cargo clippy --version"
    if $probe >/dev/null 2>&1; then continue; fi
    if command -v rustup >/dev/null 2>&1; then
      say "adding the $component component: rustup component add $component"
      rustup component add "$component"
    else
      echo "error: '$probe' does not work and rustup is not installed; install rustup (see above) or your distribution's $component package" >&2
      return 1
    fi
  done
  echo "rustc $have, $(cargo fmt --version), $(cargo clippy --version): ok" >&2
}

ensure_build_deps() {
  ensure_apt gcc build-essential
  ensure_apt python3 python3
  ensure_apt git git
  ensure_rust
}

# What the Linux sandbox and its tests need at run time.
ensure_sandbox_deps() {
  ensure_apt bwrap bubblewrap
  ensure_apt script util-linux
  # The interactive-prompt tests drive `airlock exec` in a real terminal under tmux; they
  # skip (saying so) only when tmux cannot be installed.
  ensure_apt tmux tmux || echo "warning: tmux could not be installed; the interactive-prompt tests will be skipped" >&2
}

# build_release_airlock: builds the release `airlock` into target/release/airlock.
# On glibc Linux it is linked as a static PIE: every sandboxed command and policy
# check starts this binary, and skipping the dynamic loader (symbol lookup, mapping
# libc/libm/libgcc_s) saves ~0.4 ms and ~0.8 MiB per start; glibc >= 2.34 has the
# `files` and `dns` name services built in, all Airlock uses. The build names its
# --target explicitly so the flag reaches only target code: proc macros must stay
# dynamic libraries. Other hosts get the ordinary build.
build_release_airlock() {
  local host
  host="$(rustc -vV | sed -n 's/^host: //p')"
  case "$host" in
    *-linux-gnu)
      say "building target/release/airlock (release, static PIE for $host)"
      local var
      var="CARGO_TARGET_$(printf '%s' "$host" | tr 'a-z-' 'A-Z_')_RUSTFLAGS"
      env "$var=-C target-feature=+crt-static -C link-arg=-Wl,-z,pack-relative-relocs" \
        cargo build --locked --release --target "$host" -p airlock-cli
      mkdir -p target/release
      cp -f "target/$host/release/airlock" target/release/airlock
      ;;
    *)
      say "building target/release/airlock (release)"
      cargo build --locked --release -p airlock-cli
      ;;
  esac
}

# demo_apply_patch AIRLOCK DIR: the apply_patch step of scripts/demo (spec 11). Builds a
# workspace under DIR (with its own AIRLOCK_HOME) and an "outside" folder under $HOME (not
# under /tmp, which :workspace makes writable), then: an edit inside the workspace applies
# without a prompt (sandboxed); an edit outside is refused non-interactively and the outside
# file is unchanged. Exits non-zero if either result is not what it should be.
demo_apply_patch() {
  local airlock="$1" dir="$2" outside status
  rm -rf "$dir"
  mkdir -p "$dir/home" "$dir/workspace"
  outside="$(mktemp -d "${HOME:-$dir}/airlock-demo-outside.XXXXXX")"
  printf 'port = 80\n' > "$dir/workspace/settings.conf"
  printf 'keep me\n' > "$outside/notes.txt"
  say "apply_patch: an edit inside the workspace (no prompt, applied by a sandboxed child)"
  status=0
  (cd "$dir/workspace" && AIRLOCK_HOME="$dir/home" "$airlock" apply-patch -a on-request -P :workspace \
    - <<'PATCH'
*** Begin Patch
*** Update File: settings.conf
-port = 80
+port = 8080
*** End Patch
PATCH
  ) || status=$?
  echo "exit status: $status; settings.conf now: $(cat "$dir/workspace/settings.conf")"
  if [ "$status" != 0 ] || [ "$(cat "$dir/workspace/settings.conf")" != "port = 8080" ]; then
    echo "UNEXPECTED: the workspace edit did not apply" >&2; rm -rf "$outside"; return 1
  fi
  say "apply_patch: an edit outside the workspace ($outside), nobody to ask: refused (exit 125)"
  status=0
  printf '*** Begin Patch\n*** Update File: %s\n-keep me\n+overwritten\n*** End Patch\n' "$outside/notes.txt" |
    (cd "$dir/workspace" && AIRLOCK_HOME="$dir/home" "$airlock" apply-patch -a on-request -P :workspace -) ||
    status=$?
  echo "exit status: $status; outside notes.txt still: $(cat "$outside/notes.txt")"
  if [ "$status" != 125 ] || [ "$(cat "$outside/notes.txt")" != "keep me" ]; then
    echo "UNEXPECTED: the outside edit was not refused" >&2; rm -rf "$outside"; return 1
  fi
  rm -rf "$outside"
}

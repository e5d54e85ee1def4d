//! Interpreter resolution and the CPython version probe, once at load (docs/python.md#interpreter).

use std::os::fd::AsRawFd;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use nix::sys::signal::{killpg, Signal};
use nix::unistd::{access, AccessFlags, Pid};

use crate::python::process::errors;
use crate::sandbox::report::{read_until, ReadEnd};

pub const PROBE_TIMEOUT: Duration = Duration::from_millis(5000);
const PROBE_OUTPUT_CAP: usize = 1024;

/// Runs on Python 2 and 3: implementation, major, minor, micro on line one; `sys.executable` on two;
/// then the installation's prefixes, one per line (what a sandboxed child may read).
pub const PROBE: &str = "import sys\n\
i = getattr(sys, 'implementation', None)\n\
n = i.name if i is not None else ('pypy' if hasattr(sys, 'pypy_version_info') else 'cpython')\n\
v = sys.version_info\n\
p = [getattr(sys, k, '') or '' for k in ('prefix', 'base_prefix', 'exec_prefix', 'base_exec_prefix')]\n\
sys.stdout.write('%s %d %d %d\\n%s\\n%s\\n' % (n, v[0], v[1], v[2], sys.executable or '', '\\n'.join(p)))\n";

/// The frozen result of resolution and probing.
#[derive(Debug, Clone)]
pub struct Interpreter {
    /// `pythonBin` resolved to an absolute path.
    pub resolved: PathBuf,
    /// What runs spawn: the probe's `sys.executable` when usable, else `resolved`.
    pub executable: PathBuf,
    /// `cpython 3 11 7`
    pub version: String,
    /// The installation's directories (`sys.prefix` and friends, absolute, deduplicated).
    pub prefixes: Vec<PathBuf>,
}

fn executable_regular_file(p: &Path) -> bool {
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        && access(p, AccessFlags::X_OK).is_ok()
}

fn quoted(bin: &str) -> String {
    crate::seam::validate::json_quote(bin)
}

/// Lexical normalization, as Node's `path.resolve` does: `.` dropped, `..` pops (no symlinks read).
fn normalize(p: &Path) -> PathBuf {
    use std::path::Component;
    let mut out = PathBuf::from("/");
    for c in p.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::Normal(part) => out.push(part),
            Component::RootDir | Component::CurDir | Component::Prefix(_) => {}
        }
    }
    out
}

/// Resolves `pythonBin` against `cwd` (paths with `/`) or the absolute entries of `path` (basenames).
pub fn resolve(bin: &str, path: Option<&str>, cwd: &Path) -> Result<PathBuf, String> {
    if bin.contains('/') {
        let p = normalize(&cwd.join(bin)); // joining an absolute path replaces cwd
        if executable_regular_file(&p) {
            return Ok(p);
        }
        return Err(format!("config.pythonBin {} is not an executable regular file", quoted(bin)));
    }
    for dir in path.unwrap_or("").split(':') {
        // Empty and relative entries are skipped: only the host's absolute PATH counts.
        if !dir.starts_with('/') {
            continue;
        }
        let candidate = Path::new(dir).join(bin);
        if executable_regular_file(&candidate) {
            return Ok(candidate);
        }
    }
    Err(format!("config.pythonBin {} does not resolve on PATH", quoted(bin)))
}

/// Runs `<bin> -I -c <code> [args]` with `{ TMPDIR }` only, reading at most `cap` bytes of stdout,
/// and SIGKILLs its process group after 5000 ms.
fn run_capture(bin: &Path, code: &str, args: &[&str], tmpdir: &str, cap: usize) -> Result<Vec<u8>, String> {
    let mut cmd = Command::new(bin);
    cmd.args(["-I", "-c", code])
        .args(args)
        .env_clear()
        .env("TMPDIR", tmpdir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .process_group(0);
    let mut child = cmd.spawn().map_err(|e| errors::syscall(&format!("spawn {}", bin.display()), &e))?;
    let pid = child.id() as i32;
    let deadline = Instant::now() + PROBE_TIMEOUT;
    let out = child.stdout.take().expect("piped stdout");
    let mut buf = Vec::new();
    // Read until EOF or the cap, then wait for exit, all under the one deadline.
    let end = read_until(out.as_raw_fd(), deadline, |bytes| {
        buf.extend_from_slice(&bytes[..bytes.len().min(cap - buf.len())]);
        buf.len() >= cap
    });
    let timed_out = end == ReadEnd::TimedOut;
    drop(out);
    let status = loop {
        if timed_out {
            break None;
        }
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(2)),
            Ok(None) => break None,
            Err(e) => return Err(errors::syscall("waitpid", &e)),
        }
    };
    let Some(status) = status else {
        let _ = killpg(Pid::from_raw(pid), Signal::SIGKILL);
        let _ = child.wait();
        return Err(format!("timed out after {}ms", PROBE_TIMEOUT.as_millis()));
    };
    use std::os::unix::process::ExitStatusExt;
    if let Some(sig) = status.signal() {
        let name = Signal::try_from(sig).map(|s| s.as_str().to_string()).unwrap_or_else(|_| sig.to_string());
        return Err(format!("killed by {name}"));
    }
    match status.code() {
        Some(0) => Ok(buf),
        Some(code) => Err(format!("exited with code {code}")),
        None => Err("exited abnormally".into()),
    }
}

/// Compiles the child's modules into unchecked-hash `.pyc` files and prints `<relative path>\t<hex>`
/// lines. Staged next to the sources, they spare every run the compile (the main script itself is
/// never cached by CPython, which is why `bootstrap.py` is a thin entry).
const PRECOMPILE: &str = r#"import importlib.util, os, py_compile, sys, tempfile
src_dir = sys.argv[1]
for name in ('protocol.py', 'runner.py'):
    src = os.path.join(src_dir, name)
    rel = os.path.relpath(importlib.util.cache_from_source(src), src_dir)
    fd, tmp = tempfile.mkstemp(suffix='.pyc')
    os.close(fd)
    try:
        py_compile.compile(src, cfile=tmp, dfile=name, doraise=True,
                           invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)
        with open(tmp, 'rb') as f:
            sys.stdout.write(rel + '\t' + f.read().hex() + '\n')
    finally:
        os.unlink(tmp)
"#;

pub use crate::python::process::staging::CachedFile;

fn hex_decode(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok()).collect()
}

/// Best effort: `None` when the interpreter cannot produce the cache (runs then compile from source).
pub fn precompile(executable: &Path, tmpdir: &str) -> Option<Vec<CachedFile>> {
    // The sources are the addon's own copies, written out once for the compiler.
    let mut sources = crate::python::process::staging::Staging::create(tmpdir, None).ok()?;
    if sources.stage_bootstrap(&[]).is_err() {
        sources.remove();
        return None;
    }
    let out = run_capture(executable, PRECOMPILE, &[sources.dir.to_str()?], tmpdir, 4 << 20);
    sources.remove();
    let out = out.ok()?;
    let text = String::from_utf8(out).ok()?;
    let mut files = Vec::new();
    for line in text.lines() {
        let (rel, hex) = line.split_once('\t')?;
        let name = rel.strip_prefix("__pycache__/")?;
        if name.is_empty() || name.contains('/') || name.starts_with('.') {
            return None;
        }
        files.push((rel.to_string(), hex_decode(hex)?));
    }
    (files.len() == 2).then_some(files)
}

/// Parses `^(\S+) (\d+) (\d+) (\d+)$` from the first line.
fn parse_version(line: &str) -> Option<(String, u64, u64, u64)> {
    let parts: Vec<&str> = line.split(' ').collect();
    let [imp, maj, min, mic] = parts.as_slice() else {
        return None;
    };
    let non_space = |s: &str| !s.is_empty() && !s.chars().any(char::is_whitespace);
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if !non_space(imp) || !digits(maj) || !digits(min) || !digits(mic) {
        return None;
    }
    Some((imp.to_string(), maj.parse().ok()?, min.parse().ok()?, mic.parse().ok()?))
}

/// Resolution plus probe; errors are the messages of docs/python.md#interpreter without the package
/// prefix.
pub fn load(bin: &str, path: Option<&str>, cwd: &Path, tmpdir: &str) -> Result<Interpreter, String> {
    let resolved = resolve(bin, path, cwd)?;
    let q = quoted(bin);
    let out = run_capture(&resolved, PROBE, &[], tmpdir, PROBE_OUTPUT_CAP)
        .map_err(|m| format!("config.pythonBin {q} failed the CPython version probe: {m}"))?;
    let text = String::from_utf8_lossy(&out);
    let mut lines = text.split('\n');
    let first = lines.next().unwrap_or("");
    let Some((imp, maj, min, mic)) = parse_version(first) else {
        return Err(format!("config.pythonBin {q} did not report a CPython version"));
    };
    if imp != "cpython" {
        return Err(format!("config.pythonBin {q} must be CPython, got {imp}"));
    }
    if (maj, min) < (3, 10) {
        return Err(format!("config.pythonBin {q} must be CPython 3.10 or newer, got {imp} {maj}.{min}.{mic}"));
    }
    let reported = lines.next().unwrap_or("");
    let executable = if reported.starts_with('/') && executable_regular_file(Path::new(reported)) {
        PathBuf::from(reported)
    } else {
        resolved.clone()
    };
    let mut prefixes: Vec<PathBuf> = Vec::new();
    for line in lines.filter(|l| l.starts_with('/')) {
        let p = PathBuf::from(line);
        if !prefixes.contains(&p) {
            prefixes.push(p);
        }
    }
    Ok(Interpreter { resolved, executable, version: format!("{imp} {maj} {min} {mic}"), prefixes })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn precompile_with_the_real_interpreter() {
        let python =
            resolve("python3", std::env::var("PATH").ok().as_deref(), Path::new("/")).expect("python3 on PATH");
        let files = precompile(&python, "/tmp").expect("cache");
        let names: Vec<&str> = files.iter().map(|(rel, _)| rel.as_str()).collect();
        assert!(
            names[0].starts_with("__pycache__/protocol.") && names[1].starts_with("__pycache__/runner."),
            "{names:?}"
        );
        // An unchecked hash-based pyc: flags word 0b01 after the magic number.
        assert!(files.iter().all(|(_, bytes)| bytes.len() > 16 && bytes[4..8] == [1, 0, 0, 0]));
        assert!(precompile(Path::new("/bin/false"), "/tmp").is_none());
    }

    #[test]
    fn version_regex() {
        assert_eq!(parse_version("cpython 3 11 7"), Some(("cpython".into(), 3, 11, 7)));
        assert_eq!(parse_version("pypy 3 10 0"), Some(("pypy".into(), 3, 10, 0)));
        for bad in
            ["", "cpython 3 11", "cpython 3 11 7 1", "cpython  3 11 7", "cpython 3 11 7\r", "cpython 3 x 7", " 3 11 7"]
        {
            assert_eq!(parse_version(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn path_search_skips_relative_and_empty_entries() {
        let cwd = Path::new("/");
        assert!(resolve("sh", Some(":.:bin:/bin"), cwd).is_ok_and(|p| p == Path::new("/bin/sh")));
        assert_eq!(resolve("sh", Some(".:bin"), cwd).unwrap_err(), "config.pythonBin \"sh\" does not resolve on PATH");
        assert_eq!(
            resolve("./definitely-not-there-python", None, cwd).unwrap_err(),
            "config.pythonBin \"./definitely-not-there-python\" is not an executable regular file"
        );
        assert!(resolve("/tmp", None, cwd).is_err(), "a directory is not an executable regular file");
        assert_eq!(resolve("bin/sh", None, cwd).unwrap(), Path::new("/bin/sh"), "relative paths resolve against cwd");
    }
}

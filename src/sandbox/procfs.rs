//! What the host's `/proc` says about a child: its `stat` fields (state, process group, start
//! time, CPU ticks), read the one way both backends' supervisors need.

/// `/proc/<pid>/stat` fields after the command name (which may itself contain `)`), split on
/// spaces: index 0 is the state (field 3 of the line), 2 the process group, 11 and 12 the user
/// and system ticks, 19 the start time.
#[cfg(target_os = "linux")]
pub fn stat_fields(pid: i32) -> Option<Vec<String>> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after = &stat[stat.rfind(')')? + 1..];
    Some(after.split_whitespace().map(str::to_string).collect())
}

/// The process's start time (field 22), in clock ticks since boot.
#[cfg(target_os = "linux")]
pub fn start_time(pid: i32) -> Option<u64> {
    stat_fields(pid)?.get(START_TIME)?.parse().ok()
}

/// The process's parent (field 4) and start time, read in one look: a process seen as some
/// parent's child is known by when it started, whatever later takes its pid.
pub fn parent_and_start(pid: i32) -> Option<(i32, u64)> {
    let fields = stat_fields(pid)?;
    Some((fields.get(PARENT)?.parse().ok()?, fields.get(START_TIME)?.parse().ok()?))
}

/// Fields of the stat line after the command's closing parenthesis (field 3 is index 0).
const PARENT: usize = 1;
const START_TIME: usize = 19;

#[cfg(not(target_os = "linux"))]
pub fn start_time(_pid: i32) -> Option<u64> {
    None
}

/// CPU time of the process so far (all its threads), in ms.
#[cfg(target_os = "linux")]
pub fn cpu_ms(pid: i32) -> Option<f64> {
    let fields = stat_fields(pid)?;
    let ticks = |i: usize| fields.get(i).and_then(|f| f.parse::<f64>().ok());
    // SAFETY: sysconf is always safe.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as f64;
    Some((ticks(11)? + ticks(12)?) * 1000.0 / hz)
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn own_stat_reads() {
        let me = std::process::id() as i32;
        let a = start_time(me).expect("own stat");
        assert_eq!(start_time(me), Some(a));
        assert_eq!(start_time(i32::MAX), None);
        let spent = cpu_ms(me).expect("own CPU time");
        let busy = std::time::Instant::now();
        while busy.elapsed() < std::time::Duration::from_millis(50) {}
        assert!(cpu_ms(me).unwrap() >= spent);
    }
}

//! What differs between the operating systems the addon is built for (Linux, macOS, Windows),
//! behind one interface each.

#[cfg(target_os = "linux")]
pub mod c_heap;
pub mod cpu_clock;
#[cfg(unix)]
pub mod fd_passing;
#[cfg(target_os = "linux")]
pub mod own_text;
#[cfg(unix)]
pub mod poll;

//! Messages with descriptors attached (`SCM_RIGHTS` on a Unix socket): the one place the host, its
//! templates and their sandbox processes send and receive them.

use std::io::{IoSlice, IoSliceMut};
use std::os::fd::{FromRawFd, OwnedFd, RawFd};

use nix::sys::socket::{recvmsg, sendmsg, ControlMessage, ControlMessageOwned, MsgFlags};

/// The most descriptors the kernel passes with one message (`SCM_MAX_FD`). Room for them all means
/// a message is never cut short (`MSG_CTRUNC`), which would leave the descriptors the kernel did
/// install in this process where no one could close them.
const KERNEL_MOST_FDS: usize = 253;

/// Sends `bytes` with `fds` attached (no control message when there are none), again when a
/// signal interrupts; how many bytes went (on a stream, the descriptors go with the first).
pub fn send(socket: RawFd, bytes: &[u8], fds: &[RawFd]) -> nix::Result<usize> {
    let rights = [ControlMessage::ScmRights(fds)];
    let cmsgs: &[ControlMessage] = if fds.is_empty() { &[] } else { &rights };
    loop {
        match sendmsg::<()>(socket, &[IoSlice::new(bytes)], cmsgs, MsgFlags::MSG_NOSIGNAL, None) {
            Err(nix::errno::Errno::EINTR) => {}
            sent => return sent,
        }
    }
}

/// Receives one message into `buf` (`flags` beside `MSG_CMSG_CLOEXEC`, which is always set), again
/// when a signal interrupts: its length (0 at end of file) and every descriptor that came with
/// it, owned, so whatever the caller does not keep is closed.
pub fn receive(socket: RawFd, buf: &mut [u8], flags: MsgFlags) -> nix::Result<(usize, Vec<OwnedFd>)> {
    let mut space = nix::cmsg_space!([RawFd; KERNEL_MOST_FDS]);
    loop {
        let mut iov = [IoSliceMut::new(buf)];
        let message = match recvmsg::<()>(socket, &mut iov, Some(&mut space), flags | MsgFlags::MSG_CMSG_CLOEXEC) {
            Err(nix::errno::Errno::EINTR) => continue,
            Err(e) => return Err(e),
            Ok(message) => message,
        };
        let mut given = Vec::new();
        // Never cut short (the space holds the kernel's most); were it, `cmsgs` refuses.
        for cmsg in message.cmsgs()? {
            if let ControlMessageOwned::ScmRights(fds) = cmsg {
                // SAFETY: the kernel just installed these descriptors in this process for us.
                given.extend(fds.into_iter().map(|fd| unsafe { OwnedFd::from_raw_fd(fd) }));
            }
        }
        return Ok((message.bytes, given));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nix::sys::socket::{socketpair, AddressFamily, SockFlag, SockType};
    use std::os::fd::AsRawFd;

    /// How many of this process's descriptors are the pipe `fd` is (other tests run beside this
    /// one, opening descriptors of their own).
    fn open_fds(fd: &OwnedFd) -> usize {
        let link = |path: std::path::PathBuf| std::fs::read_link(path).ok();
        let pipe = link(format!("/proc/self/fd/{}", fd.as_raw_fd()).into());
        let entries = std::fs::read_dir("/proc/self/fd").expect("/proc/self/fd");
        entries.filter_map(Result::ok).filter(|e| pipe.is_some() && link(e.path()) == pipe).count()
    }

    fn pair(kind: SockType) -> (OwnedFd, OwnedFd) {
        socketpair(AddressFamily::Unix, kind, None, SockFlag::SOCK_CLOEXEC).expect("socketpair")
    }

    #[test]
    fn a_message_and_its_descriptors_arrive_together() {
        let (a, b) = pair(SockType::SeqPacket);
        let (r, w) = nix::unistd::pipe().expect("pipe");
        assert_eq!(send(a.as_raw_fd(), b"hello", &[r.as_raw_fd(), w.as_raw_fd()]), Ok(5));
        let mut buf = [0u8; 16];
        let (n, fds) = receive(b.as_raw_fd(), &mut buf, MsgFlags::empty()).expect("receive");
        assert_eq!((&buf[..n], fds.len()), (&b"hello"[..], 2));
        for fd in &fds {
            // SAFETY: F_GETFD on a descriptor this test owns.
            assert_eq!(unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_GETFD) }, libc::FD_CLOEXEC);
        }
        assert_eq!(send(a.as_raw_fd(), b"plain", &[]), Ok(5));
        let (n, fds) = receive(b.as_raw_fd(), &mut buf, MsgFlags::empty()).expect("receive");
        assert_eq!((&buf[..n], fds.len()), (&b"plain"[..], 0));
        drop(a);
        assert_eq!(receive(b.as_raw_fd(), &mut buf, MsgFlags::empty()).map(|(n, f)| (n, f.len())), Ok((0, 0)));
    }

    /// A peer that attaches as many descriptors as the kernel lets it leaves none of them open
    /// here once what was received is dropped.
    #[test]
    fn every_descriptor_a_peer_attaches_is_owned_and_closed() {
        let (a, b) = pair(SockType::Stream);
        let (r, _w) = nix::unistd::pipe().expect("pipe");
        let many = vec![r.as_raw_fd(); KERNEL_MOST_FDS];
        let before = open_fds(&r);
        assert_eq!(send(a.as_raw_fd(), b"x", &many), Ok(1));
        let mut buf = [0u8; 1];
        let (n, fds) = receive(b.as_raw_fd(), &mut buf, MsgFlags::MSG_DONTWAIT).expect("receive");
        assert_eq!((n, fds.len()), (1, KERNEL_MOST_FDS));
        assert_eq!(open_fds(&r), before + KERNEL_MOST_FDS);
        drop(fds);
        assert_eq!(open_fds(&r), before);
        assert_eq!(
            receive(b.as_raw_fd(), &mut buf, MsgFlags::MSG_DONTWAIT).map(|(n, _)| n),
            Err(nix::errno::Errno::EAGAIN)
        );
    }
}

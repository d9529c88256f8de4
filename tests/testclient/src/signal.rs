//! SIGUSR1 as a readable file descriptor that the client's poll loop waits on.
//! The signal is blocked and read from a signalfd, so no handler ever runs mid-dispatch.

use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd};

/// SIGUSR1, blocked for the process and delivered through a non-blocking signalfd.
pub struct Usr1 {
    fd: OwnedFd,
}

impl Usr1 {
    /// Blocks SIGUSR1 and opens a signalfd for it. Call it while the process has a
    /// single thread (the mask is per thread) and before anyone may send the signal,
    /// whose default action would end the process.
    pub fn open() -> io::Result<Usr1> {
        // SAFETY: sigset_t is plain data that sigemptyset fully initialises, and
        // every call gets a pointer to that live local set.
        let set = unsafe {
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            libc::sigaddset(&mut set, libc::SIGUSR1);
            set
        };
        // SAFETY: a valid set, and a null pointer for the old mask, which is not wanted.
        let err = unsafe { libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut()) };
        if err != 0 {
            return Err(io::Error::from_raw_os_error(err));
        }
        // SAFETY: -1 asks for a new fd; the set is valid and the flags are valid.
        let fd = unsafe { libc::signalfd(-1, &set, libc::SFD_CLOEXEC | libc::SFD_NONBLOCK) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `fd` was just returned by signalfd, so it is open and nothing else owns it.
        Ok(Usr1 {
            fd: unsafe { OwnedFd::from_raw_fd(fd) },
        })
    }

    /// Reads every SIGUSR1 pending now; true if there was at least one.
    pub fn take(&self) -> io::Result<bool> {
        let mut any = false;
        loop {
            // SAFETY: signalfd_siginfo is plain data; the kernel fills what it reads.
            let mut info: libc::signalfd_siginfo = unsafe { std::mem::zeroed() };
            let size = std::mem::size_of_val(&info);
            // SAFETY: the buffer is `info`, live and `size` bytes long.
            let n = unsafe {
                libc::read(
                    self.fd.as_raw_fd(),
                    (&mut info as *mut libc::signalfd_siginfo).cast(),
                    size,
                )
            };
            if n == size as isize {
                any = true;
                continue;
            }
            if n >= 0 {
                let short = "short read from the signalfd";
                return Err(io::Error::new(io::ErrorKind::UnexpectedEof, short));
            }
            let err = io::Error::last_os_error();
            match err.kind() {
                io::ErrorKind::WouldBlock => return Ok(any),
                io::ErrorKind::Interrupted => continue,
                _ => return Err(err),
            }
        }
    }
}

/// Waits until the Wayland socket or the signal fd is readable (or the socket
/// fails); answers which of the two woke it.
pub fn wait(wayland: BorrowedFd<'_>, usr1: &Usr1) -> io::Result<(bool, bool)> {
    let mut fds = [
        libc::pollfd {
            fd: wayland.as_raw_fd(),
            events: libc::POLLIN | libc::POLLERR,
            revents: 0,
        },
        libc::pollfd {
            fd: usr1.fd.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        },
    ];
    loop {
        // SAFETY: two pollfds that live across the call, with fds borrowed for it.
        let n = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, -1) };
        if n >= 0 {
            return Ok((fds[0].revents != 0, fds[1].revents != 0));
        }
        let err = io::Error::last_os_error();
        if err.kind() != io::ErrorKind::Interrupted {
            return Err(err);
        }
    }
}

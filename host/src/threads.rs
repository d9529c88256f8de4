//! Busy threads of an app: a thread of its process, or of a process it
//! started, found running or waiting to run (`R`) in /proc; and a timer its
//! main loop, or a helper process's, will wake for soon, read from the poll
//! or futex it sleeps in.
//!
//! Settle, hosted or attached, counts either as work not yet shown: a worker
//! computing a result the main loop will draw later, a search entry
//! filtering after its delay.

use std::fs;

/// A thread found running.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BusyThread {
    pub tid: u32,
    /// The thread's name (`comm`).
    pub name: String,
}

/// Processes in one tree at most; a bound against a fork bomb's cost.
const PROCESSES_SCANNED: usize = 256;

/// The state letter and name of a task from its `stat` line.
fn state_and_name(stat: &str) -> Option<(char, &str)> {
    let open = stat.find('(')?;
    let close = stat.rfind(')')?;
    let name = stat.get(open + 1..close)?;
    let state = stat.get(close + 1..)?.trim_start().chars().next()?;
    Some((state, name))
}

/// Name prefixes of the threads a renderer runs to draw each frame: Mesa's
/// software rasteriser (what GTK 4's GL renderer draws with here).
const FRAME_THREADS: &[&str] = &["llvmpipe-"];

/// `pid` and the processes it started, theirs in turn, `pid` first; at
/// most `PROCESSES_SCANNED` of them.
fn process_tree(pid: u32) -> Vec<u32> {
    let mut tree = Vec::new();
    let mut pending = vec![pid];
    while let Some(p) = pending.pop() {
        if tree.len() == PROCESSES_SCANNED {
            break;
        }
        tree.push(p);
        let Ok(tasks) = fs::read_dir(format!("/proc/{p}/task")) else {
            continue;
        };
        for task in tasks.flatten() {
            if let Ok(children) = fs::read_to_string(task.path().join("children")) {
                pending.extend(
                    children
                        .split_whitespace()
                        .filter_map(|c| c.parse::<u32>().ok()),
                );
            }
        }
    }
    tree
}

/// The threads of an app found running or waiting to run (`R`) at one look.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunningThreads {
    /// A thread that draws its frames: the main thread of the app's first
    /// process, or a renderer's.
    pub drawing: Option<BusyThread>,
    /// The first thread found that does not draw its frames.
    pub other: Option<BusyThread>,
}

impl RunningThreads {
    /// The thread that is work not yet shown, if any. With `animating`, a
    /// thread that draws frames does not count: an app that animates runs
    /// it for every frame.
    pub fn busy(self, animating: bool) -> Option<BusyThread> {
        self.other.or(self.drawing.filter(|_| !animating))
    }
}

/// The threads of `pid` and its descendants that are running or waiting
/// to run: the first that does not draw frames, and the first that does
/// if it comes before (the main thread always does: it is read first).
pub fn running_threads(pid: u32) -> RunningThreads {
    let mut found = RunningThreads::default();
    for p in process_tree(pid) {
        let Ok(tasks) = fs::read_dir(format!("/proc/{p}/task")) else {
            continue;
        };
        for task in tasks.flatten() {
            let Some(tid) = task.file_name().to_str().and_then(|t| t.parse().ok()) else {
                continue;
            };
            let Ok(stat) = fs::read_to_string(task.path().join("stat")) else {
                continue;
            };
            let Some(('R', name)) = state_and_name(&stat) else {
                continue;
            };
            let draws = tid == pid || FRAME_THREADS.iter().any(|t| name.starts_with(t));
            let slot = if draws {
                &mut found.drawing
            } else {
                &mut found.other
            };
            slot.get_or_insert_with(|| BusyThread {
                tid,
                name: name.to_string(),
            });
            if found.other.is_some() {
                return found;
            }
        }
    }
    found
}

/// The first thread of `pid` or its descendants that is running or waiting
/// to run, if any.
pub fn busy_thread(pid: u32) -> Option<BusyThread> {
    running_threads(pid).busy(false)
}

/// A timer due within this many ms is work not yet shown (a GtkSearchEntry
/// filters 150 ms after typing); a caret's blink (400 ms and more) is not.
pub const TIMER_SOON_MS: u32 = 250;
/// Wake-ups due sooner than this are a frame clock's own pacing (GTK 4's
/// wakes every 16 ms for about 260 ms after each frame it draws), not
/// work; but while the loop paces, its nearest wake-up hides any longer
/// timer.
const TIMER_FLOOR_MS: u32 = 20;

/// What the main loop of an app sleeps for, read from its poll.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MainLoopWake {
    /// A wake-up sooner than `TIMER_FLOOR_MS`: the loop paces itself, and
    /// what it will do after is hidden until it sleeps longer.
    Pacing,
    /// A timer due in this many ms, up to `TIMER_SOON_MS` (from
    /// `TIMER_FLOOR_MS` for the app's own loop): work not yet shown.
    Timer(u32),
    /// Nothing due sooner than `TIMER_SOON_MS`.
    Later,
}

/// When the main loop of `pid` will wake next, from the timeout its main
/// thread sleeps with: a `poll` (GLib), `ppoll` (Qt) or futex; or a helper
/// process it started (a browser's page renderer, whose main thread runs
/// the page's scripts and sleeps in a futex until its next task). `None`
/// when the main thread runs or sleeps some other way, and no helper's
/// task is due soon.
///
/// A helper's short sleeps are not pacing: a page renderer runs its tasks
/// in slices of at most 50 ms for a while after input, and the page's own
/// timer (a `setTimeout` of 300 ms) hides behind them, so each counts as a
/// timer, and the later of its and the main loop's is the one answered.
pub fn main_loop_wake(pid: u32) -> Option<MainLoopWake> {
    let own = poll_sleep_timeout(pid).map(|ms| match ms {
        ms if ms < TIMER_FLOOR_MS => MainLoopWake::Pacing,
        ms if ms <= TIMER_SOON_MS => MainLoopWake::Timer(ms),
        _ => MainLoopWake::Later,
    });
    let helpers = process_tree(pid)
        .into_iter()
        .skip(1)
        .filter_map(sleep_timeout)
        .min()
        .filter(|ms| *ms <= TIMER_SOON_MS)
        .map(|ms| ms.max(1));
    match (own, helpers) {
        (Some(MainLoopWake::Timer(own)), Some(helper)) => {
            Some(MainLoopWake::Timer(own.max(helper)))
        }
        (_, Some(helper)) => Some(MainLoopWake::Timer(helper)),
        (own, None) => own,
    }
}

/// In how many ms the main thread of process `pid` wakes from the sleep it
/// is in, `u32::MAX` for never; `None` when it runs or sleeps in no call
/// with a timeout known here.
fn sleep_timeout(pid: u32) -> Option<u32> {
    let (nr, args) = main_thread_syscall(pid)?;
    poll_timeout(pid, nr, &args).or_else(|| futex_timeout(pid, nr, &args))
}

/// As `sleep_timeout`, for a main loop's poll only: the app's own main
/// thread waiting in a futex waits for a lock (Python's GIL, a few ms at a
/// time), not for its loop's next timer, and is left as not known.
fn poll_sleep_timeout(pid: u32) -> Option<u32> {
    let (nr, args) = main_thread_syscall(pid)?;
    poll_timeout(pid, nr, &args)
}

/// The syscall the main thread of process `pid` sleeps in.
fn main_thread_syscall(pid: u32) -> Option<(i64, Vec<u64>)> {
    let line = fs::read_to_string(format!("/proc/{pid}/task/{pid}/syscall")).ok()?;
    syscall_of(&line)
}

/// The number and arguments of the syscall a `/proc/.../syscall` line says
/// the thread sleeps in (`running` and malformed lines give none).
fn syscall_of(line: &str) -> Option<(i64, Vec<u64>)> {
    let mut fields = line.split_whitespace();
    let nr = fields.next()?.parse().ok()?;
    let args = fields
        .take(6)
        .map(|f| u64::from_str_radix(f.strip_prefix("0x")?, 16).ok())
        .collect::<Option<Vec<u64>>>()?;
    (args.len() == 6).then_some((nr, args))
}

/// The timeout in ms of a poll with these arguments, `u32::MAX` for none;
/// `None` for another syscall.
fn poll_timeout(pid: u32, nr: i64, args: &[u64]) -> Option<u32> {
    #[cfg(target_arch = "x86_64")]
    if nr == libc::SYS_poll {
        // poll(fds, nfds, timeout): an int, negative for none.
        return Some(u32::try_from(args[2] as i32).unwrap_or(u32::MAX));
    }
    if nr != libc::SYS_ppoll {
        return None;
    }
    if args[2] == 0 {
        return Some(u32::MAX);
    }
    // ppoll(fds, nfds, *timespec, ...): a timeout from now.
    let ts = read_timespec(pid, args[2])?;
    Some(ms_of(ts))
}

/// `FUTEX_WAIT`: its timeout is from now.
const FUTEX_WAIT: u64 = 0;
/// `FUTEX_WAIT_BITSET`: its timeout is a moment of a clock.
const FUTEX_WAIT_BITSET: u64 = 9;
/// The bits of a futex op that name the operation (the rest are flags).
const FUTEX_CMD_MASK: u64 = 0x7f;
/// The op flag that makes a `FUTEX_WAIT_BITSET` moment the real-time
/// clock's, not the monotonic one's.
const FUTEX_CLOCK_REALTIME: u64 = 0x100;

/// The timeout in ms of a futex wait with these arguments, `u32::MAX` for
/// none; `None` for another syscall or futex operation.
fn futex_timeout(pid: u32, nr: i64, args: &[u64]) -> Option<u32> {
    if nr != libc::SYS_futex {
        return None;
    }
    // futex(uaddr, op, val, *timespec, ...)
    let op = args[1];
    let cmd = op & FUTEX_CMD_MASK;
    if cmd != FUTEX_WAIT && cmd != FUTEX_WAIT_BITSET {
        return None;
    }
    if args[3] == 0 {
        return Some(u32::MAX);
    }
    let ts = read_timespec(pid, args[3])?;
    if cmd == FUTEX_WAIT {
        return Some(ms_of(ts));
    }
    let clock = if op & FUTEX_CLOCK_REALTIME != 0 {
        libc::CLOCK_REALTIME
    } else {
        libc::CLOCK_MONOTONIC
    };
    let mut now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `now` is a timespec of ours for the kernel to fill.
    if unsafe { libc::clock_gettime(clock, &mut now) } != 0 {
        return None;
    }
    let due = |t: libc::timespec| i128::from(t.tv_sec) * 1_000_000_000 + i128::from(t.tv_nsec);
    let left_ms = ((due(ts) - due(now)) / 1_000_000).max(0);
    Some(u32::try_from(left_ms).unwrap_or(u32::MAX))
}

/// A timespec read from the memory of process `pid`; `None` when it
/// cannot be read (the app exited, the address is bad) or is negative.
fn read_timespec(pid: u32, address: u64) -> Option<libc::timespec> {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    let local = libc::iovec {
        iov_base: (&mut ts as *mut libc::timespec).cast(),
        iov_len: std::mem::size_of::<libc::timespec>(),
    };
    let remote = libc::iovec {
        iov_base: address as *mut libc::c_void,
        iov_len: std::mem::size_of::<libc::timespec>(),
    };
    // SAFETY: one iovec each way; the local one is a timespec of ours, and
    // the kernel checks the remote one (an app that exited or a bad
    // address fails the call, which is answered as not known).
    let read = unsafe { libc::process_vm_readv(pid as libc::pid_t, &local, 1, &remote, 1, 0) };
    (read == local.iov_len as isize && ts.tv_sec >= 0).then_some(ts)
}

/// A timespec's length in whole ms, `u32::MAX` past it.
fn ms_of(ts: libc::timespec) -> u32 {
    let ms = (ts.tv_sec as u64)
        .saturating_mul(1000)
        .saturating_add(ts.tv_nsec as u64 / 1_000_000);
    u32::try_from(ms).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_poll_line_gives_its_timeout_and_other_lines_none() {
        let poll = "7 0x55e452afa3d0 0x2 0x96 0x0 0x0 0x0 0x7ffd2a8d16c0 0x7f8d2e6a326f";
        let (nr, args) = syscall_of(poll).unwrap();
        #[cfg(target_arch = "x86_64")]
        assert_eq!(poll_timeout(1, nr, &args), Some(150));
        let forever = "7 0x55e452afa3d0 0x2 0xffffffff 0x0 0x0 0x0 0x7ffd 0x7f8d";
        let (nr, args) = syscall_of(forever).unwrap();
        #[cfg(target_arch = "x86_64")]
        assert_eq!(poll_timeout(1, nr, &args), Some(u32::MAX));
        assert_eq!(syscall_of("running"), None);
        assert_eq!(syscall_of("202 0x1 0x189"), None);
    }

    #[test]
    fn a_timeout_read_from_an_app_past_u32_ms_is_u32_max_and_never_overflows() {
        let ts = |tv_sec, tv_nsec| libc::timespec { tv_sec, tv_nsec };
        assert_eq!(ms_of(ts(1, 500_000_000)), 1500);
        assert_eq!(ms_of(ts(5_000_000, 0)), u32::MAX);
        assert_eq!(ms_of(ts(i64::MAX, 999_999_999)), u32::MAX);
        // The kernel's check is the app's to pass: a negative nanosecond count too.
        assert_eq!(ms_of(ts(0, -1)), u32::MAX);
    }

    /// The first wake of a process group's main loop `main_loop_wake`
    /// finds that `wanted` accepts, within 10 s; the group is killed whole
    /// either way.
    fn first_wake(
        program: &str,
        args: &[&str],
        wanted: impl Fn(&MainLoopWake) -> bool,
    ) -> Option<MainLoopWake> {
        use std::os::unix::process::CommandExt;
        let mut group = std::process::Command::new(program)
            .args(args)
            .process_group(0)
            .spawn()
            .unwrap();
        let until = std::time::Instant::now() + std::time::Duration::from_secs(10);
        let mut found = None;
        while found.is_none() && std::time::Instant::now() < until {
            found = main_loop_wake(group.id()).filter(&wanted);
        }
        crate::launch::signal_group(group.id(), libc::SIGKILL);
        let _ = group.wait();
        found
    }

    #[test]
    fn a_timer_the_main_loop_waits_for_is_found_while_it_is_due() {
        // python3 sleeping in poll() for 200 ms, again and again.
        let sleeper = "import select\nwhile True: select.poll().poll(200)";
        let found = first_wake("/usr/bin/python3", &["-c", sleeper], |_| true);
        assert_eq!(found, Some(MainLoopWake::Timer(200)));
    }

    #[test]
    fn a_timer_a_helper_process_sleeps_for_in_a_futex_is_found_while_it_is_due() {
        // A shell waiting for its child, which sleeps in a futex until a
        // moment 200 ms ahead, again and again (as a page renderer waits
        // for a page's timer); the shell itself waits with no timeout.
        let helper = "import threading\nl = threading.Lock()\nl.acquire()\n\
                      while True: l.acquire(timeout=0.2)";
        let found = first_wake(
            "sh",
            &["-c", "/usr/bin/python3 -c \"$0\" & wait", helper],
            |w| *w != MainLoopWake::Later,
        );
        // Found as the time left of the 200 ms: a moment, not a length.
        assert!(
            matches!(found, Some(MainLoopWake::Timer(ms)) if ms <= 200),
            "found {found:?}"
        );
    }

    #[test]
    fn stat_lines_give_their_state_even_with_parentheses_in_the_name() {
        assert_eq!(
            state_and_name("42 (pool (spawned)) R 1 42 42 0"),
            Some(('R', "pool (spawned)"))
        );
        assert_eq!(state_and_name("7 (gmain) S 1"), Some(('S', "gmain")));
        assert_eq!(state_and_name("garbage"), None);
    }

    #[test]
    fn a_spinning_thread_of_a_child_is_found_and_a_sleeping_tree_is_not() {
        let deadline = || std::time::Instant::now() + std::time::Duration::from_secs(10);
        // Once started, a sleeping process has no thread running.
        let mut sleeper = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap();
        let until = deadline();
        while busy_thread(sleeper.id()).is_some() {
            assert!(std::time::Instant::now() < until, "sleep never slept");
        }
        sleeper.kill().unwrap();
        let _ = sleeper.wait();
        // A shell whose child spins: the spinning child is found. The group
        // is killed whole, so nothing spins on after the test.
        use std::os::unix::process::CommandExt;
        let mut shell = std::process::Command::new("sh")
            .args(["-c", "sh -c 'while :; do :; done' & wait"])
            .process_group(0)
            .spawn()
            .unwrap();
        // The shell itself runs while it starts; the child spins for good.
        let until = deadline();
        let mut found = None;
        while found.is_none() && std::time::Instant::now() < until {
            found = busy_thread(shell.id()).filter(|t| t.tid != shell.id());
        }
        crate::launch::signal_group(shell.id(), libc::SIGKILL);
        let _ = shell.wait();
        assert!(found.is_some(), "the spinning child was never found");
    }
}

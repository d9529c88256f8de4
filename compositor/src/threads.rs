//! Busy threads of an app: a thread of its process, or of a process it
//! started, found running or waiting to run (`R`) in /proc.
//!
//! Settle counts such a thread as work not yet shown: a worker computing a
//! result the main loop will draw later.

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

/// The first thread of `pid` or its descendants that is running or waiting
/// to run, if any. With `animating`, the threads that draw its frames (the
/// main thread of `pid` and a renderer's) are not counted: an app that
/// animates runs them for every frame.
pub fn busy_thread(pid: u32, animating: bool) -> Option<BusyThread> {
    let mut pending = vec![pid];
    let mut scanned = 0;
    while let Some(p) = pending.pop() {
        scanned += 1;
        if scanned > PROCESSES_SCANNED {
            break;
        }
        let Ok(tasks) = fs::read_dir(format!("/proc/{p}/task")) else {
            continue;
        };
        for task in tasks.flatten() {
            let path = task.path();
            let Some(tid) = task.file_name().to_str().and_then(|t| t.parse().ok()) else {
                continue;
            };
            if let Ok(stat) = fs::read_to_string(path.join("stat")) {
                let draws = |name: &str| {
                    animating && (tid == pid || FRAME_THREADS.iter().any(|t| name.starts_with(t)))
                };
                if let Some(('R', name)) = state_and_name(&stat).filter(|(_, n)| !draws(n)) {
                    return Some(BusyThread {
                        tid,
                        name: name.to_string(),
                    });
                }
            }
            if let Ok(children) = fs::read_to_string(path.join("children")) {
                pending.extend(
                    children
                        .split_whitespace()
                        .filter_map(|c| c.parse::<u32>().ok()),
                );
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

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
        while busy_thread(sleeper.id(), false).is_some() {
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
            found = busy_thread(shell.id(), false).filter(|t| t.tid != shell.id());
        }
        crate::launch::signal_group(shell.id(), libc::SIGKILL);
        let _ = shell.wait();
        assert!(found.is_some(), "the spinning child was never found");
    }
}

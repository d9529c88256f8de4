//! What every benchmark runs and prints with: a 2-thread runtime, medians,
//! milliseconds, and a table of rows.
#![allow(dead_code)] // each bench uses its own subset

use std::time::Duration;

pub fn median(mut xs: Vec<Duration>) -> Duration {
    xs.sort();
    xs[xs.len() / 2]
}

/// The time at fraction `p` (0.99 for p99) of times sorted shortest first.
pub fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

/// A process's resident memory in KiB (0 once it is gone).
pub fn rss_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmRSS:"))
                .and_then(|v| v.split_whitespace().next()?.parse().ok())
        })
        .unwrap_or(0)
}

/// Resident memory of a process and all its descendants, in KiB.
pub fn tree_rss_kib(root: u32) -> u64 {
    let mut parents = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        let after = stat.rsplit_once(')').map_or("", |(_, a)| a);
        let ppid = after.split_whitespace().nth(1).and_then(|p| p.parse().ok());
        parents.push((pid, ppid.unwrap_or(0)));
    }
    let mut tree = vec![root];
    let mut i = 0;
    while i < tree.len() {
        let p = tree[i];
        tree.extend(parents.iter().filter(|(_, pp)| *pp == p).map(|(c, _)| *c));
        i += 1;
    }
    tree.iter().map(|pid| rss_kib(*pid)).sum()
}

/// The median time `f` takes over `rounds` runs.
pub fn time<T>(rounds: usize, mut f: impl FnMut() -> T) -> Duration {
    median(
        (0..rounds)
            .map(|_| {
                let t0 = std::time::Instant::now();
                f();
                t0.elapsed()
            })
            .collect(),
    )
}

pub fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1000.0)
}

/// `cargo test --benches` runs benches to list them: nothing to do then.
pub fn listing_only() -> bool {
    std::env::args().any(|a| a == "--list" || a == "--test")
}

/// The number the environment variable `name` holds, or `default`.
pub fn env_number<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(default)
}

/// Print rows of (benchmark, median, notes) as an aligned table.
pub fn print(rows: &[(String, String, String)]) {
    print_as("median", rows);
}

/// Print rows of (benchmark, measure, notes) under the measure's heading.
pub fn print_as(heading: &str, rows: &[(String, String, String)]) {
    let w = rows.iter().map(|r| r.0.len()).max().unwrap_or(0);
    let v = rows
        .iter()
        .map(|r| r.1.len())
        .max()
        .unwrap_or(0)
        .max(heading.len());
    println!("\n{:<w$}  {:>v$}  notes", "benchmark", heading);
    println!("{:-<w$}  {:->v$}  -----", "", "");
    for (name, value, note) in rows {
        println!("{name:<w$}  {value:>v$}  {note}");
    }
}

/// The runtime the benchmarks drive the compositor from.
pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("tokio runtime")
}

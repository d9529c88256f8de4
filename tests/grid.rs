//! Selenium Grid in front of Wayrig: the Grid hub and two relay nodes made
//! from the shipped configs (docs/grid), a `wayrig serve` behind each, and
//! the official Python client asking the hub for eight sessions at once.

mod support;

use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use support::grid::{serve, Grid};
use support::run_client;

/// How long the client's whole script may take on a loaded 2-core machine.
const SCRIPT_LIMIT: Duration = Duration::from_secs(240);
/// Relay nodes, each in front of a `wayrig serve` with four places.
const NODES: usize = 2;

fn repo(path: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(path)
}

#[test]
fn eight_selenium_sessions_at_once_through_selenium_grid() {
    const TEST: &str = "eight_selenium_sessions_at_once_through_selenium_grid";
    // Two machines' worth: each a `wayrig serve` with four places.
    let (served, wayrigs): (Vec<_>, Vec<_>) = (0..NODES)
        .map(|_| serve(&support::shipped("wayrig"), 4))
        .unzip();
    let Some(grid) = Grid::start(&wayrigs, 4) else {
        support::skip(TEST, "no Java or Selenium jar; run scripts/install-deps");
        return;
    };
    let mut client = Command::new("/usr/bin/python3");
    client
        .arg(repo("tests/fixtures/grid-client.py"))
        .arg(&grid.url)
        .arg(wayrigs.join(","))
        .arg(repo("tests/fixtures/gtk4-fixture.py"));
    run_client(client, SCRIPT_LIMIT);
    drop((grid, served));
}

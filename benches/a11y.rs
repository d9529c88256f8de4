//! Accessibility benchmarks, medians side by side: reading gtk4-widget-factory's
//! and gtk3-widget-factory's trees in bulk (Cache.GetItems) against reading the
//! same trees node by node (one call per property per object, as pyatspi,
//! dogtail and WayDriver do), bounds and keys included in both.
//!
//! Run with `cargo bench --bench a11y`.

mod synthetic;
mod table;

#[path = "../tests/support/mod.rs"]
mod support;

use std::sync::Arc;
use std::time::{Duration, Instant};

use table::{median, ms};

use support::{launch_and_wait, start, ActById};
use wayrig_compositor::Config;
use wayrig_host::Host;
use wayrig_services::a11y::{A11y, App, Read};
use wayrig_services::{Action, PrivateBus, Role, Session};

const ROUNDS: usize = 5;

async fn measure(app_name: &str, rows: &mut Vec<(String, String, String)>) {
    let bus = PrivateBus::start(&std::env::temp_dir()).await.expect("bus");
    let address = bus.a11y_address.clone();
    let host: Arc<dyn Host> = Arc::new(start(Config {
        app_env: bus.app_env(),
        ..Config::default()
    }));
    let session = Session::new(host.clone(), bus).await.expect("session");
    let win = launch_and_wait(&*host, &[app_name], Duration::from_secs(30)).await;

    let t0 = Instant::now();
    let first = session.tree(win.handle).await.expect("tree");
    rows.push((
        format!(
            "{app_name}: first read ({} nodes of its window)",
            first.nodes.len()
        ),
        ms(t0.elapsed()),
        "registration wait, bulk read, children realized".into(),
    ));
    let mut bulk = Vec::new();
    for _ in 0..ROUNDS {
        let t0 = Instant::now();
        session.tree(win.handle).await.expect("tree");
        bulk.push(t0.elapsed());
    }
    rows.push((
        format!("{app_name}: read again, bulk"),
        ms(median(bulk)),
        format!("median of {ROUNDS}; it animates, so every read is fresh"),
    ));

    let a11y = A11y::connect(&address).await.expect("a11y");
    let apps: Vec<_> = a11y
        .apps()
        .await
        .unwrap()
        .into_iter()
        .filter(|a| a.pid == win.pid)
        .collect();
    let mut walks = Vec::new();
    let mut count = 0;
    for _ in 0..ROUNDS {
        let t0 = Instant::now();
        for a in &apps {
            count = a11y
                .read_app(a, Read::NodeByNode)
                .await
                .unwrap()
                .iter()
                .map(|f| f.nodes.len())
                .sum();
        }
        walks.push(t0.elapsed());
    }
    rows.push((
        format!("{app_name}: read node by node ({count} nodes)"),
        ms(median(walks)),
        format!("median of {ROUNDS}; the whole app, concurrent per level, the peers' way"),
    ));
    host.shutdown().await;
}

/// Warm reads: an idle window whose tree did not change since the last read.
async fn measure_warm(rows: &mut Vec<(String, String, String)>) {
    let bus = PrivateBus::start(&std::env::temp_dir()).await.expect("bus");
    let compositor = Arc::new(start(Config {
        app_env: bus.app_env(),
        ..Config::default()
    }));
    let host: Arc<dyn Host> = compositor.clone();
    let session = Session::new(host.clone(), bus).await.expect("session");
    // Kept alive for the measurement: dropping it ends the app.
    let fixture = support::Gtk4Fixture::open(&compositor, &[]).await;
    let win = &fixture.info;
    let cold = session.tree(win.handle).await.expect("tree");
    // Let the reading's own events (GTK realizing objects) come in first.
    host.settle(win.handle, Duration::from_secs(10))
        .await
        .unwrap();
    session.tree(win.handle).await.expect("tree");
    let mut warm = Vec::new();
    for _ in 0..20 {
        let t0 = Instant::now();
        session.tree(win.handle).await.expect("tree");
        warm.push(t0.elapsed());
    }
    rows.push((
        format!("GTK4 fixture, idle: warm read ({} nodes)", cold.nodes.len()),
        ms(median(warm)),
        "median of 20; no frame and no accessibility event since the last read".into(),
    ));
    // From an action to a tree that shows its effect.
    let spin = cold
        .find(Role::SpinButton, "Amount")
        .next()
        .expect("the Amount spin button")
        .id;
    let now = |tree: &wayrig_services::Tree| tree.node(spin).and_then(|n| n.range).map(|r| r.now);
    let mut effect = Vec::new();
    for _ in 0..ROUNDS {
        let before = now(&session.tree(win.handle).await.unwrap());
        let t0 = Instant::now();
        session
            .act_by_id(win.handle, spin, Action::Increment)
            .await
            .expect("increment");
        loop {
            session
                .settle(win.handle, Duration::from_secs(10))
                .await
                .unwrap();
            if now(&session.tree(win.handle).await.unwrap()) != before {
                break;
            }
        }
        effect.push(t0.elapsed());
    }
    rows.push((
        "GTK4 fixture: increment until a read shows it".into(),
        ms(median(effect)),
        format!("median of {ROUNDS}; act, settle, read the tree again"),
    ));
    host.shutdown().await;
}

/// A synthetic app of `nodes` elements on a real bus and registry: bulk reads
/// (cold: a new connection, nothing known; again: lasting facts known) beside
/// the node-by-node walk, all with bounds.
async fn measure_synthetic(nodes: usize, rows: &mut Vec<(String, String, String)>) {
    let bus = PrivateBus::start(&std::env::temp_dir()).await.expect("bus");
    let _app = synthetic::serve(&bus.a11y_address, nodes).await;
    let find = |a11y: A11y| async move {
        let apps = a11y
            .wait_for_app(std::process::id(), Duration::from_secs(5))
            .await
            .expect("the synthetic app registered");
        (a11y, apps[0].clone())
    };
    let (mut cold, mut again, mut walk) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..ROUNDS {
        let (a11y, app) = find(A11y::connect(&bus.a11y_address).await.unwrap()).await;
        cold.push(timed_read(&a11y, &app, Read::Bulk, nodes).await);
        again.push(timed_read(&a11y, &app, Read::Bulk, nodes).await);
        let (fresh, app) = find(A11y::connect(&bus.a11y_address).await.unwrap()).await;
        walk.push(timed_read(&fresh, &app, Read::NodeByNode, nodes).await);
    }
    for (what, times, note) in [
        ("bulk, cold", cold, "new connection: every fact fetched"),
        (
            "bulk, read again",
            again,
            "lasting facts kept; bounds fetched",
        ),
        ("node by node", walk, "concurrent per level, the peers' way"),
    ] {
        rows.push((
            format!("synthetic {nodes} nodes: {what}"),
            ms(median(times)),
            format!("median of {ROUNDS}; {note}"),
        ));
    }
}

async fn timed_read(a11y: &A11y, app: &App, how: Read, nodes: usize) -> Duration {
    let t0 = Instant::now();
    let frames = a11y.read_app(app, how).await.expect("read");
    let elapsed = t0.elapsed();
    let count: usize = frames.iter().map(|f| f.nodes.len()).sum();
    assert_eq!(count, nodes, "every synthetic node read");
    elapsed
}

fn main() {
    if table::listing_only() {
        return;
    }
    let rt = table::runtime();
    let mut rows = Vec::new();
    rt.block_on(async {
        measure("gtk4-widget-factory", &mut rows).await;
        measure("gtk3-widget-factory", &mut rows).await;
        measure_warm(&mut rows).await;
        measure_synthetic(1_000, &mut rows).await;
        measure_synthetic(10_000, &mut rows).await;
    });
    table::print(&rows);
}

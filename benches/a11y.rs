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

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use table::{median, ms};

use support::{launch_and_wait, live, ActById};
use wayrig_compositor::Config;
use wayrig_host::{Host, Rect};
use wayrig_services::a11y::A11y;
use wayrig_services::access::{Accessibility, App, Read, Span};
use wayrig_services::{Action, PrivateBus, Role};

const ROUNDS: usize = 5;

async fn measure(app_name: &str, rows: &mut Vec<(String, String, String)>) {
    let session = live(Config::default()).await;
    let address = session.buses().expect("the session's buses").a11y.clone();
    let host: Arc<dyn Host> = session.host().clone();
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
    phase_rows(vec![session.take_read_spans()], rows);
    let mut bulk = Vec::new();
    let mut spans = Vec::new();
    for _ in 0..ROUNDS {
        let t0 = Instant::now();
        session.tree(win.handle).await.expect("tree");
        bulk.push(t0.elapsed());
        spans.push(session.take_read_spans());
    }
    rows.push((
        format!("{app_name}: read again, bulk"),
        ms(median(bulk)),
        format!("median of {ROUNDS}; it animates, so every read is fresh; bounds kept where nothing was drawn"),
    ));
    phase_rows(spans, rows);

    let a11y = A11y::connect(&address).await.expect("a11y");
    let apps: Vec<_> = a11y
        .apps()
        .await
        .unwrap()
        .into_iter()
        .filter(|a| a.pid == win.pid)
        .collect();
    // The same app read in bulk with every bound fetched, as every read
    // was before bounds were kept where nothing was drawn.
    let mut every = Vec::new();
    let mut spans = Vec::new();
    for _ in 0..ROUNDS {
        let t0 = Instant::now();
        for a in &apps {
            a11y.read_app(a, Read::Bulk).await.unwrap();
        }
        every.push(t0.elapsed());
        spans.push(a11y.take_spans());
    }
    rows.push((
        format!("{app_name}: read again, bulk, every bound fetched"),
        ms(median(every)),
        format!("median of {ROUNDS}; the whole app, lasting facts kept"),
    ));
    phase_rows(spans, rows);
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
    session.end().await;
}

/// Warm reads: an idle window whose tree did not change since the last read.
async fn measure_warm(rows: &mut Vec<(String, String, String)>) {
    let session = live(Config::default()).await;
    let compositor = session.host().clone();
    // Kept alive for the measurement: dropping it ends the app.
    let fixture = support::Gtk4Fixture::open(&compositor, &[]).await;
    let win = &fixture.info;
    let cold = session.tree(win.handle).await.expect("tree");
    // Let the reading's own events (GTK realizing objects) come in first.
    compositor
        .settle(win.handle, Duration::from_secs(10))
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
    session.end().await;
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
    let (mut cold_spans, mut again_spans) = (Vec::new(), Vec::new());
    let (mut undrawn, mut undrawn_spans) = (Vec::new(), Vec::new());
    for _ in 0..ROUNDS {
        let (a11y, app) = find(A11y::connect(&bus.a11y_address).await.unwrap()).await;
        cold.push(timed_read(&a11y, &app, Read::Bulk, nodes).await);
        cold_spans.push(a11y.take_spans());
        again.push(timed_read(&a11y, &app, Read::Bulk, nodes).await);
        again_spans.push(a11y.take_spans());
        undrawn.push(read_keeping_bounds(&a11y, &app, nodes).await);
        undrawn_spans.push(a11y.take_spans());
        let (fresh, app) = find(A11y::connect(&bus.a11y_address).await.unwrap()).await;
        walk.push(timed_read(&fresh, &app, Read::NodeByNode, nodes).await);
    }
    for (what, times, note, spans) in [
        (
            "bulk, cold",
            cold,
            "new connection: every fact fetched",
            cold_spans,
        ),
        (
            "bulk, read again",
            again,
            "lasting facts kept; bounds fetched",
            again_spans,
        ),
        (
            "bulk, read again, nothing drawn",
            undrawn,
            "bounds kept, as a session keeps those no damage touched",
            undrawn_spans,
        ),
        (
            "node by node",
            walk,
            "concurrent per level, the peers' way",
            Vec::new(),
        ),
    ] {
        rows.push((
            format!("synthetic {nodes} nodes: {what}"),
            ms(median(times)),
            format!("median of {ROUNDS}; {note}"),
        ));
        if !spans.is_empty() {
            phase_rows(spans, rows);
        }
    }
}

/// One row per phase of a read: the median of its time and calls over the
/// reads whose spans are given (a phase a read did not have counts as none).
fn phase_rows(reads: Vec<Vec<Span>>, rows: &mut Vec<(String, String, String)>) {
    let mut phases: Vec<&'static str> = Vec::new();
    for span in reads.iter().flatten() {
        if !phases.contains(&span.phase) {
            phases.push(span.phase);
        }
    }
    for phase in phases {
        let of = |read: &Vec<Span>| {
            read.iter()
                .filter(|s| s.phase == phase)
                .fold((Duration::ZERO, 0), |(t, c), s| (t + s.took, c + s.calls))
        };
        let took = median(reads.iter().map(|r| of(r).0).collect());
        let mut calls: Vec<usize> = reads.iter().map(|r| of(r).1).collect();
        calls.sort();
        rows.push((
            format!("    {phase}"),
            ms(took),
            format!("{} calls", calls[calls.len() / 2]),
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

/// A read again with every bound of the last read kept: what a session
/// reads when its window drew nothing where the elements lie (the synthetic
/// app has no window, so the session's damage is stood in for).
async fn read_keeping_bounds(a11y: &A11y, app: &App, nodes: usize) -> Duration {
    let last: HashMap<u64, Option<Rect>> = a11y
        .read_app(app, Read::Bulk)
        .await
        .expect("read")
        .iter()
        .flat_map(|f| f.nodes.iter().map(|n| (n.id, n.bounds)))
        .collect();
    a11y.take_spans();
    let t0 = Instant::now();
    let items = a11y.read_items(app, Read::Bulk).await.expect("read");
    let mut count = 0;
    for head in &items.frames {
        count += a11y.read_frame(&items, head, &last).await.nodes.len();
    }
    let elapsed = t0.elapsed();
    assert_eq!(count, nodes, "every synthetic node read");
    elapsed
}

fn main() {
    if table::listing_only() {
        return;
    }
    let rt = table::runtime();
    let mut rows = Vec::new();
    // `cargo bench --bench a11y -- NAME` runs the rows whose name holds NAME.
    let only = std::env::args().skip(1).find(|a| !a.starts_with('-'));
    let wanted = |name: &str| only.as_deref().is_none_or(|o| name.contains(o));
    rt.block_on(async {
        for app in ["gtk4-widget-factory", "gtk3-widget-factory"] {
            if wanted(app) {
                measure(app, &mut rows).await;
            }
        }
        if wanted("fixture") {
            measure_warm(&mut rows).await;
        }
        for nodes in [1_000, 10_000] {
            if wanted("synthetic") {
                measure_synthetic(nodes, &mut rows).await;
            }
        }
    });
    table::print(&rows);
}

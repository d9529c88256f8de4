//! The work `peers/waydriver` times with WayDriver, done by Wayrig over MyGo
//! on the same app, so `scripts/bench --peers` prints the two side by side.
//!
//! gtk4-widget-factory, five fresh sessions: launch to the whole tree (page
//! 1's check buttons in it), the tree read again, a check box pressed until
//! the tree shows it checked, 13 characters typed into an empty entry until
//! its value shows them, and a screenshot. Rows are printed as
//! `peer-row<TAB>NAME<TAB>MS` lines after the table, for the script to join.
//!
//! Run with `cargo bench --bench peers`.

#[path = "../tests/support/mod.rs"]
mod support;
mod table;

use std::time::{Duration, Instant};

use serde_json::Value;
use support::{element_id, ProtocolClient, Wayrig};
use table::{median, ms};
use wayrig_proto::mygo::{Action, Call, Event};

/// Fresh sessions timed.
const ROUNDS: usize = 5;
/// What is typed: 13 characters, as the peer types.
const TYPED: &str = "hello wayland";

include!("../peers/rows.rs");

fn nodes(tree: &Value) -> &Vec<Value> {
    tree["nodes"].as_array().expect("a tree has nodes")
}

/// The second check box labelled "checkbutton" (the first sensitive and
/// unchecked one in a fresh app), as the peer picks it.
fn check_box(tree: &Value) -> Option<Value> {
    nodes(tree)
        .iter()
        .filter(|n| n["role"] == "checkBox" && n["label"] == "checkbutton")
        .nth(1)
        .cloned()
}

fn checked(tree: &Value, id: &Value) -> bool {
    nodes(tree).iter().any(|n| {
        n["id"] == *id
            && n["states"]
                .as_array()
                .is_some_and(|s| s.iter().any(|s| s == "checked"))
    })
}

/// The first empty, enabled, editable text field that shows.
fn empty_entry(tree: &Value) -> Value {
    let states = |n: &Value| -> Vec<String> {
        n["states"].as_array().map_or(Vec::new(), |s| {
            s.iter()
                .filter_map(|s| s.as_str().map(str::to_string))
                .collect()
        })
    };
    nodes(tree)
        .iter()
        .find(|n| {
            n["role"] == "textField"
                && n["value"].as_str().is_none_or(str::is_empty)
                && !states(n)
                    .iter()
                    .any(|s| s == "disabled" || s == "readonly" || s == "offscreen")
        })
        .cloned()
        .expect("an empty text field on page 1")
}

fn value_of(tree: &Value, id: &Value) -> String {
    nodes(tree)
        .iter()
        .find(|n| n["id"] == *id)
        .and_then(|n| n["value"].as_str())
        .unwrap_or_default()
        .to_string()
}

fn tree(c: &mut ProtocolClient) -> Value {
    c.call(Call::Tree { window: None })
}

/// One fresh session: the five times, in `ROWS` order.
fn round() -> [Duration; 5] {
    let began = Instant::now();
    let wayrig = Wayrig::start_app(&["gtk4-widget-factory"]);
    let mut c = ProtocolClient::connect(&wayrig.socket);
    while c.call(Call::Windows)["windows"]
        .as_array()
        .is_none_or(Vec::is_empty)
    {}
    let mut first = tree(&mut c);
    while check_box(&first).is_none() {
        first = tree(&mut c);
    }
    let launch = began.elapsed();

    let t = Instant::now();
    let again = tree(&mut c);
    let read_again = t.elapsed();

    let check = check_box(&again).unwrap();
    assert!(
        !checked(&again, &check["id"]),
        "the check box starts checked"
    );
    let t = Instant::now();
    c.call(Call::Act {
        window: None,
        element: element_id(&check),
        action: Action::Press,
    });
    assert!(
        checked(&tree(&mut c), &check["id"]),
        "the press did not show"
    );
    let press = t.elapsed();

    // Focus is untimed, as the peer's click on the entry is.
    let entry = empty_entry(&tree(&mut c));
    c.call(Call::Act {
        window: None,
        element: element_id(&entry),
        action: Action::Focus,
    });
    let t = Instant::now();
    c.call(Call::Input {
        window: None,
        events: vec![Event::Text { text: TYPED.into() }],
    });
    assert_eq!(value_of(&tree(&mut c), &entry["id"]), TYPED);
    let typing = t.elapsed();

    let t = Instant::now();
    let shot = c.call(Call::Capture { window: None });
    let screenshot = t.elapsed();
    assert!(shot["png"].as_str().is_some_and(|p| !p.is_empty()));
    [launch, read_again, press, typing, screenshot]
}

fn main() {
    if table::listing_only() {
        return;
    }
    let rounds: Vec<[Duration; 5]> = (0..ROUNDS).map(|_| round()).collect();
    let medians: Vec<Duration> = (0..ROWS.len())
        .map(|i| median(rounds.iter().map(|r| r[i]).collect()))
        .collect();
    let rows = ROWS
        .iter()
        .zip(&medians)
        .map(|(name, d)| {
            (
                format!("gtk4-widget-factory: {name}"),
                ms(*d),
                format!("MyGo, median of {ROUNDS} sessions"),
            )
        })
        .collect::<Vec<_>>();
    table::print(&rows);
    for (name, d) in ROWS.iter().zip(&medians) {
        println!("peer-row\t{name}\t{:.1}", d.as_secs_f64() * 1e3);
    }
}

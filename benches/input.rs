//! Input benchmarks, printed as a table of medians: a click to its effect in a
//! GTK4 app, a click to settled, and typing throughput through each text path.
//!
//! Run with `cargo bench --bench input` (release build; needs the GTK4 fixture's
//! python3-gi and the workspace binaries built).

mod table;

#[path = "../tests/support/mod.rs"]
mod support;

use std::time::{Duration, Instant};

use table::{median, ms};

use support::{start, Gtk4Fixture};
use wayrig_compositor::{CompositorHost, Config};
use wayrig_host::{Button, Host, InputEvent, InputOptions, Mods};

const CLICKS: usize = 20;
const TYPED: usize = 5;
const LONG_TEXT_CHARS: usize = 300;

fn click(at: (f64, f64)) -> InputEvent {
    InputEvent::Click {
        x: at.0,
        y: at.1,
        button: Button::Left,
        clicks: 1,
        mods: Mods::default(),
    }
}

/// Typing throughput into the fixture's second entry, in characters per second.
async fn typing_rate(host: &CompositorHost, env: &[(&str, &str)]) -> f64 {
    let mut f = Gtk4Fixture::open(host, env).await;
    host.input(
        f.window,
        vec![click(f.centre("second"))],
        InputOptions::default(),
    )
    .await
    .unwrap();
    host.settle(f.window, Duration::from_secs(10))
        .await
        .unwrap();
    let alphabet: Vec<char> = "abcdéfghïjklmnöpqrstüvwxyz ÅßÇ中文😀".chars().collect();
    let mut rates = Vec::new();
    for round in 0..TYPED {
        let text: String = (0..LONG_TEXT_CHARS)
            .map(|i| alphabet[(i + round) % alphabet.len()])
            .collect();
        let t0 = Instant::now();
        host.input(
            f.window,
            vec![
                InputEvent::Key {
                    key: "Ctrl+A".into(),
                },
                InputEvent::Text { text: text.clone() },
            ],
            InputOptions::default(),
        )
        .await
        .unwrap();
        f.app.expect("entry", Duration::from_secs(30), |v| {
            v["text"].as_str() == Some(text.as_str())
        });
        rates.push(t0.elapsed());
    }
    LONG_TEXT_CHARS as f64 / median(rates).as_secs_f64()
}

fn main() {
    if table::listing_only() {
        return;
    }
    let rt = table::runtime();
    let rows: Vec<(String, String, String)> = rt.block_on(async {
        let mut rows = Vec::new();
        let host = start(Config::default());
        let mut f = Gtk4Fixture::open(&host, &[]).await;
        let button = f.centre("button");
        let mut to_effect = Vec::new();
        let mut to_settled = Vec::new();
        for n in 1..=CLICKS {
            let t0 = Instant::now();
            host.input(f.window, vec![click(button)], InputOptions::default())
                .await
                .unwrap();
            f.app.expect("clicked", Duration::from_secs(10), |_| true);
            to_effect.push(t0.elapsed());
            host.settle(f.window, Duration::from_secs(10))
                .await
                .unwrap();
            to_settled.push(t0.elapsed());
            assert_eq!(f.app.count("clicked"), n);
        }
        rows.push((
            "click to GtkButton::clicked (GTK4, 60 Hz output)".to_string(),
            ms(median(to_effect)),
            format!("median of {CLICKS}"),
        ));
        rows.push((
            "click to settled (GTK4)".to_string(),
            ms(median(to_settled)),
            "frames drawn, 2 quiet frames, ping answered".to_string(),
        ));
        drop(f);
        let im = typing_rate(&host, &[]).await;
        rows.push((
            "typing, input method path (GTK4 entry)".into(),
            format!("{im:.0} chars/s"),
            format!("{LONG_TEXT_CHARS} chars to the entry's change"),
        ));
        let keymap = typing_rate(&host, &[("GTK_IM_MODULE", "gtk-im-context-simple")]).await;
        rows.push((
            "typing, temporary keymap path (GTK4 entry)".into(),
            format!("{keymap:.0} chars/s"),
            format!("{LONG_TEXT_CHARS} chars to the entry's change"),
        ));
        host.shutdown().await;
        rows
    });
    table::print(&rows);
}

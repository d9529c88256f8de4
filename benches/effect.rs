//! Press to an answer that shows the effect, on every face: gnome-calculator's
//! "=" (its result computed on a worker thread) and gtk4-widget-factory's
//! check box (beside a spinner that never stops), by MyGo `act press`, the
//! Bus `ui.click` and cua.env.v1 `Act` press, from one session serving all.
//!
//! Run with `cargo bench --bench effect`.

mod bus_client;
#[path = "../tests/support/mod.rs"]
mod support;
mod table;

use std::time::Duration;

use bus_client::{free_port, Bus};
use serde_json::json;
use support::{element_id, ProtocolClient, Wayrig};
use table::{median, ms};
use tonic::transport::Channel;
use wayrig_cua_proto::v1;
use wayrig_cua_proto::v1::accessibility_service_client::AccessibilityServiceClient;
use wayrig_cua_proto::v1::windows_service_client::WindowsServiceClient;
use wayrig_proto::mygo::{Action, Call};

/// Presses timed per face and app.
const ROUNDS: usize = 10;

/// `wayrig run` serving MyGo, the Bus (the app named `app`) and cua.env.v1.
fn all_faces(argv: &[&str]) -> (Wayrig, Bus, Channel, tokio::runtime::Runtime) {
    let listen = format!("127.0.0.1:{}", free_port());
    let wayrig = Wayrig::start_with(
        &[
            "--bus-listen",
            &listen,
            "--bus-name",
            "app",
            "--cua-listen",
            "127.0.0.1:0",
        ],
        argv,
    );
    let bus = Bus::connect(&format!("ws://{listen}/ws"));
    let addr = wayrig.cua_address.clone().expect("the cua face listens");
    let rt = table::runtime();
    let channel = rt.block_on(async {
        Channel::from_shared(format!("http://{addr}"))
            .unwrap()
            .connect()
            .await
            .expect("the cua face takes a connection")
    });
    (wayrig, bus, channel, rt)
}

/// The id of the first element of `role` labelled `label` (GTK 4 names a
/// button after its label twice: "= ="), once the tree holds one.
fn id_of(c: &mut ProtocolClient, role: &str, label: &str) -> String {
    let doubled = format!("{label} {label}");
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    loop {
        let tree = c.call(Call::Tree { window: None });
        let found = tree["nodes"].as_array().and_then(|nodes| {
            nodes
                .iter()
                .find(|n| n["role"] == role && (n["label"] == label || n["label"] == *doubled))
                .and_then(|n| n["id"].as_str().map(str::to_string))
        });
        if let Some(id) = found {
            return id;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no {role} {label:?} in the tree"
        );
    }
}

/// Time a press of element `id` on each face, `before` run untimed ahead
/// of each press (what gives the press something to do).
fn press_on_every_face(
    rows: &mut Vec<(String, String, String)>,
    what: &str,
    (c, bus, channel, rt): (
        &mut ProtocolClient,
        &mut Bus,
        &Channel,
        &tokio::runtime::Runtime,
    ),
    id: &str,
    mut before: impl FnMut(&mut ProtocolClient),
) {
    let element = element_id(&json!({ "id": id }));
    // Each round's untimed `before`, then the press timed alone.
    let mut timed = |f: &mut dyn FnMut(&mut ProtocolClient) -> Duration| {
        median((0..ROUNDS).map(|_| f(c)).collect())
    };
    let mygo = timed(&mut |c| {
        before(c);
        let t0 = std::time::Instant::now();
        c.call(Call::Act {
            window: None,
            element: element.clone(),
            action: Action::Press,
        });
        t0.elapsed()
    });
    let bus_time = timed(&mut |c| {
        before(c);
        let t0 = std::time::Instant::now();
        bus.ok("app", "ui.click", json!({ "id": id }));
        t0.elapsed()
    });
    let mut a = AccessibilityServiceClient::new(channel.clone());
    let mut w = WindowsServiceClient::new(channel.clone());
    let listed = rt.block_on(w.list_windows(v1::ListWindowsRequest::default()));
    let window = listed.expect("ListWindows").into_inner().windows[0]
        .r#ref
        .clone();
    let cua = timed(&mut |c| {
        before(c);
        // As a cua client does: a fresh snapshot, then the act on it.
        let snapshot = rt
            .block_on(a.get_tree(v1::GetTreeRequest {
                window: window.clone(),
                ..Default::default()
            }))
            .expect("GetTree")
            .into_inner()
            .snapshot_id;
        let t0 = std::time::Instant::now();
        rt.block_on(a.act(v1::ActRequest {
            element: Some(v1::ElementRef {
                snapshot_id: snapshot,
                element_id: id.to_string(),
            }),
            action: v1::AccessibilityAction::Press as i32,
            ..Default::default()
        }))
        .expect("cua Act");
        t0.elapsed()
    });
    for (face, d) in [
        ("MyGo act press", mygo),
        ("Bus ui.click", bus_time),
        ("cua Act press", cua),
    ] {
        rows.push((
            format!("{what}: {face}"),
            ms(d),
            format!("median of {ROUNDS}"),
        ));
    }
}

fn main() {
    if table::listing_only() {
        return;
    }
    let mut rows = Vec::new();

    let (calc, mut bus, channel, rt) = all_faces(&["gnome-calculator"]);
    let mut c = ProtocolClient::connect(&calc.socket);
    c.first_window();
    let equals = id_of(&mut c, "button", "=");
    let one = element_id(&json!({ "id": id_of(&mut c, "button", "1") }));
    press_on_every_face(
        &mut rows,
        "gnome-calculator \"=\" (result from a worker thread)",
        (&mut c, &mut bus, &channel, &rt),
        &equals,
        |c| {
            c.call(Call::Act {
                window: None,
                element: one.clone(),
                action: Action::Press,
            });
        },
    );
    drop((calc, bus));

    let (factory, mut bus, channel, rt) = all_faces(&["gtk4-widget-factory"]);
    let mut c = ProtocolClient::connect(&factory.socket);
    c.first_window();
    let check = id_of(&mut c, "checkBox", "checkbutton");
    press_on_every_face(
        &mut rows,
        "gtk4-widget-factory check box (a spinner turns beside it)",
        (&mut c, &mut bus, &channel, &rt),
        &check,
        |_| {},
    );
    drop(factory);
    table::print(&rows);
}

//! An egui app (the eframe fixture, AccessKit on, GL on Mesa's software
//! rasterizer) driven over the MyGo face: its elements are found by their keys,
//! their bounds match the pixels, and each action shows in a read after idle.

mod support;

use base64::Engine;
use serde_json::{json, Value};
use support::{workspace_binary, Image, ProtocolClient as Client, Wayrig};
use wayrig_host::Rect;
use wayrig_proto::mygo::{Action, Call, Code, ElementPick};

/// The element with this key in a tree answer.
fn by_key(tree: &Value, key: &str) -> Value {
    tree["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["key"] == key)
        .unwrap_or_else(|| panic!("no element with key {key:?} in {tree:#}"))
        .clone()
}

fn bounds(node: &Value) -> Rect {
    let b = &node["bounds"];
    let n = |k: &str| b[k].as_i64().unwrap_or_else(|| panic!("{k} of {node}")) as i32;
    Rect::new(n("x"), n("y"), n("width"), n("height"))
}

fn states(node: &Value) -> Vec<String> {
    node["states"]
        .as_array()
        .map(|s| s.iter().map(|v| v.as_str().unwrap().to_string()).collect())
        .unwrap_or_default()
}

/// Act on the element with `key`, wait for idle, read the tree again.
fn act(c: &mut Client, window: u64, key: &str, action: Action) -> Value {
    c.call(Call::Act {
        window: Some(window),
        element: ElementPick::Key(key.into()),
        action,
    });
    c.call(idle(window, 10000));
    c.call(Call::Tree {
        window: Some(window),
    })
}

fn idle(window: u64, timeout_ms: u64) -> Call {
    Call::Idle {
        window: Some(window),
        timeout_ms: Some(timeout_ms),
    }
}

/// The tree once AccessKit has sent it: it builds it only after the
/// accessibility bus first asks, a moment after the window maps.
fn first_tree(c: &mut Client, window: u64) -> Value {
    for _ in 0..100 {
        let answer = c.answer(Call::Tree {
            window: Some(window),
        });
        if let Ok(tree) = answer {
            if tree["nodes"]
                .as_array()
                .is_some_and(|n| n.iter().any(|n| n["key"] == "status"))
            {
                return tree;
            }
        }
        // A short wait between looks; it may time out while the app starts.
        let _ = c.answer(idle(window, 100));
    }
    panic!("the egui fixture's elements never showed");
}

#[test]
fn an_egui_app_is_read_and_driven_through_accesskit() {
    let fixture = workspace_binary("egui-fixture");
    let wayrig = Wayrig::start_app(&[fixture.to_str().unwrap()]);
    let mut c = Client::connect(&wayrig.socket);
    let window = c.first_window();
    assert_eq!(window["title"], "Wayrig egui fixture");
    let id = window["id"].as_u64().unwrap();
    c.call(idle(id, 10000));
    let tree = first_tree(&mut c, id);

    // Roles, labels, keys (AccessKit's author ids), values and ranges.
    let press = by_key(&tree, "press");
    assert_eq!(
        (&press["role"], &press["label"]),
        (&json!("button"), &json!("Press"))
    );
    let enabled = by_key(&tree, "enabled");
    assert_eq!(enabled["role"], "checkBox");
    assert!(!states(&enabled).contains(&"checked".into()), "{enabled}");
    let name = by_key(&tree, "name");
    assert_eq!(name["role"], "textField");
    assert_eq!(name["label"], "Name", "labelled by the label beside it");
    assert_eq!(name["placeholder"], "Your name");
    assert_eq!(name["value"], "");
    let amount = by_key(&tree, "amount");
    assert_eq!(amount["role"], "slider");
    assert_eq!(
        (amount["min"].as_f64(), amount["max"].as_f64()),
        (Some(0.0), Some(100.0))
    );
    assert_eq!(amount["now"].as_f64(), Some(0.0));
    assert!(by_key(&tree, "status")["label"]
        .as_str()
        .unwrap()
        .starts_with("presses 0, enabled false"));

    // Bounds match the pixels. winit draws its title bar in subsurfaces around
    // egui's surface, and AccessKit measures from that surface: the field's
    // dark fill lies inside its bounds, the panel just outside them.
    let shot = c.call(Call::Capture { window: Some(id) });
    let png = base64::engine::general_purpose::STANDARD
        .decode(shot["png"].as_str().unwrap())
        .unwrap();
    let image = Image::from_png(&png);
    let field = bounds(&name);
    let mid = (field.y + field.height / 2) as u32;
    let fill = image.pixel((field.x + field.width - 6) as u32, mid);
    let left = image.pixel((field.x - 3) as u32, mid);
    let below = image.pixel(
        (field.x + field.width - 6) as u32,
        (field.y + field.height + 2) as u32,
    );
    assert_eq!(left, below, "the panel around the field {field:?}");
    assert_ne!(fill, left, "the field's fill inside its bounds {field:?}");
    assert!(
        image.crop(bounds(&press)).distinct_colours() > 3,
        "the Press button's label is drawn inside its bounds"
    );

    // Each action, by key, shows in the next read.
    let tree = act(&mut c, id, "press", Action::Press);
    let status = by_key(&tree, "status");
    assert!(
        status["label"].as_str().unwrap().starts_with("presses 1,"),
        "{status}"
    );

    let tree = act(&mut c, id, "enabled", Action::Press);
    assert!(states(&by_key(&tree, "enabled")).contains(&"checked".into()));
    let status = by_key(&tree, "status");
    assert!(
        status["label"]
            .as_str()
            .unwrap()
            .contains("presses 1, enabled true"),
        "{status}"
    );

    // AccessKit sets the text through EditableText, in the app's next frame.
    let tree = act(&mut c, id, "name", Action::SetValue { text: "Ada".into() });
    assert_eq!(by_key(&tree, "name")["value"], "Ada");
    assert!(by_key(&tree, "status")["label"]
        .as_str()
        .unwrap()
        .contains("name \"Ada\""));
    let tree = act(
        &mut c,
        id,
        "name",
        Action::SetValue {
            text: "Grace".into(),
        },
    );
    assert_eq!(by_key(&tree, "name")["value"], "Grace", "setValue replaces");
    // It has no InsertText: the field is focused and the text typed.
    let tree = act(
        &mut c,
        id,
        "name",
        Action::InsertText {
            text: " Hopper".into(),
        },
    );
    let name = by_key(&tree, "name");
    assert_eq!(name["value"], "Grace Hopper");
    assert_eq!(tree["focus"], name["id"]);

    let tree = act(&mut c, id, "amount", Action::SetValue { text: "42".into() });
    assert_eq!(by_key(&tree, "amount")["now"].as_f64(), Some(42.0));
    let tree = act(&mut c, id, "amount", Action::Increment);
    let now = by_key(&tree, "amount")["now"].as_f64().unwrap();
    assert!(now > 42.0, "increment moved the slider up: {now}");

    let tree = act(&mut c, id, "press", Action::Focus);
    assert_eq!(tree["focus"], by_key(&tree, "press")["id"]);

    assert_eq!(
        c.error(Call::Act {
            window: Some(id),
            element: ElementPick::Key("nobody".into()),
            action: Action::Press,
        }),
        Code::NoElement
    );

    // A collapsing header: pressed open, its body's elements join the tree.
    // (AccessKit 0.21 gives AT-SPI no expanded state, so expand is refused.)
    assert!(!tree["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .any(|n| n["key"] == "detail"));
    assert_eq!(
        c.error(Call::Act {
            window: Some(id),
            element: ElementPick::Key("more".into()),
            action: Action::Expand,
        }),
        Code::Unsupported
    );
    let tree = act(&mut c, id, "more", Action::Press);
    let detail = by_key(&tree, "detail");
    assert_eq!(detail["label"], "Hidden detail");
    assert!(bounds(&detail).y > bounds(&by_key(&tree, "more")).y);

    // A second native window. eframe gives AccessKit to its root viewport
    // only: the new window has no tree, and none of its elements land on the
    // main window.
    act(&mut c, id, "details", Action::Press);
    let details = loop {
        let windows = c.call(Call::Windows);
        if let Some(w) = windows["windows"]
            .as_array()
            .unwrap()
            .iter()
            .find(|w| w["title"] == "Details")
        {
            break w.clone();
        }
        // A short wait between looks; it may time out while the app starts.
        let _ = c.answer(idle(id, 100));
    };
    let details_id = details["id"].as_u64().unwrap();
    assert_ne!(details_id, id);
    assert_eq!(
        c.error(Call::Tree {
            window: Some(details_id)
        }),
        Code::Unsupported
    );
    let tree = c.call(Call::Tree { window: Some(id) });
    assert!(
        !tree["nodes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n["key"] == "details-count"),
        "the details window's label is not on the main window"
    );
    assert!(states(&by_key(&tree, "details")).contains(&"checked".into()));
}

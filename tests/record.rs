//! A recorded run (`wayrig run --record`): the GTK 4 fixture driven over all
//! three faces, then the trace, the screenshots, the video and the viewer
//! checked as someone reading a failed CI run would.

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{json, Value};
use support::{have, ProtocolClient as Client, Wayrig};
use wayrig_proto::mygo::{Action, Call, ElementPick};

/// A directory of the test's own, removed when it ends.
struct Scratch(PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn fixture() -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/gtk4-fixture.py")
        .display()
        .to_string()
}

fn button_named(tree: &Value, label: &str) -> u64 {
    tree["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["role"] == "button" && n["label"] == label)
        .and_then(|n| n["id"].as_str())
        .and_then(|id| id.parse().ok())
        .unwrap_or_else(|| panic!("no button {label:?} in {tree}"))
}

/// The fixture's Press button pressed over MyGo, found in its tree.
fn press_the_button(c: &mut Client, window: u64) {
    let tree = c.call(Call::Tree {
        window: Some(window),
    });
    c.call(Call::Act {
        window: Some(window),
        element: ElementPick::Id(button_named(&tree, "Press")),
        action: Action::Press,
    });
}

/// The fixture driven the way an agent loop would: a tree and a press over
/// MyGo, a click into the first field and a Tab to the second over the
/// Bus, text typed there over cua.
fn drive_over_every_face(wayrig: &Wayrig) {
    let mut c = Client::connect(&wayrig.socket);
    let window = c.first_window()["id"].as_u64().unwrap();
    press_the_button(&mut c, window);

    let (bus, app) = wayrig.bus_and_app();
    let cua = wayrig.cua_address.clone().expect("the cua face listens");
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let mut b = support::abp::Client::connect(&bus, "record-test").await;
        b.ok(&app, "ui.click", json!({"label": "First"})).await;
        b.ok(&app, "ui.key", json!({"key": "Tab"})).await;

        let (channel, window_ref) = support::cua_first_window(&cua).await;
        // A cua client learns the session is recorded, and where.
        let features =
            wayrig_cua_proto::v1::system_service_client::SystemServiceClient::new(channel.clone())
                .get_capabilities(wayrig_cua_proto::v1::GetCapabilitiesRequest::default())
                .await
                .unwrap()
                .into_inner()
                .features;
        let recording = features
            .iter()
            .find(|f| f.name == "experimental.recording")
            .expect("the capabilities say whether the session is recorded");
        assert!(recording.supported, "{recording:?}");
        assert!(
            recording.attributes["dir"].ends_with("/run"),
            "{recording:?}"
        );
        support::cua_type(channel.clone(), window_ref.clone(), "typed over cua").await;
        // A request over the limit is refused as an unrecorded session
        // refuses it, not passed on empty.
        use wayrig_cua_proto::v1;
        let refused = v1::computer_service_client::ComputerServiceClient::new(channel)
            .max_encoding_message_size(usize::MAX)
            .keyboard(v1::KeyboardRequest {
                target: Some(v1::InputTarget {
                    window: Some(window_ref),
                    ..Default::default()
                }),
                action: Some(v1::keyboard_request::Action::Type(v1::KeyboardType {
                    text: "x".repeat(9 << 20),
                    ..Default::default()
                })),
            })
            .await
            .unwrap_err();
        assert_eq!(
            refused.code(),
            tonic::Code::ResourceExhausted,
            "{refused:?}"
        );
        let info = wayrig_cua_proto::error_info(&refused).expect("an ErrorInfo");
        assert_eq!(info.reason, v1::ErrorReason::LimitExceeded as i32);
    });
}

fn trace_of(dir: &Path) -> Vec<Value> {
    std::fs::read_to_string(dir.join("trace.jsonl"))
        .expect("the recording has its trace")
        .lines()
        .map(|line| serde_json::from_str(line).expect("each line is JSON"))
        .collect()
}

fn of_kind<'a>(trace: &'a [Value], kind: &str) -> Vec<&'a Value> {
    trace.iter().filter(|e| e["kind"] == kind).collect()
}

/// The one request of `face` whose method ends with `method`.
fn request<'a>(trace: &'a [Value], face: &str, method: &str) -> &'a Value {
    of_kind(trace, "request")
        .into_iter()
        .find(|r| r["face"] == face && r["method"].as_str().unwrap().ends_with(method))
        .unwrap_or_else(|| panic!("no {face} {method} in the trace"))
}

/// What ffprobe counts in the video: its codec and its frames.
fn probe(video: &Path) -> (String, u64) {
    let out = Command::new("ffprobe")
        .args(["-v", "error", "-count_frames", "-select_streams", "v:0"])
        .args([
            "-show_entries",
            "stream=codec_name,nb_read_frames",
            "-of",
            "json",
        ])
        .arg(video)
        .output()
        .expect("ffprobe runs");
    assert!(
        out.status.success(),
        "ffprobe: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let probed: Value = serde_json::from_slice(&out.stdout).unwrap();
    let stream = &probed["streams"][0];
    let frames = stream["nb_read_frames"].as_str().unwrap().parse().unwrap();
    (stream["codec_name"].as_str().unwrap().to_string(), frames)
}

/// The viewer's page as headless Chromium has it once its script ran.
fn viewer_dom(page: &Path, query: &str, profile: &Path) -> String {
    let out = Command::new("chromium")
        .args(["--headless", "--no-sandbox", "--disable-gpu", "--dump-dom"])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg(format!("file://{}{query}", page.display()))
        .output()
        .expect("chromium runs");
    assert!(
        out.status.success(),
        "chromium: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn a_run_driven_over_every_face_is_recorded_and_viewed() {
    for program in ["ffprobe", "chromium"] {
        assert!(
            have(program),
            "{program} is not installed: run scripts/install-deps"
        );
    }
    let scratch =
        Scratch(std::env::temp_dir().join(format!("wayrig-record-{}", std::process::id())));
    let dir = scratch.0.join("run");
    let record = dir.display().to_string();
    let wayrig = Wayrig::start_with(
        &[
            "--record",
            &record,
            "--bus-listen",
            "127.0.0.1:0",
            "--cua-listen",
            "127.0.0.1:0",
        ],
        &["/usr/bin/python3", &fixture()],
    );
    drive_over_every_face(&wayrig);
    // Stopped as CI stops it: the recording is finished on the way out.
    drop(wayrig);

    let trace = trace_of(&dir);
    assert_eq!(trace[0]["kind"], "recording");
    let end = trace.last().unwrap();
    assert_eq!(end["kind"], "end", "the trace ends by saying so");

    // Every request with its answer, on each face; those that acted with
    // the screen after them, kept beside the trace.
    let press = request(&trace, "mygo", "act");
    let click = request(&trace, "bus", ".ui.click");
    let typed = request(&trace, "cua", "ComputerService/Keyboard");
    for r in [press, click, typed] {
        assert_eq!(r["ok"], true, "{r}");
        assert_eq!(r["acted"], true, "{r}");
        assert!(r["answered"].as_f64() >= r["t"].as_f64(), "{r}");
        let shot = r["shot"]
            .as_str()
            .unwrap_or_else(|| panic!("no shot after {r}"));
        let png = std::fs::read(dir.join(shot)).unwrap();
        assert_eq!(&png[1..4], b"PNG", "{shot}");
    }
    assert_eq!(press["request"]["params"]["action"], "press");
    assert_eq!(click["request"]["label"], "First");
    // cua's messages as their protobuf JSON: what was typed where, and the
    // windows a listing answered.
    assert_eq!(
        typed["request"]["type"]["text"], "typed over cua",
        "{typed}"
    );
    assert!(typed["request"]["target"]["window"].is_object(), "{typed}");
    assert_eq!(typed["answer"]["status"], "Ok", "{typed}");
    let too_large = of_kind(&trace, "request")
        .into_iter()
        .find(|r| r["method"].as_str().unwrap().ends_with("Keyboard") && r["ok"] == false)
        .expect("the refused Keyboard request is traced");
    assert_eq!(
        too_large["answer"]["status"], "ResourceExhausted",
        "{too_large}"
    );
    assert!(too_large["request"]["unread"].is_string(), "{too_large}");
    let listed = request(&trace, "cua", "WindowsService/ListWindows");
    assert!(
        listed["answer"]["message"]["windows"][0]["title"].is_string(),
        "{listed}"
    );
    assert!(!request(&trace, "mygo", "tree")["answer"]["nodes"]
        .as_array()
        .unwrap()
        .is_empty());
    // The press names the element it pressed, with the screen before it.
    let act = of_kind(&trace, "act")
        .into_iter()
        .find(|a| a["act"]["element"]["name"] == "Press")
        .expect("the press is in the trace with its element");
    assert!(dir.join(act["shot"].as_str().unwrap()).exists());

    // What the typing changed in the tree, as the answer left it.
    let typed_in = of_kind(&trace, "tree")
        .into_iter()
        .flat_map(|t| t["changed"].as_array().unwrap().clone())
        .find(|c| c["name"] == "Second" && c["now"].get("value").is_some())
        .expect("the second field's new text is traced");
    assert_eq!(typed_in["now"]["value"], "typed over cua", "{typed_in}");
    assert_eq!(typed_in["was"]["value"], "", "{typed_in}");

    // Each input with the window that took it: the Bus's click in the
    // field, the Tab and the text typed over cua.
    let windows = of_kind(&trace, "window");
    let window = windows
        .iter()
        .find(|w| w["event"] == "created" && w["app_id"] == "org.wayrig.Gtk4Fixture")
        .unwrap_or_else(|| panic!("the window's creation is traced: {windows:?}"))["handle"]
        .clone();
    let inputs = of_kind(&trace, "input");
    assert!(
        inputs
            .iter()
            .any(|i| i["event"] == "button" && i["window"] == window),
        "{inputs:?}"
    );
    assert!(
        inputs.iter().any(|i| i["event"] == "text"
            && i["text"] == "typed over cua"
            && i["window"] == window),
        "{inputs:?}"
    );
    // Frames in order, each with its window.
    let commits = of_kind(&trace, "commit");
    assert!(commits.iter().any(|c| c["window"] == window));
    assert!(commits
        .windows(2)
        .all(|p| p[0]["t"].as_f64() <= p[1]["t"].as_f64()));

    // The video decodes, with the frames the trace says it holds.
    let (codec, frames) = probe(&dir.join("video.webm"));
    assert_eq!(codec, "vp8");
    assert!(frames >= 2, "{frames} frames");
    assert_eq!(Some(frames), end["frames_encoded"].as_u64(), "{end}");

    // The viewer lists every request; asked for the press, it shows it
    // with the screen after it.
    let viewer = Command::new(env!("CARGO_BIN_EXE_wayrig"))
        .args(["trace", "view"])
        .arg(&dir)
        .output()
        .unwrap();
    assert!(
        viewer.status.success(),
        "{}",
        String::from_utf8_lossy(&viewer.stderr)
    );
    let page = dir.join("index.html");
    let mut requests = of_kind(&trace, "request");
    requests.sort_by(|a, b| a["t"].as_f64().partial_cmp(&b["t"].as_f64()).unwrap());
    let n = 1 + requests.iter().position(|r| *r == press).unwrap();
    let dom = viewer_dom(&page, &format!("?action={n}"), &scratch.0.join("profile"));
    assert!(
        dom.contains(&format!("id=\"action-{}\"", requests.len())),
        "{dom}"
    );
    assert!(!dom.contains(&format!("id=\"action-{}\"", requests.len() + 1)));
    assert!(
        dom.contains(&format!("<h2>{n}. mygo act — ok</h2>")),
        "{dom}"
    );
    let after = format!("src=\"{}\"", press["shot"].as_str().unwrap());
    assert!(
        dom.contains(&after),
        "the press's screenshot is shown: {dom}"
    );
    // The typing's request shows what it changed in the tree.
    let k = 1 + requests.iter().position(|r| *r == typed).unwrap();
    let dom = viewer_dom(&page, &format!("?action={k}"), &scratch.0.join("profile"));
    assert!(dom.contains("= \"typed over cua\""), "{dom}");
    // A search by the element's name keeps the press listed.
    let found = viewer_dom(&page, "?q=press", &scratch.0.join("profile"));
    assert!(found.contains(&format!("<li id=\"action-{n}\"")), "{found}");
}

/// A session started without `--record` records on request over MyGo
/// (`wayrig.record`), into a folder of the user's state directory.
#[test]
fn a_session_is_recorded_on_request_between_two_calls() {
    let scratch = Scratch(
        std::env::temp_dir().join(format!("wayrig-record-on-request-{}", std::process::id())),
    );
    // Read by `wayrig run` as it starts: where recordings on request go.
    std::env::set_var("XDG_STATE_HOME", &scratch.0);
    let wayrig = Wayrig::start_with(
        &["--bus-listen", "127.0.0.1:0"],
        &["/usr/bin/python3", &fixture()],
    );
    let mut c = Client::connect(&wayrig.socket);
    assert_eq!(
        c.raw_error("wayrig.record", json!({"on": false})),
        "invalid_request",
        "ending what never began is refused"
    );
    let started = c.raw_call("wayrig.record", json!({"on": true}));
    assert_eq!(started["recording"], true);
    let dir = PathBuf::from(started["dir"].as_str().unwrap());
    assert!(
        dir.starts_with(scratch.0.join("wayrig/recordings")),
        "{dir:?}"
    );
    let window = c.first_window()["id"].as_u64().unwrap();
    press_the_button(&mut c, window);
    let ended = c.raw_call("wayrig.record", json!({"on": false}));
    assert_eq!(ended, json!({"dir": started["dir"], "recording": false}));

    let trace = trace_of(&dir);
    let press = request(&trace, "mygo", "act");
    assert_eq!(press["acted"], true, "{press}");
    assert!(dir.join(press["shot"].as_str().unwrap()).exists());
    let end = trace.last().unwrap();
    assert_eq!(end["kind"], "end", "ending the recording writes its end");
    let (_, frames) = probe(&dir.join("video.webm"));
    assert!(frames >= 1);
    assert_eq!(Some(frames), end["frames_encoded"].as_u64(), "{end}");
    // What comes after the end is not recorded.
    c.call(Call::Tree {
        window: Some(window),
    });
    assert_eq!(trace_of(&dir).len(), trace.len());

    // Over the Bus, the same switch: a new folder, ended alike.
    let (bus, app) = wayrig.bus_and_app();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let mut b = support::abp::Client::connect(&bus, "record-test").await;
        let on = b.ok(&app, "wayrig.record", json!({"on": true})).await;
        assert_ne!(on["dir"], started["dir"], "a new recording, a new folder");
        b.ok(&app, "ui.key", json!({"key": "Tab"})).await;
        let off = b.ok(&app, "wayrig.record", json!({"on": false})).await;
        assert_eq!(off, json!({"dir": on["dir"], "recording": false}));
        let trace = trace_of(Path::new(on["dir"].as_str().unwrap()));
        assert!(request(&trace, "bus", ".ui.key")["acted"] == true);
        let refused = b.refused(&app, "wayrig.record", json!({"on": false})).await;
        assert!(refused.to_string().contains("not recorded"), "{refused}");
    });
}

/// A tmpfs of `size` mounted at a fresh directory: a disk that fills;
/// unmounted when dropped.
struct SmallDisk(PathBuf);

impl SmallDisk {
    fn mount(size: &str) -> SmallDisk {
        let dir = std::env::temp_dir().join(format!("wayrig-small-disk-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let c = |s: &str| std::ffi::CString::new(s).unwrap();
        let (target, options) = (c(dir.to_str().unwrap()), c(&format!("size={size}")));
        // SAFETY: mount(2) with valid NUL-terminated strings the call outlives.
        let mounted = unsafe {
            libc::mount(
                c"tmpfs".as_ptr(),
                target.as_ptr(),
                c"tmpfs".as_ptr(),
                0,
                options.as_ptr().cast(),
            )
        };
        assert_eq!(
            mounted,
            0,
            "mounting a tmpfs (as root) failed: {}",
            std::io::Error::last_os_error()
        );
        SmallDisk(dir)
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let target = std::ffi::CString::new(self.0.to_str().unwrap()).unwrap();
        // SAFETY: umount2(2) on the directory this test mounted.
        unsafe { libc::umount2(target.as_ptr(), libc::MNT_DETACH) };
        let _ = std::fs::remove_dir(&self.0);
    }
}

/// A recording onto a disk that fills: the session answers every request
/// on, no half screenshot is left, and Wayrig says, when the recording
/// ends, that it is incomplete and why.
#[test]
fn a_recording_whose_disk_fills_says_it_is_incomplete() {
    let disk = SmallDisk::mount("1m");
    let dir = disk.0.join("run");
    let wayrig = Wayrig::start_with(
        &["--record", dir.to_str().unwrap()],
        &["/usr/bin/python3", &fixture()],
    );
    let mut c = Client::connect(&wayrig.socket);
    let window = c.first_window()["id"].as_u64();
    let press = button_named(&c.call(Call::Tree { window }), "Press");
    // Each press is traced with the screen after it: far past 1 MiB.
    for _ in 0..40 {
        c.call(Call::Act {
            window,
            element: ElementPick::Id(press),
            action: Action::Press,
        });
    }
    // SAFETY: kill(2) on the wayrig process the test started.
    unsafe { libc::kill(wayrig.pid() as i32, libc::SIGTERM) };
    let said = wayrig
        .stderr
        .wait_for("wayrig: recorded to", "the recording's end");
    assert!(said.contains("incomplete"), "{said}");
    assert!(said.contains("No space left on device"), "{said}");
    let shots: Vec<PathBuf> = std::fs::read_dir(dir.join("shots"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    // The video may fill the disk before any screen is kept; those kept are whole.
    for shot in shots {
        let bytes = std::fs::read(&shot).unwrap();
        let decoded = png::Decoder::new(std::io::Cursor::new(bytes))
            .read_info()
            .and_then(|mut r| {
                let mut buf = vec![0; r.output_buffer_size().unwrap_or(0)];
                r.next_frame(&mut buf).map(drop)
            });
        assert!(decoded.is_ok(), "{} is cut: {decoded:?}", shot.display());
    }
}

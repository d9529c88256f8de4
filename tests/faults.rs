//! Faults with clients attached on every face: Wayrig stopped while each is
//! mid-request, and clients that flood without reading; each is answered in
//! its face's terms, and the session serves on or ends promptly.

mod support;

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::time::{Duration, Instant};

use serde_json::json;
use support::{ProtocolClient, Wayrig};
use wayrig_cua_proto::v1;
use wayrig_cua_proto::v1::windows_service_client::WindowsServiceClient;

/// How long a stopped Wayrig may take to end with clients still attached:
/// the grace its faces give requests in flight, and the apps' own exit.
const ENDS_WITHIN: Duration = Duration::from_secs(15);

/// The GTK 4 fixture drawing every frame (it never settles), served on
/// MyGo, the Bus and cua.
fn never_settling() -> Wayrig {
    Wayrig::start_with(
        &[
            "--bus-listen",
            "127.0.0.1:0",
            "--cua-listen",
            "127.0.0.1:0",
            "--env",
            "WAYRIG_FIXTURE_ANIMATE=1",
        ],
        &["/usr/bin/python3", &support::gtk4_fixture()],
    )
}

/// SIGTERM while a MyGo client waits on a window that never settles (an
/// `idle` with no timeout), a cua client watches the windows, and a Bus
/// client types: Wayrig ends within its grace, the MyGo client is told it
/// stops, and the streams end.
#[test]
fn stopped_with_a_request_in_flight_on_every_face_it_ends_and_says_so() {
    let wayrig = never_settling();
    let (bus, app) = wayrig.bus_and_app();
    let cua = wayrig.cua_address.clone().unwrap();
    let mut mygo = ProtocolClient::connect(&wayrig.socket);
    mygo.raw_call("wayrig.waitFor", json!({"text": "Press", "timeout": 30000}));
    let waiting = UnixStream::connect(&wayrig.socket).unwrap();
    waiting
        .set_read_timeout(Some(ENDS_WITHIN + Duration::from_secs(5)))
        .unwrap();
    (&waiting)
        .write_all(b"{\"id\": 7, \"method\": \"idle\", \"params\": {\"window\": 1}}\n")
        .unwrap();
    let rt = support::runtime();
    let (mut watch, mut bus_client) = rt.block_on(async {
        let channel = tonic::transport::Channel::from_shared(format!("http://{cua}"))
            .unwrap()
            .connect()
            .await
            .unwrap();
        let watch = WindowsServiceClient::new(channel)
            .watch_windows(v1::WatchWindowsRequest::default())
            .await
            .unwrap()
            .into_inner();
        let mut b = support::abp::Client::connect(&bus, "faults-test").await;
        b.send(
            &app,
            &format!("{app}.ui.type"),
            json!({"text": "x".repeat(400)}),
        )
        .await;
        (watch, b)
    });
    // The MyGo wait is in: another request on its own connection is answered.
    mygo.call(wayrig_proto::mygo::Call::Windows);

    let stopped = Instant::now();
    // SAFETY: kill(2) on the wayrig process the test started.
    unsafe { libc::kill(wayrig.pid() as i32, libc::SIGTERM) };
    let left = support::wait_ended(&[wayrig.pid() as i32], ENDS_WITHIN);
    assert!(
        left.is_empty(),
        "wayrig still runs {ENDS_WITHIN:?} after SIGTERM"
    );
    let took = stopped.elapsed();

    let mut answer = String::new();
    BufReader::new(&waiting)
        .read_line(&mut answer)
        .expect("the waiting MyGo client is answered");
    let answer: serde_json::Value = serde_json::from_str(&answer).expect("a JSON answer");
    assert_eq!(answer["id"], 7, "{answer}");
    let message = answer["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("stopping"), "{answer}");
    rt.block_on(async {
        use futures_util::StreamExt;
        loop {
            match tokio::time::timeout(Duration::from_secs(5), watch.message()).await {
                Ok(Ok(Some(_))) => continue,
                Ok(_) => break,
                Err(_) => panic!("the cua watch hangs after Wayrig ended"),
            }
        }
        loop {
            match tokio::time::timeout(Duration::from_secs(5), bus_client.ws.next()).await {
                Ok(Some(Ok(_))) => continue,
                Ok(_) => break,
                Err(_) => panic!("the Bus connection hangs after Wayrig ended"),
            }
        }
    });
    eprintln!("wayrig ended {took:?} after SIGTERM");
}

/// Wayrig's resident memory in KiB.
fn rss_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

/// The most Wayrig's memory may grow while a client floods it: far less
/// than the answers it would otherwise keep (23 MiB within 3 s on the Bus).
const FLOOD_GROWTH_KIB: u64 = 8 * 1024;

/// A Bus client that sends 200,000 requests without reading an answer:
/// Wayrig stops reading its frames while their answers wait, so its memory
/// stays flat; another client is answered meanwhile; and once the flooder
/// reads, every one of its requests has its answer.
#[test]
fn a_bus_client_that_sends_without_reading_is_slowed_not_stored() {
    const SENT: usize = 200_000;
    let wayrig = Wayrig::start_with(
        &["--bus-listen", "127.0.0.1:0"],
        &["/usr/bin/python3", &support::gtk4_fixture()],
    );
    let (bus, app) = wayrig.bus_and_app();
    let pid = wayrig.pid();
    support::runtime().block_on(async {
        use futures_util::{SinkExt, StreamExt};
        use tokio_tungstenite::tungstenite::Message;
        let mut other = support::abp::Client::connect(&bus, "patient").await;
        other.tree(&app, json!({})).await;
        let before = rss_kib(pid);
        let flood = support::abp::Client::connect(&bus, "flooder").await;
        // Requests to an app no one hosts: the broker answers each itself.
        let frame = |n: usize| {
            wayrig_proto::abp::Frame::request("nobody.ui.tree", "flooder", "nobody", &n.to_string())
                .serialize()
        };
        let (mut sink, mut answers) = flood.ws.split();
        let sending = tokio::spawn(async move {
            for n in 0..SENT {
                sink.feed(Message::text(frame(n))).await.unwrap();
            }
            sink.flush().await.unwrap();
            sink
        });
        // Sample while the flood goes on, and until it stops being read.
        let mut peak = before;
        for _ in 0..30 {
            tokio::time::sleep(Duration::from_millis(100)).await;
            peak = peak.max(rss_kib(pid));
        }
        let answered = other
            .request(&app, &format!("{app}.window.state"), json!({}))
            .await;
        assert_eq!(
            answered.rc(),
            Some(wayrig_proto::abp::Rc::Ok),
            "{}",
            answered.body
        );
        let mut got = 0;
        while got < SENT {
            match tokio::time::timeout(Duration::from_secs(30), answers.next()).await {
                Ok(Some(Ok(Message::Text(_)))) => got += 1,
                Ok(Some(Ok(_))) => {}
                other => panic!("after {got} of {SENT} answers: {other:?}"),
            }
        }
        let _sink = sending.await.unwrap();
        assert!(
            peak - before < FLOOD_GROWTH_KIB,
            "Wayrig grew {} KiB while flooded",
            peak - before
        );
        eprintln!(
            "flooded: {SENT} answered, Wayrig grew {} KiB",
            peak - before
        );
    });
}

/// A MyGo client that writes 100,000 requests without reading an answer:
/// each connection answers one request at a time, so Wayrig reads no more
/// once its answers wait; another client is answered meanwhile, and the
/// flooder gets every answer once it reads.
#[test]
fn a_mygo_client_that_sends_without_reading_is_slowed_not_stored() {
    const SENT: usize = 100_000;
    let wayrig = Wayrig::start();
    let pid = wayrig.pid();
    let mut other = ProtocolClient::connect(&wayrig.socket);
    other.first_window();
    let before = rss_kib(pid);
    let flood = UnixStream::connect(&wayrig.socket).unwrap();
    let mut sink = flood.try_clone().unwrap();
    let sending = std::thread::spawn(move || {
        for n in 0..SENT {
            let line = format!("{{\"id\": {n}, \"method\": \"windows\"}}\n");
            sink.write_all(line.as_bytes()).unwrap();
        }
    });
    let mut peak = before;
    for _ in 0..30 {
        std::thread::sleep(Duration::from_millis(100));
        peak = peak.max(rss_kib(pid));
    }
    other.call(wayrig_proto::mygo::Call::Windows);
    flood
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    let answered = BufReader::new(&flood).lines().take(SENT).count();
    sending.join().unwrap();
    assert_eq!(answered, SENT);
    assert!(
        peak - before < FLOOD_GROWTH_KIB,
        "Wayrig grew {} KiB while flooded",
        peak - before
    );
}

/// A cua client that opens calls without end on one connection: it holds
/// 100 at once (HTTP/2's limit, which Wayrig sets), its next waits on its
/// own connection until one of those ends, and another client is answered
/// meanwhile.
#[test]
fn a_cua_client_opening_calls_without_end_waits_on_its_own_connection() {
    const AT_ONCE: usize = 100;
    let wayrig = Wayrig::start_with(
        &["--cua-listen", "127.0.0.1:0"],
        &["/usr/bin/python3", &support::gtk4_fixture()],
    );
    let cua = wayrig.cua_address.clone().unwrap();
    support::runtime().block_on(async {
        let connect = || async {
            tonic::transport::Channel::from_shared(format!("http://{cua}"))
                .unwrap()
                .connect()
                .await
                .unwrap()
        };
        let greedy = connect().await;
        let mut watches = Vec::new();
        for _ in 0..AT_ONCE {
            let watch = WindowsServiceClient::new(greedy.clone())
                .watch_windows(v1::WatchWindowsRequest::default())
                .await
                .expect("a watch within the limit is opened")
                .into_inner();
            watches.push(watch);
        }
        let mut over = tokio::spawn({
            let greedy = greedy.clone();
            async move {
                WindowsServiceClient::new(greedy)
                    .list_windows(v1::ListWindowsRequest::default())
                    .await
            }
        });
        WindowsServiceClient::new(connect().await)
            .list_windows(v1::ListWindowsRequest::default())
            .await
            .expect("another client is answered while one holds 100 calls");
        // The other client's answer came through the same server; the call
        // over the limit, sent before it, is still held.
        assert!(
            tokio::time::timeout(Duration::from_millis(200), &mut over)
                .await
                .is_err(),
            "a call past {AT_ONCE} open ones ran on the same connection"
        );
        drop(watches.pop());
        tokio::time::timeout(Duration::from_secs(10), over)
            .await
            .expect("the held call runs once one of the 100 ends")
            .unwrap()
            .expect("the held call is answered");
    });
}

/// Bus peers that go or stall: one that leaves right after asking for
/// text to be typed has it typed whole (input runs to its end) and the
/// session serves on; one that floods and reads nothing does not hold a
/// stopping Wayrig past its grace.
#[test]
fn bus_peers_gone_mid_request_or_stalled_leave_the_session_serving_and_stoppable() {
    const TYPED: &str = "typed for a peer that left";
    let wayrig = Wayrig::start_with(
        &["--bus-listen", "127.0.0.1:0"],
        &["/usr/bin/python3", &support::gtk4_fixture()],
    );
    let (bus, app) = wayrig.bus_and_app();
    let pid = wayrig.pid();
    support::runtime().block_on(async {
        use futures_util::SinkExt;
        use tokio_tungstenite::tungstenite::Message;
        let mut other = support::abp::Client::connect(&bus, "stays").await;
        let tree = other.tree(&app, json!({"role": "TextInput"})).await;
        let first = support::abp::nodes(&tree)
            .iter()
            .find(|n| n["label"] == "First")
            .unwrap_or_else(|| panic!("the First field in {tree}"))["id"]
            .clone();

        let mut leaving = support::abp::Client::connect(&bus, "leaves").await;
        leaving.ok(&app, "ui.click", json!({"id": first})).await;
        leaving
            .send(&app, &format!("{app}.ui.type"), json!({"text": TYPED}))
            .await;
        drop(leaving);
        other
            .tree_until(&app, json!({"role": "TextInput"}), |tree| {
                support::abp::nodes(tree)
                    .iter()
                    .any(|n| n["id"] == first && n["value"] == TYPED)
            })
            .await;

        // A peer that sends without end and reads nothing, then SIGTERM.
        let flood = support::abp::Client::connect(&bus, "stalls").await;
        let (mut sink, _unread) = futures_util::StreamExt::split(flood.ws);
        let flooding = tokio::spawn(async move {
            for n in 0..200_000 {
                let frame = wayrig_proto::abp::Frame::request(
                    "nobody.ui.tree",
                    "stalls",
                    "nobody",
                    &n.to_string(),
                );
                if sink.feed(Message::text(frame.serialize())).await.is_err() {
                    break;
                }
            }
        });
        other.ok(&app, "window.state", json!({})).await;
        // SAFETY: kill(2) on the wayrig process the test started.
        unsafe { libc::kill(pid as i32, libc::SIGTERM) };
        let left =
            tokio::task::spawn_blocking(move || support::wait_ended(&[pid as i32], ENDS_WITHIN))
                .await
                .unwrap();
        assert!(
            left.is_empty(),
            "wayrig still runs {ENDS_WITHIN:?} after SIGTERM with a stalled peer"
        );
        flooding.abort();
    });
}

/// How many descriptors Wayrig holds open.
fn open_descriptors(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd")).map_or(0, |d| d.count())
}

/// Wait until the count of Wayrig's descriptors meets `wanted`, for at
/// most `within`; the count last seen.
fn descriptors_until(pid: u32, wanted: impl Fn(usize) -> bool, within: Duration) -> usize {
    let deadline = Instant::now() + within;
    loop {
        let open = open_descriptors(pid);
        if wanted(open) || Instant::now() > deadline {
            return open;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// MyGo clients that go while their request runs, on a window that never
/// settles: one waiting a minute for it to settle is forgotten at once, its
/// connection closed; one that only ended its sending side is still
/// answered; and a value set by a client that left is set all the same,
/// since a request that acts runs to its end.
#[test]
fn a_mygo_client_gone_mid_request_is_forgotten_and_its_action_still_lands() {
    let wayrig = never_settling();
    let pid = wayrig.pid();
    let mut other = ProtocolClient::connect(&wayrig.socket);
    other.raw_call("wayrig.waitFor", json!({"text": "Press", "timeout": 30000}));
    let tree = other.call(wayrig_proto::mygo::Call::Tree { window: None });
    let first = tree["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["label"] == "First")
        .unwrap_or_else(|| panic!("the First field in {tree}"))["id"]
        .clone();

    // A connection that asks for an idle of a minute, once Wayrig has
    // accepted it (it holds one more descriptor).
    let before = open_descriptors(pid);
    let waiting = || {
        let stream = UnixStream::connect(&wayrig.socket).unwrap();
        (&stream)
            .write_all(b"{\"id\": 1, \"method\": \"idle\", \"params\": {\"timeout\": 60000}}\n")
            .unwrap();
        let accepted = descriptors_until(pid, |n| n > before, Duration::from_secs(5));
        assert!(accepted > before, "the connection was never accepted");
        stream
    };

    // Gone mid-wait: the connection is closed within a second, not a minute.
    drop(waiting());
    let left = descriptors_until(pid, |n| n <= before, Duration::from_secs(5));
    assert!(
        left <= before,
        "Wayrig still holds the gone client's connection ({left} descriptors, {before} before it)"
    );

    // Gone with a second request sent behind the first (unread by Wayrig
    // while the first waits): forgotten as soon.
    let pipelined = waiting();
    (&pipelined)
        .write_all(b"{\"id\": 2, \"method\": \"windows\"}\n")
        .unwrap();
    // Answered on another connection once Wayrig's event loop has taken
    // the second request's arrival as its own event, before the hang-up.
    other.call(wayrig_proto::mygo::Call::Windows);
    drop(pipelined);
    let left = descriptors_until(pid, |n| n <= before, Duration::from_secs(5));
    assert!(
        left <= before,
        "Wayrig still holds the pipelining client's connection ({left} descriptors, {before} \
         before it)"
    );

    // Ended its sending side only: it still reads its answer.
    let half = UnixStream::connect(&wayrig.socket).unwrap();
    half.set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    (&half)
        .write_all(b"{\"id\": 2, \"method\": \"idle\", \"params\": {\"timeout\": 300}}\n")
        .unwrap();
    half.shutdown(std::net::Shutdown::Write).unwrap();
    let mut answer = String::new();
    BufReader::new(&half)
        .read_line(&mut answer)
        .expect("the half-closed client is answered");
    let answer: serde_json::Value = serde_json::from_str(&answer).expect("a JSON answer");
    assert_eq!(answer["error"]["code"], "timeout", "{answer}");

    // Gone right after asking for a value to be set: it is set.
    let acting = UnixStream::connect(&wayrig.socket).unwrap();
    let set = json!({"id": 3, "method": "act", "params": {
        "id": first, "action": "setValue", "text": "set for a client that left"}});
    (&acting).write_all(format!("{set}\n").as_bytes()).unwrap();
    drop(acting);
    let found = other.raw_call(
        "wayrig.waitFor",
        json!({"text": "set for a client that left", "timeout": 10000}),
    );
    assert!(!found.is_null(), "{found}");
}

/// The session bus killed under a GTK app and foot: the GTK app ends with
/// it (GLib's exit-on-close) and the accessibility bus it started goes
/// too; Wayrig serves on: foot's window is listed and captured, and a read
/// of elements says the accessibility bus is gone and what still works.
#[test]
fn the_session_bus_killed_leaves_the_other_windows_served() {
    let fixture = json!(["/usr/bin/python3", support::gtk4_fixture()]).to_string();
    let wayrig = Wayrig::start_with(&["--launch", &fixture], &["foot"]);
    let mut c = ProtocolClient::connect(&wayrig.socket);
    let titles = |c: &mut ProtocolClient| -> Vec<(u64, String)> {
        c.call(wayrig_proto::mygo::Call::Windows)["windows"]
            .as_array()
            .unwrap()
            .iter()
            .map(|w| (w["id"].as_u64().unwrap(), w["title"].to_string()))
            .collect()
    };
    let deadline = Instant::now() + Duration::from_secs(30);
    let shown = loop {
        let shown = titles(&mut c);
        if shown.len() == 2 {
            break shown;
        }
        assert!(
            Instant::now() < deadline,
            "two windows never showed: {shown:?}"
        );
        let _ = c.answer(wayrig_proto::mygo::Call::Idle {
            window: None,
            timeout_ms: Some(200),
        });
    };
    let foot = shown
        .iter()
        .find(|(_, t)| t.contains("foot"))
        .unwrap_or_else(|| panic!("no foot window among {shown:?}"))
        .0;
    // The session bus's daemon: its address is its argument.
    let path = wayrig.bus_address.trim_start_matches("unix:path=");
    let path = path.split(',').next().unwrap();
    let daemons = support::processes_naming(&format!("--address=unix:path={path}"), false);
    assert_eq!(daemons.len(), 1, "the session bus's daemon: {daemons:?}");
    // SAFETY: kill(2) on the session's bus daemon, started for this test.
    unsafe { libc::kill(daemons[0], libc::SIGKILL) };

    let tree = json!({"id": 1, "method": "tree", "params": {"window": foot}});
    let deadline = Instant::now() + Duration::from_secs(30);
    let refused = loop {
        let answer = c.send_line(&tree.to_string());
        let message = answer["error"]["message"].as_str().unwrap_or_default();
        if message.contains("accessibility bus is gone") {
            break answer;
        }
        assert!(
            Instant::now() < deadline,
            "no read said the bus was gone: {answer}"
        );
        let _ = c.answer(wayrig_proto::mygo::Call::Idle {
            window: Some(foot),
            timeout_ms: Some(200),
        });
    };
    assert_eq!(refused["error"]["code"], "failed", "{refused}");
    assert!(titles(&mut c).iter().any(|(id, _)| *id == foot));
    let shot = c.call(wayrig_proto::mygo::Call::Capture { window: Some(foot) });
    assert!(shot["png"]
        .as_str()
        .is_some_and(|p| p.starts_with("iVBORw0KGgo")));
    assert!(std::path::Path::new(&format!("/proc/{}", wayrig.pid())).exists());
}

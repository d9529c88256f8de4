//! End-to-end tests of the compositor host: real apps (gtk4-widget-factory, foot)
//! and the purpose-built test client, driven through the Host API.

mod support;

use std::time::Duration;

use support::{have, start, wait_closed, wait_event, wait_window, Image, TestClient, APP_START};
use wayrig_compositor::{Config, Pacing};
use wayrig_host::{
    FrameWait, Host, HostError, LaunchSpec, WindowCommand, WindowEvent, WindowHandle, WindowKind,
};

const SHORT: Duration = Duration::from_secs(10);

/// A capture of the window, checked to be exactly its content as the host
/// reports it now (the window may have resized since it was first seen).
async fn capture_of_content(
    host: &wayrig_compositor::CompositorHost,
    handle: WindowHandle,
) -> Image {
    let shot = Image::decode(&host.capture_window(handle).await.unwrap());
    let now = host
        .windows()
        .await
        .unwrap()
        .into_iter()
        .find(|w| w.handle == handle)
        .unwrap();
    assert_eq!(
        (shot.width as i32, shot.height as i32),
        (now.content.width, now.content.height)
    );
    shot
}

fn launch_spec(argv: &[&str]) -> LaunchSpec {
    LaunchSpec {
        argv: argv.iter().map(|s| s.to_string()).collect(),
        ..Default::default()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gtk4_widget_factory_is_reported_and_captured() {
    assert!(
        have("gtk4-widget-factory"),
        "gtk4-widget-factory is not installed (apt-get install gtk-4-examples)"
    );
    let host = start(Config::default());
    let mut watch = host.watch_windows().await.unwrap();
    let app = host
        .launch(launch_spec(&["gtk4-widget-factory"]))
        .await
        .unwrap();
    let win = wait_window(&mut watch, APP_START, |w| w.app_id == "gtk4-widget-factory").await;

    assert_eq!(win.title, "GTK Widget Factory");
    assert_eq!(win.pid, Some(app.pid));
    assert_eq!(win.kind, WindowKind::Normal);
    assert!(win.focused && win.on_screen && !win.minimized);
    assert!(
        win.content.width >= 640 && win.content.height >= 400,
        "{:?}",
        win.content
    );
    // Client-side decorations: the shadow makes the frame larger than the content.
    assert!(
        win.frame.width > win.content.width && win.frame.x < win.content.x,
        "{win:?}"
    );

    let shot = capture_of_content(&host, win.handle).await;
    assert!(
        shot.distinct_colours() > 200,
        "a widget factory has many colours, got {}",
        shot.distinct_colours()
    );

    let out = Image::decode(&host.capture_output().await.unwrap());
    assert_eq!((out.width, out.height), (1280, 800));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gtk3_widget_factory_is_reported_and_captured() {
    assert!(
        have("gtk3-widget-factory"),
        "gtk3-widget-factory is not installed (apt-get install gtk-3-examples)"
    );
    let host = start(Config::default());
    let mut watch = host.watch_windows().await.unwrap();
    let app = host
        .launch(launch_spec(&["gtk3-widget-factory"]))
        .await
        .unwrap();
    let win = wait_window(&mut watch, APP_START, |w| w.app_id == "gtk3-widget-factory").await;
    assert_eq!(win.pid, Some(app.pid));
    assert!(win.focused && win.on_screen);
    let shot = capture_of_content(&host, win.handle).await;
    assert!(
        shot.distinct_colours() > 200,
        "got {} colours",
        shot.distinct_colours()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn foot_is_reported_settles_and_captures() {
    assert!(have("foot"), "foot is not installed (apt-get install foot)");
    let host = start(Config::default());
    let mut watch = host.watch_windows().await.unwrap();
    let app = host
        .launch(launch_spec(&["foot", "--", "sh"]))
        .await
        .unwrap();
    let win = wait_window(&mut watch, APP_START, |w| w.app_id == "foot").await;
    assert_eq!(win.title, "foot");
    assert_eq!(win.pid, Some(app.pid));
    host.settle(win.handle, SHORT)
        .await
        .expect("an idle terminal settles");

    let shot = capture_of_content(&host, win.handle).await;
    assert!(
        shot.distinct_colours() > 2,
        "foot draws a title bar and a prompt"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn covered_and_minimized_windows_capture_their_own_content() {
    let host = start(Config::default());
    let mut watch = host.watch_windows().await.unwrap();
    let mut red = TestClient::spawn(&host, &["--title", "red", "--color", "cc0000"]);
    red.expect("idle", SHORT, |_| true);
    let red_win = wait_window(&mut watch, SHORT, |w| w.title == "red").await;
    let mut blue = TestClient::spawn(&host, &["--title", "blue", "--color", "0000cc"]);
    blue.expect("idle", SHORT, |_| true);
    let blue_win = wait_window(&mut watch, SHORT, |w| w.title == "blue").await;

    // Same size, both centred: blue covers red entirely.
    assert_eq!(red_win.content, blue_win.content);
    let red_now = wait_window(&mut watch, SHORT, |w| w.title == "red" && !w.on_screen).await;
    assert_eq!(red_now.z, 1);
    assert!(!red_now.focused);

    let out = Image::decode(&host.capture_output().await.unwrap());
    let c = blue_win.content;
    assert_eq!(
        out.pixel((c.x + c.width / 2) as u32, (c.y + c.height / 2) as u32),
        [0, 0, 0xcc]
    );

    let shot = Image::decode(&host.capture_window(red_win.handle).await.unwrap());
    assert_eq!((shot.width, shot.height), (400, 300));
    assert!(
        shot.share_of([0xcc, 0, 0]) > 0.9,
        "covered window captured its own pixels"
    );
    assert_eq!(
        shot.pixel(15, 15),
        [0xff, 0xff, 0xff],
        "the test client's marker square"
    );

    host.window_command(red_win.handle, WindowCommand::Minimize)
        .await
        .unwrap();
    let red_min = wait_window(&mut watch, SHORT, |w| w.title == "red" && w.minimized).await;
    assert!(!red_min.on_screen);
    let shot = Image::decode(&host.capture_window(red_win.handle).await.unwrap());
    assert!(
        shot.share_of([0xcc, 0, 0]) > 0.9,
        "minimized window still captures"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn settle_answers_after_the_last_frame() {
    let host = start(Config::default());
    let mut watch = host.watch_windows().await.unwrap();
    let mut client = TestClient::spawn(&host, &["--frames", "20"]);
    let win = wait_window(&mut watch, SHORT, |w| w.app_id == "wayrig.testclient").await;
    let settled = host.settle(win.handle, SHORT).await.expect("settles");
    // Everything the client drew was drawn before settle answered.
    let drained = client.drain();
    assert!(
        client
            .seen
            .iter()
            .any(|v| v["ev"] == "drawn" && v["n"] == 20),
        "settle answered before the last frame: {drained:?}"
    );
    assert!(client.seen.iter().any(|v| v["ev"] == "idle"));
    assert_eq!(client.count("frame"), 20);
    assert!(settled.waited < SHORT);

    // Settling again right away answers at once, with no new commits.
    let again = host.settle(win.handle, SHORT).await.unwrap();
    assert_eq!(again.commits, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn settle_times_out_on_endless_animation() {
    let host = start(Config::default());
    let mut watch = host.watch_windows().await.unwrap();
    let mut client = TestClient::spawn(&host, &["--frames", "forever"]);
    let win = wait_window(&mut watch, SHORT, |w| w.app_id == "wayrig.testclient").await;
    let err = host
        .settle(win.handle, Duration::from_millis(300))
        .await
        .unwrap_err();
    match err {
        HostError::Timeout(after, why) => {
            assert_eq!(after, Duration::from_millis(300));
            assert!(why.contains("keeps drawing frames"), "{why}");
        }
        other => panic!("expected a timeout, got {other:?}"),
    }
    // The compositor keeps serving: the client still animates.
    let n = client.count("frame");
    client.expect("frame", SHORT, |v| v["n"].as_u64() > Some(n as u64));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn settle_waits_out_a_slow_frame_and_shows_the_last_one() {
    // Each of 3 frames keeps the client busy for 150 ms (about nine output ticks)
    // with no commit and no frame request pending: only its late answer to a
    // ping shows that it is still drawing.
    let host = start(Config::default());
    let mut watch = host.watch_windows().await.unwrap();
    let _client = TestClient::spawn(
        &host,
        &["--frames", "3", "--draw-ms", "150", "--color", "0000cc"],
    );
    let win = wait_window(&mut watch, SHORT, |w| w.app_id == "wayrig.testclient").await;
    host.settle(win.handle, SHORT).await.expect("settles");
    // The test client marks frame n in blue's low bits: the last is frame 3.
    let shot = capture_of_content(&host, win.handle).await;
    assert_eq!(
        shot.pixel(200, 200),
        [0, 0, 0xcc ^ 3],
        "settled before the last frame"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fast_pacing_runs_a_short_animation_to_its_end() {
    let host = start(Config {
        pacing: Pacing::Fast,
        ..Config::default()
    });
    let mut watch = host.watch_windows().await.unwrap();
    let mut client = TestClient::spawn(&host, &["--frames", "200"]);
    let win = wait_window(&mut watch, SHORT, |w| w.app_id == "wayrig.testclient").await;
    host.settle(win.handle, SHORT)
        .await
        .expect("settles after 200 frames");
    client.drain();
    assert_eq!(client.count("frame"), 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn step_pacing_delivers_exactly_the_requested_frames() {
    let host = start(Config {
        pacing: Pacing::Step,
        ..Config::default()
    });
    let mut watch = host.watch_windows().await.unwrap();
    let mut client = TestClient::spawn(&host, &["--frames", "forever"]);
    client.expect("drawn", SHORT, |v| v["n"] == 0);
    let win = wait_window(&mut watch, SHORT, |w| w.app_id == "wayrig.testclient").await;
    assert_eq!(client.count("frame"), 0, "no frame before a step");

    let stepped = host.step(5).await.unwrap();
    assert_eq!((stepped.frames, stepped.callbacks), (5, 5));
    client.expect("drawn", SHORT, |v| v["n"] == 5);
    assert_eq!(client.count("frame"), 5);

    // A wait on the window's frames asks for them: the client draws while
    // it is waited on and, drawing forever, never settles.
    let err = host
        .settle(win.handle, Duration::from_millis(200))
        .await
        .unwrap_err();
    assert!(matches!(err, HostError::Timeout(..)), "{err:?}");
    client.drain();
    let drawn = client.count("frame");
    assert!(drawn > 5, "frames while waited on: {drawn}");

    // Unasked again, it stands still: the next step is exactly its frames.
    let stepped = host.step(3).await.unwrap();
    assert_eq!(stepped.callbacks, 3);
    client.expect("drawn", SHORT, |v| v["n"] == drawn + 3);
    assert_eq!(client.count("frame"), drawn + 3);

    let realtime = start(Config::default());
    let err = realtime.step(1).await.unwrap_err();
    assert!(
        matches!(err, HostError::Unsupported(ref m) if m.contains("--pacing step")),
        "{err:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn window_commands_round_trip() {
    let host = start(Config::default());
    let mut watch = host.watch_windows().await.unwrap();
    let mut client = TestClient::spawn(&host, &["--title", "cmd"]);
    let win = wait_window(&mut watch, SHORT, |w| w.title == "cmd" && w.focused).await;
    let h = win.handle;

    host.window_command(h, WindowCommand::Move { x: 10, y: 20 })
        .await
        .unwrap();
    let moved = wait_window(&mut watch, SHORT, |w| w.handle == h && w.content.x == 10).await;
    assert_eq!((moved.content.x, moved.content.y), (10, 20));

    host.window_command(
        h,
        WindowCommand::Resize {
            width: 500,
            height: 350,
        },
    )
    .await
    .unwrap();
    client.expect("configure", SHORT, |v| {
        v["width"] == 500 && v["height"] == 350
    });
    let resized = wait_window(&mut watch, SHORT, |w| {
        w.handle == h && w.content.width == 500
    })
    .await;
    assert_eq!(resized.content.height, 350);

    host.window_command(h, WindowCommand::Minimize)
        .await
        .unwrap();
    let min = wait_window(&mut watch, SHORT, |w| w.handle == h && w.minimized).await;
    assert!(!min.focused && !min.on_screen);

    host.window_command(h, WindowCommand::Activate)
        .await
        .unwrap();
    let back = wait_window(&mut watch, SHORT, |w| {
        w.handle == h && !w.minimized && w.focused
    })
    .await;
    assert!(back.on_screen);

    host.window_command(h, WindowCommand::Maximize)
        .await
        .unwrap();
    client.expect("configure", SHORT, |v| {
        v["width"] == 1280 && v["height"] == 800
    });
    let max = wait_window(&mut watch, SHORT, |w| {
        w.handle == h && w.maximized && w.content.width == 1280
    })
    .await;
    assert_eq!(
        (max.content.x, max.content.y, max.content.height),
        (0, 0, 800)
    );

    host.window_command(h, WindowCommand::Restore)
        .await
        .unwrap();
    let restored = wait_window(&mut watch, SHORT, |w| {
        w.handle == h && !w.maximized && w.content.width == 500
    })
    .await;
    assert_eq!(restored.content.height, 350);

    host.window_command(h, WindowCommand::Fullscreen)
        .await
        .unwrap();
    wait_window(&mut watch, SHORT, |w| {
        w.handle == h && w.fullscreen && w.content.width == 1280
    })
    .await;

    let err = host
        .window_command(
            h,
            WindowCommand::Resize {
                width: 0,
                height: 10,
            },
        )
        .await
        .unwrap_err();
    assert!(matches!(err, HostError::InvalidRequest(_)), "{err:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn close_ends_a_willing_app_and_force_close_a_refusing_one() {
    let host = start(Config::default());
    let mut watch = host.watch_windows().await.unwrap();

    let mut willing = TestClient::spawn(&host, &["--title", "willing"]);
    let win = wait_window(&mut watch, SHORT, |w| w.title == "willing").await;
    assert_eq!(win.pid, Some(willing.pid()));
    host.window_command(win.handle, WindowCommand::Close)
        .await
        .unwrap();
    wait_closed(&mut watch, win.handle.id, SHORT).await;
    assert_eq!(willing.wait_exit(SHORT), Some(0));

    let mut stubborn = TestClient::spawn(&host, &["--title", "stubborn", "--refuse-close"]);
    let win = wait_window(&mut watch, SHORT, |w| w.title == "stubborn").await;
    host.window_command(win.handle, WindowCommand::Close)
        .await
        .unwrap();
    stubborn.expect("close", SHORT, |_| true);
    host.settle(win.handle, SHORT)
        .await
        .expect("still there after refusing");
    assert!(host
        .windows()
        .await
        .unwrap()
        .iter()
        .any(|w| w.handle == win.handle));

    let after = host
        .window_command(win.handle, WindowCommand::ForceClose)
        .await
        .unwrap();
    assert!(after.is_none(), "a force-closed window is gone");
    stubborn.wait_exit(SHORT);
    assert!(!host
        .windows()
        .await
        .unwrap()
        .iter()
        .any(|w| w.handle == win.handle));
    let err = host.settle(win.handle, SHORT).await.unwrap_err();
    assert_eq!(err, HostError::NoWindow(win.handle));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_handles_and_launches_are_clear_errors() {
    let host = start(Config::default());
    let nobody = WindowHandle { id: 999, epoch: 1 };
    assert_eq!(
        host.capture_window(nobody).await.unwrap_err(),
        HostError::NoWindow(nobody)
    );
    assert_eq!(
        host.window_command(nobody, WindowCommand::Activate)
            .await
            .unwrap_err(),
        HostError::NoWindow(nobody)
    );
    let err = host
        .launch(launch_spec(&["/nonexistent/app"]))
        .await
        .unwrap_err();
    assert!(
        matches!(err, HostError::Launch { ref argv0, .. } if argv0 == "/nonexistent/app"),
        "{err:?}"
    );
    assert!(matches!(
        host.launch(LaunchSpec::default()).await.unwrap_err(),
        HostError::InvalidRequest(_)
    ));

    // A stale epoch of a live window is told apart from an unknown window.
    let mut watch = host.watch_windows().await.unwrap();
    let _client = TestClient::spawn(&host, &[]);
    let win = wait_window(&mut watch, SHORT, |w| w.app_id == "wayrig.testclient").await;
    let old = WindowHandle {
        id: win.handle.id,
        epoch: win.handle.epoch + 1,
    };
    assert!(
        matches!(host.capture_window(old).await.unwrap_err(), HostError::StaleWindow(h, _) if h == old)
    );

    // After all that, the host still works.
    assert_eq!(host.windows().await.unwrap().len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_window_unmapped_and_remapped_gets_a_new_epoch_and_its_old_handle_goes_stale() {
    let host = start(Config::default());
    let mut watch = host.watch_windows().await.unwrap();
    let mut client = TestClient::spawn(&host, &[]);
    let win = wait_window(&mut watch, SHORT, |w| w.app_id == "wayrig.testclient").await;
    let old = win.handle;

    // The test client unmaps its toplevel and maps it again on the same xdg_toplevel.
    // SAFETY: kill(2) on the client's own pid; no memory is touched.
    assert_eq!(unsafe { libc::kill(client.pid() as i32, libc::SIGUSR1) }, 0);

    let closed = wait_event(
        &mut watch,
        SHORT,
        |ev| matches!(ev, WindowEvent::Closed(h) if h.id == old.id),
    )
    .await;
    assert_eq!(closed, WindowEvent::Closed(old));
    let created = wait_event(
        &mut watch,
        SHORT,
        |ev| matches!(ev, WindowEvent::Created(w) if w.handle.id == old.id),
    )
    .await;
    let WindowEvent::Created(new) = created else {
        unreachable!("the predicate takes only Created")
    };
    assert_eq!(
        new.handle,
        WindowHandle {
            id: old.id,
            epoch: old.epoch + 1
        }
    );
    assert_eq!(new.pid, win.pid);
    client.expect("unmapped", SHORT, |_| true);
    client.expect("remapped", SHORT, |_| true);

    // The handle of the first mapping names the window no more; the new one does.
    assert!(matches!(
        host.capture_window(old).await.unwrap_err(),
        HostError::StaleWindow(h, current) if h == old && current == new.handle.epoch
    ));
    capture_of_content(&host, new.handle).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_ends_launched_apps() {
    let host = start(Config::default());
    let mut watch = host.watch_windows().await.unwrap();
    let app = host
        .launch(launch_spec(&["sh", "-c", "trap '' HUP TERM; sleep 600"]))
        .await
        .unwrap();
    let _client = TestClient::spawn(&host, &[]);
    wait_window(&mut watch, SHORT, |_| true).await;
    host.shutdown().await;
    assert!(
        !wayrig_host::launch::group_alive(app.pid),
        "launched app survived shutdown"
    );
    assert_eq!(host.windows().await.unwrap_err(), HostError::Gone);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hidden_windows_keep_getting_frames_unless_throttled() {
    for throttle in [false, true] {
        let host = start(Config {
            frames_for_hidden: !throttle,
            ..Config::default()
        });
        let mut watch = host.watch_windows().await.unwrap();
        let mut client = TestClient::spawn(&host, &["--frames", "forever"]);
        let win = wait_window(&mut watch, SHORT, |w| w.app_id == "wayrig.testclient").await;
        host.window_command(win.handle, WindowCommand::Minimize)
            .await
            .unwrap();
        wait_window(&mut watch, SHORT, |w| w.handle == win.handle && w.minimized).await;
        if throttle {
            // Absence needs a window of time: settle's timeout (which it hits,
            // the window waiting for a frame) first lets in-flight frames land,
            // then shows that no new one comes.
            let err = host
                .settle(win.handle, Duration::from_millis(300))
                .await
                .unwrap_err();
            assert!(matches!(err, HostError::Timeout(..)), "{err:?}");
            client.drain();
            let before = client.count("frame");
            let _ = host.settle(win.handle, Duration::from_millis(300)).await;
            client.drain();
            assert_eq!(
                client.count("frame"),
                before,
                "a throttled hidden window got frames"
            );
        } else {
            client.drain();
            let before = client.count("frame") as u64;
            client.expect("frame", SHORT, |v| v["n"].as_u64() > Some(before + 5));
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_held_app_draws_nothing_until_let_go_and_a_wait_still_gets_its_frames() {
    let host = start(Config::default());
    let mut watch = host.watch_windows().await.unwrap();
    let mut client = TestClient::spawn(&host, &["--frames", "forever"]);
    let win = wait_window(&mut watch, SHORT, |w| w.app_id == "wayrig.testclient").await;
    client.expect("frame", SHORT, |v| v["n"].as_u64() > Some(3));

    // Held: no frame before the hold runs out (one asked before may land).
    let hold = Duration::from_millis(500);
    let held_at = std::time::Instant::now();
    host.hold_frames(win.handle, hold).await.unwrap();
    client.drain();
    let before = client.count("frame") as u64;
    client.expect("frame", SHORT, |v| v["n"].as_u64() > Some(before + 3));
    assert!(
        held_at.elapsed() >= hold - Duration::from_millis(50),
        "frames came while held: {:?}",
        held_at.elapsed()
    );

    // A wait on the window's frames gets them while it is held.
    host.hold_frames(win.handle, Duration::from_secs(30))
        .await
        .unwrap();
    let drawn = host.commits(win.handle).await.unwrap();
    host.wait_frames(win.handle, FrameWait::Past(drawn + 3), SHORT)
        .await
        .expect("a waited window draws while held");

    // Let go, frames come again at once.
    host.hold_frames(win.handle, Duration::ZERO).await.unwrap();
    client.drain();
    let before = client.count("frame") as u64;
    client.expect("frame", SHORT, |v| v["n"].as_u64() > Some(before + 3));
}

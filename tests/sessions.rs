//! Many sessions in one process, as the WebDriver face makes them: each by
//! the one recipe, isolated from the others, and ended with all it started.

mod support;

use std::path::PathBuf;
use std::sync::Arc;

use support::{launch_and_wait, APP_START};
use wayrig_compositor::Config;
use wayrig_host::launch::group_alive;
use wayrig_host::Host;
use wayrig_services::Role;
use wayrig_sessions::{Live, Sessions, SessionsFull, Spec};

fn spec() -> Spec {
    Spec {
        compositor: Config {
            app_env: vec![("GSK_RENDERER".into(), "cairo".into())],
            ..Config::default()
        },
        accessibility: true,
        desktop: None,
        read_ahead: false,
    }
}

/// Make a session on a thread that ends as soon as it is made, as a request
/// handler's helper thread would.
fn create_on_a_passing_thread(sessions: &Arc<Sessions>) -> (String, Arc<Live>) {
    let (sessions, runtime) = (sessions.clone(), tokio::runtime::Handle::current());
    std::thread::spawn(move || runtime.block_on(sessions.create(spec())))
        .join()
        .expect("the making thread")
        .expect("a session")
}

/// The fixture's window and its app's pid, launched in `live`.
async fn fixture_in(live: &Live) -> (wayrig_host::WindowInfo, u32) {
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/gtk4-fixture.py");
    let win = launch_and_wait(
        &**live.host(),
        &["/usr/bin/python3", script.to_str().unwrap()],
        APP_START,
    )
    .await;
    (win.clone(), win.pid.expect("its pid"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_are_isolated_keep_their_buses_and_end_with_all_they_started() {
    let sessions = Arc::new(Sessions::new(2));
    // Made from threads that are gone by now: their buses live on (the bus
    // daemon's parent-death signal does not follow the thread that made it).
    let (id_a, a) = create_on_a_passing_thread(&sessions);
    let (id_b, b) = create_on_a_passing_thread(&sessions);
    assert_ne!(id_a, id_b);
    assert!(!sessions.has_room());
    match sessions.create(spec()).await {
        Err(SessionsFull::Full(2)) => {}
        other => panic!(
            "a third session past the limit of 2: {:?}",
            other.map(|(id, _)| id)
        ),
    }

    let (win_a, pid_a) = fixture_in(&a).await;
    let (win_b, pid_b) = fixture_in(&b).await;
    // Each sees its own app only: its windows, and its bus's elements.
    for (live, pid) in [(&a, pid_a), (&b, pid_b)] {
        let windows = live.host().windows().await.expect("its windows");
        assert_eq!(
            windows.iter().map(|w| w.pid).collect::<Vec<_>>(),
            [Some(pid)]
        );
    }
    for (live, win) in [(&a, &win_a), (&b, &win_b)] {
        let tree = live
            .tree(win.handle)
            .await
            .expect("a tree over the session's bus");
        assert!(
            tree.find(Role::Button, "Press").next().is_some(),
            "{:#?}",
            tree.nodes
        );
    }
    let dir_a = a.host().session().runtime_dir.clone();
    assert!(dir_a.exists());

    // Ending one ends its app, its compositor and its files; the other serves on.
    assert!(sessions.end(&id_a).await);
    assert!(sessions.get(&id_a).is_none());
    assert!(!group_alive(pid_a), "the ended session's app is gone");
    assert!(a.host().windows().await.is_err(), "its compositor stopped");
    drop(a);
    assert!(!dir_a.exists(), "its directory is removed");
    assert!(
        !sessions.end(&id_a).await,
        "an ended session is not ended twice"
    );
    assert!(sessions.has_room());
    let tree = sessions
        .get(&id_b)
        .expect("the other session")
        .tree(win_b.handle)
        .await;
    assert!(
        tree.is_ok(),
        "the other session still reads: {:?}",
        tree.err()
    );
    assert!(group_alive(pid_b));

    sessions.end_all().await;
    assert!(!group_alive(pid_b));
}

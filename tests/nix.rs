//! The Nix files, as far as a machine without nixpkgs can check them: every one
//! parses, the NixOS module makes hardened units whose ExecStart `wayrig run` takes, bad
//! option values are refused, and the package links what Cargo.lock's -sys crates link.
//!
//! Evaluation uses Debian's nix-bin (`nix-instantiate`) and nixpkgs' own `lib` from
//! `../shared/vendor/nixpkgs-lib`; the VM test (nix/tests/drive-app.nix) needs a Nix
//! machine and does not run here.

mod support;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use serde_json::Value;

/// Every -sys crate Cargo.lock may hold, and the nixpkgs package it links on
/// Linux (None: it links nothing there, and why). A -sys crate missing here
/// fails the package test, so a new system library cannot go unnoticed.
const SYS_CRATES: &[(&str, Option<&str>, &str)] = &[
    ("pixman-sys", Some("pixman"), "links pixman-1"),
    (
        "wayland-sys",
        Some("wayland"),
        "libwayland-client and -egl (dlopen()ed here)",
    ),
    ("core-foundation-sys", None, "macOS only"),
    ("objc-sys", None, "macOS only"),
    ("jni-sys", None, "Android only"),
    ("ndk-sys", None, "Android only"),
    ("js-sys", None, "WebAssembly only"),
    ("web-sys", None, "WebAssembly only"),
    ("windows-sys", None, "Windows only"),
    ("linux-raw-sys", None, "raw system calls, no library"),
    (
        "renderdoc-sys",
        None,
        "the RenderDoc API's types; the library is looked up at run time",
    ),
];

/// Crates not named -sys that link a system library with #[link] of their own.
const LINKING_CRATES: &[(&str, &str)] = &[("xkbcommon", "libxkbcommon")];

/// The store path eval-module.nix gives the stand-in Wayrig package.
const FAKE_WAYRIG: &str = "/nix/store/00000000000000000000000000000000-wayrig-0.1.0/bin/wayrig";

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// nixpkgs' lib, vendored beside the repository (shared/ is copied there for CI).
fn nixpkgs_lib() -> PathBuf {
    let lib = repo().join("../shared/vendor/nixpkgs-lib/lib");
    assert!(
        lib.join("default.nix").is_file(),
        "{} is missing: the module and package checks evaluate with nixpkgs' lib from \
         ../shared/vendor/nixpkgs-lib",
        lib.display()
    );
    lib.canonicalize().unwrap()
}

/// One `nix-instantiate` at a time: on a fresh machine several at once
/// race to create Nix's store database ("database is busy").
static ONE_NIX: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// `nix-instantiate ARGS`; a missing Nix fails the test (CI installs it).
fn nix_instantiate(args: &[&str]) -> Output {
    let _one = ONE_NIX.lock().unwrap_or_else(|e| e.into_inner());
    match Command::new("nix-instantiate")
        .args(args)
        .current_dir(repo())
        .stdin(Stdio::null())
        .output()
    {
        Ok(out) => out,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => panic!(
            "nix-instantiate is not installed: run scripts/install-deps (it installs \
             Debian's nix-bin, which CI has)"
        ),
        Err(e) => panic!("cannot run nix-instantiate: {e}"),
    }
}

/// Evaluate FILE (relative to the repository) to JSON with nixpkgs' lib and
/// `--arg`s; Err with Nix's message when evaluation fails.
fn eval(file: &str, args: &[(&str, &str)]) -> Result<Value, String> {
    let lib = nixpkgs_lib();
    let mut argv = vec![
        "--eval",
        "--strict",
        "--json",
        "--arg",
        "nixpkgsLib",
        lib.to_str().unwrap(),
    ];
    for (name, value) in args {
        argv.extend(["--arg", name, value]);
    }
    argv.push(file);
    let out = nix_instantiate(&argv);
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).into_owned());
    }
    Ok(serde_json::from_slice(&out.stdout).expect("nix-instantiate prints JSON"))
}

fn eval_ok(file: &str, args: &[(&str, &str)]) -> Value {
    eval(file, args).unwrap_or_else(|e| panic!("{file} does not evaluate:\n{e}"))
}

/// The .nix files of the repository (not under target/ or hidden directories).
fn nix_files(dir: &Path, found: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if path.is_dir() {
            if name != "target" && !name.starts_with('.') {
                nix_files(&path, found);
            }
        } else if name.ends_with(".nix") {
            found.push(path);
        }
    }
}

/// The words of an Exec*= line as systemd makes them: specifiers (`%%` is
/// `%`) over the whole line, then words (double quotes, C escapes), then
/// variables in each word (`$$` is `$`). A specifier or variable that would
/// be expanded is an error: the module must leave nothing for systemd to fill.
fn systemd_exec_words(line: &str) -> Result<Vec<String>, String> {
    let mut unspecified = String::new();
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        if c == '%' {
            match chars.next() {
                Some('%') => unspecified.push('%'),
                other => return Err(format!("specifier %{other:?} in {line}")),
            }
        } else {
            unspecified.push(c);
        }
    }
    let mut words = Vec::new();
    let mut chars = unspecified.chars().peekable();
    loop {
        while chars.peek().is_some_and(|c| c.is_whitespace()) {
            chars.next();
        }
        if chars.peek().is_none() {
            break;
        }
        let mut word = String::new();
        let mut quoted = false;
        while let Some(c) = chars.next() {
            match c {
                '"' => quoted = !quoted,
                c if c.is_whitespace() && !quoted => break,
                '\\' => match chars.next() {
                    Some('\\') => word.push('\\'),
                    Some('"') => word.push('"'),
                    Some('\'') => word.push('\''),
                    Some('n') => word.push('\n'),
                    Some('t') => word.push('\t'),
                    Some('r') => word.push('\r'),
                    Some('s') => word.push(' '),
                    other => return Err(format!("escape \\{other:?} in {line}")),
                },
                c => word.push(c),
            }
        }
        if quoted {
            return Err(format!("unterminated quote in {line}"));
        }
        let mut unvaried = String::new();
        let mut chars = word.chars().peekable();
        while let Some(c) = chars.next() {
            if c == '$' {
                match chars.next() {
                    Some('$') => unvaried.push('$'),
                    other => return Err(format!("variable ${other:?} in {line}")),
                }
            } else {
                unvaried.push(c);
            }
        }
        words.push(unvaried);
    }
    Ok(words)
}

/// A unit setting that may be one value or a list of them, as strings.
fn values(setting: &Value) -> Vec<String> {
    match setting {
        Value::Array(items) => items.iter().flat_map(values).collect(),
        Value::String(s) => vec![s.clone()],
        Value::Null => vec![],
        other => vec![other.to_string()],
    }
}

/// The names of the packages in Cargo.lock, with their sources.
fn locked_packages() -> Vec<(String, String, Option<String>)> {
    let lock = std::fs::read_to_string(repo().join("Cargo.lock")).unwrap();
    let field = |block: &str, key: &str| {
        block.lines().find_map(|l| {
            l.strip_prefix(&format!("{key} = \""))
                .and_then(|rest| rest.strip_suffix('"'))
                .map(str::to_string)
        })
    };
    lock.split("[[package]]")
        .skip(1)
        .map(|block| {
            (
                field(block, "name").expect("a package has a name"),
                field(block, "version").expect("a package has a version"),
                field(block, "source"),
            )
        })
        .collect()
}

#[test]
fn every_nix_file_parses() {
    let mut files = Vec::new();
    nix_files(&repo(), &mut files);
    for expected in [
        "flake.nix",
        "nix/package.nix",
        "nix/module.nix",
        "nix/tests/drive-app.nix",
        "nix/tests/eval-module.nix",
        "nix/tests/eval-package.nix",
        "nix/tests/eval-flake.nix",
        "nix/tests/stand-ins.nix",
    ] {
        assert!(
            files.contains(&repo().join(expected)),
            "{expected} is missing"
        );
    }
    let failed: Vec<String> = files
        .iter()
        .filter_map(|file| {
            let out = nix_instantiate(&["--parse", file.to_str().unwrap()]);
            (!out.status.success()).then(|| {
                format!(
                    "{}:\n{}",
                    file.strip_prefix(repo()).unwrap().display(),
                    String::from_utf8_lossy(&out.stderr)
                )
            })
        })
        .collect();
    assert!(
        failed.is_empty(),
        "these .nix files do not parse:\n{}",
        failed.join("\n")
    );
}

#[test]
fn each_session_is_a_hardened_notify_unit_with_its_socket_in_its_runtime_directory() {
    let out = eval_ok("nix/tests/eval-module.nix", &[]);
    let units = out["units"].as_object().unwrap();
    let mut names: Vec<&String> = units.keys().collect();
    names.sort();
    assert_eq!(names, ["wayrig-calculator", "wayrig-factory"]);
    for (session, dynamic) in [("calculator", true), ("factory", false)] {
        let unit = &units[&format!("wayrig-{session}")];
        let service = &unit["serviceConfig"];
        let runtime = format!("/run/wayrig/{session}");
        for (key, want) in [
            ("Type", "notify"),
            ("NotifyAccess", "main"),
            ("ProtectSystem", "strict"),
            ("RestrictAddressFamilies", "AF_UNIX AF_INET AF_INET6"),
        ] {
            assert_eq!(service[key], want, "{session}: {key} in {service:#}");
        }
        for key in ["ProtectHome", "PrivateTmp", "NoNewPrivileges"] {
            assert_eq!(service[key], true, "{session}: {key} in {service:#}");
        }
        assert_eq!(
            values(&service["SystemCallFilter"]),
            ["@system-service"],
            "{session}"
        );
        assert_eq!(service["DynamicUser"], dynamic, "{session}");
        assert!(
            values(&service["RuntimeDirectory"]).contains(&format!("wayrig/{session}")),
            "{session}: {service:#}"
        );
        assert_eq!(unit["environment"]["XDG_RUNTIME_DIR"], runtime.as_str());
        assert!(values(&unit["wantedBy"]).contains(&"multi-user.target".to_string()));

        // ExecStart is exactly the session's argument vector once systemd
        // has read it: nothing expanded, nothing split or joined.
        let exec = service["ExecStart"].as_str().unwrap();
        let words = systemd_exec_words(exec).unwrap_or_else(|e| panic!("{session}: {e}"));
        let argv: Vec<String> = serde_json::from_value(out["argv"][session].clone()).unwrap();
        assert_eq!(words, argv, "{session}: ExecStart={exec}");
        assert_eq!(argv[..2], [FAKE_WAYRIG, "run"], "{session}");
    }

    // The user given runs the factory; the calculator has a dynamic one.
    let factory = &units["wayrig-factory"]["serviceConfig"];
    assert_eq!(factory["User"], "tester");
    assert!(units["wayrig-calculator"]["serviceConfig"]
        .get("User")
        .is_none());

    // The MyGo socket: in the RuntimeDirectory by default, else a place made
    // writable; cua's token is handed over as a credential.
    let argv = |session: &str| -> Vec<String> {
        serde_json::from_value(out["argv"][session].clone()).unwrap()
    };
    let calculator = argv("calculator");
    assert!(calculator.contains(&"--mygo-socket=/run/wayrig/calculator/mygo.sock".into()));
    assert!(argv("factory").contains(&"--mygo-socket=/run/wayrig-sockets/factory.sock".into()));
    assert_eq!(values(&factory["ReadWritePaths"]), ["-/run/wayrig-sockets"]);
    assert_eq!(
        values(&units["wayrig-calculator"]["serviceConfig"]["LoadCredential"]),
        ["cua-token:/etc/wayrig/cua-token"]
    );
    assert!(calculator
        .contains(&"--cua-token-file=/run/credentials/wayrig-calculator.service/cua-token".into()));
    // Quotes, `%` and `$` reach the app as configured; extra apps as JSON.
    assert!(
        calculator.contains(&"--env=GREETING=say \"hi\" to 100% of $USER\\n".into()),
        "{calculator:?}"
    );
    let launch = calculator
        .iter()
        .find_map(|a| a.strip_prefix("--launch="))
        .unwrap();
    assert_eq!(
        serde_json::from_str::<Vec<String>>(launch).unwrap(),
        ["foot", "--title", "top in \"foot\"", "-e", "top"]
    );
    assert_eq!(
        calculator[calculator.len() - 2..],
        ["--", "gnome-calculator"]
    );
    // Between them, the two sessions use every face.
    let both = [calculator, argv("factory")].concat();
    for flag in [
        "--mygo-socket=",
        "--bus-listen=",
        "--bus-connect=",
        "--bus-name=",
        "--cua-listen=",
        "--cua-token-file=",
        "--env=",
        "--launch=",
    ] {
        assert!(both.iter().any(|a| a.starts_with(flag)), "no {flag}");
    }
    assert_eq!(out["systemPackages"], serde_json::json!(["wayrig-0.1.0"]));
}

/// Run an ExecStart's words after `wayrig run` through `wayrig run
/// --check-args`, which parses them as `run` does and starts nothing.
fn assert_run_takes(unit: &str, exec: &str) {
    let words = systemd_exec_words(exec).unwrap_or_else(|e| panic!("{unit}: {e}"));
    assert_eq!(words[..2], [FAKE_WAYRIG, "run"], "{unit}");
    let checked = Command::new(support::shipped("wayrig"))
        .args(["run", "--check-args"])
        .args(&words[2..])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(
        checked.status.success(),
        "{unit}: `wayrig run` refuses its ExecStart ({exec}):\n{}",
        String::from_utf8_lossy(&checked.stderr)
    );
}

#[test]
fn every_exec_start_is_taken_by_wayrig_run() {
    let out = eval_ok("nix/tests/eval-module.nix", &[]);
    for (unit, config) in out["units"].as_object().unwrap() {
        assert_run_takes(unit, config["serviceConfig"]["ExecStart"].as_str().unwrap());
    }
}

#[test]
fn the_flake_exports_every_output_for_both_systems() {
    let out = eval_ok("nix/tests/eval-flake.nix", &[]);
    for system in ["x86_64-linux", "aarch64-linux"] {
        let outputs = &out["systems"][system];
        assert_eq!(outputs["packages"]["default"], "wayrig-0.1.0", "{system}");
        assert_eq!(outputs["packages"]["wayrig"], "wayrig-0.1.0", "{system}");
        let app = &outputs["apps"]["default"];
        assert_eq!(app["type"], "app", "{system}");
        assert!(app["program"]
            .as_str()
            .unwrap()
            .ends_with("-wayrig-0.1.0/bin/wayrig"));
        assert_eq!(
            outputs["checks"]["drive-app"],
            "vm-test-run-wayrig-drive-app"
        );
        assert_eq!(outputs["checks"]["package"], "wayrig-0.1.0");
        // The toolchain, the libraries, the test apps and the private bus.
        let shell = &outputs["devShell"];
        let packages = values(&shell["packages"]);
        for wanted in [
            "cargo",
            "rustc",
            "pkg-config",
            "gtk4",
            "foot",
            "dbus",
            "python3-env",
            "dbus-daemon-script",
            "at-spi2-core-for-wayrig",
        ] {
            assert!(packages.iter().any(|p| p == wanted), "{system}: {wanted}");
        }
        let inputs = values(&shell["buildInputs"]);
        for wanted in ["pixman", "wayland", "libxkbcommon"] {
            assert!(inputs.iter().any(|p| p == wanted), "{system}: {wanted}");
        }
    }
    assert_eq!(out["overlay"], "wayrig-0.1.0");
    assert_eq!(
        PathBuf::from(out["nixosModule"].as_str().unwrap()),
        repo().join("nix/module.nix")
    );

    // The VM test's hosted machine: its unit is one `wayrig run` takes, and
    // its faces are where the test script looks for them.
    let test = &out["vmTest"];
    assert_eq!(values(&test["nodes"]), ["desktop", "hosted"]);
    let unit = &test["hosted"]["units"]["wayrig-factory"];
    let exec = unit["serviceConfig"]["ExecStart"].as_str().unwrap();
    assert_run_takes("the VM test's wayrig-factory", exec);
    assert_eq!(unit["serviceConfig"]["Type"], "notify");
    let argv = values(&test["hosted"]["argv"]["factory"]);
    let script = std::fs::read_to_string(repo().join("nix/tests/drive-app.nix")).unwrap();
    let socket = argv
        .iter()
        .find_map(|a| a.strip_prefix("--mygo-socket="))
        .unwrap();
    assert!(
        script.contains(&format!("HOSTED_SOCKET = \"{socket}\"")),
        "the test script does not use {socket}"
    );
    let cua = argv
        .iter()
        .find_map(|a| a.strip_prefix("--cua-listen="))
        .unwrap();
    assert!(
        script.contains(&format!(" {cua} cua.env.v1.")),
        "grpcurl is not pointed at {cua}"
    );
}

#[test]
fn bad_option_values_are_refused_naming_the_option() {
    // The cases below differ from this one session in one value each.
    let good = "{ apps = [ [ \"foot\" ] ]; }";
    let session = |extra: &str| format!("{{ bad = {{ apps = [ [ \"foot\" ] ]; {extra} }}; }}");
    let out = eval_ok(
        "nix/tests/eval-module.nix",
        &[("sessions", &format!("{{ bad = {good}; }}"))],
    );
    assert!(out["units"]["wayrig-bad"].is_object(), "{out}");

    let option = "services.wayrig.sessions.bad";
    for (extra, named) in [
        ("size = \"big\";", format!("{option}.size")),
        ("size = \"1280x0\";", format!("{option}.size")),
        ("pacing = \"slow\";", format!("{option}.pacing")),
        ("scale = 0;", format!("{option}.scale")),
        ("scale = -1.5;", format!("{option}.scale")),
        (
            "mygo.socket = \"relative.sock\";",
            format!("{option}.mygo.socket"),
        ),
        ("bus.listen = \"7820\";", format!("{option}.bus.listen")),
        (
            "bus.connect = \"http://example/ws\";",
            format!("{option}.bus.connect"),
        ),
        ("environment.N = 1;", format!("{option}.environment.N")),
        (
            "bus.listen = \"127.0.0.1:7820\"; bus.connect = \"ws://127.0.0.1:7821/ws\";",
            format!("{option}.bus.listen and {option}.bus.connect are mutually exclusive"),
        ),
        (
            "cua.tokenFile = \"/etc/token\";",
            format!("{option}.cua.tokenFile is set but {option}.cua.listen is not"),
        ),
    ] {
        let sessions = session(extra);
        match eval("nix/tests/eval-module.nix", &[("sessions", &sessions)]) {
            Ok(out) => panic!("{extra} was accepted: {out}"),
            Err(e) => assert!(
                e.contains(&named),
                "{extra}: the error names no {named}:\n{e}"
            ),
        }
    }
    // No app, and an app with no program.
    for apps in ["[ ]", "[ [ ] ]"] {
        let sessions = format!("{{ bad = {{ apps = {apps}; }}; }}");
        match eval("nix/tests/eval-module.nix", &[("sessions", &sessions)]) {
            Ok(out) => panic!("apps = {apps} was accepted: {out}"),
            Err(e) => assert!(e.contains(&format!("{option}.apps")), "{apps}:\n{e}"),
        }
    }
    // A session's name becomes a unit's and a directory's.
    let sessions = format!("{{ \"../etc\" = {good}; }}");
    let e = eval("nix/tests/eval-module.nix", &[("sessions", &sessions)]).unwrap_err();
    assert!(
        e.contains("services.wayrig.sessions.../etc: a session's name"),
        "{e}"
    );
}

#[test]
fn the_package_builds_the_workspace_lock_and_links_every_sys_crate_library() {
    let out = eval_ok("nix/tests/eval-package.nix", &[]);

    // The workspace's own lock file, with a hash for every git source.
    let lock = PathBuf::from(out["cargoLock"]["lockFile"].as_str().unwrap());
    assert_eq!(
        lock.canonicalize().unwrap(),
        repo().join("Cargo.lock").canonicalize().unwrap()
    );
    let packages = locked_packages();
    for (name, version, source) in &packages {
        if source.as_deref().is_some_and(|s| s.starts_with("git+")) {
            assert!(
                out["cargoLock"]["outputHashes"]
                    .get(format!("{name}-{version}"))
                    .is_some(),
                "{name} {version} comes from git: cargoLock.outputHashes needs its hash"
            );
        }
    }

    // Every system library a locked crate links on Linux is a build input.
    let build_inputs: Vec<String> = serde_json::from_value(out["buildInputs"].clone()).unwrap();
    let mut needed = Vec::new();
    for (name, _, _) in packages.iter().filter(|(n, _, _)| n.ends_with("-sys")) {
        let Some((_, library, _)) = SYS_CRATES.iter().find(|(crate_, _, _)| crate_ == name) else {
            panic!(
                "Cargo.lock has {name}, which SYS_CRATES in tests/nix.rs does not know: add \
                 the nixpkgs package it links on Linux (and to nix/package.nix's buildInputs), \
                 or None and why it links nothing"
            );
        };
        needed.extend(library.map(str::to_string));
    }
    for (crate_, library) in LINKING_CRATES {
        if packages.iter().any(|(n, _, _)| n == crate_) {
            needed.push(library.to_string());
        }
    }
    for library in ["pixman", "wayland", "libxkbcommon"] {
        assert!(needed.iter().any(|n| n == library), "{library} is needed");
    }
    for library in &needed {
        assert!(
            build_inputs.contains(library),
            "{library} is not among buildInputs {build_inputs:?}"
        );
    }
    let native: Vec<String> = serde_json::from_value(out["nativeBuildInputs"].clone()).unwrap();
    for tool in ["pkg-config", "makeWrapper"] {
        assert!(native.iter().any(|n| n == tool), "{tool} in {native:?}");
    }

    // Only `wayrig` is built; the tests need a display and run in the VM test.
    assert_eq!(
        out["cargoBuildFlags"],
        serde_json::json!(["--package", "wayrig", "--bin", "wayrig"])
    );
    assert_eq!(out["doCheck"], false);
    assert_eq!(out["meta"]["mainProgram"], "wayrig");
    assert_eq!(
        out["meta"]["platforms"],
        serde_json::json!(["aarch64-linux", "x86_64-linux"])
    );

    // The source holds every workspace member and what the root manifest names.
    let roots: Vec<PathBuf> = out["src"]["fileset"]["unions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| PathBuf::from(p.as_str().unwrap()))
        .collect();
    let manifest = std::fs::read_to_string(repo().join("Cargo.toml")).unwrap();
    let members = manifest
        .lines()
        .find_map(|l| l.strip_prefix("members = "))
        .expect("the workspace's members");
    let mut wanted: Vec<&str> = members
        .trim_matches(['[', ']'])
        .split(',')
        .map(|m| m.trim().trim_matches('"'))
        .collect();
    wanted.extend([
        "Cargo.toml",
        "Cargo.lock",
        "src",
        "benches",
        "docs/SKILL.md",
    ]);
    for path in wanted {
        let path = repo().join(path);
        assert!(
            roots.iter().any(|root| path.starts_with(root)),
            "{} is not in the package's source {roots:?}",
            path.display()
        );
    }

    // What the binary runs is wrapped onto it: the private bus (dbus-daemon
    // reading the package's own session.conf), the AT-SPI bus launcher (built
    // to start this dbus), the XKB data, and the nested mode's libraries.
    let path = |name: &str| out["paths"][name].as_str().unwrap().to_string();
    let fixup = out["postFixup"].as_str().unwrap();
    let session_bus = out["dbusSession"]["path"].as_str().unwrap();
    let at_spi = out["atSpi"]["path"].as_str().unwrap();
    for wanted in [
        "wrapProgram $out/bin/wayrig".to_string(),
        format!("--prefix PATH : {session_bus}/bin:{}/bin", path("dbus")),
        format!("--prefix XDG_DATA_DIRS : {at_spi}/share"),
        format!(
            "--set-default XKB_CONFIG_ROOT {}/share/X11/xkb",
            path("xkeyboard-config")
        ),
    ] {
        assert!(
            fixup.contains(&wanted),
            "no {wanted:?} in postFixup:\n{fixup}"
        );
    }
    let rpath = fixup
        .lines()
        .find_map(|l| l.strip_prefix("patchelf --add-rpath "))
        .expect("patchelf --add-rpath in postFixup");
    for library in ["wayland", "libxkbcommon", "libGL", "libx11"] {
        assert!(
            rpath.contains(&format!("{}/lib", path(library))),
            "{library}: {rpath}"
        );
    }
    let daemon_flags: Vec<&Value> = out["atSpi"]["mesonFlags"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f.as_str().unwrap().starts_with("-Ddbus_daemon="))
        .collect();
    assert_eq!(
        daemon_flags,
        [&Value::String(format!(
            "-Ddbus_daemon={}/bin/dbus-daemon",
            path("dbus")
        ))]
    );
}

/// The package's `dbus-daemon` stand-in, run here against Debian's dbus: it
/// takes the arguments Wayrig's private bus gives dbus-daemon and the bus
/// starts, with the session configuration given as a file.
#[test]
fn the_packaged_session_bus_starts_with_the_arguments_wayrig_gives_it() {
    let out = eval_ok("nix/tests/eval-package.nix", &[]);
    let dbus = out["paths"]["dbus"].as_str().unwrap();
    let (debian_daemon, debian_conf) = ("/usr/bin/dbus-daemon", "/usr/share/dbus-1/session.conf");
    assert!(
        Path::new(debian_daemon).is_file() && Path::new(debian_conf).is_file(),
        "dbus is not installed: run scripts/install-deps"
    );
    let script = out["dbusSession"]["text"]
        .as_str()
        .unwrap()
        .replace(&format!("{dbus}/share/dbus-1/session.conf"), debian_conf)
        .replace(&format!("{dbus}/bin/dbus-daemon"), debian_daemon);
    assert!(!script.contains("/nix/store"), "{script}");

    let dir = std::env::temp_dir().join(format!("wayrig-nix-bus-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let shim = dir.join("dbus-daemon");
    std::fs::write(&shim, format!("#!/bin/bash\n{script}")).unwrap();
    let address = format!("unix:path={}", dir.join("bus").display());
    // As services/src/bus.rs starts it.
    let mut daemon = Command::new("bash")
        .arg(&shim)
        .args(["--session", "--nofork", "--nopidfile", "--print-address=1"])
        .arg(format!("--address={address}"))
        .env_remove("DBUS_SESSION_BUS_ADDRESS")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = daemon.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = BufReader::new(stdout).read_line(&mut line);
        let _ = tx.send(line);
    });
    let said = rx.recv_timeout(Duration::from_secs(10));
    let _ = daemon.kill();
    let ended = daemon.wait_with_output().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    let said = said.unwrap_or_else(|_| {
        panic!(
            "the bus gave no address:\n{}",
            String::from_utf8_lossy(&ended.stderr)
        )
    });
    assert!(
        said.starts_with(&address),
        "{said:?}\n{}",
        String::from_utf8_lossy(&ended.stderr)
    );
}

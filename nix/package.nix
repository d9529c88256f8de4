# The `wayrig` binary, built from this workspace, with what it runs at run
# time (the private D-Bus and AT-SPI buses, the XKB data) wrapped onto it, so
# `nix run` works on any Nix machine, NixOS or not.
#
# Called with callPackage (the flake's overlay does). The X11 and XKB inputs
# take nixpkgs' current lower-case names and fall back to the `xorg` set of
# older releases.
{
  lib,
  rustPlatform,
  pkg-config,
  makeWrapper,
  writeShellScriptBin,
  # Linked: the -sys crates in Cargo.lock (pixman-sys, wayland-sys), the
  # xkbcommon crate's own #[link], and libvpx (recordings' video, through
  # wayrig-record's C shim).
  pixman,
  wayland,
  libxkbcommon,
  libvpx,
  # Run time: the session's private bus and the AT-SPI bus it activates.
  dbus,
  at-spi2-core,
  # Loaded with dlopen by `--nested` only (winit and smithay's EGL): Wayland,
  # X11 and EGL client libraries.
  libGL,
  xorg ? { },
  libx11 ? xorg.libX11,
  libxcursor ? xorg.libXcursor,
  libxi ? xorg.libXi,
  libxrandr ? xorg.libXrandr,
  libxcb ? xorg.libxcb,
  xkeyboard-config ? xorg.xkeyboardconfig,
}:

let
  cargoToml = lib.importTOML ../Cargo.toml;

  # nixpkgs builds at-spi-bus-launcher to start the accessibility bus with
  # /run/current-system/sw/bin/dbus-daemon, which only NixOS has: point it at
  # the dbus in this closure instead.
  atSpi = at-spi2-core.overrideAttrs (old: {
    mesonFlags =
      builtins.filter (flag: !(lib.hasPrefix "-Ddbus_daemon=" flag)) (old.mesonFlags or [ ])
      ++ [ "-Ddbus_daemon=${dbus}/bin/dbus-daemon" ];
  });

  # `dbus-daemon --session` reads /etc/dbus-1/session.conf in nixpkgs' dbus
  # (its datadir is /etc, which only NixOS fills): Wayrig's private bus is
  # started with the package's own session.conf instead, on every machine.
  dbusSession = writeShellScriptBin "dbus-daemon" ''
    args=()
    for arg in "$@"; do
      if [ "$arg" = --session ]; then
        arg=--config-file=${dbus}/share/dbus-1/session.conf
      fi
      args+=("$arg")
    done
    exec ${dbus}/bin/dbus-daemon "''${args[@]}"
  '';

  # dlopen()ed by the nested mode; put on the binary's RUNPATH rather than on
  # LD_LIBRARY_PATH, which the hosted apps would inherit.
  dlopenLibraries = [
    wayland
    libxkbcommon
    libGL
    libx11
    libxcursor
    libxi
    libxrandr
    libxcb
  ];
in
rustPlatform.buildRustPackage {
  pname = "wayrig";
  version = cargoToml.workspace.package.version;

  # The workspace's manifests and sources only: editing the README, the
  # scripts or nix/ does not rebuild. Every member, bench and test target
  # named in a Cargo.toml must be here, or cargo refuses the manifest.
  src = lib.fileset.toSource {
    root = ../.;
    fileset = lib.fileset.unions [
      ../Cargo.toml
      ../Cargo.lock
      ../src
      ../docs
      ../host
      ../record
      ../model
      ../agent
      ../keys
      ../desktop
      ../portal
      ../compositor
      ../services
      ../sessions
      ../proto
      ../tests
      ../benches
    ];
  };

  # Every dependency comes from crates.io (no git sources), so no
  # outputHashes are needed.
  cargoLock.lockFile = ../Cargo.lock;

  # Only the `wayrig` binary ships: not mygo-automation (the same commands
  # under the agent tool's name), the test client or the egui fixture.
  cargoBuildFlags = [
    "--package"
    "wayrig"
    "--bin"
    "wayrig"
  ];

  nativeBuildInputs = [
    pkg-config
    makeWrapper
  ];

  buildInputs = [
    pixman
    wayland
    libxkbcommon
    libvpx
  ];

  # The tests are end-to-end: they host real GTK, Qt and egui apps under the
  # compositor, with a session bus and AT-SPI, and the nested mode needs an X
  # server. None of that exists in the build sandbox; the flake's VM test
  # (nix/tests/drive-app.nix, in `checks`) runs Wayrig against real apps.
  doCheck = false;

  # After the fixup phase has shrunk the RUNPATH to what the binary links.
  # XDG_DATA_DIRS gets GLib's default when unset, so the session bus still
  # finds the host's services beside org.a11y.Bus.
  postFixup = ''
    patchelf --add-rpath ${lib.makeLibraryPath dlopenLibraries} $out/bin/wayrig
    wrapProgram $out/bin/wayrig \
      --prefix PATH : ${lib.makeBinPath [ dbusSession dbus ]} \
      --set-default XDG_DATA_DIRS /usr/local/share:/usr/share \
      --prefix XDG_DATA_DIRS : ${atSpi}/share \
      --set-default XKB_CONFIG_ROOT ${xkeyboard-config}/share/X11/xkb
  '';

  # The run-time pieces on their own, for the flake's dev shell.
  passthru = {
    at-spi2-core = atSpi;
    dbus-session = dbusSession;
    inherit dlopenLibraries;
    xkbConfigRoot = "${xkeyboard-config}/share/X11/xkb";
  };

  meta = {
    description = cargoToml.package.description;
    license = lib.licenses.mit;
    mainProgram = "wayrig";
    platforms = lib.platforms.linux;
  };
}

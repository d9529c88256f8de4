# Evaluates nix/module.nix with nixpkgs' own module system (lib.evalModules)
# and stand-ins for the NixOS options it sets, and gives what it made as JSON:
#
#   nix-instantiate --eval --strict --json --arg nixpkgsLib PATH nix/tests/eval-module.nix
#
# `sessions` replaces the configuration below (two sessions, every face), as
# the tests of bad values do. Failed assertions throw, as a NixOS build does.
# tests/nix.rs runs it; nothing here needs nixpkgs' package set.
{
  nixpkgsLib ? ../../../shared/vendor/nixpkgs-lib/lib,
  sessions ? null,
}:

let
  standIns = import ./stand-ins.nix { inherit nixpkgsLib; };
  inherit (standIns) lib;

  everyFace = {
    calculator = {
      apps = [
        [ "gnome-calculator" ]
        [
          "foot"
          "--title"
          "top in \"foot\""
          "-e"
          "top"
        ]
      ];
      size = "1024x768";
      scale = 1.25;
      pacing = "fast";
      bus.listen = "127.0.0.1:7820";
      bus.name = "calc";
      cua.listen = "127.0.0.1:3211";
      cua.tokenFile = "/etc/wayrig/cua-token";
      environment = {
        GSK_RENDERER = "cairo";
        # Quotes, a specifier and a variable reach the app as written.
        GREETING = "say \"hi\" to 100% of $USER\\n";
      };
    };
    factory = {
      apps = [ [ "gtk4-widget-factory" ] ];
      scale = 2;
      pacing = "step";
      mygo.socket = "/run/wayrig-sockets/factory.sock";
      bus.connect = "ws://127.0.0.1:7821/ws";
      cua.listen = "unix:/run/wayrig/factory/cua.sock";
      extraArgs = [
        "--decorations"
        "server"
      ];
      user = "tester";
    };
  };

  config = standIns.evalNixos [
    ../module.nix
    {
      services.wayrig.sessions = if sessions == null then everyFace else sessions;
    }
  ];
in
{
  units = config.systemd.services;
  argv = lib.mapAttrs (_: session: session.argv) config.services.wayrig.sessions;
  systemPackages = map (p: p.name) config.environment.systemPackages;
}

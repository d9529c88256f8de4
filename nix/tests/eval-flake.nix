# Evaluates flake.nix's outputs with a stand-in nixpkgs input (its `lib` and,
# for each system, the package set of nix/tests/stand-ins.nix), and the VM
# test's `hosted` machine as far as the module configures it; gives JSON:
#
#   nix-instantiate --eval --strict --json --arg nixpkgsLib PATH nix/tests/eval-flake.nix
#
# Without nixpkgs this cannot check that its attribute names exist there;
# it checks that the flake exports what it should for both systems and that
# its pieces fit together. tests/nix.rs runs it.
{
  nixpkgsLib ? ../../../shared/vendor/nixpkgs-lib/lib,
}:

let
  standIns = import ./stand-ins.nix { inherit nixpkgsLib; };
  inherit (standIns) lib pkgs;

  systems = [
    "x86_64-linux"
    "aarch64-linux"
  ];
  nixpkgs = {
    inherit lib;
    legacyPackages = lib.genAttrs systems (_: pkgs);
  };
  outputs = (import ../../flake.nix).outputs {
    self = outputs;
    inherit nixpkgs;
  };

  names = map (p: p.name);
  perSystem = system: {
    packages = lib.mapAttrs (_: p: p.name) outputs.packages.${system};
    apps = lib.mapAttrs (_: app: {
      inherit (app) type program;
    }) outputs.apps.${system};
    devShell =
      let
        shell = outputs.devShells.${system}.default.args;
      in
      {
        packages = names shell.packages;
        buildInputs = names shell.buildInputs;
        inherit (shell) LD_LIBRARY_PATH shellHook;
      };
    checks = lib.mapAttrs (_: check: check.name) outputs.checks.${system};
  };

  # The machine the VM test drives Wayrig on, with the options NixOS would
  # have declared beyond the module's stand-ins taken as they come.
  vmTest = outputs.checks.x86_64-linux.drive-app.args;
  hosted = standIns.evalNixos [
    vmTest.nodes.hosted
    { _module.freeformType = lib.types.attrsOf lib.types.anything; }
  ];
in
{
  systems = lib.genAttrs systems perSystem;
  overlay = (outputs.overlays.default pkgs pkgs).wayrig.name;
  nixosModule = toString outputs.nixosModules.default;
  vmTest = {
    inherit (vmTest) name;
    nodes = builtins.attrNames vmTest.nodes;
    hosted = {
      units = hosted.systemd.services;
      argv = lib.mapAttrs (_: session: session.argv) hosted.services.wayrig.sessions;
    };
  };
}

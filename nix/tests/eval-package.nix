# Calls nix/package.nix as callPackage would, with stand-ins for nixpkgs'
# packages and for rustPlatform.buildRustPackage that record what they are
# given (nix/tests/stand-ins.nix), and gives the recorded call as JSON:
#
#   nix-instantiate --eval --strict --json --arg nixpkgsLib PATH nix/tests/eval-package.nix
#
# Each stand-in package is named after the argument it is passed as, so the
# JSON's inputs read as nixpkgs attribute names. tests/nix.rs runs it.
{
  nixpkgsLib ? ../../../shared/vendor/nixpkgs-lib/lib,
}:

let
  standIns = import ./stand-ins.nix { inherit nixpkgsLib; };
  inherit (standIns) lib pkgs;

  package = pkgs.callPackage ../package.nix { };
  args = package.args;
  names = map (input: input.pname);
in
{
  inherit (package) name;
  inherit (args)
    pname
    version
    doCheck
    cargoBuildFlags
    postFixup
    ;
  cargoLock = {
    lockFile = toString args.cargoLock.lockFile;
    outputHashes = args.cargoLock.outputHashes or { };
  };
  src = args.src;
  buildInputs = names args.buildInputs;
  nativeBuildInputs = names args.nativeBuildInputs;
  # Store paths of the stand-ins, to find in the wrapper's arguments.
  paths = lib.mapAttrs (_: p: p.outPath) (
    lib.filterAttrs (_: p: lib.isDerivation p) pkgs
  );
  dbusSession = {
    path = package.passthru.dbus-session.outPath;
    text = package.passthru.dbus-session.text;
  };
  atSpi = {
    path = package.passthru.at-spi2-core.outPath;
    mesonFlags = package.passthru.at-spi2-core.mesonFlags;
  };
  meta = {
    inherit (args.meta) mainProgram;
    platforms = builtins.filter (p: p == "x86_64-linux" || p == "aarch64-linux") args.meta.platforms;
  };
}

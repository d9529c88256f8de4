# Stand-ins for what nixpkgs and NixOS give the Nix files, for evaluating them
# on a machine that has nixpkgs' lib but not its package set:
#
# - `lib`: nixpkgs' own, except that lib.fileset records the file set rather
#   than copying it into the store (which also needs a newer Nix than
#   Debian's nix-bin);
# - `pkgs`: packages that are attribute sets named after their nixpkgs
#   attribute, with fake store paths; builders (buildRustPackage, mkShell,
#   runNixOSTest, ...) record the arguments they are given as `args`;
# - `nixosOptions`: declarations of the NixOS options the module sets, typed
#   about as NixOS types them.
{ nixpkgsLib }:

let
  realLib = import nixpkgsLib;

  lib = realLib // {
    fileset = realLib.fileset // {
      unions = paths: { unions = map toString paths; };
      toSource =
        { root, fileset }:
        {
          root = toString root;
          inherit fileset;
        };
    };
  };

  storePath = name: "/nix/store/00000000000000000000000000000000-${name}";

  # A derivation as far as the module system and string interpolation can
  # tell, with its attributes (`dev`, `out`, `name`, ...).
  fakePackage =
    name: attrs:
    let
      self = {
        type = "derivation";
        inherit name;
        pname = name;
        outPath = storePath name;
        out = self;
        dev = self // {
          outPath = storePath "${name}-dev";
        };
      }
      // attrs;
    in
    self;

  # What callPackage does: pass the arguments the function names that exist.
  callPackageWith =
    scope: fn: overrides:
    let
      f = if builtins.isFunction fn then fn else import fn;
      given = builtins.intersectAttrs (builtins.functionArgs f) scope // overrides;
      missing = builtins.filter (name: !(given ? ${name})) (
        builtins.attrNames (lib.filterAttrs (_: hasDefault: !hasDefault) (builtins.functionArgs f))
      );
    in
    if missing == [ ] then
      f given
    else
      throw "callPackage: the stand-ins lack ${toString missing}";

  plain = lib.genAttrs [
    "pkg-config"
    "makeWrapper"
    "pixman"
    "wayland"
    "libxkbcommon"
    "libvpx"
    "dbus"
    "libGL"
    "libx11"
    "libxcursor"
    "libxi"
    "libxrandr"
    "libxcb"
    "xkeyboard-config"
    "cargo"
    "rustc"
    "clippy"
    "rustfmt"
    "foot"
    "socat"
    "grpcurl"
    "gobject-introspection"
    "gsettings-desktop-schemas"
    "gtk4"
  ] (name: fakePackage name { });

  # nixpkgs' at-spi2-core points its bus launcher at NixOS's dbus-daemon.
  at-spi2-core = fakePackage "at-spi2-core" {
    mesonFlags = [
      "-Ddbus_daemon=/run/current-system/sw/bin/dbus-daemon"
      "-Ddbus_broker=/run/current-system/sw/bin/dbus-broker-launch"
    ];
    overrideAttrs = f: fakePackage "at-spi2-core-for-wayrig" (f at-spi2-core);
  };

  pkgs =
    plain
    // {
      inherit lib at-spi2-core;
      callPackage = callPackageWith pkgs;
      rustPlatform.buildRustPackage =
        args:
        fakePackage "${args.pname}-${args.version}" (
          {
            inherit args;
            meta = args.meta or { };
            passthru = args.passthru or { };
          }
          // args.passthru or { }
        );
      writeShellScriptBin = name: text: fakePackage "${name}-script" { inherit text; };
      writeScriptBin = name: text: fakePackage name { inherit text; };
      mkShell = args: fakePackage "shell" { inherit args; };
      python3 = fakePackage "python3" {
        interpreter = "${storePath "python3"}/bin/python3";
        withPackages =
          f:
          fakePackage "python3-env" {
            packages = f {
              pygobject3 = fakePackage "pygobject3" { };
            };
          };
      };
      testers.runNixOSTest = args: fakePackage "vm-test-run-${args.name}" { inherit args; };
    };

  unitValue = lib.types.oneOf [
    lib.types.bool
    lib.types.int
    lib.types.str
  ];
  nixosOptions =
    let
      inherit (lib) mkOption types;
    in
    {
      options = {
        assertions = mkOption {
          type = types.listOf (
            types.submodule {
              options.assertion = mkOption { type = types.bool; };
              options.message = mkOption { type = types.str; };
            }
          );
          default = [ ];
        };
        environment.systemPackages = mkOption {
          type = types.listOf types.package;
          default = [ ];
        };
        systemd.services = mkOption {
          default = { };
          type = types.attrsOf (
            types.submodule {
              options = {
                description = mkOption {
                  type = types.str;
                  default = "";
                };
                wantedBy = mkOption {
                  type = types.listOf types.str;
                  default = [ ];
                };
                after = mkOption {
                  type = types.listOf types.str;
                  default = [ ];
                };
                environment = mkOption {
                  type = types.attrsOf types.str;
                  default = { };
                };
                serviceConfig = mkOption {
                  type = types.attrsOf (types.either unitValue (types.listOf unitValue));
                  default = { };
                };
              };
            }
          );
        };
      };
    };

  # Evaluate NixOS modules with the stand-ins; failed assertions throw, as
  # a NixOS build does.
  evalNixos =
    modules:
    let
      config =
        (lib.evalModules {
          modules = modules ++ [
            nixosOptions
            { _module.args.pkgs = pkgs; }
          ];
        }).config;
      failed = builtins.filter (a: !a.assertion) config.assertions;
    in
    if failed == [ ] then
      config
    else
      throw "Failed assertions:\n${lib.concatMapStrings (a: "- ${a.message}\n") failed}";
in
{
  inherit
    lib
    storePath
    fakePackage
    pkgs
    nixosOptions
    evalNixos
    ;
}

{
  description = "Wayrig: a Wayland compositor built to be driven: host GUI apps and automate them";

  inputs.nixpkgs.url = "github:NixOS/nixpkgs/nixos-unstable";

  outputs =
    { self, nixpkgs }:
    let
      inherit (nixpkgs) lib;
      systems = [
        "x86_64-linux"
        "aarch64-linux"
      ];
      eachSystem = f: lib.genAttrs systems (system: f system nixpkgs.legacyPackages.${system});
    in
    {
      overlays.default = final: _prev: {
        wayrig = final.callPackage ./nix/package.nix { };
      };

      packages = eachSystem (
        _system: pkgs: rec {
          wayrig = pkgs.callPackage ./nix/package.nix { };
          default = wayrig;
        }
      );

      apps = eachSystem (
        system: _pkgs: {
          default = {
            type = "app";
            program = lib.getExe self.packages.${system}.wayrig;
            meta.description = "Host GUI apps in Wayrig and drive them";
          };
        }
      );

      # Sessions build Wayrig with the machine's own nixpkgs (pkgs.wayrig
      # when the overlay is applied, else nix/package.nix).
      nixosModules.default = ./nix/module.nix;

      devShells = eachSystem (
        system: pkgs:
        let
          wayrig = self.packages.${system}.wayrig;
        in
        {
          default = pkgs.mkShell {
            packages = with pkgs; [
              cargo
              rustc
              clippy
              rustfmt
              pkg-config
              # The apps the tests host: gtk4-demo and gtk4-widget-factory
              # are in gtk4's dev output.
              gtk4.dev
              foot
              socat
              (python3.withPackages (ps: [ ps.pygobject3 ]))
              gobject-introspection
              # The private bus: dbus-daemon reading the package's own
              # session.conf, and AT-SPI's launcher pointed at this dbus.
              wayrig.passthru.dbus-session
              dbus
              wayrig.passthru.at-spi2-core
            ];
            # Linked by the -sys crates; gtk4 also gives the fixtures their
            # typelibs (GI_TYPELIB_PATH, through gobject-introspection's hook).
            buildInputs = with pkgs; [
              pixman
              wayland
              libxkbcommon
              libvpx
              gtk4
            ];
            # What the nested mode and the egui fixture load with dlopen.
            LD_LIBRARY_PATH = lib.makeLibraryPath wayrig.passthru.dlopenLibraries;
            GSK_RENDERER = "cairo";
            shellHook = ''
              export XDG_DATA_DIRS=${wayrig.passthru.at-spi2-core}/share:${pkgs.gsettings-desktop-schemas}/share/gsettings-schemas/${pkgs.gsettings-desktop-schemas.name}:${pkgs.gtk4}/share/gsettings-schemas/${pkgs.gtk4.name}''${XDG_DATA_DIRS:+:$XDG_DATA_DIRS}
              export XKB_CONFIG_ROOT=''${XKB_CONFIG_ROOT:-${wayrig.passthru.xkbConfigRoot}}
            '';
          };
        }
      );

      checks = eachSystem (
        system: pkgs: {
          package = self.packages.${system}.wayrig;
          drive-app = import ./nix/tests/drive-app.nix {
            inherit pkgs;
            wayrig = self.packages.${system}.wayrig;
          };
        }
      );
    };
}

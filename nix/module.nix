# NixOS module: `services.wayrig.sessions.<name>`, each a hardened systemd
# service running `wayrig run` with its apps and automation faces.
#
# A session's unit is `wayrig-<name>.service`, ready (Type=notify) once its
# faces listen and its first window is mapped, so `wait_for_unit` in a NixOS
# test means "ready to drive". Its files (the MyGo socket by default) are in
# /run/wayrig/<name>, its RuntimeDirectory.
{
  config,
  lib,
  pkgs,
  ...
}:

let
  inherit (lib) mkOption types;

  cfg = config.services.wayrig;

  # One argument of an Exec*= line, as systemd.service(5) reads it: within
  # double quotes, C-style backslash escapes; `%` starts a specifier and `$` a
  # variable anywhere, so both are doubled. Nothing is left for a shell.
  escapeExecArg =
    arg:
    let
      quoted =
        lib.replaceStrings
          [ "\\" "\"" "\n" "\t" "\r" ]
          [ "\\\\" "\\\"" "\\n" "\\t" "\\r" ]
          (toString arg);
    in
    "\"" + lib.replaceStrings [ "%" "$" ] [ "%%" "$$" ] quoted + "\"";
  escapeExecArgs = args: lib.concatMapStringsSep " " escapeExecArg args;

  runtimeDir = name: "/run/wayrig/${name}";
  unitName = name: "wayrig-${name}";
  # systemd hands LoadCredential= files to the service here, readable by its
  # (dynamic) user whoever owns the original.
  credential = name: file: "/run/credentials/${unitName name}.service/${file}";

  # The socket a session's MyGo face listens on, or null.
  mygoSocket =
    name: session:
    let
      socket = session.mygo.socket;
    in
    if socket == true then
      "${runtimeDir name}/mygo.sock"
    else if socket == false then
      null
    else
      toString socket;

  # Directories outside the RuntimeDirectory a face binds a socket in: the
  # rest of the file system is read-only to the service.
  socketDirs =
    name: session:
    let
      mygo = mygoSocket name session;
      cua = session.cua.listen;
      paths =
        lib.optional (mygo != null) mygo
        ++ lib.optional (cua != null && lib.hasPrefix "unix:" cua) (lib.removePrefix "unix:" cua);
    in
    lib.unique (
      map dirOf (builtins.filter (path: !(lib.hasPrefix "${runtimeDir name}/" path)) paths)
    );

  sessionModule =
    { name, config, ... }:
    {
      options = {
        enable = mkOption {
          type = types.bool;
          default = true;
          description = "Whether to run this session (set to false to keep its definition without running it).";
        };

        package = mkOption {
          type = types.package;
          default = cfg.package;
          defaultText = lib.literalExpression "config.services.wayrig.package";
          description = "The Wayrig package this session runs.";
        };

        apps = mkOption {
          type = types.nonEmptyListOf (types.nonEmptyListOf types.str);
          example = [
            [ "gtk4-widget-factory" ]
            [
              "foot"
              "-e"
              "top"
            ]
          ];
          description = ''
            The apps to host, each an argument vector run without a shell. The
            first is started with the session (its first window mapped is
            what readiness waits for); the others once it has started.
            Programs are looked up on the unit's PATH, which NixOS keeps
            short: name them by store path (`"''${pkgs.foot}/bin/foot"`) or
            add their packages to `systemd.services.wayrig-<name>.path`.
          '';
        };

        size = mkOption {
          type = types.strMatching "[1-9][0-9]*x[1-9][0-9]*";
          default = "1280x800";
          description = "Output size in logical points, WIDTHxHEIGHT.";
        };

        scale = mkOption {
          type = types.numbers.positive;
          default = 1;
          example = 1.25;
          description = "Device pixels per logical point.";
        };

        pacing = mkOption {
          type = types.enum [
            "realtime"
            "fast"
            "step"
          ];
          default = "realtime";
          description = "Frame pacing: a virtual 60 Hz output, frames answered at once, or frames only when asked.";
        };

        mygo.socket = mkOption {
          type = types.either types.bool types.path;
          default = true;
          description = ''
            Serve the MyGo automation protocol (and the agent CLI,
            `wayrig open --socket PATH`) on a Unix socket of mode 0600: `true`
            for `/run/wayrig/<name>/mygo.sock`, a path for another place
            (its directory must exist), `false` for none.
          '';
        };

        bus = {
          listen = mkOption {
            type = types.nullOr (types.strMatching ".+:[0-9]+");
            default = null;
            example = "127.0.0.1:7820";
            description = "Be the MixOS Bus broker for the hosted apps at ws://HOST:PORT/ws (a loopback address).";
          };
          connect = mkOption {
            type = types.nullOr (types.strMatching "wss?://.+");
            default = null;
            example = "ws://127.0.0.1:7820/ws";
            description = "Register the apps' Bus names with this MixOS broker (noded) instead of being one.";
          };
          name = mkOption {
            type = types.nullOr types.str;
            default = null;
            description = "The first app's Bus name (default: from its app id).";
          };
        };

        cua = {
          listen = mkOption {
            type = types.nullOr types.str;
            default = null;
            example = "127.0.0.1:3211";
            description = "Serve cua.env.v1 (gRPC and gRPC-Web) at HOST:PORT, HOST (port 3211) or unix:PATH. Off loopback a token is required.";
          };
          tokenFile = mkOption {
            type = types.nullOr types.path;
            default = null;
            description = ''
              A file holding the bearer token every cua.env.v1 call must carry.
              It is handed to the service as a systemd credential, so it may
              stay readable by root only.
            '';
          };
        };

        environment = mkOption {
          type = types.attrsOf types.str;
          default = { };
          example = {
            GSK_RENDERER = "cairo";
          };
          description = ''
            Extra environment for the hosted apps (`wayrig run --env`). For
            Wayrig's own environment set
            `systemd.services.wayrig-<name>.environment`.
          '';
        };

        extraArgs = mkOption {
          type = types.listOf types.str;
          default = [ ];
          example = [
            "--decorations"
            "server"
          ];
          description = "More options of `wayrig run`, before the apps.";
        };

        user = mkOption {
          type = types.nullOr (types.passwdEntry types.str);
          default = null;
          description = ''
            The user the session runs as; null for a dynamic user of its own
            (systemd's DynamicUser), which is what most sessions want.
          '';
        };

        argv = mkOption {
          type = types.listOf types.str;
          internal = true;
          readOnly = true;
          description = "The session's `wayrig run` command, as an argument vector.";
        };
      };

      config.argv =
        let
          flag = option: value: lib.optional (value != null) "--${option}=${value}";
          mygo = mygoSocket name config;
          extraApps = builtins.tail config.apps;
        in
        [
          "${config.package}/bin/wayrig"
          "run"
          "--size=${config.size}"
          "--scale=${toString config.scale}"
          "--pacing=${config.pacing}"
        ]
        ++ flag "mygo-socket" mygo
        ++ flag "bus-listen" config.bus.listen
        ++ flag "bus-connect" config.bus.connect
        ++ flag "bus-name" config.bus.name
        ++ flag "cua-listen" config.cua.listen
        ++ flag "cua-token-file" (
          if config.cua.tokenFile == null then null else credential name "cua-token"
        )
        ++ lib.mapAttrsToList (key: value: "--env=${key}=${value}") config.environment
        ++ map (app: "--launch=${builtins.toJSON app}") extraApps
        ++ config.extraArgs
        ++ [ "--" ]
        ++ builtins.head config.apps;
    };

  enabled = lib.filterAttrs (_: session: session.enable) cfg.sessions;

  unit = name: session: {
    description = "Wayrig session ${name}: ${builtins.head (builtins.head session.apps)}, hosted to be driven";
    wantedBy = [ "multi-user.target" ];
    after = [ "network.target" ];
    environment = {
      XDG_RUNTIME_DIR = runtimeDir name;
      # The apps' home: their caches and settings live and die with the session.
      HOME = "${runtimeDir name}/home";
    };
    serviceConfig = {
      Type = "notify";
      NotifyAccess = "main";
      ExecStart = escapeExecArgs session.argv;
      DynamicUser = session.user == null;
      User = lib.mkIf (session.user != null) session.user;
      RuntimeDirectory = [
        "wayrig/${name}"
        "wayrig/${name}/home"
      ];
      RuntimeDirectoryMode = "0700";
      ReadWritePaths = map (dir: "-${dir}") (socketDirs name session);
      LoadCredential = lib.mkIf (session.cua.tokenFile != null) [
        "cua-token:${toString session.cua.tokenFile}"
      ];
      # Apps take a while on a slow machine (a VM without KVM).
      TimeoutStartSec = lib.mkDefault "5min";
      UMask = "0077";

      # Hardening, as far as hosted apps allow: no W^X rule (JIT engines,
      # llvmpipe), no namespace rule (sandboxed browsers), and devices stay
      # reachable (an app may render on the GPU).
      ProtectSystem = "strict";
      ProtectHome = true;
      PrivateTmp = true;
      NoNewPrivileges = true;
      RestrictAddressFamilies = "AF_UNIX AF_INET AF_INET6";
      SystemCallFilter = [ "@system-service" ];
      SystemCallArchitectures = "native";
      CapabilityBoundingSet = "";
      LockPersonality = true;
      ProtectKernelTunables = true;
      ProtectKernelModules = true;
      ProtectControlGroups = true;
      RestrictRealtime = true;
      RestrictSUIDSGID = true;
    };
  };
in
{
  options.services.wayrig = {
    package = mkOption {
      type = types.package;
      default = pkgs.wayrig or (pkgs.callPackage ./package.nix { });
      defaultText = lib.literalExpression "pkgs.wayrig";
      description = "The Wayrig package sessions run unless they name their own.";
    };

    sessions = mkOption {
      type = types.attrsOf (types.submodule sessionModule);
      default = { };
      example = lib.literalExpression ''
        {
          calculator = {
            apps = [ [ "''${pkgs.gnome-calculator}/bin/gnome-calculator" ] ];
            environment.GSK_RENDERER = "cairo";
            cua.listen = "127.0.0.1:3211";
          };
        }
      '';
      description = "Wayrig sessions, each a systemd service `wayrig-<name>` hosting its apps.";
    };
  };

  config = lib.mkIf (enabled != { }) {
    assertions = lib.flatten (
      lib.mapAttrsToList (
        name: session:
        let
          option = "services.wayrig.sessions.${name}";
        in
        [
          {
            assertion = builtins.match "[A-Za-z0-9][A-Za-z0-9_-]*" name != null;
            message = "${option}: a session's name becomes its unit's and directory's name: use letters, digits, `-` and `_`.";
          }
          {
            assertion = session.bus.listen == null || session.bus.connect == null;
            message = "${option}.bus.listen and ${option}.bus.connect are mutually exclusive: a session is the Bus broker or registers with one.";
          }
          {
            assertion = session.cua.tokenFile == null || session.cua.listen != null;
            message = "${option}.cua.tokenFile is set but ${option}.cua.listen is not: the token guards the cua.env.v1 face.";
          }
        ]
      ) enabled
    );

    systemd.services = lib.mapAttrs' (
      name: session: lib.nameValuePair (unitName name) (unit name session)
    ) enabled;

    # `wayrig snapshot`, `wayrig press` and the other commands of the agent CLI.
    environment.systemPackages = lib.unique (lib.mapAttrsToList (_: session: session.package) enabled);
  };
}

# A NixOS VM test (the flake's `checks.<system>.drive-app`): Wayrig drives a
# GTK 4 app the way a NixOS user's test would.
#
# - `hosted`: the module runs gtk4-widget-factory in a session; once the unit
#   is active (sd_notify READY=1) the agent CLI reads its controls and
#   presses a check box, and the change is read back over MyGo and over
#   cua.env.v1 (grpcurl with Wayrig's own protos); a screenshot is kept in
#   the test's output.
# - `desktop`: sway on a virtual GPU, logged in on tty1, and `wayrig attach
#   --input uinput` driving the same app there: the one place the uinput
#   path runs, as it needs /dev/uinput and a compositor reading libinput.
{
  pkgs,
  wayrig ? pkgs.callPackage ../package.nix { },
}:

let
  protos = ../../proto;

  # One MyGo connection: each argument is a request, each answer a line.
  mygoCall = pkgs.writeScriptBin "mygo-call" ''
    #!${pkgs.python3.interpreter}
    import socket
    import sys

    connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    connection.connect(sys.argv[1])
    stream = connection.makefile("rw")
    for request in sys.argv[2:]:
        stream.write(request + "\n")
        stream.flush()
        print(stream.readline(), end="")
  '';
in
pkgs.testers.runNixOSTest {
  name = "wayrig-drive-app";

  nodes.hosted =
    { pkgs, ... }:
    {
      imports = [ ../module.nix ];
      services.wayrig.package = wayrig;
      services.wayrig.sessions.factory = {
        apps = [ [ "${pkgs.gtk4.dev}/bin/gtk4-widget-factory" ] ];
        # No GPU in the VM: cairo is cheaper than GL on llvmpipe.
        environment.GSK_RENDERER = "cairo";
        cua.listen = "127.0.0.1:3211";
      };
      environment.systemPackages = [
        mygoCall
        pkgs.grpcurl
      ];
      fonts.enableDefaultPackages = true;
      virtualisation.memorySize = 2048;
    };

  nodes.desktop =
    { pkgs, ... }:
    {
      users.users.alice = {
        isNormalUser = true;
        uid = 1000;
        # /dev/uinput is the uinput group's (hardware.uinput).
        extraGroups = [ "uinput" ];
      };
      services.getty.autologinUser = "alice";
      hardware.uinput.enable = true;
      programs.sway.enable = true;
      # org.a11y.Bus on the user's session bus: attach reads the apps there.
      services.gnome.at-spi2-core.enable = true;
      environment.variables = {
        SWAYSOCK = "/tmp/sway-ipc.sock";
        WLR_RENDERER_ALLOW_SOFTWARE = "1";
        GSK_RENDERER = "cairo";
      };
      # sway on tty1 as alice, with the DRM and libinput backends: libinput
      # is what takes the uinput devices.
      programs.bash.loginShellInit = ''
        if [ "$(tty)" = /dev/tty1 ]; then
          exec sway
        fi
      '';
      environment.systemPackages = [
        wayrig
        mygoCall
        pkgs.gtk4.dev
      ];
      fonts.enableDefaultPackages = true;
      virtualisation.memorySize = 2048;
      # A GPU sway can drive (the default VGA has no DRM driver it takes).
      virtualisation.qemu.options = [
        "-vga none"
        "-device virtio-gpu-pci"
      ];
    };

  testScript = ''
    import json
    import shlex

    HOSTED_SOCKET = "/run/wayrig/factory/mygo.sock"
    DESKTOP_SOCKET = "/tmp/desk.sock"
    CHECK_BOX = '[checkBox] "checkbutton"'


    def first_check_box(snapshot):
        """The ref of the first check box `snapshot -i` lists."""
        line = next(l for l in snapshot.splitlines() if CHECK_BOX in l)
        return line.split()[0]


    def mygo(machine, socket, *requests):
        """Answers to MyGo requests over one connection; each must succeed."""
        line = " ".join(shlex.quote(json.dumps(r)) for r in requests)
        out = machine.succeed(f"mygo-call {socket} {line}")
        answers = [json.loads(l) for l in out.splitlines() if l.strip()]
        for answer in answers:
            assert "result" in answer, answer
        return [answer["result"] for answer in answers]


    def mygo_checked(machine, socket):
        """How many of the factory's "checkbutton"s MyGo's tree says are checked."""
        [listed] = mygo(machine, socket, {"id": 1, "method": "windows"})
        window = next(w for w in listed["windows"] if "Widget Factory" in w["title"])
        [tree] = mygo(
            machine, socket, {"id": 2, "method": "tree", "params": {"window": window["id"]}}
        )
        return sum(
            1
            for n in tree["nodes"]
            if n.get("role") == "checkBox"
            and n.get("label") == "checkbutton"
            and "checked" in n.get("states", [])
        )


    def cua_checked(machine):
        """The same count over cua.env.v1 (AccessibilityService/Find)."""
        query = json.dumps({"query": {"role": "check_box", "name": "checkbutton"}})
        out = machine.succeed(
            "grpcurl -plaintext -import-path ${protos}"
            " -proto cua/env/v1/accessibility.proto"
            f" -d {shlex.quote(query)}"
            " 127.0.0.1:3211 cua.env.v1.AccessibilityService/Find"
        )
        nodes = json.loads(out).get("nodes", [])
        assert nodes, out
        return sum(1 for n in nodes if "checked" in n.get("states", []))


    def changed_by_one(machine, before, count):
        """Wait (a little) until count() is one away from before."""
        for _ in range(20):
            now = count()
            if abs(now - before) == 1:
                return
            machine.sleep(1)
        raise AssertionError(f"checked check boxes: {before} before the press, {now} after")


    start_all()

    with subtest("the unit is active once the faces listen and the window is mapped"):
        hosted.wait_for_unit("wayrig-factory.service")
        # Readiness means drivable: no waiting from here on.
        hosted.succeed(f"test -S {HOSTED_SOCKET}")
        hosted.succeed("systemctl show -p DynamicUser wayrig-factory | grep -qx DynamicUser=yes")
        hosted.succeed("systemctl show -p ProtectSystem wayrig-factory | grep -qx ProtectSystem=strict")
        hosted.succeed(f"wayrig open --socket {HOSTED_SOCKET}")
        print(hosted.succeed("wayrig windows"))
        hosted.succeed("wayrig windows | grep -q 'Widget Factory'")

    with subtest("the agent CLI presses a check box; MyGo and cua read the change"):
        mygo_before = mygo_checked(hosted, HOSTED_SOCKET)
        cua_before = cua_checked(hosted)
        snapshot = hosted.succeed("wayrig snapshot -i")
        print(snapshot)
        ref = first_check_box(snapshot)
        print(hosted.succeed(f"wayrig press {ref} --settle"))
        changed_by_one(hosted, mygo_before, lambda: mygo_checked(hosted, HOSTED_SOCKET))
        changed_by_one(hosted, cua_before, lambda: cua_checked(hosted))

    with subtest("a screenshot goes into the test's output"):
        hosted.succeed("wayrig screenshot /tmp/hosted-widget-factory.png")
        hosted.succeed("test -s /tmp/hosted-widget-factory.png")
        hosted.copy_from_vm("/tmp/hosted-widget-factory.png", "")
        hosted.succeed("wayrig close")

    with subtest("attach on sway drives the app through /dev/uinput"):
        desktop.wait_for_file("/run/user/1000/wayland-1")
        desktop.wait_for_file("/tmp/sway-ipc.sock")
        desktop.succeed("su - alice -c 'test -w /dev/uinput'")
        attach = (
            f"wayrig attach --input uinput --mygo-socket {DESKTOP_SOCKET}"
            " -- gtk4-widget-factory > /tmp/attach.log 2>&1"
        )
        desktop.succeed("su - alice -c " + shlex.quote("swaymsg exec " + shlex.quote(attach)))
        desktop.wait_until_succeeds(
            "grep -q 'input through a uinput pointer and keyboard' /tmp/attach.log", timeout=120
        )
        desktop.wait_for_file(DESKTOP_SOCKET)
        cli = "wayrig --session desk"
        desktop.succeed(f"{cli} open --socket {DESKTOP_SOCKET}")
        desktop.wait_until_succeeds(f"{cli} windows | grep -q 'Widget Factory'", timeout=180)
        before = mygo_checked(desktop, DESKTOP_SOCKET)
        snapshot = desktop.succeed(f"{cli} snapshot -i")
        print(snapshot)
        # A press is a click where the element shows: here, uinput events
        # that sway reads through libinput.
        desktop.succeed(f"{cli} press {first_check_box(snapshot)}")
        changed_by_one(desktop, before, lambda: mygo_checked(desktop, DESKTOP_SOCKET))
        desktop.succeed(f"{cli} screenshot /tmp/desktop-widget-factory.png")
        desktop.copy_from_vm("/tmp/desktop-widget-factory.png", "")
        print(desktop.succeed("cat /tmp/attach.log"))
  '';
}

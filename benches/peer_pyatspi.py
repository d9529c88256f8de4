#!/usr/bin/env python3
"""The peer way of one agent step, for Wayrig's benchmark: find a button with
pyatspi, doAction on it, then walk the whole tree (role, name, states, extents),
as dogtail and pyatspi-based tools do. Prints the medians as JSON."""

import json
import statistics
import sys
import time

import pyatspi


def find_app(title):
    desktop = pyatspi.Registry.getDesktop(0)
    for app in desktop:
        if app is None:
            continue
        for frame in app:
            if frame is not None and frame.name == title:
                return app
    return None


def walk(node, out):
    out.append((node.getRole(), node.name, node.getState().getStates(),
                node.queryComponent().getExtents(pyatspi.WINDOW_COORDS) if "Component" in node.get_interfaces() else None))
    for child in node:
        if child is not None:
            walk(child, out)


def find(node, role, name):
    if node.getRole() == role and node.name == name:
        return node
    for child in node:
        if child is not None:
            hit = find(child, role, name)
            if hit is not None:
                return hit
    return None


def main():
    title, rounds = sys.argv[1], int(sys.argv[2])
    app = find_app(title)
    if app is None:
        print(json.dumps({"error": f"no app with a frame {title!r}"}))
        return
    steps, walks, count = [], [], 0
    for _ in range(rounds):
        t0 = time.perf_counter()
        button = find(app, pyatspi.ROLE_PUSH_BUTTON, "Press")
        button.queryAction().doAction(0)
        nodes = []
        t1 = time.perf_counter()
        walk(app, nodes)
        t2 = time.perf_counter()
        steps.append(t2 - t0)
        walks.append(t2 - t1)
        count = len(nodes)
    print(json.dumps({"step_ms": statistics.median(steps) * 1000, "walk_ms": statistics.median(walks) * 1000, "nodes": count}))


if __name__ == "__main__":
    main()

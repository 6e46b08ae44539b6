"""python -m boardsim run FILE.json [--runtime micropython|cpython|rp2040] [--display]
   python -m boardsim timeline FILE.json        (the compiled timeline, JSON lines, for debugging)
   python -m boardsim render FILE.json OUT.gif|OUT.html [--runtime R]   (a replay: boardsim/render.py)
   python -m boardsim serve [--port N] [--runtime R]   (the play page on localhost: boardsim/serve.py)

Exit status: 0 when the scenario ran to its end; 2 for a malformed or impossible scenario
(one line "error: <reason>" on stderr); the runner's status (non-zero) when the target failed.
"""
import argparse
import os
import sys

from boardsim import scenario as scenario_mod


def _load_and_compile(path):
    from boardsim.compile import compile_scenario
    return compile_scenario(scenario_mod.load(path))


def cmd_run(args):
    from boardsim import runtime
    from boardsim.oled_tty import TerminalDisplay
    timeline = _load_and_compile(args.file)
    # the OLED drawn to fit the terminal's width (boardsim/oled_tty.py)
    err = TerminalDisplay(sys.stderr) if args.display else None
    try:
        extra = ["--config", os.path.abspath(args.config)] if args.config else []
        return runtime.run(timeline, args.runtime, args.display, stderr=err, runner_args=extra)
    except runtime.RuntimeFailure as e:
        sys.stderr.write(f"error: {e}\n")
        return e.status
    finally:
        if err is not None:
            err.close()


def cmd_timeline(args):
    from boardsim import runtime
    runtime.write_timeline(_load_and_compile(args.file), sys.stdout)
    return 0


def cmd_render(args):
    from boardsim import render, runtime
    try:
        frames, events = render.render(args.file, args.out, args.runtime, args.every, args.speed)
    except ValueError as e:
        if isinstance(e, scenario_mod.ScenarioError):
            raise
        sys.stderr.write(f"error: {e}\n")
        return 2
    except runtime.RuntimeFailure as e:
        sys.stderr.write(f"error: {e}\n")
        return e.status
    sys.stderr.write(f"{args.out}: {len(frames)} samples, {frames[-1]['t'] / 1000:.1f} s, {len(events)} events\n")
    return 0


def cmd_serve(args):
    from boardsim import serve
    return serve.serve(args.port, args.runtime, args.speed, quiet=not args.verbose)


def parser():
    p = argparse.ArgumentParser(prog="python -m boardsim",
                                description="The Zenn scoreboard simulator: real firmware, simulated table.")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")
    r = sub.add_parser("run", help="play a scenario through the firmware, print its serial events")
    r.add_argument("file", metavar="FILE.json", help="the scenario")
    r.add_argument("--runtime", choices=("micropython", "cpython", "rp2040"), default="micropython",
                   help="the firmware's interpreter (default: micropython, the unix port; rp2040: the "
                        "real image on an emulated Pico, docs/rp2040.md)")
    r.add_argument("--display", action="store_true",
                   help="show the OLED on stderr when it changes, as wide as the terminal allows "
                        "(130 columns: a column per pixel; 66: two pixels per character)")
    r.add_argument("--config", metavar="CONFIG.json",
                   help="the firmware's config.json (e.g. {\"display\": \"both\"}; firmware/storage/config.py)")
    r.set_defaults(func=cmd_run)
    t = sub.add_parser("timeline", help="print the timeline a scenario compiles to (JSON lines)")
    t.add_argument("file", metavar="FILE.json")
    t.set_defaults(func=cmd_timeline)
    g = sub.add_parser("render", help="a replay of a scenario: an animated GIF or a self-contained HTML page")
    g.add_argument("file", metavar="FILE.json")
    g.add_argument("out", metavar="OUT", help="OUT.gif or OUT.html")
    g.add_argument("--runtime", choices=("micropython", "cpython"), default="micropython")
    g.add_argument("--every", type=int, default=50, metavar="MS", help="sample every MS of virtual time (50)")
    g.add_argument("--speed", type=float, default=1.0, help="GIF playback speed (1: real time)")
    g.set_defaults(func=cmd_render)
    v = sub.add_parser("serve", help="the simulator as a page on localhost to play with")
    v.add_argument("--port", type=int, default=8000, help="TCP port on 127.0.0.1 (8000; 0: any free one)")
    v.add_argument("--runtime", choices=("micropython", "cpython"), default="micropython")
    v.add_argument("--speed", type=float, default=1.0, help="virtual seconds per wall second (1)")
    v.add_argument("--verbose", action="store_true", help="log every HTTP request on stderr")
    v.set_defaults(func=cmd_serve)
    return p


def main(argv=None):
    args = parser().parse_args(argv)
    try:
        return args.func(args)
    except scenario_mod.ScenarioError as e:
        sys.stderr.write(f"error: {e}\n")
        return 2
    except KeyboardInterrupt:
        sys.stderr.write("error: interrupted\n")
        return 130
    except BrokenPipeError:
        return 1


if __name__ == "__main__":
    sys.exit(main())

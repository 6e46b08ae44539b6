"""python -m boardsim run FILE.json [--runtime micropython|cpython] [--display]
   python -m boardsim timeline FILE.json        (the compiled timeline, JSON lines, for debugging)

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
    timeline = _load_and_compile(args.file)
    try:
        extra = ["--config", os.path.abspath(args.config)] if args.config else []
        return runtime.run(timeline, args.runtime, args.display, runner_args=extra)
    except runtime.RuntimeFailure as e:
        sys.stderr.write(f"error: {e}\n")
        return e.status


def cmd_timeline(args):
    from boardsim import runtime
    runtime.write_timeline(_load_and_compile(args.file), sys.stdout)
    return 0


def parser():
    p = argparse.ArgumentParser(prog="python -m boardsim",
                                description="The Zenn scoreboard simulator: real firmware, simulated table.")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")
    r = sub.add_parser("run", help="play a scenario through the firmware, print its serial events")
    r.add_argument("file", metavar="FILE.json", help="the scenario")
    r.add_argument("--runtime", choices=("micropython", "cpython"), default="micropython",
                   help="the firmware's interpreter (default: micropython, the unix port)")
    r.add_argument("--display", action="store_true", help="show the OLED on stderr when it changes")
    r.add_argument("--config", metavar="CONFIG.json",
                   help="the firmware's config.json (e.g. {\"display\": \"both\"}; firmware/config.py)")
    r.set_defaults(func=cmd_run)
    t = sub.add_parser("timeline", help="print the timeline a scenario compiles to (JSON lines)")
    t.add_argument("file", metavar="FILE.json")
    t.set_defaults(func=cmd_timeline)
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

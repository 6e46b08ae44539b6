"""The serial console (firmware/main.py hands each line to Scoreboard.command()): a blank line,
as a terminal sends when Enter is pressed on nothing, is no command and is ignored; an unknown
command is still refused, and a good one still runs. Through the real firmware on the simulated
table, under both runtimes."""
from boardsim.testing import run_timeline

BLANK = ["", "\n", "\r\n", "\r", "   ", " \t \r\n", "\t"]


def test_blank_lines_are_ignored_and_unknown_commands_still_refused(runtime):
    tl = [{"op": "boot"}]
    tl += [{"op": "serial", "line": b} for b in BLANK]
    tl += [{"op": "serial", "line": "calib nonsense\r\n"}, {"op": "serial", "line": "hello"},
           {"op": "serial", "line": "calib empty\n"}]
    tl += [{"op": "serial", "line": b} for b in BLANK]
    r = run_timeline(tl, runtime)
    refused = [e for e in r.events if e["ev"] == "refused"]
    # only the two unknown commands, each by its own text (the blank lines left no trace)
    assert [(e["command"], e["why"]) for e in refused] == [("calib nonsense", "unknown"),
                                                           ("hello", "unknown")], refused
    assert [e["step"] for e in r.events if e["ev"] == "calib"] == ["empty"]

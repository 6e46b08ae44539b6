"""bench.rp2040_profile --series' account of each run's settle window (settle_of, print_settle),
on rows made up here as LOOP's SETTLE rows come from the chip: ms, still_since (-1: not still),
confirm, n, x, y, wander, bt, ao, frame length (0.1 ms), at rest."""
from bench.rp2040_profile import print_settle, settle_of

T_MOVE, T_REST = 1000, 2000


def rows(*frames):
    """(ms, still_since[, confirm[, rest]]) -> SETTLE rows (the rest of the columns made up)."""
    out = []
    for f in frames:
        ms, ss = f[0], f[1]
        conf = f[2] if len(f) > 2 else 0
        rest = f[3] if len(f) > 3 else 0
        out.append([ms, ss, conf, 1, 5910, 15950, 0, -1, 0, 200, rest])
    return out


def sliding():
    """frames while the chip slides: each begins the stillness at itself"""
    return [(t, t) for t in (1920, 1940, 1960, 1980)]


def test_a_stillness_begun_at_rest_and_begun_again_a_frame_later_is_a_restart():
    # the last moving fit (read while the chip slid) ends at +2 after the chip's rest; the next
    # frame's fit, at rest, is 2 - 3 mm on: the tracker begins the stillness again at +24 (the
    # hall series' "phase 14" kind). The first stillness is +2, begun again at +24; before the
    # fix this run read "still first +24, begun again: none", as if nothing had restarted.
    r = rows(*sliding(), (2002, 2002), (2024, 2024), (2044, 2024), (2064, 2024),
             (2400, 2024, 1), (2440, 2024, 1), (2470, -1, 0, 1))
    got = settle_of(r, T_MOVE, T_REST, 2468, 2474)
    assert got["still_ms"] == 2
    assert got["restarts"] == [[24, 24, "again"]]
    assert got["refresh_ms"] == [400]
    assert got["verdict_frame_ms"] == 470
    assert got["judged_since_ms"] == 24


def test_the_frames_while_the_chip_slides_are_not_restarts():
    # every frame before the rest begins the stillness at itself; the first one kept by the next
    # frame is the first, whether it ended before the rest or after it
    r = rows(*sliding(), (1998, 1998), (2018, 1998), (2038, 1998), (2400, 1998, 1),
             (2430, -1, 0, 1))
    got = settle_of(r, T_MOVE, T_REST, 2428, 2434)
    assert got["still_ms"] == -2 and got["restarts"] == []
    r = rows(*sliding(), (2004, 2004), (2024, 2004), (2400, 2004, 1), (2436, -1, 0, 1))
    got = settle_of(r, T_MOVE, T_REST, 2434, 2440)
    assert got["still_ms"] == 4 and got["restarts"] == []


def test_a_stillness_counted_from_the_second_anchor_is_named_so():
    r = rows(*sliding(), (2005, 2005), (2025, 2005), (2044, 2005), (2388, 2005, 1),
             (2407, 2039), (2419, 2039, 1), (2462, -1, 0, 1))
    got = settle_of(r, T_MOVE, T_REST, 2456, 2456)
    assert got["still_ms"] == 5
    assert got["restarts"] == [[407, 39, "second"]]


def test_a_run_with_no_still_frame_or_no_rows_is_printed_not_a_crash(capsys):
    # (a series' last runs find LOOP's ring of SETTLE rows full: no rows; or only moving ones)
    run = {"phase_ms": 15, "rest_to_shown_ms": 431}
    run.update(settle_of(rows((2100, 2100)), 2200, 2300, 2731, 2731))    # no rows in its time
    print_settle(run, frames=True)
    run = {"phase_ms": 12, "rest_to_shown_ms": 440}
    run.update(settle_of(rows(*sliding()), T_MOVE, T_REST, 2440, 2440))  # never still
    assert run["still_ms"] is None
    print_settle(run, frames=True)
    out = capsys.readouterr().out
    assert "phase 15: shown +431; no settle rows kept" in out
    assert "phase 12: shown +440; still first none" in out


def test_the_series_command_with_frames_prints_every_run_after_its_summary(monkeypatch, capsys):
    # the whole command (`--series --frames`) after the chip's series: its summary line, then each
    # run's settle account and rows, a run whose rows LOOP's ring had no room for (a long series'
    # last) and one never seen still among them. Before 4c0e6db the command ended here with a
    # TypeError after the summary (print_settle formatted still_ms None: halllag's series)
    import bench.rp2040_profile as rp
    from boardsim.rp2040 import images

    def fake_series(config, name, phases):
        runs = []
        for i, ph in enumerate(phases):
            run = {"phase_ms": ph, "result": "pins", "pins": 8,
                   "rest_to_verdict_ms": 476 + i, "rest_to_shown_ms": 470 + i}
            if i == 0:
                run.update(settle_of(rows(*sliding(), (2002, 2002), (2024, 2024), (2044, 2024),
                                          (2400, 2024, 1), (2440, 2024, 1), (2470, -1, 0, 1)),
                                     T_MOVE, T_REST, 2476, 2470))
            elif i == 1:
                run.update(settle_of(rows((2100, 2100)), 2200, 2300, 2777, 2771))
            else:
                run.update(settle_of(rows(*sliding()), T_MOVE, T_REST, 2478, 2472))
            runs.append(run)
        return {"shot": name, "worst_moving_ms": 22.0, "worst_step_us": 17000, "runs": runs}

    monkeypatch.setattr(images, "missing", lambda: None)
    monkeypatch.setattr(rp, "series", fake_series)
    assert rp.main(["--series", "--frames", "--shots", "8 pins", "--phases", "0,3,6"]) == 0
    out = capsys.readouterr().out
    assert "shown min / median / max 470 / 471 / 472 ms" in out
    assert "phase 0: shown +470; still first +2, begun again: at +24: from +24 (again)" in out
    assert "phase 3: shown +471; no settle rows kept" in out
    assert "phase 6: shown +472; still first none" in out
    # --frames: the first run's rows from 60 ms before the rest, the verdict's frame the last
    assert out.count("\n     ") >= 8 and "        470          -1" in out

"""The browser the page tests drive through Playwright (tests/test_play.py, test_render.py,
test_registry.py): Debian's chromium-headless-shell, the old headless mode (what Playwright's own
headless Chromium is: the engine without the whole browser behind a window), when it is installed
(`make browser`), else Debian's chromium in its new headless mode. The same pages, the same
answers; the shell is the cheaper: tests/test_play.py's chromium processes 5.6 - 6.2 s of CPU
against 7.0 - 7.4 (docs/performance.md "The play page's browser")."""
import os

SHELL = "/usr/bin/chromium-headless-shell"
FULL = "/usr/bin/chromium"
CHROMIUM = SHELL if os.path.exists(SHELL) else FULL
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--no-first-run"]


def missing():
    """Why the page tests cannot run here (their skip's reason), or None."""
    if os.path.exists(CHROMIUM):
        return None
    return (f"Debian's chromium is not installed ({SHELL} or {FULL}: apt-get install "
            "chromium-headless-shell, or `make browser` as root)")

# Zenn scoreboard. `make sim` plays a demo game in the simulator; `make test` runs every test.
PY        ?= python3
VENV      := .venv
VPY       := $(VENV)/bin/python
STAMP     := $(VENV)/.installed
SCENARIO  ?= examples/bowling_demo.json
RUNTIME   ?= micropython

.PHONY: all venv sim test tables check-tables firmware deploy wiring screens hil bench clean

all: test

$(STAMP): requirements.txt
	$(PY) -m venv $(VENV)
	$(VPY) -m pip install --quiet --upgrade pip
	$(VPY) -m pip install --quiet -r requirements.txt
	touch $(STAMP)

venv: $(STAMP)

# Regenerate the firmware's tables from board/geometry.json and wiring/pinmap.json.
tables: $(STAMP)
	$(VPY) -m tools.gen_tables

# Main job: the simulator plays a scenario through the real firmware, showing the OLED.
sim: $(STAMP)
	$(VPY) -m boardsim run $(SCENARIO) --runtime $(RUNTIME) --display

# The simulator as a page to play with: http://127.0.0.1:$(PORT_PLAY)/ (docs/simulator.md).
.PHONY: play browser
PORT_PLAY ?= 8000
play: $(STAMP)
	$(VPY) -m boardsim serve --port $(PORT_PLAY) --runtime $(RUNTIME)

# Debian's chromium for the play page's browser tests (tests/test_play.py skips without it),
# installed when missing and we are root with apt-get, as in CI; a failure only warns.
browser:
	@if [ ! -x /usr/bin/chromium ] && [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
		(apt-get update -qq && apt-get install -y -qq chromium >/dev/null) \
		|| echo "warning: could not install chromium; the browser tests will be skipped"; \
	fi

test: $(STAMP) browser
	$(VPY) -m pytest -q -n 2 tests

# The firmware's speed, memory and latency against their targets (docs/performance.md), as
# a Markdown table; bench/*.py one by one for the details. A few minutes.
bench: $(STAMP)
	$(VPY) -m bench.perf

# The wiring documents from wiring/pinmap.json and board/geometry.json (tools/wiring.py):
# bom.csv, harness.yml + harness.svg (WireViz, needs Graphviz's dot: installed here when
# missing and we are root), mux_circuit.svg, board.svg. tests/test_wiring.py checks them.
wiring: $(STAMP)
	@command -v dot >/dev/null || { [ "$$(id -u)" = 0 ] && apt-get install -y -qq graphviz >/dev/null; } \
		|| { echo "make wiring needs Graphviz's dot: apt-get install graphviz"; exit 1; }
	$(VPY) -m tools.wiring

# The OLED's key screens as pictures (tests/golden/screen_*.png, docs/screens/), from the
# firmware in the simulator. tests/test_screens.py compares them pixel for pixel.
screens: $(STAMP)
	$(VPY) -m tools.screens

# A scenario on a real Pico beside the simulated table, compared with the desktop run
# (tools/hil.py, docs/hil.md): make hil SCENARIO=examples/bowling_demo.json PORT=/dev/ttyACM0
hil: $(STAMP)
	$(VPY) -m tools.hil $(SCENARIO) $(if $(PORT),--port $(PORT),)

firmware: $(STAMP)
	$(VPY) -m tools.build_firmware

deploy: firmware
	$(VPY) -m tools.deploy $(if $(PORT),--port $(PORT),)

clean:
	rm -rf build $(VENV)

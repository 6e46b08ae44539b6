# Zenn scoreboard. `make sim` plays a demo game in the simulator; `make test` runs every test.
PY        ?= python3
VENV      := .venv
VPY       := $(VENV)/bin/python
STAMP     := $(VENV)/.installed
SCENARIO  ?= examples/bowling_demo.json
RUNTIME   ?= micropython
# The MicroPython unix port that the games and the tests' drivers run on (make test, sim, play):
# UNIXPORT=built (the default) builds MPY_DIR's unix port once into ZENN_CACHE/unixport/
# (~/.cache/zenn/unixport/), again when its tree, flags or profile changed, and uses it
# (tools/build_unixport.py --ensure: about 0.7 of the games' CPU, the same events); where it
# cannot be built (no tree at MPY_DIR, no gcc) or with UNIXPORT=pip, the pip package's in .venv.
# ZENN_MICROPYTHON, when set, names the port itself. The heap budgets keep the pip port's.
UNIXPORT  ?= built
WITH_PORT  = ZENN_MICROPYTHON="$${ZENN_MICROPYTHON:-$(if $(filter pip,$(UNIXPORT)),$$(echo "unix port: the pip package's (UNIXPORT=pip)" >&2),$$(MPY_DIR=$(MPY_DIR) $(VPY) -m tools.build_unixport --ensure))}"

# One bytecode cache for every Python this Makefile runs (pytest's controller and workers, the
# runtimes' processes, the tools), read and written lazily, only what each imports: build/host-pyc,
# where boardsim/runtime.py's PYC_CACHE and tests/conftest.py put it when run without make. With
# PYTHONDONTWRITEBYTECODE (set on these machines and in CI) nothing would be kept, so it is unset
# here; CPython writes each .pyc atomically (a temporary file renamed), so processes may share it.
export PYTHONPYCACHEPREFIX := $(CURDIR)/build/host-pyc
unexport PYTHONDONTWRITEBYTECODE

.PHONY: all venv sim test test-rp2040 unixport image-fresh tables check-tables firmware deploy wiring screens hil bench clean image image-pico2 image-stock image-hil rp2040js bootrom

all: test

# The venv from requirements.txt, installed by uv (pinned: UV_VERSION; docs/performance.md "A
# clean clone's start-up"): about 1.5 s where pip took 15 and more. uv is kept apart from the
# venv, in the versioned tool cache UV_HOME (ZENN_CACHE, default ~/.cache/zenn), put there once
# by this Python's own pip (`--target`; atomic, for makes running at once), so a clean clone or a
# `make clean` does not pay for it again. Where it cannot be had (no pip for $(PY), no registry,
# no wheel for this platform) or fails, pip installs as before, and says so. The venv has no pip
# (nothing here runs one in it; `$(UV) pip install --python $(VPY) PKG` adds a package).
# Nothing is byte-compiled here: every Python this Makefile runs keeps its bytecode in
# build/host-pyc (PYTHONPYCACHEPREFIX above), written as modules are first imported.
UV_VERSION := 0.13.9
UV_HOME     = $${ZENN_CACHE:-$$HOME/.cache/zenn}/uv-$(UV_VERSION)
UV          = $(UV_HOME)/bin/uv
$(STAMP): requirements.txt
	$(PY) -m venv --without-pip $(VENV)
	@if [ ! -x "$(UV)" ]; then \
		mkdir -p "$$(dirname "$(UV_HOME)")" && tmp=$$(mktemp -d "$(UV_HOME).XXXXXX") \
		&& { $(PY) -m pip install --quiet --no-compile --disable-pip-version-check --root-user-action=ignore \
			--target "$$tmp" uv==$(UV_VERSION) >"$$tmp.log" 2>&1 || tail -n 1 "$$tmp.log" >&2; } \
		&& { [ -x "$$tmp/bin/uv" ] && mv -T "$$tmp" "$(UV_HOME)" 2>/dev/null; rm -rf "$$tmp" "$$tmp.log"; }; \
	fi; \
	if [ -x "$(UV)" ] && "$(UV)" pip install --quiet --python $(VPY) -r requirements.txt; then :; else \
		echo "uv $(UV_VERSION) could not be had or failed (above): installing with pip instead, slower" >&2; \
		{ $(PY) -m pip --python $(VPY) install --quiet --no-compile --upgrade pip 2>/dev/null \
		|| { $(VPY) -m ensurepip --default-pip && $(VPY) -m pip install --quiet --upgrade pip; }; } \
		&& $(VPY) -m pip install --quiet --no-compile -r requirements.txt; \
	fi
	touch $(STAMP)

venv: $(STAMP)

# Regenerate the firmware's tables from board/geometry.json and wiring/pinmap.json.
tables: $(STAMP)
	$(VPY) -m tools.gen_tables

# Main job: the simulator plays a scenario through the real firmware, showing the OLED.
sim: $(STAMP)
	$(if $(filter micropython,$(RUNTIME)),$(WITH_PORT)) $(VPY) -m boardsim run $(SCENARIO) --runtime $(RUNTIME) --display

# The simulator as a page to play with: http://127.0.0.1:$(PORT_PLAY)/ (docs/simulator.md).
.PHONY: play browser
PORT_PLAY ?= 8000
play: $(STAMP)
	$(if $(filter micropython,$(RUNTIME)),$(WITH_PORT)) $(VPY) -m boardsim serve --port $(PORT_PLAY) --runtime $(RUNTIME)

# Debian's chromium-headless-shell for the browser tests (tests/support/browser.py: Debian's
# chromium does too, at more CPU; tests/test_play.py skips without either), installed when missing
# and we are root with apt-get, as in CI; a failure only warns.
browser:
	@if [ ! -x /usr/bin/chromium-headless-shell ] && [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
		(apt-get update -qq && apt-get install -y -qq chromium-headless-shell >/dev/null) \
		|| echo "warning: could not install chromium-headless-shell; the browser tests use /usr/bin/chromium or are skipped"; \
	fi

# Two workers a core: a quarter of the suite's wall time is spent waiting (on a game's process, the
# emulator's start, a pty, the play page's clock), and a second worker on the same core fills it
# (docs/performance.md "Workers a core": on 2 cores, pytest 343 s with 2 workers, 301 with 3, 258
# with 4; every test passes the same with each).
TEST_WORKERS ?= $(shell echo $$(( $$(nproc 2>/dev/null || echo 1) * 2 )))
test: $(STAMP) browser rp2040js image-fresh
	$(WITH_PORT) $(VPY) -m pytest -q -n $(TEST_WORKERS) --dist loadgroup tests

# Before the tests: where a frozen image was built here (MPY_DIR and its build directory are
# there) and firmware/ has changed since, freeze it again (seconds), so that the chip tier tests
# this firmware frozen, as it ships, not the stock image with .mpy files. Nothing otherwise.
image-fresh: $(STAMP)
	@if [ -d "$(MPY_DIR)/ports/rp2" ] && command -v arm-none-eabi-gcc >/dev/null \
		&& $(VPY) -c "from boardsim.rp2040 import images as I; import sys; sys.exit(0 if I.stale_frozen() else 1)"; then \
		echo "the frozen RP2040 image is older than firmware/: freezing it again"; \
		MPY_DIR=$(MPY_DIR) $(VPY) -m tools.build_image --board $(BOARD) --no-heap >/dev/null \
		|| echo "warning: make image failed: the chip tier runs the stock image or skips"; \
	fi

# The whole emulated-Pico tier (tests/test_rp2040*.py), whole games and every torn operation of a
# save included: about 560 s of CPU with the console NAKed (docs/performance.md). `make test` runs its short tests only.
test-rp2040: $(STAMP) rp2040js
	ZENN_RP2040_LONG=1 $(VPY) -m pytest -q -n 2 --dist loadgroup tests/test_rp2040*.py

# The MicroPython unix port built here from MPY_DIR's tree, -O2 and LTO with gcc's profile of the
# simulator's games (tools/build_unixport.py; into ~/.cache/zenn/unixport/, MPY_DIR untouched):
# the desktop tier's unix-port games in about 0.65 - 0.75 of the CPU, the same events
# (docs/performance.md). Built again here whatever its stamp says; make test builds it when stale.
unixport: $(STAMP)
	MPY_DIR=$(MPY_DIR) $(VPY) -m tools.build_unixport

# The firmware's speed, memory and latency against their targets (docs/performance.md), as
# a Markdown table; bench/*.py one by one for the details. A few minutes.
bench: $(STAMP) rp2040js
	$(VPY) -m bench.perf
	$(VPY) -m bench.rp2040

# The wiring documents from wiring/pinmap.json and board/geometry.json (tools/wiring.py):
# bom.csv, bom_presence.csv, harness.yml + harness.svg (WireViz, needs Graphviz's dot: installed here when
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

# -- The firmware on the RP2040 itself (docs/rp2040.md) ---------------------------------------
# `make image`: the production image, the firmware frozen into MicroPython (tools/image/
# manifest.py), built from the MicroPython tree in MPY_DIR (a release with its rp2 submodules;
# never fetched here) with Debian's arm-none-eabi gcc and cmake. Results in ~/.cache/zenn/rp2040/
# (zenn-RPI_PICO.elf/.uf2); the build directory is kept, so a firmware change re-freezes only.
# BOARD=RPI_PICO2 (or `make image-pico2`) builds the same for the Pico 2 (RP2350) from the same
# tree: zenn-RPI_PICO2.elf/.uf2, built but never run here (rp2040js emulates the RP2040 only).
MPY_DIR ?= $(HOME)/.cache/zenn/src/micropython
BOARD   ?= RPI_PICO
image: $(STAMP)
	MPY_DIR=$(MPY_DIR) $(VPY) -m tools.build_image --board $(BOARD)

image-pico2: $(STAMP)
	MPY_DIR=$(MPY_DIR) $(VPY) -m tools.build_image --board RPI_PICO2

# tools/hil's image (hil-RPI_PICO.elf): the firmware without main.py and boardsim/target frozen,
# so that both fit in the Pico's heap for a HIL run (docs/hil.md)
image-hil: $(STAMP)
	MPY_DIR=$(MPY_DIR) $(VPY) -m tools.build_image --board $(BOARD) --hil

# the same MicroPython without the firmware (stock-RPI_PICO.elf): the .mpy rows of make bench
image-stock: $(STAMP)
	MPY_DIR=$(MPY_DIR) $(VPY) -m tools.build_image --board $(BOARD) --stock

# rp2040js, the emulator behind --runtime rp2040, pinned in boardsim/rp2040/package-lock.json.
# Without npm (or the registry) the rp2040 tier is skipped, with its reason, not failed.
RP2040JS := boardsim/rp2040/node_modules/rp2040js/package.json
$(RP2040JS): boardsim/rp2040/package.json boardsim/rp2040/package-lock.json
	@if command -v npm >/dev/null; then \
		(cd boardsim/rp2040 && npm ci --no-audit --no-fund --silent) && touch $@ \
		|| echo "warning: npm ci failed in boardsim/rp2040: the rp2040 runtime is not available"; \
	else echo "warning: no npm: the rp2040 runtime (rp2040js under Node) is not available"; fi
rp2040js: $(RP2040JS)

# The RP2040's boot ROM for rp2040js (not in its npm package, never in this repository): from a
# copy of rp2040js's demo/bootrom.ts, into ~/.cache/zenn/rp2040/bootrom.bin (or RP2040_BOOTROM).
bootrom: $(STAMP)
	@test -n "$(BOOTROM_TS)" || { echo "make bootrom BOOTROM_TS=path/to/rp2040js/demo/bootrom.ts"; exit 2; }
	$(VPY) -m tools.extract_bootrom $(BOOTROM_TS)

clean:
	rm -rf build $(VENV)

# Zenn scoreboard. `make sim` plays a demo game in the simulator; `make test` runs every test.
PY        ?= python3
VENV      := .venv
VPY       := $(VENV)/bin/python
STAMP     := $(VENV)/.installed
SCENARIO  ?= examples/bowling_demo.json
RUNTIME   ?= micropython

.PHONY: all venv sim test tables check-tables firmware deploy clean

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

test: $(STAMP)
	$(VPY) -m pytest -q -n 2 tests

firmware: $(STAMP)
	$(VPY) -m tools.build_firmware

deploy: firmware
	$(VPY) -m tools.deploy $(if $(PORT),--port $(PORT),)

clean:
	rm -rf build $(VENV)

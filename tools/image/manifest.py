# The scoreboard's MicroPython image for the Raspberry Pi Pico (`make image`, tools/build_image.py;
# docs/rp2040.md). A MicroPython manifest: the board's own modules first (asyncio, onewire, ...,
# as a stock RPI_PICO image has them), then every firmware module and main.py frozen into the
# image, compiled for armv6m at -O3 as `make firmware` compiles them (no asserts, no line-number
# tables). Frozen code runs from flash, so the firmware's bytecode takes no heap. freeze() walks
# the folders (sensing/, tracking/ ...): each module is frozen under its path ("sensing/zones.py"),
# which MicroPython imports as the package's module (sensing.zones), no __init__.py needed.
#
# config.json is not frozen: the firmware reads it from the flash filesystem as on a stock image
# (firmware/storage/config.py; defaults when there is none). Copy one with `make deploy-config` or
# mpremote. Modules copied onto the flash (make deploy) still come first: sys.path is
# ['', '.frozen', '/lib'] on the rp2 port, so a .mpy on the flash overrides its frozen twin.
include("$(PORT_DIR)/boards/manifest.py")
freeze("../../firmware", opt=3)

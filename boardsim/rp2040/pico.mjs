// The emulated Raspberry Pi Pico: the real MicroPython image on rp2040js, its pins wired to the
// simulated table that runs on the host (boardsim/rp2040/chip.py, docs/rp2040.md).
//
//   node pico.mjs --image FIRMWARE.uf2|.elf --bootrom BOOTROM.bin [--fs FS.bin]
//   node pico.mjs --serve SOCKET        (a warm emulator: one chip session per connection)
//
// One JSON command per line on stdin, one JSON answer per line on stdout (the host waits for
// each answer before it sends the next command). With --serve the same commands come over a
// Unix socket, each connection a session of its own that begins with an `open` command (the
// image, the boot ROM, the flash filesystem, the console's USB mode): every session starts from
// the state a new process starts from (no chip, the image's flash, no tables, time 0), only the
// JavaScript engine's compiled code is kept from one session to the next (the first ~12 M
// instructions of a new node process cost about three times what they cost warm: V8's warm-up;
// docs/rp2040.md, "The warm emulator"). One session at a time: another connection while one
// is open is told `busy` (the host then starts a node process of its own). The server ends when
// its stdin closes (the process that started it has gone). Time is the table's: microseconds since the
// run began; the chip's own clock restarts at every power-on or reset, and `base` maps it.
//
// What this side does, and why here rather than on the host: everything the chip asks for
// within nanoseconds of emulated time (an ADC conversion answered from the pad the multiplexer
// select pins choose at that moment, the 74HC165s latching the row the row-select pins choose,
// an SPI byte clocked in) is answered here from tables the host sends whenever its world
// changes; everything else (where the chips are, beams, buttons, hands, faults, what the OLED
// and the MAX7219s show) stays in the host's world model, fed the chip's bus writes in order.
// The pad reads (noise, faults) are hall_model.read() and presence_model.latch() ported line
// for line (tests/test_rp2040.py holds the two to the same numbers).
//
// rp2040js 1.4.1 gaps handled here: the watchdog (a started WDT that expires re-arms at 0 ns
// and the emulation spins forever) is modelled here instead; flash program/erase (the boot
// ROM's flash functions drive an SSI the emulator does not model) are done when the CPU
// enters those ROM functions; a sleeping CPU with no alarm pending jumps to the slice's end.
import fs from 'fs';
import net from 'net';
import readline from 'readline';
import { RP2040, USBCDC } from 'rp2040js';
import { install as installFastCore, stretchOf } from './fastcore.mjs';

const FLASH_BASE = 0x10000000;
const NS_PER_CYCLE = 8;                 // 125 MHz
// flash timing (Winbond W25Q16JV datasheet, typical): page program, 4 KB sector erase
const PAGE_PROGRAM_NS = 400000;
const SECTOR_ERASE_NS = 45000000;

function arg(name, dflt) {
  const i = process.argv.indexOf('--' + name);
  return i >= 0 ? process.argv[i + 1] : dflt;
}

// -- the image ------------------------------------------------------------------------------
function loadImage(path) {
  const data = fs.readFileSync(path);
  const flash = new Uint8Array(2 * 1024 * 1024).fill(0xff);
  if (path.endsWith('.uf2')) {
    for (let off = 0; off + 512 <= data.length; off += 512) {
      const magic0 = data.readUInt32LE(off), magic1 = data.readUInt32LE(off + 4);
      if (magic0 !== 0x0a324655 || magic1 !== 0x9e5d5157) throw new Error('not a UF2 file');
      const addr = data.readUInt32LE(off + 12), n = data.readUInt32LE(off + 16);
      flash.set(data.subarray(off + 32, off + 32 + n), addr - FLASH_BASE);
    }
  } else if (data.readUInt32BE(0) === 0x7f454c46) {            // ELF32: PT_LOAD segments in flash
    const phoff = data.readUInt32LE(28), phentsize = data.readUInt16LE(42), phnum = data.readUInt16LE(44);
    for (let i = 0; i < phnum; i++) {
      const p = phoff + i * phentsize;
      const type = data.readUInt32LE(p), off = data.readUInt32LE(p + 4), paddr = data.readUInt32LE(p + 12);
      const filesz = data.readUInt32LE(p + 16);
      if (type === 1 && filesz > 0 && paddr >= FLASH_BASE && paddr < FLASH_BASE + flash.length) {
        flash.set(data.subarray(off, off + filesz), paddr - FLASH_BASE);
      }
    }
  } else {
    flash.set(data.subarray(0, flash.length), 0);               // a raw flash dump from 0
  }
  return flash;
}

// The boot ROM's public functions, by their two-letter codes (RP2040 datasheet 2.8.3)
function romFunctions(bootrom) {
  const table = bootrom.readUInt16LE(0x14);
  const out = {};
  for (let p = table; ; p += 4) {
    const code = bootrom.readUInt16LE(p);
    if (!code) break;
    out[String.fromCharCode(code & 0xff, code >> 8)] = bootrom.readUInt16LE(p + 2) & ~1;
  }
  return out;
}

// The image and the boot ROM (a warm server keeps the last ones read, by path, size and mtime:
// never written to, each session's flash is a copy)
let image, romWords, ROM, ROM_HOOKS, ROM_LO, ROM_HI;
const loaded = { image: null, bootrom: null };
function fileKey(path) {
  const st = fs.statSync(path);
  return `${path}\0${st.size}\0${st.mtimeMs}`;
}
function useImage(imagePath, bootromPath) {
  const ik = fileKey(imagePath), bk = fileKey(bootromPath);
  if (!loaded.image || loaded.image[0] !== ik) loaded.image = [ik, loadImage(imagePath)];
  if (!loaded.bootrom || loaded.bootrom[0] !== bk) {
    const bootrom = fs.readFileSync(bootromPath);
    if (bootrom.length !== 16384) throw new Error('the boot ROM must be 16384 bytes');
    loaded.bootrom = [bk, bootrom];
  }
  image = loaded.image[1];
  const bootrom = loaded.bootrom[1];
  romWords = new Uint32Array(bootrom.buffer, bootrom.byteOffset, 4096);
  ROM = romFunctions(bootrom);
  ROM_HOOKS = new Set([ROM.RP, ROM.RE, ROM.IF, ROM.EX, ROM.FC, ROM.CX].filter((x) => x));
  ROM_LO = Math.min(...ROM_HOOKS);
  ROM_HI = Math.max(...ROM_HOOKS);
}

// -- a session's state: everything below is set afresh by newSession() ---------------------------
// the chip's flash survives power cuts and resets: one copy, lent to each new chip
let flash;
// the table's side of the pins (tables from the host)
let W;
const MASK32 = 0xffffffff;

function hallNoise(h) {
  let s = h.state;
  s = (s ^ (s << 13)) >>> 0;
  s = (s ^ (s >>> 17)) >>> 0;
  s = (s ^ (s << 5)) >>> 0;
  h.state = s;
  const u = (s & 255) + ((s >>> 8) & 255) + ((s >>> 16) & 255) + (s >>> 24) - 510;
  return Math.floor(u * h.noise * 7 / 1035);      // exact: |u * noise * 7| is far below 2**53
}

// hall_model.HallModel.read(pad)
const FAULT_NONE = -1, FAULT_DEAD = -2, FAULT_FLICKER = -4, FAULT_ALIAS = -100000;
function hallRead(h, pad) {
  let f = h.fault[pad];
  if (f <= FAULT_ALIAS) {
    pad = FAULT_ALIAS - f;
    f = h.fault[pad] > FAULT_ALIAS ? h.fault[pad] : FAULT_NONE;
  }
  let v;
  if (f === FAULT_NONE) v = h.clean[pad] + hallNoise(h);
  else if (f >= 0) v = f & 0xffff;
  else if (f === FAULT_DEAD) v = hallNoise(h);
  else if (f === FAULT_FLICKER) {
    v = hallNoise(h);
    if (h.state & 256) v += h.clean[pad];
  } else v = h.base[pad] + hallNoise(h);
  v = v < 0 ? 0 : v > 65535 ? 65535 : v;
  return ((v >> 4) << 4) | (v >> 12);    // 12 bits, as read_u16 gives them (hall_model.read)
}

function bits(chip, pins) {
  let v = 0;
  for (let i = 0; i < pins.length; i++) if (chip.gpio[pins[i]].outputValue) v |= 1 << i;
  return v;
}

// world.World.adc_read(channel): the pad the select pins choose now, as a 16-bit reading
function adcRead(chip, channel) {
  const h = W.hall;
  if (!h || channel >= h.nAdc) return 0;
  const ch = bits(chip, h.sel), bank = bits(chip, h.bank);
  const pad = h.padAt[(channel * h.banks + bank) * h.channels + ch];
  if (pad < 0) return h.adcZero;
  return hallRead(h, pad);
}

function presBit(p) {
  let s = p.rng;
  s = (s ^ (s << 13)) >>> 0;
  s = (s ^ (s >>> 17)) >>> 0;
  s = (s ^ (s << 5)) >>> 0;
  p.rng = s;
  return (s >>> 7) & 1;
}

function grayRow(code) {
  let r = code;
  for (let s = code >> 1; s; s >>= 1) r ^= s;
  return r;
}

// presence_model.PresenceModel.latch(): the 74HC165s take in the selected strobe: rps rows at
// one of nlev LED levels (strobe s: rows (s / nlev) * rps .., level s % nlev), nsr registers a row
function presLatch(chip) {
  if (W.pres) presLatchRow(grayRow(bits(chip, W.pres.rowSel)));
}

function presLatchRow(s) {
  const p = W.pres;
  p.index = 0;
  if (s >= p.strobes) { p.latched.fill(0); return; }
  const lev = s % p.nlev;
  for (let h = 0; h < p.rps; h++) {
    const base = (Math.floor(s / p.nlev) * p.rps + h) * p.cols;
    for (let k = 0; k < p.nsr; k++) {
      let v = 0;
      for (let j = 0; j < 8; j++) {
        const c = 8 * k + j;
        if (c >= p.cols) break;
        const g = base + c;
        let b = p.state[g] > lev ? 1 : 0;
        // what switches at random (a hand's ragged rim, a flickering pad) does so as a whole
        // pad: a coin at the line's first level, kept for the others
        let rnd = p.ragged[g];
        if (p.nfault) {
          const f = p.fault[g] || p.srFault[k];
          if (f === 1) { b = 1; rnd = 0; }
          else if (f === 2) { b = 0; rnd = 0; }
          else if (f === 3) rnd = 1;
        }
        if (rnd) {
          if (lev === 0) p.coin[g] = presBit(p);
          b = p.coin[g];
        }
        if (b) v |= 0x80 >> j;
      }
      p.latched[h * p.nsr + k] = v;
    }
  }
}

// -- the chip -------------------------------------------------------------------------------
let chip;                   // the RP2040 while powered
let cdc;
let base;                   // table time (ns) at the chip clock's zero
let offNs;                  // table time while unpowered
let out;                    // bus writes and watched pin edges, in order, for the host
let serial;                 // bytes from USB CDC
let i2cTx;                  // the I2C transaction under way: [bus, addr, bytes]
let spiRun;                 // consecutive SPI bytes written: [bus, bytes]
let wdt;
let resets;                 // [table time us, 'watchdog' | 'reset'] since the last answer
let instructions;
let coreWhy;                // undefined until the first power-on, then null (the table decoder) or why not
let errText;                // a session's stderr, sent with the next answer (a warm server's host reads it)
let cpu0;                   // the process's user CPU (us) when the session began
let TRACE, WDT_TRACE, USB_IDLE_ZLP;

// the state of a new process: a session's (opts: the image, the boot ROM, the flash filesystem,
// its offset, and the environment's ZENN_PICO_* settings, as a process reads them)
function newSession(opts) {
  useImage(opts.image, opts.bootrom);
  flash = new Uint8Array(2 * 1024 * 1024);
  flash.set(image);
  if (opts.fs) {
    const f = fs.readFileSync(opts.fs);
    const at = Number(opts.fsBase === undefined ? 0xa0000 : opts.fsBase);
    flash.set(f.subarray(0, flash.length - at), at);
  }
  W = {
    inputs: new Map(),        // GPIO -> level the table drives
    hall: null,               // {padAt, nAdc, banks, channels, adcZero, sel, bank, clean, base, fault, noise, state}
    pres: null,               // {rows, cols, nsr, state, ragged, fault, srFault, nfault, rng, rowSel, latched, index}
    spiBus: 0, csPin: -1, shiftBus: 1, loadPin: -1,
    oledBus: 0, oledAddr: 0x3c, i2cHz: 400000,
  };
  chip = null;
  cdc = null;
  base = 0;
  offNs = 0;
  out = [];
  serial = [];
  i2cTx = null;
  spiRun = null;
  wdt = { enabled: false, load: 0, fedNs: 0, reason: 0, scratch: new Uint32Array(8) };
  resets = [];
  instructions = 0;
  coreWhy = undefined;
  fault = { tearAt: -1, tearKeep: null };
  flashOps = 0;
  padReads = [0, 0];
  lost = [];
  errText = '';
  cpu0 = opts.cpu0 === undefined ? process.cpuUsage().user : opts.cpu0;
  const env = opts.env || {};
  TRACE = !!env.ZENN_PICO_TRACE;
  WDT_TRACE = env.ZENN_PICO_WDT_TRACE || '';
  // The console's OUT endpoint while the host has no bytes (wire(), below): the host NAKs it, as
  // a real one does (the default since 2026-12-03: the chip runs 24 - 37 % fewer instructions than
  // with rp2040js's empty packets, and its frame and turn times are a Pico's on a quiet host);
  // ZENN_PICO_USB=zlp answers it with empty packets, as rp2040js does (the chip's figures before
  // 2026-12-03; docs/performance.md, "The idle USB console NAKed by default"). Any other value is
  // refused, so that a misspelt one does not measure the default unawares.
  const usb = env.ZENN_PICO_USB || 'nak';
  if (usb !== 'nak' && usb !== 'zlp') throw new Error(`ZENN_PICO_USB=${usb}: nak (the default) or zlp`);
  USB_IDLE_ZLP = usb === 'zlp';
}

// what the process would write on its stderr: to the host with the next answer in a session
// of a warm server, else on stderr
let toHost = null;          // a session's writer of answer lines (null: stdout)
function warn(text) {
  if (toHost) errText += text;
  else process.stderr.write(text);
}

function nowNs() {
  return chip ? base + chip.clock.nanos : offNs;
}

function flushSpi() {
  if (spiRun) { out.push(['spi', spiRun[0], Buffer.from(spiRun[1]).toString('hex')]); spiRun = null; }
}

function powerOn(reason) {
  const t = nowNs();
  const mcu = new RP2040();
  coreWhy = installFastCore(mcu.core);      // (fastcore.mjs: the decoder; once, and this chip's flash view)
  mcu.logger = { debug() {}, info() {}, warn() {}, error(c, m) { warn(`rp2040js: ${c}: ${m}\n`); } };
  mcu.loadBootrom(romWords);
  mcu.flash.set(flash, 0);
  // from now on the chip's flash is the shared copy's: writes land in mcu.flash, copied back
  // at power-off (and read by the host through `flash` commands)
  mcu.core.PC = FLASH_BASE;     // boot2 at the start of flash (what the ROM would jump to)
  base = t;
  chip = mcu;
  wdt.enabled = false;
  wdt.reason = reason;
  // the table's inputs at their levels before the firmware looks
  for (const [pin, level] of W.inputs) mcu.gpio[pin].setInputValue(!!level);
  wire(mcu);
}

function powerOff() {
  if (!chip) return;
  flushSpi();
  offNs = nowNs();
  flash.set(chip.flash.subarray(0, flash.length), 0);
  chip = null;
  cdc = null;
  i2cTx = null;
}

function reset(why) {
  resets.push([Math.round(nowNs() / 1000), why]);
  powerOff();
  powerOn(why === 'watchdog' ? 1 : 2);  // WATCHDOG_REASON: TIMER 1, FORCE 2
}

function wire(mcu) {
  // watchdog: modelled here (rp2040js 1.4.1's own re-arms at 0 ns once expired and spins)
  const wd = mcu.peripherals[0x40058];
  const wdRead = wd.readUint32.bind(wd), wdWrite = wd.writeUint32.bind(wd);
  wd.readUint32 = (off) => {
    if (off === 0x00) {
      const left = wdt.enabled ? Math.max(0, wdt.load - Math.floor((mcu.clock.nanos - wdt.fedNs) / 500)) : wdt.load;
      return (wdt.enabled ? 1 << 30 : 0) | (left & 0xffffff);
    }
    if (off === 0x08) return wdt.reason;
    if (off >= 0x0c && off <= 0x28) return wdt.scratch[(off - 0x0c) >> 2];
    return wdRead(off);
  };
  wd.writeUint32 = (off, v) => {
    if (off === 0x00) {
      if (v & (1 << 31)) { wdt.forced = true; return; }        // TRIGGER: reset at once
      const was = wdt.enabled;
      wdt.enabled = !!(v & (1 << 30));
      if (wdt.enabled && !was) { wdt.fedNs = mcu.clock.nanos; wdt.changed = true; }
      return;
    }
    if (off === 0x04) { wdt.load = v & 0xffffff; wdt.fedNs = mcu.clock.nanos; return; }
    if (off >= 0x0c && off <= 0x28) { wdt.scratch[(off - 0x0c) >> 2] = v; return; }
    wdWrite(off, v);
  };

  // ADC: each conversion answered with the pad selected at its start (12 bits, as the chip's)
  const adc = mcu.adc;
  adc.onADCRead = (channel) => {
    padReads[0]++;
    adc.channelValues[channel] = adcRead(mcu, channel) >> 4;
    adc.currentChannel = channel;
    adc.sampleAlarm.schedule(adc.sampleTime * 1000);
  };

  // SPI: the MAX7219 chain (writes, framed by its chip select) and the 74HC165s (reads)
  for (let bus = 0; bus < 2; bus++) {
    const spi = mcu.spi[bus];
    spi.onTransmit = (value) => {
      let rx = 0;
      if (bus === W.shiftBus) padReads[1]++;
      if (bus === W.shiftBus && W.pres) {
        const p = W.pres;
        rx = p.index < p.latched.length ? p.latched[p.index] : 0;
        p.index++;
      } else {
        if (!spiRun || spiRun[0] !== bus) { flushSpi(); spiRun = [bus, []]; }
        spiRun[1].push(value & 0xff);
      }
      // a byte takes 8 bit times of the bus clock
      const ns = spi.clockFrequency > 0 ? Math.round(8e9 / spi.clockFrequency) : 0;
      if (ns > 0) {
        const a = mcu.clock.createAlarm(() => spi.completeTransmit(rx));
        a.schedule(ns);
      } else spi.completeTransmit(rx);
    };
  }
  // chip select and parallel load: edges in order with the bus bytes
  if (W.csPin >= 0) {
    let last = -1;
    mcu.gpio[W.csPin].addListener(() => {
      const v = mcu.gpio[W.csPin].outputValue ? 1 : 0;
      if (v === last) return;
      last = v;
      flushSpi();
      out.push(['pin', W.csPin, v]);
    });
  }
  if (W.loadPin >= 0) {
    let last = 1;
    mcu.gpio[W.loadPin].addListener(() => {
      const v = mcu.gpio[W.loadPin].outputValue ? 1 : 0;
      if (v === 0 && last === 1) presLatch(mcu);
      last = v;
    });
  }

  // I2C: the SSD1306 answers at its address; a transaction's bytes go to the host as one write
  for (let bus = 0; bus < 2; bus++) {
    const i2c = mcu.i2c[bus];
    const byteNs = Math.round(9e9 / W.i2cHz);          // 8 bits and the acknowledge
    const later = (fn) => { const a = mcu.clock.createAlarm(fn); a.schedule(byteNs); };
    i2c.onStart = () => later(() => i2c.completeStart());
    i2c.onConnect = (addr) => {
      const ack = bus === W.oledBus && addr === W.oledAddr;
      if (ack) i2cTx = [bus, addr, []];
      later(() => i2c.completeConnect(ack));
    };
    i2c.onWriteByte = (value) => {
      if (i2cTx) i2cTx[2].push(value & 0xff);
      later(() => i2c.completeWrite(true));
    };
    i2c.onReadByte = () => later(() => i2c.completeRead(0));
    i2c.onStop = () => {
      if (i2cTx && i2cTx[2].length) {
        flushSpi();
        out.push(['i2c', i2cTx[1], Buffer.from(i2cTx[2]).toString('hex')]);
      }
      i2cTx = null;
      i2c.completeStop();
    };
  }

  // USB CDC: the console
  cdc = new USBCDC(mcu.usbCtrl);
  cdc.onSerialData = (buf) => { for (const b of buf) serial.push(b); };
  // The host's side of the console's OUT endpoint (host -> chip): rp2040js's USBCDC answers
  // every OUT buffer the firmware arms, at once, with what it has queued, and with a zero-length
  // packet when it has nothing: TinyUSB takes the empty packet and arms the buffer again, and
  // so on, about every 10 us of chip time (rp2040js's read delay), a USB interrupt each time:
  // 12 - 20 % of the chip's instructions went to it at rest. A real host sends an OUT packet only
  // when it has bytes for the device: here an armed buffer waits (the host NAKs) until the
  // console's bytes come, with the next `run` that brings any (the default; ZENN_PICO_USB=zlp:
  // rp2040js's way, for comparison).
  if (!USB_IDLE_ZLP) {
    const usb = mcu.usbCtrl, read = usb.onEndpointRead;
    let waiting = null;
    usb.onEndpointRead = (endpoint, size) => {
      if (endpoint === cdc.outEndpoint && cdc.txFIFO.itemCount === 0) { waiting = [endpoint, size]; return; }
      read(endpoint, size);
    };
    cdc.bytesQueued = () => {
      if (waiting && cdc.txFIFO.itemCount) { const [e, n] = waiting; waiting = null; read(e, n); }
    };
  }
}

// Flash program / erase: the ROM functions done here (the emulator has no flash chip behind its
// SSI). NOR flash: programming only clears bits; an erase sets a 4 KB sector to 0xFF.

//
// The host may tear a write (the runner's {"op": "flash", "tear_after": N}, as boardsim/target/
// flash.py does on the desktop): every program or erase call is one flash operation, counted
// across power cuts (`flashOps`). The operation numbered `tearAt` is cut part-way: its first
// `tearKeep` bytes reach the cells (n + tearKeep when negative, half of them when null; a program
// leaves the rest as they were, erased 0xFF on a littlefs block; an erase sets only those bytes
// to 0xFF), and the power is gone at that moment.
let fault;                  // { tearAt, tearKeep }
let flashOps;
// the chip's ADC conversions and its reads on the 74HC165s' bus since the session began (`stats`):
// a runner that keeps one front end's tables up to date checks the other's were never read
let padReads;
let lost;                   // [table time us, operation number] of each tear since the last answer

// returns false when the power went in the middle of it
function romCall(mcu, pc) {
  const r = mcu.core.registers;
  if (TRACE && (pc === ROM.RP || pc === ROM.RE)) {
    warn(`pico.mjs: ${pc === ROM.RP ? 'program' : 'erase'} #${flashOps} 0x${r[0].toString(16)} +${pc === ROM.RP ? r[2] : r[1]} at ${Math.round(nowNs() / 1e6)} ms (${Math.round(nowNs() / 1e3)} us)\n`);
  }
  if (pc === ROM.RP || pc === ROM.RE) {
    const k = flashOps++;
    const program = pc === ROM.RP;
    const addr = r[0], n = program ? r[2] : r[1];
    const torn = k === fault.tearAt;
    const keep = fault.tearKeep === null ? n >> 1 : fault.tearKeep < 0 ? n + fault.tearKeep : fault.tearKeep;
    const done = torn ? Math.max(0, Math.min(n, keep)) : n;
    if (program) {
      const src = r[1];
      for (let i = 0; i < done; i++) mcu.flash[addr + i] &= mcu.readUint8(src + i);
      mcu.clock.tick(Math.ceil((torn ? done : n) / 256) * PAGE_PROGRAM_NS);
    } else {
      mcu.flash.fill(0xff, addr, addr + done);
      mcu.clock.tick(Math.ceil(n / 4096) * (torn ? Math.floor(SECTOR_ERASE_NS * done / Math.max(n, 1)) : SECTOR_ERASE_NS));
    }
    if (torn) {
      fault.tearAt = -1;
      lost.push([Math.round(nowNs() / 1000), k]);
      powerOff();
      return false;
    }
  }
  // connect_internal_flash, flash_exit_xip, flash_flush_cache, flash_enter_cmd_xip: nothing to do
  mcu.core.PC = mcu.core.LR & ~1;
  return true;
}

// Run the chip until table time tEnd (ns). Returns when it is reached.
function runUntil(tEnd) {
  if (!chip) { offNs = Math.max(offNs, tEnd); return; }
  let mcu = chip;
  // (the session's objects as constants of the loop below, which tests them every instruction:
  // a session sets them anew, never while the chip runs)
  const wdt_ = wdt, hooks = ROM_HOOKS, romLo = ROM_LO, romHi = ROM_HI;
  // fastcore.mjs's loop over a stretch of instructions, none of them checked here one by one
  const stretch = stretchOf(mcu.core);
  while (chip && base + mcu.clock.nanos < tEnd) {
    const core = mcu.core, clock = mcu.clock;
    const stop = tEnd - base;
    const wdDue = wdt_.enabled ? wdt_.fedNs + wdt_.load * 500 : Infinity;
    const limit = Math.min(stop, wdDue);
    wdt_.changed = false;
    // (clock.tick() inlined where no alarm is due: the same sum, the same time; the count kept in
    // a local and added once the loop ends)
    let n = 0;
    while (clock.nanosCounter < limit && !wdt_.forced && !wdt_.changed) {
      if (core.waiting) {
        const next = clock.nanosToNextAlarm;
        const left = limit - clock.nanos;
        clock.tick(next > 0 && next < left ? next : left);
      } else {
        if (stretch !== null && !core.interruptsUpdated) {
          const k = stretch(core, clock, limit, wdt_, romLo, romHi, hooks);
          if (k > 0) { n += k; continue; }
        }
        const pc = core.registers[15];
        if (pc <= romHi && pc >= romLo && hooks.has(pc)) {
          if (!romCall(mcu, pc)) break;       // the power went in a torn flash write
          continue;
        }
        const dt = core.executeInstruction() * NS_PER_CYCLE;
        const due = clock.nextAlarm;
        if (due !== null && due.nanos <= clock.nanosCounter + dt) clock.tick(dt);
        else clock.nanosCounter += dt;
        n++;
      }
    }
    instructions += n;
    if (!chip) { offNs = Math.max(offNs, tEnd); break; }    // (a torn write cut the power)
    if (wdt.forced) { wdt.forced = false; reset('reset'); mcu = chip; continue; }
    if (wdt.enabled && clock.nanos >= wdt.fedNs + wdt.load * 500) {
      if (WDT_TRACE) {
        const r = core.registers;
        fs.appendFileSync(WDT_TRACE, `watchdog: pc ${core.PC.toString(16)} lr ${r[14].toString(16)} sp ${r[13].toString(16)} r0-7 ${Array.from(r.slice(0, 8)).map((x) => x.toString(16)).join(' ')}\n`);
        const words = [];
        for (let a = r[13]; a < r[13] + 96; a += 4) words.push(mcu.readUint32(a).toString(16));
        fs.appendFileSync(WDT_TRACE, `watchdog: stack ${words.join(' ')} vtor ${core.VTOR.toString(16)} xpsr ${core.xPSR.toString(16)}\n`);
        const seen = new Map();
        for (let k = 0; k < 20000 && !core.waiting; k++) {
          const pc = core.PC;
          seen.set(pc, (seen.get(pc) || 0) + 1);
          clock.tick(core.executeInstruction() * NS_PER_CYCLE);
        }
        fs.appendFileSync(WDT_TRACE, 'watchdog: pcs ' + [...seen.entries()].sort((a, b) => b[1] - a[1]).slice(0, 40).map(([a, n]) => a.toString(16) + ':' + n).join(' ') + '\n');
      }
      reset('watchdog'); mcu = chip; continue;
    }
  }
}

// -- commands -----------------------------------------------------------------------------
function answer(extra) {
  flushSpi();
  const a = Object.assign({
    t: Math.round(nowNs() / 1000), on: !!chip,
    out: out.splice(0), serial: Buffer.from(serial).toString('latin1'), resets, lost, flash_ops: flashOps,
    wdt: !!chip && wdt.enabled,       // the firmware started its watchdog (boot() done: probe.py)
  }, extra || {});
  if (errText) { a.stderr = errText; errText = ''; }
  serial = [];
  resets = [];
  lost = [];
  send(JSON.stringify(a) + '\n');
}

function send(line) {
  if (toHost) toHost(line);
  else process.stdout.write(line);
}

function hexBytes(h) { return Uint8Array.from(Buffer.from(h, 'hex')); }

function command(c) {
  switch (c.cmd) {
    case 'table': {                     // the wiring and the pad tables, once
      Object.assign(W, c.wiring);
      if (c.hall) {
        const h = c.hall;
        W.hall = {
          padAt: Int16Array.from(h.pad_at), nAdc: h.n_adc, banks: h.banks, channels: h.channels,
          adcZero: h.adc_zero, sel: h.sel, bank: h.bank, noise: h.noise_lsb, state: h.seed >>> 0,
          clean: Int32Array.from(h.clean), base: Int32Array.from(h.base), fault: Int32Array.from(h.fault),
        };
      }
      if (c.pres) {
        const p = c.pres;
        W.pres = {
          rows: p.rows, cols: p.cols, nsr: p.nsr, rowSel: p.row_sel, rng: p.seed >>> 0,
          state: hexBytes(p.state), ragged: hexBytes(p.ragged), fault: hexBytes(p.fault),
          srFault: hexBytes(p.sr_fault), nfault: p.nfault, index: 0,
          nlev: p.nlev, rps: p.rps, strobes: p.strobes, coin: p.coin ? hexBytes(p.coin) : new Uint8Array(p.rows * p.cols),
          latched: new Uint8Array(p.nsr * p.rps),
        };
      }
      return answer();
    }
    case 'power':
      if (c.on && !chip) powerOn(0); else if (!c.on) powerOff();
      return answer();
    case 'run': {
      // the table's changes since the last slice, then the chip runs to `until`
      if (c.in) for (const [pin, level] of c.in) {
        W.inputs.set(pin, level);
        if (chip) chip.gpio[pin].setInputValue(!!level);
      }
      if (c.hall && W.hall) {
        const h = W.hall;
        for (const [k, arr] of [['clean', h.clean], ['base', h.base], ['fault', h.fault]]) {
          if (c.hall[k]) { const [idx, vals] = c.hall[k]; for (let i = 0; i < idx.length; i++) arr[idx[i]] = vals[i]; }
        }
      }
      if (c.pres && W.pres) {
        const p = W.pres;
        for (const k of ['state', 'ragged', 'fault']) if (c.pres[k]) p[k] = hexBytes(c.pres[k]);
        if (c.pres.sr_fault) p.srFault = hexBytes(c.pres.sr_fault);
        if (c.pres.nfault !== undefined) p.nfault = c.pres.nfault;
      }
      if (c.serial && cdc) for (const b of Buffer.from(c.serial, 'latin1')) cdc.sendSerialByte(b);
      if (cdc && cdc.bytesQueued) cdc.bytesQueued();
      runUntil(c.until * 1000);
      return answer();
    }
    case 'stall': {                     // the firmware hangs: time passes, no instruction runs
      if (chip) {
        const end = nowNs() + c.ms * 1e6;
        const due = wdt.enabled ? base + wdt.fedNs + wdt.load * 500 : Infinity;
        if (due <= end) {
          chip.clock.tick(due - nowNs());
          reset('watchdog');
        }
        runUntil(end);
      } else offNs += c.ms * 1e6;
      return answer();
    }
    case 'flash_read': {                // the flash as the chip left it (the host's littlefs reads it)
      const f = chip ? chip.flash : flash;
      return answer({ data: Buffer.from(f.subarray(c.offset, c.offset + c.length)).toString('base64') });
    }
    case 'flash_write': {
      const data = Buffer.from(c.data, 'base64');
      flash.set(data, c.offset);
      if (chip) chip.flash.set(data, c.offset);
      return answer();
    }
    case 'flash_tear':                  // tear the flash operation after n more (n < 0: none)
      fault.tearAt = c.after < 0 ? -1 : flashOps + c.after;
      fault.tearKeep = c.keep === undefined || c.keep === null ? null : c.keep;
      return answer();
    case 'sample':                      // the pad models alone (tests: the same numbers as Python's)
      return answer({
        hall: (c.pads || []).map((pad) => hallRead(W.hall, pad)),
        pres: (c.rows || []).map((row) => { presLatchRow(row); return Array.from(W.pres.latched); }),
      });
    case 'stats':
      return answer({ instructions, cycles_ns: chip ? chip.clock.nanos : 0, cpu_us: process.cpuUsage().user - cpu0,
                      pad_reads: padReads,
                      core: coreWhy === null ? 'table' : `plain (${coreWhy})` });
    case 'quit':
      answer();
      if (!toHost) process.exit(0);
      break;
    default:
      throw new Error('unknown command ' + c.cmd);
  }
}

function commandLine(line) {
  if (!line.trim()) return;
  try {
    command(JSON.parse(line));
  } catch (e) {
    send(JSON.stringify({ error: String(e && e.stack || e) }) + '\n');
  }
}

const SERVE = arg('serve');
if (!SERVE) {
  // one chip, this process's (its CPU counted from the process's start, as before)
  newSession({ image: arg('image'), bootrom: arg('bootrom'), fs: arg('fs'), fsBase: arg('fs-base'),
               env: process.env, cpu0: 0 });
  const rl = readline.createInterface({ input: process.stdin });
  rl.on('line', commandLine);
  rl.on('close', () => process.exit(0));
} else {
  serve(SERVE);
}

// The warm emulator: sessions over a Unix socket, one at a time (chip.py's Pico opens one for
// each chip process when ZENN_PICO_SERVER names the socket; tests/support/runtimes.py starts it)
function serve(path) {
  let active = null;          // the connection whose session is open
  let sessions = 0;
  const server = net.createServer((sock) => {
    const write = (line) => sock.write(line);
    const rl = readline.createInterface({ input: sock });
    let mine = false;
    rl.on('line', (line) => {
      if (!line.trim()) return;
      if (!mine) {
        // the first line opens the session: {"cmd": "open", image, bootrom, fs, fsBase, env}
        let c;
        try {
          c = JSON.parse(line);
          if (c.cmd !== 'open') throw new Error('a session begins with open');
          if (active) { write(JSON.stringify({ error: 'busy' }) + '\n'); sock.end(); return; }
          // (fastcore.mjs's decoder is the process's: a session asking for another is refused)
          if ((c.env && c.env.ZENN_PICO_CORE || '') !== (process.env.ZENN_PICO_CORE || '')) {
            write(JSON.stringify({ error: 'busy: ZENN_PICO_CORE differs from the server\'s' }) + '\n');
            sock.end();
            return;
          }
          toHost = write;
          newSession(c);
        } catch (e) {
          toHost = null;
          write(JSON.stringify({ error: String(e && e.stack || e) }) + '\n');
          sock.end();
          return;
        }
        active = sock;
        mine = true;
        sessions++;
        return answer({ session: sessions, pid: process.pid });
      }
      commandLine(line);
    });
    const done = () => {
      if (mine && active === sock) {
        // nothing of the session is kept: the next one is begun by newSession()
        active = null;
        toHost = null;
        chip = null;
        cdc = null;
      }
      mine = false;
    };
    sock.on('close', done);
    sock.on('error', done);
  });
  try { fs.unlinkSync(path); } catch (e) { /* none there */ }
  server.listen(path, () => process.stdout.write(JSON.stringify({ serving: path, pid: process.pid }) + '\n'));
  // the process that started the server has gone (or closed its pipe): so does the server
  process.stdin.on('data', () => {});
  process.stdin.on('end', () => { try { fs.unlinkSync(path); } catch (e) { /* gone */ } process.exit(0); });
}

// fastcore.mjs against rp2040js's own decoder: two emulated chips with the same image, one on
// each, stepped side by side, one instruction at a time; after each, their registers, flags,
// cycle counts and clocks must be equal (and all their RAM every 2**16 instructions and at the
// end). The first difference stops the run with the instruction that made it.
//
//   node corecheck.mjs --image FIRMWARE.elf --bootrom BOOTROM.bin [--instructions N] [--mutate K]
//       [--stretch US [--mutate-clock K]]
//
// Prints one JSON line: {"ok": true|false, "instructions", "ms" (chip time), "differ"?}.
// The chips boot the image on a bare board (no table on the pins: the firmware boots, finds no
// pads and runs its loop), their flash functions done as pico.mjs does them. --mutate K (to
// show the check can fail): the table decoder's chip gets the carry flag wrong on its K-th
// subtraction (CMP, SUBS ...) of equal operands.
// --stretch US: the table's chip runs as pico.mjs's runUntil runs it, in fastcore.mjs's stretches
// (to each next multiple of US microseconds of chip time, as a slice's end; one instruction at a
// time where a stretch takes none), and the plain chip is stepped as many instructions after each
// stretch, the two compared then (so the stretch's alarms, io breaks and limits are held to the
// one-by-one stepping). --mutate-clock K: the K-th stretch's chip loses 8 ns (one cycle) at its end.
import fs from 'fs';
import { RP2040 } from 'rp2040js';
import { build, fastAccessors, halfWords, plainMethods } from './fastcore.mjs';

function arg(name, dflt) {
  const i = process.argv.indexOf('--' + name);
  return i >= 0 ? process.argv[i + 1] : dflt;
}

const FLASH_BASE = 0x10000000;
function loadElf(file) {
  const data = fs.readFileSync(file);
  const flash = new Uint8Array(2 * 1024 * 1024).fill(0xff);
  const phoff = data.readUInt32LE(28), phentsize = data.readUInt16LE(42), phnum = data.readUInt16LE(44);
  for (let i = 0; i < phnum; i++) {
    const p = phoff + i * phentsize;
    const type = data.readUInt32LE(p), off = data.readUInt32LE(p + 4), paddr = data.readUInt32LE(p + 12);
    const filesz = data.readUInt32LE(p + 16);
    if (type === 1 && filesz > 0 && paddr >= FLASH_BASE && paddr < FLASH_BASE + flash.length) {
      flash.set(data.subarray(off, off + filesz), paddr - FLASH_BASE);
    }
  }
  return flash;
}

const flash = loadElf(arg('image'));
const bootrom = fs.readFileSync(arg('bootrom'));
const romWords = new Uint32Array(bootrom.buffer, bootrom.byteOffset, 4096);
const rom = {};
for (let p = bootrom.readUInt16LE(0x14); bootrom.readUInt16LE(p); p += 4) {
  const code = bootrom.readUInt16LE(p);
  rom[String.fromCharCode(code & 0xff, code >> 8)] = bootrom.readUInt16LE(p + 2) & ~1;
}
const HOOKS = new Set([rom.RP, rom.RE, rom.IF, rom.EX, rom.FC, rom.CX].filter((x) => x));

function chip() {
  const mcu = new RP2040();
  mcu.logger = { debug() {}, info() {}, warn() {}, error() {} };
  mcu.loadBootrom(romWords);
  mcu.flash.set(flash, 0);
  mcu.core.PC = FLASH_BASE;
  return mcu;
}

// one step as pico.mjs's runUntil takes it: a sleeping core jumps to its next alarm
function step(mcu) {
  const core = mcu.core, clock = mcu.clock;
  if (core.waiting) {
    const next = clock.nanosToNextAlarm;
    clock.tick(next > 0 ? next : 1000);
    return 0;
  }
  const pc = core.PC;
  if (HOOKS.has(pc)) {            // pico.mjs's romCall: program and erase done on mcu.flash
    const r = core.registers;
    if (pc === rom.RP) for (let i = 0; i < r[2]; i++) mcu.flash[r[0] + i] &= mcu.readUint8(r[1] + i);
    else if (pc === rom.RE) mcu.flash.fill(0xff, r[0], r[0] + r[1]);
    core.PC = core.LR & ~1;
    return 0;
  }
  clock.tick(core.executeInstruction() * 8);
  return 1;
}

function state(mcu) {
  const c = mcu.core;
  return [...c.registers, c.N, c.Z, c.C, c.V, c.cycles, c.waiting, c.PM, c.IPSR, c.bankedSP,
    c.pendingInterrupts, mcu.clock.nanos].join(',');
}

function same(a, b) {
  const x = a.core, y = b.core;
  for (let i = 0; i < 16; i++) if (x.registers[i] !== y.registers[i]) return false;
  return x.N === y.N && x.Z === y.Z && x.C === y.C && x.V === y.V && x.cycles === y.cycles
    && x.waiting === y.waiting && x.PM === y.PM && x.IPSR === y.IPSR && x.bankedSP === y.bankedSP
    && x.pendingInterrupts === y.pendingInterrupts && a.clock.nanos === b.clock.nanos;
}

const plainChip = chip(), fastChip = chip();
const plain = plainMethods(plainChip.core);
const src = fs.readFileSync(new URL('./cortex-m0-core.js', import.meta.resolve('rp2040js')), 'utf8');
Object.assign(plainChip.core, plain);
halfWords(fastChip.core);
Object.assign(fastChip.core, { executeInstruction: build(src, plain.executeInstruction), ...fastAccessors });

const mutate = Number(arg('mutate', 0));
if (mutate) {
  let seen = 0;
  const core = fastChip.core, flags = core.substractUpdateFlags;
  core.substractUpdateFlags = function (a, b) {
    const r = flags.call(this, a, b);
    if (a === b && ++seen === mutate) this.C = !this.C;
    return r;
  };
}

const limit = Number(arg('instructions', 20e6));
let n = 0, steps = 0, differ = null;
const ramSame = () => Buffer.compare(Buffer.from(plainChip.sram), Buffer.from(fastChip.sram)) === 0;
const sliceNs = Number(arg('stretch', 0)) * 1000;
const stretch = sliceNs > 0 ? fastChip.core.executeInstruction.stretch : null;
const mutateClock = Number(arg('mutate-clock', 0));
const WDT = { forced: false, changed: false }, romLo = Math.min(...HOOKS), romHi = Math.max(...HOOKS);
let stretches = 0, ramAt = 65536;
while (n < limit) {
  const fc = fastChip.core;
  if (stretch && !fc.waiting && !fc.interruptsUpdated) {
    const pc = fc.PC;
    const end = (Math.floor(fastChip.clock.nanos / sliceNs) + 1) * sliceNs;
    const k = stretch(fc, fastChip.clock, end, WDT, romLo, romHi, HOOKS);
    if (k > 0) {
      if (++stretches === mutateClock) fastChip.clock.nanosCounter -= 8;
      for (let i = 0, guard = 0; i < k && guard < 2 * k + 2; guard++) i += step(plainChip);
      n += k;
      steps += k;
      if (!same(plainChip, fastChip) || (n >= ramAt && !ramSame())) {
        differ = { stretch: stretches, from: pc.toString(16), instructions: k, plain: state(plainChip), fast: state(fastChip) };
        break;
      }
      if (n >= ramAt) ramAt = n + 65536;
      continue;
    }
  }
  const pc = plainChip.core.PC;
  const op = plainChip.readUint16(pc & ~1);
  n += step(plainChip);
  step(fastChip);
  steps++;
  if (!same(plainChip, fastChip) || ((steps & 0xffff) === 0 && !ramSame())) {
    differ = { pc: pc.toString(16), opcode: op.toString(16), plain: state(plainChip), fast: state(fastChip) };
    break;
  }
}
if (!differ && !ramSame()) differ = { ram: true };
process.stdout.write(JSON.stringify({ ok: !differ, instructions: n, ms: plainChip.clock.nanos / 1e6, differ }) + '\n');

// Two builds of fastcore.mjs's decoder, A and B (e.g. main's file and this one), each on a chip
// of its own booting the same image on a bare board (as corecheck.mjs's), stepped in turn 1 M
// instructions at a time in ONE process; each slice's CPU (process.cpuUsage) summed per build, so
// that the machine's load falls on both alike. At the end both chips' RAM and clocks must be the
// same (the builds step alike; corecheck.mjs checks it instruction by instruction).
//
//   node decoderab.mjs --image FIRMWARE.elf --bootrom BOOTROM.bin --a FASTCORE_A.mjs \
//       [--b FASTCORE_B.mjs] [--instructions N]
//
// Prints the first 11 M instructions' CPU (V8 compiling the decoder: its warm-up) and the whole
// run's, per build, and ns of CPU an instruction.
import fs from 'fs';
import path from 'path';
import { RP2040 } from 'rp2040js';

function arg(name, dflt) {
  const i = process.argv.indexOf('--' + name);
  return i >= 0 ? process.argv[i + 1] : dflt;
}
const A = await import(path.resolve(arg('a')));
const B = await import(path.resolve(arg('b', new URL('./fastcore.mjs', import.meta.url).pathname)));
const img = arg('image'), rom = arg('bootrom');
const total = Number(arg('instructions', 40e6)), slice = 1e6;
const FLASH_BASE = 0x10000000;
const data = fs.readFileSync(img);
const flash = new Uint8Array(2 * 1024 * 1024).fill(0xff);
const phoff = data.readUInt32LE(28), phentsize = data.readUInt16LE(42), phnum = data.readUInt16LE(44);
for (let i = 0; i < phnum; i++) {
  const p = phoff + i * phentsize;
  const type = data.readUInt32LE(p), off = data.readUInt32LE(p + 4), paddr = data.readUInt32LE(p + 12), filesz = data.readUInt32LE(p + 16);
  if (type === 1 && filesz > 0 && paddr >= FLASH_BASE && paddr < FLASH_BASE + flash.length) flash.set(data.subarray(off, off + filesz), paddr - FLASH_BASE);
}
const bootrom = fs.readFileSync(rom);
const romWords = new Uint32Array(bootrom.buffer, bootrom.byteOffset, 4096);
const r = {};
for (let p = bootrom.readUInt16LE(0x14); bootrom.readUInt16LE(p); p += 4) { const code = bootrom.readUInt16LE(p); r[String.fromCharCode(code & 0xff, code >> 8)] = bootrom.readUInt16LE(p + 2) & ~1; }
const HOOKS = new Set([r.RP, r.RE, r.IF, r.EX, r.FC, r.CX].filter((x) => x));
const src = fs.readFileSync(new URL('./cortex-m0-core.js', import.meta.resolve('rp2040js')), 'utf8');
function chip(M) {
  const mcu = new RP2040();
  mcu.logger = { debug() {}, info() {}, warn() {}, error() {} };
  mcu.loadBootrom(romWords); mcu.flash.set(flash, 0); mcu.core.PC = FLASH_BASE;
  const plain = M.plainMethods(mcu.core);
  M.halfWords(mcu.core);
  Object.assign(mcu.core, { executeInstruction: M.build(src, plain.executeInstruction), readUint32: M.fastReadUint32, writeUint32: M.fastWriteUint32 });
  return mcu;
}
const mkRun = () => new Function('HOOKS', 'rom', `return function run(mcu, n) {
  const core = mcu.core, clock = mcu.clock;
  for (let k = 0; k < n;) {
    if (core.waiting) { const next = clock.nanosToNextAlarm; clock.tick(next > 0 ? next : 1000); continue; }
    const pc = core.PC;
    if (HOOKS.has(pc)) { const r = core.registers;
      if (pc === rom.RP) for (let i = 0; i < r[2]; i++) mcu.flash[r[0] + i] &= mcu.readUint8(r[1] + i);
      else if (pc === rom.RE) mcu.flash.fill(0xff, r[0], r[0] + r[1]);
      core.PC = core.LR & ~1; continue; }
    clock.tick(core.executeInstruction() * 8); k++;
  }
}`)(HOOKS, r);
const a = chip(A), b = chip(B), runA = mkRun(), runB = mkRun();
let ta = 0, tb = 0;
const cpu = () => { const u = process.cpuUsage(); return u.user + u.system; };
for (let done = 0; done < total; done += slice) {
  let t = cpu(); runA(a, slice); ta += cpu() - t;
  t = cpu(); runB(b, slice); tb += cpu() - t;
  if (done === 10 * slice) console.log(JSON.stringify({ first_11M_A_s: ta / 1e6, first_11M_B_s: tb / 1e6 }));
}
const same = Buffer.compare(Buffer.from(a.sram), Buffer.from(b.sram)) === 0 && a.clock.nanos === b.clock.nanos;
console.log(JSON.stringify({ instructions: total, A_s: ta / 1e6, B_s: tb / 1e6, ns_A: ta * 1e3 / total, ns_B: tb * 1e3 / total, same }));

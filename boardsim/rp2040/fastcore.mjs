// rp2040js's instruction decoder, dispatched by a table instead of its chain of ~90 tests.
//
// CortexM0Core.executeInstruction() (rp2040js 1.4.1) finds an instruction's handler by testing
// the opcode against each instruction's pattern in turn, LDR and STR some 30 tests down: about
// half the emulator's time went there. Here its own source is read, cut into its (pattern,
// body) pairs, and put back together behind a 64 K table that holds, for every 16-bit opcode,
// the number of the first pattern that matches it: the same bodies, verbatim, in the same order
// of effects; only the search is gone. Each body is a small function of its own, called through
// the table (branch chipspeed, 2026-12-03): as one switch of ~90 bodies the decoder was one
// function V8 compiled ~0.3 s at a time, and again each time a body first ran after it was
// compiled (ten times in a chip run); the small ones compile in a millisecond each, and V8 inlines
// the core's helpers into them (docs/performance.md, "The chip tier's decoder in small
// functions"). What the table cannot decide alone falls
// back to the original method: an instruction taken while interrupts are pending
// (interruptsUpdated), and the 32-bit encodings other than BL (MRS, MSR, DMB, DSB, ISB, UDF),
// whose pattern reads the second half-word. tests/test_rp2040.py runs the two cores side by side,
// instruction for instruction, over the firmware's boot and loop.
//
// install() returns why it did not install (null when it did): an rp2040js other than the one
// checked (1.4.1, pinned), or whose source does not cut as expected, keeps its own decoder;
// ZENN_PICO_CORE=plain keeps it too. pico.mjs's `stats` answer names the decoder ("core").
//
// The same bodies also run in `stretch` (branch chip23, 2026-12-04): runUntil's loop over many
// instructions with its checks paid only where an instruction can have changed what they test
// (below; docs/performance.md, "The emulator's instructions in stretches"); corecheck.mjs
// --stretch holds it to rp2040js's decoder stepped one instruction at a time.
import fs from 'fs';

// the source of the CortexM0Core that `import ... from 'rp2040js'` loads (its ESM build)
function coreSource() {
  return fs.readFileSync(new URL('./cortex-m0-core.js', import.meta.resolve('rp2040js')), 'utf8');
}

// The rp2040js this was checked against (corecheck.mjs, tests/test_rp2040.py): another keeps its
// own decoder until it is checked too (package.json pins this one).
const CHECKED = '1.4.1';
function rp2040jsVersion() {
  return JSON.parse(fs.readFileSync(new URL('../../package.json', import.meta.resolve('rp2040js')), 'utf8')).version;
}

// the text from `open` (an index of "(" or "{") to its partner, inclusive
function balanced(src, open) {
  const o = src[open], c = o === '(' ? ')' : '}';
  let depth = 0;
  for (let i = open; i < src.length; i++) {
    if (src[i] === o) depth++;
    else if (src[i] === c && --depth === 0) return i;
  }
  throw new Error('unbalanced');
}

// executeInstruction's chain: [{cond, body}], the last one's cond null (the final else)
export function decoderChain(src) {
  const start = src.indexOf('    executeInstruction() {');
  if (start < 0) throw new Error('no executeInstruction');
  const end = balanced(src, src.indexOf('{', start));
  const fn = src.slice(start, end + 1);
  const first = fn.indexOf('        // ADCS\n        if (');
  if (first < 0) throw new Error('no ADCS');
  const chain = [];
  let i = fn.indexOf('if (', first);
  for (;;) {
    const cOpen = i + 3;
    const cClose = balanced(fn, cOpen);
    const cond = fn.slice(cOpen + 1, cClose);
    const bOpen = fn.indexOf('{', cClose);
    const bClose = balanced(fn, bOpen);
    chain.push({ cond, body: fn.slice(bOpen + 1, bClose) });
    const rest = fn.slice(bClose + 1);
    const m = /^\s*(\/\/[^\n]*\n\s*)*else\s*(if \(|\{)/.exec(rest);
    if (!m) throw new Error('chain ends unexpectedly');
    if (m[2] === '{') {
      const eOpen = bClose + 1 + m[0].length - 1;
      const eClose = balanced(fn, eOpen);
      chain.push({ cond: null, body: fn.slice(eOpen + 1, eClose) });
      const tail = fn.slice(eClose + 1);
      if (!/^\s*this\.cycles \+= deltaCycles;\s*return deltaCycles;\s*\}\s*$/.test(tail)) {
        throw new Error('unexpected end of executeInstruction');
      }
      return chain;
    }
    i = bClose + 1 + m[0].length - 4;
  }
}

const PRELUDE = `

const pcRegister = 15, spRegister = 13, LOG_NAME = 'CortexM0Core';
function signExtend8(value) { return (value << 24) >> 24; }
function signExtend16(value) { return (value << 16) >> 16; }
`;

// The 32-bit encodings: the original reads a second half-word for these (opcode2, else 0).
const isWide = (op) => op >> 12 === 0b1111 || op >> 11 === 0b11101;

export function build(src, orig) {
  const chain = decoderChain(src);
  if (chain.length < 80 || chain[chain.length - 1].cond !== null) throw new Error(`${chain.length} branches`);
  const usesOp2 = chain.map((b) => b.cond !== null && /\bopcode2\b/.test(b.cond));
  // the first pattern whose opcode test needs the second half-word: BL
  const bl = usesOp2.indexOf(true);
  if (bl < 0 || !/^opcode >> 11 === 0b11110 && /.test(chain[bl].cond)) throw new Error('BL not where expected');
  // kind: the branch taken, FALLBACK (the original method) or BL_OR_FALLBACK; the patterns in
  // their order as one function (opcode2 is 0 for a 16-bit instruction, as in the original)
  const FALLBACK = chain.length, BL_OR_FALLBACK = chain.length + 1;
  let tests = '';
  chain.forEach((b, k) => {
    if (b.cond === null) tests += `  return ${k};\n`;
    else if (usesOp2[k]) {
      tests += `  if (wide) return ${k === bl ? `opcode >> 11 === 0b11110 ? ${BL_OR_FALLBACK} : ` : ''}${FALLBACK};\n`;
      tests += `  if (${b.cond}) return ${k};\n`;
    } else tests += `  if (${b.cond}) return ${k};\n`;
  });
  const classify = new Function('opcode', `const opcode2 = 0;
  const wide = opcode >> 12 === 0b1111 || opcode >> 11 === 0b11101;
${tests}`);
  const kinds = new Uint8Array(65536);
  for (let op = 0; op < 65536; op++) {
    let kind = classify(op);
    // (a 32-bit encoding taken by a pattern before BL would see opcode2 as 0 here)
    if (kind < chain.length && isWide(op) && /\bopcode2\b/.test(chain[kind].body)) kind = FALLBACK;
    kinds[op] = kind;
  }
  // each pattern's body a function of its own: the body verbatim (no body returns: checked
  // below), deltaCycles its local from 1 as in the original, and what it leaves added to cycles
  // and returned by the decoder as before. H[k] is pattern k's; H[BL_OR_FALLBACK] is BL's.
  if (chain.some((b) => /\breturn\b/.test(b.body))) throw new Error('a body returns');
  let handlers = '';
  chain.forEach((b, k) => {
    handlers += `function h${k}(core, opcode, opcodePC, opcode2) { let deltaCycles = 1; {${b.body.replace(/\bthis\b/g, 'core')}} return deltaCycles; }\n`;
  });
  handlers += `const H = [${chain.map((b, k) => `h${k}`).join(', ')}, null, h${bl}];\n`;
  // the stretch's table: the bodies that sleep (WFE, WFI), call the chip's break handler (BKPT,
  // UDF) or log (SEV, YIELD, the last else) are left to pico.mjs's loop, one at a time
  const stretchKinds = kinds.slice();
  chain.forEach((b, k) => {
    if (b.cond === null || /\bwaiting\b|rp2040\.|logger/.test(b.body)) {
      for (let op = 0; op < 65536; op++) if (stretchKinds[op] === k) stretchKinds[op] = FALLBACK;
    }
  });
  // the stretch calls each body by name (a switch on the kind): V8 inlines the small ones into
  // the loop; a call through H[] is a call it cannot inline (12 % more CPU, measured)
  // The bodies that may set interruptsUpdated (CPSIE, SVC, MSR; BX and POP {PC} by an
  // exception's return) mark io when they did, so that the loop tests it after them only. (The
  // core's methods the bodies call are these: another would have to be looked at first.)
  const called = new Set(chain.flatMap((b) => [...b.body.matchAll(/this\.(\w+)\s*\(/g)].map((x) => x[1])));
  const known = ['addUpdateFlags', 'substractUpdateFlags', 'checkCondition', 'cyclesIO', 'blTaken', 'BXWritePC',
    'readUint32', 'readUint16', 'readUint8', 'writeUint32', 'writeUint16', 'writeUint8', 'readSpecialRegister',
    'writeSpecialRegister'];
  for (const name of called) if (!known.includes(name)) throw new Error(`a body calls ${name}`);
  let dispatch = 'switch (kind) {\n';
  chain.forEach((b, k) => {
    const irq = /\binterruptsUpdated\b|\bBXWritePC\b|\bwriteSpecialRegister\b/.test(b.body)
      ? ' if (core.interruptsUpdated) core.io = true;' : '';
    dispatch += `    case ${k}: dc = h${k}(core, opcode, opcodePC, opcode2);${irq} break;\n`;
  });
  dispatch += `    default: dc = h${bl}(core, opcode, opcodePC, opcode2);\n    }`;
  const body = `'use strict';
${PRELUDE}
${handlers}
const exec = function executeInstruction() {
  if (this.interruptsUpdated) return orig.call(this);
  const opcodePC = this.PC & ~1; //ensure no LSB set PC are executed
  // (rp2040.readUint16's own first case, flash, read as half-words: the same bytes)
  const m = this.rp2040;
  const opcode = opcodePC >= ${0x10000000} && opcodePC + 1 < ${0x10000000} + m.flash.length && m.flash16
    ? m.flash16[(opcodePC - ${0x10000000}) >> 1] : this.readUint16(opcodePC);
  const kind = kinds[opcode];
  if (kind === ${FALLBACK}) return orig.call(this);
  let opcode2 = 0;
  if (kind === ${BL_OR_FALLBACK}) {
    opcode2 = this.readUint16(opcodePC + 2);
    if (!(${chain[bl].cond})) return orig.call(this);
  }
  this.PC += 2;
  const deltaCycles = H[kind](this, opcode, opcodePC, opcode2);
  this.cycles += deltaCycles;
  return deltaCycles;
};
exec.stretch = ${STRETCH.replace('BL_COND', chain[bl].cond).replace('DISPATCH', dispatch)
    .replace('@FALLBACK@', FALLBACK).replace('@BL_OR@', BL_OR_FALLBACK)};
return exec;`;
  const fn = new Function('orig', 'kinds', 'skinds', body)(orig, kinds, stretchKinds);
  fn.kinds = kinds;
  return fn;
}

const RAM = 0x20000000, FLASH = 0x10000000, FLASH_END = 0x14000000;

// runUntil's inner loop for a stretch of instructions (pico.mjs): fetch, table and body, the
// clock's counter added to, and nothing else checked per instruction but the time and the
// core's `io` flag, until the chip's next alarm, the slice's limit, an interrupt's state change
// or an access to anything but SRAM, flash and the boot ROM (the core's accessors below set
// `io`: a peripheral, SIO, the PPB, USB's RAM, whose effects reach the clock, the alarms, the
// interrupts and the watchdog). Each instruction's effects and time are exactly those of
// pico.mjs's loop taking it alone: where it reached an alarm, touched io or the limit, its time
// is added as that loop adds it (clock.tick() when an alarm is due within it), then the loop's
// own conditions are tested again before the next. Called when the core is awake, no interrupt
// is pending, the clock before `limit` and the watchdog's flags clear (the loop's conditions);
// returns the instructions taken (0: the next is for the loop: a ROM hook, a fallback, a
// sleep or break, an address outside the three). core.cycles gets their sum at the end.
const STRETCH = `function stretch(core, clock, limit, wdt, romLo, romHi, hooks) {
  const regs = core.registers, m = core.rp2040;
  const f16 = m.flash16, fEnd = ${FLASH} + m.flash.length, s16 = m.sram16, sEnd = ${RAM} + m.sram.length, r16 = m.rom16;
  let n = 0, cycles = 0;
  let next = clock.nextAlarm;
  let stopAt = next !== null && next.nanos < limit ? next.nanos : limit;
  core.io = false;
  for (;;) {
    const pc = regs[15];
    const opcodePC = pc & ~1;
    let opcode;
    if (opcodePC >= ${FLASH} && opcodePC + 1 < fEnd) opcode = f16[(opcodePC - ${FLASH}) >> 1];
    else if (opcodePC >= ${RAM} && opcodePC + 1 < sEnd) opcode = s16[(opcodePC - ${RAM}) >> 1];
    else if (opcodePC >= 0 && opcodePC < 16384 && !(pc <= romHi && pc >= romLo && hooks.has(pc))) opcode = r16[opcodePC >> 1];
    else break;
    let kind = skinds[opcode];
    let opcode2 = 0;
    if (kind >= @FALLBACK@) {
      if (kind !== @BL_OR@) break;
      opcode2 = core.readUint16(opcodePC + 2);
      if (!(BL_COND)) break;
    }
    regs[15] = pc + 2;
    let dc;
    DISPATCH
    cycles += dc;
    n++;
    const dt = dc * 8;
    const nc = clock.nanosCounter + dt;
    if (nc < stopAt && !core.io) {
      clock.nanosCounter = nc;
      continue;
    }
    // as pico.mjs's loop takes it
    core.io = false;
    const due = clock.nextAlarm;
    if (due !== null && due.nanos <= nc) clock.tick(dt);
    else clock.nanosCounter = nc;
    if (clock.nanosCounter >= limit || wdt.forced || wdt.changed || core.interruptsUpdated || core.waiting) break;
    next = clock.nextAlarm;
    stopAt = next !== null && next.nanos < limit ? next.nanos : limit;
  }
  core.cycles += cycles;
  return n;
}`;

// The core's word reads and writes with SRAM (and, for reads, flash) first: rp2040js looks
// for a peripheral at the address before it tries SRAM on every write (a miss in a table keyed
// by numbers), and tests five ranges before SRAM on a read. The same answers: an aligned
// address inside SRAM or flash is nothing else; anything else goes the original way (unaligned
// reads are reported there, as before).
function readUint32(address) {
  const m = this.rp2040;
  if ((address & 3) === 0) {
    if (address >= RAM && address + 3 < RAM + m.sram.length) return m.sramView.getUint32(address - RAM, true);
    if (address >= FLASH && address < FLASH_END) {
      const offset = address & 16777215;
      if (offset + 3 < m.flash.length) return m.flashView.getUint32(offset, true);
    }
  }
  this.io = true;
  return m.readUint32(address);
}

function writeUint32(address, value) {
  const m = this.rp2040;
  if (address >= RAM && address + 3 < RAM + m.sram.length) m.sramView.setUint32(address - RAM, value, true);
  else {
    this.io = true;
    m.writeUint32(address, value);
  }
}

// The half-word and byte accesses: rp2040js's own first two cases (flash, SRAM; SRAM alone for
// writes), the rest its own way, marked as io.
function readUint16(address) {
  const m = this.rp2040;
  if (address >= FLASH && address + 1 < FLASH + m.flash.length) return m.flashView.getUint16(address - FLASH, true);
  if (address >= RAM && address + 1 < RAM + m.sram.length) return m.sramView.getUint16(address - RAM, true);
  this.io = true;
  return m.readUint16(address);
}

function readUint8(address) {
  const m = this.rp2040;
  if (address >= FLASH && address < FLASH + m.flash.length) return m.flash[address - FLASH];
  if (address >= RAM && address < RAM + m.sram.length) return m.sram[address - RAM];
  this.io = true;
  return m.readUint8(address);
}

function writeUint16(address, value) {
  const m = this.rp2040;
  if (address >= RAM && address + 1 < RAM + m.sram.length) m.sramView.setUint16(address - RAM, value, true);
  else {
    this.io = true;
    m.writeUint16(address, value);
  }
}

function writeUint8(address, value) {
  const m = this.rp2040;
  if (address >= RAM && address < RAM + m.sram.length) m.sram[address - RAM] = value;
  else {
    this.io = true;
    m.writeUint8(address, value);
  }
}

const ACCESSORS = { readUint32, writeUint32, readUint16, readUint8, writeUint16, writeUint8 };

// A half-word view of the chip's flash for the decoder's fetch (the same bytes; little-endian
// as the chip and every host this runs on): install() sets it on each chip it is given.
export function halfWords(core) {
  const m = core.rp2040;
  m.flash16 = new Uint16Array(m.flash.buffer, m.flash.byteOffset, m.flash.length >> 1);
  m.sram16 = new Uint16Array(m.sram.buffer, m.sram.byteOffset, m.sram.length >> 1);
  m.rom16 = new Uint16Array(m.bootrom.buffer, m.bootrom.byteOffset, m.bootrom.length * 2);
  core.io = false;
}

// Replace the decoder and the word accesses of every CortexM0Core (the class of `core`), and
// give this chip its half-word view. Call it with each new chip. Returns null, or why not.
export function install(core) {
  if (process.env.ZENN_PICO_CORE === 'plain') return 'ZENN_PICO_CORE=plain';
  const proto = Object.getPrototypeOf(core);
  if (proto.executeInstruction.fastcore) {
    halfWords(core);
    return null;
  }
  try {
    const version = rp2040jsVersion();
    if (version !== CHECKED) return `rp2040js ${version}: fastcore.mjs was checked against ${CHECKED}`;
    halfWords(core);
    const fast = build(coreSource(), proto.executeInstruction);
    for (const [name, fn] of [['executeInstruction', fast], ...Object.entries(ACCESSORS)]) {
      fn.fastcore = true;
      fn.plain = proto[name];
      proto[name] = fn;
    }
    return null;
  } catch (e) {
    return String(e && e.message || e);
  }
}

// The original methods (for corecheck.mjs's plain chip), whether installed or not.
export function plainMethods(core) {
  const proto = Object.getPrototypeOf(core);
  const out = {};
  for (const name of ['executeInstruction', ...Object.keys(ACCESSORS)]) out[name] = proto[name].plain || proto[name];
  return out;
}

export { readUint32 as fastReadUint32, writeUint32 as fastWriteUint32, ACCESSORS as fastAccessors };

// The stretch loop of this core's decoder (pico.mjs's runUntil), or null (rp2040js's own decoder)
export function stretchOf(core) {
  const f = Object.getPrototypeOf(core).executeInstruction;
  return f.fastcore && f.stretch || null;
}

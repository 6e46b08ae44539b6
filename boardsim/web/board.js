// Drawing the table and the OLED in a canvas, from the board description of boardsim/draw.py
// and the state lines of boardsim/target/live.py; the firmware's events in words, the score
// sheet and the result banners. Used by the play page and the HTML replay.
// The same picture as boardsim/draw.py's Painter (GIF): end b at the top, end a at the bottom.
// describeEvent() has a twin in boardsim/render.py (describe_event): tests/test_play.py holds
// the two to the same words.
"use strict";
const ZennBoard = (() => {
  const MX = 12, MY = 24;           // margins (px): room above and below for the ends' names
  const HAND = 0, BOARD = 1, CUP_A = 2, CUP_B = 3, OFF = 4;
  const STATE_NAMES = ["in hand", "on the board", "in cup a", "in cup b", "off the board"];
  const TRAIL_PTS = 400;
  const REST_MS = 300;

  // what each section is called, for players
  const SECTION = { back4: "4-point section", cup3: "3-point section by the cup", pocket: "pocket",
    zline: "Zenn line", z3: "Z strip", e2: "E strip", n2: "inner N strip", n3: "outer N strip", cup: "cup" };
  function zoneWords(z) {
    if (!z) return "";
    if (z === "center") return "the center circle";
    if (z === "off") return "off the board";
    const [end, key] = z.split(".");
    if (key === "cup") return `cup ${end}`;
    return `end ${end}'s ${SECTION[key] || key}`;
  }

  class View {
    constructor(canvas, desc, scale) {
      this.c = canvas;
      this.d = desc;
      this.s = scale;
      canvas.width = Math.round(desc.width * scale) + 2 * MX;
      canvas.height = Math.round(desc.length * scale) + 2 * MY;
      this.ctx = canvas.getContext("2d");
      this.bg = null;
      this.game = null;
      this.trails = {};         // chip -> [[x, y] mm]: its last slide (until it is picked up)
      this.lastXY = {};         // chip -> {x, y, state, movedT}
      this.trackedT = null;
    }
    // board mm -> canvas px, and back
    px(x, y) { return [MX + (x + this.d.width / 2) * this.s, MY + (this.d.length / 2 - y) * this.s]; }
    mm(px, py) { return [(px - MX) / this.s - this.d.width / 2, this.d.length / 2 - (py - MY) / this.s]; }

    // the game being played ({game, options, trapper}) or null: what the sections are worth
    setGame(g) {
      const k = JSON.stringify(g || null);
      if (k === this.gameKey) return;
      this.gameKey = k; this.game = g; this.bg = null;
    }

    // the words drawn on the board: [{x, y, text, size, colour, align}] (mm), for the game
    labels() {
      const d = this.d, g = this.game, out = [];
      const dark = "rgba(70,45,20,0.85)", faint = "rgba(90,60,30,0.5)";
      out.push({ x: 0, y: d.length / 2, dy: -12, text: "end b", size: 15, colour: "#e8d8c0", end: "b" });
      out.push({ x: 0, y: -d.length / 2, dy: 13, text: "end a", size: 15, colour: "#e8d8c0", end: "a" });
      const start = g && g.game === "bowling" ? ((g.options && g.options.shooter_end) || "a") : null;
      for (const e of ["a", "b"]) {
        const p = centroid(d.zones[`${e}.pocket`][0]);
        const side = e === "a" ? 1 : -1;     // beside the right-hand block as seen from above
        const name = `pocket ${e}` + (e === start ? ": start" : "");
        out.push({ x: p[0] + side * 52, y: p[1], text: e === "a" ? `\u2190 ${name}` : `${name} \u2192`,
          size: 11, colour: e === start ? "#8a2a00" : dark, align: e === "a" ? "left" : "right", what: "pocket", end: e });
      }
      if (g && g.game === "bowling") {
        const se = (g.options && g.options.shooter_end) || "a";
        for (const lab of d.labels) {
          const key = lab.zone.split(".")[1];
          const table = lab.end === se ? d.pins.shooter : d.pins.pin;
          const n = table[key];
          out.push({ x: lab.x, y: lab.y, dy: -7, text: `${n}`, size: 17, colour: dark, zone: lab.zone, pins: n });
          out.push({ x: lab.x, y: lab.y, dy: 9, text: n === 1 ? "pin" : "pins", size: 10, colour: dark });
        }
        const pe = se === "a" ? "b" : "a";
        const [cx, cy] = d.cups[pe === "a" ? 0 : 1];
        out.push({ x: cx, y: cy + (pe === "b" ? 38 : -38), text: "Zenn: strike", size: 11, colour: dark });
        out.push({ x: 0, y: 0, dy: -8, text: "0 pins", size: 12, colour: dark });
        out.push({ x: 0, y: 0, dy: 8, text: "(gutter)", size: 10, colour: dark });
        const yS = se === "a" ? -d.length / 2 : d.length / 2, yP = -yS;
        out.push({ x: d.width / 2 - 4, y: yS, dy: se === "a" ? 13 : -12, text: "shooter's side", size: 11, colour: "#ffd27f", align: "right" });
        out.push({ x: d.width / 2 - 4, y: yP, dy: se === "a" ? -12 : 13, text: "pin side", size: 11, colour: "#ffd27f", align: "right" });
      } else if (g && (g.game === "trap1" || g.game === "trap2")) {
        for (const e of ["a", "b"]) {
          const r = d.zones[`${e}.back4`][0];
          const yb = r.reduce((m, p) => (e === "a" ? Math.min(m, p[1]) : Math.max(m, p[1])), 0);
          out.push({ x: 0, y: yb + (e === "a" ? 40 : -40), text: `backcourt ${e}`, size: 15, colour: dark, what: "backcourt" });
          const zl = centroid(d.zones[`${e}.zline`][0]);
          out.push({ x: zl[0], y: zl[1] + (e === "a" ? 14 : -14), text: `P${e === "a" ? 1 : 2}'s Zenn line`, size: 10, colour: dark });
        }
        out.push({ x: 0, y: 0, text: "center", size: 12, colour: dark });
        const tr = g.trapper;
        if (tr) out.push({ x: -d.width / 2 + 4, y: tr === 1 ? -d.length / 2 : d.length / 2, dy: tr === 1 ? 13 : -12,
          text: `P${tr} traps first`, size: 11, colour: "#ffd27f", align: "left" });
        for (const lab of d.labels) {
          if (lab.text) out.push({ x: lab.x, y: lab.y, text: lab.text, size: Math.round(40 * this.s), colour: faint });
        }
      } else {
        for (const lab of d.labels) {
          out.push({ x: lab.x, y: lab.y, text: lab.text || lab.pts, size: Math.max(10, Math.round(40 * this.s)), colour: faint });
        }
      }
      return out;
    }

    poly(ring, fill, stroke) {
      const g = this.ctx;
      g.beginPath();
      ring.forEach((p, i) => { const [x, y] = this.px(p[0], p[1]); if (i) g.lineTo(x, y); else g.moveTo(x, y); });
      g.closePath();
      if (fill) { g.fillStyle = fill; g.fill(); }
      if (stroke) { g.strokeStyle = stroke; g.lineWidth = 1; g.stroke(); }
    }

    background() {
      if (this.bg) { this.ctx.putImageData(this.bg, 0, 0); return; }
      const g = this.ctx, d = this.d, game = this.game;
      g.fillStyle = "#2b2622"; g.fillRect(0, 0, this.c.width, this.c.height);
      this.poly(d.outline, "#d2ad7a", "#5a3d1e");
      for (const [name, polys] of Object.entries(d.zones)) {
        const key = name.split(".").pop();
        if (key === "zline") continue;
        for (const ring of polys) this.poly(ring, d.zone_colours[key] || null, "#8a6a44");
      }
      if (game && (game.game === "trap1" || game.game === "trap2")) {
        for (const e of ["a", "b"]) for (const z of ["back4", "cup3"]) {
          for (const ring of d.zones[`${e}.${z}`]) this.poly(ring, "rgba(120,160,200,0.28)", null);
        }
      }
      for (const ring of d.zones["a.zline"].concat(d.zones["b.zline"])) this.poly(ring, "#3a2a1a", null);
      for (const e of ["a", "b"]) for (const ring of d.zones[`${e}.pocket`]) this.poly(ring, "rgba(255,255,255,0.35)", "#7a5a34");
      for (const [cx, cy, r] of d.cups) {
        const [x, y] = this.px(cx, cy);
        g.beginPath(); g.arc(x, y, r * this.s, 0, 2 * Math.PI);
        g.fillStyle = "#1a1410"; g.fill(); g.strokeStyle = "#000"; g.stroke();
      }
      for (const ring of d.blocks) this.poly(ring, "#6b4423", "#3a230f");
      g.fillStyle = "#a88a60";
      for (const [x, y] of d.pads) { const [a, b] = this.px(x, y); g.fillRect(a - 1, b - 1, 2, 2); }
      g.textBaseline = "middle";
      for (const lab of this.labels()) {
        const [x, y] = this.px(lab.x, lab.y);
        g.font = `${lab.size >= 15 ? "bold " : ""}${lab.size}px sans-serif`;
        g.textAlign = lab.align || "center";
        g.fillStyle = lab.colour;
        g.fillText(lab.text, x, y + (lab.dy || 0));
      }
      this.bg = g.getImageData(0, 0, this.c.width, this.c.height);
    }

    // each chip's last slide: from where it began to move until it is picked up (a chip
    // still for REST_MS or more starts a new trail when it moves again)
    track(st) {
      if (!st || !st.chips || st.t === this.trackedT) return;
      this.trackedT = st.t;
      for (const [name, state, x, y] of st.chips) {
        const p = [x / 10, y / 10], last = this.lastXY[name];
        if (state === HAND) { delete this.trails[name]; delete this.lastXY[name]; continue; }
        if (state !== BOARD) {                      // in a cup or off: the trail ends there and stays
          if (last && last.state === BOARD && this.trails[name] && st.t - last.movedT <= REST_MS * 3) this.trails[name].push(p);
          if (last) last.state = state;
          continue;
        }
        if (last && last.state === BOARD && (last.x !== p[0] || last.y !== p[1])) {
          let t = this.trails[name];
          if (!t || st.t - last.movedT > REST_MS) t = this.trails[name] = [[last.x, last.y]];
          t.push(p);
          if (t.length > TRAIL_PTS) t.splice(1, 1);
          this.lastXY[name] = { x: p[0], y: p[1], state, movedT: st.t };
        } else if (!last || last.state !== BOARD) {
          this.lastXY[name] = { x: p[0], y: p[1], state, movedT: -1e9 };
        }
      }
    }

    // st: a state line; extra(ctx): draws on top (the aiming arrow)
    draw(st, extra) {
      this.background();
      const g = this.ctx, d = this.d;
      this.track(st);
      for (const [name, t] of Object.entries(this.trails)) {
        if (!d.chips[name] || t.length < 2) continue;
        g.beginPath();
        t.forEach((p, i) => { const [x, y] = this.px(p[0], p[1]); if (i) g.lineTo(x, y); else g.moveTo(x, y); });
        g.globalAlpha = 0.8; g.strokeStyle = "#3a2a1a"; g.lineWidth = 4; g.stroke();   // a dark edge
        g.strokeStyle = d.chips[name].colour; g.lineWidth = 2; g.stroke(); g.globalAlpha = 1;
      }
      for (const [name, state, x, y, amp] of (st && st.chips) || []) {
        if (state !== BOARD) continue;
        const c = d.chips[name];
        const [cx, cy] = this.px(x / 10, y / 10);
        const r = c.r * this.s;
        g.globalAlpha = 0.35 + 0.65 * Math.min(1, amp / 1000);
        g.beginPath(); g.arc(cx, cy, r, 0, 2 * Math.PI);
        g.fillStyle = c.colour; g.fill(); g.strokeStyle = "#111"; g.lineWidth = 1.5; g.stroke();
        g.beginPath(); g.arc(cx, cy, r * 0.6, 0, 2 * Math.PI);
        g.strokeStyle = name === "small" ? "#888" : "#fff"; g.setLineDash([3, 3]); g.stroke(); g.setLineDash([]);
        g.globalAlpha = 1;
      }
      const lit = (st && st.lit) || [];
      for (let i = 0; i < lit.length; i += 2) {
        const [x, y] = this.px(d.pads[lit[i]][0], d.pads[lit[i]][1]);
        const k = Math.min(1, lit[i + 1] / 600);
        g.beginPath(); g.arc(x, y, 1.5 + 2.5 * k, 0, 2 * Math.PI);
        g.fillStyle = `rgba(255,${Math.round(120 + 80 * k)},40,${0.35 + 0.65 * k})`; g.fill();
      }
      if (extra) extra(g, this);
    }

    chipAt(st, x, y) {   // the chip on the board under the point (mm), or null
      for (const [name, state, cx, cy] of (st && st.chips) || []) {
        if (state !== BOARD) continue;
        if (Math.hypot(cx / 10 - x, cy / 10 - y) <= this.d.chips[name].r) return name;
      }
      return null;
    }

    zoneAt(x, y) {       // the zone names under a point (mm), most specific first
      const out = [];
      for (const [name, polys] of Object.entries(this.d.zones)) {
        if (polys.some((r) => inside(r, x, y))) out.push(name);
      }
      for (const [i, [cx, cy, r]] of this.d.cups.entries()) if (Math.hypot(x - cx, y - cy) < r) out.push(`${"ab"[i]}.cup`);
      const rank = (z) => ["pocket", "cup", "zline", "center"].indexOf(z.split(".").pop()) + 1 || 9;
      return out.sort((p, q) => rank(p) - rank(q));
    }
  }

  function centroid(ring) {
    let x = 0, y = 0;
    for (const p of ring) { x += p[0]; y += p[1]; }
    return [x / ring.length, y / ring.length];
  }
  function inside(ring, x, y) {
    let c = false;
    for (let i = 0, j = ring.length - 1; i < ring.length; j = i++) {
      const [xi, yi] = ring[i], [xj, yj] = ring[j];
      if ((yi > y) !== (yj > y) && x < (xj - xi) * (y - yi) / (yj - yi) + xi) c = !c;
    }
    return c;
  }

  // the model's frame: 1024 bytes as hex, page-major (page p, column x at p*128+x, bit j = row 8p+j)
  function drawOled(canvas, hex, px, on) {
    canvas.width = 128 * px; canvas.height = 64 * px;
    const g = canvas.getContext("2d");
    g.fillStyle = "#050a0c"; g.fillRect(0, 0, canvas.width, canvas.height);
    if (!hex || !on) return;
    g.fillStyle = "#9fe8ff";
    for (let p = 0; p < 8; p++) {
      for (let x = 0; x < 128; x++) {
        const i = 2 * (p * 128 + x);
        const b = parseInt(hex.substr(i, 2), 16);
        if (!b) continue;
        for (let j = 0; j < 8; j++) if ((b >> j) & 1) g.fillRect(x * px, (p * 8 + j) * px, px, px);
      }
    }
  }

  // ---- the events in words (the same words as boardsim/render.py's describe_event) ----------
  // the firmware's games, from its registry (boardsim/games.py as_json(): the play page's
  // api/board, the replay's data): name -> {name, title, setup, players}
  let GAMES = {};
  function setGames(list) { GAMES = {}; for (const g of list || []) GAMES[g.name] = g; }
  function title(name) { return GAMES[name] ? GAMES[name].title : `${name}`; }
  const TRAP_RESULT = {
    trapped_stuck: "Trapped! The small chip did not get out of the backcourt",
    trapped_hit: "Trapped! The small chip hit a big chip in its backcourt",
    trapped_off: "Trapped! The small chip left the board from the backcourt",
    trapped_basket: "Trapped! The fugitive sank the small chip",
    out_of_shots: "15 shots used: the fugitive got away",
    trapper_sank_small: "The trapper sank the small chip",
    escaped: "Escaped from the backcourt",
    penalty: "A big chip sank the small chip: 5 penalty shots",
  };
  const SMALL_AT = { field: "in the field", "a.backcourt": "in backcourt a", "b.backcourt": "in backcourt b",
    cup: "in a cup", off: "off the board", none: "not on the board" };
  const FOULS = { same_chip: "foul: the same big chip twice in a turn (it counts as a shot)",
    out_of_turn: "foul: shot out of turn", no_shots_left: "foul: no shots left (it does not count)" };
  const PROMPTS = { setup: "set up the chips", small_to_center: "put the small chip in the center circle",
    big_to_center: "put the big chip in the center circle", both_to_center: "put both chips in the center circle" };
  const REFUSED = { moving: "wait until the chips stop", nothing: "nothing to take back", not_now: "not now",
    not_here: "not used here" };
  const PAD_FAULT = { pad_stuck: "is stuck", pad_dead: "is dead", pad_off: "is blind", pad_flicker: "flickers",
    mux_dead: "is dead" };
  const CHIP_FAULT = { too_many: "Too many chips on the board", two_small: "Two small chips on the board",
    big_chip: "A big chip on the board (this game uses only the small chip)" };
  const JOURNAL_FAULT = { foreign: "a foreign journal file", damaged: "the journal is damaged",
    refused: "a journal entry the rules refuse", io: "a flash write failed: not saved", full: "the journal is full: not saved" };

  const BEST_FAULT = { io: "the flash could not be read or written: not saved" };

  // the best games (firmware/best.py): the new ones this game made, then both tables
  function bestGames(e) {
    const table = e.game === "bowling" ? "the best bowling scores" : "the quickest traps";
    const news = (e.new || []).map((n) => `P${n.player} is no. ${n.rank}`).join(", ");
    const bowl = (e.bowling || []).map((r) => `${r.rank}. ${r.score} by P${r.player} (game ${r.game})`).join(", ");
    const trap = (e.trap || []).map((r) => `${r.rank}. ${plural(r.shots, "shot")} by P${r.player} ` +
      `(${title(r.variant)}, game ${r.game})`).join(", ");
    return (news ? `New best! ${news} in ${table}. ` : (e.game ? "No new best. " : "")) +
      `Best bowling: ${bowl || "none yet"}; quickest traps: ${trap || "none yet"}`;
  }

  function plural(n, one, many) { return `${n} ${n === 1 ? one : (many || one + "s")}`; }
  function bowlingResult(e) {
    switch (e.result) {
      case "strike": return "Strike! (a Zenn)";
      case "spare": return e.split ? "Split! A spare off a bank shot" : "Spare! (a Zenn)";
      case "sink9": return e.pins === 9 ? "sunk without a Zenn: 9 pins" : "sunk without a Zenn: the frame counts 9";
      case "pins": return `${plural(e.pins, "pin")}` + (e.zone ? ` (${zoneWords(e.zone)})` : "");
      case "gutter": return "gutter ball: no pins" + (e.zone ? ` (${zoneWords(e.zone)})` : "");
      case "no_basket": return "no basket: no more pins" + (e.zone ? ` (${zoneWords(e.zone)})` : "");
      default: return `${e.result}`;
    }
  }
  function fields(e) {    // an event nobody taught us: its fields in plain words
    return Object.entries(e).filter(([k]) => k !== "ev").map(([k, v]) =>
      `${k.replace(/_/g, " ")} ${Array.isArray(v) ? v.join(" ") : (v && typeof v === "object") ? fields(v) : v}`).join(", ");
  }

  function describeEvent(e) {
    const P = `P${e.player}`;
    switch (e.ev) {
      case "boot": {
        let s = e.reset === "watchdog" ? "The scoreboard restarted (its watchdog)" : "The scoreboard is on";
        if (e.calib === "loaded") s += "; pads calibrated";
        else if (e.calib === "damaged") s += "; calibration damaged, running on defaults";
        else if (e.calib === "missing") s += "; pads not calibrated (defaults)";
        return s;
      }
      case "game":      // what its start pages asked (its registry line's SETUP)
        if (e.trapper !== undefined) return `New game: ${title(e.game)}, P${e.trapper} traps first` + (e.coin ? " (coin flip)" : "");
        return `New game: ${title(e.game)}, ${plural(e.players, "player")}` +
          (e.shooter_end !== undefined ? `, shooting from end ${e.shooter_end}` : "");
      case "coin": return `Coin flip: P${e.winner} won`;
      case "restored":
        return `Game restored after ${e.reset === "watchdog" ? "a watchdog restart" : "a power cut"}: ` +
          `${title(e.game)}, ${plural(e.entries, "entry", "entries")} played back` + (e.torn ? " (the last write was torn)" : "");
      case "shot": {
        let s;
        if (e.role) {
          s = e.role === "trapper" ? `${P} (trapper) shot a big chip` + (e.slot !== undefined ? ` (no. ${e.slot + 1})` : "")
            : `${P} (fugitive) shot the small chip` + (e.escape ? " to escape" : "");
          s += `: small chip ${SMALL_AT[e.small] || e.small}`;
          if (TRAP_RESULT[e.result]) s += `. ${TRAP_RESULT[e.result]}`;
          if (e.round !== undefined) s += `. Round ${e.round}: ${plural(e.shots, "trapper shot")}` + (e.penalty ? ` + ${e.penalty} penalty` : "");
          else s += `. ${plural(e.shots, "trapper shot")} of ${e.shots + e.left}`;
          if (e.foul) s += `; ${FOULS[e.foul] || e.foul}`;
          if (PROMPTS[e.prompt]) s += `; next: ${PROMPTS[e.prompt]}`;
        } else if (e.frame !== undefined) {
          s = `${P}, frame ${e.frame}, ball ${e.ball}: ${bowlingResult(e)}`;
          if (e.manual) s += ", set by hand";
        } else {
          const { ev, player, game, ...rest } = e;
          s = `${P} shot: ${fields(rest)}`;
        }
        if (e.sure === false) s += " (the pads were unsure: check the chips)";
        return s;
      }
      case "undo":
        if (e.frame === undefined && !e.role) return `Shot taken back: ${P} plays again`;
        if (e.role) return `Shot taken back: ${P} (${e.role}) plays again, ${plural(e.shots, "trapper shot")} so far`;
        return `Shot taken back: ${P} plays frame ${e.frame}, ball ${e.ball} again` +
          (e.put_back ? `: put the chip back in ${zoneWords(e.put_back)}` : "");
      case "turn":
        if (e.role === "fugitive") return `${P}'s turn: the fugitive` + (e.escape ? ", an escape shot" : "");
        return `${P}'s turn: the trapper, ${plural(e.shots, "shot")} so far`;
      case "round": return `Round ${e.round}: P${e.trapper} traps`;
      case "setup": return e.ok ? "Set-up seen: three big chips on the Zenn line, the small chip in the center: shoot"
        : "Set up: three big chips on the trapper's Zenn line, the small chip in the center circle";
      case "refused": return `${e.button} refused: ${REFUSED[e.why] || e.why}`;
      case "game_over": {
        if (Array.isArray(e.players)) {
          const t = e.players.map((p, i) => `P${i + 1} ${p.total}`).join(", ");
          if (e.players.length < 2) return `Game over: ${t}`;
          const best = Math.max(...e.players.map((p) => p.total));
          const w = e.players.map((p, i) => p.total === best ? `P${i + 1}` : null).filter(Boolean);
          return `Game over: ${t}. ` + (w.length > 1 ? `A tie (${w.join(", ")})` : `${w[0]} wins`);
        }
        if (e.reason !== undefined) {
          return `Game over: P${e.winner} wins. ` + (TRAP_RESULT[e.reason] || e.reason) + ` (P${e.trapper} trapped, ${plural(e.shots, "shot")})`;
        }
        if (!e.rounds) { const { ev, game, ...rest } = e; return `Game over: ${fields(rest)}`; }
        const rs = e.rounds.map((r, i) => `round ${i + 1}: P${r.trapper} ${plural(r.shots + r.penalty, "shot")}` +
          (r.penalty ? ` (${r.penalty} penalty)` : "")).join(", ");
        return `Game over: ${e.winner ? `P${e.winner} wins` : "a tie"}; ${rs}`;
      }
      case "fault": {
        const on = e.on !== false;
        if (e.what === "button") return on ? `The ${e.button} button is stuck down` : `The ${e.button} button is free again`;
        if (e.what === "chips") return (CHIP_FAULT[e.why] || e.why) + (on ? "" : ": cleared");
        if (e.what === "pads" && e.code === "hand") return on ? "A hand hovers over the pads" : "The hand has gone";
        if (e.what === "pads") {
          const what = e.code === "mux_dead" ? `Multiplexer ${e.mux}` : `Pad ${(e.pad || []).join(",")}`;
          return `${what} ${PAD_FAULT[e.code] || e.code}: left out of the fits`;
        }
        if (e.what === "cup") return `The beam of cup ${e.cup} chatters`;
        if (e.what === "journal") return `Journal: ${JOURNAL_FAULT[e.why] || e.why}` + (e.file ? ` (${e.file})` : "");
        if (e.what === "best") return "Best games: " + (e.why === "damaged"
          ? `${plural(e.records, "damaged record")} left out` : (BEST_FAULT[e.why] || e.why));
        if (e.what === "config") return `config.json: ${e.key || "the file"}: ${e.msg}`;
        return `Fault: ${fields(e)}`;
      }
      case "best": return bestGames(e);
      case "calib": {
        const step = { empty: "empty board", small: "small chip", big: "big chip", save: "saved" }[e.step] || e.step;
        return `Calibration, ${step}` + (e.ok === false ? ": failed" : "") + (e.value !== undefined ? `: ${e.value}` : "") +
          (e.bad !== undefined ? `: ${plural(e.bad, "bad pad")}` : "");
      }
      default: return `${(e.ev || "event").replace(/_/g, " ")}: ${fields(e)}`;
    }
  }

  // Trap Zenn: does this shot pass the turn (so that the turn line after it is its own)? The
  // fugitive has one shot a turn, the trapper three (and Trap Zenn 1 fifteen in all). A turn
  // line that no shot passed is a turn ended by the button: an entry undo takes back, as a shot.
  function passesTurn(s) {
    return !!s && (s.role === "fugitive" || s.turn_shot >= 3 || s.left === 0);
  }
  function* entryKinds(events) {     // per event: "entry" (undo can take it back), "undo", "game" or null
    let lastShot = null, prev = null;
    for (const e of events) {
      let k = null;
      if (e.ev === "game") k = "game";
      else if (e.ev === "shot") k = "entry";
      else if (e.ev === "undo") k = "undo";
      else if (e.ev === "turn" && prev !== "game" && !((prev === "shot" || prev === "round") && passesTurn(lastShot))) k = "entry";
      if (e.ev === "shot") lastShot = e;
      prev = e.ev;
      yield k;
    }
  }

  // the event log: each event in words, the shots an undo took back marked
  function logEntries(events) {
    const out = [], stack = [];
    const kinds = entryKinds(events);
    for (const e of events) {
      const d = { text: describeEvent(e), ev: e.ev, undone: false }, k = kinds.next().value;
      if (k === "game") stack.length = 0;
      else if (k === "entry") stack.push(d);
      else if (k === "undo" && stack.length) stack.pop().undone = true;
      out.push(d);
    }
    return out;
  }

  // ---- the score sheet ------------------------------------------------------------------------
  // Zenn Bowling: per player the balls still standing (undo takes the last one back), marks as
  // the firmware sends them, running totals by conventional bowling scoring. Trap Zenn: shots
  // grouped by turns, per round. kind: "bowling", "trap" or null (a game without a sheet of
  // its own: the log says its events in words).
  function sheet(events) {
    let game = null, bowl = null, over = null;
    const entries = [], kinds = entryKinds(events);
    for (const e of events) {
      const k = kinds.next().value;
      if (e.ev === "game") {
        game = e; over = null; entries.length = 0;
        if (e.game === "bowling") bowl = Array.from({ length: e.players }, () => []);
      } else if (!game) {
        continue;
      } else if (k === "entry") {
        entries.push(e.ev === "shot" ? { shot: e } : { endTurn: e });
      } else if (e.ev === "turn" && entries.length) {
        entries[entries.length - 1].turn = e;
      } else if (k === "undo") {
        entries.pop(); over = null;
      } else if (e.ev === "game_over") {
        over = e;
      }
    }
    if (!game) return null;
    if (game.game === "bowling") {
      for (const en of entries) bowl[en.shot.player - 1].push(en.shot);
      return { kind: "bowling", game: game.game, players: bowl.map(bowlingRow), over };
    }
    if (game.game === "trap1" || game.game === "trap2") return trapSheet(game, entries, over);
    return { kind: null, game: game.game, over };
  }

  function bowlingRow(balls) {
    const frames = Array.from({ length: 10 }, () => ({ marks: [], pins: [], cum: null }));
    for (const b of balls) { const f = frames[b.frame - 1]; if (!f) continue; f.marks[b.ball - 1] = b.mark; f.pins[b.ball - 1] = b.pins; }
    const rolls = [], first = [];
    frames.forEach((f, i) => { first.push(rolls.length); for (const p of f.pins) if (p !== undefined) rolls.push(p); });
    let cum = 0;
    for (let i = 0; i < 10; i++) {
      const f = frames[i], k = first[i], n = f.pins.filter((p) => p !== undefined).length;
      let v = null;
      if (i < 9) {
        if (n >= 1 && f.pins[0] === 10) v = rolls.length >= k + 3 ? 10 + rolls[k + 1] + rolls[k + 2] : null;
        else if (n >= 2 && f.pins[0] + f.pins[1] === 10) v = rolls.length >= k + 3 ? 10 + rolls[k + 2] : null;
        else if (n >= 2) v = f.pins[0] + f.pins[1];
      } else if (n >= 2) {
        const bonus = f.pins[0] === 10 || f.pins[0] + f.pins[1] === 10;
        if (!bonus || n >= 3) v = f.pins.reduce((a, b) => a + (b || 0), 0);
      }
      if (v === null) break;
      cum += v; f.cum = cum;
    }
    const last = balls[balls.length - 1];
    return { frames, total: last ? last.total : 0 };
  }

  function trapSheet(game, entries, over) {
    const rounds = [];
    let round = null, turn = null, byRound = false, limit = null;
    for (const en of entries) {
      const s = en.shot;
      if (s) {
        if (s.round !== undefined) byRound = true;            // Trap Zenn 2: two rounds
        if (s.left !== undefined) limit = s.shots + s.left;   // Trap Zenn 1: 15 shots
        const r = s.round || 1;
        if (!round || round.n !== r) { round = { n: r, trapper: s.role === "trapper" ? s.player : 3 - s.player, turns: [], shots: 0, penalty: 0 }; rounds.push(round); turn = null; }
        if (!turn || turn.player !== s.player || turn.closed) { turn = { player: s.player, role: s.role, shots: [] }; round.turns.push(turn); }
        turn.shots.push(s);
        round.shots = s.shots; round.penalty = s.penalty || 0;
        if (TRAP_RESULT[s.result] && s.result !== "escaped" && s.result !== "penalty") round.result = s.result;
        if (en.turn) turn.closed = true;
      } else if (en.endTurn && turn) {
        turn.closed = true; turn.ended = true;
      }
    }
    return { kind: "trap", game: game.game, trapper: game.trapper, rounds, over, byRound, limit };
  }

  // the banner for an event as it comes: {text, kind} or null
  function banner(e) {
    if (e.ev === "shot" && e.frame !== undefined) {
      const t = { strike: "Strike!", spare: e.split ? "Split! Spare" : "Spare!", sink9: "9 pins",
        pins: plural(e.pins, "pin"), gutter: "Gutter", no_basket: "No basket" }[e.result] || e.result;
      return { text: `P${e.player}: ${t}`, kind: e.result === "strike" || e.result === "spare" ? "great" : "plain" };
    }
    if (e.ev === "shot" && e.role) {
      if (e.result.startsWith("trapped")) return { text: `Trapped! P${e.player} is caught`, kind: "great" };
      if (e.result === "escaped") return { text: `P${e.player} escaped!`, kind: "great" };
      if (e.result === "penalty") return { text: `P${e.player}: +5 penalty shots`, kind: "plain" };
      if (e.result === "out_of_shots") return { text: "15 shots: the fugitive got away", kind: "great" };
      if (e.result === "trapper_sank_small") return { text: `P${e.player} sank the small chip`, kind: "plain" };
      if (e.foul) return { text: { same_chip: "Same chip twice!", out_of_turn: "Out of turn!", no_shots_left: "No shots left" }[e.foul] || e.foul, kind: "plain" };
      if (e.small && e.small.endsWith("backcourt")) return { text: `Small chip in backcourt ${e.small[0]}`, kind: "plain" };
      return null;
    }
    if (e.ev === "game_over") {
      let t;
      if (Array.isArray(e.players)) {
        const tot = e.players.map((p) => p.total), best = Math.max(...tot);
        const w = tot.map((v, i) => (v === best ? `P${i + 1}` : null)).filter(Boolean);
        t = tot.length < 2 ? `${best}` : (w.length > 1 ? `a tie, ${best}` : `${w[0]} wins, ${tot.join(" : ")}`);
      } else if (e.winner !== undefined) t = e.winner ? `P${e.winner} wins` : "a tie";
      else t = Array.isArray(e.totals) ? e.totals.map((v, i) => `P${i + 1} ${v}`).join(", ") : "";
      return { text: `Game over: ${t}`, kind: "over" };
    }
    if (e.ev === "round") return { text: `Round ${e.round}: P${e.trapper} traps`, kind: "plain" };
    return null;
  }

  return { View, drawOled, describeEvent, logEntries, entryKinds, passesTurn, sheet, banner, zoneWords, STATE_NAMES,
    setGames, title,
    HAND, BOARD, CUP_A, CUP_B, OFF };
})();

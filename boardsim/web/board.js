// Drawing the table and the OLED in a canvas, from the board description of boardsim/draw.py
// and the state lines of boardsim/target/live.py. Used by the play page and the HTML replay.
// The same picture as boardsim/draw.py's Painter (GIF): end b at the top, end a at the bottom.
"use strict";
const ZennBoard = (() => {
  const MARGIN = 12;
  const BOARD = 1, CUP_A = 2, CUP_B = 3, OFF = 4;
  const STATE_NAMES = ["in hand", "on the board", "in cup a", "in cup b", "off the board"];

  class View {
    constructor(canvas, desc, scale) {
      this.c = canvas;
      this.d = desc;
      this.s = scale;
      canvas.width = Math.round(desc.width * scale) + 2 * MARGIN;
      canvas.height = Math.round(desc.length * scale) + 2 * MARGIN;
      this.ctx = canvas.getContext("2d");
      this.bg = null;
    }
    // board mm -> canvas px, and back
    px(x, y) { return [MARGIN + (x + this.d.width / 2) * this.s, MARGIN + (this.d.length / 2 - y) * this.s]; }
    mm(px, py) { return [(px - MARGIN) / this.s - this.d.width / 2, this.d.length / 2 - (py - MARGIN) / this.s]; }

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
      const g = this.ctx, d = this.d;
      g.fillStyle = "#2b2622"; g.fillRect(0, 0, this.c.width, this.c.height);
      this.poly(d.outline, "#d2ad7a", "#5a3d1e");
      for (const [name, polys] of Object.entries(d.zones)) {
        const key = name.split(".").pop();
        if (key === "zline") continue;
        for (const ring of polys) this.poly(ring, d.zone_colours[key] || null, "#8a6a44");
      }
      for (const ring of d.zones["a.zline"].concat(d.zones["b.zline"])) this.poly(ring, "#3a2a1a", null);
      for (const [cx, cy, r] of d.cups) {
        const [x, y] = this.px(cx, cy);
        g.beginPath(); g.arc(x, y, r * this.s, 0, 2 * Math.PI);
        g.fillStyle = "#1a1410"; g.fill(); g.strokeStyle = "#000"; g.stroke();
      }
      for (const ring of d.blocks) this.poly(ring, "#6b4423", "#3a230f");
      g.font = `${Math.max(10, Math.round(40 * this.s))}px sans-serif`;
      g.textAlign = "center"; g.textBaseline = "middle";
      for (const lab of d.labels) {
        const [x, y] = this.px(lab.x, lab.y);
        g.fillStyle = "rgba(90,60,30,0.55)";
        g.fillText(lab.text || lab.pts, x, y);
      }
      g.fillStyle = "#a88a60";
      for (const [x, y] of d.pads) { const [a, b] = this.px(x, y); g.fillRect(a - 1, b - 1, 2, 2); }
      this.bg = g.getImageData(0, 0, this.c.width, this.c.height);
    }

    // st: a state line; extra(ctx): draws on top (the aiming arrow)
    draw(st, extra) {
      this.background();
      const g = this.ctx, d = this.d;
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

  function describeEvent(e) {
    if (e.ev === "shot" && e.role) {     // trap games
      let s = `P${e.player} ${e.role}, ${e.chip} chip: ${e.result}`;
      if (e.small) s += `, small chip ${e.small}`;
      if (e.shots !== undefined) s += `, shots ${e.shots}`;
      if (e.foul) s += `, foul ${e.foul}`;
      return s;
    }
    if (e.ev === "shot") {
      let s = `P${e.player} ${e.result || "shot"}`;
      if (e.pins !== undefined) s += ` ${e.pins} pins`;
      if (e.zone) s += ` (${e.zone})`;
      if (e.frame) s += `, frame ${e.frame} ball ${e.ball}`;
      if (e.total !== undefined) s += `, total ${e.total}`;
      return s;
    }
    if (e.ev === "game_over") {
      if (e.game === "bowling") return "game over: " + e.players.map((p, i) => `P${i + 1} ${p.total}`).join(", ");
      return `game over: winner P${e.winner}` + (e.reason ? ` (${e.reason})` : "");
    }
    if (e.ev === "game") return `game: ${e.game}` + (e.players ? `, ${e.players} player${e.players > 1 ? "s" : ""}` : "");
    return JSON.stringify(e);
  }

  return { View, drawOled, describeEvent, STATE_NAMES, BOARD, CUP_A, CUP_B, OFF };
})();

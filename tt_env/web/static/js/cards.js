// Playing cards as SVG. A card is the engine's int: suit * 13 + rank - 1, suits C D H S, ranks A..K.
const NS = "http://www.w3.org/2000/svg";
export const RANK_TEXT = ["A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K"];
export const SUIT_NAMES = ["clubs", "diamonds", "hearts", "spades"];
export const SUIT_SYMBOLS = ["\u2663", "\u2666", "\u2665", "\u2660"];
const RED = "#c62828";
const BLACK = "#1d1d22";

// Each suit drawn in a 100 x 100 box.
const SUIT_SHAPES = [
  // clubs: three leaves and a stem
  [["circle", { cx: 50, cy: 27, r: 22 }], ["circle", { cx: 25, cy: 60, r: 22 }], ["circle", { cx: 75, cy: 60, r: 22 }],
   ["circle", { cx: 50, cy: 52, r: 14 }],
   ["path", { d: "M45 50 C45 75 40 90 30 100 L70 100 C60 90 55 75 55 50 Z" }]],
  [["path", { d: "M50 0 L88 50 L50 100 L12 50 Z" }]],
  [["path", { d: "M50 96 C22 72 2 54 2 30 C2 12 15 2 29 2 C40 2 47 9 50 19 C53 9 60 2 71 2 C85 2 98 12 98 30 C98 54 78 72 50 96 Z" }]],
  [["path", { d: "M50 0 C78 26 98 44 98 64 C98 80 86 90 72 90 C63 90 56 86 53 80 C54 89 58 95 66 100 L34 100 C42 95 46 89 47 80 C44 86 37 90 28 90 C14 90 2 80 2 64 C2 44 22 26 50 0 Z" }]],
];

export function rankOf(card) { return (card % 13) + 1; }
export function suitOf(card) { return Math.floor(card / 13); }
export function isRed(card) { const s = suitOf(card); return s === 1 || s === 2; }
export function cardName(card) { return RANK_TEXT[rankOf(card) - 1] + SUIT_SYMBOLS[suitOf(card)]; }
export function rankName(rank) { return RANK_TEXT[rank - 1]; }

function el(name, attrs = {}, parent = null) {
  const node = document.createElementNS(NS, name);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  if (parent) parent.appendChild(node);
  return node;
}

function suitShape(parent, suit, x, y, size, fill) {
  const g = el("g", { transform: `translate(${x} ${y}) scale(${size / 100})`, fill }, parent);
  for (const [name, attrs] of SUIT_SHAPES[suit]) el(name, attrs, g);
  return g;
}

function star(parent, cx, cy, r, fill) {
  const points = [];
  for (let i = 0; i < 10; i++) {
    const a = -Math.PI / 2 + (i * Math.PI) / 5;
    const rad = i % 2 === 0 ? r : r * 0.45;
    points.push(`${(cx + rad * Math.cos(a)).toFixed(1)},${(cy + rad * Math.sin(a)).toFixed(1)}`);
  }
  return el("polygon", { points: points.join(" "), fill, stroke: "#8a6400", "stroke-width": 1.2 }, parent);
}

// The face of `card` (wild: rank == wildRank). Size comes from the CSS class (.card, .card.small).
export function cardSVG(card, { wildRank = 0, small = false } = {}) {
  const wild = rankOf(card) === wildRank;
  const color = isRed(card) ? RED : BLACK;
  const svg = el("svg", { viewBox: "0 0 100 140", class: "card face" + (small ? " small" : "") + (wild ? " wild" : ""),
                          role: "img", "aria-label": cardName(card) + (wild ? " (wild)" : "") });
  svg.dataset.card = String(card);
  el("rect", { x: 2, y: 2, width: 96, height: 136, rx: 10, fill: wild ? "#fff3c2" : "#fdfdfb",
               stroke: wild ? "#d49b00" : "#a9a9a4", "stroke-width": wild ? 4 : 2 }, svg);
  const rank = RANK_TEXT[rankOf(card) - 1];
  const corner = el("g", {}, svg);
  const t = el("text", { x: 8, y: 33, fill: color, "font-size": rank.length > 1 ? 28 : 32, "font-weight": 700,
                         "font-family": "Helvetica, Arial, sans-serif", "letter-spacing": rank.length > 1 ? -2 : 0 }, corner);
  t.textContent = rank;
  suitShape(corner, suitOf(card), 9, 40, 20, color);
  const mirrored = corner.cloneNode(true);
  mirrored.setAttribute("transform", "rotate(180 50 70)");
  svg.appendChild(mirrored);
  suitShape(svg, suitOf(card), 26, 47, 48, color);
  if (wild) {
    star(svg, 81, 20, 13, "#f5b800");
    const label = el("text", { x: 38, y: 118, "text-anchor": "middle", "font-size": 15, "font-weight": 700,
                               fill: "#9a6b00", "font-family": "Helvetica, Arial, sans-serif" }, svg);
    label.textContent = "WILD";
  }
  const title = el("title", {}, svg);
  title.textContent = cardName(card) + (wild ? " (wild)" : "");
  return svg;
}

// The back of a card.
export function backSVG({ small = false } = {}) {
  const svg = el("svg", { viewBox: "0 0 100 140", class: "card back" + (small ? " small" : ""), role: "img",
                          "aria-label": "a card face down" });
  el("rect", { x: 2, y: 2, width: 96, height: 136, rx: 10, fill: "#f4f1e8", stroke: "#a9a9a4", "stroke-width": 2 }, svg);
  el("rect", { x: 9, y: 9, width: 82, height: 122, rx: 6, fill: "#1f4f9a" }, svg);
  // a lattice of diagonals, each clipped to the blue panel (x 9..91, y 9..131)
  const g = el("g", { stroke: "#6f95d1", "stroke-width": 2 }, svg);
  for (let k = -82; k <= 122; k += 14) {
    const x1 = Math.max(9, 9 - k), x2 = Math.min(91, 131 - k);  // y = x + k
    if (x1 < x2) el("line", { x1, y1: x1 + k, x2, y2: x2 + k }, g);
    const c = 100 + k;  // y = c - x
    const u1 = Math.max(9, c - 131), u2 = Math.min(91, c - 9);
    if (u1 < u2) el("line", { x1: u1, y1: c - u1, x2: u2, y2: c - u2 }, g);
  }
  el("rect", { x: 9, y: 9, width: 82, height: 122, rx: 6, fill: "none", stroke: "#f4f1e8", "stroke-width": 2 }, svg);
  return svg;
}

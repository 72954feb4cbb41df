// The table, a finished round, the scores and the move log, drawn from the server's views (tt_env/web/views.py).
import { h } from "./api.js";
import { backSVG, cardName, cardSVG, rankName } from "./cards.js";

export function seatLabel(seat, name, youSeat) {
  return seat === youSeat ? "You" : `player_${seat} (${name})`;
}

function cardRow(cards, wildRank, { small = false, cls = "" } = {}) {
  return h("div", { class: "cards " + cls }, cards.map((c) => cardSVG(c, { wildRank, small })));
}

function badge(text, cls) { return h("span", { class: "badge " + cls }, text); }

function seatHead(view, p, youSeat, { score = true } = {}) {
  const player = view.players[p];
  const badges = [];
  if (p === view.dealer) badges.push(badge("dealer", "dealer"));
  if (!view.game_over && p === view.current_player) badges.push(badge(view.phase === "draw" ? "to draw" : "to discard", "turn"));
  if (view.went_out === p) badges.push(badge("went out", "out"));
  return h("div", { class: "seat-head" },
    h("span", { class: "seat-name" }, seatLabel(p, player.name, youSeat)), ...badges,
    score ? h("span", { class: "seat-score", title: "total score (lower is better)" }, `score ${player.score}`) : null);
}

function opponentPanel(view, p, youSeat) {
  const player = view.players[p];
  const cls = ["seat-panel"];
  if (!view.game_over && p === view.current_player) cls.push("to-move");
  if (view.went_out === p) cls.push("went-out");
  let cards;
  if (player.hand !== null) {
    cards = cardRow(player.hand, view.wild_rank, { small: true, cls: "open" });
  } else {
    const hidden = Math.max(0, player.hand_size - player.taken.length);
    cards = h("div", { class: "cards hidden-hand" },
      Array.from({ length: hidden }, () => backSVG({ small: true })),
      player.taken.map((c) => { const s = cardSVG(c, { wildRank: view.wild_rank, small: true }); s.classList.add("taken"); return s; }));
  }
  const taken = player.taken.length ? `took ${player.taken.map(cardName).join(" ")}` : "took nothing";
  return h("div", { class: cls.join(" "), dataset: { seat: p } }, seatHead(view, p, youSeat, { score: false }), cards,
    h("div", { class: "seat-foot" }, h("span", { class: "hand-size" }, `${player.hand_size} cards`), " · ",
      h("span", { title: "cards taken from the discard pile this round and still held" }, taken),
      h("span", { class: "seat-score", title: "total score (lower is better)" }, `score ${player.score}`)));
}

// The whole table. bottom: the seat drawn large at the bottom; legal: action ids the page offers (clickable).
export function renderTable(view, { bottom = 0, youSeat = null, legal = [], onAction = null, status = "" } = {}) {
  const canAct = (a) => onAction !== null && legal.includes(a);
  const others = [];
  const n = view.players.length;
  for (let k = 1; k < n; k++) others.push((bottom + k) % n);

  const stock = h("button", { id: "stock", class: "pile" + (canAct(0) ? " playable" : ""), type: "button",
                              disabled: !canAct(0), title: canAct(0) ? "draw the top card of the stock" : "the stock" },
    backSVG(), h("span", { class: "pile-label" }, `stock ${view.stock}`));
  if (canAct(0)) stock.addEventListener("click", () => onAction(0));
  const top = view.discard_top === null ? h("div", { class: "card empty-slot" }) : cardSVG(view.discard_top, { wildRank: view.wild_rank });
  const pile = h("button", { id: "discard-pile", class: "pile" + (canAct(1) ? " playable" : ""), type: "button",
                             disabled: !canAct(1), title: canAct(1) ? "take the top card of the discard pile" : "the discard pile" },
    top, h("span", { class: "pile-label" }, `discard pile ${view.discard_count}`));
  if (canAct(1)) pile.addEventListener("click", () => onAction(1));

  const wild = h("span", { class: "wild-note" }, "\u2605 wild: ", h("b", {}, `${rankName(view.wild_rank)}s`));
  const info = h("div", { class: "round-info" },
    h("div", { class: "round-title" }, `Round ${view.round}`, h("span", { class: "round-of" }, ` (${view.round_index + 1} of ${view.rounds.length})`)),
    h("div", {}, `${view.hand_size} cards each · `, wild),
    h("div", { class: "turn-note" }, `turn ${view.turn} of at most ${view.max_turns}`),
    view.went_out !== null && !view.game_over
      ? h("div", { class: "out-note" }, `${seatLabel(view.went_out, view.players[view.went_out].name, youSeat)} went out: last turns`) : null,
    status ? h("div", { id: "status", class: "status" }, status) : null);

  const me = view.players[bottom];
  const hand = h("div", { id: "hand", class: "cards hand" + (me.hand_size > 10 ? " crowded" : "") });
  if (me.hand === null) {
    for (let i = 0; i < me.hand_size; i++) hand.appendChild(backSVG());
  } else {
    let newMarked = false;
    for (const c of me.hand) {
      const svg = cardSVG(c, { wildRank: view.wild_rank });
      if (!newMarked && c === view.new_card && bottom === view.current_player) { svg.classList.add("new"); newMarked = true; }
      if (me.taken.includes(c)) svg.classList.add("taken");
      const action = 2 + c;
      if (canAct(action)) {
        svg.classList.add("playable");
        svg.setAttribute("tabindex", "0");
        svg.addEventListener("click", () => onAction(action));
        svg.addEventListener("keydown", (e) => { if (e.key === "Enter" || e.key === " ") onAction(action); });
      } else if (onAction !== null && legal.length && legal[0] >= 2) {
        svg.classList.add("locked");
        svg.querySelector("title").textContent += ": taken from the discard pile this turn, discard another card";
      }
      hand.appendChild(svg);
    }
  }
  const bottomCls = ["seat-panel", "bottom-seat"];
  if (!view.game_over && bottom === view.current_player) bottomCls.push("to-move");
  const bottomPanel = h("div", { class: bottomCls.join(" "), dataset: { seat: bottom } }, seatHead(view, bottom, youSeat), hand);

  return h("div", { class: `felt players-${n}` },
    h("div", { class: "opponents" }, others.map((p) => opponentPanel(view, p, youSeat))),
    h("div", { class: "middle" }, stock, pile, info),
    bottomPanel);
}

// A finished round: every hand face up in its melds, the points and the totals.
export function renderRoundEnd(end, { youSeat = null, final = null, buttons = [] } = {}) {
  const ending = end.went_out === null ? `nobody went out: the round stopped after ${end.turns} turns`
    : `${seatLabel(end.went_out, end.hands[end.went_out].name, youSeat)} went out`;
  const rows = end.hands.map((hand) => h("div", { class: "end-row" + (hand.went_out ? " went-out" : ""), dataset: { seat: hand.seat } },
    h("div", { class: "end-name" }, seatLabel(hand.seat, hand.name, youSeat)),
    h("div", { class: "end-cards" },
      hand.melds.map((m) => h("div", { class: "meld", title: "a meld" }, cardRow(m, end.wild_rank, { small: true }))),
      hand.unmelded.length ? h("div", { class: "unmelded", title: "unmelded: these count" }, cardRow(hand.unmelded, end.wild_rank, { small: true })) : null),
    h("div", { class: "end-points", dataset: { points: hand.points } }, hand.went_out ? "0 (out)" : `+${hand.points}`),
    h("div", { class: "end-total", dataset: { totalSeat: hand.seat } }, String(hand.total))));
  let verdict = null;
  if (final) {
    const won = final.winners.map((p) => seatLabel(p, end.hands[p].name, youSeat));
    const you = youSeat !== null && final.winners.includes(youSeat);
    verdict = h("div", { id: "verdict", class: "verdict" },
      you ? (final.winners.length === 1 ? "Game over: you win!" : "Game over: you share the win.")
        : `Game over: ${won.join(" and ")} ${won.length > 1 ? "win" : "wins"}.`);
  }
  return h("div", { id: "round-end", class: "round-end" },
    h("h2", {}, `Round ${end.round} is over`, h("span", { class: "sub" }, ` \u2014 ${ending} (wild ${rankName(end.wild_rank)}s)`)),
    h("div", { class: "end-table" },
      h("div", { class: "end-row head" }, h("div", {}, "player"), h("div", {}, "hand in melds (unmelded cards dimmed)"),
        h("div", {}, "points"), h("div", {}, "total")),
      rows),
    verdict, buttons.length ? h("div", { class: "end-buttons" }, buttons) : null);
}

// Scores by round, one column per seat, the totals last.
export function renderScores(scores, players, { youSeat = null } = {}) {
  const head = h("tr", {}, h("th", {}, "round"), players.map((p) => h("th", { title: seatLabel(p.seat, p.name, youSeat) },
    p.seat === youSeat ? "You" : `P${p.seat}`)));
  const body = scores.rounds.map((r) => h("tr", {}, h("td", {}, String(r.round)),
    r.points.map((pts, p) => h("td", { class: r.went_out === p ? "out" : "" }, String(pts)))));
  const winners = scores.winners || [];
  const total = h("tr", { class: "total" }, h("td", {}, "total"),
    scores.totals.map((t, p) => h("td", { class: winners.includes(p) ? "winner" : "", dataset: { scoreSeat: p } }, String(t))));
  const names = h("div", { class: "score-names" }, players.map((p) =>
    h("div", {}, h("b", {}, p.seat === youSeat ? "You" : `P${p.seat}`), ` ${p.seat === youSeat ? "" : p.name}`)));
  return h("div", { class: "scores" }, h("table", { id: "scores" }, h("thead", {}, head), h("tbody", {}, body, total)), names);
}

export function eventText(event, players, youSeat) {
  const who = seatLabel(event.seat, players[event.seat].name, youSeat);
  if (event.kind === "draw_stock") return `${who} drew ${event.card === null ? "from the stock" : cardName(event.card) + " from the stock"}`;
  if (event.kind === "take_discard") return `${who} took ${cardName(event.card)} from the discard pile`;
  return `${who} discarded ${cardName(event.card)}${event.went_out ? " and went out!" : ""}`;
}

export function renderLog(events, players, youSeat, { limit = 14 } = {}) {
  return h("ol", { id: "log", class: "log" }, events.slice(-limit).map((e) =>
    h("li", { class: e.seat === youSeat ? "mine" : "", value: e.step }, eventText(e, players, youSeat),
      e.round_over ? h("span", { class: "round-over" }, " \u2014 round over") : null)));
}

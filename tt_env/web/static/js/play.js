// The Play page: set up a table, then play with the mouse against agents the server runs.
import { api, h, notify } from "./api.js";
import { cardName, cardSVG } from "./cards.js";
import { newGameBody, rulesForm, seatPicker, seedInput } from "./forms.js";
import { renderLog, renderRoundEnd, renderScores, renderTable } from "./table.js";

const GAME_KEY = "tt-play-game";
const page = { options: null, gameId: null, view: null, events: [], busy: false, hint: null, seats: null, rules: null };
const $ = (id) => document.getElementById(id);

async function init() {
  page.options = await api("GET", "/api/options");
  buildSetup();
  const saved = sessionStorage.getItem(GAME_KEY);
  if (saved) {
    try {
      const view = await loadGame(saved);
      page.gameId = saved;
      page.events = [];
      show(view);
    } catch (err) {
      sessionStorage.removeItem(GAME_KEY);
    }
  }
}

// The game's view; while the server is still busy with a move of it (409), asked again for up to 30 s.
async function loadGame(id) {
  for (let tries = 0; ; tries++) {
    try {
      return await api("GET", `/api/play/${id}`);
    } catch (err) {
      if (err.status !== 409 || tries >= 60) throw err;
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }
}

function buildSetup() {
  page.seats = seatPicker(page.options, { withHuman: true, count: 2, defaults: [] });
  page.rules = rulesForm(page.options, { compact: true });
  const start = h("button", { id: "start", class: "primary", type: "button" }, "Deal");
  start.addEventListener("click", startGame);
  $("setup").replaceChildren(h("h1", {}, "Play Three Thirteen"),
    h("p", { class: "lead" }, "Choose the table: your seat, an agent at every other seat, and the rules. ",
      "On your turn draw from the stock or take the top discard, then click a card to discard it. ",
      "Going out happens by itself when your discard leaves every other card in melds."),
    h("div", { class: "setup-grid" }, page.seats, h("div", {}, page.rules, seedInput())), start);
}

async function startGame() {
  const body = newGameBody(page.seats, page.rules);
  if (body === undefined) return;
  try {
    const view = await api("POST", "/api/play", body);
    page.gameId = view.game_id;
    sessionStorage.setItem(GAME_KEY, page.gameId);
    page.events = [];
    page.hint = null;
    show(view);
  } catch (err) {
    notify(err.message, { error: true });
  }
}

function statusText(view) {
  if (view.failure) return view.failure;
  if (!view.your_turn) return "";
  const table = view.table;
  if (table.phase === "draw") {
    const top = table.discard_top === null ? "" : ` or take ${cardName(table.discard_top)}`;
    return `Your turn: draw from the stock${top}.`;
  }
  return "Click a card to discard it.";
}

function show(view) {
  page.view = view;
  document.body.dataset.step = String(view.step);  // the position shown (tests wait on it)
  page.events.push(...view.events);
  $("setup").hidden = true;
  $("game").hidden = false;
  const t = view.table;
  const yourSeat = view.seat;
  let main;
  if (view.round_end) {
    const buttons = [];
    if (t.game_over) {
      buttons.push(h("button", { id: "new-game", class: "primary", type: "button", onclick: newGame }, "New game"));
      buttons.push(recordLink("record-link-end"));
    } else {
      buttons.push(h("button", { id: "next-round", class: "primary", type: "button", onclick: nextRound }, "Next round"));
    }
    main = renderRoundEnd(view.round_end, { youSeat: yourSeat, final: t.game_over ? t.scores : null, buttons });
  } else {
    main = renderTable(t, { bottom: yourSeat, youSeat: yourSeat, legal: view.legal, onAction: act, status: statusText(view) });
  }
  const hintButton = h("button", { id: "hint-button", type: "button", disabled: Boolean(view.round_end), onclick: showHint },
    "Show the best arrangement");
  const hintBox = h("div", { id: "hint", class: "hint-box", hidden: page.hint === null });
  if (page.hint) hintBox.append(...page.hint);
  $("game").replaceChildren(h("div", { class: "game-layout" },
    h("div", { class: "table-area" }, main, hintBox),
    h("aside", { class: "sidebar" },
      h("section", { class: "panel" }, h("h3", {}, "Scores by round"), renderScores(t.scores, t.players, { youSeat: yourSeat })),
      h("section", { class: "panel" }, h("h3", {}, "Moves"), renderLog(page.events, t.players, yourSeat)),
      h("section", { class: "panel buttons" }, hintButton, gameOver(view) ? recordLink() : null,
        h("button", { type: "button", onclick: newGame, id: "leave-game" }, "New game"),
        view.seed === null ? null : h("div", { class: "small-note" }, `seed ${view.seed}`)))));
  $("log").scrollTop = $("log").scrollHeight;
}

// The game can no longer be played: over, or stopped. Only then does the server give its record (and seed),
// which give the whole deal away.
function gameOver(view) {
  return view.table.game_over || Boolean(view.failure);
}

function recordLink(id = "record-link") {
  return h("a", { class: "button", id, href: `/api/play/${page.gameId}/record`, download: "three-thirteen-game.json",
                  title: "the game record: replay it on the Watch page or with python -m tt_env.ui.replay" },
    "Download the record");
}

async function act(action) {
  if (page.busy) return;
  page.busy = true;
  page.hint = null;
  try {
    show(await api("POST", `/api/play/${page.gameId}/action`, { action, step: page.view.step }));
  } catch (err) {
    notify(err.message, { error: true });
    await refresh();
  } finally {
    page.busy = false;
  }
}

async function nextRound() {
  if (page.busy) return;
  page.busy = true;
  try {
    show(await api("POST", `/api/play/${page.gameId}/next-round`, {}));
  } catch (err) {
    notify(err.message, { error: true });
    await refresh();
  } finally {
    page.busy = false;
  }
}

async function refresh() {
  try {
    page.events = [];
    show(await api("GET", `/api/play/${page.gameId}`));
  } catch (err) {
    notify(err.message, { error: true });
  }
}

function arrangementNodes(arr, wildRank) {
  const row = (cards) => h("div", { class: "cards" }, cards.map((c) => cardSVG(c, { wildRank, small: true })));
  return h("div", { class: "arrangement" }, arr.melds.map((m) => h("div", { class: "meld" }, row(m))),
    arr.unmelded.length ? h("div", { class: "unmelded" }, row(arr.unmelded)) : null);
}

async function showHint() {
  if (page.busy) return;  // the agents are moving: the server would answer 409
  try {
    const hint = await api("GET", `/api/play/${page.gameId}/hint`);
    const wild = page.view.table.wild_rank;
    const leaves = (penalty) => (penalty === 0 ? ": you go out" : `, leaving penalty ${penalty}`);
    const parts = [h("div", { class: "hint-line", dataset: { penalty: hint.penalty } },
      h("b", {}, "Best arrangement of your hand: "), `penalty ${hint.penalty}`), arrangementNodes(hint, wild)];
    if (hint.discard) {
      const d = hint.discard;
      parts.push(h("div", { class: "hint-line", id: "hint-discard", dataset: { card: d.card, penalty: d.penalty } },
        h("b", {}, `Best discard: ${cardName(d.card)}`), leaves(d.penalty)), arrangementNodes(d.after, wild));
    } else if (hint.take_discard) {
      const t = hint.take_discard;
      parts.push(h("div", { class: "hint-line", id: "hint-take", dataset: { penalty: t.then.penalty } },
        h("b", {}, `Taking ${cardName(t.take)}`),
        `, the best discard is ${cardName(t.then.card)}${leaves(t.then.penalty)}`), arrangementNodes(t.then.after, wild));
    }
    page.hint = parts;
    show({ ...page.view, events: [] });
  } catch (err) {
    notify(err.message, { error: true });
  }
}

function newGame() {
  sessionStorage.removeItem(GAME_KEY);
  page.gameId = null;
  page.view = null;
  page.hint = null;
  $("game").hidden = true;
  $("setup").hidden = false;
}

init().catch((err) => notify(err.message, { error: true }));

// The Watch page: open a game record, or have agents play a new game, and step through it.
import { api, h, notify } from "./api.js";
import { newGameBody, rulesForm, seatPicker, seedInput } from "./forms.js";
import { eventText, renderLog, renderRoundEnd, renderScores, renderTable } from "./table.js";

const SPEEDS = [1, 2, 4, 8, 16];
const page = { options: null, id: null, steps: 0, step: 0, seat: "all", view: null, playing: false, timer: null,
               speed: 4, seq: 0, seats: null, rules: null };
const $ = (id) => document.getElementById(id);

async function init() {
  page.options = await api("GET", "/api/options");
  page.seats = seatPicker(page.options, { count: 3, defaults: ["expert-v0", "greedy-v0", "expert-v0"] });
  page.rules = rulesForm(page.options, { compact: true });
  const file = h("input", { id: "record-file", type: "file", accept: ".json,application/json" });
  file.addEventListener("change", () => openFile(file.files[0]));
  const go = h("button", { id: "watch-new", class: "primary", type: "button", onclick: newGame }, "Play it");
  $("setup").replaceChildren(h("h1", {}, "Watch a game"),
    h("div", { class: "setup-grid" },
      h("div", { class: "panel inner" }, h("h3", {}, "Open a saved game"),
        h("p", {}, "A game record (JSON) saved by the Play page, ", h("code", {}, "python -m tt_env.ui.play --save"),
          " or ", h("code", {}, "python -m training.evaluate --save-games"), "."), file),
      h("div", { class: "panel inner" }, h("h3", {}, "Or let agents play a new game"), page.seats, page.rules, seedInput(), go)));
}

async function openFile(file) {
  if (!file) return;
  let record;
  try {
    record = JSON.parse(await file.text());
  } catch (err) {
    notify(`${file.name} is not JSON: ${err.message}`, { error: true });
    return;
  }
  try {
    start(await api("POST", "/api/watch/record", { record }));
  } catch (err) {
    notify(`${file.name}: ${err.message}`, { error: true });
  }
}

async function newGame() {
  const body = newGameBody(page.seats, page.rules);
  if (body === undefined) return;
  const button = $("watch-new");
  button.disabled = true;
  button.textContent = "Playing…";
  try {
    start(await api("POST", "/api/watch/new", body));
  } catch (err) {
    notify(err.message, { error: true });
  } finally {
    button.disabled = false;
    button.textContent = "Play it";
  }
}

function start(view) {
  page.id = view.watch_id;
  page.steps = view.steps;
  page.seat = "all";
  stop();
  buildViewer(view.seats);
  render(view);
}

const ICONS = {
  first: "M3 2h2v12H3z M14 2v12L6 8z", back: "M12 2v12L4 8z", forward: "M4 2v12l8-6z",
  last: "M11 2h2v12h-2z M2 2v12l8-6z", play: "M4 2v12l10-6z", pause: "M3 2h4v12H3z M9 2h4v12H9z",
};

function icon(name) {
  const svg = document.createElementNS("http://www.w3.org/2000/svg", "svg");
  svg.setAttribute("viewBox", "0 0 16 16");
  svg.setAttribute("class", "icon");
  svg.setAttribute("aria-hidden", "true");
  const path = document.createElementNS("http://www.w3.org/2000/svg", "path");
  path.setAttribute("d", ICONS[name]);
  svg.appendChild(path);
  return svg;
}

function setPlayButton() {
  const button = $("play");
  if (button) button.replaceChildren(icon(page.playing ? "pause" : "play"), page.playing ? " pause" : " play");
}

function buildViewer(seats) {
  const button = (id, content, title, onclick) => h("button", { id, type: "button", title, "aria-label": title, onclick }, content);
  const speed = h("select", { id: "speed", title: "moves a second" },
    SPEEDS.map((s) => h("option", { value: s, selected: s === page.speed }, `${s} moves/s`)));
  speed.addEventListener("change", () => { page.speed = Number(speed.value); });
  const slider = h("input", { id: "slider", type: "range", min: 0, max: page.steps, value: 0 });
  slider.addEventListener("input", () => { stop(); go(Number(slider.value)); });
  const seat = h("select", { id: "view-seat" }, h("option", { value: "all" }, "every hand face up"),
    seats.map((name, p) => h("option", { value: p }, `what player_${p} (${name}) saw`)));
  seat.addEventListener("change", () => { page.seat = seat.value; go(page.step); });
  $("viewer").replaceChildren(
    h("div", { class: "controls panel" },
      button("first", icon("first"), "the start", () => { stop(); go(0); }),
      button("back", icon("back"), "one move back (left arrow)", () => { stop(); go(page.step - 1); }),
      button("play", [icon("play"), " play"], "play at the chosen speed", toggle),
      button("forward", icon("forward"), "one move forward (right arrow)", () => { stop(); go(page.step + 1); }),
      button("last", icon("last"), "the end", () => { stop(); go(page.steps); }),
      speed, slider, h("span", { id: "step-label", class: "step-label" }), seat,
      h("a", { class: "button", id: "watch-record", href: `/api/watch/${page.id}/record`, download: "three-thirteen-game.json" }, "Download"),
      button("close", "Close", "back to choosing a game", close)),
    h("div", { id: "last-move", class: "last-move" }),
    h("div", { class: "game-layout" }, h("div", { id: "watch-table", class: "table-area" }),
      h("aside", { class: "sidebar" }, h("section", { class: "panel" }, h("h3", {}, "Scores by round"), h("div", { id: "watch-scores" })),
        h("section", { class: "panel" }, h("h3", {}, "Recent moves"), h("div", { id: "watch-log" })))));
  $("setup").hidden = true;
  $("viewer").hidden = false;
}

async function go(step) {
  step = Math.max(0, Math.min(page.steps, step));
  const seq = ++page.seq;
  try {
    const view = await api("GET", `/api/watch/${page.id}?step=${step}&seat=${page.seat}`);
    if (seq === page.seq) render(view);
  } catch (err) {
    stop();
    notify(err.message, { error: true });
  }
}

function render(view) {
  page.view = view;
  document.body.dataset.step = String(view.step);
  page.step = view.step;
  const t = view.table;
  const viewer = page.seat === "all" ? null : Number(page.seat);
  $("slider").value = String(view.step);
  $("step-label").textContent = `move ${view.step} of ${view.steps}`;
  $("last-move").textContent = view.last ? `Move ${view.step}: ${eventText(view.last, t.players, null)}`
    : "The deal: move forward to see the first move.";
  const end = view.round_end;
  const final = end && t.game_over && view.step === view.steps ? t.scores : null;
  $("watch-table").replaceChildren(end ? renderRoundEnd(end, { final })
    : renderTable(t, { bottom: viewer === null ? 0 : viewer, youSeat: null }));
  $("watch-scores").replaceChildren(renderScores(t.scores, t.players));
  $("watch-log").replaceChildren(renderLog(view.recent, t.players, null));
  $("log").scrollTop = $("log").scrollHeight;
  setPlayButton();
}

function toggle() {
  if (page.playing) { stop(); return; }
  if (page.step >= page.steps) go(0);
  page.playing = true;
  setPlayButton();
  tick();
}

function tick() {
  if (!page.playing) return;
  const pause = (page.view && page.view.round_end ? 4 : 1) * (1000 / page.speed);
  page.timer = setTimeout(async () => {
    if (!page.playing) return;
    if (page.step >= page.steps) { stop(); return; }
    await go(page.step + 1);
    tick();
  }, pause);
}

function stop() {
  page.playing = false;
  clearTimeout(page.timer);
  setPlayButton();
}

function close() {
  stop();
  $("viewer").hidden = true;
  $("setup").hidden = false;
}

document.addEventListener("keydown", (e) => {
  if ($("viewer").hidden || e.target.tagName === "INPUT" || e.target.tagName === "SELECT") return;
  if (e.key === "ArrowRight") { stop(); go(page.step + 1); }
  if (e.key === "ArrowLeft") { stop(); go(page.step - 1); }
});

init().catch((err) => notify(err.message, { error: true }));

// Setup forms shared by the pages: the seats (agents chosen by name) and the rule options.
import { h, notify, parseRounds } from "./api.js";

function agentSelect(agents, players, chosen, id) {
  const fits = agents.filter((a) => a.players === null || a.players === players);
  const select = h("select", { id, class: "agent-select" },
    fits.map((a) => h("option", { value: a.name, title: a.description, selected: a.name === chosen }, a.name)));
  if (!fits.some((a) => a.name === chosen) && fits.length) select.value = fits.find((a) => a.name === "expert-v0") ? "expert-v0" : fits[0].name;
  return select;
}

// Seats: a player count and an agent per seat; withHuman adds "your seat" (that seat gets no agent).
// read() -> the list of seat names ("human" at the person's seat).
export function seatPicker(options, { withHuman = false, min = 2, max = 8, count = 2, defaults = [], label = "Players",
                                      tag = (p) => `player_${p}` } = {}) {
  const root = h("div", { class: "seat-picker" });
  const countSelect = h("select", { id: withHuman ? "num-players" : "num-seats" },
    Array.from({ length: max - min + 1 }, (_, i) => min + i).map((n) => h("option", { value: n, selected: n === count }, String(n))));
  const humanSelect = h("select", { id: "your-seat" });
  const list = h("div", { class: "seat-list" });
  let chosen = [...defaults];

  function draw() {
    const n = Number(countSelect.value);
    const you = withHuman ? Math.min(Number(humanSelect.value || 0), n - 1) : -1;
    if (withHuman) {
      humanSelect.replaceChildren(...Array.from({ length: n }, (_, p) => h("option", { value: p, selected: p === you }, `player_${p}`)));
    }
    list.replaceChildren(...Array.from({ length: n }, (_, p) => {
      if (p === you) return h("div", { class: "seat-row you" }, h("span", { class: "seat-tag" }, tag(p)), h("span", {}, "you"));
      const select = agentSelect(options.agents, n, chosen[p] || "expert-v0", `seat-${p}`);
      select.addEventListener("change", () => { chosen[p] = select.value; });
      return h("div", { class: "seat-row" }, h("label", { for: `seat-${p}`, class: "seat-tag" }, tag(p)), select);
    }));
  }
  countSelect.addEventListener("change", draw);
  humanSelect.addEventListener("change", draw);
  root.append(h("div", { class: "field" }, h("label", { for: countSelect.id }, label), countSelect));
  if (withHuman) root.append(h("div", { class: "field" }, h("label", { for: "your-seat" }, "Your seat"), humanSelect));
  root.append(list);
  root.read = () => Array.from(list.children).map((row) => {
    const select = row.querySelector("select");
    return select ? select.value : "human";
  });
  draw();
  return root;
}

// The rule options of RULES.md. read() -> the rules object for the API (throws Error with a message).
export function rulesForm(options, { rounds = "1-11", compact = false } = {}) {
  const d = options.rules.defaults;
  const roundsInput = h("input", { id: "rules-rounds", type: "text", value: rounds, size: 8, title: "1-11, 11 or 9,10,11" });
  const aces = h("select", { id: "rules-aces" }, options.rules.aces.map((a) => h("option", { value: a, selected: a === d.aces }, a.replaceAll("_", " "))));
  const decks = h("input", { id: "rules-decks", type: "text", value: String(d.decks), size: 4, title: `auto or 1..${options.rules.max_decks}` });
  const maxTurns = h("input", { id: "rules-max-turns", type: "number", min: 1, value: d.max_turns_per_round });
  const ddd = h("input", { id: "rules-ddd", type: "checkbox", checked: d.discard_drawn_discard });
  const natural = h("input", { id: "rules-natural", type: "checkbox", checked: d.meld_needs_natural });
  const field = (label, input, hint) => h("div", { class: "field" }, h("label", { for: input.id }, label), input,
    hint ? h("span", { class: "hint" }, hint) : null);
  const root = h("div", { class: "rules-form" }, field("Rounds", roundsInput, "1-11, 11 or 9,10,11"));
  root.appendChild(h("details", { class: "rules", open: !compact },
    h("summary", {}, "More rule options"),
    field("Aces", aces), field("Decks", decks, "auto or a number"),
    field("Max turns per round", maxTurns),
    h("div", { class: "field check" }, ddd, h("label", { for: ddd.id }, "may discard the card just taken from the discard pile")),
    h("div", { class: "field check" }, natural, h("label", { for: natural.id }, "every meld needs a card that is not wild"))));
  root.read = () => {
    const parsed = parseRounds(roundsInput.value);
    if (parsed === null) throw new Error(`rounds ${JSON.stringify(roundsInput.value)}: write 1-11, 11 or 9,10,11`);
    const deckText = decks.value.trim().toLowerCase();
    const rules = { rounds: parsed, aces: aces.value, decks: deckText === "auto" ? "auto" : Number(deckText),
                    max_turns_per_round: Number(maxTurns.value), discard_drawn_discard: ddd.checked,
                    meld_needs_natural: natural.checked };
    if (deckText !== "auto" && !Number.isInteger(rules.decks)) throw new Error(`decks ${JSON.stringify(decks.value)}: write auto or a number`);
    return rules;
  };
  return root;
}

export function seedInput(id = "seed") {
  return h("div", { class: "field" }, h("label", { for: id }, "Seed"),
    h("input", { id, type: "number", min: 0, placeholder: "random", size: 8 }));
}

export function readSeed(id = "seed") {
  const text = document.getElementById(id).value.trim();
  if (text === "") return undefined;
  const seed = Number(text);
  // above 2**53 - 1 a JavaScript number drops the low digits: the server would get another seed
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(seed)) {
    throw new Error(`seed ${JSON.stringify(text)}: use an integer from 0 to ${Number.MAX_SAFE_INTEGER} or leave it empty`);
  }
  return seed;
}

// The body of a new-game request (/api/play, /api/watch/new) from the setup forms: the seats, the
// rules and the seed when one is given. A field that is not valid gives a notice saying what is
// wrong and undefined, so that Play and Watch refuse bad input the same way.
export function newGameBody(seats, rules, seedId = "seed") {
  try {
    const body = { seats: seats.read(), rules: rules.read() };
    const seed = readSeed(seedId);
    if (seed !== undefined) body.seed = seed;
    return body;
  } catch (err) {
    notify(err.message, { error: true });
    return undefined;
  }
}

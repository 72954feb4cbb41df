// The Leaderboard page: result files of training.leaderboard / training.evaluate as tables, and a small evaluation.
import { api, downloadJSON, h, notify } from "./api.js";
import { readSeed, rulesForm, seatPicker } from "./forms.js";

const NS = "http://www.w3.org/2000/svg";
const page = { options: null, agents: null, rules: null, job: null, timer: null };
const $ = (id) => document.getElementById(id);

const fmt = (x, digits = 2, sign = false) => (sign && x > 0 ? "+" : "") + x.toFixed(digits);
const interval = (ci, digits = 2, sign = false) => (ci === null ? "n/a (1 deal)" : `[${fmt(ci[0], digits, sign)}, ${fmt(ci[1], digits, sign)}]`);

async function init() {
  page.options = await api("GET", "/api/options");
  const file = h("input", { id: "results-file", type: "file", accept: ".json,application/json", multiple: true });
  file.addEventListener("change", async () => { for (const f of file.files) await openFile(f); file.value = ""; });
  page.agents = seatPicker(page.options, { min: 2, max: 6, count: 2, defaults: ["expert-v0", "greedy-v0"], label: "Agents",
                              tag: (p) => `agent ${p + 1}` });
  page.rules = rulesForm(page.options, { compact: true });
  const deals = h("input", { id: "eval-deals", type: "number", min: 1, max: page.options.max_eval_deals, value: 20 });
  const seed = h("input", { id: "eval-seed", type: "number", min: 0, value: 0 });
  const run = h("button", { id: "eval-start", class: "primary", type: "button", onclick: startEvaluation }, "Run the evaluation");
  const stopButton = h("button", { id: "eval-stop", type: "button", hidden: true, onclick: stopEvaluation }, "Stop");
  $("results-open").replaceChildren(h("h3", {}, "Open results files"),
    h("p", {}, "The JSON written by ", h("code", {}, "python -m training.leaderboard --json FILE"), " or ",
      h("code", {}, "python -m training.evaluate ... --json FILE"), ". Several at once are fine."), file);
  $("evaluation").replaceChildren(h("h3", {}, "Run a small evaluation"),
    h("p", {}, "Duplicate deals among the agents (every deal once per seating), through the evaluator ",
      h("code", {}, "training.evaluate"), `; at most ${page.options.max_eval_deals} deals (far fewer with the search `,
      `agents ismcts-v0 and ismcts-v1, about 0.1 s a move), at most ${page.options.max_eval_seconds} s, `,
      "one evaluation at a time; Stop ends it at its next move."),
    page.agents,
    h("div", { class: "field" }, h("label", { for: "eval-deals" }, "Deals"), deals),
    h("div", { class: "field" }, h("label", { for: "eval-seed" }, "Seed"), seed),
    page.rules, h("div", { class: "end-buttons" }, run, stopButton),
    h("div", { id: "eval-progress", class: "progress", hidden: true }, h("div", { class: "bar" }), h("span", { class: "label" })));
}

async function openFile(file) {
  let data;
  try {
    data = JSON.parse(await file.text());
  } catch (err) {
    notify(`${file.name} is not JSON: ${err.message}`, { error: true });
    return;
  }
  try {
    const view = await api("POST", "/api/results", data);
    $("results").prepend(renderResults(view, file.name));
  } catch (err) {
    notify(`${file.name}: ${err.message}`, { error: true });
  }
}

// An interval plot: the 95% interval as a bar, the estimate as a dot; `scale` maps values to 0..1.
function intervalPlot(mean, ci, scale, zero = null) {
  const w = 200, hgt = 20;
  const svg = document.createElementNS(NS, "svg");
  svg.setAttribute("viewBox", `0 0 ${w} ${hgt}`);
  svg.setAttribute("class", "ci-plot");
  const add = (name, attrs) => { const n = document.createElementNS(NS, name); for (const [k, v] of Object.entries(attrs)) n.setAttribute(k, v); svg.appendChild(n); return n; };
  const x = (v) => 6 + scale(v) * (w - 12);
  add("line", { x1: 4, y1: hgt / 2, x2: w - 4, y2: hgt / 2, stroke: "#4d6b5a", "stroke-width": 1 });
  if (zero !== null) add("line", { x1: x(zero), y1: 2, x2: x(zero), y2: hgt - 2, stroke: "#e9e4d0", "stroke-width": 1.5 });
  const better = ci !== null && zero !== null && ci[1] < zero;
  const worse = ci !== null && zero !== null && ci[0] > zero;
  const color = better ? "#6fdc8c" : worse ? "#ff8a7a" : "#f2c14e";
  if (ci !== null) add("rect", { x: x(ci[0]), y: hgt / 2 - 4, width: Math.max(2, x(ci[1]) - x(ci[0])), height: 8, rx: 3, fill: color, opacity: 0.75 });
  add("circle", { cx: x(mean), cy: hgt / 2, r: 4, fill: "#ffffff", stroke: color, "stroke-width": 2 });
  return svg;
}

// A symmetric log scale, so that +390 and -2 both read on one axis.
function symlogScale(values) {
  const f = (v) => Math.sign(v) * Math.log10(1 + Math.abs(v));
  const m = Math.max(1e-9, ...values.map((v) => Math.abs(f(v))));
  return (v) => (f(v) + m) / (2 * m);
}

function linearScale(values) {
  const lo = Math.min(...values), hi = Math.max(...values);
  const span = hi - lo || 1;
  return (v) => (v - lo) / span;
}

export function renderResults(view, title) {
  const body = view.kind === "leaderboard" ? renderLeaderboard(view) : renderEvaluation(view);
  return h("section", { class: "panel result", dataset: { kind: view.kind } }, h("h2", {}, title), body);
}

function renderLeaderboard(view) {
  const out = [h("p", { class: "caption" }, `Each agent at a table with ${view.reference} in every other seat, duplicate deals. `,
    `"vs ${view.reference}": the agent's mean final score minus the ${view.reference} seats' mean, with its 95% interval over deals `,
    "(negative: better; green when the interval is all below 0, red when all above). Bars on a symmetric log scale.")];
  for (const table of view.tables) {
    const values = table.rows.flatMap((r) => (r.ci95 ? r.ci95 : [r.score_diff])).concat([0]);
    const scale = symlogScale(values);
    const n = table.players;
    const rows = [h("tr", { class: "reference" }, h("td", {}, `${view.reference} (reference)`), h("td", { class: "num" }, "0"),
      h("td", {}), h("td", { class: "num" }, (1 / n).toFixed(3)), h("td", {}), h("td", {}))];
    for (const r of table.rows) {
      rows.push(h("tr", {}, h("td", { class: "agent" }, r.agent),
        h("td", { class: "num" }, `${fmt(r.score_diff, 2, true)} `, h("span", { class: "ci" }, interval(r.ci95, 2, true))),
        h("td", {}, intervalPlot(r.score_diff, r.ci95, scale, 0)),
        h("td", { class: "num" }, `${r.win_rate.toFixed(3)} `, h("span", { class: "ci" }, interval(r.win_rate_ci95, 3))),
        h("td", { class: "num" }, r.ms_per_move.toPrecision(3)), h("td", { class: "num" }, r.deals.toLocaleString("en"))));
    }
    out.push(h("h3", {}, `${n} players`), h("table", { class: "results-table" },
      h("thead", {}, h("tr", {}, ["agent", `vs ${view.reference} [95% CI]`, "", "win rate [95% CI]", "ms/move", "deals"].map((c, i) => h("th", { class: i === 0 || i === 2 ? "" : "num" }, c)))),
      h("tbody", {}, rows)));
  }
  return h("div", {}, out);
}

function renderEvaluation(view) {
  const values = view.agents.flatMap((a) => (a.mean_score_ci95 ? a.mean_score_ci95 : [a.mean_score]));
  const scale = linearScale(values);
  const rows = view.agents.map((a) => h("tr", {}, h("td", { class: "agent" }, a.name),
    h("td", { class: "num" }, `${fmt(a.mean_score, 1)} `, h("span", { class: "ci" }, interval(a.mean_score_ci95, 1))),
    h("td", {}, intervalPlot(a.mean_score, a.mean_score_ci95, scale)),
    h("td", { class: "num" }, `${a.win_rate.toFixed(3)} `, h("span", { class: "ci" }, interval(a.win_rate_ci95, 3))),
    h("td", { class: "num" }, a.ms_per_move.toPrecision(3))));
  const names = view.agents.map((a) => a.name);
  const diff = new Map(view.pairwise.map((p) => [`${p.a}\u0000${p.b}`, p]));
  const matrix = h("table", { class: "results-table pairwise" },
    h("thead", {}, h("tr", {}, h("th", {}, "mean score minus \u2192"), names.map((b) => h("th", { class: "num" }, b)))),
    h("tbody", {}, names.map((a) => h("tr", {}, h("td", { class: "agent" }, a), names.map((b) => {
      const p = diff.get(`${a}\u0000${b}`);
      if (!p) return h("td", { class: "num self" }, "\u2014");
      const cls = p.ci95 === null ? "" : p.ci95[1] < 0 ? "better" : p.ci95[0] > 0 ? "worse" : "";
      return h("td", { class: "num " + cls }, `${fmt(p.mean_score_diff, 2, true)} `, h("span", { class: "ci" }, interval(p.ci95, 2, true)));
    })))));
  const rounds = view.rules && view.rules.rounds ? view.rules.rounds : null;
  return h("div", {},
    h("p", { class: "caption" }, `${view.games} duplicate deals \u00d7 ${view.seatings} seatings = ${view.games_played} games, seed ${view.seed}`,
      rounds ? `, rounds ${rounds.length === 11 ? "1-11" : rounds.join(",")}` : "",
      ". Scores are final totals (lower is better); intervals are 95% over deals."),
    h("table", { class: "results-table" },
      h("thead", {}, h("tr", {}, ["agent", "mean score [95% CI]", "", "win rate [95% CI]", "ms/move"].map((c, i) => h("th", { class: i === 0 || i === 2 ? "" : "num" }, c)))),
      h("tbody", {}, rows)),
    h("h3", {}, "Pairs: the row's mean score minus the column's (negative: the row is better)"), matrix);
}

async function startEvaluation() {
  let body;
  try {
    body = { agents: page.agents.read(), rules: page.rules.read(), deals: Number($("eval-deals").value),
             seed: readSeed("eval-seed") ?? 0 };
  } catch (err) {
    notify(err.message, { error: true });
    return;
  }
  try {
    const job = await api("POST", "/api/evaluations", body);
    page.job = job.job_id;
    $("eval-start").disabled = true;
    $("eval-stop").hidden = false;
    progress(job);
    poll();
  } catch (err) {
    notify(err.message, { error: true });
  }
}

function progress(job) {
  const box = $("eval-progress");
  box.hidden = false;
  box.querySelector(".bar").style.width = `${(100 * job.done) / job.total}%`;
  box.querySelector(".label").textContent = job.status === "running"
    ? `${job.done} of ${job.total} deals \u00b7 ${job.seconds.toFixed(1)} s`
    : job.status === "done" ? `done: ${job.total} deals in ${job.seconds.toFixed(1)} s`
      : job.status === "stopped" ? `stopped after ${job.done} of ${job.total} deals` : `failed: ${job.error}`;
  box.dataset.status = job.status;
}

function poll() {
  clearTimeout(page.timer);
  page.timer = setTimeout(async () => {
    try {
      const job = await api("GET", `/api/evaluations/${page.job}`);
      progress(job);
      if (job.status === "running") { poll(); return; }
      $("eval-start").disabled = false;
      $("eval-stop").hidden = true;
      if (job.status === "done") {
        const section = renderResults(job.view, `Evaluation: ${job.agents.join(" vs ")}`);
        section.id = "eval-result";
        const old = $("eval-result");
        if (old) old.removeAttribute("id");
        section.appendChild(h("button", { type: "button", onclick: () => downloadJSON(job.report, "evaluation.json") }, "Download the JSON"));
        $("results").prepend(section);
      }
    } catch (err) {
      $("eval-start").disabled = false;
      $("eval-stop").hidden = true;
      notify(err.message, { error: true });
    }
  }, 300);
}

async function stopEvaluation() {
  try {
    progress(await api("POST", `/api/evaluations/${page.job}/stop`, {}));
  } catch (err) {
    notify(err.message, { error: true });
  }
}

init().catch((err) => notify(err.message, { error: true }));

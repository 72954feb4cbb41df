// Talking to the server: JSON in, JSON out; a refused request throws an ApiError with the server's message.
export class ApiError extends Error {
  constructor(message, status) { super(message); this.status = status; }
}

export async function api(method, path, body) {
  const options = { method, headers: { Accept: "application/json" } };
  if (body !== undefined) {
    options.headers["Content-Type"] = "application/json";
    options.body = JSON.stringify(body);
  }
  let response;
  try {
    response = await fetch(path, options);
  } catch (err) {
    throw new ApiError("the server cannot be reached: is python -m tt_env.web still running?", 0);
  }
  let data = null;
  try { data = await response.json(); } catch (err) { data = null; }
  if (!response.ok) throw new ApiError((data && data.error) || `${response.status} ${response.statusText}`, response.status);
  return data;
}

// A short message at the bottom of the page (errors in red).
export function notify(message, { error = false } = {}) {
  let box = document.getElementById("toast");
  if (!box) {
    box = document.createElement("div");
    box.id = "toast";
    box.setAttribute("role", "status");
    document.body.appendChild(box);
  }
  box.textContent = message;
  box.className = error ? "show error" : "show";
  clearTimeout(notify.timer);
  notify.timer = setTimeout(() => { box.className = ""; }, error ? 7000 : 3000);
}

// Small DOM helper: h("div", {class: "x", onclick: f}, child, "text", ...).
export function h(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith("on") && typeof v === "function") node.addEventListener(k.slice(2), v);
    else if (k === "class") node.className = v;
    else if (k === "dataset") Object.assign(node.dataset, v);
    else if (v === true) node.setAttribute(k, "");
    else node.setAttribute(k, v);
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.appendChild(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

// "1-11", "11", "9,10,11" -> [1..11], [11], [9, 10, 11]; null when the text is not a list of rounds.
export function parseRounds(text) {
  const rounds = [];
  for (const part of String(text).split(",")) {
    const m = part.trim().match(/^(\d+)(?:\s*-\s*(\d+))?$/);
    if (!m) return null;
    const lo = Number(m[1]);
    const hi = m[2] === undefined ? lo : Number(m[2]);
    for (let r = lo; r <= hi; r++) rounds.push(r);
  }
  return rounds.length ? rounds : null;
}

// Download `data` as a JSON file.
export function downloadJSON(data, filename) {
  const url = URL.createObjectURL(new Blob([JSON.stringify(data, null, 1)], { type: "application/json" }));
  const a = h("a", { href: url, download: filename });
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

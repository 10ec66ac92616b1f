// The "same budget" panel under Go further: every route at one force-evaluation budget for
// one Jacobian, scored against the flow, and the probe-size trap (central differences of
// uniform-step rollouts at several probe sizes). The core computes the whole document
// (experiments/budget.rs, the wasm export equalBudget) in the background worker, at the
// workbench's drop and stiffness, when the learner asks for it: never on a slider move.
// The panel stays closed to input until a prediction is committed, like the workbench: its
// Euler row is the fixed route at a smaller step, which would answer the prediction.
// Presentation only: every number comes from the core through sim.js; the sentences only
// read the numbers the table and the probe table print.
import { exp, int, kText, num, signText, signed, wall } from "./format.js";
import { LogPlot } from "./plots.js";

const $ = (id) => document.getElementById(id);

/** "a", "a and b", "a, b and c". */
function list(items) {
  return items.length < 2 ? items.join("") : `${items.slice(0, -1).join(", ")} and ${items.at(-1)}`;
}

function cell(tag, text, cls) {
  const c = document.createElement(tag);
  c.textContent = text;
  if (cls) c.className = cls;
  if (tag === "th") c.scope = "row";
  return c;
}

/** The core marks a route that found no setting within the budget with NaN errors. */
const answered = (row) => !Number.isNaN(row.gradient_error);

export class BudgetPanel {
  #bench;
  #background;
  #ready = false;
  #locked = true;
  #busy = false;
  #k = null; // the workbench's stiffness now, N/m
  #tick = null; // the page's clock resolution, s (the workbench readout's wall_resolution_s)
  #shown = null; // the core's EqualBudget on screen

  constructor({ bench, background }) {
    this.#bench = bench;
    this.#background = background;
    this.plot = new LogPlot($("budget-plot"), {
      title: "The probe-size trap: dv(T)/dy₀ from central differences of uniform-step rollouts against the probe size",
      xLabel: "probe size (m for y₀, m/s for v₀)", yLabel: "dv(T)/dy₀ (1/s)", xDomain: [-8.25, -1.75], yScale: "linear",
    });
    $("budget-form").addEventListener("submit", (event) => {
      event.preventDefault();
      this.#run();
    });
    for (const b of document.querySelectorAll("#budget-presets button")) {
      b.addEventListener("click", () => {
        $("budget-evals").value = b.dataset.budget;
        this.#run();
      });
    }
  }

  /** The core has loaded: the controls may open (once a prediction is committed). */
  enable() {
    this.#ready = true;
    this.#sync();
  }

  /** The workbench locked (no prediction yet) or unlocked. */
  setLocked(locked) {
    this.#locked = locked;
    // Locked again (the progress was reset): cover the table as the workbench's readouts are.
    if (locked && this.#shown) {
      this.#shown = null;
      $("budget-result").hidden = true;
      $("budget-stale").textContent = "";
    }
    this.#sync();
  }

  /**
   * Hear the workbench's latest readout: its stiffness, and the resolution of the clock that
   * timed its routes. The worker reads the same browser clock (performance.now(), coarsened
   * alike for the page and its workers), so a wall time under one tick prints as "< tick"
   * rather than as a zero, unless the core's document carries its own resolution.
   */
  onReadout(r) {
    this.#k = r.k;
    this.#tick = r.wall_resolution_s;
    this.#staleNote();
  }

  #sync() {
    const off = !this.#ready || this.#locked || this.#busy;
    for (const n of $("budget-form").querySelectorAll("input, button")) n.disabled = off;
    $("budget-locked").hidden = !this.#locked;
  }

  #note(text, kind = "") {
    const n = $("budget-note");
    n.textContent = text;
    n.dataset.kind = kind;
  }

  #run() {
    if (this.#busy || this.#locked || !this.#ready) return;
    const config = this.#bench.config();
    if (!config) return; // the status line says why
    const typed = $("budget-evals").value.trim();
    // An empty field (the browser also empties one holding letters) is asked for in the
    // learner's words; a number goes to the core, which refuses a bad one in its own.
    if (typed === "") {
      this.#shown = null;
      $("budget-result").hidden = true;
      $("budget-stale").textContent = "";
      this.#note("Type a budget first: a whole number of force evaluations per Jacobian, a multiple of 4, at least 8.", "error");
      return;
    }
    const budget = Number(typed);
    this.#busy = true;
    this.#sync();
    const what = Number.isFinite(budget) ? `${int(budget).replace(/^-/, "−")} force evaluations` : typed === "" ? "an empty budget" : `“${typed}”`;
    this.#note(`Computing every route at ${what} per Jacobian, ${kText(config.k)}, in the background…`);
    this.#background.run("equalBudget", { drop: config.drop, k: config.k, budget }).then((res) => {
      this.#busy = false;
      this.#sync();
      if (this.#locked) return; // locked again while the worker ran: show nothing
      if (!res.ok) {
        this.#shown = null;
        $("budget-result").hidden = true;
        $("budget-stale").textContent = "";
        // The panel's own refusal stays in the panel: the workbench's status line is the workbench's.
        // The field is named above and its value in "No table at …": the core's limit follows.
        const limit = res.message.replace(/^Invalid parameter `budget` = [^:]*: /, "");
        this.#note(`No table at ${what}: ${limit}`, "error");
        return;
      }
      this.#note("");
      this.#paint(res.value);
    });
  }

  #staleNote() {
    const d = this.#shown;
    $("budget-stale").textContent = d && this.#k !== null && this.#k !== d.k
      ? `This table is at ${kText(d.k)}; the workbench is now at ${kText(this.#k)}. Press “Run the table” for the new stiffness.`
      : "";
  }

  #paint(d) {
    this.#shown = d;
    const flow = d.flow_jacobian[2];
    // Short captions: a caption is as wide as its table, which scrolls on a phone.
    $("budget-caption").textContent = `At ${int(d.budget)} force evaluations, ${kText(d.k)}`;
    const rows = d.rows.map((row) => {
      const tr = document.createElement("tr");
      const ok = answered(row);
      const sign = row.sign; // the core's three states: right, wrong, right_far_off
      tr.append(
        cell("th", row.route),
        cell("td", row.setting, "setting"),
        cell("td", ok ? int(row.force_evals) : "—"),
        cell("td", ok ? wall(row.wall_s, d.wall_resolution_s ?? this.#tick) : "—"),
        cell("td", ok ? num(row.gradient_error) : "—"),
        cell("td", ok ? signed(row.dv_dy0) : "—"),
        cell("td", ok ? signText(sign) : "no answer", ok ? sign : ""),
      );
      return tr;
    });
    // The reference itself, last: its dv(T)/dy0 is what the sign column compares with.
    const ref = document.createElement("tr");
    ref.className = "reference";
    ref.append(cell("th", "flow (the reference)"), cell("td", "closed form, no steps", "setting"),
      ...["—", "—", "—"].map((t) => cell("td", t)), cell("td", signed(flow)), cell("td", "—"));
    rows.push(ref);
    $("budget-rows").replaceChildren(...rows);

    const good = d.rows.filter(answered);
    // The core's three sign states: wrong, and right but far off (right only by accident).
    const wrong = good.filter((r) => r.sign === "wrong").map((r) => r.route);
    const far = good.filter((r) => r.sign === "right_far_off").map((r) => r.route);
    const best = good.reduce((a, b) => (b.gradient_error < a.gradient_error ? b : a), good[0]);
    const parts = [];
    if (wrong.length) parts.push(`${list(wrong)} ${wrong.length === 1 ? "has" : "have"} the wrong sign at this budget`);
    if (far.length) {
      parts.push(`${list(far)} ${far.length === 1 ? "has" : "have"} the flow's sign but ${far.length === 1 ? "is" : "are"} far off ` +
        "(a gradient error larger than the flow's Jacobian itself)");
    }
    const signs = parts.length ? parts.join("; ") : "Every route that answered has the flow's sign at this budget";
    const none = d.rows.filter((r) => !answered(r)).map((r) => r.route);
    const missing = none.length ? `; ${list(none)} found no setting within it` : "";
    $("budget-summary").textContent = best
      ? `${signs}${missing}; the smallest gradient error, ${num(best.gradient_error)}, belongs to ${best.route} (${int(best.force_evals)} force evaluations).`
      : `${signs}${missing}.`;

    this.#paintTrap(d);
    $("budget-result").hidden = false;
    this.#staleNote();
  }

  #paintTrap(d) {
    const trap = d.probe_trap;
    const flow = d.flow_jacobian[2];
    $("budget-trap-rows").replaceChildren(...trap.map((p) => {
      const tr = document.createElement("tr");
      tr.append(
        cell("th", exp(p.probe, 0)),
        cell("td", signed(p.euler_dv_dy0)),
        cell("td", num(p.euler_error)),
        cell("td", signed(p.rk4_dv_dy0)),
        cell("td", num(p.rk4_error)),
      );
      return tr;
    }));

    const probes = trap.map((p) => p.probe);
    const [pLo, pHi] = [Math.min(...probes), Math.max(...probes)];
    const span = (key) => {
      const v = trap.map((p) => p[key]);
      const [lo, hi] = [signed(Math.min(...v)), signed(Math.max(...v))];
      return lo === hi ? `${lo} at every probe size` : `from ${lo} to ${hi}`;
    };
    // Which probes print the same number as the route's own row in the table above: read off
    // the printed digits, as a reader comparing the two tables would.
    const same = (key, route, who) => {
      const row = d.rows.find((r) => r.route === route);
      if (!row || !answered(row)) return "";
      const at = trap.filter((p) => signed(p[key]) === signed(row.dv_dy0)).map((p) => exp(p.probe, 0));
      const where = at.length === trap.length ? "at every probe size" : `at ${list(at)}`;
      return at.length ? `${where} ${who} prints ${signed(row.dv_dy0)}, the ${route} row's own answer` : "";
    };
    const echoes = [same("euler_dv_dy0", "Euler uniform", "Euler's"), same("rk4_dv_dy0", "RK4 uniform", "RK4's")].filter(Boolean);
    const echo = echoes.length ? ` ${echoes.join("; ")}.` : "";
    $("budget-trap-text").textContent = `Across the ${trap.length} probe sizes from ${exp(pHi, 0)} down to ${exp(pLo, 0)}, Euler's central differences give dv(T)/dy₀ ${span("euler_dv_dy0")} and RK4's ${span("rk4_dv_dy0")}, against the flow's ${signed(flow)} 1/s.${echo.replace(/^ a/, " A")}`;
    $("budget-trap-caption").textContent = `Central differences at ${int(d.budget)} evaluations, ${kText(d.k)}`;

    this.plot.setData({
      series: [
        { label: "Euler uniform, central differences", cls: "s-euler", dots: true, points: trap.map((p) => [p.probe, p.euler_dv_dy0]) },
        { label: "RK4 uniform, central differences", cls: "s-rk4", dots: true, points: trap.map((p) => [p.probe, p.rk4_dv_dy0]) },
        { label: `flow (the reference): ${signed(flow)} 1/s`, cls: "s-flow", dashed: true, points: [[pLo, flow], [pHi, flow]] },
      ],
      summary: `At ${kText(d.k)} and ${int(d.budget)} force evaluations, Euler's central differences give dv(T)/dy₀ ${span("euler_dv_dy0")} and RK4's ${span("rk4_dv_dy0")} as the probe goes from ${exp(pHi, 0)} to ${exp(pLo, 0)}; the flow's is ${signed(flow)} 1/s. The probe table below lists every point.`,
    });
    const ys = trap.flatMap((p) => [p.euler_dv_dy0, p.rk4_dv_dy0]).concat(flow);
    this.plot.setNote(Math.min(...ys) < 0 && Math.max(...ys) > 0
      ? "The darker grid line marks zero: a point on the other side of it from the flow's dashed line has the wrong sign."
      : "");
  }
}

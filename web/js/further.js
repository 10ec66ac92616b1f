// The "go further" panels: the audit table, the blame decomposition, the equal-budget table
// (budget.js), the descent experiment, the quadruped (quadruped.js), the fit of a bounce
// (fitpanel.js), the time-of-impact panel with hybrid_jacobian and two contacts at once on
// the V-groove (contacts.js). Heavy work (the audit
// sweep, the descent experiment, the quadruped, the fits) goes to a background worker; the
// panels compute only when opened or asked.
// Presentation only: every number comes from the core through sim.js.
//
// One way to add a panel (the budget panel is the model; the fit panel follows it):
//   1. the core computes the whole document (one function, one wasm export in lib.rs, one job
//      in sim.js's `jobs`); the panel never recomputes a number or a verdict;
//   2. web/js/NAME.js exports a class taking what it needs ({bench, background} or nothing, when
//      its work is long enough to want a worker of its own, opened on first use as quadruped.js
//      and fitpanel.js do); Further constructs it below, and calls enable() when the core has
//      loaded (setLocked(locked) too if a committed prediction gates it): no script tag of its own;
//   3. its markup is a <details> in index.html with a form, a note (`data-kind="error"` draws
//      the red box, lab.css) and a result block hidden until there is a result; an empty field
//      is asked for in the learner's words, a refusal shows the core's message in that note;
//   4. numbers print through format.js, plots through plots.js (or round ticks from its
//      niceStep/linearLabel), noise from the one seeded generator in sim.js;
//   5. a browser test opens it at 1280 and 375 px, runs axe, and checks a number against the core.
import { dtText, exp, int, kText, num, share, signText, signed, slope, tidy } from "./format.js";
import { BudgetPanel } from "./budget.js";
import { ContactsPanel } from "./contacts.js";
import { FitPanel } from "./fitpanel.js";
import { Heatmap, LogPlot } from "./plots.js";
import { QuadrupedPanel } from "./quadruped.js";

const $ = (id) => document.getElementById(id);

/** The audit's stiffnesses: every half decade from 1e2 to 1e8 N/m (presentation grid). */
const AUDIT_KS = Array.from({ length: 13 }, (_, i) => 10 ** (2 + i / 2));
/** Impact speeds for the time-of-impact plot, m/s: 1e-4 .. 10, ten per decade. */
const SPEEDS = Array.from({ length: 51 }, (_, i) => 10 ** (-4 + i / 10));

/**
 * A descent arm's force evaluations as the table prints them. The exact arm and the
 * central-difference control differentiate the closed-form bounce, which evaluates no contact
 * force: the core counts 0 for them, and the table says why rather than print a bare 0.
 */
function evalsText(arm) {
  if (arm.force_evals === 0 && arm.arm.route === "exact") return "none (closed form)";
  if (arm.force_evals === 0 && arm.arm.route === "central_differences") return "none (differences of the closed form)";
  return int(arm.force_evals);
}

function cell(text, cls) {
  const td = document.createElement("td");
  td.textContent = text;
  if (cls) td.className = cls;
  return td;
}

export class Further {
  #bench;
  #background;
  #report;
  #r = null;
  #audit = new Map(); // dt -> the core's Curve {sweep, exponent, wrong_sign} | "pending"
  #auditShown = null;
  #descent = null;
  #arm = 2; // fixed k=1e6 first: the interesting one
  #speed = null;
  #termCurve = null;

  constructor({ bench, background, report }) {
    this.#bench = bench;
    this.#background = background;
    this.#report = report;
    this.blamePlot = new LogPlot($("blame-plot"), {
      title: "Integrator share and contact-model share against stiffness",
      xLabel: "stiffness k (N/m)", yLabel: "max |ΔJ|", xDomain: [2, 8], yClamp: [-16, 8],
    });
    this.impactPlot = new LogPlot($("impact-plot"), {
      title: "Time-of-impact term against impact speed",
      xLabel: "impact speed |v| (m/s)", yLabel: "(1+e)·g/|v| (1/s)", xDomain: [-4, 1],
    });
    this.map = new Heatmap($("descent-map"), {
      title: "Descent landscape: the true loss over start height and velocity, with each start's path",
      xLabel: "start velocity v₀ (m/s)", yLabel: "start height h₀ (m)",
    });
    // The quadruped's report takes seconds, its slow columns minutes: it gets a worker of
    // its own (quadruped.js), so the bench's curves never queue behind it.
    this.quadruped = new QuadrupedPanel({ report });
    this.budget = new BudgetPanel({ bench, background });
    this.fit = new FitPanel();
    this.contacts = new ContactsPanel({ background });
    for (const id of ["audit", "blame-panel"]) $(id).addEventListener("toggle", () => this.#refreshAudit());
    $("impact").addEventListener("toggle", () => this.#impact());
    $("descent-run").addEventListener("click", () => this.#runDescent());
    $("speed-log").addEventListener("input", () => {
      this.#speed = 10 ** Number($("speed-log").value);
      this.#impact();
    });
    for (const b of document.querySelectorAll("#speed-presets button")) {
      b.addEventListener("click", () => {
        this.#speed = b.dataset.speed === "drop" ? this.#r.exact.impact_speed : Number(b.dataset.speed);
        this.#impact();
      });
    }
  }

  /** Enable the panels' own controls (after the core has loaded). */
  enable() {
    for (const n of document.querySelectorAll("#further input, #further button")) n.disabled = false;
    this.budget.enable();
    this.fit.enable();
    this.contacts.enable();
  }

  /** The workbench locked (no prediction committed yet) or unlocked. */
  setLocked(locked) {
    this.budget.setLocked(locked);
  }

  /** Hear the bench's latest readout. */
  onReadout(r) {
    const first = !this.#r;
    this.#r = r;
    this.budget.onReadout(r);
    // The time-of-impact panel does not depend on the bench's controls: set it up once.
    if (first) {
      this.#speed = r.exact.impact_speed;
      this.#impact();
    }
    this.#refreshAudit();
  }

  // ---- audit table and blame decomposition ------------------------------------------------

  #refreshAudit() {
    if (!this.#r || !($("audit").open || $("blame-panel").open)) return;
    const dt = this.#r.dt;
    const have = this.#audit.get(dt);
    if (have === undefined) {
      this.#audit.set(dt, "pending");
      $("audit-note").textContent = `Computing the audit at ${dtText(dt)} in the background…`;
      $("audit-fit").textContent = "";
      // The bench's own controls at this step, tolerance route off: the worker builds a bench
      // from them and asks it for the curve with the corrected route and the blame split.
      const config = { ...this.#bench.config(), tolerance: false };
      const progress = ({ done, total }) => {
        if (this.#audit.get(dt) === "pending") {
          $("audit-note").textContent = `Computing the audit at ${dtText(dt)} in the background: ${done} of ${total} stiffnesses done…`;
        }
      };
      this.#background
        .run("curve", { config, ks: AUDIT_KS, corrected: true, blame: true }, progress)
        .then((res) => {
          if (!res.ok) {
            this.#audit.delete(dt);
            this.#report(res.message, "error");
            $("audit-note").textContent = "The audit could not be computed; the status line says why.";
            return;
          }
          this.#audit.set(dt, res.value);
          if (this.#r.dt === dt) this.#paintAudit(res.value);
        });
    } else if (have !== "pending" && this.#auditShown !== have) {
      this.#paintAudit(have);
    }
    this.#blameText();
  }

  #paintAudit(audit) {
    this.#auditShown = audit;
    const { sweep, exponent } = audit;
    const rows = sweep.rows.map((row) => {
      const tr = document.createElement("tr");
      const e = row.fixed.errors;
      const b = row.blame;
      tr.append(
        cell(exp(row.k, 1)),
        cell(`${num(e.dy)} m`),
        cell(num(e.gradient)),
        cell(signed(e.dv_dy0)),
        cell(signed(e.dv_dy0_exact)),
        cell(signText(e.sign), e.sign),
        cell(num(row.corrected.errors.gradient)),
        cell(share(b.integrator_share, b.integrator_below_floor)),
        cell(share(b.contact_share, b.contact_below_floor)),
      );
      return tr;
    });
    $("audit-rows").replaceChildren(...rows);
    const wrong = sweep.rows.filter((r) => !r.fixed.errors.right_sign).length;
    $("audit-fit").textContent = exponent
      ? `Exponent fit at ${dtText(sweep.dt)}: gradient error ∝ k^${slope(exponent.slope)} (R² = ${exponent.r2.toFixed(3)}, ${exponent.points} points from 1e4 to 1e8 N/m). Wrong sign at ${wrong} of ${sweep.rows.length} stiffnesses.`
      : "";
    $("audit-note").textContent = `Each row: the fixed route at ${dtText(sweep.dt)} against the exact bounce; corrected at the same step; shares against the continuous penalty flow.`;

    const pts = (f) => sweep.rows.map((r) => [r.k, f(r.blame)]);
    const floors = sweep.rows.map((r) => r.blame.noise_floor);
    const maxFloor = Math.max(...floors);
    const series = [
      { label: "integrator share |J_fixed − J_flow|", cls: "s-integrator", points: pts((b) => b.integrator_share), dots: true },
      { label: "contact-model share |J_flow − J_exact|", cls: "s-contact", points: pts((b) => b.contact_share), dots: true },
    ];
    if (maxFloor > 0) series.push({ label: "noise floor of the flow", cls: "s-floor", dashed: true, points: pts((b) => b.noise_floor) });
    this.blamePlot.setData({
      series,
      summary: `Integrator share from ${num(sweep.rows[0].blame.integrator_share)} to ${num(sweep.rows.at(-1).blame.integrator_share)}; contact share from ${num(sweep.rows[0].blame.contact_share)} to ${num(sweep.rows.at(-1).blame.contact_share)} as k goes from 1e2 to 1e8 N/m.`,
    });
    const zeros = floors.filter((f) => f === 0).length;
    this.blamePlot.setNote(maxFloor > 0
      ? `The noise floor reaches at most ${num(maxFloor)}, far below both shares${zeros ? `; at ${zeros} of ${floors.length} stiffnesses it is exactly 0 (the two root tolerances agree to the last bit), which a log axis cannot show` : ""}.`
      : "The flow's noise floor is 0 at every stiffness here: tightening its root finding from 1e-10 to 1e-14 did not move a single bit, so both shares stand above it.");
    this.blamePlot.setMarker({ x: this.#r.k, label: exp(this.#r.k, 1), points: [
      { y: this.#r.blame.integrator_share, cls: "s-integrator" }, { y: this.#r.blame.contact_share, cls: "s-contact" }] });
  }

  #blameText() {
    const r = this.#r;
    if (!r) return;
    const b = r.blame;
    $("blame-text").textContent = `At ${kText(r.k)} and ${dtText(r.dt)}: integrator share ${share(b.integrator_share, b.integrator_below_floor)}, contact-model share ${share(b.contact_share, b.contact_below_floor)}, ratio ${num(b.ratio)}, noise floor ${num(b.noise_floor)}. As the floor stiffens the integrator's share grows and the contact model's shrinks, like k^${slope(r.contact_exponent.slope)} (fit over 1e4…1e8 N/m, R² = ${r.contact_exponent.r2.toFixed(4)}).`;
    if (this.blamePlot.data.series.length) {
      this.blamePlot.setMarker({ x: r.k, label: exp(r.k, 1), points: [
        { y: b.integrator_share, cls: "s-integrator" }, { y: b.contact_share, cls: "s-contact" }] });
    }
  }

  // ---- descent ----------------------------------------------------------------------------

  #runDescent() {
    const button = $("descent-run");
    button.disabled = true;
    $("descent-note").textContent = "Running every arm from every start in the background…";
    const t0 = performance.now();
    this.#background.run("descent").then((res) => {
      button.disabled = false;
      if (!res.ok) {
        this.#report(res.message, "error");
        $("descent-note").textContent = "The experiment stopped; the status line says why.";
        return;
      }
      this.#descent = res.value;
      const d = res.value;
      button.textContent = "Run it again";
      $("descent-note").textContent = `Done in ${((performance.now() - t0) / 1000).toFixed(1)} s: ${d.arms.length} gradients, each from the same ${d.landscape.starts.length} starts. Target x(T) = (${num(d.target[0])} m, ${num(d.target[1])} m/s), reached from (h₀, v₀) = (${d.problem.optimum[0]} m, ${d.problem.optimum[1]} m/s); the grid's lowest point is (${num(d.landscape.grid_minimum[0])} m, ${num(d.landscape.grid_minimum[1])} m/s) and it has ${d.landscape.local_minima} strict local minim${d.landscape.local_minima === 1 ? "um" : "a"}.`;
      $("descent-result").hidden = false;
      this.#paintDescent();
    });
  }

  #paintDescent() {
    const d = this.#descent;
    const land = d.landscape;
    const rows = d.arms.map((a) => {
      const tr = document.createElement("tr");
      tr.append(
        cell(a.label),
        cell(`${a.converged} of ${a.runs.length}`, a.converged === a.runs.length ? "right" : a.converged === 0 ? "wrong" : ""),
        cell(`${a.cannot_step} of ${a.runs.length}`),
        cell(int(a.iterations)),
        cell(evalsText(a)),
      );
      return tr;
    });
    $("descent-rows").replaceChildren(...rows);

    const picker = $("descent-arms");
    const legend = picker.querySelector("legend");
    const radios = d.arms.map((a, i) => {
      const label = document.createElement("label");
      label.className = "choice";
      const input = document.createElement("input");
      input.type = "radio";
      input.name = "descent-arm";
      input.value = String(i);
      input.checked = i === this.#arm;
      input.addEventListener("change", () => {
        this.#arm = i;
        this.#overlay();
      });
      label.append(input, ` ${a.label}: ${a.converged} of ${a.runs.length} converged`);
      return label;
    });
    picker.replaceChildren(legend, ...radios);

    this.map.setData({
      xs: land.velocities, ys: land.heights, values: land.loss.map((v) => (v === null ? NaN : v)),
      summary: `The loss over ${land.heights.length} × ${land.velocities.length} grid points; grey cells bounce zero or two times before T.`,
    });
    const [grad, lo, hi] = this.map.scale();
    const bar = $("descent-scale");
    bar.replaceChildren();
    const lab1 = document.createElement("span");
    lab1.textContent = `loss 1e${Math.round(lo)} m²`;
    const sw = document.createElement("span");
    sw.className = "bar";
    sw.style.background = grad;
    const lab2 = document.createElement("span");
    lab2.textContent = `1e${Math.round(hi)} m²`;
    const lab3 = document.createElement("span");
    lab3.className = "void-key";
    lab3.textContent = "grey: not one bounce before T";
    bar.append(lab1, sw, lab2, lab3);
    this.#overlay();
  }

  #overlay() {
    const d = this.#descent;
    const arm = d.arms[this.#arm];
    // θ = (h0, v0): the map's x is v0, its y is h0.
    const paths = arm.runs.map((run) => ({
      points: run.path.map(([h, v]) => [v, h]), cls: run.converged ? "converged" : "stuck",
    }));
    const points = [
      ...d.landscape.starts.map(([h, v]) => ({ x: v, y: h, cls: "start", r: 6 })),
      ...arm.runs.map((run) => {
        const [h, v] = run.path.at(-1);
        return { x: v, y: h, cls: run.converged ? "end-ok" : "end-stuck", r: 4 };
      }),
      { x: d.problem.optimum[1], y: d.problem.optimum[0], cls: "optimum", r: 6 },
    ];
    this.map.setOverlay({ paths, points });
    this.map.setNote(`${arm.label}: ${arm.converged} of ${arm.runs.length} starts reached the optimum (white ring), ${arm.cannot_step} could not take a single downhill step. Open circles mark the starts, solid dots where each run stopped; a path that leaves the scanned box is cut at its edge.`);
  }

  // ---- time-of-impact term and hybrid_jacobian ----------------------------------------------

  #impact() {
    if (!this.#r || this.#speed === null) return;
    const speed = this.#speed;
    const slider = $("speed-log");
    slider.value = String(Math.log10(speed));
    const label = `${num(speed)} m/s`;
    slider.setAttribute("aria-valuetext", label);
    $("speed-label").textContent = label;
    if (!$("impact").open) return;

    const term = this.#bench.timeOfImpactTerm(speed);
    $("impact-term").textContent = term.ok
      ? `(1+e)·g/|v| = ${num(term.value)} 1/s at ${label}`
      : tidy(term.message);
    const h = this.#bench.hybridAtSpeed(speed);
    const out = $("impact-hybrid");
    if (h.ok) {
      const v = h.value;
      const ev = v.events[0];
      out.dataset.kind = "ok";
      out.textContent = `hybrid_jacobian answers: released from ${num(v.height)} m, one impact at t = ${num(ev.t)} s (guard speed ${num(Math.abs(ev.guard_speed))} m/s), followed to t = ${num(v.t1)} s. dv/dy₀ = ${num(v.jacobian[2])} 1/s, the time-of-impact term carried through; the half-step recomputation moved J by ${num(v.probe_gap)}.`;
    } else {
      out.dataset.kind = "refused";
      out.textContent = `hybrid_jacobian refuses (${h.kind}): ${tidy(h.message)}`;
    }

    if (!this.#termCurve) {
      this.#termCurve = SPEEDS.map((s) => [s, this.#bench.timeOfImpactTerm(s)]).filter(([, t]) => t.ok).map(([s, t]) => [s, t.value]);
    }
    const graze = this.#bench.grazeSpeed();
    const dropSpeed = this.#r.exact.impact_speed;
    this.impactPlot.setData({
      series: [
        { label: "(1+e)·g/|v| with the limit restitution", cls: "s-term", points: this.#termCurve },
        { label: `this drop: ${num(dropSpeed)} m/s, ${num(this.#r.exact.time_of_impact_term)} 1/s`, cls: "s-drop", dots: true,
          points: [[dropSpeed, this.#r.exact.time_of_impact_term]] },
      ],
      bands: [{ from: 1e-4, to: graze }],
      bandLabel: `refused as grazing (below ${num(graze)} m/s)`,
      summary: `The term falls as one over the speed: ${num(this.#termCurve.at(-1)[1])} 1/s at 10 m/s, ${num(this.#termCurve[0][1])} 1/s at 1e-4 m/s.`,
    });
    this.impactPlot.setMarker({ x: speed, label, points: term.ok ? [{ y: term.value, cls: h.ok ? "s-term" : "refused" }] : [] });
  }
}

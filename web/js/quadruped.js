// The quadruped panel: the gait of each contact law animated side by side, and the
// two-axis readout (forward fidelity, gradient accuracy) with what the numbers conclude.
// Presentation only: the report, every trajectory point and every table entry come from
// the core (`quadruped_experiment`, through sim.js in a background worker). Here they are
// placed on screen, formatted, and compared with each other (which is smaller, which is
// positive) to word the conclusion; nothing is simulated or differentiated.
import { exp, num, signed, tidy } from "./format.js";
import { Background } from "./sim.js";

const $ = (id) => document.getElementById(id);
const SVG = "http://www.w3.org/2000/svg";
const FEET = ["FL", "FR", "HL", "HR"];
/** Near legs (left) are drawn over the far ones (right): they overlap in the plane. */
const NEAR = [0, 2];
const FAR = [1, 3];
const MODE_TEXT = {
  separated: "in the air",
  sticking: "sticking",
  sliding_forward: "sliding forward",
  sliding_backward: "sliding back",
};
/** Foot markers in mm of the drawing: shape as well as colour tells the modes apart. */
const R = 14;
const MARK = {
  separated: `M ${-R} 0 a ${R} ${R} 0 1 0 ${2 * R} 0 a ${R} ${R} 0 1 0 ${-2 * R} 0`,
  sticking: `M ${-R} 0 a ${R} ${R} 0 1 0 ${2 * R} 0 a ${R} ${R} 0 1 0 ${-2 * R} 0`,
  sliding_forward: `M ${-R} ${-R} L ${1.3 * R} 0 L ${-R} ${R} Z`,
  sliding_backward: `M ${R} ${-R} L ${-1.3 * R} 0 L ${R} ${R} Z`,
};
const NUMBER_WORDS = ["no", "one", "two", "three"];

function node(name, attrs = {}, parent = null) {
  const n = document.createElementNS(SVG, name);
  for (const [k, v] of Object.entries(attrs)) n.setAttribute(k, String(v));
  if (parent) parent.append(n);
  return n;
}

function html(tag, attrs = {}, text = "") {
  const n = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) n.setAttribute(k, String(v));
  if (text) n.textContent = text;
  return n;
}

/** "rigid (LCP)" or "penalty k = 1e4 N/m". */
export function lawLabel(law) {
  return law.contact.law === "rigid" ? "rigid (LCP)" : `penalty k = ${exp(law.contact.stiffness, 0)} N/m`;
}

/** "k = 1e3 and 1e4 N/m" for a list of penalty laws. */
function kList(laws) {
  const ks = laws.map((l) => exp(l.contact.stiffness, 0));
  const joined = ks.length < 3 ? ks.join(" and ") : `${ks.slice(0, -1).join(", ")} and ${ks.at(-1)}`;
  return `k = ${joined} N/m`;
}

/** "a and b" / "a, b and c" for printed numbers. */
function andList(items) {
  return items.length < 3 ? items.join(" and ") : `${items.slice(0, -1).join(", ")} and ${items.at(-1)}`;
}

/**
 * What the report concludes, as data and sentences. The decisions (who wins each axis,
 * which stiffnesses match, are far, pump energy, beat the rigid law) are the core's
 * (`report.verdict`, crates/ferromotion-quadruped/src/verdict.rs); this only words them.
 */
export function assess(report) {
  const rigid = report.rigid;
  const v = report.verdict;
  const laws = (idx) => idx.map((i) => report.penalty[i]);
  const out = { forward: null, gradient: [], sentences: {} };
  if (v.incomparable !== null && v.incomparable !== undefined) {
    out.sentences.overall = rigid.failure
      ? `The rigid run failed (${tidy(rigid.failure)}), so there is nothing to compare.`
      : "No penalty run finished, so there is nothing to compare.";
    return out;
  }
  const pen = laws(v.compared);
  const rf = rigid.forward;
  const fv = v.forward;
  const conv = `its own dt/${report.config.refinement} run`;
  const theirs = `their own dt/${report.config.refinement} run`;

  // ---- forward fidelity ----
  const matches = laws(fv.matches);
  const leastPen = report.penalty[fv.least_penetration];
  const leastCreep = report.penalty[fv.least_creep];
  const closer = laws(fv.closer);
  const pumps = laws(fv.pumps);
  const fwd = [];
  fwd.push(rf.max_penetration === 0
    ? "The rigid law never lets a foot below the ground"
    : `The rigid law's deepest penetration is ${num(rf.max_penetration)} m`);
  fwd[0] += ` and its sticking feet slip at most ${num(rf.max_creep)} m/s; every penalty stiffness sinks at least ${num(leastPen.forward.max_penetration)} m (${kList([leastPen])}) and lets a “sticking” foot creep at ${num(leastCreep.forward.max_creep)} m/s or more.`;
  if (closer.length) {
    fwd.push(`The penalty runs that stay closer to ${theirs} than the rigid one does (${kList(closer)}: ${andList(closer.map((l) => num(l.forward.converged_distance)))} m against ${num(rf.converged_distance)} m) sink ${andList(closer.map((l) => num(l.forward.max_penetration)))} m into the ground to get there.`);
  }
  const far = laws(fv.far);
  if (far.length) {
    fwd.push(`At ${kList(far)} the trunk strays up to ${num(Math.max(...far.map((l) => l.forward.converged_distance)))} m from ${theirs}, over ten times the rigid law's gap: at this step the law is far from converged.`);
  }
  if (pumps.length) {
    fwd.push(`At ${kList(pumps)} the ground does positive work on the robot (${andList(pumps.map((l) => signed(l.forward.contact_work)))} J): the contact pumps energy in, which no floor does.`);
  }
  out.forward = { win: fv.rigid_wins, matches };
  fwd.push(fv.rigid_wins
    ? `No penalty stiffness matches it on penetration, creep, distance to ${conv} and a ground that does no positive work, all at once.`
    : `The penalty law at ${kList(matches)} matches or beats it on penetration, creep, distance to ${conv} and contact work at once.`);
  out.sentences.forwardHead = `Forward fidelity: the rigid law ${fv.rigid_wins ? "wins" : "does not win"}.`;
  out.sentences.forward = fwd.join(" ");

  // ---- gradient accuracy ----
  const tol = report.config.probe_tol;
  const grad = [];
  const uncert = laws(v.uncertified);
  for (const m of v.gradient) {
    const r = rigid.gradient[m.key];
    const vals = laws(m.certified);
    const val = (l) => l.gradient[m.key];
    const verdict = m.outcome;
    let text;
    if (verdict === "not computed") {
      text = `On ${m.name}: not computed yet (the button below)`;
    } else if (verdict === "undecided") {
      text = `On ${m.name}, no comparison: ${m.rigid_certified ? "no penalty reference is certified" : "the rigid law's reference is not certified"}`;
    } else if (verdict === "tie") {
      text = `On ${m.name}, a tie: every certified error is below the reference's own agreement tolerance ${exp(tol, 0)} (rigid ${num(r)}, penalty ${num(Math.min(...vals.map(val)))} to ${num(Math.max(...vals.map(val)))})`;
    } else if (verdict === "win") {
      text = `On ${m.name}, the rigid law wins: ${num(r)} against ${num(Math.min(...vals.map(val)))} at best`;
    } else {
      const better = laws(m.better);
      text = `On ${m.name}, the rigid law loses to ${kList(better)}: ${andList(better.map((l) => num(val(l))))} against ${num(r)}`;
    }
    if (m.unexplained.length && verdict !== "not computed") text += ` (not certified at ${kList(laws(m.unexplained))})`;
    out.gradient.push({ key: m.key, name: m.name, verdict });
    grad.push(`${text}.`);
  }
  if (uncert.length) {
    grad.push(`At ${kList(uncert)} not one probe-stable central difference exists at this step: the map is too rough to have a usable derivative.`);
    // One sentence per stiffness, so two refusals never run together in one parenthesis.
    for (const l of uncert) {
      grad.push(`The core's reason at ${exp(l.contact.stiffness, 0)} N/m (input ${report.inputs[0]}): ${tidy(l.gradient.reference[0].failure).replace(/\.$/, "")}.`);
    }
  }
  if (report.config.converged_gradient) {
    const known = (x) => x !== null && x !== undefined;
    const r = report.config.refinement;
    const rs = rigid.gradient.converged_spread;
    const ps = pen.map((p) => p.gradient.converged_spread).filter(known);
    grad.push(`Read the converged column against its reference's own error in dt, each reference against the same probe at dt/${2 * r}: the rigid one (its own step at dt/${r}) moves by ${known(rs) ? num(rs) : "an unmeasured amount"}${ps.length ? `, the penalty ${ps.length === 1 ? "one" : "ones"} by ${Math.min(...ps) === Math.max(...ps) ? num(ps[0]) : `${num(Math.min(...ps))} to ${num(Math.max(...ps))}`}` : ""}. The penalty references difference an event-located run (every touchdown, lift-off and stick/slide switch placed inside its step), so they carry the force's jump at touchdown that every fixed-step tangent leaves out.`);
    const rescued = laws(v.converged_only);
    if (rescued.length) {
      grad.push(`At ${kList(rescued)} the map at dt has no usable derivative, but the law converged in dt has one: the tangent at dt is ${andList(rescued.map((l) => num(l.gradient.converged_error)))} away from it, relative.`);
    }
  }
  out.sentences.gradient = grad.join(" ");
  const count = (v) => out.gradient.filter((x) => x.verdict === v).length;
  const tally = [];
  for (const [v, one] of [["tie", "a tie"], ["win", "a win"], ["loss", "a loss"]]) {
    if (count(v)) tally.push(count(v) === 1 ? one : `${NUMBER_WORDS[count(v)]} ${v === "loss" ? "losses" : `${v}s`}`);
  }
  const open = [];
  if (count("not computed")) open.push("one measure not computed yet");
  if (count("undecided")) open.push(`${NUMBER_WORDS[count("undecided")]} undecided`);
  out.sentences.gradientHead = `Gradient accuracy: ${tally.length ? `${andList(tally)} for the rigid law` : "no decided measure"}${open.length ? `; ${andList(open)}` : ""}.`;

  // ---- overall ----
  const parts = [];
  for (const [v, word] of [["tie", "ties"], ["win", "wins"], ["loss", "loses"]]) {
    if (count(v)) parts.push(`${word} ${NUMBER_WORDS[count(v)] || count(v)}`);
  }
  const pending = count("not computed") ? " (the third, converged in dt, is not computed yet)" : "";
  const gradSummary = parts.length ? `on gradients it ${andList(parts)} of the measures${pending}` : "the gradient measures cannot be compared";
  const lost = out.gradient.filter((x) => x.verdict === "loss").map((x) => x.name);
  const both = v.both;
  out.both = both;
  out.sentences.overall = `Overall, on this trotting quadruped the rigid law ${out.forward.win ? "wins" : "does not win"} forward fidelity; ${gradSummary}. ${both
    ? "It wins both axes at once."
    : lost.length
      ? `It does not win both axes at once: stiff and faithful against soft and differentiable is a real trade here, on ${andList(lost)}.`
      : count("not computed")
        ? "Whether it wins both axes at once depends on the converged-in-dt measure."
        : "It does not win both axes at once."}`;
  return out;
}

/** The animation of one law: an SVG in a figure, updated frame by frame. */
class Stage {
  constructor(law, host, box, robot) {
    this.law = law;
    this.traj = law.trajectory;
    this.robot = robot;
    const fig = html("figure", { class: "quad-stage" });
    const id = `quad-stage-${law.contact.law}-${law.contact.stiffness || 0}`.replace(/[^\w-]/g, "_");
    const cap = html("figcaption", { id: `${id}-cap` });
    const name = html("strong", {}, lawLabel(law));
    this.caption = html("span", { class: "quad-modes" });
    cap.append(name, " ", this.caption);
    const [x0, z0, x1, z1] = box;
    const svg = node("svg", {
      class: "quad-svg",
      viewBox: `${x0 * 1000} ${-z1 * 1000} ${(x1 - x0) * 1000} ${(z1 - z0) * 1000}`,
      role: "img",
      "aria-labelledby": `${id}-cap`,
      preserveAspectRatio: "xMidYMid meet",
    });
    node("rect", { class: "quad-ground", x: x0 * 1000, y: 0, width: (x1 - x0) * 1000, height: -z0 * 1000 + 1 }, svg);
    node("line", { class: "quad-ground-line", x1: x0 * 1000, y1: 0, x2: x1 * 1000, y2: 0 }, svg);
    this.legs = [];
    const leg = (f, cls) => (this.legs[f] = node("polyline", { class: `quad-leg ${cls}` }, svg));
    for (const f of FAR) leg(f, "far");
    this.trunk = node("line", { class: "quad-trunk" }, svg);
    for (const f of NEAR) leg(f, "near");
    // The trunk's centre over the whole run (state x, z), over the trunk so it shows.
    const path = [];
    for (let i = 0; i < this.traj.t.length; i++) {
      const [x, z] = this.traj.state.slice(22 * i, 22 * i + 2);
      path.push(`${(x * 1000).toFixed(1)},${(-z * 1000).toFixed(1)}`);
    }
    node("polyline", { class: "quad-trail", points: path.join(" ") }, svg);
    this.feet = FEET.map((name, f) => {
      const g = node("g", { class: "quad-foot" }, svg);
      const p = node("path", { "data-foot": name, class: NEAR.includes(f) ? "near" : "far" }, g);
      return { g, p };
    });
    fig.append(svg, cap);
    host.append(fig);
  }

  /** Modes of the four feet at frame i: those of the step that ended there. */
  modes(i) {
    return i === 0 ? FEET.map(() => "separated") : this.traj.modes[i - 1];
  }

  draw(i) {
    const p = this.traj.points.slice(24 * i, 24 * (i + 1));
    const pt = (k) => [p[2 * k] * 1000, -p[2 * k + 1] * 1000];
    const front = pt(0);
    const hind = pt(2);
    // The trunk is drawn as its full length along the hips' axis (hips at ±hip_offset).
    const s = this.robot.trunk_length / 2 / this.robot.hip_offset;
    const c = [(front[0] + hind[0]) / 2, (front[1] + hind[1]) / 2];
    const u = [(front[0] - hind[0]) / 2 * s, (front[1] - hind[1]) / 2 * s];
    this.trunk.setAttribute("x1", c[0] - u[0]);
    this.trunk.setAttribute("y1", c[1] - u[1]);
    this.trunk.setAttribute("x2", c[0] + u[0]);
    this.trunk.setAttribute("y2", c[1] + u[1]);
    const modes = this.modes(i);
    for (let f = 0; f < 4; f++) {
      const [h, k, ft] = [pt(f), pt(4 + f), pt(8 + f)];
      this.legs[f].setAttribute("points", `${h[0]},${h[1]} ${k[0]},${k[1]} ${ft[0]},${ft[1]}`);
      const { g, p: mark } = this.feet[f];
      g.setAttribute("transform", `translate(${ft[0]} ${ft[1]})`);
      mark.setAttribute("d", MARK[modes[f]]);
      mark.dataset.mode = modes[f];
    }
    this.caption.textContent = FEET.map((n, f) => `${n} ${MODE_TEXT[modes[f]]}`).join(" · ");
  }
}

/** The panel: fetches the report when first opened, then animates and tabulates it. */
export class QuadrupedPanel {
  #report;
  #background = null;
  #data = null;
  #quick = null; // seconds the first report took
  #stages = [];
  #frame = 0;
  #playing = false;
  #raf = 0;
  #tick = 0;
  #converging = null; // {t0, timer} while the slow columns compute

  /**
   * `report(sentence, kind)` is the page's status line. What the browser tests read and
   * set: `window.ferromotionLab.quadruped` ({busy, report, seconds, converged}: the last
   * report shown and the seconds its quick and slow runs took in the worker), and
   * `window.ferromotionLab.quadrupedConfig`, fields of the core's QuadrupedExperiment
   * merged into the configuration when set before the panel is opened (a cheaper
   * experiment for a test); unset, the core's defaults run.
   */
  constructor({ report }) {
    this.#report = report;
    this.hook = (window.ferromotionLab.quadruped = { busy: false, report: null, seconds: null, converged: null });
    $("quadruped").addEventListener("toggle", () => this.#toggle());
    $("quad-play").addEventListener("click", () => this.#play(!this.#playing));
    $("quad-time").addEventListener("input", () => {
      this.#play(false);
      this.#show(Number($("quad-time").value), true);
    });
    $("quad-converged").addEventListener("click", () => this.#converge());
    $("quad-cancel").addEventListener("click", () => this.#cancel());
  }

  #busy(on) {
    this.hook.busy = on;
    $("quadruped").setAttribute("aria-busy", String(on));
    document.body.dataset.quadruped = on ? "busy" : "idle";
  }

  #worker() {
    if (!this.#background) this.#background = new Background();
    return this.#background;
  }

  #toggle() {
    if (!$("quadruped").open) {
      this.#play(false);
      return;
    }
    if (this.#data || this.hook.busy) return;
    this.#busy(true);
    $("quad-note").textContent = "Computing the quadruped's report in the background: six laws, one gait period each, with their Jacobians and finite-difference references…";
    const config = { ...(window.ferromotionLab.quadrupedConfig || {}), converged_gradient: false };
    this.#worker().run("quadruped", { config }).then((res) => {
      this.#busy(false);
      if (!res.ok) {
        this.#report(res.message, "error");
        $("quad-note").textContent = "The quadruped's report could not be computed; the status line says why.";
        return;
      }
      this.#quick = res.value.seconds;
      this.hook.seconds = res.value.seconds;
      $("quad-note").textContent = `Computed in ${res.value.seconds.toFixed(1)} s in a background worker.`;
      this.#take(res.value.report);
    });
  }

  #take(report) {
    const first = !this.#data;
    this.#data = report;
    this.hook.report = report;
    $("quad-result").hidden = false;
    this.#setup(report);
    // Every run failing leaves nothing to animate; the table then says why.
    const animate = this.#laws().some((l) => l.trajectory);
    for (const id of ["quad-laws", "quad-controls", "quad-key"]) $(id).hidden = !animate;
    if (first && animate) this.#pickers(report);
    this.#table(report);
    this.#verdict(report);
    if (first && animate) this.#stage();
  }

  #setup(r) {
    const b = r.config.robot;
    const c = r.config;
    const steps = r.rigid.trajectory ? r.rigid.trajectory.modes.length : "";
    $("quad-setup").textContent = `This run: trunk ${b.trunk_mass} kg and ${b.trunk_length} m long, thighs ${b.thigh_mass} kg and shanks ${b.shank_mass} kg of ${b.thigh_length} and ${b.shank_length} m, PD gains ${b.kp} N·m/rad and ${b.kd} N·m·s/rad on every joint, Coulomb friction μ = ${b.friction}; a trot of period ${b.period} s followed for ${c.t_final} s at dt = ${exp(c.dt, 0)} s${steps ? ` (${steps} steps)` : ""}, from feet ${c.clearance} m above the ground and the trunk moving forward at ${c.speed} m/s. Penalty law at k = ${c.stiffness.map((k) => exp(k, 0)).join(", ")} N/m per foot, damping ratio ${c.damping_ratio} on a ${c.reference_mass} kg foot mass.`;
    for (const n of document.querySelectorAll("#quadruped [data-quad='refinement']")) n.textContent = `dt/${c.refinement}`;
    for (const n of document.querySelectorAll("#quadruped [data-quad='probe']")) n.textContent = exp(c.typical_probe, 0);
  }

  // ---- animation -------------------------------------------------------------------------

  #laws() {
    return [this.#data.rigid, ...this.#data.penalty];
  }

  #pickers(report) {
    const laws = this.#laws();
    const pen = report.penalty.length;
    // Shown at first: the rigid law, the softest and the stiffest penalty law.
    const start = new Set([0, 1, pen]);
    const box = $("quad-laws");
    const legend = box.querySelector("legend");
    const items = laws.map((law, i) => {
      const label = html("label", { class: "choice" });
      const input = html("input", { type: "checkbox", value: String(i) });
      input.checked = start.has(i) && !!law.trajectory;
      input.disabled = !law.trajectory;
      input.addEventListener("change", () => this.#stage());
      label.append(input, ` ${lawLabel(law)}${law.trajectory ? "" : ` (failed: ${tidy(law.failure)})`}`);
      return label;
    });
    box.replaceChildren(legend, ...items);
    const n = laws.find((l) => l.trajectory).trajectory.t.length - 1;
    const slider = $("quad-time");
    slider.max = String(n);
    slider.value = "0";
  }

  #stage() {
    const laws = this.#laws();
    const picked = [...document.querySelectorAll("#quad-laws input:checked")].map((i) => laws[Number(i.value)]);
    // One frame for every law shown: the same scale side by side.
    let [x0, z0, x1, z1] = [Infinity, 0, -Infinity, 0];
    const robot = this.#data.config.robot;
    const s = robot.trunk_length / 2 / robot.hip_offset;
    for (const law of picked) {
      const p = law.trajectory.points;
      for (let i = 0; i < p.length; i += 24) {
        for (let k = 0; k < 24; k += 2) {
          x0 = Math.min(x0, p[i + k]);
          x1 = Math.max(x1, p[i + k]);
          z0 = Math.min(z0, p[i + k + 1]);
          z1 = Math.max(z1, p[i + k + 1]);
        }
        // The trunk's ends lie beyond the hips.
        const [fx, fz, hx, hz] = [p[i], p[i + 1], p[i + 4], p[i + 5]];
        const cx = (fx + hx) / 2;
        const cz = (fz + hz) / 2;
        for (const sg of [-1, 1]) {
          x0 = Math.min(x0, cx + sg * (fx - hx) / 2 * s);
          x1 = Math.max(x1, cx + sg * (fx - hx) / 2 * s);
          z1 = Math.max(z1, cz + sg * (fz - hz) / 2 * s);
        }
      }
    }
    const m = 0.04;
    const box = [x0 - m, z0 - m, x1 + m, z1 + m];
    const host = $("quad-stages");
    host.replaceChildren();
    this.#stages = picked.map((law) => new Stage(law, host, box, robot));
    $("quad-stages-empty").hidden = picked.length > 0;
    this.#show(this.#frame, false);
  }

  #show(i, announce) {
    const laws = this.#laws().filter((l) => l.trajectory);
    const traj = laws[0].trajectory;
    const n = traj.t.length - 1;
    i = Math.min(n, Math.max(0, i));
    this.#frame = i;
    const t = traj.t[i];
    const label = `t = ${t.toFixed(3)} s, step ${i} of ${n}`;
    const slider = $("quad-time");
    if (Number(slider.value) !== i) slider.value = String(i);
    slider.setAttribute("aria-valuetext", label);
    $("quad-time-label").textContent = label;
    for (const s of this.#stages) s.draw(i);
    if (announce) {
      clearTimeout(this.#tick);
      this.#tick = setTimeout(() => {
        $("quad-frame").textContent = `${label}. ${this.#stages.map((s) => `${lawLabel(s.law)}: ${s.caption.textContent}`).join(". ")}.`;
      }, 250);
    }
  }

  #play(on) {
    this.#playing = on && $("quadruped").open && this.#stages.length > 0;
    const button = $("quad-play");
    button.textContent = this.#playing ? "Pause" : "Play";
    button.setAttribute("aria-pressed", String(this.#playing));
    cancelAnimationFrame(this.#raf);
    if (!this.#playing) return;
    const traj = this.#stages[0].traj;
    const n = traj.t.length - 1;
    const dt = this.#data.config.dt;
    if (this.#frame >= n) this.#show(0, false);
    let clock = traj.t[this.#frame];
    // Time advances by the gaps between frames' timestamps (never backwards: the first
    // callback only starts the clock, as a frame's timestamp may predate this call).
    let last = null;
    const loop = (now) => {
      const speed = Number($("quad-speed").value);
      if (last !== null) clock += (Math.max(0, now - last) / 1000) * speed;
      last = now;
      let i = Math.max(0, Math.round((clock - traj.t[0]) / dt));
      if (i > n) {
        i = 0;
        clock = traj.t[0];
      }
      if (i !== this.#frame) this.#show(i, false);
      this.#raf = requestAnimationFrame(loop);
    };
    this.#raf = requestAnimationFrame(loop);
  }

  // ---- the two-axis table ----------------------------------------------------------------

  #table(report) {
    const laws = this.#laws();
    const a = assess(report);
    const verdict = Object.fromEntries(a.gradient.map((g) => [g.key, g.verdict]));
    const ok = laws.filter((l) => l.forward && l.gradient);
    const best = (f) => {
      const v = ok.map(f).filter((x) => x !== null && x !== undefined);
      return v.length ? Math.min(...v) : null;
    };
    const lows = {
      pen: best((l) => l.forward.max_penetration),
      creep: best((l) => l.forward.max_creep),
      conv: best((l) => l.forward.converged_distance),
      tangent_error: verdict.tangent_error === "tie" ? null : best((l) => l.gradient.tangent_error),
      typical_probe_error: best((l) => l.gradient.typical_probe_error),
      converged_error: best((l) => l.gradient.converged_error),
    };
    const converged = report.config.converged_gradient;
    const rows = laws.map((law) => {
      const tr = document.createElement("tr");
      const th = html("th", { scope: "row" }, lawLabel(law));
      tr.append(th);
      if (!law.forward || !law.gradient) {
        tr.append(html("td", { colspan: 11, class: "failed" }, `failed: ${tidy(law.failure)}`));
        return tr;
      }
      const f = law.forward;
      const g = law.gradient;
      const td = (text, key, value, extra = "") => {
        const c = html("td", { "data-col": key }, text);
        if (text.startsWith("not ")) c.dataset.note = "";
        const cls = [extra];
        if (value !== undefined && value !== null && lows[key] !== undefined && value === lows[key]) cls.push("best");
        c.className = cls.join(" ").trim();
        return c;
      };
      const err = (x, notYet) => (notYet ? "not computed" : x === null || x === undefined ? "not certified" : num(x));
      tr.append(
        td(num(f.max_penetration), "pen", f.max_penetration),
        td(num(f.max_creep), "creep", f.max_creep),
        td(signed(f.contact_work), "work", null, f.contact_work > 0 ? "wrong" : ""),
        td(signed(f.energy_end - f.energy_start), "energy", null),
        td(num(f.converged_distance), "conv", f.converged_distance),
        td(String(law.modes.total), "modes", null),
        td(err(g.tangent_error), "tangent_error", g.tangent_error),
        td(err(g.typical_probe_error), "typical_probe_error", g.typical_probe_error),
        td(err(g.converged_error, !converged), "converged_error", g.converged_error),
        td(err(g.refined_tangent_error, !converged), "refined", null),
        td(`${g.certified_columns}/3`, "certified", null),
      );
      return tr;
    });
    $("quad-rows").replaceChildren(...rows);
    $("quad-modes").textContent = `Contact-mode changes in the period, per law (touchdowns + lift-offs + stick→slide + slide→stick + slide reversals): ${laws.filter((l) => l.modes).map((l) => {
      const m = l.modes;
      return `${lawLabel(l)} ${m.total} = ${m.touchdowns} + ${m.liftoffs} + ${m.stick_to_slide} + ${m.slide_to_stick} + ${m.slide_reversals}`;
    }).join("; ")}.`;
    const lcp = report.rigid.lcp;
    $("quad-lcp").textContent = lcp
      ? `The rigid law's complementarity problem, over its ${lcp.steps} contact steps: at most ${lcp.max_pivots} Lemke pivots, complementarity within ${num(lcp.max_complementarity)} J, friction cone within ${num(lcp.max_cone_violation)} N·s, normal velocity residual ${num(lcp.max_normal_residual)} m/s.`
      : "";
  }

  #verdict(report) {
    const a = assess(report);
    const para = (id, head, body) => {
      const p = $(id);
      p.replaceChildren();
      if (head) p.append(html("strong", {}, head), " ");
      p.append(body || "");
    };
    para("quad-verdict-forward", a.sentences.forwardHead, a.sentences.forward);
    para("quad-verdict-gradient", a.sentences.gradientHead, a.sentences.gradient);
    $("quad-verdict-overall").textContent = a.sentences.overall;
    const converged = report.config.converged_gradient;
    $("quad-converged").hidden = converged;
    if (converged) $("quad-cancel").hidden = true;
  }

  // ---- the slow columns ------------------------------------------------------------------

  #converge() {
    if (this.#converging) return;
    const run = (this.#converging = { t0: performance.now(), timer: 0 });
    this.#busy(true);
    $("quad-converged").disabled = true;
    $("quad-cancel").hidden = false;
    const elapsed = $("quad-elapsed");
    elapsed.textContent = "";
    run.timer = setInterval(() => {
      elapsed.textContent = `${Math.round((performance.now() - run.t0) / 1000)} s so far.`;
    }, 1000);
    $("quad-converged-note").textContent = `Computing the converged-in-dt columns in the background: every law again at dt/${this.#data.config.refinement}, with dozens of probe rollouts each. The quick report took ${this.#quick.toFixed(1)} s; this takes dozens of times longer. The rest of the page stays usable.`;
    const config = { ...(window.ferromotionLab.quadrupedConfig || {}), converged_gradient: true };
    this.#worker().run("quadruped", { config }).then((res) => {
      if (this.#converging !== run) return; // stopped meanwhile
      this.#endConverge();
      if (!res.ok) {
        this.#report(res.message, "error");
        $("quad-converged-note").textContent = "The converged columns could not be computed; the status line says why.";
        return;
      }
      this.hook.converged = res.value.seconds;
      $("quad-converged-note").textContent = `Converged-in-dt columns computed in ${res.value.seconds.toFixed(1)} s.`;
      this.#take(res.value.report);
    });
  }

  #endConverge() {
    clearInterval(this.#converging.timer);
    this.#converging = null;
    this.#busy(false);
    $("quad-elapsed").textContent = "";
    $("quad-cancel").hidden = true;
    $("quad-converged").disabled = false;
  }

  /** Stop the slow job: its worker is ended (a running core call cannot be interrupted). */
  #cancel() {
    if (!this.#converging) return;
    this.#background.terminate();
    this.#background = null;
    this.#endConverge();
    $("quad-converged-note").textContent = "Stopped. The table keeps the quick report.";
    $("quad-converged").focus();
  }
}

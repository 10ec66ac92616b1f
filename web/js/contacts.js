// The "two contacts at once" panel under Go further: a ball dropped into a V-groove from a
// small sideways offset, the rigid groove's exact answer beside a fixed-step soft-contact
// simulator's, offset by offset through zero. The core computes the whole document for one
// angle (experiments/two_contacts.rs, the wasm export twoContacts) in the background worker
// when the panel is opened or the angle moves; the offset slider only picks one of the
// document's rows, so it never waits for the core.
// Presentation only: every number and every verdict word (Jacobian, SetValued,
// NotDifferentiable, or another refusal's kind) comes from the core through sim.js; the
// sentences only read what the readouts print.
import { dtText, kText, num, signed, tidy } from "./format.js";
import { LogPlot } from "./plots.js";

const $ = (id) => document.getElementById(id);

/** An offset in m as the slider prints it, in mm ("−3 mm", "0 mm", "+12 mm"; a no-break space). */
const mm = (x) => {
  const v = Number((x * 1e3).toPrecision(6));
  return v === 0 ? "0\u00a0mm" : `${v > 0 ? "+" : "−"}${Math.abs(v)}\u00a0mm`;
};
/** An angle in degrees as the slider prints it. */
const deg = (a) => `${Number(a.toPrecision(6))}°`;
/** Which wall a guard index names: wall 0 is the left one (its normal points up and right). */
const wall = (i) => (i === 0 ? "left" : "right");
/** "left wall first, then right" for an order [0, 1]. */
const orderText = (o) => `${wall(o[0])} wall first [${o.join(", ")}]`;
/** x(T) = (p_x, p_y) m, (v_x, v_y) m/s. */
const stateText = (x) => `p(T) = (${signed(x[0])}, ${signed(x[1])}) m, v(T) = (${signed(x[2])}, ${signed(x[3])}) m/s`;

export class ContactsPanel {
  #background;
  #ready = false;
  #busy = false;
  #want = null; // the angle asked for last, degrees
  #doc = null; // the core's TwoContacts on screen

  constructor({ background }) {
    this.#background = background;
    this.statePlot = new LogPlot($("contacts-state-plot"), {
      title: "Where the ball is at T: p_x(T) against the sideways offset of the release point",
      xLabel: "release offset (mm)", yLabel: "p_x(T) (m)", xDomain: [-20, 20], yScale: "linear", xScale: "linear", height: [170, 300],
    });
    this.gradientPlot = new LogPlot($("contacts-gradient-plot"), {
      title: "The derivative dp_x(T)/dp_x(0) against the sideways offset of the release point",
      xLabel: "release offset (mm)", yLabel: "dp_x(T)/dp_x(0)", xDomain: [-20, 20], yScale: "linear", xScale: "linear", height: [170, 300],
    });
    $("contacts").addEventListener("toggle", () => this.#ask());
    $("contacts-angle").addEventListener("input", () => this.#ask());
    $("contacts-offset").addEventListener("input", () => this.#pick());
    for (const b of document.querySelectorAll("#contacts-presets button")) {
      b.addEventListener("click", () => {
        $("contacts-angle").value = b.dataset.angle;
        this.#ask();
      });
    }
  }

  /** The core has loaded: the controls open. */
  enable() {
    this.#ready = true;
    for (const n of $("contacts").querySelectorAll("input, button")) n.disabled = false;
    this.#ask();
  }

  #angle() {
    return Number($("contacts-angle").value);
  }

  /** Ask the core for the document at the slider's angle (the latest one wins). */
  #ask() {
    const angle = this.#angle();
    const slider = $("contacts-angle");
    slider.setAttribute("aria-valuetext", deg(angle));
    $("contacts-angle-label").textContent = deg(angle);
    if (!this.#ready || !$("contacts").open) return;
    if (this.#doc && this.#doc.options.angle_degrees === angle) return;
    this.#want = angle;
    if (this.#busy) return; // asked again when the running job returns
    this.#busy = true;
    $("contacts-note").dataset.kind = "";
    $("contacts-note").textContent = `Dropping the ball at every offset into a ${deg(angle)} groove, in the background…`;
    this.#background.run("twoContacts", { options: { angle_degrees: angle } }).then((res) => {
      this.#busy = false;
      if (this.#want !== angle) {
        this.#ask();
        return;
      }
      if (!res.ok) {
        this.#doc = null;
        $("contacts-result").hidden = true;
        $("contacts-note").dataset.kind = "error";
        $("contacts-note").textContent = `No answer at ${deg(angle)}: ${res.message}`;
        return;
      }
      $("contacts-note").textContent = "";
      this.#paint(res.value);
    });
  }

  #paint(d) {
    this.#doc = d;
    const rows = d.rows;
    const slider = $("contacts-offset");
    slider.min = String(-d.zero);
    slider.max = String(rows.length - 1 - d.zero);
    const lo = rows[0].offset * 1e3;
    const hi = rows.at(-1).offset * 1e3;
    this.statePlot.xDomain = [lo, hi];
    this.gradientPlot.xDomain = [lo, hi];
    $("contacts-result").hidden = false;
    this.#summary(d);
    this.#plots(d);
    this.#pick();
  }

  /** The angle's sentence, read off the zero-offset row's verdict. */
  #summary(d) {
    const zero = d.rows[d.zero];
    const r = zero.rigid;
    const angle = deg(d.options.angle_degrees);
    let text;
    if (r.verdict === "Jacobian") {
      const how = r.commuted ? "both walls are hit at once and the two orders give one state and one matrix (they commute):" : "";
      text = `At ${angle}, on the axis ${how} Jacobian, dp_x(T)/dp_x(0) = ${signed(r.jacobian[0])}. Nothing jumps.`;
    } else if (r.verdict === "SetValued") {
      const side = (i) => signed(d.rows[i].rigid.x?.[0] ?? NaN);
      text = `At ${angle}, on the axis both walls are hit at once and the two orders give different states: SetValued. p_x(T) jumps from ${side(d.zero - 1)} m at ${mm(d.rows[d.zero - 1].offset)} to ${side(d.zero + 1)} m at ${mm(d.rows[d.zero + 1].offset)}; at zero no derivative exists.`;
    } else {
      text = `At ${angle}, on the axis the core refuses (${r.verdict}): ${tidy(r.message)}`;
    }
    $("contacts-summary").textContent = text;
  }

  #plots(d) {
    const rows = d.rows;
    const at = (row, f) => [row.offset * 1e3, f(row)];
    const rigidX = rows.map((row) => at(row, (w) => (w.rigid.x ? w.rigid.x[0] : NaN)));
    const rigidJ = rows.map((row) => at(row, (w) => (w.rigid.jacobian ? w.rigid.jacobian[0] : NaN)));
    const softX = rows.map((row) => at(row, (w) => w.soft.x[0]));
    const softJ = rows.map((row) => at(row, (w) => w.soft.jacobian[0]));
    const zero = rows[d.zero];
    const state = [
      { label: "rigid groove (exact)", cls: "s-rigid", dots: true, points: rigidX },
      { label: `soft walls (${kText(d.options.stiffness)}, ${dtText(d.options.dt)}, ζ = ${num(d.zeta)})`, cls: "s-euler", dashed: true, points: softX },
    ];
    // The two orders' outcomes at zero offset: two separate dots (a missing point between them).
    if (zero.rigid.outcomes.length) {
      const pts = zero.rigid.outcomes.flatMap((o, i) => (i ? [[0, NaN], [0, o[0]]] : [[0, o[0]]]));
      state.push({ label: "the two orders' outcomes (SetValued)", cls: "s-orders", dots: true, kind: "dot", points: pts });
    }
    const angle = deg(d.options.angle_degrees);
    const missing = rows.filter((row) => !row.rigid.x).map((row) => mm(row.offset));
    this.statePlot.setData({
      series: state,
      summary: `At ${angle}: the rigid groove's p_x(T) from ${signed(rigidX[0][1])} m at ${mm(rows[0].offset)} to ${signed(rigidX.at(-1)[1])} m at ${mm(rows.at(-1).offset)}${missing.length ? `, no single state at ${missing.join(", ")}` : ""}; the soft simulator's from ${signed(softX[0][1])} m to ${signed(softX.at(-1)[1])} m, ${signed(zero.soft.x[0])} m at zero.`,
    });
    const noJ = rows.filter((row) => !row.rigid.jacobian).map((row) => mm(row.offset));
    this.gradientPlot.setData({
      series: [
        { label: "rigid groove: Jacobian", cls: "s-rigid", dots: true, points: rigidJ },
        { label: "soft walls: tangent (autodiff)", cls: "s-euler", dashed: true, points: softJ },
      ],
      summary: `At ${angle}: the rigid groove's dp_x(T)/dp_x(0) lies between ${signed(Math.min(...rigidJ.map((p) => p[1]).filter(Number.isFinite)))} and ${signed(Math.max(...rigidJ.map((p) => p[1]).filter(Number.isFinite)))}${noJ.length ? `, none at ${noJ.join(", ")}` : ""}; the soft simulator's tangent between ${signed(Math.min(...softJ.map((p) => p[1])))} and ${signed(Math.max(...softJ.map((p) => p[1])))}, ${signed(zero.soft.jacobian[0])} at zero.`,
    });
    this.gradientPlot.setNote(noJ.length
      ? "No derivative exists in the rigid line's gap; the soft tangent runs through it."
      : "A Jacobian exists at every offset, zero included.");
    const soft = zero.rigid.verdict === "SetValued" ? ", neither order's outcome" : "";
    this.statePlot.setNote(`At zero offset the soft walls report p_x(T) = ${signed(zero.soft.x[0])} m${soft}, and a tangent of ${signed(zero.soft.jacobian[0])}, without a warning.`);
  }

  /** The offset slider: one row's readouts and the plots' markers (no core call). */
  #pick() {
    const slider = $("contacts-offset");
    const d = this.#doc;
    if (!d) return;
    const row = d.rows[d.zero + Number(slider.value)];
    if (!row) return;
    const label = mm(row.offset);
    slider.setAttribute("aria-valuetext", label);
    $("contacts-offset-label").textContent = label;
    const r = row.rigid;
    const out = $("contacts-rigid");
    if (r.verdict === "Jacobian") {
      out.dataset.kind = "ok";
      const commuted = r.commuted ? " at once, commuted" : "";
      out.textContent = `Rigid, exact: Jacobian (${r.impacts} impact${r.impacts === 1 ? "" : "s"}${commuted}). ${stateText(r.x)}; dp_x(T)/dp_x(0) = ${signed(r.jacobian[0])}.`;
    } else if (r.verdict === "SetValued") {
      out.dataset.kind = "refused";
      const each = r.orders.map((o, i) => `${orderText(o)} gives p_x(T) = ${signed(r.outcomes[i][0])} m`).join("; ");
      out.textContent = `Rigid, exact: SetValued. Both walls are hit at once: ${each}. No derivative exists.`;
    } else {
      out.dataset.kind = "refused";
      out.textContent = `Rigid, exact: ${r.verdict}. ${tidy(r.message)}`;
    }
    const s = row.soft;
    const against = row.gradient_error !== null
      ? ` Off the rigid Jacobian by ${num(row.gradient_error)}.`
      : r.verdict === "SetValued" ? " A gradient where none exists." : "";
    $("contacts-soft").textContent = `Soft, fixed step: ${stateText(s.x)}; dp_x(T)/dp_x(0) = ${signed(s.jacobian[0])}.${against}`;

    const marks = (plot, rigidY, softY) => plot.setMarker({
      x: row.offset * 1e3, label, points: [
        ...(Number.isFinite(rigidY) ? [{ y: rigidY, cls: "s-rigid" }] : []), { y: softY, cls: "s-euler", ring: true }],
    });
    marks(this.statePlot, r.x ? r.x[0] : NaN, s.x[0]);
    marks(this.gradientPlot, r.jacobian ? r.jacobian[0] : NaN, s.jacobian[0]);
  }
}

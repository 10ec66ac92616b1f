// The learner's side of the lab: the committed prediction, the pass checklist, the guided
// steps, the contextual hints and the retrieval quiz. Everything here is graded from what
// the learner did on this page (trusted input events reported by ui.js) against the core's
// readouts; nothing is graded from the URL the page was opened with. Progress lives in
// localStorage under one key per copy of the lab (the key carries the page's path, so two
// course copies on one host keep separate progress); "Start over" clears it and "Export my
// progress" downloads it as JSON (schema: web/progress.schema.json), with the learner's
// optional name and ID, for every checklist item the readings the learner saw when it ticked,
// and the first wrong-sign stiffness the learner chose on the slider (the opening view ticks
// item 1 but is not a choice); an instructor's `ferromotion class report` re-derives them.
import { dtText, exp, int, kText, num, retext, signText, slope, times } from "./format.js";

/** This copy's storage key: the page's folder, so /course-a/lab/ and /course-b/lab/ differ. */
const STORE = `ferromotion-lab/v1:${location.pathname.replace(/[^/]*$/, "")}`;
/** The export's schema name (web/progress.schema.json describes it). */
const EXPORT_SCHEMA = "ferromotion-lab-progress/3";
/** The learner's optional name and ID: their own keys, so "Start over" keeps them. */
const LEARNER = `${STORE}:learner`;
const LEARNER_ID = `${STORE}:learner-id`;
const LEARNER_MAX = 80;
const DAY_MS = 24 * 3600 * 1000;

/** Gradient error ratios above this after a ten- and hundredfold refinement mean "did not fall". */
const NOT_FALLING = 0.5;
/** The tolerance item needs k at or above this, N/m (docs/model.md §5). */
const TOLERANCE_K = 1e5;

const ITEMS = ["wrongSign", "refined", "exponent", "tolerance"];

/**
 * What each checklist item records of the readout it ticked on: which route it is about, and
 * paths into the core's WorkbenchReadout, each with the format.js function the page prints it
 * with (none: the core's own value, a sign state or a flag). Numbers are recorded as printed,
 * so `ferromotion class report` compares the core's value with them at the printed digits.
 */
const READINGS = {
  wrongSign: ["fixed", [["fixed.errors.sign"], ["fixed.errors.gradient", num], ["fixed.errors.dy", num],
    ["fixed.errors.dv_dy0", num], ["fixed.errors.dv_dy0_exact", num]]],
  refined: ["fixed", [["refinement.signs.0"], ["fixed.errors.sign"], ["refinement.ratio_10", num],
    ["refinement.ratio_100", num]]],
  exponent: ["fixed", [["exponent.slope", slope], ["exponent.r2", (x) => x.toFixed(3)]]],
  tolerance: ["tolerance", [["tolerance.errors.sign"], ["tolerance.lands"], ["tolerance.errors.gradient", num],
    ["tolerance.cost.force_evals", int]]],
};

/**
 * The readings an item records from readout `r`: the route, k and dt, the controls as the
 * core's WorkbenchConfig (what re-derives the readout), and each value as the page prints it.
 */
function readingsOf(item, r) {
  if (!r) return null;
  const [route, paths] = READINGS[item];
  const shown = {};
  for (const [path, print] of paths) {
    const v = path.split(".").reduce((o, key) => (o === null || o === undefined ? undefined : o[key]), r);
    if (v !== undefined) shown[path] = print && typeof v === "number" ? print(v) : v;
  }
  const t = r.tolerance;
  const config = { drop: r.drop, k: r.k, base_dt: r.refinement.base_dt, dt_divisor: r.dt_divisor, tolerance: Boolean(t) };
  if (t) config.tolerance_options = { rtol: t.rtol, events: t.events, jacobian: t.jacobian_method };
  return { route, k: r.k, dt: r.dt, config, shown };
}

/**
 * A name as a piece of a file name, in ASCII letters and digits only (learning-management
 * systems mangle the rest): accents dropped ("Zoë" -> "Zoe"), ß as ss, Ø as O, every other run of
 * characters as a single dash.
 */
const LATIN = { ß: "ss", Ø: "O", ø: "o", Æ: "AE", æ: "ae", Œ: "OE", œ: "oe", Ł: "L", ł: "l", Đ: "D", đ: "d", Þ: "Th", þ: "th" };
const fileSlug = (name) => name.normalize("NFKD").replace(/\p{M}+/gu, "").replace(/[ßØøÆæŒœŁłĐđÞþ]/g, (c) => LATIN[c])
  .replace(/[^A-Za-z0-9]+/g, "-").replace(/^-+|-+$/g, "").slice(0, 40);
const STEPS = ["A", "B", "C", "D", "E", "F"];

const PREDICTIONS = {
  "falls-fast": "it falls about tenfold each time",
  "falls-some": "it falls somewhat, then levels off",
  flat: "it stays roughly where it was",
  grows: "it gets larger",
};

/** Which prediction option a measured ratio (error at dt/100 over error at dt) matches. */
function measuredChoice(ratio100) {
  if (ratio100 < 0.1) return "falls-fast";
  if (ratio100 < 0.8) return "falls-some";
  if (ratio100 <= 1.25) return "flat";
  return "grows";
}

const MEASURED = {
  "falls-fast": "it fell about tenfold or more",
  "falls-some": "it fell somewhat",
  flat: "it ended within a factor of 1.25 of where it was",
  grows: "it got larger",
};

/** A small seeded generator (mulberry32): the same learner seed gives the same quiz order. */
function seeded(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A fresh learner seed (orders the quiz's options for this learner). */
const newSeed = () => Math.floor(Math.random() * 2 ** 32);

function load() {
  try {
    const s = JSON.parse(localStorage.getItem(STORE) || "{}");
    return { prediction: null, checklist: {}, steps: {}, quiz: {}, ...s };
  } catch {
    return { prediction: null, checklist: {}, steps: {}, quiz: {} };
  }
}

const $ = (id) => document.getElementById(id);
const log10k = (k) => Math.round(Math.log10(k) * 10) / 10;

// ---- the quiz's answer keys ---------------------------------------------------------------

const words = (s) => s.trim().toLowerCase().replace(/\s+/g, " ");
const FALLS = /^(falls?|drops?|decreases?|shrinks?|goes down|gets smaller|declines?|reduces?|lowers?)$/;
const RISES = /^(rises?|grows?|increases?|goes up|gets larger|gets bigger|climbs?|explodes?|diverges?)$/;

/** The time-of-impact term by name ("time of impact", "impact timing", "event time", ...). */
const TERM_NAME = /time[\s-]*(of|to)[\s-]*(the[\s-]*)?(impact|contact|collision)|(impact|contact|collision)[\s-]*tim(e|ing)|timing[\s-]*of[\s-]*(the[\s-]*)?(impact|contact|collision)|event[\s-]*tim(e|ing)/;

/**
 * The time-of-impact term by its formula, (1+e)·g/|v|, in the spellings a learner types:
 * any spaces, a product written ·, *, × or nothing, (1+e) or (e+1) on either side of g,
 * |v|, abs(v) or v with a subscript for the impact speed.
 */
function isImpactFormula(text) {
  const s = text.toLowerCase().replace(/[\s·*×⋅]/g, "").replace(/abs\(([^)]*)\)/g, "|$1|").replace(/[−–]/g, "-");
  const onePlusE = "(?:\\(1\\+e\\)|\\(e\\+1\\))";
  const speed = "(?:\\|v[_a-z0-9⁻-]*\\||v[_a-z0-9⁻-]*)";
  const forms = [`${onePlusE}g/${speed}`, `g${onePlusE}/${speed}`, `${onePlusE}/${speed}g`, `g/${speed}${onePlusE}`,
    `${onePlusE}\\(g/${speed}\\)`];
  return forms.some((f) => new RegExp(`^${f}$`).test(s));
}

const isImpactTerm = (text) => TERM_NAME.test(words(text)) || isImpactFormula(text);

const QUIZ = {
  directions: {
    grade: (f) => FALLS.test(words(f.a1.value)) && RISES.test(words(f.a2.value)),
    answer: "falls · rises",
    why: "From 10² to 10⁴ N/m a stiffer floor makes the trajectory look more like a rigid bounce while its fixed-step derivative drifts further from the rigid one. Stiffer still, |dy| stops falling at this dt (step B says where it bottoms out) and the gradient error keeps growing, so no stiffness makes the fixed-step rollout both faithful and differentiable.",
  },
  exponent: {
    grade: (f) => {
      const s = words(f.a1.value).replace(/^k\^/, "");
      if (["1/2", "one half", "half", "a half", "½"].includes(s)) return true;
      const x = Number(s.replace(",", "."));
      return Number.isFinite(x) && x >= 0.45 && x <= 0.55;
    },
    answer: "one half",
    why: "At contact entry the push-only force jumps from zero to c·|v|, with damping c = 2ζ√(km). The fixed-step tangent never sees that jump, and what it misses scales with c, so like √k. The workbench's fit over 10⁴…10⁸ N/m approaches one half as dt shrinks (the exponent card prints it at each dt).",
  },
  refine: {
    grade: (f) => f.a1.value === "b",
    answer: "not on its own",
    why: "Uniform refinement barely moves the error (the dt card shows it): equal steps never aim at the moment the force switches on. An integrator with error control, or a step that locates the contact switch, spends its effort where the force switches on, and that is what lands on the exact answer.",
  },
  blame: {
    grade: (f) => f.a1.value === "b",
    answer: "the integrator",
    why: "Against the continuous penalty flow, the integrator's share at 10⁶ N/m is thousands of times the contact model's; the blame card prints both and their ratio. The contact share also shrinks as the floor stiffens (the card prints its fitted slope): the spring's own derivative approaches the rigid one.",
  },
  term: {
    grade: (f) => isImpactTerm(f.a1.value),
    answer: "the time-of-impact term, (1+e)·g/|v|",
    why: "Moving the start height moves the moment of impact, and that shift reaches the final state through (1+e)·g/|v|, a term that grows without bound as the impact grazes. The saltation matrix carries it; a spring-damper's step-by-step derivative has nowhere to put it.",
  },
  cost: {
    grade: (f) => f.a1.value === "b",
    answer: "more force evaluations",
    why: "One adaptive rollout takes few steps, but central differences need a rollout per probe (eight), so the total force evaluations exceed the fixed route's at dt (the cost card prints the ratio). The extra work pays for correctness; it is no saving.",
  },
};

/** The learner's progress, wired to the page's prediction form, checklist, steps, hints and quiz. */
export class Progress {
  #s = load();
  #r = null;
  #track = { log10k: null, seen: new Set() };
  /** The guided step the learner's last action belongs to (the next-step panel follows it). */
  #focus = null;
  #onLock;
  #announce;

  /**
   * onLock(locked): the workbench must lock (no prediction yet) or unlock.
   * announce(text): a short sentence for the page's live region.
   */
  constructor({ onLock = () => {}, announce = () => {} } = {}) {
    this.#onLock = onLock;
    this.#announce = announce;
    this.#wirePrediction();
    this.#wireExponent();
    this.#shuffleQuiz();
    this.#wireQuiz();
    this.#wireReset();
    $("export-progress").addEventListener("click", () => this.download());
    addEventListener("pagehide", () => {
      if (this.#unsaved) this.#save();
    });
    for (const [id, key] of [["learner-name", "learner"], ["learner-id", "learnerId"]]) {
      const field = $(id);
      field.value = this[key];
      field.addEventListener("change", () => {
        this[key] = field.value;
        field.value = this[key];
      });
    }
    this.#paintAll();
  }

  /** The core's version, set by the page once the core has loaded (goes into the export). */
  coreVersion = null;

  /** The learner's name as typed ("" when none), kept in this browser. */
  get learner() {
    return this.#kept(LEARNER, "name");
  }

  set learner(text) {
    this.#keep(LEARNER, "name", text);
  }

  /** The learner's student ID as typed ("" when none), kept in this browser. */
  get learnerId() {
    return this.#kept(LEARNER_ID, "id");
  }

  set learnerId(text) {
    this.#keep(LEARNER_ID, "id", text);
  }

  #kept(key, which) {
    try {
      return (localStorage.getItem(key) || "").slice(0, LEARNER_MAX);
    } catch {
      return this.#who[which];
    }
  }

  #keep(key, which, text) {
    const value = String(text).trim().slice(0, LEARNER_MAX);
    this.#who[which] = value;
    try {
      if (value) localStorage.setItem(key, value);
      else localStorage.removeItem(key);
    } catch {
      // Private mode or a full store: the name and ID last for this visit only.
    }
  }

  #who = { name: "", id: "" };

  get locked() {
    return !this.#s.prediction;
  }

  get prediction() {
    return this.#s.prediction;
  }

  #save() {
    // Quiet (a move's frame): stored by paint() right after, or when the page goes away.
    this.#unsaved = this.#quiet;
    if (this.#quiet) return;
    try {
      localStorage.setItem(STORE, JSON.stringify(this.#s));
    } catch {
      // Private mode or a full store: progress then lasts for this visit only.
    }
  }

  /** "Start over…" asks first: one click must not wipe a whole session's work. */
  #wireReset() {
    const ask = $("reset-progress");
    const box = $("reset-confirm");
    const show = (open) => {
      box.hidden = !open;
      ask.setAttribute("aria-expanded", String(open));
    };
    ask.addEventListener("click", () => {
      show(true);
      $("reset-no").focus();
    });
    $("reset-no").addEventListener("click", () => {
      show(false);
      ask.focus();
    });
    $("reset-yes").addEventListener("click", () => {
      show(false);
      this.reset();
      ask.focus();
    });
  }

  /** Forget everything: prediction, checklist, steps and quiz (the quiz order stays). */
  reset() {
    this.#s = { prediction: null, checklist: {}, steps: {}, quiz: {}, seed: this.#s.seed };
    this.#track = { log10k: null, seen: new Set() };
    this.#focus = null;
    try {
      localStorage.removeItem(STORE);
    } catch {
      // nothing stored
    }
    for (const f of document.querySelectorAll("#predict-form input, .quiz-q input")) {
      if (f.type === "radio") f.checked = false;
      else f.value = "";
    }
    $("exponent-answer").value = "";
    $("exponent-feedback").textContent = "";
    for (const p of document.querySelectorAll(".quiz-q .feedback")) p.textContent = "";
    this.#paintAll();
    this.#announce("Progress cleared: commit a new prediction to start again.");
  }

  /** Repaint the steps and the next-step panel (the lesson's numbers have arrived). */
  repaint() {
    this.#paintSteps();
  }

  // ---- export -----------------------------------------------------------------------------

  /** The learner's progress as plain data (web/progress.schema.json). */
  exportData() {
    const iso = (ms) => new Date(ms).toISOString();
    const c = this.#s.checklist;
    const p = this.#s.prediction;
    const checklist = {};
    for (const item of ITEMS) {
      const d = c[item];
      if (!d) {
        checklist[item] = { done: false };
        continue;
      }
      const { at, seen, ...detail } = d;
      // An item ticked before the lab recorded readings has none (the report says so).
      checklist[item] = { done: true, at: iso(at), detail, readings: seen ?? null };
    }
    const steps = {};
    for (const id of STEPS) steps[id] = this.#s.steps[id] ? iso(this.#s.steps[id]) : null;
    const quiz = {};
    for (const [id, q] of Object.entries(this.#s.quiz)) quiz[id] = { correct: q.correct, at: iso(q.at) };
    const w = this.#s.chosenWrongSign;
    return {
      schema: EXPORT_SCHEMA,
      exported_at: new Date().toISOString(),
      learner: this.learner || null,
      learner_id: this.learnerId || null,
      lab: { page: location.origin + location.pathname, storage_key: STORE, core_version: this.coreVersion },
      prediction: p ? { choice: p.choice, text: PREDICTIONS[p.choice], committed_at: iso(p.at) } : null,
      checklist,
      wrong_sign_chosen: w ? { at: iso(w.at), k: w.k, dt: w.dt, readings: w.seen } : null,
      passed: ITEMS.every((i) => c[i]),
      steps,
      quiz,
    };
  }

  /** Save the export as a file: ferromotion-lab-progress-NAME.json (the ID without a name; neither: ferromotion-lab-progress.json). */
  download() {
    const blob = new Blob([`${JSON.stringify(this.exportData(), null, 2)}\n`], { type: "application/json" });
    const a = document.createElement("a");
    a.href = URL.createObjectURL(blob);
    const slug = fileSlug(this.learner || this.learnerId);
    a.download = `ferromotion-lab-progress${slug ? `-${slug}` : ""}.json`;
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(a.href), 10_000);
  }

  // ---- prediction -----------------------------------------------------------------------

  #wirePrediction() {
    const form = $("predict-form");
    const commit = $("predict-commit");
    form.addEventListener("change", () => {
      commit.disabled = !form.querySelector("input:checked");
    });
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      const choice = form.querySelector("input:checked");
      if (!choice || this.#s.prediction) return;
      this.#s.prediction = { choice: choice.value, at: Date.now() };
      this.#save();
      this.#paintPrediction();
      this.#announce(`Prediction committed: ${PREDICTIONS[choice.value]}. The workbench is unlocked.`);
      // The workbench's top (next step, checklist, controls) into view, then the slider's focus.
      $("workbench").scrollIntoView({ block: "start" });
      $("stiffness").focus();
    });
  }

  #paintPrediction() {
    const p = this.#s.prediction;
    const form = $("predict-form");
    const shown = $("predict-committed");
    for (const input of form.querySelectorAll("input")) {
      input.disabled = Boolean(p);
      if (p) input.checked = input.value === p.choice;
    }
    $("predict-commit").disabled = Boolean(p) || !form.querySelector("input:checked");
    form.hidden = Boolean(p);
    shown.hidden = !p;
    $("predict-note").hidden = Boolean(p);
    // The quiz would give the prediction's answer away: it opens with the workbench.
    $("quiz-grid").hidden = !p;
    $("quiz-locked").hidden = Boolean(p);
    if (p) shown.textContent = `Your prediction, committed ${new Date(p.at).toLocaleString()}: ${PREDICTIONS[p.choice]}.`;
    this.#onLock(!p);
  }

  /** The prediction beside a measured refinement, or "" before there is one. */
  predictionEcho(ref) {
    const p = this.#s.prediction;
    if (!p) return "";
    const saw = measuredChoice(ref.ratio_100);
    const match = saw === p.choice ? "That matches." : "Not what you predicted.";
    return `You predicted ${PREDICTIONS[p.choice]}. Measured at this k: ${MEASURED[saw]} (${times(ref.ratio_10)} at dt ÷ 10, ${times(ref.ratio_100)} at dt ÷ 100). ${match}`;
  }

  // ---- observing the bench ----------------------------------------------------------------

  /**
   * Hear a new readout. `learner` is true only when a trusted input event of the learner's
   * produced it; `source` names the control ("slider" for a committed slider value,
   * "slider-move" for one passed through, "dt", "tolerance", "corrected", "open").
   */
  observe(r, { learner = false, source = "init", paint = true } = {}) {
    this.#r = r;
    this.#quiet = !paint;
    const divisor = r.dt_divisor;
    const lk = log10k(r.k);
    const wrong = !r.fixed.errors.right_sign;
    const t = this.#track;
    if (t.log10k !== lk) {
      t.log10k = lk;
      t.seen = new Set();
    }
    // The sign at the base step, from the core's refinement (whichever dt button is pressed).
    const wrongAtBase = r.refinement.signs[0] === "wrong";
    if (learner && !this.locked) {
      if (source === "dt") t.seen.add(divisor);
      this.#follow(source, wrongAtBase);
      // Graded on committed values only: a released slider or a key step ("slider"), or the
      // view the workbench opened on ("open"); never on a value passed through mid-drag.
      if (source === "slider" || source === "open") {
        if (wrong) this.#tick("wrongSign", { k: r.k, dt: r.dt });
        // Where the learner first found the wrong sign by their own choice of stiffness (the
        // opening view ticks item 1 above, but shows where the lab starts, not where they looked).
        if (wrong && source === "slider" && !this.#s.chosenWrongSign) {
          this.#s.chosenWrongSign = { at: Date.now(), k: r.k, dt: r.dt, seen: readingsOf("wrongSign", r) };
          this.#save();
        }
        if (lk === 2) this.#step("A");
        if (lk === 6) this.#step("B");
        if (wrong && lk >= 3 && lk <= 7) this.#step("C");
      }
      const ref = r.refinement;
      if (this.#refinedAtWrongSign(r)) {
        this.#tick("refined", { k: r.k, ratio_10: ref.ratio_10, ratio_100: ref.ratio_100 });
        this.#step("D");
      }
      const tol = r.tolerance;
      if (tol && tol.lands && r.k >= TOLERANCE_K * (1 - 1e-9) && source !== "slider-move") {
        this.#tick("tolerance", { k: r.k, rtol: tol.rtol, events: tol.events, gradient: tol.errors.gradient });
        this.#step("F");
      }
    }
    this.#quiet = false;
    if (paint) this.paint();
  }

  /**
   * Paint what observe() learnt: the checklist if an item ticked, the guided steps and the
   * hints (and store the progress if it changed). The page calls this after the frame that
   * shows a slider move's readouts and plots (observe(r, {paint: false})), so a move's frame
   * carries only the readouts; it runs before the next move is read.
   */
  paint() {
    if (this.#unsaved) this.#save();
    if (this.#unpainted) {
      this.#unpainted = false;
      this.#paintChecklist();
    }
    // A committed key step re-observes the readout its move already painted: repaint the
    // steps and hints only when something they show may have changed.
    const r = this.#r;
    const key = this.#paintKey();
    if (this.#painted && this.#painted.r === r && this.#painted.key === key) return;
    this.#paintSteps();
    this.#paintHints();
    this.#painted = { r, key };
  }

  /** Inside observe(r, {paint: false}): a tick is stored and painted by paint(). */
  #quiet = false;
  #unsaved = false;
  #unpainted = false;

  /** The readout and the key the steps and hints were last painted from by observe(), or null. */
  #painted = null;

  /** Everything besides the readout that the steps, the next-step panel and the hints read. */
  #paintKey() {
    const t = this.#track;
    const s = this.#s;
    return [this.locked, this.#focus, Object.keys(s.steps).join(), Object.keys(s.checklist).join(),
      s.prediction ? s.prediction.choice : "", t.log10k, [...t.seen].join(), document.body.dataset.facts ?? ""].join("|");
  }

  /**
   * Whether the learner has pressed both dt ÷ 10 and dt ÷ 100 at this readout's stiffness:
   * until then the refinement's result stays hidden (predict first, then measure).
   */
  refinedHere(r) {
    const t = this.#track;
    return t.log10k === log10k(r.k) && t.seen.has(10) && t.seen.has(100);
  }

  /**
   * Why refining dt at this readout's stiffness does not count for checklist item 2, said in
   * the "Refining dt" card itself ("" where it counts, once the item is done, or before a
   * prediction). The item reads the sign at the base dt, whichever button is pressed.
   */
  refineWhy(r) {
    if (this.locked || this.#s.checklist.refined) return "";
    const ref = r.refinement;
    const base = ref.signs[0];
    if (base !== "wrong") {
      const shown = r.dt_divisor !== 1 && r.fixed.errors.sign !== base
        ? ` (the sign line now shows ${dtText(r.dt)}: ${signText(r.fixed.errors.sign)})` : "";
      return `Refining here does not count for checklist item 2: at the base dt this stiffness's sign line reads ${signText(base)}${shown}, and the item needs a stiffness whose sign is wrong at dt. Move the slider until the sign line reads WRONG SIGN at dt, then press dt ÷ 10 and dt ÷ 100 there.`;
    }
    if (this.refinedHere(r) && !(ref.ratio_10 > NOT_FALLING && ref.ratio_100 > NOT_FALLING)) {
      return `This does not count for checklist item 2: here the gradient error fell to ${times(ref.ratio_10)} and ${times(ref.ratio_100)} of its value at dt, and the item asks for a stiffness where it does not fall below half. Try a stiffer one whose sign line reads WRONG SIGN.`;
    }
    return "";
  }

  /** Point the next-step panel at the step the learner's action belongs to. */
  #follow(source, wrongAtBase) {
    const step = { dt: "D", tolerance: "F", exponent: "E" }[source]
      ?? (source === "slider" && wrongAtBase ? "C" : null);
    if (step) this.#focus = step;
  }

  /**
   * Both dt buttons pressed at this stiffness, the base step's sign wrong (the core's
   * refinement says, whichever button is pressed now) and the error not falling: item 2.
   */
  #refinedAtWrongSign(r) {
    const ref = r.refinement;
    return this.refinedHere(r) && ref.signs[0] === "wrong"
      && ref.ratio_10 > NOT_FALLING && ref.ratio_100 > NOT_FALLING;
  }

  #tick(item, detail) {
    if (this.#s.checklist[item]) return;
    this.#s.checklist[item] = { ...detail, at: Date.now(), seen: readingsOf(item, this.#r) };
    this.#save();
    if (this.#quiet) this.#unpainted = true;
    else this.#paintChecklist();
    const done = ITEMS.filter((i) => this.#s.checklist[i]).length;
    this.#announce(done === ITEMS.length ? "Checklist complete: PASS." : `Checklist: ${done} of ${ITEMS.length} done.`);
  }

  #step(id) {
    if (this.#s.steps[id]) return;
    this.#s.steps[id] = Date.now();
    this.#save();
  }

  // ---- the exponent, typed ----------------------------------------------------------------

  #wireExponent() {
    $("exponent-form").addEventListener("submit", (event) => {
      event.preventDefault();
      const out = $("exponent-feedback");
      const r = this.#r;
      if (!r || this.locked) return;
      this.#focus = "E";
      const text = $("exponent-answer").value.trim().replace(",", ".").replace("−", "-");
      const typed = Number(text);
      const fit = r.exponent.slope;
      // One rule at every dt: the number the card prints at this dt, to the precision it
      // prints (trailing zeros allowed). The card's text is the reference, never the law.
      const printed = slope(fit);
      const shown = Number(printed.replace("−", "-"));
      const places = (printed.split(".")[1] ?? "").length;
      const decimals = (text.split(".")[1] ?? "").length;
      const asPrinted = decimals >= places && Math.abs(typed - shown) < 0.5 * 10 ** -(places + 3);
      const where = `at ${dtText(r.dt)}`;
      if (!text || !Number.isFinite(typed)) {
        out.textContent = "Type a number, such as the one printed above.";
      } else if (asPrinted) {
        out.textContent = `Yes: the card prints ${printed} ${where}, close to the √k law's 0.5.`;
        this.#tick("exponent", { value: typed, slope: fit, dt: r.dt });
        this.#step("E");
        this.#paintSteps();
      } else if (Math.abs(typed - 0.5) < 1e-9) {
        out.textContent = `${text} is the law; the checklist asks for what this workbench measured: the exponent card's number ${where}, typed as the card prints it (${places} decimals).`;
      } else if (decimals < places && Math.abs(typed - shown) <= 0.5 * 10 ** -decimals + 1e-12) {
        out.textContent = `Close, but rounded: type the card's number as it prints it, with all ${places} decimals.`;
      } else {
        out.textContent = `Not quite: read the exponent card ${where} and type its number as it prints it.`;
      }
    });
  }

  // ---- painting ---------------------------------------------------------------------------

  #paintAll() {
    this.#paintPrediction();
    this.#paintChecklist();
    this.#paintSteps();
    this.#paintHints();
    this.#paintQuiz();
  }

  #paintChecklist() {
    const c = this.#s.checklist;
    for (const li of document.querySelectorAll("#checklist li")) {
      const item = li.dataset.item;
      const d = c[item];
      li.dataset.done = d ? "true" : "false";
      li.querySelector(".state").textContent = d ? "done" : "not yet";
      li.querySelector(".tick").textContent = d ? "✓" : "";
      li.querySelector(".detail").textContent = d ? ` ${this.#detail(item, d)}` : "";
    }
    const all = ITEMS.every((i) => c[i]);
    const banner = $("pass-banner");
    banner.hidden = !all;
    banner.textContent = all
      ? "PASS. You broke the fixed-step gradient, showed that a smaller dt does not mend it, read the √k law off the workbench, and watched the same spring land on the exact answer once the integrator changed."
      : "";
  }

  #detail(item, d) {
    switch (item) {
      case "wrongSign":
        return `(${kText(d.k)}, ${dtText(d.dt)})`;
      case "refined": {
        const p = this.#s.prediction;
        const said = p ? ` You had predicted ${PREDICTIONS[p.choice]}.` : "";
        return `(${kText(d.k)}: ${times(d.ratio_10)} at dt ÷ 10, ${times(d.ratio_100)} at dt ÷ 100.${said})`;
      }
      case "exponent":
        return `(you read ${slope(d.slope)} at ${dtText(d.dt)})`;
      case "tolerance":
        return `(${kText(d.k)}, rtol = ${exp(d.rtol, 0)}${d.events ? ", events on" : ""}: gradient error ${num(d.gradient)})`;
      default:
        return "";
    }
  }

  #paintSteps() {
    this.#painted = null;
    const r = this.#r;
    const s = this.#s.steps;
    for (const li of document.querySelectorAll(".steps li")) {
      const id = li.dataset.step;
      const done = s[id] ? "true" : "false";
      if (li.dataset.done !== done) li.dataset.done = done;
      const state = li.querySelector(".step-state");
      const word = s[id] ? "done" : "to do";
      if (state.textContent !== word) retext(state, word);
    }
    if (!r || this.locked) {
      this.#paintNow();
      return;
    }
    const e = r.fixed.errors;
    const live = (id, text) => {
      const n = document.querySelector(`.steps [data-live="${id}"]`);
      if (n.textContent !== text) retext(n, text);
    };
    const now = `Now: ${kText(r.k)}, ${dtText(r.dt)}`;
    live("A", `${now}: forward error |dy| ${num(e.dy)} m, gradient error ${num(e.gradient)}, ${signText(e.sign)}.`);
    live("B", `${now}: forward error |dy| ${num(e.dy)} m, gradient error ${num(e.gradient)}.`);
    live("C", `${now}: ${signText(e.sign)} (fixed ${num(e.dv_dy0)} 1/s against exact ${num(e.dv_dy0_exact)} 1/s).`);
    const seen = [10, 100].filter((d) => this.#track.seen.has(d)).map((d) => `dt ÷ ${d}`);
    live("D", this.refinedHere(r)
      ? `${now}: you pressed both; the gradient error moved to ${times(r.refinement.ratio_10)} and ${times(r.refinement.ratio_100)} of its value at dt.`
      : `At this k you have pressed: ${seen.length ? seen.join(", ") : "neither yet"}.`);
    live("E", `Now: ${slope(r.exponent.slope)} (R² = ${r.exponent.r2.toFixed(3)}) at ${dtText(r.dt)}.`);
    const t = r.tolerance;
    live("F", t
      ? `${now}: tolerance route ${t.lands ? "lands on" : "misses"} the exact answer, gradient error ${num(t.errors.gradient)}.`
      : `${now}: tolerance route off.`);
    this.#paintNow();
  }

  /** The first guided step not yet done, beside the controls (with its live line). */
  #paintNow() {
    const stepText = $("now-step");
    const liveText = $("now-live");
    if (this.locked) {
      stepText.textContent = "Commit a prediction in step 2 first: the workbench opens when you do.";
      liveText.textContent = "";
      delete stepText.dataset.step;
      this.#paintGo("commit a prediction (step 2)");
      return;
    }
    // The step the learner is working on if it is not done yet, else the first one not done.
    const next = this.#focus && !this.#s.steps[this.#focus]
      ? this.#focus
      : STEPS.find((id) => !this.#s.steps[id]);
    if (!next) {
      const all = ITEMS.every((i) => this.#s.checklist[i]);
      stepText.textContent = all
        ? "Every step is done and the checklist passes. Try the quiz (step 6) from memory, or go further (step 7)."
        : "Every guided step is done; the checklist shows what is left.";
      liveText.textContent = "";
      delete stepText.dataset.step;
      this.#paintGo(all ? "the quiz (step 6)" : "what the checklist still lacks");
      return;
    }
    const r = this.#r;
    if (next === "D" && r && r.refinement.signs[0] !== "wrong") {
      // Step D at a stiffness that does not count would invite wasted presses: send the
      // learner to a wrong sign first.
      const away = `D-away:${r.refinement.signs[0]}`;
      if (stepText.dataset.step !== away) {
        const title = document.createElement("strong");
        title.textContent = "D · Refine dt, at a wrong sign.";
        stepText.replaceChildren(title, ` Here the sign line reads ${signText(r.refinement.signs[0])} at dt, so refining here does not count. Move the slider until it reads WRONG SIGN (step C), then press dt ÷ 10 and dt ÷ 100 there.`);
        stepText.dataset.step = away;
      }
      if (liveText.textContent) liveText.textContent = "";
      this.#paintGo("D · Refine dt, at a wrong sign");
      return;
    }
    const li = document.querySelector(`.steps li[data-step="${next}"]`);
    if (stepText.dataset.step !== next || stepText.dataset.facts !== document.body.dataset.facts) {
      const clone = li.cloneNode(true);
      for (const n of clone.querySelectorAll(".step-state, .live")) n.remove();
      stepText.replaceChildren(...clone.childNodes);
      stepText.dataset.step = next;
      stepText.dataset.facts = document.body.dataset.facts || "";
    }
    const live = li.querySelector(".live").textContent;
    if (liveText.textContent !== live) retext(liveText, live);
    this.#paintGo(li.querySelector("strong").textContent.replace(/\s*\([^)]*\)\.?$/, "").replace(/\.$/, ""));
  }

  /**
   * The phone strip's two links (sticky above the slider): the next step's title, and the
   * checklist's count, each one tap from the slider.
   */
  #paintGo(next) {
    const link = $("strip-next");
    const text = `Next: ${next}`;
    if (link.textContent !== text) retext(link, text);
    const c = this.#s.checklist;
    const done = ITEMS.filter((i) => c[i]).length;
    const count = done === ITEMS.length ? "Checklist: PASS" : `Checklist ${done} of ${ITEMS.length}`;
    const box = $("strip-checklist");
    if (box.textContent !== count) retext(box, count);
  }

  #paintHints() {
    this.#painted = null;
    const box = $("hints");
    const r = this.#r;
    const hints = [];
    if (r && !this.locked) {
      const e = r.fixed.errors;
      const lk = log10k(r.k);
      if (lk <= 2.4 && e.right_sign) {
        hints.push(["soft", `You are at the soft end, where the fixed-step sign happens to agree with the exact one. Check the trajectory, though: at T the ball is ${num(e.dy)} m from where a rigid bounce puts it, and its velocity is off by ${num(e.dv)} m/s. A floor this soft swallows the bounce. Move right until the sign line turns red.`]);
      }
      if (this.#refinedAtWrongSign(r)) {
        const p = this.#s.prediction;
        const tie = p && (p.choice === "falls-fast" || p.choice === "falls-some")
          ? "You expected it to fall. "
          : p && p.choice === "flat" ? "As you predicted. " : "";
        hints.push(["dt", `${tie}Ten and a hundred times smaller steps leave the gradient error at ${times(r.refinement.ratio_10)} and ${times(r.refinement.ratio_100)} of its value at dt. That is the finding, not a glitch: the error is made where the contact force switches on, and equal-sized steps never aim at that moment. What this shows is narrower than it looks: equal-sized steps cannot fix it. Whether a smarter integrator can is a separate question, and the tolerance route answers it.`]);
      }
      if (r.tolerance) {
        const t = r.tolerance;
        // Both costs against the one yardstick, the fixed route at the base dt, whatever dt
        // button is pressed: the tolerance route does not use the fixed step at all.
        const y = r.yardstick;
        const cost = `${int(t.cost.steps)} steps summed over ${t.cost.rollouts} rollout${t.cost.rollouts === 1 ? "" : "s"}, ${int(t.cost.force_evals)} force evaluations against the fixed route's ${int(y.cost.force_evals)} at the base ${dtText(y.dt)}: ${times(t.cost_ratio)}`;
        const why = t.jacobian_method === "forward"
          ? `Most of the saving is the single rollout: forward sensitivities carry the gradient along ${t.cost.rollouts === 1 ? "one rollout" : `${t.cost.rollouts} rollouts`}, where central differences need eight. Event location, which comes on with them, lets that rollout stop exactly at the contact switches.`
          : t.events
          ? "Event location is why: each rollout stops exactly at the contact switches, so the steps need not shrink to find them."
          : `The reason is the loose tolerance (rtol = ${exp(t.rtol, 0)}), not event location, which is off.`;
        const many = t.jacobian_method === "forward"
          ? "Forward sensitivities need only this one rollout, so the steps themselves are the price: a tight rtol takes many."
          : `One rollout takes few steps, but a Jacobian from central differences needs all ${t.cost.rollouts}.`;
        hints.push(["cost", t.cost_ratio >= 1
          ? `The tolerance curve lies low on the plot: that is accuracy, not thrift. It cost ${cost}. ${many} The extra force evaluations pay for correctness.`
          : `Here the tolerance route is cheaper: ${cost}. ${why} ${t.lands ? "It still lands on the exact answer." : "It does not land on the exact answer here: check the gradient error, the sign and the PROBE-DEPENDENT flag before you trust the saving."}`]);
      }
      if (r.k_dt2 >= 0.1) {
        hints.push(["unstable", `k·dt²/m = ${num(r.k_dt2)}: past this point the explicit step cannot follow the spring, so the trajectory gets worse, not better. The integrator is failing here while the spring model itself keeps improving; keep that in mind when you assign blame.`]);
      }
    }
    const key = hints.map(([id]) => id).join(",");
    if (box.dataset.key === key) {
      // Same hints: refresh the numbers in place without re-announcing.
      hints.forEach(([, text], i) => {
        const p = box.children[i];
        if (p && p.textContent !== text) retext(p, text);
      });
      return;
    }
    box.dataset.key = key;
    if (!hints.length) {
      const p = document.createElement("p");
      p.className = "quiet";
      p.textContent = "No hint right now. Hints appear here when the workbench shows a common trap.";
      box.replaceChildren(p);
      return;
    }
    box.replaceChildren(...hints.map(([id, text]) => {
      const p = document.createElement("p");
      p.className = "hint";
      p.dataset.hint = id;
      p.textContent = text;
      return p;
    }));
  }

  // ---- the quiz ---------------------------------------------------------------------------

  /**
   * Put each multiple-choice question's options in this learner's order (seeded, so a
   * reload keeps it; another learner gets another order): the right answer's place says
   * nothing.
   */
  #shuffleQuiz() {
    if (!Number.isInteger(this.#s.seed)) {
      this.#s.seed = newSeed();
      this.#save();
    }
    const random = seeded(this.#s.seed);
    for (const fieldset of document.querySelectorAll(".quiz-q fieldset")) {
      const options = [...fieldset.querySelectorAll("label.choice")];
      for (let i = options.length - 1; i > 0; i -= 1) {
        const j = Math.floor(random() * (i + 1));
        [options[i], options[j]] = [options[j], options[i]];
      }
      fieldset.append(...options);
    }
  }

  #wireQuiz() {
    for (const form of document.querySelectorAll(".quiz-q")) {
      form.addEventListener("submit", (event) => {
        event.preventDefault();
        const id = form.dataset.q;
        const q = QUIZ[id];
        const fields = form.elements;
        const filled = [...fields].some((f) => (f.type === "radio" ? f.checked : f.type === "text" && f.value.trim()));
        const out = form.querySelector(".feedback");
        if (!filled) {
          out.textContent = "Answer first, then check.";
          return;
        }
        const correct = Boolean(q.grade(fields));
        this.#s.quiz[id] = { correct, at: Date.now() };
        this.#save();
        out.dataset.correct = String(correct);
        out.textContent = correct ? `Right. ${q.why}` : `Not quite: the answer is ${q.answer}. ${q.why}`;
        this.#paintScore();
      });
    }
  }

  #paintQuiz() {
    const now = Date.now();
    for (const form of document.querySelectorAll(".quiz-q")) {
      const rec = this.#s.quiz[form.dataset.q];
      const out = form.querySelector(".feedback");
      delete out.dataset.correct;
      if (!rec) out.textContent = "";
      else if (rec.correct && now - rec.at >= DAY_MS) out.textContent = "Due again: answer it from memory before you check.";
      else if (rec.correct) out.textContent = "You got this one right; it comes back tomorrow.";
      else out.textContent = "Last time this one was wrong: try it again.";
    }
    this.#paintScore();
  }

  #paintScore() {
    const recs = Object.values(this.#s.quiz);
    const right = recs.filter((q) => q.correct).length;
    $("quiz-score").textContent = recs.length ? `So far: ${right} of ${Object.keys(QUIZ).length} right.` : "";
  }
}

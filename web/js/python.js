// The "Script it in Python" panel: pyodide (vendored in ../pyodide/ by scripts/pyodide.sh,
// served from this origin) runs `import ferromotion as fm`, the in-browser package in
// ../py/ferromotion/, whose every number comes from the lab's WebAssembly core (loaded
// through sim.js). Nothing is loaded until the panel is opened.
import { loadCore } from "./sim.js";
import { LogPlot } from "./plots.js";

const PYODIDE = new URL("../pyodide/", import.meta.url);
const PACKAGE = new URL("../py/ferromotion/", import.meta.url);

// The wasm exports the Python package may call (crates/ferromotion-wasm/src/script.rs).
const EXPORTS = new Set([
  "scriptDefaults", "validateDrop", "dropImpactSpeed", "dropFirstImpactTime", "routeExact", "routeFixed",
  "routeCorrected", "routeFlow", "routeTolerance", "routeRk4", "blameSplit", "divergenceExponent",
  "dropTimeOfImpactTerm", "sweep", "logGrid", "checkGradient", "equalBudget",
]);

// The first notebook's opening exercises (notebooks/01_stiffness_sweep.ipynb), with lists
// where the notebook uses numpy and the panel's plot where it uses Bokeh.
export const EXERCISES = [
  {
    title: "1. The exact answer",
    code: `import ferromotion as fm
drop = fm.Drop()
print(drop)
truth = fm.exact(drop)
print(truth)
# jacobian[1][0] is dv(T)/dy0: the time-of-impact term at this drop's impact speed.
print(truth.jacobian[1][0], fm.time_of_impact_term(drop), drop.impact_speed())`,
  },
  {
    title: "2. What fixed-step autodiff returns",
    code: `import ferromotion as fm
drop = fm.Drop()
truth = fm.exact(drop)
autodiff = fm.fixed(drop, k=1e6, dt=1e-4)
print(autodiff)
print(autodiff.jacobian[1][0])
print(f"dv(T)/dy0: autodiff {autodiff.jacobian[1][0]:+.1f}, exact {truth.jacobian[1][0]:+.2f}")`,
  },
  {
    title: "3. Sweeping the stiffness (and the plot)",
    code: `import ferromotion as fm
drop = fm.Drop()
s = fm.sweep(drop, k=fm.log_grid(4, 8, 2), dt=1e-4)   # 9 stiffnesses, 1e4 .. 1e8 N/m
print(s)
print("gradient error:", [f"{e:.3g}" for e in s.gradient_error])
print("right sign:    ", s.right_sign)
print(s.exponent())
s.plot(mark_k=1e6)`,
  },
  {
    title: "4. Whose fault is it, and a refusal",
    code: `import ferromotion as fm
drop = fm.Drop()
print(fm.blame(drop, k=1e6, dt=1e-4))
print(fm.divergence_exponent(drop, dt=1e-4))
try:
    fm.Drop(height=100.0)
except fm.FerroError as e:
    print(type(e).__name__, "-", e)`,
  },
];

const $ = (id) => document.getElementById(id);

let session = null; // Promise of {pyodide, run}

/** Load pyodide, the core and the package, reporting each stage; resolves to the runner. */
async function boot(progress) {
  const t0 = performance.now();
  progress(1, "Loading the Python runtime (pyodide, about 12 MB, from this site)…");
  const [{ loadPyodide }, pkg] = await Promise.all([import(new URL("pyodide.mjs", PYODIDE).href), loadCore()]);
  const pyodide = await loadPyodide({ indexURL: PYODIDE.href, fullStdLib: false });
  progress(2, "Loading ferromotion into Python…");
  pyodide.registerJsModule("_ferromotion_wasm", {
    call(name, args) {
      if (!EXPORTS.has(name)) return { ok: false, kind: "FerroError", message: `no core export “${name}”` };
      try {
        return { ok: true, value: pkg[name](...args) };
      } catch (err) {
        return { ok: false, kind: err && err.name, message: String(err && err.message !== undefined ? err.message : err) };
      }
    },
    plot: (spec) => drawPlot(spec.toJs ? spec.toJs({ dict_converter: Object.fromEntries }) : spec),
  });
  pyodide.FS.mkdirTree("/home/pyodide/ferromotion");
  // _results.py (the result classes) is the native package's own, copied by scripts/pyodide.sh.
  const files = [[new URL("__init__.py", PACKAGE), "__init__.py"], [new URL("_results.py", PACKAGE), "_results.py"],
    [new URL("_errors.py", PYODIDE), "_errors.py"]];
  for (const [url, name] of files) {
    const res = await fetch(url);
    if (!res.ok) throw new Error(`could not load ${url.pathname} (${res.status})`);
    pyodide.FS.writeFile(`/home/pyodide/ferromotion/${name}`, await res.text());
  }
  pyodide.runPython("import sys\nsys.path.insert(0, '/home/pyodide')\nimport ferromotion");
  const seconds = (performance.now() - t0) / 1000;
  progress(3, `Python ${pyodide.version ? `(pyodide ${pyodide.version}) ` : ""}is ready (${seconds.toFixed(1)} s).`);
  window.__pyodideReadySeconds = seconds;
  const runner = pyodide.runPython(`
import sys, traceback
from pyodide.code import eval_code

# The learner's code runs under its own file name, so its frames are told apart from this
# runner's (which pyodide names <exec>), and each is printed with its own source line.
_PANEL_FILE = "<your code>"

def _panel_run(src, ns):
    lines = src.splitlines()
    try:
        value = eval_code(src, ns, return_mode="last_expr", filename=_PANEL_FILE)
        if value is not None:
            print(repr(value))
    except SyntaxError as e:
        where = f"line {e.lineno}: " if e.lineno else ""
        print(f"  {where}{(e.text or '').strip()}", file=sys.stderr)
        print(f"SyntaxError: {e.msg}", file=sys.stderr)
    except BaseException as e:
        tb = traceback.extract_tb(e.__traceback__)
        for f in tb:
            if f.filename == _PANEL_FILE and f.lineno and 0 < f.lineno <= len(lines):
                print(f"  line {f.lineno}: {lines[f.lineno - 1].strip()}", file=sys.stderr)
        print(f"{type(e).__name__}: {e}", file=sys.stderr)

_panel_ns = {"__name__": "__main__"}
_panel_run`);
  const ns = pyodide.globals.get("_panel_ns");
  return { pyodide, run: (src) => runner(src, ns) };
}

let plots = null;

/**
 * Draw a sweep with the lab's LogPlot, as the lab's own error plot does: the relative
 * gradient errors in one panel and the height error |dy| (m) in a second one below it, so a
 * unitless error never shares an axis with one in metres. The wrong-sign bands are the
 * core's (the sweep's answer carries them); the marker is at `mark_k`.
 */
function drawPlot({ title, k, gradient, dy, tolerance, corrected, bands, wrong, mark_k: markK }) {
  const host = $("py-plot");
  host.hidden = false;
  if (!plots) {
    const panel = (id) => {
      const div = document.createElement("div");
      div.id = id;
      div.className = "plot-host";
      host.append(div);
      return div;
    };
    plots = {
      gradient: new LogPlot(panel("py-plot-gradient"), {
        // A label short enough for a phone's 220 px high panel (the legend says it has no unit).
        title, xLabel: "stiffness k (N/m)", yLabel: "relative gradient error", xDomain: [2, 8],
      }),
      forward: new LogPlot(panel("py-plot-forward"), {
        title, xLabel: "stiffness k (N/m)", yLabel: "|dy| at T (m)", xDomain: [2, 8], height: [160, 240],
      }),
    };
  }
  const pts = (ys) => k.map((x, i) => [x, ys[i]]);
  const series = [{ label: "relative gradient error (no unit), fixed", cls: "s-gradient", points: pts(gradient) }];
  if (corrected) series.push({ label: "relative gradient error, corrected", cls: "s-corrected", points: pts(corrected) });
  if (tolerance) {
    series.push({ label: "relative gradient error, tolerance", cls: "s-tolerance", dashed: true, points: pts(tolerance) });
  }
  const bandLabel = "fixed-step sign wrong";
  plots.gradient.titleNode.textContent = `${title}: relative gradient error`;
  plots.gradient.setData({
    series, bands, bandLabel, summary: `${title}: ${k.length} stiffnesses, sign wrong at ${wrong}.`,
  });
  plots.forward.titleNode.textContent = `${title}: height error |dy| at T`;
  plots.forward.setData({
    series: [{ label: "|dy| at T, fixed (m)", cls: "s-forward", points: pts(dy) }], bands, bandLabel,
    summary: `${title}: the fixed-step height error |dy| at ${k.length} stiffnesses.`,
  });
  const label = markK === null || markK === undefined ? null : `k = ${markK.toExponential(0).replace("e+", "e")} N/m`;
  plots.gradient.setMarker(label && { x: markK, label, points: [] });
  plots.forward.setMarker(label && { x: markK, label, points: [] });
}

function setup() {
  const panel = $("python");
  if (!panel) return;
  const status = $("py-status");
  const bar = $("py-progress");
  const editor = $("py-code");
  const output = $("py-output");
  const runButton = $("py-run");
  const picker = $("py-exercise");
  picker.replaceChildren(...EXERCISES.map((e, i) => new Option(e.title, String(i))));
  editor.value = EXERCISES[0].code;
  picker.addEventListener("change", () => {
    editor.value = EXERCISES[Number(picker.value)].code;
  });

  const progress = (step, text) => {
    bar.value = step;
    bar.hidden = step >= 3;
    status.textContent = text;
  };
  const write = (text, cls) => {
    const span = document.createElement("span");
    if (cls) span.className = cls;
    span.textContent = `${text}\n`;
    output.append(span);
  };

  panel.addEventListener("toggle", () => {
    if (!panel.open || session) return;
    session = boot(progress).then(
      (s) => {
        s.pyodide.setStdout({ batched: (t) => write(t) });
        s.pyodide.setStderr({ batched: (t) => write(t, "py-err") });
        runButton.disabled = false;
        panel.dataset.ready = "true";
        return s;
      },
      (err) => {
        bar.hidden = true;
        status.textContent = `Python could not be loaded (${err.message}). Build the lab with “make wasm”, then reload the page.`;
        status.dataset.kind = "error";
        session = null;
        throw err;
      },
    );
  });

  const run = async () => {
    if (!session) return;
    const s = await session;
    runButton.disabled = true;
    output.replaceChildren();
    // A plot belongs to the run that drew it: the next run starts without it.
    $("py-plot").hidden = true;
    panel.dataset.running = "true";
    // Let the page paint "running" before Python takes the thread.
    await new Promise((r) => setTimeout(r, 0));
    try {
      s.run(editor.value);
    } finally {
      runButton.disabled = false;
      panel.dataset.running = "false";
      panel.dataset.runs = String(Number(panel.dataset.runs || 0) + 1);
    }
  };
  runButton.addEventListener("click", run);
  // Tab indents once the learner has typed here; Tab on arriving, after Escape, or Shift+Tab
  // moves on (the keyboard is never trapped in the editor).
  let typing = false;
  editor.addEventListener("focus", () => { typing = false; });
  editor.addEventListener("input", () => { typing = true; });
  editor.addEventListener("keydown", (e) => {
    if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) {
      e.preventDefault();
      run();
    } else if (e.key === "Escape") {
      typing = false;
    } else if (e.key === "Tab" && typing && !e.shiftKey && !e.ctrlKey && !e.altKey && !e.metaKey) {
      e.preventDefault();
      editor.setRangeText("    ", editor.selectionStart, editor.selectionEnd, "end");
    }
  });
}

setup();

// Timing of the core's fixed route in WebAssembly, shared by the Node runner
// (benches/wasm_bench.mjs) and the headless-Chromium one (benches/bench.py, which serves this
// file beside web/pkg/ on 127.0.0.1). `wasm` is the wasm-bindgen module, either build.

/** The docs/model.md §1 drop (SI units), as the core's `Drop` JSON. */
export const DROP = JSON.stringify({
  height: 1.0, velocity: 0.0, t_final: 0.8, gravity: 9.81, mass: 1.0, zeta: 0.1606,
});

/**
 * ns per step of `fixedJson(DROP, k, dt)`: the best and the median of `samples` samples of
 * about 0.1 s each, with the answer (to check it against the native build's bits).
 */
export function measureFixed(wasm, k, dt, samples = 9) {
  const answer = JSON.parse(wasm.fixedJson(DROP, k, dt));
  const steps = answer.cost.steps;
  let t0 = performance.now();
  wasm.fixedJson(DROP, k, dt);
  const once = Math.max(performance.now() - t0, 1e-3);
  const reps = Math.max(1, Math.ceil(100 / once));
  const ns = [];
  let sink = 0;
  for (let s = 0; s < samples; s++) {
    t0 = performance.now();
    for (let r = 0; r < reps; r++) sink += wasm.fixedJson(DROP, k, dt).length;
    ns.push(((performance.now() - t0) * 1e6) / (reps * steps));
  }
  ns.sort((a, b) => a - b);
  return {
    k, dt, steps, samples, reps, sink,
    ns_per_step: ns[0],
    ns_per_step_median: ns[Math.floor(samples / 2)],
    state: answer.state,
    jacobian: answer.jacobian,
  };
}

// The lab's background worker: the same wasm core, loaded through sim.js, running the jobs
// that take longer than a frame (curves, the audit sweep, the equal-budget table, the descent
// experiment, the quadruped) so the page never freezes. One job at a time, in the order received; every
// answer is {id, ok: true, value} or {id, ok: false, message} with the core's error as a
// sentence. A job that reports progress (a sweep) posts {id, progress: {done, total}} first.
import { jobs, loadCore, sentence } from "./sim.js";

const core = loadCore();

self.onmessage = async ({ data: { id, kind, args } }) => {
  try {
    const pkg = await core;
    if (!Object.hasOwn(jobs, kind)) throw new Error(`unknown background job “${kind}”`);
    const progress = (p) => self.postMessage({ id, progress: p });
    self.postMessage({ id, ok: true, value: jobs[kind](pkg, args, progress) });
  } catch (err) {
    self.postMessage({ id, ok: false, message: sentence(err) });
  }
};

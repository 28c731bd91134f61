// The peer of bench/bench_hub.cc: @huggingface/hub's safetensors parameter count over the
// mock Hub at HF_ENDPOINT, for repo HUB_REPO. Prints "<milliseconds> <parameters>", timed
// around the library call only (node's start-up is not counted here).
import { parseSafetensorsMetadata } from "@huggingface/hub";

const t0 = performance.now();
const r = await parseSafetensorsMetadata({
  repo: process.env.HUB_REPO,
  hubUrl: process.env.HF_ENDPOINT,
  computeParametersCount: true,
});
const ms = performance.now() - t0;
const n = Object.values(r.parameterCount).reduce((a, b) => a + b, 0);
console.log(`${ms.toFixed(1)} ${n}`);

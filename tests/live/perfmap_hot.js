// SPDX-License-Identifier: MIT
// perfmap_hot.js GOFILE SECONDS: the JIT workload of perfmap_node.sh.
// A hot function the JIT compiles (and optimizes) on its own, called from a
// callback that runs rarely, so that it is not inlined into its caller.
const fs = require('fs');
const go = process.argv[2];
const end = Date.now() + 1000 * Number(process.argv[3] || 60);
function hotJitFunction(n) {
  let s = 0;
  for (let i = 0; i < n; i++) s = (s + i * 7) % 1000003;
  return s;
}
function lateJitFunction(n) {
  let s = 1;
  for (let i = 0; i < n; i++) s = (s * 31 + i) % 999983;
  return s;
}
let t = 0, late = false;
function tick() {
  t += hotJitFunction(2000000);
  if (!late && go && fs.existsSync(go)) late = true;
  if (late) t += lateJitFunction(2000000);
  if (Date.now() < end) setImmediate(tick); else console.log(t);
}
tick();

import { readFileSync } from 'node:fs';
type Node = { id: number; callFrame: { functionName: string; url: string; lineNumber: number }; hitCount: number; children?: number[] };
const p = JSON.parse(readFileSync(process.argv[2], 'utf8')) as { nodes: Node[]; samples: number[]; timeDeltas: number[] };
const byId = new Map(p.nodes.map((n) => [n.id, n]));
const parent = new Map<number, number>();
for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const self = new Map<string, number>();
const incl = new Map<string, number>();
const short = (n: Node) => `${n.callFrame.functionName || '(anon)'} ${n.callFrame.url.replace(/^file:\/\/\/work\/main\//, '').replace(/^.*node_modules\//, 'nm/')}:${n.callFrame.lineNumber}`;
let idle = 0, busy = 0;
p.samples.forEach((s, i) => {
  const n = byId.get(s)!;
  const dt = p.timeDeltas[i] ?? 0;
  if (n.callFrame.functionName === '(idle)') { idle += dt; return; }
  busy += dt;
  self.set(short(n), (self.get(short(n)) ?? 0) + dt);
  const seen = new Set<string>();
  for (let id: number | undefined = s; id !== undefined; id = parent.get(id)) {
    const k = short(byId.get(id)!);
    if (seen.has(k)) continue;
    seen.add(k);
    incl.set(k, (incl.get(k) ?? 0) + dt);
  }
});
console.log({ idleMs: Math.round(idle / 1000), busyMs: Math.round(busy / 1000) });
const top = (m: Map<string, number>, n: number, filter = (k: string) => true) => [...m].filter(([k]) => filter(k)).sort((a, b) => b[1] - a[1]).slice(0, n).map(([k, v]) => `${(v / 1000).toFixed(0).padStart(5)} ms  ${k}`).join('\n');
console.log('SELF\n' + top(self, 25));
console.log('INCL (own code)\n' + top(incl, 45, (k) => !k.includes('node:') && !k.startsWith('(') && !/^\S+ (internal|loader|run_main|module_job|translators|utils|realm|task_queues)/.test(k)));
// self time by package / top-level dir
const byPkg = new Map<string, number>();
p.samples.forEach((s, i) => {
  const n = byId.get(s)!;
  const dt = p.timeDeltas[i] ?? 0;
  if (n.callFrame.functionName === '(idle)') return;
  // attribute to the nearest frame with a file url in node_modules or src
  let pkg = 'node-internal/native';
  for (let id: number | undefined = s; id !== undefined; id = parent.get(id)) {
    const u = byId.get(id)!.callFrame.url;
    const m = u.match(/node_modules\/((@[^/]+\/)?[^/]+)/);
    if (m) { pkg = m[1]; break; }
    if (u.startsWith('file:///work/main/')) { pkg = u.replace('file:///work/main/', '').split('/').slice(0, 2).join('/'); break; }
  }
  byPkg.set(pkg, (byPkg.get(pkg) ?? 0) + dt);
});
console.log('BY PACKAGE (nearest frame)\n' + top(byPkg, 30));
const modBody = new Map<string, number>();
p.samples.forEach((s, i) => {
  const dt = p.timeDeltas[i] ?? 0;
  const seen = new Set<string>();
  for (let id: number | undefined = s; id !== undefined; id = parent.get(id)) {
    const n = byId.get(id)!;
    if (n.callFrame.functionName === '' && n.callFrame.lineNumber === 0 && n.callFrame.url) {
      const k = n.callFrame.url.replace('file:///work/main/', '').replace(/^.*node_modules\//, 'nm/');
      if (!seen.has(k)) { seen.add(k); modBody.set(k, (modBody.get(k) ?? 0) + dt); }
    }
  }
});
console.log('MODULE BODIES (inclusive)\n' + top(modBody, 40));

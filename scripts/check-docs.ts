// Renders /docs, /redoc and the console at /ui/ in headless Chromium and fails if a page does not render or makes any
// request outside the server's own origin (the pages must work with no internet).
// Usage: node scripts/check-docs.ts [--url http://127.0.0.1:8082] [--screenshots DIR]
// Without --url it starts the service itself on a temporary embedded PostgreSQL.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { loadConfig } from '../src/config.ts';
import { startService } from '../src/service.ts';

const CHROMIUM_CANDIDATES = ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome'];
const PAGE_TIMEOUT_MS = 30_000;
/** How long Chromium may take to exit after Browser.close before its whole group is killed. */
const BROWSER_CLOSE_TIMEOUT_MS = 5_000;
/** How long to wait for the exit after SIGKILL (the kernel reaps promptly; this is a bound). */
const BROWSER_KILL_TIMEOUT_MS = 5_000;

type CdpMessage = { id?: number; method?: string; params?: Record<string, unknown>; result?: Record<string, unknown>; error?: unknown };

class Cdp {
  #ws: WebSocket;
  #next = 1;
  #pending = new Map<number, (m: CdpMessage) => void>();
  readonly events: CdpMessage[] = [];
  constructor(ws: WebSocket) {
    this.#ws = ws;
    ws.addEventListener('message', (ev) => {
      const msg = JSON.parse(String(ev.data)) as CdpMessage;
      if (msg.id !== undefined) this.#pending.get(msg.id)?.(msg);
      else this.events.push(msg);
    });
  }
  close(): void {
    this.#ws.close();
  }
  send(method: string, params: Record<string, unknown> = {}, sessionId?: string): Promise<Record<string, unknown>> {
    const id = this.#next++;
    return new Promise((ok, fail) => {
      this.#pending.set(id, (m) => (m.error ? fail(new Error(`${method}: ${JSON.stringify(m.error)}`)) : ok(m.result ?? {})));
      // Inside the executor: a send on a closed socket becomes a rejection, not a throw.
      this.#ws.send(JSON.stringify({ id, method, params, ...(sessionId ? { sessionId } : {}) }));
    });
  }
}

function exitOf(proc: ChildProcess): Promise<void> {
  if (proc.exitCode !== null || proc.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => proc.once('exit', () => resolve()));
}

function settlesWithin(p: Promise<void>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([p.then(() => true), new Promise<boolean>((r) => (timer = setTimeout(() => r(false), ms)))]).finally(() => clearTimeout(timer));
}

/**
 * Stops Chromium and waits for it: Browser.close first (it then shuts its helpers down and
 * stops writing to the profile), SIGKILL to its whole process group if it lingers. Only then
 * is the profile removed; removing it under a live browser fails with ENOTEMPTY.
 */
async function stopChromium(proc: ChildProcess, cdp: Cdp | undefined, profile: string): Promise<void> {
  const exited = exitOf(proc);
  if (cdp) void cdp.send('Browser.close').catch(() => {});
  if (!(await settlesWithin(exited, cdp ? BROWSER_CLOSE_TIMEOUT_MS : 0))) {
    try {
      if (proc.pid !== undefined) process.kill(-proc.pid, 'SIGKILL');
    } catch {
      // already gone
    }
    await settlesWithin(exited, BROWSER_KILL_TIMEOUT_MS);
  }
  cdp?.close();
  // Helpers of the group may still be closing files for a moment after the browser's exit.
  await rm(profile, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
}

/** The DevToolsActivePort file's second line, whole: the browser target's path. */
const BROWSER_PATH = /^\/devtools\/browser\/[0-9a-f-]{36}$/;

async function launchChromium(): Promise<{ cdp: Cdp; close(): Promise<void> }> {
  const exe = CHROMIUM_CANDIDATES.find((p) => existsSync(p));
  if (!exe) throw new Error('no Chromium found (apt-get install chromium)');
  const profile = await mkdtemp(join(tmpdir(), 'svc-chromium-'));
  // Its own process group, so the renderer and GPU helpers can be stopped with it.
  const proc = spawn(exe, [
    '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
    '--disable-component-update', '--disable-sync', '--disable-extensions', `--user-data-dir=${profile}`, '--remote-debugging-port=0', 'about:blank',
  ], { stdio: 'ignore', detached: true });
  let cdp: Cdp | undefined;
  try {
    const portFile = join(profile, 'DevToolsActivePort');
    const t0 = Date.now();
    // Chromium writes the file in more than one step: it may exist before its second line (the
    // browser's path) does, and a URL made of half of it is invalid.
    let port: string | undefined;
    let path: string | undefined;
    while (!(port && path && BROWSER_PATH.test(path))) {
      if (proc.exitCode !== null || proc.signalCode !== null) throw new Error(`Chromium exited at start (${proc.exitCode ?? proc.signalCode})`);
      if (Date.now() - t0 > PAGE_TIMEOUT_MS) throw new Error('Chromium did not start');
      await new Promise((r) => setTimeout(r, 50));
      if (existsSync(portFile)) [port, path] = (await readFile(portFile, 'utf8')).split('\n').map((l) => l.trim());
    }
    const ws = new WebSocket(`ws://127.0.0.1:${port}${path}`);
    await new Promise((ok, fail) => {
      ws.addEventListener('open', ok, { once: true });
      ws.addEventListener('error', fail, { once: true });
    });
    cdp = new Cdp(ws);
  } catch (err) {
    await stopChromium(proc, undefined, profile);
    throw err;
  }
  const connected = cdp;
  return { cdp: connected, close: () => stopChromium(proc, connected, profile) };
}

/** Opens url in a fresh tab; waits until `probe` (a JS expression) is truthy; returns requests made and a screenshot. */
async function render(cdp: Cdp, url: string, probe: string): Promise<{ requests: string[]; text: string; png: Buffer }> {
  const { targetId } = await cdp.send('Target.createTarget', { url: 'about:blank' });
  const { sessionId } = (await cdp.send('Target.attachToTarget', { targetId, flatten: true })) as { sessionId: string };
  const firstEvent = cdp.events.length;
  await cdp.send('Network.enable', {}, sessionId);
  await cdp.send('Page.enable', {}, sessionId);
  await cdp.send('Emulation.setDeviceMetricsOverride', { width: 1280, height: 900, deviceScaleFactor: 1, mobile: false }, sessionId);
  await cdp.send('Page.navigate', { url }, sessionId);
  const t0 = Date.now();
  let text = '';
  for (;;) {
    const r = (await cdp.send('Runtime.evaluate', { expression: `(${probe}) ? document.body.innerText.slice(0, 2000) : ''`, returnByValue: true }, sessionId)) as { result?: { value?: unknown } };
    text = typeof r.result?.value === 'string' ? r.result.value : '';
    if (text) break;
    if (Date.now() - t0 > PAGE_TIMEOUT_MS) throw new Error(`${url} did not render within ${PAGE_TIMEOUT_MS} ms`);
    await new Promise((res) => setTimeout(res, 100));
  }
  await new Promise((res) => setTimeout(res, 500)); // late requests (fonts, workers) would show up now
  const shot = (await cdp.send('Page.captureScreenshot', { format: 'png' }, sessionId)) as { data: string };
  const requests = cdp.events
    .slice(firstEvent)
    .filter((e) => e.method === 'Network.requestWillBeSent')
    .map((e) => String((e.params?.request as { url?: unknown } | undefined)?.url ?? ''));
  await cdp.send('Target.closeTarget', { targetId });
  return { requests, text, png: Buffer.from(shot.data, 'base64') };
}

async function main(): Promise<number> {
  const { values } = parseArgs({ options: { url: { type: 'string' }, screenshots: { type: 'string' } } });
  let stop: (() => Promise<void>) | undefined;
  let dataDir: string | undefined;
  // Whatever fails below, the service this script started is stopped and its data removed.
  try {
    let base = values.url;
    if (!base) {
      dataDir = await mkdtemp(join(tmpdir(), 'svc-docs-'));
      await chmod(dataDir, 0o755);
      const svc = await startService(loadConfig({ SVC_DATA_DIR: dataDir, SVC_PORT: '0', SVC_HOST: '127.0.0.1', SVC_LOG_LEVEL: 'warn' }));
      base = svc.url;
      stop = () => svc.stop();
    }
    const origin = new URL(base).origin;
    const chromium = await launchChromium();
    try {
      return await checkPages(chromium.cdp, origin, values.screenshots);
    } finally {
      await chromium.close();
    }
  } finally {
    await stop?.();
    if (dataDir) await rm(dataDir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
  }
}

/** Renders each page; prints one line per page; returns the exit code (1 if any page failed). */
async function checkPages(cdp: Cdp, origin: string, screenshots: string | undefined): Promise<number> {
  let failures = 0;
  const pages = [
    { name: 'docs', url: `${origin}/docs`, probe: `document.querySelector('.swagger-ui .info .title') && document.querySelectorAll('.opblock').length > 5` },
    { name: 'redoc', url: `${origin}/redoc`, probe: `document.querySelector('.api-info h1') && document.querySelectorAll('[role=menuitem], li[data-item-id]').length > 5` },
    // The web console (built by npm install; `npm run build:gui`): fonts, icons and scripts all its own.
    { name: 'ui', url: `${origin}/ui/`, probe: `document.querySelector('nav[aria-label=Sections]') && document.querySelector('h2')` },
  ];
  for (const p of pages) {
    const out = await render(cdp, p.url, p.probe);
    const foreign = out.requests.filter((u) => !u.startsWith(origin) && !u.startsWith('data:') && !u.startsWith('blob:'));
    const title = out.text.split('\n').find((l) => l.trim()) ?? '';
    if (screenshots) await writeFile(join(screenshots, `${p.name}.png`), out.png);
    if (foreign.length) {
      failures++;
      process.stdout.write(`FAIL ${p.url}: requests outside ${origin}: ${foreign.join(', ')}\n`);
    } else {
      process.stdout.write(`ok   ${p.url}: rendered ("${title.trim().slice(0, 60)}"), ${out.requests.length} requests, all to ${origin}\n`);
    }
  }
  return failures ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (err) => {
    process.stderr.write(`check-docs: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(2);
  },
);

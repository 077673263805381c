import { enableCompileCache, flushCompileCache } from 'node:module';
import { fileURLToPath } from 'node:url';

// Node's module compile cache: V8's code for our modules (TypeScript included) kept on disk, so a
// server's, worker's or CLI's start compiles them once per change, not at every start (about a
// third less CPU to load a server and a worker). In the project's own node_modules/.cache, not a
// shared temporary directory another user could write; NODE_COMPILE_CACHE names another and
// NODE_DISABLE_COMPILE_CACHE turns it off (Node reads both). It fails quietly where the directory
// cannot be written (a read-only install): the start then compiles as before.
const OWN_DIRECTORY = fileURLToPath(new URL('../node_modules/.cache/svc-compile/', import.meta.url));
/** When what a start compiled is written, besides at exit: a process killed never exits. */
const FLUSH_AFTER_START_MS = 10_000;

/** Keeps compiled modules on disk for the next start; call before the command's modules load. */
export function keepCompiledModules(): void {
  enableCompileCache(process.env.NODE_COMPILE_CACHE ? undefined : OWN_DIRECTORY);
  setTimeout(flushCompileCache, FLUSH_AFTER_START_MS).unref();
}

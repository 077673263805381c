import { availableParallelism } from 'node:os';
import { defaultServerConditions } from 'vite';
import { defineConfig } from 'vitest/config';

// The package's own exports resolve to their TypeScript source here (package.json `svc-source`),
// not to dist/, which npm's `prepare` builds for installed copies.
const SOURCE = { resolve: { conditions: ['svc-source', ...defaultServerConditions] } };

export default defineConfig({
  test: {
    // Vitest's default (cores - 1) is one file at a time on a 2-core machine; the integration
    // files mostly wait on processes, timers and PostgreSQL. On 2 cores, two at a time left the
    // CPU 41 % idle; four took waits/, triggers/ and recovery/ from 137 to 95 s (16 % idle), but
    // on a slower 2-core VM four kept the CPU 92 % contended (load 12) and the process/ files,
    // each running servers, workers and PostgreSQL, went past their own bounds: three there. The
    // embedded PostgreSQL takes 200 connections; an external one (SVC_TEST_DATABASE_URL) may take
    // PostgreSQL's default 100, which four files at a time went over: two there.
    maxWorkers: process.env.SVC_TEST_DATABASE_URL ? Math.max(2, availableParallelism() - 1) : Math.max(3, availableParallelism()),
    projects: [
      // 30 s, not vitest's 5: a few cases do 1-2 s of real work (a search's budgets, a thousand
      // years of cron fires), which CI's load beside the integration files stretched past 5 s.
      { ssr: SOURCE, test: { name: 'unit', include: ['test/unit/**/*.test.ts'], environment: 'node', testTimeout: 30_000 } },
      {
        ssr: SOURCE,
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          environment: 'node',
          // One real PostgreSQL for the run (embedded unless SVC_TEST_DATABASE_URL is set);
          // every test file makes its own database on it.
          globalSetup: ['test/helpers/global-setup.ts'],
          testTimeout: 60_000,
          hookTimeout: 120_000,
          pool: 'forks',
          // One process per worker for all its files, not one per file: each file paid 1-3 s
          // importing the service's modules again (engine/: 92 s of imports, 11 s this way; the
          // folder 221 -> 127 s). Files share nothing else: each makes its own database and app.
          isolate: false,
        },
      },
    ],
  },
});

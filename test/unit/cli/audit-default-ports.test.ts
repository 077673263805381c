// `svc gateway` and `svc doctor serve` both listened on 8090 by default: on one host (the doctor
// beside the gateway in front of the server) the second to start failed, EADDRINUSE. The gateway
// keeps 8090 (SVC_GATEWAY_PORT, in docs/gateway.md, operations.md and README.md); the doctor's
// serve moved to 8091, which its --help and docs/operations.md say.
import { readFileSync } from 'node:fs';
import { expect, it } from 'vitest';
import { loadConfig } from '../../../src/config.ts';
import { DOCTOR_SERVE_DEFAULT_PORT, DOCTOR_USAGE } from '../../../src/doctor/doctor-usage.ts';

it('the servers a host runs side by side listen on different ports by default', () => {
  const config = loadConfig({});
  const ports = [config.SVC_PORT, config.SVC_GATEWAY_PORT, DOCTOR_SERVE_DEFAULT_PORT];
  expect(new Set(ports).size, ports.join(', ')).toBe(ports.length);
  expect(config.SVC_GATEWAY_PORT).toBe(8090);
});

it('svc doctor --help and docs/operations.md name the doctor serve port', () => {
  expect(DOCTOR_SERVE_DEFAULT_PORT).toBe(8091);
  expect(DOCTOR_USAGE).toContain('default port 8091');
  expect(DOCTOR_USAGE).toContain('(default 8091; 0: any free one)');
  const operations = readFileSync(new URL('../../../docs/operations.md', import.meta.url), 'utf8');
  expect(operations).toContain('[--token-file PATH]`** (port 8091 by default');
});

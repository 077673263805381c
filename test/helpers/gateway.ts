// A real gateway (`svc gateway`'s app) in this process on 127.0.0.1, in front of a test server,
// with its log captured for secret-leak checks.
import { Writable } from 'node:stream';
import { bodyLimitBytes } from '../../src/body-limit.ts';
import { loadConfig } from '../../src/config.ts';
import { buildGateway, type Gateway } from '../../src/gateway/gateway.ts';
import { gatewaySettings } from '../../src/gateway/settings.ts';
import { createLogger } from '../../src/log.ts';

export type TestGateway = Gateway & { url: string; logs: string[] };

/** The SVC_GATEWAY_SECRET a test server (SVC_AUTH=gateway) and its test gateway share. */
export const TEST_GATEWAY_SECRET = 'gateway-secret-for-tests-0123456789-abcdefghij';

/** Starts a gateway on `port` (0: any) with `env` (SVC_SERVER_URL, SVC_GATEWAY_SECRET, SVC_OIDC_*, ...); `guiDir` overrides gui/dist. */
export async function startTestGateway(env: Record<string, string>, port = 0, guiDir?: string): Promise<TestGateway> {
  const logs: string[] = [];
  const sink = new Writable({
    write(chunk, _enc, cb) {
      logs.push(String(chunk));
      cb();
    },
  });
  const config = loadConfig({ SVC_LOG_LEVEL: 'debug', ...env });
  const settings = gatewaySettings(config, port);
  const gw = await buildGateway({ settings, log: createLogger('debug', sink), bodyLimitBytes: bodyLimitBytes(config), guiDir });
  const url = await gw.app.listen({ port, host: '127.0.0.1' });
  return Object.assign(gw, { url, logs });
}

// A real gateway (`svc gateway`'s app) in this process on 127.0.0.1, in front of a test server,
// with its log captured for secret-leak checks, and its sessions in the database SVC_DATABASE_URL
// names (the test server's: `stack.databaseUrl`), as `svc gateway` keeps them.
import { Writable } from 'node:stream';
import { bodyLimitBytes } from '../../src/body-limit.ts';
import { loadConfig } from '../../src/config.ts';
import { Db } from '../../src/db/db.ts';
import { buildGateway, type Gateway } from '../../src/gateway/gateway.ts';
import { gatewaySettings, type GatewaySettings } from '../../src/gateway/settings.ts';
import { createLogger } from '../../src/log.ts';
import { API_AUDIENCE, GATEWAY_CLIENT_ID, GATEWAY_CLIENT_SECRET } from './oidc-provider.ts';

export type TestGateway = Gateway & { url: string; logs: string[] };

/** The SVC_GATEWAY_SECRET a test server (SVC_AUTH=gateway) and its test gateway share. */
export const TEST_GATEWAY_SECRET = 'gateway-secret-for-tests-0123456789-abcdefghij';

/**
 * Starts a gateway on `port` (0: any) with `env` (SVC_SERVER_URL, SVC_GATEWAY_SECRET, SVC_OIDC_*,
 * SVC_DATABASE_URL with a provider, ...); `guiDir` overrides gui/dist; `settings` overrides what
 * the environment cannot say (session lifetimes shorter than config allows).
 */
export async function startTestGateway(env: Record<string, string>, port = 0, guiDir?: string, settings?: Partial<GatewaySettings>): Promise<TestGateway> {
  const logs: string[] = [];
  const sink = new Writable({
    write(chunk, _enc, cb) {
      logs.push(String(chunk));
      cb();
    },
  });
  const config = loadConfig({ SVC_LOG_LEVEL: 'debug', ...env });
  const db = config.SVC_DATABASE_URL ? new Db(config.SVC_DATABASE_URL, 4) : null;
  let gw: Gateway;
  try {
    gw = await buildGateway({ settings: { ...gatewaySettings(config, port), ...settings }, log: createLogger('debug', sink), bodyLimitBytes: bodyLimitBytes(config), guiDir, db });
  } catch (err) {
    await db?.close();
    throw err;
  }
  const url = await gw.app.listen({ port, host: '127.0.0.1' });
  const close = gw.close;
  return Object.assign(gw, {
    url,
    logs,
    async close() {
      await close();
      await db?.close();
    },
  });
}

/**
 * The settings every test gateway in front of `stack` signed in through `idp` takes: the server,
 * its database, the shared secret and the provider's client; a test adds what it is about.
 */
export function gatewayEnv(stack: { url: string; databaseUrl: string }, idp: { issuer: string }, secret: string): Record<string, string> {
  return {
    SVC_SERVER_URL: stack.url,
    SVC_DATABASE_URL: stack.databaseUrl,
    SVC_GATEWAY_SECRET: secret,
    SVC_OIDC_ISSUER: idp.issuer,
    SVC_OIDC_CLIENT_ID: GATEWAY_CLIENT_ID,
    SVC_OIDC_CLIENT_SECRET: GATEWAY_CLIENT_SECRET,
    SVC_OIDC_AUDIENCE: API_AUDIENCE,
  };
}

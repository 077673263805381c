// `svc gateway`: the authenticating proxy, a process of its own in front of SVC_SERVER_URL.
import { parseArgs } from 'node:util';
import { bodyLimitBytes } from '../body-limit.ts';
import { loadConfig } from '../config.ts';
import { buildGateway } from '../gateway/gateway.ts';
import { gatewaySettings } from '../gateway/settings.ts';
import { createLogger } from '../log.ts';

/** Runs the gateway until SIGINT/SIGTERM; returns the exit code. */
export async function gatewayCommand(argv: string[]): Promise<number> {
  const { values } = parseArgs({ args: argv, options: { port: { type: 'string' }, host: { type: 'string' } }, strict: true });
  const config = loadConfig();
  const port = values.port === undefined ? config.SVC_GATEWAY_PORT : Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error('--port expects an integer from 0 to 65535');
  const settings = { ...gatewaySettings(config, port), ...(values.host ? { host: values.host } : {}) };
  const log = createLogger(config.SVC_LOG_LEVEL);
  const gw = await buildGateway({ settings, log, bodyLimitBytes: bodyLimitBytes(config) });
  const address = await gw.app.listen({ port: settings.port, host: settings.host });
  const lines = [
    `svc gateway listening on ${address}, in front of ${settings.upstream.origin}`,
    `  people   ${settings.oidc ? `OpenID Connect login at ${address}/auth/login (issuer ${settings.oidc.issuer.href})` : 'no SVC_OIDC_ISSUER: no login; only the server\'s API tokens get in'}`,
    `  GUI      ${gw.servesGui ? `${address}/` : 'gui/dist not built; not served'}`,
    `  health   ${address}/health   ready: ${address}/ready`,
  ];
  process.stdout.write(lines.join('\n') + '\n');
  await new Promise<void>((resolve) => {
    process.once('SIGINT', () => resolve());
    process.once('SIGTERM', () => resolve());
  });
  await gw.close();
  return 0;
}

import { gatewayEnv, startTestGateway, type TestGateway } from './gateway.ts';
import { startTestProvider, type TestProvider } from './oidc-provider.ts';
import { freePort } from './ports.ts';
import { startTestStack, type TestStack } from './stack.ts';

/** The console behind a gateway: a real OpenID provider, a server stack of one worker that trusts the gateway, and the gateway at `pub`. */
export type ConsoleStack = { idp: TestProvider; stack: TestStack; gw: TestGateway; pub: string; close(): Promise<void> };

/**
 * Starts the provider, the stack (SVC_AUTH=gateway with `secret`) and the gateway on a free port
 * the provider redirects back to; `close` stops them in reverse. What started before a failure is
 * stopped too.
 */
export async function startConsoleStack(secret: string): Promise<ConsoleStack> {
  const port = await freePort();
  const pub = `http://localhost:${port}`;
  const idp = await startTestProvider([pub]);
  let stack: TestStack | undefined;
  try {
    stack = await startTestStack({ workers: 1, env: { SVC_AUTH: 'gateway', SVC_GATEWAY_SECRET: secret } });
    const gw = await startTestGateway(
      {
        ...gatewayEnv(stack, idp, secret),
        SVC_OIDC_SCOPES: 'openid profile email roles',
        GATEWAY_PUBLIC_URL: pub,
      },
      port,
    );
    const started = stack;
    return {
      idp,
      stack: started,
      gw,
      pub,
      async close() {
        await gw.close();
        await started.close();
        await idp.close();
      },
    };
  } catch (err) {
    await stack?.close();
    await idp.close();
    throw err;
  }
}

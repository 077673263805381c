// NATS logins by key for tests: a nats-server in operator mode (an operator, one account with
// JetStream, users signed by it: JWT + NKEY seed, as in a `.creds` file) and one with NKEY users.
// The JWTs are made here (ed25519 over nkeys, header {"typ":"JWT","alg":"ed25519-nkey"}): a few
// lines, where @nats-io/jwt would be a dependency for tests only.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { nkeys } from '@nats-io/transport-node';
import { accepting, natsServerPath } from './nats-server.ts';
import { freePort } from './ports.ts';

type KeyPair = ReturnType<typeof nkeys.createUser>;

const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes);
const b64url = (value: string | Uint8Array) => Buffer.from(value).toString('base64url');

/** A NATS JWT: `claims` (iss, iat and jti added) signed by `issuer`. */
export function natsJwt(issuer: KeyPair, claims: { sub: string; name: string; nats: Record<string, unknown> }): string {
  const body = { jti: b64url(nkeys.createUser().getPublicKey()).slice(0, 52), iat: Math.floor(Date.now() / 1000), iss: issuer.getPublicKey(), ...claims };
  const signed = `${b64url(JSON.stringify({ typ: 'JWT', alg: 'ed25519-nkey' }))}.${b64url(JSON.stringify(body))}`;
  return `${signed}.${b64url(issuer.sign(new TextEncoder().encode(signed)))}`;
}

/** The text of a `.creds` file as `nsc` writes it. */
export function credsFile(jwt: string, seed: string): string {
  return `-----BEGIN NATS USER JWT-----
${jwt}
------END NATS USER JWT------

************************* IMPORTANT *************************
NKEY Seed printed below can be used to sign and prove identity.
NKEYs are sensitive and should be treated as secrets.

-----BEGIN USER NKEY SEED-----
${seed}
------END USER NKEY SEED------

*************************************************************
`;
}

/** A user seed (SU…) and its public key (U…). */
export function natsUser(): { seed: string; pub: string; pair: KeyPair } {
  const pair = nkeys.createUser();
  return { seed: text(pair.getSeed()), pub: pair.getPublicKey(), pair };
}

export type KeyedNatsServer = {
  url: string;
  port: number;
  /** Operator mode: a `.creds` text for a new user of the account. */
  creds(): string;
  close(): Promise<void>;
};

async function launch(config: string): Promise<{ port: number; child: ChildProcess; dir: string }> {
  const port = await freePort();
  const dir = await mkdtemp(join(tmpdir(), 'svc-nats-keyed-'));
  await writeFile(join(dir, 'nats.conf'), `${config}\njetstream { store_dir: ${JSON.stringify(join(dir, 'js'))} }\n`);
  const child = spawn(natsServerPath(), ['-c', join(dir, 'nats.conf'), '-a', '127.0.0.1', '-p', String(port)], { stdio: 'ignore' });
  await accepting(port);
  return { port, child, dir };
}

function keyed(started: { port: number; child: ChildProcess; dir: string }, creds: () => string): KeyedNatsServer {
  return {
    url: `nats://127.0.0.1:${started.port}`,
    port: started.port,
    creds,
    async close() {
      const { child } = started;
      if (child.exitCode === null && child.signalCode === null) {
        const exited = once(child, 'exit');
        child.kill('SIGTERM');
        await exited;
      }
      await rm(started.dir, { recursive: true, force: true });
    },
  };
}

/** nats-server in operator mode (resolver MEMORY) with one account, JetStream on, users by `.creds`. */
export async function startOperatorNatsServer(): Promise<KeyedNatsServer> {
  const operator = nkeys.createOperator();
  const account = nkeys.createAccount();
  // JetStream in operator mode needs a system account.
  const system = nkeys.createAccount();
  const operatorJwt = natsJwt(operator, { sub: operator.getPublicKey(), name: 'svc-test-operator', nats: { type: 'operator', version: 2 } });
  const unlimited = { subs: -1, data: -1, payload: -1, imports: -1, exports: -1, wildcards: true, conn: -1, leaf: -1 };
  const jetstreamLimits = { mem_storage: -1, disk_storage: -1, streams: -1, consumer: -1 };
  const accountJwt = natsJwt(operator, { sub: account.getPublicKey(), name: 'svc-test-account', nats: { limits: { ...unlimited, ...jetstreamLimits }, type: 'account', version: 2 } });
  const systemJwt = natsJwt(operator, { sub: system.getPublicKey(), name: 'SYS', nats: { limits: unlimited, type: 'account', version: 2 } });
  const preload = `${account.getPublicKey()}: ${accountJwt}, ${system.getPublicKey()}: ${systemJwt}`;
  const config = `operator: ${operatorJwt}\nsystem_account: ${system.getPublicKey()}\nresolver: MEMORY\nresolver_preload: { ${preload} }`;
  return keyed(await launch(config), () => {
    const user = natsUser();
    const jwt = natsJwt(account, { sub: user.pub, name: 'svc-test-user', nats: { pub: {}, sub: {}, subs: -1, data: -1, payload: -1, type: 'user', version: 2 } });
    return credsFile(jwt, user.seed);
  });
}

/** nats-server whose users log in by NKEY: the public keys of `users`; JetStream on. */
export async function startNkeyNatsServer(users: string[]): Promise<KeyedNatsServer> {
  const config = `authorization { users: [ ${users.map((pub) => `{ nkey: ${pub} }`).join(', ')} ] }`;
  return keyed(await launch(config), () => {
    throw new Error('an NKEY server has no .creds');
  });
}

import net from 'node:net';
import tls from 'node:tls';
import { buildAuthenticator } from '@nats-io/transport-node';
import { isObject } from '../objects.ts';
import type { NatsCredentialLogin } from './nats-credential-login.ts';

// A server sends INFO at once and answers PING at once; a longer silence is a failure.
const NATS_PROBE_TIMEOUT_MS = 10_000;
// INFO and the answer to PING fit in this; a server sending more before answering is refused.
const NATS_MAX_READ_BYTES = 64 * 1024;

export type ProbeResult = { ok: boolean; message: string };

/**
 * Connects to a NATS server with `login` (the client protocol: INFO, CONNECT, PING), upgrading to
 * TLS when the server or a tls:// URL asks for it; ok when it answers PONG. The CONNECT's login is
 * what the NATS client would send with `login.options` (user/password, token, or a JWT and the
 * seed's signature of the server's nonce). Messages name the server and its -ERR text, never a
 * secret; the whole probe ends within ~10 s.
 */
export async function probeNats(login: NatsCredentialLogin, timeoutMs = NATS_PROBE_TIMEOUT_MS): Promise<ProbeResult> {
  const { hostname: host, port } = login;
  const where = `nats server ${host}:${port}`;
  const wantTls = login.tls;

  let socket: net.Socket = net.connect({ host, port });
  const reader = lineReader();
  const timer = setTimeout(() => socket.destroy(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
  try {
    await onceConnected(socket);
    socket.on('data', reader.push);
    socket.on('close', () => reader.end(new Error('the server closed the connection')));
    socket.on('error', (err) => reader.end(err));
    const info = parseInfo(await reader.next());
    if (!info) return { ok: false, message: `${where} did not greet as a NATS server` };
    if (info.tls_required === true || wantTls) {
      socket.removeAllListeners('data');
      socket = tls.connect({ socket, servername: net.isIP(host) ? undefined : host });
      socket.on('data', reader.push);
      socket.on('error', (err) => reader.end(err));
      await onceConnected(socket, 'secureConnect');
    }
    const nonce = typeof info.nonce === 'string' ? info.nonce : undefined;
    const connect = { verbose: false, pedantic: false, lang: 'node', version: '1', protocol: 1, name: 'svc-credential-test', ...buildAuthenticator(login.options)(nonce) };
    socket.write(`CONNECT ${JSON.stringify(connect)}\r\nPING\r\n`);
    for (;;) {
      const line = await reader.next();
      if (line === 'PONG') return { ok: true, message: `connected to ${where}` };
      if (line.startsWith('-ERR')) return { ok: false, message: `${where} refused: ${line.slice(4).trim().replace(/^'|'$/g, '')}` };
      if (line === 'PING') socket.write('PONG\r\n');
    }
  } catch (err) {
    return { ok: false, message: `${where}: ${err instanceof Error ? err.message || err.name : String(err)}` };
  } finally {
    clearTimeout(timer);
    socket.destroy();
  }
}

function onceConnected(socket: net.Socket, event: 'connect' | 'secureConnect' = 'connect'): Promise<void> {
  return new Promise((resolve, reject) => {
    socket.once(event, () => resolve());
    socket.once('error', reject);
    socket.once('close', () => reject(new Error('the connection closed')));
  });
}

function parseInfo(line: string): Record<string, unknown> | null {
  if (!line.startsWith('INFO ')) return null;
  try {
    const value: unknown = JSON.parse(line.slice(5));
    return isObject(value) ? value : null;
  } catch {
    return null;
  }
}

/** Lines (without CRLF) of a byte stream, one `next()` at a time; `end` fails what waits. */
function lineReader() {
  let buffer = '';
  let failure: Error | null = null;
  let waiter: { resolve: (line: string) => void; reject: (err: Error) => void } | null = null;
  const settle = () => {
    if (!waiter) return;
    const at = buffer.indexOf('\r\n');
    if (at >= 0) {
      const line = buffer.slice(0, at);
      buffer = buffer.slice(at + 2);
      const w = waiter;
      waiter = null;
      w.resolve(line);
    } else if (failure) {
      const w = waiter;
      waiter = null;
      w.reject(failure);
    }
  };
  return {
    push: (chunk: Buffer) => {
      buffer += chunk.toString('utf8');
      if (buffer.length > NATS_MAX_READ_BYTES) failure = new Error('the server sent too much before answering');
      settle();
    },
    end: (err: Error) => {
      failure ??= err;
      settle();
    },
    next: () =>
      new Promise<string>((resolve, reject) => {
        waiter = { resolve, reject };
        settle();
      }),
  };
}

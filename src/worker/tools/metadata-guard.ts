import { lookup as dnsLookup, type LookupAddress, type LookupAllOptions, type LookupOneOptions } from 'node:dns';
import { isIP } from 'node:net';
import { Agent, buildConnector } from 'undici';

// A cloud machine's metadata service answers, without any credential, with the machine's own
// identity: a token of its service account (GCP, Azure), its role's keys (AWS), its user data. On
// a worker that identity is the worker's, never a playbook's (docs/agents.md keeps the worker's
// token from the endpoints a playbook names). The services sit at link-local addresses
// (169.254.169.254, ECS's 169.254.170.2, fe80::/10) and a few fixed ones (AWS's fd00:ec2::254,
// Alibaba's 100.100.100.200), so the requests a playbook aims (http tasks, their redirects, mcp
// endpoints, keychain token requests) connect to none of them, by literal address or by a name
// that resolves there.

const V4_LINK_LOCAL = /^169\.254\.\d{1,3}\.\d{1,3}$/;
const FIXED_METADATA = new Set(['100.100.100.200', 'fd00:ec2::254']);

/** The IPv4 address an IPv4-mapped IPv6 address (`::ffff:a9fe:a9fe`, `::ffff:169.254.169.254`) stands for. */
function mappedV4(address: string): string | undefined {
  const m = /^::ffff:(?:(\d{1,3}(?:\.\d{1,3}){3})|([0-9a-f]{1,4}):([0-9a-f]{1,4}))$/i.exec(address);
  if (!m) return undefined;
  if (m[1]) return m[1];
  const hi = parseInt(m[2], 16);
  const lo = parseInt(m[3], 16);
  return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
}

/** Why a request may not connect to `address` (an IP address), or undefined when it may. */
export function refusedAddress(address: string): string | undefined {
  const ip = address.replace(/^\[|\]$/g, '').toLowerCase();
  const v4 = isIP(ip) === 6 ? (mappedV4(ip) ?? ip) : ip;
  const linkLocal = V4_LINK_LOCAL.test(v4) || /^fe[89ab][0-9a-f]:/.test(v4);
  if (!linkLocal && !FIXED_METADATA.has(v4)) return undefined;
  return `${ip} is ${linkLocal ? 'a link-local address' : 'a cloud metadata address'}, where a cloud metadata service answers with the worker's own identity: not connected to`;
}

/** Why a request may not go to `url` (its host an IP address that refusedAddress refuses), or undefined. */
export function refusedHost(url: URL): string | undefined {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  return isIP(host) ? refusedAddress(host) : undefined;
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * dns.lookup, dropping the addresses refusedAddress refuses; a name that resolves to none other
 * fails (ENOTFOUND-like, code EADDRNOTAVAIL) saying why, so a name pointed at 169.254.169.254
 * (metadata.google.internal, or a DNS name an attacker controls) connects nowhere.
 */
export function guardedLookup(hostname: string, options: LookupOneOptions | LookupAllOptions, callback: LookupCallback): void {
  dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
    if (err) return callback(err, []);
    const allowed = addresses.filter((a) => refusedAddress(a.address) === undefined);
    if (allowed.length === 0) {
      const why = refusedAddress(addresses[0]?.address ?? '') ?? 'no address';
      const error: NodeJS.ErrnoException = new Error(`${hostname} resolves to ${why}`);
      error.code = 'EADDRNOTAVAIL';
      return callback(error, []);
    }
    if (options.all) return callback(null, allowed);
    callback(null, allowed[0].address, allowed[0].family);
  });
}

const connectGuarded = buildConnector({ lookup: guardedLookup });

/**
 * The connection pool requests a playbook aims go through: each connection, whatever led to it
 * (the task's URL, a redirect fetch follows itself), refused at a literal metadata address, and
 * a name resolved by guardedLookup.
 */
export const TASK_DISPATCHER = new Agent({
  // A task's own timeout_seconds (its signal) bounds how long it waits: undici's 300 s for the
  // headers and between two parts of a body cut a task that allowed longer, as `connection`.
  headersTimeout: 0,
  bodyTimeout: 0,
  connect: (options, callback) => {
    const host = options.hostname.replace(/^\[|\]$/g, '');
    const refused = isIP(host) ? refusedAddress(host) : undefined;
    if (refused === undefined) return connectGuarded(options, callback);
    const error: NodeJS.ErrnoException = new Error(refused);
    error.code = 'EADDRNOTAVAIL';
    callback(error, null);
  },
});

/** fetch through TASK_DISPATCHER, for the clients (MCP's transports) that call fetch themselves. */
export const guardedFetch = (input: string | URL | Request, init?: RequestInit): Promise<Response> => fetch(input, { ...init, dispatcher: TASK_DISPATCHER });

import { isIP } from 'node:net';

// A contiguous IPv4 netmask (255.255.0.0): proxy-addr takes one after the slash as well as a prefix.
function isIpv4Mask(mask: string): boolean {
  if (isIP(mask) !== 4) return false;
  const bits = mask.split('.').map((part) => Number(part).toString(2).padStart(8, '0')).join('');
  return /^1*0*$/.test(bits);
}

/**
 * True for what the gateway's proxy list (SVC_GATEWAY_TRUSTED_PROXIES, fastify's trustProxy) takes
 * as one item: an IPv4 or IPv6 address, with a prefix length (`/8`) or, for IPv4, a netmask.
 * Checked at start: proxy-addr's own refusal ("invalid range on address") named no variable.
 */
export function isProxyRange(item: string): boolean {
  const [address, range, ...rest] = item.split('/');
  const family = isIP(address);
  if (family === 0 || rest.length) return false;
  if (range === undefined) return true;
  if (/^\d{1,3}$/.test(range)) return Number(range) <= (family === 4 ? 32 : 128);
  return family === 4 && isIpv4Mask(range);
}

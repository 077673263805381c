// The renewal lease of a keychain entry: the first worker that finds an entry missing or expired
// takes it and makes the entry; the others wait for that entry instead of each asking the token
// endpoint (a stampede whose tokens overwrote each other). Workers of any number of pools and
// servers meet here, in the database; one worker's concurrent commands already share a request.
import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import * as v from 'valibot';
import type { AppDeps } from '../app-deps.ts';
import { getKeychainEntry } from '../db/keychain.repo.ts';
import { endKeychainRenewal, takeKeychainRenewal } from '../db/keychain-renewal.repo.ts';
import { RENEWAL_LEASE_SECONDS } from '../keychain/renewal-lease.ts';
import { responses } from './answers.ts';
import { entryParams, entryQuery, grantedEntry } from './keychain.ts';
import { exactObject, jsonSchema } from './validation.ts';
import { claimHeadersSchema } from './worker-grant.ts';

// How soon a waiter asks again: a token request takes tens to hundreds of milliseconds.
const RETRY_AFTER_MS = 150;

const releaseQuery = exactObject({ ...entryQuery.entries, lease_id: v.pipe(v.string(), v.uuid('must be a uuid')) });

const turnAnswer = v.variant('status', [
  v.object({ status: v.literal('granted'), lease_id: v.string(), lease_seconds: v.number() }),
  v.object({ status: v.literal('held'), retry_after_ms: v.number() }),
  v.object({ status: v.literal('live') }),
]);
const releasedAnswer = v.object({ status: v.literal('success') });

export async function keychainRenewalRoutes(app: FastifyInstance, deps: AppDeps): Promise<void> {
  app.post(
    '/api/keychain/:catalog_id/:keychain_name/renewal',
    {
      schema: {
        tags: ['keychain'],
        summary: 'Take the lease to make or renew a missing or expired entry: granted (make it, then store it), held (another does: read again after retry_after_ms) or live',
        params: jsonSchema(entryParams),
        querystring: jsonSchema(entryQuery),
        headers: claimHeadersSchema(),
        response: responses({ 200: turnAnswer }),
      },
      config: { access: { level: 'admin', worker: true } },
    },
    async (req) => {
      const { key } = await grantedEntry(req, deps);
      const now = new Date();
      // Live already (another worker stored it): nothing to make. The worker reads the entry again
      // after a grant too, for a store that lands between this read and the lease.
      const row = await getKeychainEntry(deps.db, key);
      if (row && row.expires_at.getTime() > now.getTime()) return { status: 'live' };
      const leaseId = randomUUID();
      if (await takeKeychainRenewal(deps.db, key, leaseId, RENEWAL_LEASE_SECONDS, now)) return { status: 'granted', lease_id: leaseId, lease_seconds: RENEWAL_LEASE_SECONDS };
      return { status: 'held', retry_after_ms: RETRY_AFTER_MS };
    },
  );

  app.delete(
    '/api/keychain/:catalog_id/:keychain_name/renewal',
    {
      schema: {
        tags: ['keychain'],
        summary: "Give a renewal lease back (the holder stored the entry, or could not make it): the next worker's take is granted at once",
        params: jsonSchema(entryParams),
        querystring: jsonSchema(releaseQuery),
        headers: claimHeadersSchema(),
        response: responses({ 200: releasedAnswer }),
      },
      config: { access: { level: 'admin', worker: true } },
    },
    async (req) => {
      const { key } = await grantedEntry(req, deps);
      const { lease_id: leaseId } = req.query as v.InferOutput<typeof releaseQuery>;
      await endKeychainRenewal(deps.db, key, leaseId);
      return { status: 'success' };
    },
  );
}

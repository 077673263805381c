import type { FastifyInstance } from 'fastify';
import * as v from 'valibot';
import type { AppDeps } from '../app-deps.ts';
import { executionSecretAad, open, SealError } from '../crypto/seal.ts';
import { getExecutionSecret } from '../db/execution-secret.repo.ts';
import { notFound, ServiceError } from '../errors.ts';
import { responses } from './answers.ts';
import { jsonSchema } from './validation.ts';
import { claimHeadersSchema, requireWorkerGrant } from './worker-grant.ts';

const handleParams = v.object({ handle: v.pipe(v.string(), v.uuid('must be a uuid')) });
const secretAnswer = v.object({ value: v.pipe(v.string(), v.description('the access token the handle stands for')) });

/** GET /api/secrets/{handle}: workers exchange a handle for the value (worker token only, for a command given the handle). */
export async function executionSecretRoutes(app: FastifyInstance, deps: AppDeps): Promise<void> {
  app.get(
    '/api/secrets/:handle',
    { schema: { tags: ['workers'], summary: 'The value behind a secret handle of a workload (workers only)', params: jsonSchema(handleParams), headers: claimHeadersSchema(), response: responses({ 200: secretAnswer }) }, config: { access: { level: 'worker' } } },
    async (req) => {
      const { handle } = req.params as v.InferOutput<typeof handleParams>;
      await requireWorkerGrant(req, deps, { kind: 'secret', handle });
      const sealed = await getExecutionSecret(deps.db, handle);
      if (sealed === undefined) throw notFound('secret handle');
      try {
        return { value: open(deps.keyring, sealed, executionSecretAad(handle)) };
      } catch (error) {
        // Sealed with a key the server no longer has (rotated out): the execution must be started again.
        if (error instanceof SealError) throw new ServiceError('conflict', 'the secret was sealed with a key this server does not have');
        throw error;
      }
    },
  );
}

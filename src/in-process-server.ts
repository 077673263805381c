import type { FastifyInstance } from 'fastify';
import type { ReportAnswer, ReportRequest } from './protocol.ts';
import { ServerError, type InProcessServer } from './worker/server-client.ts';
import { answerOfError } from './api/error-handler.ts';
import { httpAnswerOf, ServiceError } from './errors.ts';
import { parseJsonBody } from './api/input-guard.ts';
import { jsonSchema, valibotCompiler } from './api/validation.ts';
import { reportBody, type ValidReport } from './api/worker-desk.ts';

const REPORT = 'POST /api/worker/report';
const checkReport = valibotCompiler({ schema: jsonSchema(reportBody), httpPart: 'body' });

/**
 * This server for the worker pools of its own process (`svc start`): their requests go to it
 * without a socket (fastify's `inject`), and their reports, one per step, straight to the report's
 * handler (the routes' WorkerDesk). A report is checked as the route checks it (the body limit, the
 * input guard on its JSON text, the body's schema), and answered or refused as the route answers: the same JSON,
 * a ServerError with the route's status and `detail`. What it skips is the HTTP machinery around
 * the handler (a request and response emulated, hooks, routing): about 0.5 ms of a 2-3 ms step
 * (docs/benchmarks.md, "Twenty-fourth session").
 */
export function inProcessServer(app: FastifyInstance): InProcessServer {
  return {
    inject: (request) => app.inject(request),
    async report(body: ReportRequest): Promise<ReportAnswer> {
      // A closing server takes no more work: as a refused socket, the pool keeps its results.
      if (app.closingSignal.aborted) throw new TypeError(`${REPORT}: the server is closing`);
      try {
        const text = JSON.stringify(body);
        // The route's body limit (fastify refuses past it before parsing): the same 413 here.
        const limit = app.initialConfig.bodyLimit!;
        if (Buffer.byteLength(text) > limit) throw new ServiceError('payload_too_large', `${httpAnswerOf('payload_too_large').message}: at most ${limit} bytes`);
        const checked = checkReport(parseJsonBody(text));
        if ('error' in checked) throw checked.error;
        const answer = await app.workerDesk.report(checked.value as ValidReport);
        // Answered as JSON, as over HTTP: the pool holds no object of the server's.
        return JSON.parse(JSON.stringify(answer)) as ReportAnswer;
      } catch (err) {
        const { status, detail } = answerOfError(err, app.log);
        throw new ServerError(status, detail, REPORT);
      }
    },
  };
}

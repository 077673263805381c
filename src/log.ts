import pino from 'pino';
import { redactForLog } from './redact-for-log.ts';

export type Logger = pino.Logger;

/**
 * The service logger: JSON lines, secrets redacted at any depth (see redact-for-log.ts).
 * `destination` lets tests capture output.
 */
export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  const logger = pino(
    {
      level,
      base: { svc: 'orchestrator' },
      // Runs before serialization, on every log object.
      formatters: { log: redactForLog, bindings: redactForLog },
      // Errors are already plain (and redacted) here; one logged any other way is redacted too.
      serializers: { err: (value: unknown) => (value instanceof Error ? redactForLog({ err: value }).err : value) },
    },
    destination,
  );
  // pino gives children an identity bindings formatter, so child bindings (fastify's, ours) are
  // redacted here; children inherit this method from their parent.
  const baseChild: (this: Logger, bindings: pino.Bindings, options?: pino.ChildLoggerOptions<never>) => Logger = logger.child;
  Object.defineProperty(logger, 'child', {
    value: function child(this: Logger, bindings: pino.Bindings, options?: pino.ChildLoggerOptions<never>): Logger {
      return baseChild.call(this, redactForLog(bindings), options);
    },
  });
  return logger;
}

import pino from 'pino';

// Paths whose values are secrets wherever they appear in a logged object. pino's redaction
// replaces them before serialisation, so a secret never reaches a log line.
export const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'headers.authorization',
  'headers.Authorization',
  '*.headers.authorization',
  '*.headers.Authorization',
  'password',
  '*.password',
  'token',
  '*.token',
  'access_token',
  '*.access_token',
  'refresh_token',
  '*.refresh_token',
  'client_secret',
  '*.client_secret',
  'data',
  '*.data',
  'token_data',
  '*.token_data',
  'data_encrypted',
  '*.data_encrypted',
  'secret',
  '*.secret',
];

export type Logger = pino.Logger;

/** The service logger: JSON lines, secrets redacted. `destination` lets tests capture output. */
export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino({ level, redact: { paths: REDACT_PATHS, censor: '[redacted]' }, base: { svc: 'orchestrator' } }, destination);
}

import { BODY_LIMIT_BYTES } from '../../body-limit.ts';

/**
 * The most of an answer a task reads (an http response's body, a postgres task's rows): the
 * server's request body limit (src/body-limit.ts), past which the report carrying it would be
 * refused anyway. Reading on would hold the whole answer, however large, in the worker's memory.
 */
export const ANSWER_MAX_BYTES = BODY_LIMIT_BYTES;

/** The limit in words, for messages. */
export const ANSWER_MAX_TEXT = `${ANSWER_MAX_BYTES / (1024 * 1024)} MiB`;

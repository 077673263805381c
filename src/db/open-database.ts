import type { Config } from '../config.ts';
import type { Logger } from '../log.ts';
import { runningEmbeddedUrl, startEmbedded, type EmbeddedDatabase } from './embedded.ts';
import { prepareServiceOwner, runningOwnerUrl } from './service-owner.ts';

/**
 * Opens the database named by config, or starts the embedded one under SVC_DATA_DIR (`embedded`
 * is then this process's to stop). With `shareRunning`, an embedded one that a running `svc
 * start` holds is used as it is: commands beside a server (`svc token`) need no PostgreSQL of
 * their own, and could not start one on its data dir. On the embedded one the service connects
 * as its owner role, never as the superuser (src/db/service-owner.ts).
 */
export async function openDatabase(config: Config, log: Logger, opts: { shareRunning?: boolean } = {}): Promise<{ url: string; embedded?: EmbeddedDatabase }> {
  if (config.SVC_DATABASE_URL) return { url: config.SVC_DATABASE_URL };
  const running = opts.shareRunning ? await runningEmbeddedUrl(config.SVC_DATA_DIR) : undefined;
  if (running) return { url: await runningOwnerUrl(running, config.SVC_DATA_DIR) };
  const embedded = await startEmbedded(config.SVC_DATA_DIR, (line) => log.debug({ pg: line }, 'embedded postgres'));
  try {
    return { url: await prepareServiceOwner(embedded.url, config.SVC_DATA_DIR), embedded };
  } catch (err) {
    await embedded.stop().catch(() => {});
    throw err;
  }
}

/**
 * The database of a process that works beside a server and never starts one (`svc gateway`):
 * SVC_DATABASE_URL, else the embedded one a running `svc start` holds on SVC_DATA_DIR (as the
 * service owner); undefined when there is neither.
 */
export async function runningDatabaseUrl(config: Config): Promise<string | undefined> {
  if (config.SVC_DATABASE_URL) return config.SVC_DATABASE_URL;
  const running = await runningEmbeddedUrl(config.SVC_DATA_DIR);
  return running ? runningOwnerUrl(running, config.SVC_DATA_DIR) : undefined;
}

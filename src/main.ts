import 'reflect-metadata';
import { ConfigError, loadConfig, loadDotEnv } from './config/app-config.js';
import { logRelaxedGuards } from './config/relaxed-guards.js';
import { createLogger } from './logging/logger.js';
import { startTracing } from './telemetry/tracing.js';

/** Longest a graceful stop may take before the process gives up on in-flight work. */
const SHUTDOWN_TIMEOUT_MS = 10_000;

/**
 * What a stop signal does. Until the server listens it ends the process at once: nothing has been
 * answered yet, and a migration cut short rolls back. Registered before anything else, so a stop
 * while the database is being waited for is not ignored (as a container's process 1, an unhandled
 * SIGTERM would be, until the runtime's SIGKILL).
 */
let stop = (signal: NodeJS.Signals): void => {
  process.stderr.write(`${signal} before the server listened: exiting\n`);
  process.exit(0);
};
for (const signal of ['SIGTERM', 'SIGINT'] as const) process.once(signal, () => stop(signal));

async function bootstrap(): Promise<void> {
  loadDotEnv();
  const config = loadConfig();
  const logger = createLogger(config.logLevel);
  // The log is written as each event-loop turn ends: a turn cut short by process.exit writes here.
  process.once('exit', () => logger.flush());
  // Before anything listens, so a relaxed guard is in the log of every start that has it.
  logRelaxedGuards(config, logger);
  const tracing = await startTracing();
  // Loaded after tracing started, so its instrumentation sees the HTTP server being created.
  const { createApp } = await import('./app.js');
  const app = await createApp(config, logger);
  await app.listen({ port: config.port, host: config.host });

  stop = (signal) => {
    logger.info({ signal }, 'shutting down: no new connections, finishing requests in flight');
    setTimeout(() => {
      logger.error('graceful shutdown timed out');
      process.exit(1);
    }, SHUTDOWN_TIMEOUT_MS).unref();
    // Stops the server (in-flight requests complete), then closes the database.
    app
      .close()
      .then(() => tracing?.shutdown())
      .then(
        () => logger.info('stopped'),
        (error: unknown) => {
          logger.error({ err: error }, 'error while shutting down');
          process.exitCode = 1;
        },
      );
  };
}

bootstrap().catch((error: unknown) => {
  // A bad configuration gets one line naming the variable, not a stack trace.
  process.stderr.write(
    `${error instanceof ConfigError ? error.message : ((error as Error)?.stack ?? String(error))}\n`,
  );
  process.exit(1);
});

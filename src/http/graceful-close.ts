import type { FastifyInstance } from 'fastify';

/**
 * Responses finished while the server closes close their connection; otherwise a keep-alive
 * client that sent its request before SIGTERM would hold close() open until its idle timeout.
 */
export function closeConnectionsWhileClosing(fastify: FastifyInstance): void {
  let closing = false;
  fastify.addHook('preClose', (done) => {
    closing = true;
    done();
  });
  fastify.addHook('onSend', (_request, reply, payload, done) => {
    if (closing) reply.header('connection', 'close');
    done(null, payload);
  });
}

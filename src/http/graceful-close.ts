import type { FastifyInstance } from 'fastify';
import type { Socket } from 'node:net';

/**
 * Responses finished while the server closes close their connection (the caller's `onSend` asks
 * the returned function); otherwise a keep-alive client that sent its request before SIGTERM
 * would hold close() open until its idle timeout. A connection that has not sent a byte yet (a
 * client's or a balancer's spare) is closed at once: once closing, Node no longer times such
 * connections out, so one would hold close() open for good.
 */
export function closeConnectionsWhileClosing(fastify: FastifyInstance): () => boolean {
  let closing = false;
  const connections = new Set<Socket>();
  fastify.server.on('connection', (socket: Socket) => {
    connections.add(socket);
    socket.once('close', () => connections.delete(socket));
  });
  fastify.addHook('preClose', (done) => {
    closing = true;
    for (const socket of connections) if (socket.bytesRead === 0) socket.destroy();
    done();
  });
  return () => closing;
}

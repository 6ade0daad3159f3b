import { randomUUID } from 'node:crypto';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { ApiError } from '../errors/api-error.js';
import { hygieneHeaders } from './response-headers.js';

/**
 * What never becomes a Fastify request, where Node would answer a bare 417 or drop the socket: an
 * unknown Expect is ignored (RFC 9110 §10.1.1), a CONNECT refused (this is not a proxy).
 */
export function answerExpectationsAndConnect(server: Server): void {
  server.on('checkExpectation', (request: IncomingMessage, response: ServerResponse) =>
    server.emit('request', request, response),
  );
  server.on('connect', (_request: IncomingMessage, socket: Socket) =>
    endWithError(socket, 'CONNECT is not supported: this server is not a proxy'),
  );
}

/**
 * Bytes Node's HTTP parser rejects (a malformed request line or header, headers over the size
 * limit) never become a request; they still get the Error body instead of Fastify's own shape.
 * A client that stopped sending is just disconnected. Fastify's `clientErrorHandler`.
 */
export function answerUnparsableRequest(error: Error & { code?: string }, socket: Socket): void {
  if (
    error.code === 'ECONNRESET' ||
    error.code === 'ERR_HTTP_REQUEST_TIMEOUT' ||
    !socket.writable
  ) {
    socket.destroy();
    return;
  }
  endWithError(
    socket,
    error.code === 'HPE_HEADER_OVERFLOW'
      ? 'Request headers are too large'
      : 'Malformed HTTP request',
  );
}

/** Writes a 400 with the Error body straight to the socket and closes it. */
function endWithError(socket: Socket, message: string): void {
  const body = JSON.stringify(new ApiError('VALIDATION_FAILED', message).body);
  const headers = {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(body),
    ...hygieneHeaders(randomUUID()),
    connection: 'close',
  };
  const head = Object.entries(headers)
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('');
  socket.end(`HTTP/1.1 400 Bad Request\r\n${head}\r\n${body}`);
}

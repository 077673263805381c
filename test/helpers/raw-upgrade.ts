import { connect, type Socket } from 'node:net';

/**
 * Sends a WebSocket upgrade request for `path` on a raw socket; resolves with what came back once
 * the server ended the socket (`ended`), or after `waitMs` with the socket still open.
 */
export function rawUpgrade(url: string, path: string, waitMs: number): Promise<{ text: string; ended: boolean; socket: Socket }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    let text = '';
    const timer = setTimeout(() => resolve({ text, ended: false, socket }), waitMs);
    socket.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
    socket.on('end', () => {
      clearTimeout(timer);
      resolve({ text, ended: true, socket });
    });
    socket.on('error', reject);
    socket.write(
      `GET ${path} HTTP/1.1\r\nHost: ${hostname}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n`,
    );
  });
}

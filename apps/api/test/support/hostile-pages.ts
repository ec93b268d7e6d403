/** A local HTTP server the tests start: serves the given pages (path → HTML) on 127.0.0.1, 404 for anything else. */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface HostilePages {
  /** the page's URL on the server */
  url(path: string): string;
  close(): Promise<void>;
}

export async function startHostilePages(pages: Readonly<Record<string, string>>): Promise<HostilePages> {
  const server = http.createServer((req, res) => {
    const body = pages[new URL(req.url ?? '/', 'http://x').pathname];
    if (body === undefined) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
    res.end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: (path) => `http://127.0.0.1:${port}${path}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

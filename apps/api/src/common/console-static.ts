import { Logger } from '@nestjs/common';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { static as serveStatic, type NextFunction, type Request, type Response } from 'express';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { ROUTE_LABEL } from './http-pipeline';
import { isApiOrGatewayPath, lenientPath } from './request-path';

const NOT_BUILT_PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>CashCode</title></head>
<body><h1>CashCode</h1>
<p>The API is running, but the console has not been built yet.</p>
<p>Run <code>npm run build</code> (or <code>npm start</code>, which builds what is missing) and reload this page.</p>
<p>API description: <a href="/api/docs">/api/docs</a></p>
</body></html>
`;

/**
 * Paths the console must never answer: every spelling of the API (its docs included, under `/api/docs`), the shared
 * WebSocket endpoint, the Prometheus scrape endpoint `/metrics` and `/v1` (OpenAI-style paths: a client that gets them wrong sees a 404, never the app shell).
 * Everything else that looks like a page (`/`, `/chat/<id>`, `/settings`, …) gets index.html (console deep links).
 */
function isReserved(path: string): boolean {
  if (isApiOrGatewayPath(path)) return true;
  const lenient = lenientPath(path);
  return lenient === null || /^\/v1(?:\/|$)/.test(lenient);
}

/**
 * Serves the built console (config.consoleDir) at `/` with an SPA fallback to index.html for GET/HEAD page requests
 * outside every spelling of `/api` and `/ws`. Without a build, `/` answers a short page saying how to build it.
 * Returns whether the console is built.
 */
export function installConsole(app: NestExpressApplication, consoleDir: string): boolean {
  const index = join(consoleDir, 'index.html');
  if (!existsSync(index)) {
    new Logger('Console').warn('event=console.not_built');
    app.use((req: Request, res: Response, next: NextFunction) => {
      if ((req.method === 'GET' || req.method === 'HEAD') && (req.path === '/' || req.path === '/index.html')) {
        res.locals[ROUTE_LABEL] = '<console>';
        res.status(200).type('html').send(NOT_BUILT_PAGE);
        return;
      }
      next();
    });
    return false;
  }
  app.use((req: Request, res: Response, next: NextFunction) => {
    if (!isReserved(req.path)) res.locals[ROUTE_LABEL] = '<console>';
    next();
  });
  const assets = serveStatic(consoleDir, { index: 'index.html', fallthrough: true, redirect: false, dotfiles: 'ignore' });
  app.use((req: Request, res: Response, next: NextFunction) => (isReserved(req.path) ? next() : assets(req, res, next)));
  app.use((req: Request, res: Response, next: NextFunction) => {
    if ((req.method !== 'GET' && req.method !== 'HEAD') || isReserved(req.path)) {
      delete res.locals[ROUTE_LABEL];
      return next();
    }
    // Missing assets (a path with an extension) are 404s, not the app shell.
    if (/\.[A-Za-z0-9]+$/.test(req.path) || !req.accepts('html')) {
      delete res.locals[ROUTE_LABEL];
      return next();
    }
    res.setHeader('Cache-Control', 'no-cache');
    res.sendFile(index);
  });
  return true;
}

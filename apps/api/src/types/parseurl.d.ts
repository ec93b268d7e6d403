// parseurl ships no type declarations; this is the part of its API the server uses.
declare module 'parseurl' {
  import type { IncomingMessage } from 'node:http';
  import type { Url } from 'node:url';

  /** Parses `req.url` (memoised on the request), as Express does for `req.path`; undefined without a url. */
  function parseurl(req: IncomingMessage): Url | undefined;
  export = parseurl;
}

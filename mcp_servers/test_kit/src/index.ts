export { createTestServer, optionsFromEnv, HELLO_TEXT, type TestServerOptions } from './tools';
export {
  parseHttpArgs,
  runHttpMain,
  startSseServer,
  startStreamableHttpServer,
  type HttpServerOptions,
  type RunningHttpServer,
} from './http';

import { Module } from '@nestjs/common';

/**
 * Cross-cutting HTTP/WS platform. Most of it is installed on the app by bootstrap.ts (request id, access log,
 * Host/Origin/token guards, CORS, helmet, problem+json filter, ValidationPipe, the WebSocket adapter, OpenAPI,
 * the console); the reusable pieces are plain functions and classes in this folder:
 * atomic-file.ts, redact.ts, log-format.ts (formatEvent), log-context.ts, problem-details.ts (ApiProblemResponses).
 */
@Module({})
export class CommonModule {}

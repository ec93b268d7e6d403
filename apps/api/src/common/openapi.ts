import type { INestApplication } from '@nestjs/common';
import { DocumentBuilder, type OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import { TOKEN_EXEMPT_ROUTES } from './http-security';
import { ProblemDetailsDto, ProblemFieldErrorDto } from './problem-details';

export const OPENAPI_UI_PATH = 'api/docs';
export const OPENAPI_JSON_PATH = 'api/docs-json';

/** Builds the OpenAPI document from the controllers' explicit decorators (no CLI plugin: plain tsc build). */
export function buildOpenApiDocument(app: INestApplication): OpenAPIObject {
  const builder = new DocumentBuilder()
    .setTitle('CashCode API')
    .setDescription(
      'REST API of CashCode, a self-hosted personal AI agent server. Errors are RFC 9457 `application/problem+json` ' +
        '(see the ProblemDetails schema); every response carries `X-Request-ID`. Send the API token as ' +
        '`Authorization: Bearer <token>` (unless the server runs with CASHCODE_AUTH=off); the console uses the session ' +
        'cookie of the sign-in link the server prints at start. Chat runs over the WebSocket gateway (not described here).',
    )
    .setVersion('0.1.0')
    .addBearerAuth({
      type: 'http',
      scheme: 'bearer',
      description: 'CASHCODE_API_TOKEN, else the token in settings/api-token of the config directory',
    })
    .build();
  const document = SwaggerModule.createDocument(app, builder, {
    extraModels: [ProblemDetailsDto, ProblemFieldErrorDto],
    operationIdFactory: (controllerKey: string, methodKey: string) => `${controllerKey.replace(/Controller$/, '')}_${methodKey}`,
  });
  return withCommonProblemResponses(document);
}

/** Paths that need no token even when the server has one (the guard's allowlist). */
const TOKEN_EXEMPT = new Set<string>(TOKEN_EXEMPT_ROUTES);

/**
 * Every route can answer 403 (Host not allowed, or Origin not allowed on a state-changing call), 401 when the
 * server has an API token, and 500 for a server fault: documented once here instead of on every handler.
 */
export function withCommonProblemResponses(document: OpenAPIObject): OpenAPIObject {
  const problem = { 'application/problem+json': { schema: { $ref: '#/components/schemas/ProblemDetailsDto' } } };
  const common: Record<string, string> = {
    '403': 'Forbidden: the Host (DNS rebinding) or, on a state-changing call, the Origin is not allowed',
    '500': 'Internal server error (never caused by client input)',
  };
  for (const [path, item] of Object.entries(document.paths)) {
    // `/v1` (the OpenAI-compatible endpoint) documents its own errors in the OpenAI format
    if (path.startsWith('/v1/')) continue;
    for (const operation of Object.values(item) as Array<{ responses?: Record<string, unknown> }>) {
      if (typeof operation !== 'object' || operation === null || !operation.responses) continue;
      const responses = operation.responses;
      const add = (status: string, description: string) => {
        responses[status] ??= { description, content: problem };
      };
      for (const [status, description] of Object.entries(common)) add(status, description);
      if (!TOKEN_EXEMPT.has(path)) add('401', 'Unauthorized: the request has neither the API token nor the session cookie');
    }
  }
  return document;
}

/**
 * Serves the Swagger UI at `/api/docs` and the JSON document at `/api/docs-json`. The document is built on the first
 * request of either (then kept): scanning every route costs start-up time and memory that most runs never need.
 */
export function setupOpenApi(app: INestApplication): void {
  SwaggerModule.setup(OPENAPI_UI_PATH, app, () => buildOpenApiDocument(app), {
    jsonDocumentUrl: OPENAPI_JSON_PATH,
    yamlDocumentUrl: 'api/docs-yaml',
    customSiteTitle: 'CashCode API',
  });
}

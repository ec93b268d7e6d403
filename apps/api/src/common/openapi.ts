import type { INestApplication } from '@nestjs/common';
import { DocumentBuilder, type OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import { ProblemDetailsDto, ProblemFieldErrorDto } from './problem-details';

export const OPENAPI_UI_PATH = 'api/docs';
export const OPENAPI_JSON_PATH = 'api/docs-json';

/** Builds the OpenAPI document from the controllers' explicit decorators (no CLI plugin: plain tsc build). */
export function buildOpenApiDocument(app: INestApplication): OpenAPIObject {
  const builder = new DocumentBuilder()
    .setTitle('CashCode API')
    .setDescription(
      'REST API of CashCode, a self-hosted personal AI agent server. Errors are RFC 9457 `application/problem+json` ' +
        '(see the ProblemDetails schema); every response carries `X-Request-ID`. When the server has an API token, ' +
        'send it as `Authorization: Bearer <token>`. Chat runs over the WebSocket gateway (not described here).',
    )
    .setVersion('0.1.0')
    .addBearerAuth({ type: 'http', scheme: 'bearer', description: 'CASHCODE_API_TOKEN, when the server has one' })
    .build();
  return SwaggerModule.createDocument(app, builder, {
    extraModels: [ProblemDetailsDto, ProblemFieldErrorDto],
    operationIdFactory: (controllerKey: string, methodKey: string) => `${controllerKey.replace(/Controller$/, '')}_${methodKey}`,
  });
}

/** Serves the Swagger UI at `/api/docs` and the JSON document at `/api/docs-json`. */
export function setupOpenApi(app: INestApplication): OpenAPIObject {
  const document = buildOpenApiDocument(app);
  SwaggerModule.setup(OPENAPI_UI_PATH, app, document, {
    jsonDocumentUrl: OPENAPI_JSON_PATH,
    yamlDocumentUrl: 'api/docs-yaml',
    customSiteTitle: 'CashCode API',
  });
  return document;
}

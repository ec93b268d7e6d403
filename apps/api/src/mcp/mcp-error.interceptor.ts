import { type CallHandler, type ExecutionContext, Injectable, type NestInterceptor } from '@nestjs/common';
import { type Observable, catchError, throwError } from 'rxjs';
import { McpError, toHttpException } from './mcp.errors';

/** Maps McpError to its problem+json HTTP exception, once, for every MCP route. */
@Injectable()
export class McpErrorInterceptor implements NestInterceptor {
  intercept(_context: ExecutionContext, next: CallHandler): Observable<unknown> {
    return next
      .handle()
      .pipe(catchError((error: unknown) => throwError(() => (error instanceof McpError ? toHttpException(error) : error))));
  }
}

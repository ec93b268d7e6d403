import { type CallHandler, type ExecutionContext, Injectable, type NestInterceptor } from '@nestjs/common';
import { type Observable, catchError, throwError } from 'rxjs';
import { LlmSettingsError, toHttpException } from './llm-settings.errors';

/** Maps LlmSettingsError to its problem+json HTTP exception, once, for every LLM settings route. */
@Injectable()
export class LlmSettingsErrorInterceptor implements NestInterceptor {
  intercept(_context: ExecutionContext, next: CallHandler): Observable<unknown> {
    return next
      .handle()
      .pipe(
        catchError((error: unknown) =>
          throwError(() => (error instanceof LlmSettingsError ? toHttpException(error) : error)),
        ),
      );
  }
}

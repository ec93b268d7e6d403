import { type CallHandler, type ExecutionContext, Injectable, type NestInterceptor } from '@nestjs/common';
import { type Observable, catchError, throwError } from 'rxjs';
import { EvolutionError, toHttpException } from './evolution.errors';

/** Maps EvolutionError to its problem+json HTTP exception, once, for every skill-evolution route. */
@Injectable()
export class EvolutionErrorInterceptor implements NestInterceptor {
  intercept(_context: ExecutionContext, next: CallHandler): Observable<unknown> {
    return next
      .handle()
      .pipe(
        catchError((error: unknown) => throwError(() => (error instanceof EvolutionError ? toHttpException(error) : error))),
      );
  }
}

import { HttpErrorResponse, type HttpInterceptorFn } from '@angular/common/http';
import { inject } from '@angular/core';
import { catchError, throwError } from 'rxjs';

import { I18n } from '../i18n/i18n';
import { ApiError, toApiError } from './api-error';
import { localizeProblem } from './problem-messages';

/**
 * Turns every failed HTTP call into an ApiError carrying the problem+json detail, code and field errors; a known
 * problem `code` is shown as a message in the console's language, any other as the server's `detail`.
 */
export const apiErrorInterceptor: HttpInterceptorFn = (request, next) => {
  const i18n = inject(I18n);
  return next(request).pipe(
    catchError((error: unknown) => {
      if (error instanceof HttpErrorResponse) {
        if (error.status === 0) return throwError(() => new ApiError(0, i18n.t('error.network')));
        return throwError(() =>
          toApiError(
            error.status,
            error.statusText ?? '',
            error.error,
            (status) => i18n.t('error.requestFailed', { status }),
            (code, problem) => localizeProblem(i18n, code, problem),
          ),
        );
      }
      return throwError(() => error);
    }),
  );
};

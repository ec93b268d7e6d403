import { type CanActivate, type ExecutionContext, HttpStatus, Inject, Injectable } from '@nestjs/common';
import type { Request } from 'express';
import { isAllowedOrigin } from '../common/http-security';
import { ProblemException } from '../common/problem-details';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { LLM_SETTINGS_MESSAGES } from './llm-settings.errors';

/**
 * openspec llm-settings "Requirement: Origin check": `PUT`, `POST /test` and `GET /models` answer 403 `Origin is not
 * allowed` when an Origin header is present and not allowed — before validation and before any provider is contacted
 * (guards run before pipes). Covers the GET too, which the global state-changing Origin middleware does not.
 */
@Injectable()
export class LlmOriginGuard implements CanActivate {
  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest<Request>();
    if (!isAllowedOrigin(request.headers.origin, this.config, request.headers.host)) {
      throw new ProblemException(HttpStatus.FORBIDDEN, LLM_SETTINGS_MESSAGES.originNotAllowed);
    }
    return true;
  }
}

/**
 * Triggers DreamService.run('schedule') every DREAM_INTERVAL seconds (openspec memory: first run one interval after
 * start). DREAM_INTERVAL=0 registers nothing. The interval is registered with @nestjs/schedule's SchedulerRegistry,
 * which clears it at shutdown. Overlap is prevented by DreamService (a tick during a run is skipped).
 */
import { Inject, Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { formatEvent } from '../common/log-format';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { DreamService } from './dream.service';

export const DREAM_INTERVAL_NAME = 'memory.dream';

@Injectable()
export class DreamScheduler implements OnApplicationBootstrap {
  private readonly logger = new Logger(DreamScheduler.name);

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly dream: DreamService,
    private readonly registry: SchedulerRegistry,
  ) {}

  onApplicationBootstrap(): void {
    const seconds = this.config.dreamIntervalSec;
    if (seconds <= 0) {
      this.logger.debug(formatEvent('memory.dream.schedule', { enabled: false }));
      return;
    }
    const timer = setInterval(() => this.tick(), seconds * 1000);
    timer.unref();
    this.registry.addInterval(DREAM_INTERVAL_NAME, timer);
    this.logger.debug(formatEvent('memory.dream.schedule', { enabled: true, interval_sec: seconds }));
  }

  private tick(): void {
    this.dream.run('schedule').catch((error: unknown) => {
      this.logger.error(
        formatEvent('memory.dream.crashed', { error_type: error instanceof Error ? error.name : typeof error }),
      );
    });
  }
}

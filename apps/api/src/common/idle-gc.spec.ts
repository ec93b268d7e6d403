import { constants, PerformanceObserver } from 'node:perf_hooks';
import { setFlagsFromString } from 'node:v8';
import { collectYoungGenerationWhenIdle } from './idle-gc';

describe('collectYoungGenerationWhenIdle', () => {
  it('Scenario: with --expose-gc a young-generation collection runs after the pending callbacks, not at once', async () => {
    setFlagsFromString('--expose-gc');
    const minor: number[] = [];
    const observer = new PerformanceObserver((list) => {
      for (const entry of list.getEntries()) {
        const detail = (entry as unknown as { detail?: { kind?: number } | null }).detail;
        if (detail?.kind === constants.NODE_PERFORMANCE_GC_MINOR) minor.push(entry.startTime);
      }
    });
    observer.observe({ entryTypes: ['gc'] });
    try {
      const asked = performance.now();
      expect(collectYoungGenerationWhenIdle()).toBe(true);
      const returned = performance.now();
      await new Promise((resolve) => setImmediate(resolve));
      for (let i = 0; i < 50 && !minor.some((at) => at >= returned); i++) await new Promise((resolve) => setTimeout(resolve, 10));
      expect(minor.some((at) => at >= asked && at < returned)).toBe(false);
      expect(minor.some((at) => at >= returned)).toBe(true);
    } finally {
      observer.disconnect();
    }
  });
});

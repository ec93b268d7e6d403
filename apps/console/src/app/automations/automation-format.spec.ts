import { TestBed } from '@angular/core/testing';

import { I18n } from '../core/i18n/i18n';
import { cronWords, formatCost, runDuration, scheduleWords } from './automation-format';
import { automationRunEvent, failedOutcome } from './automation-run';
import { run } from './automation-testing';

describe('automation wording', () => {
  beforeEach(() => localStorage.clear());
  afterEach(() => localStorage.clear());

  it('Scenario: the list words each schedule in the console language', () => {
    const i18n = TestBed.inject(I18n);
    const t = (key: Parameters<I18n['t']>[0], params?: Parameters<I18n['t']>[1]) => i18n.t(key, params);
    const cron = { kind: 'cron' as const, expression: '0 8 * * 1-5', timezone: 'Europe/Berlin' };
    expect(scheduleWords(cron, t, 'en')).toBe('At 08:00, Monday through Friday (Europe/Berlin)');
    expect(scheduleWords({ kind: 'interval', every_seconds: 3600 }, t, 'en')).toBe('Every hour');
    expect(scheduleWords({ kind: 'interval', every_seconds: 7200 }, t, 'en')).toBe('Every 2 hours');
    expect(scheduleWords({ kind: 'interval', every_seconds: 90 }, t, 'en')).toBe('Every 90 seconds');
    expect(scheduleWords({ kind: 'once', at: '2026-12-24T18:00:00Z' }, t, 'en')).toMatch(/^Once, .*2026/);
    // an expression cronstrue cannot read is shown as it is
    expect(cronWords('not cron', 'en')).toBeNull();
    expect(scheduleWords({ kind: 'cron', expression: 'not cron', timezone: 'UTC' }, t, 'en')).toBe('not cron (UTC)');
    i18n.setLanguage('zh-CN');
    expect(scheduleWords(cron, t, 'zh-CN')).toMatch(/08:00.*（Europe\/Berlin）$/);
    expect(scheduleWords({ kind: 'interval', every_seconds: 1800 }, t, 'zh-CN')).toBe('每 30 分钟');
  });

  it('words a run\'s outcome, cost and duration', () => {
    const i18n = TestBed.inject(I18n);
    const t = (key: Parameters<I18n['t']>[0], params?: Parameters<I18n['t']>[1]) => i18n.t(key, params);
    expect(formatCost(0.0123, 'en-US')).toBe('$0.0123');
    expect(formatCost(1.5, 'en-US')).toBe('$1.50');
    expect(formatCost(null, 'en-US')).toBe('—');
    expect(runDuration(run(), t)).toBe('(5 s)');
    expect(runDuration(run({ ended_at: '2026-12-04T08:01:10+00:00' }), t)).toBe('(1 min 10 s)');
    expect(runDuration(run({ ended_at: null, outcome: 'running' }), t)).toBe('');
    expect(failedOutcome('runaway_stopped')).toBe(true);
    expect(failedOutcome('ok')).toBe(false);
    expect(failedOutcome('skipped')).toBe(false);
  });

  it('recognises the automation_run event and nothing else', () => {
    expect(automationRunEvent({ event: 'automation_run', type: 'automation_run', run: run(), automation_name: 'A' } as never)?.run.id).toBe('r1');
    expect(automationRunEvent({ event: 'automation_run' })).toBeNull();
    expect(automationRunEvent({ event: 'done' })).toBeNull();
  });
});

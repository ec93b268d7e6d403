import { ChangeDetectionStrategy, Component, computed, inject, signal } from '@angular/core';
import { MatButtonModule } from '@angular/material/button';
import { MatButtonToggleModule } from '@angular/material/button-toggle';
import { MatFormFieldModule } from '@angular/material/form-field';
import { MatInputModule } from '@angular/material/input';
import { MatProgressSpinnerModule } from '@angular/material/progress-spinner';
import { RouterLink } from '@angular/router';
import type { SpendLimitStatus, UsageSummary } from '@cashcode/contracts';

import { errorMessage } from '../../core/api/api-error';
import { I18n } from '../../core/i18n/i18n';
import { Icon } from '../../shared/icon/icon';
import { PageHeader } from '../../shared/page-header/page-header';
import { UsageApi, usageExportFileName, type UsageRange } from '../usage-api';
import { UsageChart } from '../usage-chart/usage-chart';
import {
  chartCurrency,
  dailyChart,
  formatCosts,
  formatCount,
  formatDateTime,
  formatLimitAmount,
  formatMoney,
  formatShare,
  type ChartGrouping,
  type ChartMetric,
  type ChartSeries,
  type DailyChart,
} from '../usage-format';
import { limitName, purposeLabel } from '../usage-messages';

interface ChartView {
  grouping: ChartGrouping;
  title: string;
  chart: DailyChart;
  metric: ChartMetric;
}

/**
 * Usage: a date range (the server's last 30 days by default), the totals, a daily stacked chart by model and one by
 * purpose (tokens, or cost when calls were priced), the spend limits with their current use, and the CSV export.
 */
@Component({
  selector: 'cc-usage-page',
  changeDetection: ChangeDetectionStrategy.OnPush,
  imports: [
    MatButtonModule,
    MatButtonToggleModule,
    MatFormFieldModule,
    MatInputModule,
    MatProgressSpinnerModule,
    RouterLink,
    Icon,
    PageHeader,
    UsageChart,
  ],
  templateUrl: './usage-page.html',
  styleUrl: './usage-page.scss',
})
export class UsagePage {
  protected readonly i18n = inject(I18n);
  private readonly api = inject(UsageApi);

  protected readonly summary = signal<UsageSummary | null>(null);
  protected readonly limits = signal<SpendLimitStatus[] | null>(null);
  protected readonly loading = signal(true);
  protected readonly loadError = signal<string | null>(null);
  protected readonly exportError = signal<string | null>(null);
  protected readonly exporting = signal(false);
  protected readonly from = signal('');
  protected readonly to = signal('');
  protected readonly metrics = signal<Record<ChartGrouping, ChartMetric>>({ model: 'tokens', purpose: 'tokens' });

  /** the currency of the cost charts, null when nothing in the range was priced */
  protected readonly currency = computed(() => {
    const summary = this.summary();
    return summary ? chartCurrency(summary) : null;
  });
  protected readonly charts = computed<ChartView[]>(() => {
    const summary = this.summary();
    if (!summary) return [];
    const metrics = this.metrics();
    const priced = this.currency() !== null;
    return (['model', 'purpose'] as const).map((grouping) => {
      const metric = priced ? metrics[grouping] : 'tokens';
      return {
        grouping,
        metric,
        title: this.i18n.t(grouping === 'model' ? 'usage.byModel' : 'usage.byPurpose'),
        chart: dailyChart(summary, grouping, metric),
      };
    });
  });

  protected readonly seriesLabel = (series: ChartSeries): string =>
    series.purpose !== undefined
      ? purposeLabel(this.i18n, series.purpose)
      : `${series.model ?? ''} · ${this.i18n.t(series.provider === 'ollama' ? 'provider.ollama' : series.provider === 'anthropic' ? 'provider.anthropic' : 'provider.openai_compatible')}`;

  constructor() {
    void this.load({});
  }

  protected async load(range: UsageRange): Promise<void> {
    this.loading.set(true);
    this.loadError.set(null);
    try {
      const [summary, status] = await Promise.all([this.api.summary(range), this.api.limitsStatus()]);
      this.summary.set(summary);
      this.limits.set(status.limits);
      this.from.set(summary.from);
      this.to.set(summary.to);
    } catch (error) {
      this.loadError.set(errorMessage(error));
    } finally {
      this.loading.set(false);
    }
  }

  protected onApply(): void {
    void this.load({ from: this.from() || undefined, to: this.to() || undefined });
  }

  protected onRefresh(): void {
    const summary = this.summary();
    void this.load(summary ? { from: summary.from, to: summary.to } : {});
  }

  protected onDate(which: 'from' | 'to', event: Event): void {
    (which === 'from' ? this.from : this.to).set((event.target as HTMLInputElement).value);
  }

  protected setMetric(grouping: ChartGrouping, metric: ChartMetric): void {
    this.metrics.update((metrics) => ({ ...metrics, [grouping]: metric }));
  }

  /** Downloads the CSV of the range shown (through the HttpClient, so the API token goes with it). */
  protected async onExport(): Promise<void> {
    const summary = this.summary();
    const range: UsageRange = summary ? { from: summary.from, to: summary.to } : {};
    this.exporting.set(true);
    this.exportError.set(null);
    try {
      const body = await this.api.exportCsv(range);
      const url = URL.createObjectURL(new Blob([body], { type: 'text/csv;charset=utf-8' }));
      const link = document.createElement('a');
      link.href = url;
      link.download = usageExportFileName(range);
      document.body.append(link);
      link.click();
      link.remove();
      setTimeout(() => URL.revokeObjectURL(url), 0);
    } catch (error) {
      this.exportError.set(this.i18n.t('usage.exportFailed', { detail: errorMessage(error) }));
    } finally {
      this.exporting.set(false);
    }
  }

  protected formatter(view: ChartView): (value: number) => string {
    const locale = this.i18n.locale();
    const currency = view.chart.currency;
    return view.metric === 'cost' && currency
      ? (value) => formatMoney({ amount: value, currency }, locale)
      : (value) => formatCount(value, locale);
  }

  protected chartAria(view: ChartView, summary: UsageSummary): string {
    const top = view.chart.series[0];
    return this.i18n.t('usage.chartLabel', {
      title: view.title,
      metric: this.metricLabel(view.metric),
      from: summary.from,
      to: summary.to,
      top: top ? `${this.seriesLabel(top)} (${this.formatter(view)(top.total)})` : '–',
    });
  }

  protected metricLabel(metric: ChartMetric): string {
    return metric === 'cost'
      ? this.i18n.t('usage.metric.cost', { currency: this.currency() ?? '' })
      : this.i18n.t('usage.metric.tokens');
  }

  protected count(value: number): string {
    return formatCount(value, this.i18n.locale());
  }

  protected costs(summary: UsageSummary): string {
    return formatCosts(summary.totals.cost, this.i18n.locale());
  }

  protected limitTitle(limit: SpendLimitStatus): string {
    return limitName(this.i18n, limit);
  }

  protected limitUse(limit: SpendLimitStatus): string {
    const locale = this.i18n.locale();
    return this.i18n.t('usage.limitUse', {
      used: formatLimitAmount(limit, limit.used, locale),
      amount: formatLimitAmount(limit, limit.amount, locale),
      share: formatShare(limit.share, locale),
    });
  }

  protected resets(limit: SpendLimitStatus): string {
    return this.i18n.t('usage.resetsAt', { at: formatDateTime(limit.resets_at, this.i18n.locale()) });
  }

  protected stateLabel(limit: SpendLimitStatus): string {
    return this.i18n.t(`usage.state.${limit.state}`);
  }

  /** the filled part of a meter, 0–100 */
  protected percent(limit: SpendLimitStatus): number {
    return Math.max(0, Math.min(100, Math.round(limit.share * 100)));
  }
}

import { ChangeDetectionStrategy, Component, computed, input } from '@angular/core';

import type { ChartSeries, DailyChart } from '../usage-format';

/** Colours of the series, in order (the same order as the legend). */
export const SERIES_COLORS = ['#0e7c66', '#3b82f6', '#f59e0b', '#db2777', '#7c3aed', '#64748b', '#16a34a', '#dc2626'];

const DAY_WIDTH = 10;
const BAR_WIDTH = 8;
const HEIGHT = 100;

export interface ChartBar {
  x: number;
  y: number;
  height: number;
  color: string;
  title: string;
}

/** The rectangles of a stacked daily chart in a 10-units-per-day, 100-units-high box; empty segments are left out. */
export function chartBars(
  chart: DailyChart,
  label: (series: ChartSeries) => string,
  format: (value: number) => string,
): ChartBar[] {
  if (chart.max <= 0) return [];
  const bars: ChartBar[] = [];
  chart.days.forEach((day, index) => {
    let top = HEIGHT;
    chart.series.forEach((series, position) => {
      const value = series.values[index];
      if (value <= 0) return;
      const height = (value / chart.max) * HEIGHT;
      top -= height;
      bars.push({
        x: index * DAY_WIDTH + (DAY_WIDTH - BAR_WIDTH) / 2,
        y: top,
        height,
        color: SERIES_COLORS[position % SERIES_COLORS.length],
        title: `${day} · ${label(series)}: ${format(value)}`,
      });
    });
  });
  return bars;
}

/**
 * A stacked bar chart of daily values in plain SVG: one bar per day, one colour per series, a legend with the totals,
 * and the same numbers as a table (under "Show as table") for screen readers and copying.
 */
@Component({
  selector: 'cc-usage-chart',
  changeDetection: ChangeDetectionStrategy.OnPush,
  template: `
    <svg
      class="cc-chart"
      [attr.viewBox]="viewBox()"
      preserveAspectRatio="none"
      role="img"
      [attr.aria-label]="ariaLabel()"
      [attr.data-testid]="testId() + '-svg'"
    >
      <line x1="0" [attr.x2]="width()" y1="100" y2="100" class="cc-axis" />
      @for (bar of bars(); track $index) {
        <rect [attr.x]="bar.x" [attr.y]="bar.y" [attr.width]="barWidth" [attr.height]="bar.height" [attr.fill]="bar.color">
          <title>{{ bar.title }}</title>
        </rect>
      }
    </svg>
    <div class="cc-axis-labels" aria-hidden="true">
      <span>{{ chart().days[0] }}</span>
      <span>{{ format()(chart().max) }}</span>
      <span>{{ chart().days.at(-1) }}</span>
    </div>
    <ul class="cc-legend" [attr.data-testid]="testId() + '-legend'">
      @for (series of chart().series; track series.key; let i = $index) {
        <li data-testid="usage-legend-item" [attr.data-key]="series.key">
          <span class="cc-swatch" [style.background]="color(i)"></span>
          <span class="cc-legend-label">{{ label()(series) }}</span>
          <span class="cc-legend-total">{{ format()(series.total) }}</span>
        </li>
      }
    </ul>
    <details class="cc-table-toggle">
      <summary>{{ tableLabel() }}</summary>
      <table [attr.data-testid]="testId() + '-table'">
        <thead>
          <tr>
            <th scope="col">{{ dayLabel() }}</th>
            @for (series of chart().series; track series.key) {
              <th scope="col">{{ label()(series) }}</th>
            }
          </tr>
        </thead>
        <tbody>
          @for (day of activeDays(); track day.day) {
            <tr>
              <th scope="row">{{ day.day }}</th>
              @for (value of day.values; track $index) {
                <td>{{ format()(value) }}</td>
              }
            </tr>
          }
        </tbody>
      </table>
    </details>
  `,
  styles: `
    :host {
      display: block;
    }
    .cc-chart {
      display: block;
      width: 100%;
      height: 160px;
    }
    .cc-axis {
      stroke: var(--mat-sys-outline-variant);
      stroke-width: 0.5;
      vector-effect: non-scaling-stroke;
    }
    .cc-axis-labels {
      display: flex;
      justify-content: space-between;
      color: var(--mat-sys-on-surface-variant);
      font: var(--mat-sys-label-small);
    }
    .cc-legend {
      display: flex;
      flex-wrap: wrap;
      gap: 6px 16px;
      margin: 10px 0 0;
      padding: 0;
      list-style: none;
      font: var(--mat-sys-body-small);
    }
    .cc-legend li {
      display: inline-flex;
      align-items: center;
      gap: 6px;
    }
    .cc-swatch {
      width: 10px;
      height: 10px;
      border-radius: 3px;
    }
    .cc-legend-total {
      color: var(--mat-sys-on-surface-variant);
    }
    .cc-table-toggle {
      margin-top: 8px;
      font: var(--mat-sys-body-small);
    }
    table {
      margin-top: 6px;
      border-collapse: collapse;
    }
    th,
    td {
      padding: 2px 10px 2px 0;
      text-align: right;
    }
    th:first-child {
      text-align: left;
    }
  `,
})
export class UsageChart {
  readonly chart = input.required<DailyChart>();
  readonly label = input.required<(series: ChartSeries) => string>();
  readonly format = input.required<(value: number) => string>();
  readonly ariaLabel = input.required<string>();
  readonly tableLabel = input.required<string>();
  readonly dayLabel = input.required<string>();
  readonly testId = input('usage-chart');

  protected readonly barWidth = BAR_WIDTH;
  protected readonly width = computed(() => Math.max(1, this.chart().days.length) * DAY_WIDTH);
  protected readonly viewBox = computed(() => `0 0 ${this.width()} ${HEIGHT}`);
  protected readonly bars = computed(() => chartBars(this.chart(), this.label(), this.format()));
  /** the table lists the days that had calls */
  protected readonly activeDays = computed(() => {
    const chart = this.chart();
    return chart.days
      .map((day, index) => ({ day, values: chart.series.map((series) => series.values[index]) }))
      .filter((row) => row.values.some((value) => value > 0));
  });

  protected color(index: number): string {
    return SERIES_COLORS[index % SERIES_COLORS.length];
  }
}

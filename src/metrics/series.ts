/**
 * Counters and histograms for the hot paths (every request, every catalog operation): a series
 * is looked up once by its label values and then counted with plain arithmetic, and the
 * registry reads the families only when Prometheus scrapes. prom-client's own metrics check
 * and hash a labels object on every call, a few microseconds each, which a metadata request
 * making several catalog operations would pay several times.
 */
import type { Registry } from 'prom-client';

/** A sample as prom-client's registry formats it. */
interface Sample {
  labels: Record<string, string | number>;
  value: number;
  metricName?: string;
}

abstract class Family<S extends { labels: Record<string, string> }> {
  readonly name: string;
  readonly help: string;
  readonly aggregator = 'sum';
  abstract readonly type: 'counter' | 'histogram';
  readonly #labelNames: readonly string[];
  readonly #series = new Map<string, S>();

  constructor(registry: Registry, options: { name: string; help: string; labelNames: readonly string[] }) {
    this.name = options.name;
    this.help = options.help;
    this.#labelNames = options.labelNames;
    // NOTE: the registry needs only `name`, `get` and `reset` of a metric.
    registry.registerMetric(this as unknown as Parameters<Registry['registerMetric']>[0]);
  }

  /** The series of these label values (in the order of `labelNames`), made at its first use. */
  series(...values: string[]): S {
    const key = values.length === 1 ? values[0]! : values.join('\u0000');
    let s = this.#series.get(key);
    if (!s) {
      const labels: Record<string, string> = {};
      this.#labelNames.forEach((n, i) => { labels[n] = values[i] ?? ''; });
      s = this.make(labels);
      this.#series.set(key, s);
    }
    return s;
  }

  protected abstract make(labels: Record<string, string>): S;
  protected abstract samples(s: S): Sample[];

  get(): { name: string; help: string; type: string; aggregator: string; values: Sample[] } {
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values: [...this.#series.values()].flatMap((s) => this.samples(s)) };
  }

  reset(): void {
    this.#series.clear();
  }
}

export interface CounterSeries {
  labels: Record<string, string>;
  value: number;
}

/** A counter family: `series(...).value += n`. */
export class CounterFamily extends Family<CounterSeries> {
  readonly type = 'counter';
  protected make(labels: Record<string, string>): CounterSeries {
    return { labels, value: 0 };
  }
  protected samples(s: CounterSeries): Sample[] {
    return [{ labels: s.labels, value: s.value }];
  }
}

export class HistogramSeries {
  readonly labels: Record<string, string>;
  readonly #bounds: readonly number[];
  /** Observations per bucket (not cumulative); the last one is above every bound. */
  readonly counts: Float64Array;
  sum = 0;
  count = 0;

  constructor(labels: Record<string, string>, bounds: readonly number[]) {
    this.labels = labels;
    this.#bounds = bounds;
    this.counts = new Float64Array(bounds.length + 1);
  }

  observe(value: number): void {
    const bounds = this.#bounds;
    let i = 0;
    while (i < bounds.length && value > bounds[i]!) i++;
    this.counts[i]! += 1;
    this.sum += value;
    this.count += 1;
  }
}

/** A histogram family: `series(...).observe(seconds)`. */
export class HistogramFamily extends Family<HistogramSeries> {
  readonly type = 'histogram';
  readonly #bounds: readonly number[];

  constructor(registry: Registry, options: { name: string; help: string; labelNames: readonly string[]; buckets: readonly number[] }) {
    super(registry, options);
    this.#bounds = options.buckets;
  }

  protected make(labels: Record<string, string>): HistogramSeries {
    return new HistogramSeries(labels, this.#bounds);
  }

  protected samples(s: HistogramSeries): Sample[] {
    let cumulative = 0;
    const out: Sample[] = this.#bounds.map((le, i) => {
      cumulative += s.counts[i]!;
      return { metricName: `${this.name}_bucket`, labels: { ...s.labels, le }, value: cumulative };
    });
    out.push(
      { metricName: `${this.name}_bucket`, labels: { ...s.labels, le: '+Inf' }, value: s.count },
      { metricName: `${this.name}_sum`, labels: s.labels, value: s.sum },
      { metricName: `${this.name}_count`, labels: s.labels, value: s.count },
    );
    return out;
  }
}

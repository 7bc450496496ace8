/**
 * Scrapes a metrics listener the way Prometheus does (GET /metrics, the text format) and parses
 * the answer with an independent parser of that format — the official Prometheus Python
 * client's (`prometheus_client.parser`, Debian's python3-prometheus-client) — so a test sees
 * what a scraper sees, not what the registry meant to write.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';

/** A metric family as the parser gives it: its type, help and samples (histograms' `_bucket`, `_count`, `_sum` included). */
export interface Family {
  name: string;
  type: 'counter' | 'gauge' | 'histogram' | 'summary' | 'unknown' | 'info' | 'stateset' | 'gaugehistogram';
  help: string;
  samples: { name: string; labels: Record<string, string>; value: number }[];
}

// NOTE: the parser reads the text on standard input and writes its families as JSON.
const PARSER = `
import json, math, sys
from prometheus_client.parser import text_string_to_metric_families
out = []
for f in text_string_to_metric_families(sys.stdin.read()):
    out.append({'name': f.name, 'type': f.type, 'help': f.documentation,
                'samples': [{'name': s.name, 'labels': s.labels, 'value': s.value if math.isfinite(s.value) else str(s.value)} for s in f.samples]})
json.dump(out, sys.stdout)
`;

/** Families of the Prometheus text `text`, by name (a counter's without `_total`, as the parser names them). */
export function parsePrometheus(text: string): Promise<Family[]> {
  return new Promise((resolve, reject) => {
    const child = execFile('/usr/bin/python3', ['-c', PARSER], { maxBuffer: 64 << 20 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`the Prometheus parser refused the text: ${stderr || err.message}`));
      else resolve(JSON.parse(stdout) as Family[]);
    });
    child.stdin!.end(text);
  });
}

export class Scrape {
  readonly text: string;
  readonly #families: Map<string, Family>;
  constructor(text: string, families: Family[]) {
    this.text = text;
    this.#families = new Map(families.map((f) => [f.name, f]));
  }

  /** The family `name` (as written, `_total` and all); fails the test when it is missing. */
  family(name: string): Family {
    const f = this.#families.get(name) ?? this.#families.get(name.replace(/_total$/, ''));
    assert.ok(f, `${name} is scraped (families: ${[...this.#families.keys()].filter((k) => k.startsWith('lading_')).join(', ')})`);
    return f;
  }

  /**
   * The sum of the samples named `name` whose labels include `labels`: a counter's or a
   * gauge's value, or a histogram's `<name>_count`. 0 when there is none.
   */
  value(name: string, labels: Record<string, string> = {}): number {
    const f = this.#families.get(name) ?? this.#families.get(name.replace(/_total$/, ''));
    if (!f) return 0;
    const sample = f.type === 'histogram' ? `${f.name}_count` : name;
    return f.samples
      .filter((s) => s.name === sample && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
      .reduce((sum, s) => sum + s.value, 0);
  }
}

/** GET `${base}/metrics`, checking the status and the content type of the text format, and parses it. */
export async function scrape(base: string): Promise<Scrape> {
  const res = await fetch(`${base}/metrics`);
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
  const text = await res.text();
  return new Scrape(text, await parsePrometheus(text));
}

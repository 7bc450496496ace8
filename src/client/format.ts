/**
 * The one formatter of the figures the client shows people: byte counts, rates and times,
 * rounded to what a reader can take in. Small and free of dependencies: every command loads it.
 */
const UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];

/**
 * The one formatter of every byte figure shown to people: 1536 → '1.50 KiB', 39.6 → '40 B',
 * three significant digits from a KiB on (1023.7 KiB is '1.00 MiB', never '1024 KiB').
 * Anything not a finite number of at least 0 (a rate not known yet) is '0 B'.
 */
export function formatBytes(n: number): string {
  if (!Number.isFinite(n) || n < 0) return '0 B';
  if (Math.round(n) < 1024) return `${Math.round(n)} B`;
  let v = n;
  let u = 0;
  while (v >= 1024 && u < UNITS.length - 1) {
    v /= 1024;
    u++;
  }
  // NOTE: the digits are chosen after rounding: 9.999 KiB is '10.0 KiB', 1023.96 KiB '1.00 MiB'.
  const digits = (x: number): string => {
    for (const [below, places] of [[10, 2], [100, 1]] as const) if (Number(x.toFixed(places)) < below) return x.toFixed(places);
    return x.toFixed(0);
  };
  let text = digits(v);
  if (Number(text) >= 1024 && u < UNITS.length - 1) {
    u++;
    text = digits(Number(text) / 1024);
  }
  return `${text} ${UNITS[u]}`;
}

/** A rate: '3.25 MiB/s'. */
export function formatRate(bytesPerSecond: number): string {
  return `${formatBytes(bytesPerSecond)}/s`;
}

/** Seconds as m:ss or h:mm:ss; '-:--' when unknown. */
export function formatDuration(seconds: number): string {
  if (!Number.isFinite(seconds) || seconds < 0) return '-:--';
  const s = Math.round(seconds);
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const ss = String(s % 60).padStart(2, '0');
  return h > 0 ? `${h}:${String(m).padStart(2, '0')}:${ss}` : `${m}:${ss}`;
}

/** A time taken, for summaries: '0.4 s', '12 s', then as formatDuration ('2:05'). */
export function formatElapsed(seconds: number): string {
  if (!Number.isFinite(seconds) || seconds < 0) return '0.0 s';
  if (seconds < 9.95) return `${seconds.toFixed(1)} s`;
  if (seconds < 59.5) return `${Math.round(seconds)} s`;
  return formatDuration(seconds);
}


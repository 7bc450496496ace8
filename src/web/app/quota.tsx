/**
 * The caller's storage in the header: how much of the quota that binds their home is used
 * (the trash counts), from `GET /api/quota`, read again when the route changes or the trash
 * does. Shows nothing where no quota with a byte bound applies; a failed read shows nothing
 * either (the pages say what failed).
 */
import { useEffect, useState } from 'preact/hooks';
import { api } from './api.ts';
import { humanSize } from './format.ts';
import { onTrashChange } from './trash.tsx';

interface Quota {
  path: string;
  user: string | null;
  max_bytes: number | null;
  used_bytes: number;
  available_bytes: number | null;
}

/** Of the quotas over `home` with a byte bound, the one with the least room left; null for none. */
function binding(home: string, quotas: Quota[]): Quota | null {
  let best: Quota | null = null;
  for (const q of quotas) {
    const over = q.path === '/' || q.path === home || home.startsWith(`${q.path}/`);
    if (!over || q.max_bytes === null) continue;
    if (!best || (q.available_bytes ?? 0) < (best.available_bytes ?? 0)) best = q;
  }
  return best;
}

export function QuotaUsage(props: { home: string; routeKey: string }) {
  const [quota, setQuota] = useState<Quota | null>(null);
  const [count, setCount] = useState(0);
  useEffect(() => onTrashChange(() => setCount((n) => n + 1)), []);
  useEffect(() => {
    const abort = new AbortController();
    api<{ quotas: Quota[] }>('GET', '/api/quota', { signal: abort.signal })
      .then((view) => setQuota(binding(props.home, view.quotas)), () => {});
    return () => abort.abort();
  }, [props.routeKey, count]);
  if (!quota || quota.max_bytes === null) return null;
  const text = `${humanSize(quota.used_bytes)} of ${humanSize(quota.max_bytes)} used`;
  return (
    <span class="quota" title={`Quota of ${quota.path}, the trash included`}>
      <meter min={0} max={quota.max_bytes} value={quota.used_bytes} high={quota.max_bytes * 0.9} aria-label="Storage used" />
      <span>{text}</span>
    </span>
  );
}

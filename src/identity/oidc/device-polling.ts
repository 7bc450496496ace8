/**
 * The polling interval of the embedded provider's device authorization grant (RFC 8628
 * sections 3.2 and 3.5): the device authorization answer says how many seconds a client waits
 * between token requests (`interval`), and a client that polls sooner is answered `slow_down`,
 * after which it must wait 5 seconds longer, for the rest of that device code's life.
 * `oidc-provider` names the `slow_down` error but never answers it, and its device
 * authorization answer carries no `interval`: this middleware adds both. The times live in the
 * catalog's counters, so every node sharing the catalog sees the same polls. It decides nothing
 * else about the grant.
 */
import { createHash } from 'node:crypto';
import type { KoaContextWithOIDC } from 'oidc-provider';
import type { Clock, OidcStore } from '../../core/ports.ts';

/** Seconds a client waits between polls when it has not been told to slow down (RFC 8628's default). */
export const DEVICE_POLL_INTERVAL = 5;
/** Seconds a `slow_down` answer adds to the interval (RFC 8628 section 3.5). */
const SLOW_DOWN_STEP = 5;
const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';

export interface DevicePollingOptions {
  catalog: Pick<OidcStore, 'oidcCount'>;
  clock: Clock;
  /** Lifetime of a device code in seconds: how long the `slow_down`s of one are remembered. */
  deviceCodeTtl: number;
}

/**
 * `oidc-provider` middleware (`provider.use`): adds `interval` to device authorization answers,
 * and turns the `authorization_pending` answer of a poll that came sooner than the device
 * code's interval after its last poll in time into `slow_down`. Only pending polls are slowed: a
 * poll that finds the code approved, refused or expired ends the polling anyway.
 */
export function devicePolling(o: DevicePollingOptions): (ctx: KoaContextWithOIDC, next: () => Promise<void>) => Promise<void> {
  return async (ctx, next) => {
    await next();
    const route = ctx.oidc?.route;
    const body = ctx.body as Record<string, unknown> | null | undefined;
    if (!body || typeof body !== 'object') return;
    if (route === 'device_authorization' && ctx.status === 200 && typeof body.device_code === 'string') {
      body.interval = DEVICE_POLL_INTERVAL;
      return;
    }
    const params = ctx.oidc?.params as Record<string, unknown> | undefined;
    if (route !== 'token' || params?.grant_type !== DEVICE_GRANT || body.error !== 'authorization_pending') return;
    if (typeof params.device_code !== 'string') return;
    if (await tooSoon(o, params.device_code)) {
      ctx.body = { error: 'slow_down', error_description: `you are polling too quickly: wait ${SLOW_DOWN_STEP} seconds longer than before between polls` };
    }
  };
}

/**
 * Records a poll of `deviceCode` and tells whether it came sooner than the code's interval
 * after the last poll that was in time; each poll too soon adds `SLOW_DOWN_STEP` to the
 * interval the next poll in time opens.
 */
async function tooSoon(o: DevicePollingOptions, deviceCode: string): Promise<boolean> {
  // NOTE: keys hold a digest of the device code, which is a bearer secret until it is used.
  const key = createHash('sha256').update(deviceCode).digest('base64url');
  const slowKey = `device-slow:${key}`;
  const now = o.clock.now();
  const slowed = (await o.catalog.oidcCount(slowKey, now, o.deviceCodeTtl, false)).count;
  // NOTE: a poll in time opens a window of the interval, and every poll inside it is too soon.
  // The catalog counts atomically, so of racing polls exactly one is in time, on any node.
  const interval = DEVICE_POLL_INTERVAL + SLOW_DOWN_STEP * slowed;
  if ((await o.catalog.oidcCount(`device-poll:${key}`, now, interval, true)).count === 1) return false;
  await o.catalog.oidcCount(slowKey, now, o.deviceCodeTtl, true);
  return true;
}
